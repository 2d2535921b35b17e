"""The registry of what a store may hold: record kinds and the other kinds of files.

The core knows records only as typed files at paths. Each kind of record (resource,
tombstone, and later skills and entries) declares here, from its own module under
``xbrain.kinds``, where its files live, how to parse, validate and serialize them, what its
catalog line carries, which derived files follow from it and how it feeds search. Other
files (state files of features, derived indexes) declare their paths, size bound and
schema. The checks of incoming trees, ``doctor`` and every write read only this registry,
so a new kind never edits the core or another kind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, Protocol

from ..errors import InvalidInputError, XbrainError
from .layout import CATALOG_DIR, HEX2, SHARD_FILE, SUMMARY, shard

__all__ = [
    "Derived",
    "DerivedState",
    "FileKind",
    "Readable",
    "RecordKind",
    "classify",
    "content_problem",
    "family",
    "file_kind",
    "largest_file",
    "limited_count",
    "max_bytes",
    "original_kinds",
    "record_kind",
    "record_kinds",
    "record_path",
    "register",
    "unregister",
]

Record = dict[str, Any]
_ID_PATTERNS: dict[str, re.Pattern[str]] = {}  # id prefix → its compiled id regex


class Readable(Protocol):
    """What a derived index may read: the files of one commit plus staged changes."""

    def read(self, path: str) -> bytes | None:
        """Raw bytes of a file, or None."""

    def listdir(self, path: str) -> list[str]:
        """Names directly under a directory."""

    def files(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Every committed file ``(path, bytes)`` under ``prefix``."""

    def summary(self) -> dict[str, int]:
        """Per-kind counts and byte total of the commit."""


class DerivedState(Protocol):
    """A derived index being kept in step with one transaction's changes."""

    def change(self, rid: str, old: Record | None, new: Record | None) -> None:
        """Record ``rid`` moved from ``old`` to ``new`` (either may be None)."""

    def files(self) -> dict[str, bytes | None]:
        """The derived files to stage (None deletes)."""


class Derived(Protocol):
    """Files derived from the live records of one kind (committed with every change)."""

    name: str
    directory: str  # where its files live (one JSON file per shard)
    label: str  # what doctor calls it ("URL index")

    def start(self, view: Readable) -> DerivedState:
        """State for one transaction on top of ``view``."""

    def derive(self, live: dict[str, Record]) -> dict[str, bytes]:
        """Every derived file from all live records ``id → record`` (doctor, merges)."""


class FileKind(NamedTuple):
    """A kind of non-record file: its paths (a regex), size bound and content check."""

    name: str
    pattern: str
    max_bytes: int
    schema: str | None = None  # "store-files#receipts"
    yaml: bool = False  # parsed as YAML, else JSON
    check: Callable[[bytes], str | None] | None = None  # a further check; the problem or None
    raw: bool = False  # opaque bytes (a skill's files): only the size bound applies
    # how a merge combines two devices' differing copies (symmetric); None: the larger bytes
    merge: Callable[[bytes, bytes], bytes] | None = None
    # what that merge set aside, per side (a, b, merged → [(side 0 or 1, what)]), listed
    # beside the records a merge dropped
    superseded: Callable[[bytes, bytes, bytes], list[tuple[int, dict[str, Any]]]] | None = None


class RecordKind(NamedTuple):
    """A kind of record: one YAML file per id under ``directory/<aa>/<id>.yaml``."""

    name: str
    directory: str
    id_prefix: str  # ids are the prefix and 64 hex digits
    max_bytes: int
    parse: Callable[[bytes], Record]  # validate and normalize; raises XbrainError
    serialize: Callable[[Record], bytes]
    catalog_fields: Callable[[Record], dict[str, Any]]  # e.g. {"updatedAt": ...}
    summary_key: str  # the key counting this kind in index/summary.json
    siblings: tuple[str, ...] = ()  # kinds sharing these ids: an id lives in one of them
    derived: tuple[Derived, ...] = ()
    search_fields: Callable[[Record], tuple[str, ...]] | None = None  # fed to search
    schema: str | None = None  # the JSON Schema doctor checks records against
    always_counted: bool = False  # its summary count is present even at zero
    # the field that orders two revisions of a record (a merge keeps the later), and
    # whether this kind marks a deleted record of its sibling (a tombstone)
    clock: str = "updatedAt"
    tombstone: bool = False
    # whether its records count toward the store's maxEntries (SPEC §2: resources and
    # tombstones; the bytes limit covers every kind)
    limited: bool = False
    # whether it is a kind of the original single-file store (resources and tombstones):
    # the only kinds the original's protocols and its JSON file carry (SPEC §6)
    original: bool = False
    # two devices' live revisions of one record: the kept one with what the other must
    # not lose (an entry's supersede links); None keeps the later as it is
    combine: Callable[[Record, Record], Record] | None = None

    @property
    def ids(self) -> re.Pattern[str]:
        """The regex of this kind's ids (compiled once per prefix)."""
        found = _ID_PATTERNS.get(self.id_prefix)
        if found is None:
            found = re.compile(re.escape(self.id_prefix) + "[0-9a-f]{64}", re.ASCII)
            _ID_PATTERNS[self.id_prefix] = found
        return found

    @property
    def pattern(self) -> str:
        """The regex of this kind's paths (the shard folder is the id's own)."""
        prefix = re.escape(self.id_prefix)
        return rf"{re.escape(self.directory)}/({HEX2})/{prefix}\1[0-9a-f]{{62}}\.yaml"

    def path(self, rid: str) -> str:
        """Where the record ``rid`` lives."""
        return f"{self.directory}/{shard(rid)}/{rid}.yaml"

    def is_id(self, rid: object) -> bool:
        """True when ``rid`` is an id of this kind."""
        return isinstance(rid, str) and self.ids.fullmatch(rid) is not None


