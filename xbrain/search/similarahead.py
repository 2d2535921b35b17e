"""A batch's conflict candidates counted in a helper process while the batch is written.

A big batch's ``possibleConflicts`` walk (:mod:`.similararrays`, fifty calls) cost a
sixth of its time at 100,000 resources, after the commit, on one core. Every call but a
finder's first does not depend on the batch's own documents: the candidates are the
documents holding enough of the terms, ordered by title terms held, title length, terms
held and storage order, and the batch's own ids are passed over. So the walk for those
calls can run before the commit, in a second process, on the index as it was, while this
one validates, commits and updates the index.

The helper reads one snapshot of the search index, one that reflects ``main`` when it
reads it; it names that commit and the index (its file's device and inode, and the mark
its build wrote in ``meta``: an inode number can come back), and lists for each call the
ids of up to ``want`` candidates in order (never one passed). The finder takes those
answers only when the index it reads after the write reflects the write's own commit
(nothing written since), whose parent is the commit the helper read (or that commit
itself), and is the same index: then the two differ by the batch's documents alone, and
the answer is the walk's own. Anything else (no second core, a helper that cannot
start, is not done yet, failed or read another state) leaves the call to the finder's
walk, as before.

The helper's output is two lines: first the term counts of the batch's texts when it was
asked to cut them (:mod:`.countahead`; else ``null``), then the answers. Each is read
with a bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from .countahead import Counted, line
from .tokenize import AHEAD

__all__ = ["AHEAD_MIN", "BATCH_MIN", "WAIT", "Ahead", "Ask", "file_id", "main", "start", "which"]

AHEAD_MIN = 20  # calls worth a helper: fewer cost the finder less than starting one
BATCH_MIN = 200  # resources a put holds before it is long enough for a helper to help
WAIT = 0.0  # seconds a call waits for a helper not done yet before walking itself
Ask = tuple[list[str], list[str], int, Collection[str]]  # terms, title's terms, need, passed
# the helper: the caller's import path (``-I``: no current directory, no PYTHON* settings)
_BOOT = (
    "import sys; sys.path[:0] = sys.argv[1:]; from xbrain.search.similarahead import main; main()"
)
_MAX_OUTPUT = 64 << 20
# reads of main and the index (20 ms apart): the batch's own commit may land between them,
# its index update a moment after
_TRIES = 50


def file_id(path: Path) -> list[int] | None:
    """The (device, inode) of the file at ``path``, or None."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_dev, info.st_ino]


def which(
    path: Path, before: list[int] | None, conn: sqlite3.Connection | None
) -> list[Any] | None:
    """Which index ``conn`` reads (opened at ``path``, whose file was ``before`` just
    before): its file (device, inode) and its build's mark, when the file is the same
    after (else None: replaced meanwhile, and no helper's answer fits)."""
    if conn is None or before is None:
        return None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'built'").fetchone()
    except sqlite3.Error:
        return None
    same = before == file_id(path)
    return [*before, None if row is None else str(row[0])] if same else None


class Ahead:
    """One helper process counting the candidates of ``asks`` (started at once; the
    answers read by a thread, so neither process waits on a pipe)."""

    def __init__(
        self,
        store_dir: Path,
        want: int,
        asks: Sequence[Ask],
        batch: Collection[str],
        counted: tuple[Path, Counted] | None = None,
    ):
        self._asks = list(asks)
        self._out: bytes | None = None
        self._answers: dict[str, Any] | None = None
        self._counted = None if counted is None else counted[1]
        shared = set(batch)
        job = {
            "store": os.fspath(store_dir),
            "want": want,
            "batch": sorted(shared),
            "asks": [  # each call's own ids beyond the batch's (what it supersedes)
                [terms, titled, need, sorted(set(passed) - shared)]
                for terms, titled, need, passed in asks
            ],
        }
        if counted is not None:  # the batch's texts to cut first (:mod:`.countahead`)
            job.update(cache=os.fspath(counted[0]), texts=counted[1].texts)
        data = json.dumps(job, ensure_ascii=False).encode("utf-8", "surrogatepass")
        command = [sys.executable, "-I", "-c", _BOOT, *[p for p in sys.path if p]]
        self._proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        try:
            self._thread = threading.Thread(target=self._talk, args=(data,), name="xbrain-ahead")
            self._thread.daemon = True
            self._thread.start()
        except BaseException:
            self._proc.kill()
            self._proc.wait()
            raise
        if self._counted is not None:  # (offered to builds only with a reader running)
            AHEAD.append(self._counted)

    def _talk(self, data: bytes) -> None:
        """Send the job; read the counts' line, then the answers (each bounded)."""
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            with proc.stdin:
                proc.stdin.write(data)
            first = proc.stdout.readline(_MAX_OUTPUT + 1)
            if self._counted is not None:
                self._counted.fill(first if first.endswith(b"\n") else b"")
            if first.endswith(b"\n"):  # (else past the bound: nothing more is read)
                self._out = proc.stdout.read(_MAX_OUTPUT + 1)
                proc.wait()
        except (OSError, ValueError):  # killed by close(), or a pipe gone
            self._out = None
        finally:
            if self._counted is not None:
                self._counted.give_up()  # (a line taken stays taken)

    def answer(
        self,
        ask: int,
        landed: tuple[str | None, str | None],
        head: str | None,
        current: list[Any] | None,
    ) -> tuple[list[str], bool] | None:
        """The helper's candidates for ``asks[ask]`` and whether it stopped at ``want``
        (more may follow), when it is done, and read the index the write's commit
        (``landed``: its parent, itself) was made on, and the finder's index reflects that
        commit (``head``: nothing written since) and is the same index (``current``: its
        file and build, see ``which``); else None."""
        self._thread.join(WAIT)
        if self._thread.is_alive():
            return None  # not done: the finder walks this call itself
        answers = self._read()
        if answers is None or current is None or answers.get("file") != current:
            return None
        parent, commit = landed
        if commit is None or head != commit or answers.get("head") not in (parent, commit):
            return None
        found, full = answers["found"], answers["full"]
        if not 0 <= ask < len(found) or found[ask] is None:
            return None
        return found[ask], bool(full[ask])

    def _read(self) -> dict[str, Any] | None:
        if self._answers is None and self._out is not None and self._proc.returncode == 0:
            stdout = self._out
            try:
                parsed = json.loads(stdout) if len(stdout) <= _MAX_OUTPUT else None
            except ValueError:
                parsed = None
            self._answers = parsed if _well_formed(parsed, len(self._asks)) else {}
        return self._answers or None

    def close(self) -> None:
        """Stop the helper if it is still counting."""
        if self._thread.is_alive():
            self._proc.kill()
        self._thread.join()
        if self._proc.poll() is None:  # (a reader that stopped at the bound left it writing)
            self._proc.kill()
        self._proc.wait()
        if self._counted is not None:
            with contextlib.suppress(ValueError):
                AHEAD.remove(self._counted)
        if self._proc.stdout is not None:
            self._proc.stdout.close()


