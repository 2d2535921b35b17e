"""``xbrain purge``: a record, or every occurrence of a string, out of the whole history.

Dry run unless ``apply``: it says how many commits and which paths would change and
which remotes still hold the old history. Applied: every commit is rebuilt without the
record's files and with the string replaced by ``(purged)`` (messages too), the catalog,
summary and derived files of each rebuilt commit moved with its records, a purge commit
added on top, ``main`` moved by compare-and-swap (nothing is visible before), the old
remote-tracking refs are dropped, unreachable objects are deleted and reflogs cleared,
and ``.git/xbrain`` loses every derived file (the facade rebuilds the indexes). What was
purged is noted in ``.git/xbrain/purge.log``: ids, counts and commits, never the string.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from typing import Any

from .core import CommitId, Core, GitStore, Rewrite, TreeReader, View, layout
from .core.derive import catalog_entry, count_change
from .core.registry import classify, record_kind, record_kinds
from .core.shards import Staged, shard_entries
from .core.view import record_count
from .errors import InvalidInputError, NotFoundError, XbrainError
from .kinds import skill as skill_kind
from .kinds.resourcefacts import path as facts_path
from .messages import PURGE_TRAILER, commit_message, quoted_title

__all__ = ["PURGED", "purge"]

# what a purged string becomes: a plain word in any YAML, JSON or Markdown context (a
# bracketed one turned an unquoted YAML value into a list)
PURGED = b"(purged)"
# A string purge can find in every file is one token: at least 4 characters (shorter
# ones would rewrite half the store), at most 4,096, and nothing YAML or JSON writes
# otherwise than as itself (whitespace, where YAML may fold a line; quotes, backslashes
# and control characters, which they escape).
_TEXT = re.compile(r"[^\s\"'\\\x00-\x1f\x7f]{4,4096}")
# what .git/xbrain keeps: this log, a pull's or verify's scratch copies, the markers a
# crashed write is finished from, the git index's stamp; "rescued" (files doctor moved
# aside) loses only the files that hold a purged string
_KEEP = {
    "purge.log",
    "incoming",
    "verify",
    "worktree-pending.json",
    "objects-pending",
    "index-stamp",
    "rescued",
}


def purge(core: Core, ids: list[str], texts: list[str], *, apply: bool) -> dict[str, Any]:
    """Purge ``ids`` and ``texts`` from every commit (a dry run unless ``apply``)."""
    if not ids and not texts:
        raise InvalidInputError("Name a record ID or give --text STRING to purge.")
    for text in texts:
        if not _TEXT.fullmatch(text):
            raise InvalidInputError(
                "--text must be one token of 4 to 4,096 characters: no spaces, quotes, "
                "backslashes or control characters (a secret is one word)."
            )
    core.existing()
    for rid in ids:
        if not any(_owns(spec, rid) for spec in record_kinds()):
            raise NotFoundError(f'No record can have the id "{rid[:80]}"; check it.')
    # (the head is rewritten like every other commit: no separate delete is needed)
    paths = {spec.path(rid) for rid in ids for spec in record_kinds() if _owns(spec, rid)}
    paths |= {facts_path(rid) for rid in ids if rid.startswith("resource_")}  # its sidecar
    titles: set[str] = set()
    needles = [text.encode() for text in texts]

    def replace(data: bytes) -> bytes:
        for needle in needles:
            data = data.replace(needle, PURGED)
        return data

    def edit(path: str, data: bytes) -> bytes | None:
        if path in paths:
            return None
        if path.startswith(f"{skill_kind.DIRECTORY}/") and replace(data) != data:
            slug = path.split("/")[1]
            raise InvalidInputError(
                f"That text is in skill {slug}, whose revisions are content-addressed and "
                "cannot be edited; nothing was purged."
            )
        return replace(data)

    def fix(new: TreeReader, old: TreeReader, changed: list[str]) -> dict[str, bytes | None]:
        return _rederive(new, old, changed, replace, titles)

    def edit_message(message: str) -> str:
        for text in texts:
            message = message.replace(text, PURGED.decode())
        for title in sorted(titles, key=len, reverse=True):  # a purged record's, as quoted
            message = message.replace(quoted_title(title), f' "{PURGED.decode()}"')
        return message

    with core.session() as git:
        old = git.head()
        history = git.history()
        rewrite = history.rewrite(edit, edit_message, fix)
        holding = {
            name: commit
            for name, commit in history.remote_refs().items()
            if git.has_commit(commit) and history.reaches(commit, rewrite.replaced)
        }
        report: dict[str, Any] = {
            "applied": False,
            "ids": ids,
            "texts": len(texts),
            "commitsRewritten": rewrite.commits,
            "paths": sorted(rewrite.paths),
            "remotesHolding": sorted(holding),
            "commit": None,
        }
        if not apply:
            return report
        if rewrite.replaced and old is not None and rewrite.head is not None:
            report["commit"] = _replace_history(core, git, old, rewrite)
            for name, commit in sorted(holding.items()):
                history.forget_remote(name, commit)
        # also when nothing was left to rewrite: a purge that stopped after moving main
        # left the old objects, and running it again removes them
        removed = history.prune()
        report["objectsHolding"] = history.objects_holding(needles)  # 0: proved by every object
        _clear_derived(core, needles)
        _log(core, ids, len(texts), rewrite.commits, old, report["commit"], sorted(holding))
        report.update(applied=True, objectsRemoved=removed)
    return report


def _replace_history(core: Core, git: GitStore, old: CommitId, rewrite: Rewrite) -> CommitId:
    """Store the rewritten history, add the purge commit on top, move ``main`` by CAS."""
    assert rewrite.head is not None
    git.history().store_rewrite(rewrite)
    config = View(git.snapshot()).config()
    message = commit_message(
        "purge",
        [],
        core.agent,
        f"purge: history rewritten ({rewrite.commits} commits)",
        [(PURGE_TRAILER, root) for root in rewrite.roots],
    )
    head = git.write_commit(rewrite.head, {}, message, config.identity, int(time.time()))
    stale = git.changed_files(old, head)
    git.move_main(old, head, config.identity, message, paths=stale)
    git.refresh_worktree(head, stale)
    return head


class _Commit:
    """One rewritten commit as a derived index reads it (``Readable``)."""

    def __init__(self, tree: TreeReader) -> None:
        self.tree = tree
        self.read = tree.read
        self.listdir = tree.listdir
        self.files = tree.files

    def summary(self) -> dict[str, int]:
        found = json.loads(self.read(layout.SUMMARY) or b"{}")
        return found if isinstance(found, dict) else {}


def _rederive(
    new: TreeReader,
    old: TreeReader,
    changed: list[str],
    replace: Callable[[bytes], bytes],
    titles: set[str],
) -> dict[str, bytes | None]:
    """The catalog lines, summary and derived files of one rewritten commit, moved for
    the records it changed (a record the text made invalid stops the purge: purge that
    record by ID instead)."""
    names = {spec.name for spec in record_kinds()}
    view = _Commit(new)
    states: dict[str, Any] = {}
    summary = view.summary()
    catalog = Staged(
        layout.CATALOG_DIR,
        new.read,
        new.listdir,
        shard_entries,
        layout.id_digits,
        record_count(summary),
    )
    for path in changed:
        kind = classify(path)
        if kind not in names:
            continue
        spec = record_kind(str(kind))
        rid = path.rsplit("/", 1)[-1].removesuffix(".yaml")
        record = _parsed(spec, rid, new.read(path))
        before = old.read(path)
        was = _parsed(spec, rid, None if before is None else replace(before), strict=False)
        key = catalog.key(layout.id_digits(rid))
        shard = catalog.shard(key)
        entry = shard.pop(rid, None)
        gone = _parsed(spec, rid, before, strict=False) if record is None else None
        if isinstance(gone, dict):  # commit messages quote a removed record's title
            titles.update(v for k in ("title", "name") if isinstance(v := gone.get(k), str) and v)
        if record is not None:
            shard[rid] = catalog_entry(spec, record)
        catalog.dirty.add(key)
        if summary:
            count_change(summary, entry if isinstance(entry, dict) else None, shard.get(rid))
        for index in spec.derived:
            state = states.get(index.name) or states.setdefault(index.name, index.start(view))
            state.change(rid, was, record)
    # (a record count the purge lowered may move prefixes to fewer digits)
    out = catalog.files(record_count(summary)) if catalog.dirty else {}
    if catalog.dirty and summary:
        out[layout.SUMMARY] = layout.dump_json(summary)
    for state in states.values():
        out.update(state.files())
    return out


def _parsed(spec: Any, rid: str, data: bytes | None, *, strict: bool = True) -> Any:
    if data is None:
        return None
    try:
        return spec.parse(data)
    except XbrainError as exc:
        if not strict:
            return None
        raise InvalidInputError(
            f"Purging that text would leave record {rid} invalid; purge the record by ID instead."
        ) from exc


def _owns(spec: Any, rid: str) -> bool:
    return bool(spec.is_id(rid))


def _clear_derived(core: Core, needles: list[bytes]) -> None:
    """Every derived file of ``.git/xbrain`` (indexes, vectors, sessions, telemetry,
    the journal) may quote the text: all are removed and rebuilt on use."""
    import shutil

    base = core.path / ".git" / "xbrain"
    if not base.is_dir():
        return
    rescued = base / "rescued"
    if rescued.is_dir() and not rescued.is_symlink() and needles:
        for path in rescued.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                if any(needle in data for needle in needles):
                    path.unlink()
    for item in base.iterdir():
        if item.name in _KEEP:
            continue
        if item.is_dir() and not item.is_symlink():
            shutil.rmtree(item, ignore_errors=True)
        else:
            item.unlink(missing_ok=True)


def _log(
    core: Core,
    ids: list[str],
    texts: int,
    commits: int,
    old: str | None,
    new: str | None,
    remotes: list[str],
) -> None:
    line = {
        "time": int(time.time()),
        "ids": ids,
        "texts": texts,
        "commitsRewritten": commits,
        "oldHead": old,
        "newHead": new,
        "remotesHolding": remotes,
    }
    log = core.path / ".git" / "xbrain" / "purge.log"
    log.parent.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, sort_keys=True) + "\n")
