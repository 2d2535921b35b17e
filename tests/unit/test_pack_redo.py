"""``xbrain gc`` deltifies each path's versions between neighbours again (``packmerge``'s
``redo``). A merge of two packs that each went through a merge turns the older pack's
whole version of a path into a delta against the newer pack's whole one, its newest,
many commits later, while the versions between them stay deltas of their own: a store
written to thousands of times held its history at about four times what deltas between
neighbours take. With ``redo`` every delta's object is rebuilt from its base (checked
against its id) and deltified again against the next newer version of its path."""

from __future__ import annotations

import os
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from dulwich.object_format import SHA1
from dulwich.pack import Pack, load_pack_index

from tests.conftest import make
from xbrain.git.packmerge import _rebuilt, merge
from xbrain.git.packs import redo_due
from xbrain.git.repack import SourcePack, read_source
from xbrain.store import Store

Objects = dict[bytes, tuple[int, bytes]]
_KINDS = {b"commit": 1, b"tree": 2, b"blob": 3}


def _loose(store_dir: Path) -> Objects:
    """Every loose object of the store: binary id → (type, bytes)."""
    objects = store_dir / ".git" / "objects"
    found = {}
    for fan in os.listdir(objects):
        if len(fan) == 2:
            for rest in os.listdir(objects / fan):
                raw = zlib.decompress((objects / fan / rest).read_bytes())
                head, _, body = raw.partition(b"\0")
                found[bytes.fromhex(fan + rest)] = (_KINDS[head.split(b" ")[0]], body)
    return found


def _puts(store: Store, first: int, count: int) -> None:
    """``count`` commits, each an update of one of five resources."""
    for i in range(first, first + count):
        stamp = f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
        store.put([make(f"r{i % 5}", purpose=f"Version {i} of the fifth part.", updatedAt=stamp)])


def _pack(directory: Path, sources: list[SourcePack], loose: Objects, redo: int = 0) -> Path:
    whole: Callable[[bytes], tuple[int, bytes]] = loose.__getitem__
    return directory / f"{merge(directory, sources, loose, whole, False, -1, None, redo)}.pack"


def _source(pack: Path) -> SourcePack:
    index = load_pack_index(str(pack.with_suffix(".idx")), SHA1)
    try:
        return read_source(pack, index.iterentries())
    finally:
        index.close()


def _objects(pack: Path) -> Objects:
    """Every object of a pack, whole (dulwich unwinding its deltas)."""
    out = {}
    with Pack(str(pack.with_suffix("")), object_format=SHA1) as opened:
        for sha, _, _ in opened.index.iterentries():
            kind, raw = opened.get_raw(sha.hex().encode())
            out[sha] = (kind, bytes(raw))
    return out


def _merged_in_pairs(folder: Path, packs: list[Path]) -> Path:
    """The packs merged two by two until one is left, as the upkeep's geometric merges
    do (deltas copied, whole objects deltified), without ``redo``."""
    while len(packs) > 1:
        paired = []
        for at in range(0, len(packs), 2):
            sources = [_source(pack) for pack in packs[at : at + 2]]
            try:
                paired.append(_pack(folder, sources, {}))
            finally:
                for source in sources:
                    source.data.close()
        packs = paired
    return packs[0]


def test_gc_deltifies_each_version_against_its_neighbour(tmp_path: Path) -> None:
    """Six rounds of 30 single puts (packed from loose, as the upkeep packs them) and a
    batch of 70 (a pack of its own), merged two by two as the upkeep does; then merged
    once more with ``redo``: smaller, the same objects, the head's tree still whole."""
    store_dir = tmp_path / "store"
    store = Store(store_dir)
    made = tmp_path / "made"
    made.mkdir()
    own_packs = store_dir / ".git" / "objects" / "pack"
    packs: list[Path] = []

    def take_packs() -> None:  # copies of the packs the writes made
        for pack in sorted(own_packs.glob("*.pack")):
            if not (made / pack.name).exists():
                for suffix in (".pack", ".idx"):
                    shutil.copy(pack.with_suffix(suffix), made / pack.with_suffix(suffix).name)
                packs.append(made / pack.name)

    store.put([make(f"base{i}") for i in range(300)])
    take_packs()
    everything = _objects(packs[0])
    for round_ in range(6):
        _puts(store, round_ * 30, 30)
        fresh = {sha: found for sha, found in _loose(store_dir).items() if sha not in everything}
        everything.update(fresh)
        packs.append(_pack(made, [], fresh))
        store.put([make(f"batch{round_}-{i}") for i in range(70)])
        take_packs()
        for pack in packs:  # (the store's own upkeep may have merged some meanwhile)
            everything.update(_objects(pack))
    geometric = _merged_in_pairs(made, packs)
    source = _source(geometric)
    try:
        redone = _pack(tmp_path, [source], {}, 1 << 30)  # (tmp_path: another folder)
    finally:
        source.data.close()
    assert _objects(geometric) == everything
    assert _objects(redone) == everything  # the same objects, every one rebuilt right
    # each version of the root tree that is a delta: against one of the ten versions
    # after it (the window) once redone; across a pack boundary, not before
    head = bytes.fromhex((store_dir / ".git" / "refs" / "heads" / "main").read_text())
    roots, at = [], head
    while at in everything:  # the first-parent history, newest first
        raw = everything[at][1]
        roots.append(bytes.fromhex(raw[5:45].decode()))
        parent = raw.split(b"\nparent ", 1)
        at = bytes.fromhex(parent[1][:40].decode()) if len(parent) == 2 else b""
    assert len(roots) > 180  # 180 puts, six batches and the first

    def far(pack: Path) -> int:
        source = _source(pack)
        try:
            bases = {entry.sha: entry.base for entry in source.entries}
        finally:
            source.data.close()
        return sum(
            1
            for i, tree in enumerate(roots)
            if bases[tree] is not None and bases[tree] not in roots[max(0, i - 10) : i]
        )

    assert far(geometric) > 0 and far(redone) == 0, (far(geometric), far(redone))
    # the head's own tree stays whole: a read of the head unwinds no chain
    head = bytes.fromhex((store_dir / ".git" / "refs" / "heads" / "main").read_text())
    tree = bytes.fromhex(everything[head][1][5:45].decode())
    source = _source(redone)
    try:
        entries = {entry.sha: entry for entry in source.entries}
    finally:
        source.data.close()
    assert entries[tree].base is None


