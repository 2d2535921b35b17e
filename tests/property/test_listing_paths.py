"""Hypothesis: a listing from the search index is the listing from git, for any store."""

from __future__ import annotations

import itertools
from functools import partial
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make
from xbrain.listing import from_index, list_resources
from xbrain.search.query import indexed_listing
from xbrain.store import Store

PROVIDERS = ["web", "x", "github"]
TIMES = ["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.001Z", "2026-06-01T00:00:00.000Z"]

stores = st.lists(
    st.tuples(st.sampled_from(PROVIDERS), st.sampled_from(TIMES), st.booleans()),
    min_size=1,
    max_size=12,
)
requests = st.lists(
    st.fixed_dictionaries(
        {
            "limit": st.integers(1, 6),
            "offset": st.integers(0, 14),
            "since": st.sampled_from([None, "2026-01-01", *TIMES, "2030-01-01"]),
            "provider": st.sampled_from([None, *PROVIDERS, "nobody"]),
        }
    ),
    min_size=1,
    max_size=6,
)
counter = itertools.count()


@settings(max_examples=15, deadline=None)
@given(stores, requests)
def test_the_index_lists_what_git_lists(
    tmp_path: Path, items: list[tuple[str, str, bool]], asked: list[dict[str, Any]]
) -> None:
    """Ties on updatedAt (ordered by id), deleted resources, pages past the end and every
    filter: the index's answer (what `xbrain list` and the MCP tool print) equals the
    catalog's through git."""
    store = Store(tmp_path / f"store-{next(counter)}")
    batch = []
    for n, (provider, when, _) in enumerate(items):
        item = make(f"s{n}", title=f"Note {n}", updatedAt=when)
        item["source"]["provider"] = provider
        batch.append(item)
    results = store.put(batch)["results"]
    for result, (_, _, deleted) in zip(results, items, strict=True):
        if deleted:
            store.delete(result["id"])
    store.search("note")  # builds the index, which every later write keeps current
    from_the_index = partial(indexed_listing, store.core.path / ".git")
    for request in asked:
        with store.core.reading() as view:
            through_git = list_resources(view, **request)
        listed = from_index(from_the_index, **request)
        assert listed is not None, "the index did not answer: git would be compared with git"
        assert listed == through_git, request
        assert store.list(**request) == through_git, request
