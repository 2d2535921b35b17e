"""A whole store's index build, shared with a helper process on a second core.

Parsing a record (YAML, then the kind's checks), tokenizing it and writing its rows cost
about the same for every record, so the build splits the records, not the steps: this
process and a helper each take the next chunk of records when free (``core.bulk``), and
each writes the rows of its chunks. The helper writes into a file of its own beside the
index; this process, in one transaction on the index, merges that file's rows with its
own, sorts the postings into place and records the commit. Readers see the old index or
the new one. Document numbers follow tree order either way, so the index is the one a
serial build makes; a store small enough, a one-core machine or a helper that dies builds
serially, and a damaged record is the same CorruptStoreError.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..core import GitStore, View, bulk
from ..kinds import resource as resource_kind
from .fields import field_texts
from .index import SearchIndex
from .rows import BATCH, DOC_COLUMNS, FIELDS, POSTING_COLUMNS, document_rows, load_rows
from .tokenize import Tokenizer

__all__ = ["Shape", "Source", "rebuild"]

_HELPER_TABLES = f"CREATE TABLE docs ({DOC_COLUMNS}); CREATE TABLE staged ({POSTING_COLUMNS});"


class Shape(Protocol):
    """How another index's records become its documents (picklable: the helper makes
    its own): ``fields`` as ``SearchIndex`` takes them, ``documents`` one per record
    (None: not indexed; it keeps its document number, so both processes agree)."""

    def fields(self, doc: dict[str, Any]) -> tuple[str, ...]:
        """A document's text per index field."""

    def documents(self, records: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
        """The document of each record, in order."""


@dataclass(frozen=True)
class Source:
    """A build other than the resource index's: ``listing`` (a parser and the ``(path,
    blob id)`` of each record) read in chunks of ``size`` by this process and, from
    ``least`` records on, a helper, each record made a document by ``here`` (this
    process) or ``helper`` (built in the helper); ``meta`` is set with the commit, and
    ``serial`` gives every document for the fallback."""

    listing: tuple[bulk.Parse, bulk.Items]
    here: Shape
    helper: Callable[[], Shape]
    serial: Callable[[], Iterable[dict[str, Any]]]
    least: int
    size: int
    meta: dict[str, str] = field(default_factory=dict)


class _Rows:
    """A ``core.bulk.Worker`` writing each chunk's rows through ``conn``."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        tokenizer: Tokenizer,
        staged: str,
        shape: Shape | None = None,
    ) -> None:
        self.conn = conn
        self.tokenizer = tokenizer
        self.staged = staged
        self.shape = shape
        self.count = 0
        self.totals = [0] * len(FIELDS)
        self.docs: list[tuple[Any, ...]] = []
        self.postings: list[list[Any]] = []

    def chunk(self, records: list[dict[str, Any]], first: int) -> None:
        fields: Callable[[dict[str, Any]], tuple[str, ...]] = field_texts
        found: list[dict[str, Any] | None] = list(records)
        if self.shape is not None:
            fields, found = self.shape.fields, self.shape.documents(records)
        for doc, resource in enumerate(found, first + 1):
            if resource is None:
                continue
            lengths = document_rows(
                self.tokenizer, fields, resource, doc, True, self.docs, self.postings
            )
            self.totals = [a + b for a, b in zip(self.totals, lengths, strict=True)]
            self.count += 1
        if len(self.postings) >= BATCH:
            self.flush()

    def flush(self) -> None:
        load_rows(self.conn, self.docs, self.postings, self.staged)

    def finish(self) -> tuple[int, list[int]]:
        self.flush()
        return self.count, self.totals


class _Helper(_Rows):
    """The helper process's worker: its rows go into its own file, ``path``."""

    def __init__(
        self, path: Path, cache_dir: Path, shape: Callable[[], Shape] | None = None
    ) -> None:
        # mode=rw: if the file is gone, fail (and leave the chunks to the caller) rather
        # than fill a new file the caller never reads
        conn = sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True, isolation_level=None)
        conn.execute("PRAGMA journal_mode=OFF")  # a scratch file: thrown away on failure
        conn.execute("PRAGMA synchronous=OFF")
        conn.executescript(_HELPER_TABLES)
        conn.execute("BEGIN")
        made = None if shape is None else shape()  # the helper's own (its own git reads)
        super().__init__(conn, Tokenizer(cache_dir), "staged", made)

    def finish(self) -> tuple[int, list[int]]:
        try:
            found = super().finish()
            self.conn.execute("COMMIT")
            return found
        finally:
            self.conn.close()
            self.tokenizer.close()