def _well_formed(answers: Any, asks: int) -> bool:
    if not isinstance(answers, dict) or not isinstance(answers.get("head"), str):
        return False
    found, full = answers.get("found"), answers.get("full")
    if not isinstance(found, list) or not isinstance(full, list):
        return False
    if len(found) != asks or len(full) != asks:
        return False
    return all(
        each is None or (isinstance(each, list) and all(isinstance(r, str) for r in each))
        for each in found
    )


def start(
    store_dir: Path,
    want: int,
    asks: Sequence[Ask],
    batch: Collection[str],
    texts: tuple[Path, list[str]] | None = None,
) -> Ahead | None:
    """A helper for ``asks`` (and to cut ``texts``: the cache directory of the segmenter,
    the batch's texts, :mod:`.countahead`) when it may pay (enough calls or texts, a
    batch long enough to write, a second core), else None."""
    if not (len(asks) >= AHEAD_MIN or texts) or len(batch) < BATCH_MIN:
        return None
    if (os.cpu_count() or 1) < 2 or not sys.executable:
        return None
    counted = None if texts is None else (texts[0], Counted(texts[1]))
    try:
        return Ahead(store_dir, want, asks, batch, counted)
    except (OSError, RuntimeError, subprocess.SubprocessError):  # (no thread to be had)
        return None


class _Listed:
    """The walk's ``keep`` in the helper: lists each candidate's id, up to ``want``."""

    def __init__(self, want: int) -> None:
        self.want = want
        self.rids: list[str] = []

    def __call__(self, rid: str, text: str, found: list[dict[str, Any]]) -> bool:
        self.rids.append(rid)
        return len(self.rids) >= self.want


def _count(job: dict[str, Any]) -> dict[str, Any]:
    """In the helper: each ask's candidates (at most ``want``) from one snapshot of the
    index that reflects ``main`` now."""
    from .query import INDEX_FILE, index_meta, main_head, open_current
    from .similararrays import HOLDERS, KEPT, TITLE, ArrayWalk, arrays_fit

    path = Path(job["store"]) / ".git" / INDEX_FILE
    for _ in range(_TRIES):  # a write between reading main and the index: read them again
        head = main_head(path.parent.parent)
        before = file_id(path)
        conn = None if head is None else open_current(path, index_meta(head))
        if conn is not None:
            break
        time.sleep(0.02)
    else:
        return {"head": None}
    try:
        read = which(path, before, conn)
        last = int(conn.execute("SELECT MAX(doc) FROM docs").fetchone()[0] or 0)
        fits = arrays_fit(conn, last)
        if fits is None or read is None:
            return {"head": None}
        walker = ArrayWalk(fits, HOLDERS, TITLE, KEPT)
        batch, want = set(job["batch"]), int(job["want"])
        found: list[list[str] | None] = []
        full: list[bool] = []
        for terms, titled, need, extra in job["asks"]:
            listed = _Listed(want)
            walker.walk(conn, terms, titled, need, batch | set(extra), listed)
            found.append(listed.rids)
            full.append(len(listed.rids) >= want)
        return {"head": head, "file": read, "found": found, "full": full}
    finally:
        conn.close()


def main() -> None:
    """The helper process: a job on stdin, the answers on stdout."""
    job = json.loads(sys.stdin.buffer.read())
    out = sys.stdout.buffer
    out.write(line(job))  # first: the index update needs them before the answers
    out.flush()
    out.write(json.dumps(_count(job) if job["asks"] else {"head": None}).encode())
    out.flush()
