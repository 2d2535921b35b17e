"""Every record of one kind at a commit, with a helper process when the store is big.

Two ways to share the work with a second core:

* ``records`` parses in the helper, chunk by chunk, while the caller consumes the chunks
  already parsed (the caller sees every record, in tree order);
* ``process`` hands whole chunks to a ``Worker``: one in this process, one the helper
  builds, each taking the next chunk when it is free. A chunk's records are parsed and
  used where the chunk is, so nothing but chunk numbers crosses between the processes;
  an index build writes its half into its own file, which the caller then merges.

Small stores, one-core machines and platforms where a process pool cannot start do all
of it here, with the same result. A helper that dies leaves its chunks to this process;
a helper whose parent dies (killed by a hook's timeout, say) exits at once instead of
waiting forever for work that will never come. The helper never runs the caller's main
script again (``_started``): a script that uses xbrain needs no ``__main__`` guard.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import types
from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Protocol

from ..git import CommitId, GitStore
from .registry import Record, record_kind
from .view import View, parse_stored

__all__ = ["PARALLEL_MIN", "Worker", "process", "records"]

PARALLEL_MIN = 2_000  # below this a helper process costs more than it saves
CHUNK = 500
WORK_CHUNK = 200  # process(): small, so the two processes finish close together
AHEAD = 3  # chunks parsed ahead of the consumer (bounds the memory held)
Parse = Callable[[bytes], Record]
Progress = Callable[[int, int], None]
Items = list[tuple[str, str]]  # (path, blob id)


class Worker(Protocol):
    """What ``process`` feeds: chunks of parsed records, then one ``finish``."""

    def chunk(self, records: list[Record], first: int) -> None:
        """Use ``records``, the kind's records ``first`` … ``first + len - 1`` in tree order."""

    def finish(self) -> Any:
        """The helper's worker: end its work; the value goes back to the caller."""


def _items(view: View, kind: str) -> tuple[Parse, Items]:
    spec = record_kind(kind)
    shape = re.compile(spec.pattern, re.ASCII)
    return spec.parse, [
        item for item in view.snap.files(spec.directory) if shape.fullmatch(item[0])
    ]


def records(
    git: GitStore, view: View, kind: str, progress: Progress | None = None
) -> Iterator[Record]:
    """Every record of ``kind`` at ``view``'s commit, in tree order; ``progress(done,
    total)`` is told in steps. A record that does not parse is a CorruptStoreError."""
    parse, items = _items(view, kind)
    chunks = [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)]
    commit = view.snap.commit
    helper = None
    if commit is not None and _helps(len(items)):
        helper = _parallel(git.path, commit, parse, chunks)
    try:
        for chunk in chunks:
            found = None
            if helper is not None:
                try:
                    found = next(helper)
                except BrokenProcessPool:  # the helper died (killed, out of memory): go on here
                    helper = None
            if found is None:
                found = _parse(view.snap.blob, parse, chunk)
            yield from found
            if progress is not None:
                progress(len(chunk), len(items))
    finally:
        if helper is not None:
            helper.close()  # a reader that stops early stops the helper too


def _helps(total: int, least: int | None = None) -> bool:
    return total >= (PARALLEL_MIN if least is None else least) and (os.cpu_count() or 1) > 1


def _parallel(
    store: Path, commit: str, parse: Parse, chunks: list[list[tuple[str, str]]]
) -> Generator[list[Record], None, None] | None:
    """The parsed chunks, from a helper process; None when no process can be started."""
    import multiprocessing

    with _safe_path():
        try:
            pool = ProcessPoolExecutor(
                1, mp_context=multiprocessing.get_context("spawn"), initializer=_watch_parent
            )
        except (OSError, ImportError, NotImplementedError):
            return None
        started = _started(pool)
    return _drain(pool, store, commit, parse, chunks) if started else None


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


