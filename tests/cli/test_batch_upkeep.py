"""A batch's search-index upkeep (issue 45 item 4): the records the write staged are
indexed as they were staged, not parsed again from the YAML it has just written, and
the rows of the whole batch are written together; the index is exactly the one
``reindex`` builds from the commit."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, head, make, sample
from tests.unit.test_index_build import tables
from xbrain.codec import dump_yaml
from xbrain.core import Core
from xbrain.kinds import resource as resource_kind
from xbrain.search import service
from xbrain.store import Store

Run = Callable[..., Result]


def index_tables(store: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(store / ".git/xbrain/search.sqlite") as conn:
        return tables(conn)


def recorded(store: Path) -> str:
    with sqlite3.connect(store / ".git/xbrain/search.sqlite") as conn:
        (commit,) = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
    return str(commit)


def awkward(i: int) -> dict[str, Any]:
    """Input a write normalizes and YAML must quote or fold: padded text, strings YAML
    reads as other types, repeated notes, several lines, Chinese, an unknown field."""
    return make(
        f"awkward-{i}",
        title=f"  yes {i}  ",
        text=f"line one {i}\n  indented: value # not a comment\n\n目录 排序 sorting\n",
        summary=["null", "0777", "1e3", "2026-01-01", "~", "'quoted'", "a: b"][i % 7],
        purpose=f"- {i}\tlists",
        useWhen=["again", " again ", "listing files", ""],
        limitations=["true"],
        savedReason=None if i % 2 else "  kept ",
        unknownField=i,
    )


def test_a_batch_leaves_the_index_reindex_builds(
    xb_proc: Run, store_dir: Path, json_file: Callable[[Any], str], tmp_path: Path
) -> None:
    first = [make(f"first-{i}", text=f"keyboard focus dialog {i}") for i in range(30)]
    assert xb_proc("put", json_file([sample(), *first])).code == 0
    assert xb_proc("search", "keyboard").code == 0  # the index exists from here on
    assert xb_proc("analyze", str(EXAMPLES / "analysis.json")).code == 0
    changed = [
        make(f"first-{i}", text=f"changed {i} sorted", updatedAt="2026-11-01T00:00:00Z")
        for i in range(0, 30, 3)
    ]
    design = sample(text="The page changed", updatedAt="2099-01-01T00:00:00Z")  # now stale
    batch = [*changed, design, first[1], *(awkward(i) for i in range(14))]
    result = xb_proc("put", json_file(batch))
    assert result.code == 0, result.stderr
    assert (result.json["added"], result.json["updated"], result.json["unchanged"]) == (14, 11, 1)
    deleted = xb_proc("delete", make_id("first-2"))  # a removal too
    assert deleted.code == 0 and deleted.json["deleted"] is True
    assert recorded(store_dir) == head(store_dir)  # each write's upkeep kept it current
    upkept = index_tables(store_dir)
    assert len(upkept["docs"]) == 31 + 14 - 1
    assert xb_proc("reindex").code == 0
    assert index_tables(store_dir) == upkept


def make_id(source_id: str) -> str:
    from xbrain.kinds.model import resource_id

    return resource_id("web", source_id)


def test_a_batch_upkeep_parses_no_record_the_write_staged(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make("first")])
    store.search("first")  # the index exists: every write keeps it current
    parsed: list[bytes] = []
    real = service.load_yaml

    def load_yaml(data: bytes) -> Any:
        parsed.append(data)
        return real(data)

    monkeypatch.setattr(service, "load_yaml", load_yaml)
    result = store.put([make(f"batch-{i}", text=f"keyboard {i}") for i in range(40)])
    assert result["added"] == 40
    assert parsed == []  # before: each of the 40 records parsed again by the upkeep
    assert recorded(store.path) == head(store.path)  # the upkeep made it current
    copy = tmp_path / "copy"
    shutil.copytree(store.path, copy)
    Store(copy, cache_dir=segment_cache).reindex()
    assert index_tables(copy) == index_tables(store.path)


def test_bytes_written_after_a_staged_record_are_parsed(tmp_path: Path) -> None:
    core = Core(tmp_path / "store")
    core.create()
    record = resource_kind.KIND.parse(dump_yaml(_normalized("one")))
    path = resource_kind.path(record["id"])
    with core.session() as git:
        txn = core.begin(git, "test")
        resource_kind.put(txn, record)
        staged = txn.changes[path]
        assert staged is not None
        assert txn.staged_record(path, staged) is record
        other = dump_yaml({**record, "title": "Written another way"})
        txn.write(path, other)
        assert txn.staged_record(path, other) is None  # the bytes are not the record's
        assert txn.staged_record(path, staged) is not None  # (what the commit no longer holds)
    assert core.staged_record(path, staged) is None  # outside a commit's hooks


def _normalized(source_id: str) -> dict[str, Any]:
    from xbrain.kinds.model import normalize_resource

    return normalize_resource(make(source_id)).resource


def test_a_batch_looks_each_path_up_and_reads_each_record_it_replaces_less_often(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new record's path, found absent once, is not looked up again in the commit's
    trees, and the record an update replaces is parsed once by the staging (before:
    some 15 lookups per new record, 3 parses per replaced one)."""
    from xbrain.core import view

    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make("first")])
    with store.core.git() as git:
        snapshot = type(git.snapshot())
    counted = {"lookups": 0, "parses": 0}
    lookup, parse = snapshot.read, view.View.record

    def read(self: Any, path: str) -> bytes | None:
        counted["lookups"] += 1
        return lookup(self, path)

    def record(self: Any, kind: str, rid: str) -> dict[str, Any] | None:
        counted["parses"] += 1
        return parse(self, kind, rid)

    monkeypatch.setattr(snapshot, "read", read)
    monkeypatch.setattr(view.View, "record", record)
    assert store.put([make(f"new-{i}") for i in range(20)])["added"] == 20
    assert counted["lookups"] <= 6 * 20
    counted.update(lookups=0, parses=0)
    newer = "2099-01-01T00:00:00Z"
    changed = [make(f"new-{i}", text="changed", updatedAt=newer) for i in range(20)]
    assert store.put(changed)["updated"] == 20
    assert counted["parses"] <= 2 * 20
    assert store.get(make_id("new-3"))["text"] == "changed"