_RECORDS: dict[str, RecordKind] = {}
_FILES: dict[str, FileKind] = {}
_COMPILED: list[tuple[re.Pattern[str], str]] = []


def register(kind: RecordKind | FileKind) -> None:
    """Add a kind (a module under ``xbrain.kinds`` does this when imported)."""
    known = _RECORDS.get(kind.name) or _FILES.get(kind.name)
    if known is not None and known != kind:
        raise ValueError(f"kind {kind.name!r} is already registered")
    if isinstance(kind, RecordKind):
        _RECORDS[kind.name] = kind
    else:
        _FILES[kind.name] = kind
    _forget_compiled()


def _forget_compiled() -> None:
    _COMPILED.clear()  # compiled again on the next classify (most commands never need it)


def unregister(name: str) -> None:
    """Remove a kind again (a test's throwaway kind)."""
    _RECORDS.pop(name, None)
    _FILES.pop(name, None)
    _forget_compiled()


def record_kind(name: str) -> RecordKind:
    """A registered record kind by name."""
    return _RECORDS[name]


def record_kinds() -> list[RecordKind]:
    """Every registered record kind, in registration order."""
    return list(_RECORDS.values())


def original_kinds() -> list[RecordKind]:
    """The record kinds of the original store, in registration order: what the original's
    protocols and its JSON file carry. Every other kind lives in an xbrain store alone."""
    return [kind for kind in _RECORDS.values() if kind.original]


def limited_count(summary: Mapping[str, int]) -> int:
    """How many records of a store summary count toward its ``maxEntries``."""
    return sum(summary.get(kind.summary_key, 0) for kind in _RECORDS.values() if kind.limited)


def family(rid: str) -> list[RecordKind]:
    """The record kinds an id may live in (its prefix's kind and siblings), in order."""
    return [spec for spec in _RECORDS.values() if spec.is_id(rid)]


def record_path(kind: str, rid: str) -> str:
    """Where record ``rid`` of ``kind`` lives."""
    return _RECORDS[kind].path(rid)


def classify(path: str) -> str | None:
    """Which kind of file ``path`` is, or None when it has no place in a store."""
    if not _COMPILED:
        kinds: list[RecordKind | FileKind] = [*_RECORDS.values(), *_FILES.values()]
        _COMPILED.extend((re.compile(k.pattern, re.ASCII), k.name) for k in kinds)
    for pattern, name in _COMPILED:
        if pattern.fullmatch(path):
            return name
    return None


def file_kind(name: str) -> FileKind | None:
    """A registered file kind by name, or None (a record kind, or unknown)."""
    return _FILES.get(name)


def largest_file() -> int:
    """The bound of the largest kind of file: no object of a valid store is bigger."""
    records = max(kind.max_bytes for kind in _RECORDS.values())
    return max(records, *(kind.max_bytes for kind in _FILES.values()))


def max_bytes(kind: str) -> int:
    """The size bound of a kind's files."""
    found = _RECORDS.get(kind) or _FILES[kind]
    return found.max_bytes


def content_problem(
    kind: str, path: str, data: bytes, parsed: dict[str, Record] | None = None, sha: str = ""
) -> str | None:
    """Why the bytes of a store file of ``kind`` at ``path`` are unacceptable, or None.

    ``parsed``, when given, receives a record parsed on the way (``sha`` → record).
    """
    record = _RECORDS.get(kind)
    if record is not None:
        try:
            value = record.parse(data)
        except XbrainError as exc:
            return exc.message.rstrip(".")
        if record.path(value["id"]) != path:
            return "the file name does not match its id"
        if parsed is not None:
            parsed[sha] = value
        return None
    spec = _FILES[kind]
    if spec.raw:
        return None
    try:
        value = _load(spec, data)
    except XbrainError as exc:
        return exc.message.rstrip(".")
    if spec.schema is not None:
        from ..schemas import schema_errors

        errors = schema_errors(spec.schema, value)
        if errors:
            return errors[0]
    return spec.check(data) if spec.check is not None else None


def _load(spec: FileKind, data: bytes) -> Any:
    """A state file as data (YAML or JSON), depth-bounded."""
    try:
        if spec.yaml:
            from ..codec import load_yaml

            return load_yaml(data)
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise InvalidInputError("nested too deeply") from None
    except Exception as exc:  # every parser failure means the same: not this kind of file
        what = "YAML" if spec.yaml else "JSON"
        raise InvalidInputError(f"not valid {what}") from exc


# the core's own files
register(FileKind("catalog", rf"{CATALOG_DIR}/{SHARD_FILE}", 64 << 20, "store-files#catalog"))
register(FileKind("summary", re.escape(SUMMARY), 4 << 10, "store-files#summary"))
# (the marker, xbrain.yaml, is registered by .config: its check is StoreConfig itself)
