"""A real-text corpus from installed manual pages, shaped like xbrain resources.

Each section of a manual page becomes one resource: ``title`` "<command>: <SECTION>",
``purpose`` the page's one-line NAME description (shared by every section of the page:
the "sibling" trap the original's scoring falls into), ``text`` the section body.
English pages come from /usr/share/man/man1 and man8, Chinese ones from
/usr/share/man/zh_CN (Debian's manpages-zh; `make bench` installs it when it can).
Boilerplate sections (authors, bugs, copyright, see also) are left out.
"""

from __future__ import annotations

import gzip
import re
import sys
from collections.abc import Iterator
from pathlib import Path

SKIP_WORDS = (
    *("author", "bug", "copyright", "see also", "colophon"),
    *("作者", "版权", "参见", "另见", "错误报告", "报告错误", "臭虫"),
)
NAME_WORDS = ("name", "名称", "名字")
# Debian's manpages-zh has some 300 pages in man1 alone; far fewer means it is missing and
# the Chinese rows are measured on whatever stray pages the machine has
FEW_CHINESE_PAGES = 200


def is_name(section: str) -> bool:
    """The NAME section, in either language or both ("NAME 名称")."""
    lowered = section.lower()
    return len(lowered) < 24 and any(word in lowered for word in NAME_WORDS)


def is_boilerplate(section: str) -> bool:
    """Sections that repeat across pages (authors, bugs, copyright, see also)."""
    lowered = section.lower()
    return any(word in lowered for word in SKIP_WORDS)


_FONT = re.compile(r"\\f(?:\[[^\]]*\]|\(..|.)")
_SPECIAL = re.compile(r"\\\*(?:\[[^\]]*\]|\(..|.)|\\\((..)|\\\[[^\]]*\]")
_ESCAPES = {
    r"\-": "-",
    r"\&": "",
    r"\%": "",
    r"\e": "\\",
    r"\ ": " ",
    r"\,": "",
    r"\/": "",
    r"\:": "",
}
_TEXT_MACROS = {".B", ".I", ".BR", ".BI", ".IR", ".IB", ".RB", ".RI", ".SM", ".SB"}


def clean(line: str) -> str:
    """Roff inline markup removed."""
    line = _FONT.sub("", line)
    line = _SPECIAL.sub(
        lambda m: {"aq": "'", "lq": '"', "rq": '"', "em": "—"}.get(m.group(1) or "", ""), line
    )
    for escape, value in _ESCAPES.items():
        line = line.replace(escape, value)
    return line.replace("\\", "")


def sections(source: str) -> Iterator[tuple[str, str]]:
    """(section name, body text) pairs of one roff page."""
    name, body = "", []
    for raw in source.splitlines():
        if raw.startswith(('.\\"', "'\\\"")):
            continue
        if raw.startswith(".SH"):
            if name:
                yield name, " ".join(body)
            name, body = clean(raw[3:]).strip().strip('"').strip(), []
            continue
        if raw.startswith(".") or raw.startswith("'"):
            macro, _, rest = raw.partition(" ")
            if macro in _TEXT_MACROS:
                body.append(clean(rest.replace('"', "")))
            continue
        body.append(clean(raw))
    if name:
        yield name, " ".join(body)


def pages(root: Path, subdirs: tuple[str, ...], limit: int | None) -> list[Path]:
    found = sorted(p for sub in subdirs for p in (root / sub).glob("*.gz") if not p.is_symlink())
    return found[:limit] if limit else found


def resources(
    language: str, limit_pages: int | None = None, max_text: int = 4000
) -> list[dict[str, object]]:
    """Resources (input form) built from the manual pages of one language."""
    if language == "en":
        files = pages(Path("/usr/share/man"), ("man1", "man8"), limit_pages)
    else:
        files = pages(Path("/usr/share/man/zh_CN"), ("man1", "man5", "man7", "man8"), limit_pages)
        if len(files) < FEW_CHINESE_PAGES and not limit_pages:
            print(
                f"note: only {len(files)} Chinese manual pages here (manpages-zh missing?); "
                "Chinese man rows are not comparable with runs that had it (make bench "
                "installs it)",
                file=sys.stderr,
            )
    out: list[dict[str, object]] = []
    seen_text: set[str] = set()
    for path in files:
        parts = read_page(path)
        if parts is None:
            continue
        description = ""
        command = path.name.split(".")[0]
        for section, body in parts:
            if is_name(section):
                description = body.split(" - ", 1)[-1].strip()[:400]
        for index, (section, body) in enumerate(parts):
            text = " ".join(body.split())[:max_text]
            short = len(text) < (150 if language == "en" else 60)
            if is_name(section) or is_boilerplate(section) or short or text in seen_text:
                continue
            seen_text.add(text)
            key = f"{language}/{path.parent.name}/{path.stem}/{index}"
            link = f"{language}/{command}#{index}"
            title = f"{command}: {section}"[:500]
            out.append(man_resource(key, link, title, text, description))
    return out


def read_page(path: Path) -> list[tuple[str, str]] | None:
    """The (section, body) pairs of a gzipped roff page; None when it cannot be read."""
    try:
        with gzip.open(path) as handle:
            source = handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError):
        return None
    return list(sections(source))


def man_resource(key: str, link: str, title: str, text: str, purpose: str) -> dict[str, object]:
    """A resource (input form) for manual-page text: source id ``key``, URL path ``link``."""
    return {
        "source": {"provider": "man", "id": key, "url": f"https://manpages.example/{link}"},
        "title": title,
        "text": text,
        "summary": "",
        "purpose": purpose,
        "useWhen": [],
        "limitations": [],
        "savedReason": None,
        "updatedAt": "2026-01-01T00:00:00Z",
    }


_STORABLE: dict[str, bool] = {}  # a text's verdict, once per process


def storable(item: dict[str, object]) -> bool:
    """Whether a write's secret scan lets every text of ``item`` through: a few manual pages
    quote ``user:password@host`` URLs, which a put refuses (as it should); a bench that
    stores pages leaves those out."""
    from xbrain.secretscan import record_texts, scan_text

    for _, text in record_texts(item):
        if text not in _STORABLE:
            _STORABLE[text] = not scan_text(text)
        if not _STORABLE[text]:
            return False
    return True
