"""Shard prefixes move one by one (core.shards): whatever a run of writes adds and
removes, the shard files it leaves are the ones the record count implies — every prefix
at ``layout.depth_for(count, prefix)``, every entry in the file its digits name — which
is what ``doctor`` and merges derive, and what ``Placement.settled`` accepts."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.core import layout
from xbrain.core.shards import Placement, Staged, same_apart, shard_entries, shard_files

DIR = "index/catalog"
Tree = dict[str, bytes]


def _listdir(tree: Tree, directory: str) -> list[str]:
    names = {
        p[len(directory) + 1 :].split("/", 1)[0] for p in tree if p.startswith(directory + "/")
    }
    return sorted(names)


def _implied(entries: dict[str, Any], count: int) -> Tree:
    """The files the entries imply at ``count`` (what ``derived_files`` writes)."""
    shards: dict[str, dict[str, Any]] = {}
    for name, value in entries.items():
        shards.setdefault(name[: layout.depth_for(count, name[:2])], {})[name] = value
    return {layout.shard_path(DIR, key): layout.dump_catalog(e) for key, e in shards.items()}


def _write(tree: Tree, start: int, adds: list[str], removes: list[str], count: int) -> Tree:
    """One write: ``removes`` then ``adds`` staged on ``tree``, its files applied."""
    staged = Staged(DIR, tree.get, lambda d: _listdir(tree, d), shard_entries, str, start)
    for name in removes:
        key = staged.key(name)
        staged.shard(key).pop(name, None)
        staged.dirty.add(key)
    for name in adds:
        key = staged.key(name)
        staged.shard(key)[name] = {"n": name}
        staged.dirty.add(key)
    out = dict(tree)
    for path, data in staged.files(count).items():
        if data is None:
            out.pop(path, None)
        else:
            out[path] = data
    return out


@pytest.fixture(autouse=True)
def small_split(monkeypatch: pytest.MonkeyPatch) -> None:
    # thresholds 32..63 records for three digits, 512..1,008 for four
    monkeypatch.setattr(layout, "SPLIT_AT", 32, raising=False)


NAMES = st.text("0123456789abcdef", min_size=6, max_size=6)
# each write: some drawn names, a number of others (spread over every prefix, so the
# count passes thresholds of three and four digits), and the share of entries removed
STEPS = st.lists(
    st.tuples(st.lists(NAMES, max_size=30), st.integers(0, 400), st.integers(0, 100)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(STEPS)
def test_writes_leave_the_files_the_count_implies(steps: list[tuple[list[str], int, int]]) -> None:
    tree: Tree = {}
    entries: dict[str, Any] = {}
    for step, (drawn, bulk, share) in enumerate(steps):
        more = [hashlib.sha256(f"{step} {i}".encode()).hexdigest()[:6] for i in range(bulk)]
        adds = drawn + more
        start = len(entries)
        removes = sorted(entries)[: len(entries) * share // 100]
        live = {n: {"n": n} for n in entries if n not in removes}
        live.update((n, {"n": n}) for n in adds)
        before = tree
        tree = _write(tree, start, adds, removes, len(live))
        entries = live
        assert tree == _implied(entries, len(entries))
        assert tree == shard_files(DIR, entries, str, len(entries))  # what doctor derives
        assert Placement(lambda d, t=tree: _listdir(t, d), DIR).settled(len(entries))
        changed = [p for p in set(before) | set(tree) if before.get(p) != tree.get(p)]
        touched = set(adds) | set(removes)

        def apart(found: dict[str, Any], touched: set[str] = touched) -> dict[str, Any]:
            return {k: v for k, v in found.items() if k not in touched}

        assert same_apart(DIR, changed, before.get, tree.get, str, apart)


def test_a_write_moves_only_the_prefixes_its_count_passes() -> None:
    names = [f"{at:02x}{i:04x}" for at in range(256) for i in range(2)]  # 512 entries
    tree = _write({}, 0, names, [], 512)
    assert Placement(lambda d: _listdir(tree, d), DIR).settled(512)
    after = _write(tree, 512, ["ff0002"], [], 513)
    changed = {p for p in set(tree) | set(after) if tree.get(p) != after.get(p)}
    # four digits past 16 × (32 + p // 8) records: 512 → 513 moves 00..07, and nothing
    # else changes but the file the new entry lands in
    moved = {p.split("/")[2][:2] for p in changed}
    prefixes = [f"{at:02x}" for at in range(256)]
    want = {p for p in prefixes if layout.depth_for(512, p) != layout.depth_for(513, p)}
    assert want == {f"{at:02x}" for at in range(8)}
    assert moved == want | {"ff"}
    assert after == _implied({n: {"n": n} for n in [*names, "ff0002"]}, 513)


def test_a_prefix_written_at_another_depth_moves_on_the_next_write() -> None:
    names = [f"{at:02x}{i:04x}" for at in range(4) for i in range(3)]
    grouped: dict[str, dict[str, Any]] = {}
    for n in names:  # a store written by a rule that put every prefix at three digits
        grouped.setdefault(n[:3], {})[n] = {"n": n}
    legacy = {layout.shard_path(DIR, k): layout.dump_catalog(e) for k, e in grouped.items()}
    assert not Placement(lambda d: _listdir(legacy, d), DIR).settled(12)
    after = _write(legacy, 12, ["ff0000"], [], 13)  # touches none of them
    assert after == _implied({n: {"n": n} for n in [*names, "ff0000"]}, 13)


def test_misfiled_entries_are_not_the_same_apart() -> None:
    before = {f"{DIR}/ab.json": layout.dump_catalog({"ab0001": 1})}
    after = {f"{DIR}/ac.json": layout.dump_catalog({"ab0001": 1})}  # under another prefix
    paths = [f"{DIR}/ab.json", f"{DIR}/ac.json"]
    assert not same_apart(DIR, paths, before.get, after.get, str, dict)
    moved = {f"{DIR}/ab/0.json": layout.dump_catalog({"ab0001": 1})}
    paths = [f"{DIR}/ab.json", f"{DIR}/ab/0.json"]
    assert same_apart(DIR, paths, before.get, moved.get, str, dict)
    lost = {f"{DIR}/ab/0.json": layout.dump_catalog({})}
    assert not same_apart(DIR, paths, before.get, lost.get, str, dict)


def test_placement_reads_each_prefix_at_its_own_depth() -> None:
    tree = {
        f"{DIR}/00.json": b"{}\n",
        f"{DIR}/01/a.json": b"{}\n",
        f"{DIR}/02/ab.json": b"{}\n",
        f"{DIR}/03.json": b"{}\n",
        f"{DIR}/03/b.json": b"{}\n",  # a file and a directory: the file is read
        f"{DIR}/zz.json": b"{}\n",  # not a prefix
    }
    placement = Placement(lambda d: _listdir(tree, d), DIR)
    assert [placement.depth(p) for p in ("00", "01", "02", "03", "04")] == [2, 3, 4, 2, None]
    assert placement.prefixes() == {"00", "01", "02", "03"}
    assert placement.files("03") == [f"{DIR}/03.json", f"{DIR}/03/b.json"]
    assert not placement.settled(0)
    for files, settled in (
        ([f"{DIR}/00.json"], True),
        ([f"{DIR}/00.json", f"{DIR}/00/a.json"], False),  # two forms: nothing else amiss
        ([f"{DIR}/00/a.json"], False),  # three digits where the count gives two
    ):
        alone: Tree = dict.fromkeys(files, b"{}\n")
        assert Placement(lambda d, t=alone: _listdir(t, d), DIR).settled(0) is settled, files
    grown: Tree = {f"{DIR}/00/a.json": b"{}\n", f"{DIR}/80/ab.json": b"{}\n"}
    count = layout.SPLIT_AT + 1  # 00 at three digits, 80 still at two
    assert not Placement(lambda d: _listdir(grown, d), DIR).settled(count)
    grown[f"{DIR}/80.json"] = grown.pop(f"{DIR}/80/ab.json")
    assert Placement(lambda d: _listdir(grown, d), DIR).settled(count)
    for extra in (f"{DIR}/00.json", f"{DIR}/00/ab.json"):  # two forms; four digits in three
        odd = {**grown, extra: b"{}\n"}
        assert not Placement(lambda d, t=odd: _listdir(t, d), DIR).settled(count), extra
