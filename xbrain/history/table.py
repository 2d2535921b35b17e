"""The history table behind ``log``, and field-level diffs of one record.

``log ID`` must stay fast in a store with many thousands of commits, so which resources
each commit touched is kept in a derived SQLite table (``.git/xbrain/history.sqlite``),
filled by walking the commits it has not seen yet (each diffed against its parents,
pruned by unchanged subtrees). Like the search index it is never the only copy of
anything: delete it and the next ``log`` rebuilds it from the commits.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any, NamedTuple

from ..core import CommitId, GitStore, View, journal
from ..core.registry import record_kinds
from ..messages import describe_commit
from ..sqlitefiles import remove_database
from .linediff import unified

__all__ = ["Kinds", "diff", "log"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS commits (id TEXT PRIMARY KEY, generation INTEGER, time INTEGER,"
    " parents TEXT, author TEXT, message TEXT)",
    "CREATE TABLE IF NOT EXISTS changes (rid TEXT NOT NULL, id TEXT NOT NULL,"
    " PRIMARY KEY (rid, id))",
)
LONG_FIELDS = {"resource": ("text", "summary", "purpose"), "entry": ("body",)}  # line diffs


class Kinds(NamedTuple):
    """A record's kind (``resource``, ``entry``) and its tombstone's."""

    live: str
    dead: str


HISTORY_FILE = "history-v2.sqlite"

_rids = journal.rids_of


class History:
    """The derived commit → changed-resource table."""

    def __init__(self, git: GitStore, *, in_memory: bool = False) -> None:
        self.git = git
        path = git.control_dir / "xbrain" / HISTORY_FILE
        if not in_memory:
            path.parent.mkdir(exist_ok=True)
        target = ":memory:" if in_memory else str(path)
        self.conn = sqlite3.connect(target, timeout=30, isolation_level=None)
        for statement in _SCHEMA:
            self.conn.execute(statement)

    def close(self) -> None:
        """Close the table."""
        self.conn.close()

    def _known(self, commit: str) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM commits WHERE id = ?", (commit,)).fetchone()
            is not None
        )

    def catch_up(self, head: CommitId) -> None:
        """Record every commit reachable from ``head`` not recorded yet."""
        todo, fresh = [head], []
        seen: set[str] = set()
        while todo:
            commit = todo.pop()
            if commit in seen or self._known(commit):
                continue
            seen.add(commit)
            info = self.git.commit_info(commit)
            fresh.append(info)
            todo.extend(info.parents)
        if not fresh:
            return
        # generation = 1 + the deepest parent: a newest-first order that respects ancestry
        generations: dict[str, int] = {}
        for info in fresh:
            for parent in info.parents:
                row = self.conn.execute(
                    "SELECT generation FROM commits WHERE id = ?", (parent,)
                ).fetchone()
                if row is not None:
                    generations[parent] = int(row[0])
        unresolved = list(reversed(fresh))  # parents mostly come last in a walk from head
        while unresolved:
            waiting = []
            for info in unresolved:
                if all(p in generations for p in info.parents):
                    generations[info.id] = 1 + max(
                        (generations[p] for p in info.parents), default=0
                    )
                else:
                    waiting.append(info)
            unresolved = waiting
        noted = journal.read(self.git.control_dir)
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for info in fresh:
                changed: set[str] = set()
                if info.id in noted:  # written by xbrain: no tree diff needed
                    changed = noted[info.id]
                else:
                    bases: list[CommitId | None] = list(info.parents) or [None]
                    for base in bases:
                        for prefix in [spec.directory for spec in record_kinds()]:
                            changed |= _rids(self.git.changed_files(base, info.id, prefix))
                self.conn.execute(
                    "INSERT OR REPLACE INTO commits VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        info.id,
                        generations[info.id],
                        info.time,
                        " ".join(info.parents),
                        info.author,
                        info.message,
                    ),
                )
                self.conn.executemany(
                    "INSERT OR IGNORE INTO changes VALUES (?, ?)",
                    [(rid, info.id) for rid in changed],
                )
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def commits(self, head: CommitId, rid: str | None, limit: int) -> list[dict[str, Any]]:
        """Newest first: every commit, or those that changed ``rid``, reachable from head."""
        self.catch_up(head)
        if rid is None:
            rows = self.conn.execute(
                "SELECT id FROM commits ORDER BY generation DESC, time DESC, id LIMIT ?",
                (limit * 4 + 50,),
            )
        else:
            rows = self.conn.execute(
                "SELECT c.id FROM changes x JOIN commits c ON c.id = x.id WHERE x.rid = ? "
                "ORDER BY c.generation DESC, c.time DESC, c.id",
                (rid,),
            )
        reachable = self._reachable(head)
        out = []
        for (commit,) in rows:
            if commit in reachable:
                out.append(describe_commit(self.git.commit_info(CommitId(commit))))
                if len(out) == limit:
                    break
        return out

    def _reachable(self, head: CommitId) -> set[str]:
        parents = dict(self.conn.execute("SELECT id, parents FROM commits").fetchall())
        seen: set[str] = set()
        todo = [str(head)]
        while todo:
            commit = todo.pop()
            if commit in seen:
                continue
            seen.add(commit)
            todo.extend(p for p in (parents.get(commit) or "").split() if p)
        return seen


def log(git: GitStore, rid: str | None, limit: int) -> list[dict[str, Any]]:
    """``xbrain log [ID]``."""
    head = git.head()
    if head is None:
        return []
    try:
        return _commits(History(git), head, rid, limit)
    except (sqlite3.OperationalError, OSError):
        pass  # a read-only store or a full disk: the table is derived, build it in memory
    except sqlite3.DatabaseError:  # damaged: derived, so it starts over from the commits
        remove_database(git.control_dir / "xbrain" / HISTORY_FILE)
        try:
            return _commits(History(git), head, rid, limit)
        except (sqlite3.Error, OSError):
            pass
    return _commits(History(git, in_memory=True), head, rid, limit)


def _commits(history: History, head: CommitId, rid: str | None, limit: int) -> list[dict[str, Any]]:
    try:
        return history.commits(head, rid, limit)
    finally:
        history.close()


def _state(view: View, rid: str, kinds: Kinds) -> dict[str, Any] | None:
    record = view.record(kinds.live, rid)
    if record is not None:
        return {"state": "live", kinds.live: record}
    tombstone = view.record(kinds.dead, rid)
    if tombstone is not None:
        gone = {"id": tombstone["id"], "deletedAt": tombstone["deletedAt"]}
        return {"state": "deleted", "tombstone": gone}
    return None


def diff(old: View, new: View, rid: str, kinds: Kinds) -> dict[str, Any]:
    """Field-level changes of one record between two commits, with line diffs."""
    before, after = old.record(kinds.live, rid), new.record(kinds.live, rid)
    fields: list[dict[str, Any]] = []
    keys: Iterator[str] = iter(dict.fromkeys([*(before or {}), *(after or {})]))
    for key in keys:
        a = (before or {}).get(key)
        b = (after or {}).get(key)
        if a == b:
            continue
        change: dict[str, Any] = {"field": key, "before": a, "after": b}
        if key in LONG_FIELDS[kinds.live] and isinstance(a, str) and isinstance(b, str):
            change["lines"] = unified(a, b)
        fields.append(change)
    return {
        "id": rid,
        "from": {"commit": old.snap.commit, **(_state(old, rid, kinds) or {"state": "absent"})},
        "to": {"commit": new.snap.commit, **(_state(new, rid, kinds) or {"state": "absent"})},
        "changes": fields,
    }
