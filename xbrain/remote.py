"""Backups and cross-device use through git remotes: add, push, pull (merge), verify, clone.

Network I/O happens outside the store lock; validation, the merge and the ref update
happen inside it. ``pull`` fast-forwards when it can; otherwise it makes a merge commit
whose tree is decided per resource id, the same whichever side pulls:

* a record only one side has is kept;
* two live versions: the newer ``updatedAt`` wins (tie: the greater revision digest);
* a tombstone beats an edit that is not newer than it; a newer edit restores;
* two tombstones: the later ``deletedAt`` (tie: the greater digest).

Receipts, ingestion state, the catalog and the summary are re-derived from the merged
records, never text-merged, so no conflict markers can exist. A remote commit whose
records do not validate is refused and nothing is merged.
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import layout
from .codec import digest
from .errors import InvalidInputError, NotFoundError, ProviderError, XbrainError
from .gitstore import CommitId, GitStore, fix_file_modes, private_umask
from .messages import commit_message
from .model import parse_record
from .urls import parse_url, secret_parameter
from .view import View, catalog_entry

if TYPE_CHECKING:
    from .store import Store

__all__ = ["merge_files", "validate_remote_url"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", re.ASCII)
RECORD_DIRS = (layout.RESOURCES_DIR + "/", layout.TOMBSTONES_DIR + "/")
DERIVED = ("index/", layout.RECEIPTS_DIR + "/", "ingestion/")


def validate_remote_url(url: str) -> str:
    """Any URL dulwich supports, but never with credentials or secret parameters."""
    if not isinstance(url, str) or not url.strip() or "\n" in url:
        raise InvalidInputError("Give a remote URL or path.")
    if "://" in url:
        try:
            parsed = parse_url(url)
        except InvalidInputError:
            raise InvalidInputError(f"Invalid remote URL: {url}") from None
        if parsed.password or (parsed.protocol in ("https:", "http:") and parsed.username):
            raise InvalidInputError(
                "Remote URLs must not embed credentials; "
                "use your ssh agent or git credential helper."
            )
        secret = secret_parameter(parsed)
        if secret:
            raise InvalidInputError(
                f'Remote URLs must not carry secret query parameters; remove "{secret}".'
            )
    return url


def validate_name(name: str) -> str:
    """A remote name git accepts."""
    if not _NAME.fullmatch(name):
        raise InvalidInputError("Invalid remote name; use letters, digits, '.', '_' or '-'.")
    return name


# -- the merge -----------------------------------------------------------------------------


def _record(view: View, rid: str) -> tuple[str, dict[str, Any], bytes] | None:
    for kind in ("resource", "tombstone"):
        data = view.read(layout.record_path(kind, rid))
        if data is not None:
            return kind, parse_record(kind, data), data
    return None


def _winner(
    a: tuple[str, dict[str, Any], bytes], b: tuple[str, dict[str, Any], bytes]
) -> tuple[str, dict[str, Any], bytes]:
    kind_a, kind_b = a[0], b[0]
    if kind_a == kind_b:
        field = "updatedAt" if kind_a == "resource" else "deletedAt"
        return max(a, b, key=lambda r: (r[1][field], digest(r[1])))
    resource, tombstone = (a, b) if kind_a == "resource" else (b, a)
    return resource if resource[1]["updatedAt"] > tombstone[1]["deletedAt"] else tombstone


def _ids(view: View) -> set[str]:
    return {Path(p).stem for prefix in RECORD_DIRS for p, _ in view.snap.files(prefix.rstrip("/"))}


def merge_files(ours: View, theirs: View) -> dict[str, bytes | None]:
    """The changes that turn ``ours`` into the merged tree (symmetric in its choices)."""
    changes: dict[str, bytes | None] = {}
    merged: dict[str, tuple[str, dict[str, Any]]] = {}
    for rid in sorted(_ids(ours) | _ids(theirs)):
        a, b = _record(ours, rid), _record(theirs, rid)
        pick = a if b is None else b if a is None else (a if a[2] == b[2] else _winner(a, b))
        assert pick is not None
        kind, record, data = pick
        merged[rid] = (kind, record)
        other = "tombstone" if kind == "resource" else "resource"
        if ours.read(layout.record_path(kind, rid)) != data:
            changes[layout.record_path(kind, rid)] = data
        if ours.read(layout.record_path(other, rid)) is not None:
            changes[layout.record_path(other, rid)] = None
    ours_files, theirs_files = dict(ours.snap.files()), dict(theirs.snap.files())
    for path in sorted(set(ours_files) | set(theirs_files)):
        if path.startswith(RECORD_DIRS) or path.startswith(DERIVED):
            continue
        if ours_files.get(path) != theirs_files.get(path):
            candidates = [d for d in (ours.read(path), theirs.read(path)) if d is not None]
            changes[path] = max(candidates)
    changes.update(_derived(ours, theirs, merged))
    return {path: data for path, data in changes.items() if ours.read(path) != data}


def _json_files(view: View, directory: str) -> dict[str, Any]:
    return {
        name: view.read_json(f"{directory}/{name}", {})
        for name in view.snap.listdir(directory)
        if name.endswith(".json")
    }


def _derived(
    ours: View, theirs: View, merged: dict[str, tuple[str, dict[str, Any]]]
) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    revisions = {rid: digest(record) for rid, (_, record) in merged.items()}
    # receipts: keep an acknowledgement only if it is for the merged revision
    a, b = _json_files(ours, layout.RECEIPTS_DIR), _json_files(theirs, layout.RECEIPTS_DIR)
    for name in sorted(set(a) | set(b)):
        bucket: dict[str, str] = {}
        for rid in sorted(set(a.get(name, {})) | set(b.get(name, {}))):
            for side in (a.get(name, {}), b.get(name, {})):
                if side.get(rid) is not None and side[rid] == revisions.get(rid, side[rid]):
                    bucket[rid] = side[rid]
        out[f"{layout.RECEIPTS_DIR}/{name}"] = layout.dump_json(bucket)
    # pull progress: the further one (generation, then digest)
    a, b = _json_files(ours, layout.SOURCES_DIR), _json_files(theirs, layout.SOURCES_DIR)
    for name in sorted(set(a) | set(b)):
        options = [v for v in (a.get(name), b.get(name)) if v is not None]
        best = max(options, key=lambda v: (v.get("generation", 0), digest(v)))
        out[f"{layout.SOURCES_DIR}/{name}"] = layout.dump_json(best)
    # capture hashes: per id, the later (then greater) entry
    a, b = _json_files(ours, layout.CAPTURES_DIR), _json_files(theirs, layout.CAPTURES_DIR)
    for name in sorted(set(a) | set(b)):
        entries: dict[str, Any] = {}
        for rid in sorted(set(a.get(name, {})) | set(b.get(name, {}))):
            options = [s[rid] for s in (a.get(name, {}), b.get(name, {})) if rid in s]
            entries[rid] = max(options, key=lambda v: (v.get("updatedAt") or "", digest(v)))
        out[f"{layout.CAPTURES_DIR}/{name}"] = layout.dump_catalog(entries)
    # the queue: live resources only, in id order
    queue_a, queue_b = ours.read_json(layout.PENDING, {}), theirs.read_json(layout.PENDING, {})
    queue = {}
    for rid in sorted(set(queue_a) | set(queue_b)):
        if merged.get(rid, ("",))[0] == "resource":
            options = [q[rid] for q in (queue_a, queue_b) if rid in q]
            queue[rid] = max(options, key=digest)
    out[layout.PENDING] = layout.dump_json(queue) if queue else None
    # catalog and summary from the merged records
    shards: dict[str, dict[str, Any]] = {}
    summary = {"resources": 0, "tombstones": 0, "bytes": 0}
    for rid, (kind, record) in merged.items():
        entry = catalog_entry(kind, record)
        shards.setdefault(layout.shard(rid), {})[rid] = entry
        summary[kind + "s"] += 1
        summary["bytes"] += entry["bytes"]
    names = {
        n.removesuffix(".json") for v in (ours, theirs) for n in v.snap.listdir(layout.CATALOG_DIR)
    }
    for shard in sorted(names | set(shards)):
        out[layout.catalog_path(shard)] = (
            layout.dump_catalog(shards[shard]) if shard in shards else None
        )
    if any(summary.values()) or ours.read(layout.SUMMARY) or theirs.read(layout.SUMMARY):
        out[layout.SUMMARY] = layout.dump_json(summary)
    return out


def validate_incoming(git: GitStore, ours: CommitId, theirs: CommitId) -> None:
    """Every record the remote changed must validate; else nothing is merged."""
    view = View(git.snapshot(theirs))
    for prefix in (layout.RESOURCES_DIR, layout.TOMBSTONES_DIR):
        for path in git.changed_files(ours, theirs, prefix):
            data = view.read(path)
            if data is None:
                continue
            rid = Path(path).stem
            kind = "resource" if prefix == layout.RESOURCES_DIR else "tombstone"
            try:
                record = parse_record(kind, data)
                if record["id"] != rid or layout.record_path(kind, rid) != path:
                    raise InvalidInputError("the file name does not match its id")
            except XbrainError as exc:
                raise InvalidInputError(
                    f"Remote commit {theirs[:12]} has an invalid record {path}: {exc}; "
                    "nothing merged."
                ) from None


# -- commands ------------------------------------------------------------------------------


def pull(store: Store, name: str) -> dict[str, Any]:
    """Fetch (outside the lock), then fast-forward or merge (inside it)."""
    with GitStore(store.path) as git:
        location = git.remotes().get(name)
        if location is None:
            raise NotFoundError(f"No remote named {name}; add it with xbrain remote add.")
        theirs = git.fetch(name)
    if theirs is None:
        return {"state": "remote_empty", "commit": None}
    with store._session() as git:
        ours = git.head()
        assert ours is not None
        if ours == theirs or git.is_ancestor(theirs, ours):
            return {"state": "up_to_date", "commit": ours}
        validate_incoming(git, ours, theirs)
        identity = View(git.snapshot()).config().identity
        if git.is_ancestor(ours, theirs):
            git.move_main(ours, theirs, identity, f"remote pull {name}: fast-forward")
            git.refresh_worktree(
                theirs,
                sorted({p for p, _ in git.snapshot(theirs).files()} | set(git.index_paths())),
            )
            state, head = "fast_forward", theirs
            fixes = merge_files(View(git.snapshot(theirs)), View(git.snapshot(theirs)))
            if fixes:  # a commit made with plain git: re-derive the catalog etc.
                message = commit_message(
                    "remote-pull", [], None, subject=f"remote pull {name}: re-derive index"
                )
                head = git.commit(theirs, fixes, message, identity, int(time.time()))
                git.refresh_worktree(head, list(fixes))
        else:
            changes = merge_files(View(git.snapshot(ours)), View(git.snapshot(theirs)))
            message = commit_message(
                "remote-pull", [], store.agent, subject=f"remote pull {name}: merge {theirs[:12]}"
            )
            head = git.commit(ours, changes, message, identity, int(time.time()), merged=theirs)
            git.refresh_worktree(head, sorted(set(changes)))
            state = "merged"
    return {"state": state, "commit": head}


def verify(store: Store, name: str) -> dict[str, Any]:
    """Clone the remote into a temporary directory and check it restores completely."""
    from . import doctor

    with GitStore(store.path) as git:
        location = git.remotes().get(name)
    if location is None:
        raise NotFoundError(f"No remote named {name}; add it with xbrain remote add.")
    with tempfile.TemporaryDirectory(prefix="xbrain-verify-") as tmp:
        target = Path(tmp) / "copy"
        clone_into(location, target)
        with GitStore(target) as copy:
            report = doctor.diagnose(copy, repair=False)
    problems = [p for p in report["problems"] if p["code"] not in ("untracked_file", "permissions")]
    return {
        "ok": not problems,
        "remote": name,
        "commit": report["commit"],
        "checked": report["checked"],
        "problems": problems,
    }


def clone_into(location: str, target: Path) -> None:
    """Clone a store (working tree included), privately."""
    import io

    from dulwich import porcelain

    validate_remote_url(location)
    if target.exists() and any(target.iterdir()):
        raise InvalidInputError(f"Clone target is not empty: {target}")
    with private_umask():
        try:
            repo = porcelain.clone(location, str(target), checkout=True, errstream=io.BytesIO())
        except Exception as exc:  # dulwich raises many kinds for unreachable remotes
            raise ProviderError(f"Could not clone {location}: {type(exc).__name__}.") from None
        try:
            config = repo.get_config()
            config.set((b"core",), b"sharedRepository", b"0600")
            config.set((b"core",), b"fsync", b"objects,reference")
            config.set((b"gc",), b"auto", b"0")
            config.write_to_path()
        finally:
            repo.close()
    fix_file_modes(target)  # dulwich's checkout sets modes from the tree (0644)
    if not (target / layout.MARKER).exists():
        raise InvalidInputError(f"{location} is not an xbrain store.")


def describe(git: GitStore) -> list[dict[str, str]]:
    """The configured remotes."""
    return [{"name": name, "url": url} for name, url in sorted(git.remotes().items())]
