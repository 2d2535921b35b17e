"""Pack upkeep: small packs and loose objects consolidated geometrically, with deltas.

Every write of more than a few dozen objects adds a pack, and every smaller one adds
loose objects; nothing else ever consolidates them, and every fresh process opens every
pack's index. After each write, under the store lock, ``keep_packs`` looks (one listing
of the pack directory and one of a loose-object fan-out directory: next to nothing when
there is nothing to do) and consolidates when

* the packs under 4 MB, smallest first, stop growing geometrically: the smallest are
  merged until each remaining one is at least twice all the smaller ones together, so
  their count stays logarithmic in the number of writes (git's ``repack --geometric=2``);
  larger packs (a merge costs about half a second a MB here: too long inside a write) are
  merged by a full consolidation only;
* loose objects pile up (past about 2,000, estimated from one fan-out directory as git
  does): they are packed.

A consolidated pack is written with deltas: each object against the previous version
of the same path, copying the lines (a tree's entries) they share — checked to rebuild
the object exactly before it is written, and in chains at most ``_DEPTH`` long, so a
read never unwinds a long chain. It holds the objects of the packs it replaces and
nothing is dropped, unreachable or not. Nothing is deleted before the pack that holds it has
landed (its index written and synced):

* a merged pack is removed (its index first) once the new pack has landed; a reader
  that still meant to open it gets dulwich's ``PackFileDisappeared``, rescans and finds
  the new one;
* a loose object stays loose until a *later* consolidation finds it in a pack that
  landed before that one started, so no reader can look for it in the packs, miss the
  new pack, and then find the loose file gone.

A kill at any point leaves a complete store: at worst a temporary pack, or a pack
without its index (``pack_leftovers``, removed by the next write), or an object in two
places. ``consolidate`` (``xbrain gc``) packs everything into one pack, and removes the
loose copies once it has landed, as ``git gc`` does.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from dulwich.objects import Commit, ObjectID, ShaFile, Tree
from dulwich.pack import UnpackedObject, apply_delta

from ..errors import CorruptStoreError, no_space
from .objects import DAMAGE, DIR_MODE, disk_full, private_umask
from .repo import Repository

__all__ = ["PackStats", "Packs", "geometric_split"]

_FACTOR = 2  # each pack kept is at least this many times all smaller packs together
_LOOSE_SAMPLE = "17"  # the fan-out directory counted (git's choice)
_LOOSE_LIMIT = 8  # loose objects there that start a consolidation (~2,000 in all)
_LOOSE_PACK_MIN = 256 * _LOOSE_LIMIT // 2  # fewer left loose after pruning: not packed
_WINDOW = 10  # objects each one is tried as a delta against
_DEPTH = 16  # the longest delta chain written
_NO_DELTA_BELOW = 64  # bytes: smaller objects are stored whole
_UPKEEP_MAX = 4 << 20  # bytes: a larger pack is merged only by a full consolidation
_EXTRA = (".rev", ".bitmap", ".mtimes", ".promisor")  # git's companions of a pack


class PackStats(NamedTuple):
    """What ``doctor`` reports of the object store."""

    packs: int
    pack_bytes: int
    loose: int
    loose_bytes: int


def geometric_split(sizes: list[int]) -> int:
    """How many of the smallest packs (``sizes`` ascending) to merge so that each pack
    left is at least ``_FACTOR`` times the merged one and every smaller one together;
    0 or 1: nothing to merge."""
    split, total = 0, 0
    for i, size in enumerate(sizes):
        if i > 0 and size < _FACTOR * total:
            split = i + 1
        total += size
    return split


def _complete_packs(pack_dir: Path) -> list[tuple[str, int]]:
    """``(basename, size)`` of each complete pack (its index beside it) that carries no
    ``.keep``, smallest first."""
    try:
        names = set(os.listdir(pack_dir))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        base = name[:-5]
        if name.endswith(".pack") and base + ".idx" in names and base + ".keep" not in names:
            with contextlib.suppress(FileNotFoundError):
                found.append((base, os.stat(pack_dir / name).st_size))
    return sorted(found, key=lambda item: (item[1], item[0]))


def _loose_ids(objects: Path) -> list[bytes]:
    """Every loose object's id."""
    found = []
    for fan in os.listdir(objects):
        if len(fan) != 2 or not all(c in "0123456789abcdef" for c in fan):
            continue
        with contextlib.suppress(NotADirectoryError, FileNotFoundError):
            for rest in os.listdir(objects / fan):
                if len(rest) == 38 and all(c in "0123456789abcdef" for c in rest):
                    found.append((fan + rest).encode())
    return found


