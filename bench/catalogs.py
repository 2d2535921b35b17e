"""A second real corpus, not manual pages: the gettext message catalogs Debian installs.

``/usr/share/locale/zh_CN/LC_MESSAGES/*.mo`` pair each English message (``msgid``) with
its Chinese translation (``msgstr``): short technical descriptions — help texts, option
descriptions, error explanations — written by each program's authors and translators,
in both languages. Each message of at least 60 characters (English) becomes a resource
whose ``title`` is the program (shared by every message of that catalog: the siblings)
and whose ``text`` is the message; ``purpose`` is its first sentence, so the
"description" construction can ask with that sentence and take it out of the target.
"""

from __future__ import annotations

import gettext
import re
from pathlib import Path

ROOT = Path("/usr/share/locale/zh_CN/LC_MESSAGES")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def first_sentence(text: str) -> tuple[str, str]:
    """(the first sentence, the rest) of a message."""
    parts = _SENTENCE.split(text.strip(), maxsplit=1)
    return (parts[0].strip(), parts[1].strip() if len(parts) > 1 else "")


def messages() -> list[tuple[str, str, str]]:
    """(program, English, Chinese) for every long, translated message, in a stable order."""
    out = []
    for path in sorted(ROOT.glob("*.mo")):
        try:
            with open(path, "rb") as handle:
                catalog = gettext.GNUTranslations(handle)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        pairs = catalog._catalog.items()  # gettext keeps no public map of its messages
        # plural forms are keyed by (msgid, n): only plain messages
        for english, chinese in sorted((k, v) for k, v in pairs if isinstance(k, str)):
            if not isinstance(chinese, str):
                continue
            english, chinese = " ".join(english.split()), " ".join(chinese.split())
            if len(english) >= 60 and _HAN.search(chinese):
                out.append((path.stem, english, chinese))
    return out


def resources(language: str) -> list[dict[str, object]]:
    """Resources (input form) of one language, parallel across the two."""
    out: list[dict[str, object]] = []
    seen: set[str] = set()
    for number, (program, english, chinese) in enumerate(messages()):
        text = english if language == "en" else chinese
        if text in seen:
            continue
        seen.add(text)
        out.append(
            {
                "source": {
                    "provider": "catalog",
                    "id": f"{language}/{program}/{number}",
                    "url": f"https://catalogs.example/{language}/{program}#{number}",
                },
                "title": program,
                "text": text,
                "summary": "",
                "purpose": first_sentence(text)[0][:400],
                "useWhen": [],
                "limitations": [],
                "savedReason": None,
                "updatedAt": "2026-01-01T00:00:00Z",
            }
        )
    return out
