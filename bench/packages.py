"""A third real corpus: Debian's package descriptions, in English and Chinese.

apt keeps the descriptions of every package it knows in
``/var/lib/apt/lists/*_i18n_Translation-<lang>`` (lz4-compressed; ``apt-get update -o
Acquire::Languages=en,zh_CN`` fetches the Chinese one, and ``make bench`` does when it
runs as root). Each package's description is a one-line synopsis and a few paragraphs:
short technical text written by its maintainer and translated by the Debian Chinese
team. The packages with a Chinese translation give a parallel corpus; each becomes a
resource whose ``title`` is the package name, ``purpose`` the synopsis (what the
``description`` construction asks with, then takes out of the target) and ``text`` the
long description. Packages built from one source usually share their first paragraph:
those are the siblings.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

LISTS = Path("/var/lib/apt/lists")
_FIELD = {"en": "Description-en", "zh": "Description-zh_CN"}
_FILE = {"en": "Translation-en", "zh": "Translation-zh%5fCN"}


def _read(language: str) -> dict[str, list[str]]:
    """Package → its description's lines (the synopsis first), from apt's lists."""
    helper = shutil.which("apt-helper") or "/usr/lib/apt/apt-helper"
    out: dict[str, list[str]] = {}
    for path in sorted(LISTS.glob(f"*_main_i18n_{_FILE[language]}*")):
        run = subprocess.run([helper, "cat-file", str(path)], capture_output=True, check=False)
        if run.returncode != 0:
            continue
        package, lines = "", None
        for line in run.stdout.decode("utf-8", "replace").splitlines():
            if line.startswith("Package: "):
                package, lines = line[9:].strip(), None
            elif line.startswith(_FIELD[language] + ": "):
                lines = out.setdefault(package, [])
                if lines:  # already read from another list: keep the first
                    lines = None
                else:
                    lines.append(line.split(": ", 1)[1].strip())
            elif line.startswith(" ") and lines is not None:
                lines.append(line.strip())
            else:
                lines = None
    return out


def paragraphs(lines: list[str]) -> list[str]:
    """The long description's paragraphs (a line holding "." separates them)."""
    out: list[list[str]] = [[]]
    for line in lines[1:]:
        if line == ".":
            out.append([])
        else:
            out[-1].append(line)
    return [" ".join(p) for p in out if p]


@functools.cache  # a suite run asks three times (is it here, then each language): ≈ 0.5 s
def descriptions() -> list[tuple[str, list[str], list[str]]]:
    """(package, English lines, Chinese lines) for every package described in both."""
    english, chinese = _read("en"), _read("zh")
    both = sorted(p for p in chinese if p in english and english[p] and chinese[p])
    return [(p, english[p], chinese[p]) for p in both]


def resources(language: str) -> list[dict[str, object]]:
    """Resources (input form) of one language, parallel across the two."""
    out: list[dict[str, object]] = []
    seen: set[tuple[str, str]] = set()
    for package, english, chinese in descriptions():
        lines = english if language == "en" else chinese
        synopsis, body = lines[0], "\n\n".join(paragraphs(lines))
        if not body or (synopsis, body) in seen:
            continue
        seen.add((synopsis, body))
        out.append(
            {
                "source": {
                    "provider": "debian",
                    "id": f"{language}/{package}",
                    "url": f"https://packages.debian.org/{package}#{language}",
                },
                "title": package,
                "text": body[:20000],
                "summary": "",
                "purpose": synopsis[:400],
                "useWhen": [],
                "limitations": [],
                "savedReason": None,
                "updatedAt": "2026-01-01T00:00:00Z",
            }
        )
    return out


def sibling_key(doc: dict[str, object]) -> str:
    """Packages of one source share their description's first paragraph."""
    return str(doc["text"]).split("\n\n", 1)[0]
