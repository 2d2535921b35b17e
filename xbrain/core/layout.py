"""The store's own files (the kind-agnostic part of the layout) and their formats.

```
xbrain.yaml                       format marker, optional identity and limits
index/catalog/<aa>.json           id → {path, revision, <kind fields>, bytes} of every record
index/catalog/<aa>/<b>.json       the same, by three hex digits, once the store has grown
                                  past <aa>'s threshold (<aa>/<bc>.json: four, past 16 times it)
index/summary.json                per-kind counts and byte total (for limits and status)
<kind directory>/<aa>/<id>.yaml   one record (see xbrain.kinds for each kind's directory)
```

``<aa>`` is the first two hex digits of an id after its ``<kind>_`` prefix: sharding by
them keeps each file and tree small, so a commit's cost follows what it changed, not how
big the store is. As a store grows, each two-digit prefix in turn moves to shards by
three digits (``<aa>/<b>.json``), then four (``<aa>/<bc>.json``), so that a batch of 1,000
new records rewrites about as many small files as records it changes, not every shard
grown large. When a prefix moves is ``depth_for(count, prefix)``: its own threshold,
spread over prefixes from ``SPLIT_AT`` records to just under twice that (16 times those
for four digits), so a batch of 1,000 moves about 16 prefixes instead of all of them at
once. The depth is a function of the record count and the prefix alone
(every writer, merge and ``doctor`` derives the same files); readers take each prefix's
depth from the committed tree (``core.shards``), so a store written by any rule reads.
Everything else a store holds is declared by a kind in the registry.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = [
    "CATALOG_DIR",
    "DERIVED_DIR",
    "FORMAT",
    "MARKER",
    "SHARD_FILE",
    "SPLIT_AT",
    "SUMMARY",
    "catalog_path",
    "depth_for",
    "dump_catalog",
    "dump_json",
    "id_digits",
    "is_derived",
    "key_of",
    "shard",
    "shard_path",
]

MARKER = "xbrain.yaml"
FORMAT = "xbrain-store/1"
DERIVED_DIR = "index"  # derived from the records only: catalog, summary, kinds' indexes
SUMMARY = f"{DERIVED_DIR}/summary.json"
CATALOG_DIR = f"{DERIVED_DIR}/catalog"
HEX2 = r"[0-9a-f]{2}"
SHARD_FILE = rf"{HEX2}(?:/[0-9a-f]{{1,2}})?\.json"  # a shard file under its directory
SPLIT_AT = 16_384  # past this many records prefixes move to three hex digits (four past 16x)
MAX_DEPTH = 4


def is_derived(path: str) -> bool:
    """Whether ``path`` is a derived file (under ``DERIVED_DIR``): written from the
    records, never edited by hand."""
    return path.startswith(f"{DERIVED_DIR}/")


def depth_for(count: int, prefix: str) -> int:
    """How many hex digits name a shard of the two-digit ``prefix`` in a store of
    ``count`` records: two up to the prefix's threshold (``SPLIT_AT`` for ``00``, growing
    by ``SPLIT_AT / 256`` a prefix to just under twice that for ``ff``), three past it,
    four past 16 times it. No prefix moves before ``SPLIT_AT`` records, so the batches
    before it cost what they did when every prefix moved at once; a batch in the spread
    writes fewer files than one at three digits everywhere."""
    depth, limit = 2, SPLIT_AT + int(prefix, 16) * SPLIT_AT // 256
    while count > limit and depth < MAX_DEPTH:
        depth, limit = depth + 1, limit * 16
    return depth


def id_digits(rid: str) -> str:
    """The hex digits an id is filed by: all of it after its ``<kind>_`` prefix."""
    return rid[rid.find("_") + 1 :]


def shard_path(directory: str, key: str) -> str:
    """The file of shard ``key`` (two to four hex digits) under ``directory``."""
    if len(key) <= 2:
        return f"{directory}/{key}.json"
    return f"{directory}/{key[:2]}/{key[2:]}.json"


def key_of(directory: str, path: str) -> str:
    """The shard key of a shard file ``path`` under ``directory``."""
    return path[len(directory) + 1 :].removesuffix(".json").replace("/", "")


def shard(rid: str) -> str:
    """The two-character shard of an id: the first two hex digits after its prefix."""
    at = rid.find("_") + 1
    return rid[at : at + 2]


def catalog_path(shard_name: str) -> str:
    """The catalog shard file for a shard key (two to four hex digits)."""
    return shard_path(CATALOG_DIR, shard_name)


# what ``json.dumps(value, ensure_ascii=False, sort_keys=True)`` builds on every call,
# and the function ``json.dumps(key)`` writes a string with: made once (a batch into a
# big store dumps some 100,000 entries)
_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
_ENTRY = _ENCODER.encode
_KEY = json.encoder.encode_basestring_ascii


def _entry_encoder() -> Callable[[Any], str]:
    """``_ENTRY`` without the set-up ``JSONEncoder.encode`` does on every call (a closure
    and a C encoder built per value: two fifths of a catalog line's time): the C encoder
    it builds, made once with its arguments, when this Python has one that gives the same
    text on a sample; else ``_ENTRY``."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _ENTRY
    try:
        # (markers, default, encoder, indent, separators, sort_keys, skipkeys, allow_nan);
        # no markers: no check for a value that holds itself (a catalog's never does)
        string = json.encoder.encode_basestring
        encoder = make(None, _ENCODER.default, string, None, ": ", ", ", True, False, True)
    except TypeError:  # another Python's signature
        return _ENTRY

    def encode(value: Any) -> str:
        if type(value) is str:  # (what ``encode`` does for a string)
            return _ENTRY(value)
        return "".join(encoder(value, 0))

    sample = {"é": [1, -2.5, None, True, 'a"\u2028'], "b": {"z": {}, "a": []}, "n": 10**20}
    try:
        same = encode(sample) == _ENTRY(sample)
    except (TypeError, ValueError):
        return _ENTRY
    return encode if same else _ENTRY


_ENTRY_FAST = _entry_encoder()


def dump_catalog(entries: dict[str, Any]) -> bytes:
    """A JSON object with one sorted entry per line (small, readable line diffs)."""
    lines = [f"  {_KEY(key)}: {_ENTRY_FAST(entries[key])}" for key in sorted(entries)]
    body = ",\n".join(lines)
    return ("{\n" + body + "\n}\n" if lines else "{}\n").encode()


def dump_json(value: Any) -> bytes:
    """A small state file: 2-space JSON, non-ASCII kept, trailing newline."""
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode()