def test_a_batch_upkeep_normalizes_no_resource_the_put_normalized(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resources a put normalized are what reading them back gives: the upkeep
    indexes them as they are (before: each normalized again); one whose stored design the
    put carried over is a new record, normalized as before."""
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([sample(), make("first")])
    store.analyze(
        {**_analysis(), "resourceRevision": store.inspect(_sample_id())["resourceRevision"]}
    )
    store.search("first")  # the index exists: every write keeps it current
    normalized: list[str] = []
    real = service.normalize_resource

    def normalize(raw: Any) -> Any:
        normalized.append(raw["id"])
        return real(raw)

    monkeypatch.setattr(service, "normalize_resource", normalize)
    carried = sample(text="The page changed", updatedAt="2099-01-01T00:00:00Z")
    batch = [make(f"batch-{i}", text=f"keyboard {i}", title=f"  padded {i} ") for i in range(40)]
    result = store.put([*batch, carried])
    assert result["added"] == 40 and result["updated"] == 1
    assert normalized == [_sample_id()]  # before: all 41
    assert store.get(_sample_id())["design"]["status"] == "stale"
    assert recorded(store.path) == head(store.path)
    copy = tmp_path / "copy"
    shutil.copytree(store.path, copy)
    Store(copy, cache_dir=segment_cache).reindex()
    assert index_tables(copy) == index_tables(store.path)


def _analysis() -> dict[str, Any]:
    import json

    analysis: dict[str, Any] = json.loads((EXAMPLES / "analysis.json").read_text())
    return analysis


def _sample_id() -> str:
    from xbrain.kinds.model import normalize_resource

    return str(normalize_resource(sample()).resource["id"])


def test_a_record_staged_as_parsed_is_handed_out_as_such(tmp_path: Path) -> None:
    core = Core(tmp_path / "store")
    core.create()
    plain, vouched = _normalized("plain"), _normalized("vouched")
    with core.session() as git:
        txn = core.begin(git, "test")
        resource_kind.put(txn, plain)
        resource_kind.put(txn, vouched, parsed=True)
        for record, as_read in ((plain, None), (vouched, vouched)):
            path = resource_kind.path(record["id"])
            data = txn.changes[path]
            assert data is not None
            assert txn.staged_record(path, data) is record
            assert txn.staged_record(path, data, parsed=True) is as_read
