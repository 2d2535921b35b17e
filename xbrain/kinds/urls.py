"""The URL index: canonical source URL → ids of the live resources citing it (derived).

``index/urls/<hh>.json`` (``<hh>``: first two hex digits of the URL's sha256; three,
``<hh>/<h>.json``, in a store of more than ``layout.SPLIT_AT`` resources, and four,
``<hh>/<hh>.json``, past 16 times that) answers
"is this page saved already, under another id?" on ``put`` without reading every
resource. It is committed with each change like the catalog, re-derived by merges and
checked by ``doctor``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..core import layout
from ..core.registry import FileKind, Readable, register
from ..errors import CorruptStoreError
from ..text import canonical_url

__all__ = ["StagedUrls", "UrlIndex"]

URLS_DIR = "index/urls"
Record = dict[str, Any]


def url_shard(canonical: str, depth: int = 2) -> str:
    """The shard of a canonical URL (the first ``depth`` hex digits of its sha256)."""
    return hashlib.sha256(canonical.encode()).hexdigest()[:depth]


def urls_path(shard_name: str) -> str:
    """The URL-index shard file of a shard key (two to four hex digits)."""
    return layout.shard_path(URLS_DIR, shard_name)


def _loads(path: str, data: bytes | None) -> dict[str, list[str]]:
    import json

    try:
        entries = json.loads(data) if data is not None else {}
    except ValueError:
        entries = None
    if not isinstance(entries, dict):
        raise CorruptStoreError(f"{path} is damaged; run xbrain doctor.")
    return entries


class UrlIndex:
    """The derived index of ``resources``: declared on the resource kind."""

    name = "urls"
    directory = URLS_DIR
    label = "URL index"

    def __init__(self, records: str, parse: Any) -> None:
        self.records = records  # the directory of the records it indexes
        self.parse = parse

    def start(self, view: Readable) -> StagedUrls:
        """The index as one transaction changes it."""
        return StagedUrls(self, view)

    def derive(self, live: dict[str, Record]) -> dict[str, bytes]:
        """The index files of all live resources."""
        shards: dict[str, dict[str, list[str]]] = {}
        depth = layout.depth_for(len(live))
        for rid in sorted(live):
            canonical = canonical_url(live[rid]["source"]["url"])
            key = url_shard(canonical, depth)
            shards.setdefault(key, {}).setdefault(canonical, []).append(rid)
        return {urls_path(name): layout.dump_catalog(urls) for name, urls in shards.items()}


class StagedUrls:
    """The URL index inside one transaction."""

    def __init__(self, index: UrlIndex, view: Readable) -> None:
        self.index = index
        self.view = view
        self.shards: dict[str, dict[str, list[str]]] = {}
        self.dirty: set[str] = set()
        self.checked = False
        self.depth = layout.depth_of(view.listdir, URLS_DIR)  # as committed
        self.added = 0  # live resources this transaction added (less those it removed)

    def _shard(self, name: str) -> dict[str, list[str]]:
        self._build_once()
        entries = self.shards.get(name)
        if entries is None:
            path = urls_path(name)
            entries = self.shards[name] = _loads(path, self.view.read(path))
        return entries

    def _build_once(self) -> None:
        """A store written before the URL index existed gets it in this commit, once."""
        if self.checked:
            return
        self.checked = True
        if self.view.listdir(URLS_DIR) or not self.view.summary().get("resources"):
            return
        for _, data in self.view.files(self.index.records):
            record = self.index.parse(data)
            self.change(record["id"], None, record)
        self.added = 0  # they were there already

    def change(self, rid: str, old: Record | None, new: Record | None) -> None:
        """Move ``rid`` from ``old``'s URL to ``new``'s."""
        self.added += (new is not None) - (old is not None)
        for record, add in ((old, False), (new, True)):
            if record is None:
                continue
            canonical = canonical_url(record["source"]["url"])
            name = url_shard(canonical, self.depth)
            entries = self._shard(name)
            ids = set(entries.get(canonical, ()))
            if add:
                ids.add(rid)
            else:
                ids.discard(rid)
            if ids:
                entries[canonical] = sorted(ids)
            else:
                entries.pop(canonical, None)
            self.dirty.add(name)

    def same(self, rid: str, url: str) -> list[str]:
        """Other live ids citing ``url`` (canonically)."""
        canonical = canonical_url(url)
        found = self._shard(url_shard(canonical, self.depth)).get(canonical, ())
        return [i for i in found if i != rid]

    def files(self) -> dict[str, bytes | None]:
        """The changed shards (all of them when the store crossed ``layout.SPLIT_AT``
        resources: the index moves to the other depth)."""
        out: dict[str, bytes | None] = {}
        if self.dirty:
            count = self.view.summary().get("resources", 0) + self.added
            if layout.depth_for(count) != self.depth:
                out = self._reshard(layout.depth_for(count))
        for name in sorted(self.dirty):
            entries = self.shards[name]
            out[urls_path(name)] = layout.dump_catalog(entries) if entries else None
        return out

    def _reshard(self, depth: int) -> dict[str, bytes | None]:
        """Every URL moved to the shards of ``depth``; the old files, removed."""
        gone: dict[str, bytes | None] = {}
        for path, data in self.view.files(URLS_DIR):
            gone[path] = None
            name = layout.key_of(URLS_DIR, path)
            if name not in self.shards:
                self.shards[name] = _loads(path, data)
        every: dict[str, list[str]] = {}
        for name in sorted(self.shards):
            gone[urls_path(name)] = None
            every.update(self.shards[name])
        self.depth, self.shards, self.dirty = depth, {}, set()
        for canonical in sorted(every):
            name = url_shard(canonical, depth)
            self.shards.setdefault(name, {})[canonical] = every[canonical]
            self.dirty.add(name)
        return gone


URL_INDEX_KIND = FileKind("urls", rf"{URLS_DIR}/{layout.SHARD_FILE}", 64 << 20, "store-files#urls")
register(URL_INDEX_KIND)
