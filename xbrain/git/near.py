"""Object reads where the last object was found first (a snapshot's reads)."""

from __future__ import annotations

import os

from dulwich.objects import ObjectID, RawObjectID, ShaFile, hex_to_sha
from dulwich.pack import Pack
from dulwich.repo import Repo

__all__ = ["Near"]


class Near:
    """A snapshot's object reads, where the last object was found first.

    dulwich looks an object up in every pack in turn, asks for a multi-pack index (a
    ``stat``) each time, and for a loose object first rescans the pack directory. The
    objects a commit wrote sit together (one pack, or all loose), and a reader of one
    record reads several of them in a row: a skill's seven objects, read from a store of
    79 packs, cost six times what they cost from a few. So the pack (or the loose
    directory) that held the last object is tried first, then the others. Only a plain
    hit is answered here, checked against its id as dulwich checks it; a miss anywhere,
    a damaged object, a pack gone since: None, and :func:`load_object` decides as before.
    """

    def __init__(self, repo: Repo) -> None:
        store = repo.object_store
        self._format = store.object_format
        self._packs: list[Pack] = list(getattr(store, "packs", ()))
        self._loose = getattr(store, "path", None)
        self._loose_limit = getattr(store, "loose_object_size_limit", None)  # as dulwich reads
        self._last: Pack | str | None = None  # a pack, "loose", or None

    def load(self, sha: bytes) -> ShaFile | None:
        """The object ``sha`` when it is a plain hit here, else None."""
        hexsha = ObjectID(sha)
        try:
            raw = hex_to_sha(hexsha)
            last = self._last
            if last == "loose" and (found := self._from_loose(hexsha)) is not None:
                return found
            if isinstance(last, Pack) and (found := self._from_pack(last, raw, hexsha)) is not None:
                return found
            for pack in self._packs:
                if pack is not last and (found := self._from_pack(pack, raw, hexsha)) is not None:
                    self._last = pack
                    return found
            if last != "loose" and (found := self._from_loose(hexsha)) is not None:
                self._last = "loose"
                return found
        except Exception:  # anything but a plain hit: dulwich's own lookup decides
            return None
        return None

    def _from_pack(self, pack: Pack, raw: bytes, hexsha: ObjectID) -> ShaFile | None:
        try:
            type_num, data = pack.get_raw(RawObjectID(raw))
        except KeyError:
            return None
        return ShaFile.from_raw_string(
            type_num, data, verify_sha=hexsha, object_format=self._format
        )

    def _from_loose(self, hexsha: ObjectID) -> ShaFile | None:
        if not isinstance(self._loose, str):
            return None
        name = hexsha.decode("ascii")
        path = os.path.join(self._loose, name[:2], name[2:])
        if not isinstance(self._loose_limit, int):
            return None
        try:
            found = ShaFile.from_path(path, object_format=self._format, max_size=self._loose_limit)
        except FileNotFoundError:
            return None
        return found if found.id == hexsha else None  # checked against its id, as dulwich does