class _Lost(Exception):
    """The helper's file does not hold what the helper reported writing."""


def rebuild(
    index: SearchIndex,
    git: GitStore,
    view: View,
    progress: bulk.Progress | None = None,
    source: Source | None = None,
) -> int:
    """Replace ``index`` (a file under ``.git/xbrain``) with every resource of ``view``'s
    commit (with ``source``, its documents); the number indexed."""
    directory = Path(index.conn.execute("PRAGMA database_list").fetchone()[2]).parent
    _clear_abandoned(directory)
    scratch = directory / f"{_SCRATCH}{os.getpid()}-{secrets.token_hex(4)}.sqlite"
    os.close(os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    conn = index.conn
    try:
        conn.execute("ATTACH DATABASE ? AS helper", (str(scratch),))
        try:
            return _load(index, git, view, scratch, progress, source)
        except (sqlite3.IntegrityError, _Lost):  # one id in two files, or a lost file
            if source is None:
                records = bulk.records(git, view, resource_kind.KIND.name)
                return index.rebuild(records, str(view.snap.commit), bulk=True)
            count = index.rebuild(source.serial(), str(view.snap.commit), bulk=True)
            with index.write():
                for key, value in source.meta.items():
                    index.set_meta(key, value)
            return count
        finally:
            conn.execute("DETACH DATABASE helper")
    finally:
        scratch.unlink(missing_ok=True)


_SCRATCH = "build-"  # build-<pid>-<random>.sqlite


def _clear_abandoned(directory: Path) -> None:
    """Remove the scratch files of builds whose process is gone (killed mid-build)."""
    for path in directory.glob(f"{_SCRATCH}*.sqlite"):
        pid = path.name[len(_SCRATCH) :].partition("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):  # not ours to clear (a directory): leave it
                path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, or no way to ask: keep its file
        return True
    return True


def _load(
    index: SearchIndex,
    git: GitStore,
    view: View,
    scratch: Path,
    progress: bulk.Progress | None,
    source: Source | None,
) -> int:
    cache_dir = index.tokenizer.cache_dir
    if source is None:
        here = _Rows(index.conn, index.tokenizer, "temp.staged")
        helper = functools.partial(_Helper, scratch, cache_dir)
        options: dict[str, Any] = {}
    else:
        here = _Rows(index.conn, index.tokenizer, "temp.staged", source.here)
        helper = functools.partial(_Helper, scratch, cache_dir, source.helper)
        options = {"listing": source.listing, "least": source.least, "size": source.size}
    # A deferred BEGIN: the first write locks the index only. BEGIN IMMEDIATE would lock
    # every attached file, the helper's too, while the helper is writing it.
    index.conn.execute("BEGIN")
    try:
        index.begin_load()
        kind = resource_kind.KIND.name
        shared, found = bulk.process(git, view, kind, here, helper, progress, **options)
        count, totals = here.finish()
        if shared:
            if index.conn.execute("SELECT COUNT(*) FROM helper.docs").fetchone()[0] != found[0]:
                raise _Lost(str(scratch))
            count += found[0]
            totals = [a + b for a, b in zip(totals, found[1], strict=True)]
        index.end_load(totals, str(view.snap.commit), also="helper" if shared else None)
        for key, value in ({} if source is None else source.meta).items():
            index.set_meta(key, value)
        index.conn.execute("COMMIT")
    except BaseException:
        if index.conn.in_transaction:  # SQLite may have rolled back already (a full disk)
            index.conn.execute("ROLLBACK")
        raise
    return count
