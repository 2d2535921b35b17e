"""Pack upkeep: small packs and loose objects consolidated geometrically, with deltas.

Every write of more than a few dozen objects adds a pack, and every smaller one adds
loose objects; nothing else ever consolidates them, and every fresh process opens every
pack's index. After each write, under the store lock, ``keep_packs`` looks (one listing
of the pack directory and one of a loose-object fan-out directory: next to nothing when
there is nothing to do) and consolidates when

* the packs, smallest first, stop growing geometrically: the smallest are merged until
  each remaining one is at least twice all the smaller ones together, so their count
  stays logarithmic in the number of writes (git's ``repack --geometric=2``), whatever
  their size: a merge copies what is deltified already and deltifies only the whole
  objects (``packmerge``): 20 s of CPU for all 79 packs of a 100,000-record store. A
  merge of up to ``_INLINE_MAX`` bytes of packs runs inside the write; a larger one in
  a detached process (``upkeep``) that the write hands the upkeep lock to
  (``upkeeplock``), so the write returns at once;
* loose objects pile up (past about 2,000, estimated from one fan-out directory as git
  does): they are packed.

A consolidated pack is written with deltas (``packmerge``): each older version of a
path against a newer one, copying the lines (a tree's entries) they share — checked to
rebuild the object exactly before it is written, and in short chains ending at the
newest version, which stays whole, so a read of the head unwinds none. It holds the
objects of the packs it replaces and nothing is dropped, unreachable or not. Nothing is
deleted before the pack that holds it has landed (its index written and synced):

* a merged pack is removed (its index first) once the new pack has landed; a reader
  that still meant to open it gets dulwich's ``PackFileDisappeared``, rescans and finds
  the new one;
* a loose object stays loose until a *later* consolidation finds it in a pack that
  landed before that one started, so no reader can look for it in the packs, miss the
  new pack, and then find the loose file gone.

A merge needs no store lock, only the upkeep lock: a write beside it only adds a pack
(chosen by no merge before its index is there) or loose objects (removed only once a
pack that landed before holds them). A kill at any point leaves a complete store: at
worst a merge's temporary files or an index without its pack (``repack.leftovers``,
removed by the next merge), or an object in two places.
``consolidate`` (``xbrain gc``) packs everything into one pack, and removes the loose
copies once it has landed, as ``git gc`` does.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from dulwich.objects import ObjectID
from dulwich.pack import load_pack_index

from ..errors import CorruptStoreError, no_space
from .midx import drop_midx, stale_midx
from .objects import DAMAGE, disk_full, private_umask
from .packcheck import pack_damage
from .packmerge import merge
from .repack import leftovers, read_source
from .repo import Repository
from .upkeeplock import detach, upkeep_lock

__all__ = ["PackStats", "Packs", "geometric_split", "redo_due"]

_FACTOR = 2  # each pack kept is at least this many times all smaller packs together
_LOOSE_SAMPLE = "17"  # the fan-out directory counted (git's choice)
_LOOSE_LIMIT = 8  # loose objects there that start a consolidation (~2,000 in all)
_LOOSE_PACK_MIN = 256 * _LOOSE_LIMIT // 2  # fewer left loose after pruning: not packed
_INLINE_MAX = 4 << 20  # bytes of packs a write merges itself (as before); more: detached
# bytes of deltified objects ``xbrain gc`` rebuilds to deltify again between neighbours
# (``packmerge``); past them the rest are copied as they are
_REDO_MAX = 256 << 20
# the upkeep does the same past these bounds (``redo_due``; ``_REDONE``: the packs' bytes
# after the last rebuild, so the rebuilds' cost stays geometric)
_REDO_PAST = 2.5
_REDO_GROWN = 1.5
_REDO_FROM = 8 << 20
_REDONE = "xbrain/packs-redone"  # under .git: the packs' bytes after the last redo
_EXTRA = (".rev", ".bitmap", ".mtimes", ".promisor")  # git's companions of a pack


class PackStats(NamedTuple):
    """What ``doctor`` reports of the object store."""

    packs: int  # every complete pack, kept ones too
    pack_bytes: int
    loose: int
    loose_bytes: int
    kept_packs: int = 0  # of ``packs``: those a ``.keep`` marks (never merged nor removed)


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


def _complete_packs(pack_dir: Path, kept: bool = False) -> list[tuple[str, int]]:
    """``(basename, size)`` of each complete pack (its index beside it) that carries no
    ``.keep`` (git's mark: never repacked nor removed), smallest first; with ``kept``,
    only those that carry one."""
    try:
        names = set(os.listdir(pack_dir))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        base = name[:-5]
        if name.endswith(".pack") and base + ".idx" in names and (base + ".keep" in names) == kept:
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


def redo_due(packed: int, records: int, last: int) -> bool:
    """Whether the upkeep should deltify the whole history again: the packs hold more
    than ``_REDO_PAST`` times the records' bytes (known: more than 0) and more than
    ``_REDO_GROWN`` times what they held after the last time (or its attempt), so a
    history that stays large is done again only once it has grown, never at every
    write."""
    return records > 0 and packed > _REDO_PAST * records and packed > _REDO_GROWN * last


class Packs(Repository):
    """Counting and consolidating the store's packs and loose objects."""

    @property
    def _objects_dir(self) -> Path:
        return self.control_dir / "objects"

    def pack_stats(self) -> PackStats:
        """Packs and loose objects: how many, and their bytes."""
        pack_dir = self._objects_dir / "pack"
        kept = _complete_packs(pack_dir, kept=True)
        packs = _complete_packs(pack_dir) + kept
        loose_bytes = 0
        loose = _loose_ids(self._objects_dir)
        for sha in loose:
            name = sha.decode()
            with contextlib.suppress(FileNotFoundError):
                loose_bytes += os.stat(self._objects_dir / name[:2] / name[2:]).st_size
        return PackStats(
            len(packs), sum(size for _, size in packs), len(loose), loose_bytes, len(kept)
        )

    def keep_packs(self, records: Callable[[], int] = lambda: 0) -> bool:
        """Consolidate when the packs or the loose objects call for it (hold the store
        lock); True when something was consolidated or handed to a detached upkeep.
        Costs two directory listings when there is nothing to do. ``records``: what the
        records take, in bytes (asked only past ``_REDO_FROM`` bytes of packs)."""
        plan = self._plan(records)
        if plan is None:
            return False
        with upkeep_lock(self.control_dir, wait=False) as fd:
            if fd is None:
                return False  # a detached upkeep is merging: the next write looks again
            merged, loose, redo = plan
            sizes = dict(_complete_packs(self._objects_dir / "pack"))
            if sum(sizes.get(base, 0) for base in merged) <= _INLINE_MAX:
                self._consolidate(merged, loose, redo=redo)
            else:  # the lock goes with it: no other merge starts until it is done
                store = os.path.abspath(self.path)  # (run from the root folder: see detach)
                argv = [sys.executable, "-m", "xbrain.git.upkeep", store, str(fd)]
                detach([*argv, "redo"] if redo else argv, fd)  # (it cannot ask the core)
        return True

    def upkeep(self, redo: bool = False) -> None:
        """What ``keep_packs`` would do, whatever its size (the detached upkeep, which
        holds the upkeep lock but not the store lock: it only adds a pack, then removes
        the packs and loose copies that pack holds)."""
        plan = self._plan(lambda: 0)
        if redo:  # what the write that started it found due
            plan = (
                [base for base, _ in _complete_packs(self._objects_dir / "pack")],
                True,
                _REDO_MAX,
            )
        if plan is not None:
            merged, loose, rebuild = plan
            self._consolidate(merged, loose, redo=rebuild)

    def _plan(self, records: Callable[[], int]) -> tuple[list[str], bool, int] | None:
        """The packs to merge, whether to pack the loose objects and how many bytes of
        deltas to rebuild (``redo_due``: all of them, every pack); None: nothing."""
        packs = _complete_packs(self._objects_dir / "pack")
        packed = sum(size for _, size in packs)
        if packed >= _REDO_FROM and redo_due(packed, records(), self._redone()):
            return [base for base, _ in packs], True, _REDO_MAX
        try:
            sample = len(os.listdir(self._objects_dir / _LOOSE_SAMPLE))
        except FileNotFoundError:
            sample = 0
        split = geometric_split([size for _, size in packs])
        loose = sample > _LOOSE_LIMIT
        if split < 2 and not loose:
            return None
        return [base for base, _ in packs[:split]] if split >= 2 else [], loose, 0

    def _packed_bytes(self) -> int:
        """The bytes of the packs the upkeep merges (kept ones are not)."""
        return sum(size for _, size in _complete_packs(self._objects_dir / "pack"))

    def _redone(self) -> int:
        """The packs' bytes after the last rebuild of every delta (0: none yet)."""
        try:
            return int((self.control_dir / _REDONE).read_bytes()[:32])
        except (OSError, ValueError):
            return 0

    def merge_leftovers(self, remove: bool) -> list[Path]:
        """What a killed pack merge left (its temporary files, an index without its pack),
        removed with ``remove``: only while no merge runs (a running merge's files look
        the same), else nothing — nor on a store this process may not write (a read-only
        copy: no lock to take, and nothing it could remove)."""
        try:
            with upkeep_lock(self.control_dir, wait=False) as fd:
                if fd is None:
                    return []
                found = leftovers(self._objects_dir / "pack")
                if remove:
                    for leftover in found:
                        leftover.unlink(missing_ok=True)
                return found
        except OSError:  # a read-only file system, a folder not ours: nothing to take
            return []

    def damaged_packs(self) -> list[tuple[Path, str]]:
        """Each pack (``.pack`` with its ``.idx``, kept ones too) whose bytes do not
        match its checksums, with what is wrong; reads every pack whole."""
        pack_dir = self._objects_dir / "pack"
        try:
            names = set(os.listdir(pack_dir))
        except FileNotFoundError:
            return []
        found = []
        size = self._repo.object_store.object_format.oid_length
        for name in sorted(names):
            if name.endswith(".pack") and name[:-5] + ".idx" in names:
                with contextlib.suppress(FileNotFoundError):  # merged away meanwhile
                    damage = pack_damage(pack_dir / name, size)
                    if damage is not None:
                        found.append((pack_dir / name, damage))
        return found

    def stale_multi_pack_index(self, repair: bool) -> str | None:
        """What is wrong with git's multi-pack-index (a pack it names gone, or it cannot
        be read), removed with ``repair``; None when there is none or it is sound."""
        pack_dir = self._objects_dir / "pack"
        problem = stale_midx(pack_dir)
        if problem is not None and repair:
            drop_midx(pack_dir)
        return problem

    def consolidate(self) -> PackStats:
        """Pack every object into one pack, with deltas (``xbrain gc``; hold the store
        lock), and drop the loose copies of objects packed before; the stats after.
        A damaged pack is refused first: nothing is written or removed."""
        with upkeep_lock(self.control_dir, wait=True):
            for pack, damage in self.damaged_packs():
                raise CorruptStoreError(
                    f"A pack of the store is damaged ({pack.name}: {damage}); nothing "
                    "was changed. Run xbrain doctor."
                )
            packs = [base for base, _ in _complete_packs(self._objects_dir / "pack")]
            self._consolidate(packs, loose=True, every_loose=True, redo=_REDO_MAX)
        return self.pack_stats()

    def _consolidate(
        self, merged: list[str], loose: bool, every_loose: bool = False, redo: int = 0
    ) -> None:
        """Write one pack of the objects of the packs ``merged`` (basenames) and, with
        ``loose``, of the loose objects not yet in any pack (after removing the loose
        copies of packed ones); then remove the merged packs."""
        store = self._repo.object_store
        try:
            with private_umask():
                for leftover in leftovers(self._objects_dir / "pack"):  # a killed merge's
                    leftover.unlink(missing_ok=True)
                fresh: list[bytes] = []
                if loose:
                    left = self._prune_loose()
                    if every_loose or len(left) >= _LOOSE_PACK_MIN:
                        fresh = left
                # by file name: git names a pack by its checksum, dulwich (Pack.name())
                # by its objects, so git's packs would never be found by the latter
                present = set(os.listdir(self._objects_dir / "pack"))
                chosen = [b for b in merged if {f"{b}.pack", f"{b}.idx"} <= present]
                # one pack alone, nothing loose: already what would be written (but for
                # a rebuild of every delta, unless that pack is the last one's output)
                again = redo and chosen and self._redone() != self._packed_bytes()
                if len(chosen) < 2 and not fresh and not again:
                    return
                if redo:  # the attempt first: one that fails waits for the same growth
                    self._mark_redone()
                keep = self._merge(chosen, fresh, redo)
                store.close()  # every cached pack closed: the merged ones are removed
                gone = [base for base in chosen if base != keep]
                drop_midx(self._objects_dir / "pack", gone)  # git's, naming them: first
                for base in gone:
                    self._remove_pack(self._objects_dir / "pack" / base)
                if every_loose:  # xbrain gc: the loose copies go now that the pack landed
                    self._prune_loose()
                if redo:
                    self._mark_redone()
        except DAMAGE as exc:
            raise CorruptStoreError(
                "A pack or object of the store is damaged; run xbrain doctor."
            ) from exc
        except OSError as exc:
            if no_space(exc):
                raise disk_full() from None
            raise

    def _mark_redone(self) -> None:
        """Record the packs' bytes after a rebuild of every delta (for ``redo_due``)."""
        packed = self._packed_bytes()
        target = self.control_dir / _REDONE
        target.parent.mkdir(mode=0o700, exist_ok=True)
        temp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        temp.write_bytes(str(packed).encode())
        os.replace(temp, target)

    def _merge(self, chosen: list[str], fresh: list[bytes], redo: int = 0) -> str:
        """Write one pack of the objects of the packs ``chosen`` (basenames) and the
        loose ``fresh`` ones (``packmerge``); its basename."""
        store = self._repo.object_store
        pack_dir = self._objects_dir / "pack"
        sources = []
        try:
            for base in chosen:
                index = load_pack_index(str(pack_dir / f"{base}.idx"), store.object_format)
                try:
                    sources.append(read_source(pack_dir / f"{base}.pack", index.iterentries()))
                finally:
                    index.close()
            loose = {}
            for sha in fresh:
                type_num, raw = store.get_raw(ObjectID(sha))
                loose[bytes.fromhex(sha.decode())] = (type_num, bytes(raw))
            return merge(
                pack_dir,
                sources,
                loose,
                self._whole,
                store.fsync_object_files,
                store.pack_compression_level,
                store.pack_index_version,
                redo,
            )
        finally:
            for source in sources:
                source.data.close()

    def _whole(self, sha: bytes) -> tuple[int, bytes]:
        """An object's type and bytes, by its binary id."""
        type_num, raw = self._repo.object_store.get_raw(ObjectID(sha.hex().encode()))
        return type_num, bytes(raw)

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
