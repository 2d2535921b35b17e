"""A server's entry cache in memory (``search/entryloaded.py``) answers a prompt's
candidates with each term's entry count read off its postings when scoring asks, not
counted beforehand for every term of every candidate entry: the counts, and so recall's
scores, are the ones the cache file gives a fresh process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from xbrain.search import entrycache
from xbrain.search.query import main_head

PROMPTS = [
    {"can", "i", "git", "push", "force", "to", "main"},
    {"indent", "with", "tabs", "python", "code", "review"},
]


def test_the_counts_in_memory_are_the_cache_files(
    xb: Callable[..., Any], store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    assert xb("recall", "-", input="git push").code == 0  # the cache built
    control = store_dir / ".git"
    head = main_head(control)
    assert head is not None
    for terms in PROMPTS:
        monkeypatch.setattr(entrycache, "_WARM", None)
        fresh = entrycache.candidates(control, head, terms)
        entrycache.keep_warm()
        served = entrycache.candidates(control, head, terms)
        assert fresh is not None and served is not None and fresh.entries
        assert [e["id"] for e, _ in served.entries] == [e["id"] for e, _ in fresh.entries]
        asked = terms | {
            t for e, _ in fresh.entries for _, ts in e["queries"] + e["keywords"] for t in ts
        }
        asked |= {t for e, _ in fresh.entries for t in e["about"]}
        assert {t: served.df.get(t, 0) for t in asked} == {t: fresh.df.get(t, 0) for t in asked}
        assert served.n == fresh.n