def _names(objects: dict[bytes, ShaFile]) -> dict[bytes, bytes]:
    """The path each object sits at in the trees of the commits among ``objects``,
    walking only trees among them (the others were packed with the objects they hold).
    Versions of one file share its path: the best delta bases for each other."""
    names: dict[bytes, bytes] = {}
    todo = [(obj.tree, b"") for obj in objects.values() if isinstance(obj, Commit)]
    while todo:
        sha, path = todo.pop()
        tree = objects.get(sha)
        if sha in names or not isinstance(tree, Tree):
            continue
        names[sha] = path
        for item in tree.iteritems():
            child = path + b"/" + item.path
            if item.mode == DIR_MODE:
                todo.append((item.sha, child))
            elif item.sha in objects:
                names.setdefault(item.sha, child)
    return names


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _copy(offset: int, size: int) -> bytes:
    """Git's delta op copying ``size`` bytes of the base from ``offset``."""
    op, args = 0x80, bytearray()
    for i in range(4):
        if offset >> (8 * i) & 0xFF:
            op |= 1 << i
            args.append(offset >> (8 * i) & 0xFF)
    for i in range(3):
        if size >> (8 * i) & 0xFF:
            op |= 0x10 << i
            args.append(size >> (8 * i) & 0xFF)
    return bytes([op]) + bytes(args)


def _tree_entries(raw: bytes) -> list[bytes]:
    """A tree's entries (``mode name NUL sha``), each whole; the rest as one piece."""
    pieces, at = [], 0
    while at < len(raw):
        nul = raw.find(b"\0", at)
        if nul == -1 or nul + 21 > len(raw):
            pieces.append(raw[at:])
            break
        pieces.append(raw[at : nul + 21])
        at = nul + 21
    return pieces


def _pieces(type_num: int, raw: bytes) -> list[bytes]:
    """What a delta copies whole: a tree's entries, a text's lines."""
    return _tree_entries(raw) if type_num == Tree.type_num else raw.splitlines(keepends=True)


def _line_delta(base: bytes, target: bytes, type_num: int = 3) -> bytes:
    """A git delta rebuilding ``target`` from ``base`` piece by piece (lines, or a
    tree's entries): each piece of the target found in the base is copied (runs of them
    in one op), the rest inserted. Linear in the pieces, where dulwich's byte-wise delta
    search costs about half a millisecond even for a small object; versions of a record,
    a catalog shard or a directory share most of their pieces."""
    where: dict[bytes, int] = {}
    at = 0
    for line in _pieces(type_num, base):
        where.setdefault(line, at)
        at += len(line)
    ops = [_varint(len(base)), _varint(len(target))]
    run: list[int] = [0, 0]  # the copy being extended: base offset, length
    literal = bytearray()

    def copied() -> None:
        offset, length = run
        while length:
            step = min(length, 0xFFFF)
            ops.append(_copy(offset, step))
            offset, length = offset + step, length - step
        run[:] = [0, 0]

    def inserted() -> None:
        for i in range(0, len(literal), 0x7F):
            chunk = bytes(literal[i : i + 0x7F])
            ops.append(bytes([len(chunk)]) + chunk)
        literal.clear()

    for line in _pieces(type_num, target):
        found = where.get(line) if len(line) > 4 else None
        if found is None:
            copied()
            literal += line
        elif run[1] and run[0] + run[1] == found:
            run[1] += len(line)
        else:
            inserted()
            copied()
            run[:] = [found, len(line)]
    inserted()
    copied()
    return b"".join(ops)


def _delta(base: bytes, target: bytes, type_num: int) -> bytes:
    """A delta of ``target`` against ``base``, checked: one that does not rebuild
    ``target`` exactly is never written."""
    delta = _line_delta(base, target, type_num)
    if b"".join(apply_delta(base, delta)) != target:
        return target + b"x"  # never smaller than the target: stored whole
    return delta


def _deltified(objects: dict[bytes, ShaFile]) -> Iterator[UnpackedObject]:
    """The objects as pack entries, each a delta against an earlier version of the same
    path (one of the ``_WINDOW`` objects before it, sorted by type, path, then size)
    when that is smaller, with chains at most ``_DEPTH`` long."""
    names = _names(objects)
    order = sorted(
        objects.values(),
        key=lambda o: (o.type_num, names.get(o.id, b"\xff"), -o.raw_length(), o.id),
    )
    bases: deque[tuple[bytes, bytes | None, bytes, int]] = deque()  # sha, path, text, depth
    for obj in order:
        raw = obj.as_raw_string()
        sha = obj.sha().digest()
        name = names.get(obj.id)
        chunks: list[bytes] = [raw]
        best, base_sha, depth = len(raw), None, 0
        if name is not None and len(raw) >= _NO_DELTA_BELOW:
            for candidate, path, text, chain in bases:
                if path != name or chain >= _DEPTH or len(text) > 2 * len(raw):
                    continue
                delta = _delta(text, raw, obj.type_num)
                if len(delta) < best:
                    chunks, best, base_sha, depth = [delta], len(delta), candidate, chain + 1
                    break  # the nearest version: good enough, and no more time spent
        yield UnpackedObject(
            obj.type_num, sha=sha, delta_base=base_sha, decomp_len=best, decomp_chunks=chunks
        )
        bases.appendleft((sha, name, raw, depth))
        if len(bases) > _WINDOW:
            bases.pop()


