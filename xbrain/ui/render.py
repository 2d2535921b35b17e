"""What the viewer draws from the API's answers: Markdown made safe, a side-by-side word
diff and a small SVG chart. Stored text is hostile: it is rendered by markdown-it-py with
raw HTML off (escaped, never passed through) and the result is sanitized again by nh3, so
no stored ``<script>``, event handler or ``javascript:`` link reaches the page."""

from __future__ import annotations

from datetime import date, timedelta
from functools import cache
from typing import Any

from markupsafe import Markup, escape

from ..errors import XbrainError
from ..text import mark_hidden

__all__ = ["chart", "layer_link", "markdown", "side_by_side", "weblink"]

# what rendered Markdown may hold: no images (nothing is fetched), no forms, no styles
_TAGS = {
    "a", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "code",
    "pre", "blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td",
    "del", "s",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}


@cache
def _parser() -> Any:
    """CommonMark with tables, raw HTML off (loaded on the first page that renders
    Markdown: the store's first page does not)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def markdown(text: str) -> Markup:
    """``text`` rendered as Markdown, sanitized (links: http, https and mailto only), its
    hidden characters (bidi overrides, zero-width) shown as marks such as ``<U+202E>``."""
    import nh3

    html = _parser().render(mark_hidden(text))
    return Markup(
        nh3.clean(
            html,
            tags=_TAGS,
            attributes=_ATTRIBUTES,
            url_schemes={"http", "https", "mailto"},
            link_rel="noopener noreferrer nofollow",
        )
    )


def weblink(url: object) -> str:
    """``url`` when it is an http(s) address (a record's citation), else ``#``: a stored
    ``javascript:`` or ``data:`` address is never a link."""
    text = str(url or "")
    return text if text.lower().startswith(("https://", "http://")) else "#"


def layer_link(base: str, layer: object) -> str:
    """The link prefix of a record of ``layer`` (a result's ``layer``): a team's pages
    (``team:NAME``, NAME a valid team name) or the personal store's."""
    text = str(layer or "")
    if text.startswith("team:"):
        from ..team.place import validate_team_name

        try:
            return f"{base}/team/{validate_team_name(text[5:])}"
        except XbrainError:
            pass
    return base


def side_by_side(ops: list[dict[str, Any]]) -> tuple[Markup, Markup]:
    """The old and the new text of word-level ``ops`` ({op, old, new}), each escaped,
    what was removed marked ``<del>`` on the left and what was added ``<ins>`` on the
    right."""
    left: list[str] = []
    right: list[str] = []
    for op in ops:
        old, new = str(escape(op.get("old", ""))), str(escape(op.get("new", "")))
        if op["op"] == "equal":
            left.append(old)
            right.append(new)
            continue
        if old:
            left.append(f"<del>{old}</del>")
        if new:
            right.append(f"<ins>{new}</ins>")
    return Markup("".join(left)), Markup("".join(right))


def chart(daily: dict[str, int], days: int = 30, today: date | None = None) -> Markup:
    """Matches per day over the last ``days`` days (``daily``: UTC date → count) as a small
    inline SVG bar chart, the day's count in each bar's title."""
    end = today or date.today()
    counts = [daily.get((end - timedelta(days=days - 1 - i)).isoformat(), 0) for i in range(days)]
    top = max(counts) or 1
    width, height, bar = days * 4, 24, 3
    bars = []
    for i, count in enumerate(counts):
        tall = round(count / top * (height - 2)) if count else 0
        day = (end - timedelta(days=days - 1 - i)).isoformat()
        bars.append(
            f'<rect x="{i * 4}" y="{height - max(tall, 1)}" width="{bar}" '
            f'height="{max(tall, 1)}" class="{"hit" if count else "none"}">'
            f"<title>{day}: {count}</title></rect>"
        )
    total = sum(counts)
    return Markup(
        f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width * 2}" '
        f'height="{height * 2}" aria-label="{total} matches in {days} days">'
        f"{''.join(bars)}</svg>"
    )


def shown(value: object) -> object:
    """What a template prints for ``value``: text with its hidden characters marked (the
    reviewer sees what a model would read); Markup, already rendered and marked, as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return mark_hidden(value)
    return value
