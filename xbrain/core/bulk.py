"""Every record of one kind at a commit, parsed in a helper process when the store is big.

An index build spends half its time parsing records (YAML, then the kind's checks) and
half tokenizing and inserting them. On a machine with a second core the parsing moves to
a helper process, chunk by chunk, while the caller consumes the chunks already parsed:
the two halves overlap. Small stores, one-core machines and platforms where a process
pool cannot start read serially, with the same records in the same order.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from ..git import CommitId, GitStore
from .registry import Record, record_kind
from .view import View, parse_stored

__all__ = ["PARALLEL_MIN", "records"]

PARALLEL_MIN = 2_000  # below this a helper process costs more than it saves
CHUNK = 500
AHEAD = 3  # chunks parsed ahead of the consumer (bounds the memory held)
Parse = Callable[[bytes], Record]
Progress = Callable[[int, int], None]


def records(
    git: GitStore, view: View, kind: str, progress: Progress | None = None
) -> Iterator[Record]:
    """Every record of ``kind`` at ``view``'s commit, in tree order; ``progress(done,
    total)`` is told in steps. A record that does not parse is a CorruptStoreError."""
    spec = record_kind(kind)
    shape = re.compile(spec.pattern, re.ASCII)
    items = [item for item in view.snap.files(spec.directory) if shape.fullmatch(item[0])]
    chunks = [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)]
    commit = view.snap.commit
    helper = None
    if commit is not None and _helps(len(items)):
        helper = _parallel(git.path, commit, spec.parse, chunks)
    try:
        for chunk in chunks:
            found = None
            if helper is not None:
                try:
                    found = next(helper)
                except BrokenProcessPool:  # the helper died (killed, out of memory): go on here
                    helper = None
            if found is None:
                found = _parse(view.snap.blob, spec.parse, chunk)
            yield from found
            if progress is not None:
                progress(len(chunk), len(items))
    finally:
        if helper is not None:
            helper.close()  # a reader that stops early stops the helper too


def _helps(total: int) -> bool:
    return total >= PARALLEL_MIN and (os.cpu_count() or 1) > 1


def _parallel(
    store: Path, commit: str, parse: Parse, chunks: list[list[tuple[str, str]]]
) -> Generator[list[Record], None, None] | None:
    """The parsed chunks, from a helper process; None when no process can be started."""
    import multiprocessing

    try:
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    except (OSError, ImportError, NotImplementedError):
        return None
    return _drain(pool, store, commit, parse, chunks)


def _drain(
    pool: ProcessPoolExecutor,
    store: Path,
    commit: str,
    parse: Parse,
    chunks: list[list[tuple[str, str]]],
) -> Generator[list[Record], None, None]:
    pending: deque[Future[list[Record]]] = deque()
    waiting = iter(chunks)
    try:
        for chunk in waiting:
            pending.append(pool.submit(_parse_chunk, store, commit, parse, chunk))
            if len(pending) >= AHEAD:
                break
        while pending:
            done = pending.popleft().result()
            for chunk in waiting:
                pending.append(pool.submit(_parse_chunk, store, commit, parse, chunk))
                break
            yield done
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _parse_chunk(
    store: Path, commit: str, parse: Parse, chunk: list[tuple[str, str]]
) -> list[Record]:
    """Parse one chunk of ``(path, blob id)`` in the helper process."""
    git = GitStore(store)
    try:
        return _parse(git.snapshot(CommitId(commit)).blob, parse, chunk)
    finally:
        git.close()


def _parse(
    blob: Callable[[str], bytes], parse: Parse, chunk: list[tuple[str, str]]
) -> list[Record]:
    return [parse_stored(parse, path, blob(blob_id)) for path, blob_id in chunk]