def test_a_budget_rebuilds_part_and_copies_the_rest(tmp_path: Path) -> None:
    """Past its budget ``redo`` leaves the other deltas as they were: the pack still
    holds every object, each as it should read."""
    store_dir = tmp_path / "store"
    store = Store(store_dir)
    _puts(store, 0, 30)
    first = _loose(store_dir)
    _puts(store, 30, 30)
    second = {sha: found for sha, found in _loose(store_dir).items() if sha not in first}
    made = tmp_path / "made"
    made.mkdir()
    sources = [_source(_pack(made, [], first)), _source(_pack(made, [], second))]
    try:
        deltas = [(source, e) for source in sources for e in source.entries if e.base]
        wholes = {e.sha: (source, e) for source in sources for e in source.entries if not e.base}
        rebuilt = _rebuilt(wholes, deltas, 2_000)
        assert 0 < len(rebuilt) < len(deltas)  # part of them, within the budget
        small = _pack(made, sources, {}, redo=2_000)
    finally:
        for source in sources:
            source.data.close()
    assert _objects(small) == {**first, **second}


@pytest.mark.parametrize("damage", ["ring", "missing base"])
def test_a_damaged_delta_is_refused_not_rebuilt(tmp_path: Path, damage: str) -> None:
    """A delta whose chain never reaches a whole object, or whose base is in none of
    the packs, is damage (``ValueError``), not a loop or a lost object."""
    store_dir = tmp_path / "store"
    store = Store(store_dir)
    _puts(store, 0, 12)
    made = tmp_path / "made"
    made.mkdir()
    source = _source(_pack(made, [], _loose(store_dir)))
    try:
        deltas = [entry for entry in source.entries if entry.base is not None]
        assert len(deltas) >= 2
        a, b = deltas[0], deltas[1]
        if damage == "ring":
            entries = [e for e in source.entries if e.sha not in (a.sha, b.sha)]
            entries += [a._replace(base=b.sha), b._replace(base=a.sha)]
        else:
            entries = [e for e in source.entries if e.sha != a.sha]
            entries.append(a._replace(base=b"\x01" * 20))
        broken = source._replace(entries=entries)
        with pytest.raises(ValueError):
            _pack(made, [broken], {}, redo=1 << 30)
    finally:
        source.data.close()


def test_when_the_upkeep_redoes_every_delta() -> None:
    """Past 2.5 times the records' bytes, and 1.5 times what the packs held after the
    last time (so a history that stays large is not redone at every write)."""
    assert redo_due(packed=26, records=10, last=0)
    assert not redo_due(packed=25, records=10, last=0)  # (2.5 times: not past it)
    assert not redo_due(packed=30, records=10, last=20)  # (not past 1.5 times the last)
    assert redo_due(packed=31, records=10, last=20)
    assert not redo_due(packed=10**9, records=0, last=0)  # records unknown: never