class Packs(Repository):
    """Counting and consolidating the store's packs and loose objects."""

    @property
    def _objects_dir(self) -> Path:
        return self.control_dir / "objects"

    def pack_stats(self) -> PackStats:
        """Packs and loose objects: how many, and their bytes."""
        pack_dir = self._objects_dir / "pack"
        packs = _complete_packs(pack_dir)
        loose_bytes = 0
        loose = _loose_ids(self._objects_dir)
        for sha in loose:
            name = sha.decode()
            with contextlib.suppress(FileNotFoundError):
                loose_bytes += os.stat(self._objects_dir / name[:2] / name[2:]).st_size
        return PackStats(len(packs), sum(size for _, size in packs), len(loose), loose_bytes)

    def keep_packs(self) -> bool:
        """Consolidate when the packs or the loose objects call for it (hold the store
        lock); True when something was consolidated. Costs two directory listings when
        there is nothing to do."""
        # packs past the bound are left to xbrain gc: a merge costs ~0.5 s a MB here
        packs = [p for p in _complete_packs(self._objects_dir / "pack") if p[1] < _UPKEEP_MAX]
        try:
            sample = len(os.listdir(self._objects_dir / _LOOSE_SAMPLE))
        except FileNotFoundError:
            sample = 0
        split = geometric_split([size for _, size in packs])
        loose = sample > _LOOSE_LIMIT
        if split < 2 and not loose:
            return False
        self._consolidate([base for base, _ in packs[:split]] if split >= 2 else [], loose)
        return True

    def consolidate(self) -> PackStats:
        """Pack every object into one pack, with deltas (``xbrain gc``; hold the store
        lock), and drop the loose copies of objects packed before; the stats after."""
        packs = [base for base, _ in _complete_packs(self._objects_dir / "pack")]
        self._consolidate(packs, loose=True, every_loose=True)
        return self.pack_stats()

    def _consolidate(self, merged: list[str], loose: bool, every_loose: bool = False) -> None:
        """Write one pack of the objects of the packs ``merged`` (basenames) and, with
        ``loose``, of the loose objects not yet in any pack (after removing the loose
        copies of packed ones); then remove the merged packs."""
        store = self._repo.object_store
        try:
            with private_umask():
                fresh: list[bytes] = []
                if loose:
                    left = self._prune_loose()
                    if every_loose or len(left) >= _LOOSE_PACK_MIN:
                        fresh = left
                by_name = {bytes(p.name()): p for p in store.packs}  # "pack-<name>"
                chosen = [
                    (base, by_name[key])
                    for base in merged
                    if (key := base.partition("-")[2].encode()) in by_name
                ]
                if len(chosen) < 2 and not fresh:
                    return  # one pack alone, nothing loose: already what would be written
                objects: dict[bytes, ShaFile] = {}
                for _, pack in chosen:  # each pack read in order, not an id lookup each
                    for obj in pack.iterobjects():
                        objects.setdefault(bytes(obj.id), obj)
                for sha in fresh:
                    objects.setdefault(sha, store[ObjectID(sha)])
                written = store.add_pack_data(len(objects), _deltified(objects))
                keep = None if written is None else bytes(written.name())
                for base, pack in chosen:
                    if bytes(pack.name()) != keep:
                        pack.close()
                        self._remove_pack(self._objects_dir / "pack" / base)
                store.packs  # noqa: B018  (a rescan: the removed packs leave the cache)
                if every_loose:  # xbrain gc: the loose copies go now that the pack landed
                    self._prune_loose()
        except DAMAGE as exc:
            raise CorruptStoreError(
                "A pack or object of the store is damaged; run xbrain doctor."
            ) from exc
        except OSError as exc:
            if no_space(exc):
                raise disk_full() from None
            raise

    def _remove_pack(self, base: Path) -> None:
        """Remove a pack its objects have left for a newer one: its index first, so a
        kill in between leaves a pack without index, a leftover the next write removes."""
        for suffix in (".idx", ".pack", *_EXTRA):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{base}{suffix}")

    def _prune_loose(self) -> list[bytes]:
        """Remove the loose objects a pack holds (packs that landed before this call);
        the ids of the loose objects left."""
        store = self._repo.object_store
        packs = store.packs
        left = []
        for sha in _loose_ids(self._objects_dir):
            if any(ObjectID(sha) in pack for pack in packs):
                name = sha.decode()
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._objects_dir / name[:2] / name[2:])
            else:
                left.append(sha)
        return left