def process(
    git: GitStore,
    view: View,
    kind: str,
    here: Worker,
    helper: Callable[[], Worker],
    progress: Progress | None = None,
    *,
    listing: tuple[Parse, Items] | None = None,
    least: int | None = None,
    size: int | None = None,
) -> tuple[bool, Any]:
    """Feed every record of ``kind`` at ``view``'s commit to ``here`` and, on a big store
    with a second core, to the worker ``helper()`` builds in a helper process (``helper``
    must pickle: a class or a ``functools.partial`` of one). Returns ``(True, the helper
    worker's finish())`` when the helper did a share, else ``(False, None)``: then every
    chunk went to ``here``. A record that does not parse is a CorruptStoreError, raised
    here whichever process met it. ``listing`` (a parser and its ``(path, blob id)``
    items) replaces the kind's records; ``least`` (records worth a helper) and ``size``
    (records per chunk) suit work dearer per record than a resource's."""
    parse, items = _items(view, kind) if listing is None else listing
    step = WORK_CHUNK if size is None else size
    chunks = [items[i : i + step] for i in range(0, len(items), step)]
    queue = deque(range(len(chunks)))

    told: set[int] = set()  # the chunks progress was told of

    def tell(number: int) -> None:
        if progress is not None and number not in told:
            told.add(number)
            progress(len(chunks[number]), len(items))

    def local(number: int) -> None:
        here.chunk(_parse(view.snap.blob, parse, chunks[number]), number * step)
        tell(number)

    pool = None
    if view.snap.commit is not None and _helps(len(items), least):
        pool = _pool(git.path, view.snap.commit, helper)
    if pool is None:
        for number in queue:
            local(number)
        return False, None
    given: list[int] = []  # chunks the helper took: all lost if it dies
    try:
        try:
            pending: dict[Future[None], int] = {}
            while queue or pending:
                for future in [f for f in pending if f.done()]:
                    number = pending.pop(future)
                    future.result()  # the helper's CorruptStoreError is raised here
                    tell(number)
                while queue and len(pending) < AHEAD:
                    number = queue.popleft()
                    given.append(number)
                    chunk = chunks[number]
                    pending[pool.submit(_helper_chunk, parse, chunk, number * step)] = number
                if queue:
                    local(queue.popleft())
                elif pending:
                    wait(pending, return_when=FIRST_COMPLETED)
            return True, pool.submit(_helper_finish).result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    except BrokenProcessPool:  # the helper died (killed, out of memory): its share here,
        # and the chunks nobody had taken yet
        for number in sorted(given) + list(queue):
            local(number)
        return False, None


def _pool(store: Path, commit: str, helper: Callable[[], Worker]) -> ProcessPoolExecutor | None:
    import multiprocessing

    with _safe_path():
        try:
            pool = ProcessPoolExecutor(
                1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_helper_start,
                initargs=(store, commit, helper),
            )
        except (OSError, ImportError, NotImplementedError):
            return None
        started = _started(pool)
    return pool if started else None


@contextlib.contextmanager
def _safe_path() -> Iterator[None]:
    """While a helper process (and multiprocessing's resource tracker) starts:
    ``PYTHONSAFEPATH`` set (Python 3.11+; earlier ones ignore it). Both start as
    ``python -c …``, which puts the current directory first on the import path until
    multiprocessing hands a helper the caller's, so a ``multiprocessing/`` planted in the
    folder a reindex runs in was their own first import."""
    before = os.environ.get(_SAFE_PATH)
    os.environ[_SAFE_PATH] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(_SAFE_PATH, None)
        else:
            os.environ[_SAFE_PATH] = before


def _started(pool: ProcessPoolExecutor) -> bool:
    """Start ``pool``'s process now (its first task is a no-op), with the caller's
    ``__main__`` out of sight; False (and the pool shut) when it cannot start.

    A spawned process first runs the parent's main script or module again, as
    ``__mp_main__``: a script calling xbrain without an ``if __name__ == "__main__"``
    guard would run a second time in the helper — its writes, its output, a server it
    starts. The helper needs nothing of it, so while the process starts (the only moment
    multiprocessing reads it) ``sys.modules["__main__"]`` is a blank module, which gives
    it no script to run."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        pool.submit(int)
    except (OSError, RuntimeError):  # no process here (limits, a platform without one)
        pool.shutdown(wait=False, cancel_futures=True)
        return False
    finally:
        if main is None:
            del sys.modules["__main__"]
        else:
            sys.modules["__main__"] = main
    return True


_SAFE_PATH = "PYTHONSAFEPATH"  # (see _safe_path)
_HELPER: tuple[Worker, GitStore, Callable[[str], bytes]] | None = None  # in the helper


def _watch_parent() -> None:
    """In a helper: exit as soon as the process that started it is gone.

    A pool's worker waits on a queue whose writing end it holds itself, so a parent
    killed outright (SIGKILL, SIGTERM) would leave it waiting forever, holding memory
    and the parent's stdout and stderr open. multiprocessing's sentinel for the parent
    becomes ready when the parent exits, however it exits."""
    import multiprocessing
    import threading

    parent = multiprocessing.parent_process()
    if parent is None:  # not started by multiprocessing: nothing to watch
        return

    def watch() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, name="xbrain-parent-watch", daemon=True).start()


def _helper_start(store: Path, commit: str, helper: Callable[[], Worker]) -> None:
    global _HELPER
    _watch_parent()
    git = GitStore(store)
    _HELPER = (helper(), git, git.snapshot(CommitId(commit)).blob)


def _helper_chunk(parse: Parse, chunk: Items, first: int) -> None:
    assert _HELPER is not None
    worker, _, blob = _HELPER
    worker.chunk(_parse(blob, parse, chunk), first)


def _helper_finish() -> Any:
    assert _HELPER is not None
    worker, git, _ = _HELPER
    try:
        return worker.finish()
    finally:
        git.close()