def test_the_upkeep_redoes_the_history_once_it_outgrows_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write whose upkeep finds the history past the bound rebuilds every delta (a
    small store: inside the write), records the packs' bytes, and the writes after it
    leave the packs to the geometric merges until they double; every record reads."""
    from xbrain.git import packs

    store_dir = tmp_path / "store"
    store = Store(store_dir)
    store.put([make(f"base{i}") for i in range(70)])  # a pack
    _puts(store, 0, 20)
    marker = store_dir / ".git" / "xbrain" / "packs-redone"
    assert not marker.exists()
    monkeypatch.setattr(packs, "_REDO_FROM", 0)  # (a small store counts)
    monkeypatch.setattr(packs, "_REDO_PAST", 1)
    _puts(store, 20, 1)
    pack_dir = store_dir / ".git" / "objects" / "pack"
    held = [pack.stat().st_size for pack in pack_dir.glob("*.pack")]
    assert len(held) == 1 and int(marker.read_text()) == held[0]
    assert marker.stat().st_mode & 0o777 == 0o600
    _puts(store, 21, 5)
    assert int(marker.read_text()) == held[0]  # not again: the packs have not doubled
    from xbrain.git import GitStore

    with GitStore(store_dir) as git:
        assert git.fsck() == []
    again = store.put([make(f"base{i}") for i in range(70)])["results"]  # each read back
    assert [result["status"] for result in again] == ["unchanged"] * 70


def test_gc_redoes_a_lone_pack_once(tmp_path: Path) -> None:
    """A store gc'd before held one pack and nothing loose: gc rebuilds its deltas into a
    pack named by its bytes (named by its objects it was taken for the old one and
    thrown away), and a second gc finds that pack is the last rebuild's and does nothing."""
    from xbrain.git import GitStore
    from xbrain.git.packmerge import _REDO_DEPTH
    from xbrain.git.repack import MAX_CHAIN

    assert _REDO_DEPTH + 16 <= MAX_CHAIN  # a later merge's chain on top stays under it
    store_dir = tmp_path / "store"
    store = Store(store_dir)
    store.put([make(f"base{i}") for i in range(70)])
    _puts(store, 0, 40)
    pack_dir = store_dir / ".git" / "objects" / "pack"
    with GitStore(store_dir) as git:
        git._consolidate(  # one pack of everything, the way merges without a rebuild make it
            [p.stem for p in pack_dir.glob("*.pack")], loose=True, every_loose=True
        )
        before = sorted(pack_dir.glob("*.pack"))
        assert len(before) == 1
        git.consolidate()
        after = sorted(pack_dir.glob("*.pack"))
        assert len(after) == 1 and after != before  # rebuilt, and kept
        marker = store_dir / ".git" / "xbrain" / "packs-redone"
        assert int(marker.read_text()) == after[0].stat().st_size
        git.consolidate()
        assert sorted(pack_dir.glob("*.pack")) == after
        assert git.fsck() == []


def test_a_failed_redo_is_not_tried_again_at_every_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attempt is recorded before the merge: a redo that fails (damage, a full disk,
    memory) waits, like one that landed, until the packs have doubled."""
    from xbrain.errors import CorruptStoreError
    from xbrain.git import GitStore, packs

    store_dir = tmp_path / "store"
    store = Store(store_dir)
    store.put([make(f"base{i}") for i in range(70)])
    _puts(store, 0, 10)
    monkeypatch.setattr(packs, "_REDO_FROM", 0)
    monkeypatch.setattr(packs, "_REDO_PAST", 1)

    def broken(*args: object, **kwargs: object) -> str:
        raise ValueError("a pack entry does not inflate to its size")

    monkeypatch.setattr(packs, "merge", broken)
    with GitStore(store_dir) as git:
        records = lambda: 1  # noqa: E731 (what the core would say the records take)
        assert git._plan(records) is not None and git._plan(records)[2] > 0  # type: ignore[index]
        with pytest.raises(CorruptStoreError):
            git.keep_packs(records)
        plan = git._plan(records)
        assert plan is None or plan[2] == 0  # no second attempt now


@pytest.mark.parametrize("declared", ["a huge result", "another base size"])
def test_a_delta_that_declares_too_much_is_never_applied(declared: str) -> None:
    """A delta whose header says it builds 2**45 bytes is left as it is (past the
    budget), not handed to ``apply_delta`` (which allocates what it is told first); one
    that names a base of another size is damage."""
    from xbrain.git.repack import PackEntry

    base = b"a base blob of some bytes\n" * 4
    size = 2**45 if declared == "a huge result" else 5
    base_size = len(base) if declared == "a huge result" else len(base) + 1

    def varint(value: int) -> bytes:
        out = bytearray()
        while True:
            out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
            value >>= 7
            if not value:
                return bytes(out)

    delta = varint(base_size) + varint(size) + bytes([0x05]) + b"hello"
    whole, packed = zlib.compress(base), zlib.compress(delta)
    data = whole + packed
    base_id = b"\x01" * 20
    entries = [
        PackEntry(base_id, 3, len(base), None, 0, len(whole)),
        PackEntry(b"\x02" * 20, 7, len(delta), base_id, len(whole), len(data)),
    ]
    source = SourcePack(data, entries)  # type: ignore[arg-type]  # (bytes for the mmap)
    wholes, deltas = {base_id: (source, entries[0])}, [(source, entries[1])]
    if declared == "a huge result":
        assert _rebuilt(wholes, deltas, 1 << 20) == {}
    else:
        with pytest.raises(ValueError):
            _rebuilt(wholes, deltas, 1 << 20)
