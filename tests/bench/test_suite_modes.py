"""bench/suite_modes.py's stores: each catalog message is a page of its own there, as it is
an item of its own to BM25 — the product's search collapses results that cite one page
(``sameUrl``), and the catalog corpus names a message by a fragment of its program's page,
so the lexical leg showed one result per program (Recall@5 equal to Recall@1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench import bench_module
from xbrain.kinds.model import normalize_resource

pytest.importorskip("numpy", reason="the semantic extra is not installed")


def test_messages_of_one_program_are_each_found(tmp_path: Path) -> None:
    suite_modes = bench_module("suite_modes")
    docs = [
        normalize_resource(
            {
                "source": {
                    "provider": "catalog",
                    "id": f"en/tar/{n}",
                    "url": f"https://catalogs.example/en/tar#{n}",
                },
                "title": "tar",
                "text": f"cannot open archive member number {n} for reading",
                "summary": "",
                "purpose": "cannot open archive member",
                "useWhen": [],
                "limitations": [],
                "savedReason": None,
                "updatedAt": "2026-01-01T00:00:00Z",
            }
        ).resource
        for n in range(3)
    ]
    store = suite_modes.stocked(tmp_path / "store", tmp_path / "cache", docs, "hashing")
    found = suite_modes.searcher(store, "lexical")(["cannot", "open", "archive"], 5)
    assert sorted(found) == sorted(doc["id"] for doc in docs)
