"""The URL index: canonical source URL → ids of the live resources citing it (derived).

``index/urls/<hh>.json`` (``<hh>``: first two hex digits of the URL's sha256) answers
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


def url_shard(canonical: str) -> str:
    """The shard of a canonical URL (first two hex digits of its sha256)."""
    return hashlib.sha256(canonical.encode()).hexdigest()[:2]


def urls_path(shard_name: str) -> str:
    """The URL-index shard file."""
    return f"{URLS_DIR}/{shard_name}.json"


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
        for rid in sorted(live):
            canonical = canonical_url(live[rid]["source"]["url"])
            shards.setdefault(url_shard(canonical), {}).setdefault(canonical, []).append(rid)
        return {urls_path(name): layout.dump_catalog(urls) for name, urls in shards.items()}


class StagedUrls:
    """The URL index inside one transaction."""

    def __init__(self, index: UrlIndex, view: Readable) -> None:
        self.index = index
        self.view = view
        self.shards: dict[str, dict[str, list[str]]] = {}
        self.dirty: set[str] = set()
        self.checked = False

    def _shard(self, name: str) -> dict[str, list[str]]:
        self._build_once()
        entries = self.shards.get(name)
        if entries is None:
            import json

            path = urls_path(name)
            data = self.view.read(path)
            try:
                entries = json.loads(data) if data is not None else {}
            except ValueError:
                entries = None
            if not isinstance(entries, dict):
                raise CorruptStoreError(f"{path} is damaged; run xbrain doctor.")
            self.shards[name] = entries
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

    def change(self, rid: str, old: Record | None, new: Record | None) -> None:
        """Move ``rid`` from ``old``'s URL to ``new``'s."""
        for record, add in ((old, False), (new, True)):
            if record is None:
                continue
            canonical = canonical_url(record["source"]["url"])
            name = url_shard(canonical)
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
        return [i for i in self._shard(url_shard(canonical)).get(canonical, ()) if i != rid]

    def files(self) -> dict[str, bytes | None]:
        """The changed shards."""
        return {
            urls_path(name): layout.dump_catalog(self.shards[name]) if self.shards[name] else None
            for name in sorted(self.dirty)
        }


URL_INDEX_KIND = FileKind("urls", rf"{URLS_DIR}/{layout.HEX2}\.json", 64 << 20, "store-files#urls")
register(URL_INDEX_KIND)
