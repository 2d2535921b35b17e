"""The URL index: canonical source URL → ids of the live resources citing it (derived).

``index/urls/<hh>.json`` (``<hh>``: first two hex digits of the URL's sha256; three,
``<hh>/<h>.json``, or four, ``<hh>/<hh>.json``, once the store has grown: each prefix
moves at its own count of resources, as the catalog's do, ``core.shards``) answers
"is this page saved already, under another id?" on ``put`` without reading every
resource. It is committed with each change like the catalog, re-derived by merges and
checked by ``doctor``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..core import layout
from ..core.registry import FileKind, Readable, register
from ..core.shards import Staged, shard_entries, shard_files
from ..text import canonical_url

__all__ = ["StagedUrls", "UrlIndex"]

URLS_DIR = "index/urls"
Record = dict[str, Any]


def url_digits(canonical: str) -> str:
    """The hex digits a canonical URL is filed by (its sha256)."""
    return hashlib.sha256(canonical.encode()).hexdigest()


def urls_path(shard_name: str) -> str:
    """The URL-index shard file of a shard key (two to four hex digits)."""
    return layout.shard_path(URLS_DIR, shard_name)


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
        urls: dict[str, list[str]] = {}
        for rid in sorted(live):
            urls.setdefault(canonical_url(live[rid]["source"]["url"]), []).append(rid)
        return shard_files(URLS_DIR, urls, url_digits, len(live))


class StagedUrls:
    """The URL index inside one transaction."""

    def __init__(self, index: UrlIndex, view: Readable) -> None:
        self.index = index
        self.view = view
        self.checked = False
        self.start = view.summary().get("resources", 0)
        self.added = 0  # live resources this transaction added (less those it removed)
        read, listdir = view.read, view.listdir
        self.staged = Staged(URLS_DIR, read, listdir, shard_entries, url_digits, self.start)

    def _shard(self, canonical: str) -> tuple[str, dict[str, list[str]]]:
        """The shard key of a canonical URL and its entries."""
        self._build_once()
        key = self.staged.key(url_digits(canonical))
        return key, self.staged.shard(key)

    def _build_once(self) -> None:
        """A store written before the URL index existed gets it in this commit, once."""
        if self.checked:
            return
        self.checked = True
        if self.view.listdir(URLS_DIR) or not self.start:
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
            key, entries = self._shard(canonical)
            ids = set(entries.get(canonical, ()))
            if add:
                ids.add(rid)
            else:
                ids.discard(rid)
            if ids:
                entries[canonical] = sorted(ids)
            else:
                entries.pop(canonical, None)
            self.staged.dirty.add(key)

    def same(self, rid: str, url: str) -> list[str]:
        """Other live ids citing ``url`` (canonically)."""
        canonical = canonical_url(url)
        found = self._shard(canonical)[1].get(canonical, ())
        return [i for i in found if i != rid]

    def files(self) -> dict[str, bytes | None]:
        """The changed shards, and every shard of a prefix the new count of resources
        moves to another depth."""
        if not self.staged.dirty:
            return {}
        return self.staged.files(self.start + self.added)


URL_INDEX_KIND = FileKind("urls", rf"{URLS_DIR}/{layout.SHARD_FILE}", 64 << 20, "store-files#urls")
register(URL_INDEX_KIND)
