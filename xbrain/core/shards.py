"""Shard files whose two-digit prefixes each sit at their own depth (catalog, URL index).

A shard directory (``index/catalog``, ``index/urls``) holds, for each two-digit prefix
``<aa>`` of the hex digits its entries are filed by, either one file ``<aa>.json`` or a
directory ``<aa>/`` of files by three digits (``<aa>/<b>.json``) or four
(``<aa>/<bc>.json``). ``layout.depth_for(count, prefix)`` says which; the prefixes move
one by one as the store grows, so no write moves every shard at once.

``Placement`` reads each prefix's depth from a committed tree, whatever rule wrote it.
``Staged`` is one directory's shards inside a write: entries are filed at the depth their
prefix has when the write starts (a prefix a plain git commit left in two forms is first
put in one), and ``files`` then moves the prefixes whose depth the write's new count
changes, the prefixes it touched that sit at another depth, and those whose form (one file,
or a directory) is not the count's, reading and writing those prefixes only. A directory of
four digits where the count gives three (or the reverse) that no write touches stays as it
is (telling them apart reads every directory): ``doctor`` names it, ``--repair`` moves it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import CorruptStoreError
from . import layout

__all__ = ["Placement", "Staged", "same_apart", "shard_entries", "shard_files"]

_PREFIX = re.compile(r"[0-9a-f]{2}")
_INNER = re.compile(r"[0-9a-f]{1,2}\.json")


def shard_entries(path: str, data: bytes | None) -> dict[str, Any]:
    """A committed shard file's entries (``{}``: absent); a damaged one is a
    CorruptStoreError naming it."""
    try:
        entries = json.loads(data) if data is not None else {}
    except ValueError:
        entries = None
    if not isinstance(entries, dict):
        raise CorruptStoreError(f"{path} is damaged; run xbrain doctor.")
    return entries


def shard_files(
    directory: str, entries: Mapping[str, Any], digits: Callable[[str], str], count: int
) -> dict[str, bytes]:
    """The shard files that hold ``entries`` (name → value) at ``count``: each entry in
    the file its digits name at its prefix's depth (what writes leave, and what ``doctor``
    and merges derive and compare)."""
    depths = {f"{at:02x}": layout.depth_for(count, f"{at:02x}") for at in range(256)}
    shards: dict[str, dict[str, Any]] = {}
    for name, value in entries.items():
        filed = digits(name)
        shards.setdefault(filed[: depths.get(filed[:2], 2)], {})[name] = value
    return {layout.shard_path(directory, key): layout.dump_catalog(e) for key, e in shards.items()}


class Placement:
    """The committed depth of each two-digit prefix under a shard directory."""

    def __init__(self, listdir: Callable[[str], list[str]], directory: str) -> None:
        self.listdir = listdir
        self.directory = directory
        self._top: dict[str, tuple[bool, bool]] | None = None  # prefix → (file, directory)
        self._inner: dict[str, list[str]] = {}

    def _names(self) -> dict[str, tuple[bool, bool]]:
        if self._top is None:
            top: dict[str, tuple[bool, bool]] = {}
            for name in self.listdir(self.directory):
                prefix = name.removesuffix(".json")
                if _PREFIX.fullmatch(prefix):
                    file, folder = top.get(prefix, (False, False))
                    top[prefix] = (file or name != prefix, folder or name == prefix)
            self._top = top
        return self._top

    def prefixes(self) -> set[str]:
        """The prefixes the directory holds a file or a directory for."""
        return set(self._names())

    def two_forms(self, prefix: str) -> bool:
        """Whether ``prefix`` is both a file and a directory (a plain git commit)."""
        return self._names().get(prefix) == (True, True)

    def mixed(self, prefix: str) -> bool:
        """Whether ``prefix``'s committed shards are not of one depth: a file and a
        directory, or a directory of names of two lengths (reads the directory)."""
        found = self._names().get(prefix)
        if found is None or not found[1]:
            return False
        return found[0] or len({len(name) for name in self._shard_names(prefix)}) > 1

    def is_file(self, prefix: str) -> bool | None:
        """Whether ``prefix`` is one file (two digits), a directory, or absent (None)."""
        found = self._names().get(prefix)
        return None if found is None else found[0]

    def _shard_names(self, prefix: str) -> list[str]:
        names = self._inner.get(prefix)
        if names is None:
            listed = self.listdir(f"{self.directory}/{prefix}")
            names = self._inner[prefix] = [n for n in listed if _INNER.fullmatch(n)]
        return names

    def depth(self, prefix: str) -> int | None:
        """How many hex digits name the prefix's committed shards, or None: it has none.
        A directory's depth is read from its first shard's name (one of its files)."""
        found = self._names().get(prefix)
        if found is None:
            return None
        if found[0]:  # a file wins over a directory beside it (and doctor says so)
            return 2
        names = self._shard_names(prefix)
        return 2 + len(names[0].removesuffix(".json")) if names else 3

    def settled(self, count: int) -> bool:
        """Whether every prefix is one file or one directory of shards of one length, at
        the depth ``layout.depth_for(count, prefix)`` gives it (reads every directory)."""
        for prefix, (file, folder) in self._names().items():
            want = layout.depth_for(count, prefix)
            if want == 2 and folder:  # (beside the file, or alone)
                return False
            lengths = {len(name) for name in self._shard_names(prefix)} if want > 2 else None
            if want > 2 and (file or lengths != {want + 3}):  # ("b.json": 6)
                return False
        return True

    def files(self, prefix: str) -> list[str]:
        """Every committed shard file of ``prefix``, at any depth."""
        file, folder = self._names().get(prefix, (False, False))
        out = [layout.shard_path(self.directory, prefix)] if file else []
        if folder:
            out += [f"{self.directory}/{prefix}/{name}" for name in self._shard_names(prefix)]
        return out


class Staged:
    """One shard directory's entries as a write changes them.

    ``digits(name)`` gives the hex digits an entry named ``name`` is filed by; ``load``
    parses a shard file's bytes (None: absent) and raises on a damaged one; ``count`` is
    the store's count the depths follow, as the write starts.
    """

    def __init__(
        self,
        directory: str,
        read: Callable[[str], bytes | None],
        listdir: Callable[[str], list[str]],
        load: Callable[[str, bytes | None], dict[str, Any]],
        digits: Callable[[str], str],
        count: int,
    ) -> None:
        self.directory = directory
        self.placement = Placement(listdir, directory)
        self.read, self.load, self.digits, self.count = read, load, digits, count
        self.shards: dict[str, dict[str, Any]] = {}
        self.dirty: set[str] = set()
        self._depths: dict[str, int] = {}  # prefix → the depth its entries are staged at
        self._gone: dict[str, bytes | None] = {}  # files of prefixes moved on first use

    def depth(self, prefix: str) -> int:
        """The depth ``prefix``'s entries are filed at in this write."""
        depth = self._depths.get(prefix)
        if depth is None:
            if not _PREFIX.fullmatch(prefix):  # (no entry of a valid name has one)
                return 2
            depth = self.placement.depth(prefix) or layout.depth_for(self.count, prefix)
            if self.placement.mixed(prefix):  # one form first, so no entry is missed
                depth = layout.depth_for(self.count, prefix)
                self._gone.update(self._move(prefix, depth))
            self._depths[prefix] = depth
        return depth

    def key(self, digits: str) -> str:
        """The shard key of an entry filed by ``digits``."""
        return digits[: self.depth(digits[:2])]

    def shard(self, key: str) -> dict[str, Any]:
        """The entries of shard ``key`` (read once, then as staged)."""
        entries = self.shards.get(key)
        if entries is None:
            path = layout.shard_path(self.directory, key)
            entries = self.shards[key] = self.load(path, self.read(path))
        return entries

    def files(self, count: int) -> dict[str, bytes | None]:
        """The shard files this write changes, ``count`` being the store's new count:
        the changed shards, and every file of a prefix that moves to another depth."""
        out = dict(self._gone)
        touched = {key[:2] for key in self.dirty}
        for prefix in sorted(self.placement.prefixes() | touched):
            want = layout.depth_for(count, prefix)
            is_file = self.placement.is_file(prefix)
            settled = (
                prefix not in touched
                and want == layout.depth_for(self.count, prefix)
                and (is_file is None or is_file == (want == 2))
                and not self.placement.two_forms(prefix)
            )
            if not settled and self.depth(prefix) != want:
                out.update(self._move(prefix, want))
        for key in sorted(self.dirty):
            entries = self.shards[key]
            path = layout.shard_path(self.directory, key)
            out[path] = layout.dump_catalog(entries) if entries else None
        return out

    def _move(self, prefix: str, depth: int) -> dict[str, bytes | None]:
        """Every entry of ``prefix`` filed again at ``depth``; its old files, removed."""
        gone: dict[str, bytes | None] = {}
        entries: dict[str, Any] = {}
        keys = {layout.key_of(self.directory, path) for path in self.placement.files(prefix)}
        keys |= {key for key in self.dirty if key[:2] == prefix}
        for key in sorted(keys):
            entries.update(self.shard(key))
            gone[layout.shard_path(self.directory, key)] = None
        for key in [key for key in self.shards if key[:2] == prefix]:
            del self.shards[key]  # (read at the old depth)
        self.dirty -= keys
        self._depths[prefix] = depth
        for name in sorted(entries):
            digits = self.digits(name)
            if digits[:2] == prefix:  # (one filed under another prefix was never found)
                self.shards.setdefault(digits[:depth], {})[name] = entries[name]
                self.dirty.add(digits[:depth])
        return gone


def same_apart(
    directory: str,
    paths: Iterable[str],
    before: Callable[[str], bytes | None],
    after: Callable[[str], bytes | None],
    digits: Callable[[str], str],
    apart: Callable[[dict[str, Any]], dict[str, Any]],
) -> bool:
    """Whether the shard files ``paths`` (those a range of commits changed) hold together
    the same entries before and after it, once ``apart`` has taken out what the records
    it changed account for, and every entry after sits in the file its digits name (a
    prefix moved to another depth keeps its entries)."""
    old: dict[str, Any] = {}
    new: dict[str, Any] = {}
    for path in paths:
        key = layout.key_of(directory, path)
        entries = shard_entries(path, after(path))
        if any(not digits(name).startswith(key) for name in entries):
            return False
        old.update(shard_entries(path, before(path)))
        new.update(entries)
    return apart(old) == apart(new)
