"""What the viewer draws: Markdown that cannot carry markup that runs, the word diff's
two sides, the telemetry chart, and a recall that records nothing when asked."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

pytest.importorskip("nh3", reason="the viewer's extra (xbrain[ui]) is not installed")

from xbrain.ui import render


@pytest.mark.parametrize(
    "hostile",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[click](javascript:alert(1))",
        "[click](JaVaScRiPt:alert(1))",
        "[data](data:text/html;base64,PHNjcmlwdD4=)",
        '<a href="#" onclick="alert(1)">x</a>',
        "![tracker](https://example.com/pixel.png)",
        "<iframe src=https://example.com></iframe>",
        '<svg onload="alert(1)"></svg>',
        "<style>body{display:none}</style>",
    ],
)
def test_markdown_never_carries_markup_that_runs_or_fetches(hostile: str) -> None:
    from html.parser import HTMLParser

    found: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, attrs))

    html = str(render.markdown(f"Before {hostile} after"))
    Tags().feed(html)
    for tag, attrs in found:
        assert tag not in ("script", "img", "iframe", "svg", "style"), html
        for name, value in attrs:
            assert not name.startswith("on"), html
            if name == "href":
                assert (value or "").startswith(("https://", "http://", "mailto:")), html
    assert "Before" in html and "after" in html


def test_markdown_keeps_what_a_memory_means() -> None:
    html = str(
        render.markdown(
            "# 标题\n\nDo **not** run `rm -rf` — see [docs](https://example.com).\n\n- a\n- b"
        )
    )
    assert (
        "<h1>标题</h1>" in html and "<strong>not</strong>" in html and "<code>rm -rf</code>" in html
    )
    assert '<a href="https://example.com" rel="noopener noreferrer nofollow">docs</a>' in html
    assert "<li>a</li>" in html


def test_side_by_side_marks_each_side_and_escapes_both() -> None:
    ops = [
        {"op": "equal", "old": "2. ", "new": "2. "},
        {"op": "replace", "old": "检查", "new": "确认"},
        {"op": "delete", "old": "<b>", "new": ""},
        {"op": "insert", "old": "", "new": "&x"},
    ]
    left, right = render.side_by_side(ops)
    assert str(left) == "2. <del>检查</del><del>&lt;b&gt;</del>"
    assert str(right) == "2. <ins>确认</ins><ins>&amp;x</ins>"


def test_the_chart_has_a_bar_per_day_with_its_count() -> None:
    svg = str(render.chart({"2026-12-04": 3, "2026-12-01": 1}, days=7, today=date(2026, 12, 4)))
    assert svg.count("<rect") == 7 and svg.count('class="hit"') == 2
    assert "<title>2026-12-04: 3</title>" in svg and "<title>2026-11-28: 0</title>" in svg
    assert 'aria-label="4 matches in 7 days"' in svg


def test_weblink_only_links_the_web() -> None:
    assert render.weblink("https://example.com/a") == "https://example.com/a"
    for bad in ("javascript:alert(1)", "data:text/html,x", "//evil.example", None):
        assert render.weblink(bad) == "#"


def test_a_recall_asked_not_to_record_leaves_telemetry_alone(tmp_path: Path) -> None:
    """The viewer's search is recall with record=False: nothing lands in telemetry,
    while the same recall otherwise records what it showed."""
    from xbrain.lightcli import answer
    from xbrain.store import Store

    store = Store(tmp_path / "store")
    store.init()
    rule = {"kind": "rule", "name": "tabs", "body": "Use tabs.", "queries": ["indent with tabs"]}
    store.entry_put([rule])
    looked = answer(store.path, b"indent with tabs", record=False)
    assert [item["name"] for item in looked["results"]] == ["tabs"]
    assert store.telemetry()["entries"] == []
    answer(store.path, b"indent with tabs")
    assert [item["matches"] for item in store.telemetry()["entries"]] == [1]
    overview = store.telemetry_overview()
    assert list(overview["daily"]) == [looked["results"][0]["id"]]
