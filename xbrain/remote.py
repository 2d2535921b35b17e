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

import contextlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import layout
from .codec import digest, dump_yaml
from .errors import InvalidInputError, NotFoundError
from .git import CommitId, GitStore, private_umask, sweep_dead
from .intake import check_commit
from .messages import commit_message
from .model import parse_record
from .text import canonical_url
from .timestamps import later_of
from .urls import parse_url, redact_url, secret_parameter
from .view import LimitError, StoreConfig, View, catalog_entry, count_change, derived_files

if TYPE_CHECKING:
    from .store import Store

__all__ = ["merge_files", "validate_remote_url"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", re.ASCII)
RECORD_DIRS = (layout.RESOURCES_DIR + "/", layout.TOMBSTONES_DIR + "/")
DERIVED = ("index/", layout.RECEIPTS_DIR + "/", "ingestion/")


_SCP = re.compile(r"(?P<userinfo>[^/@:\s]+(?::[^/@\s]*)?)@(?P<host>[^/:\s]+):(?!//)")
CREDENTIALS = "Remote URLs must not embed credentials; use your ssh agent or git credential helper."


def validate_remote_url(url: str) -> str:
    """Any URL dulwich supports, but never with credentials or secret parameters.

    Messages never quote a credential (the URL is redacted).
    """
    if not isinstance(url, str) or not url.strip() or "\n" in url or "\0" in url:
        raise InvalidInputError("Give a remote URL or path.")
    if "://" in url:
        try:
            parsed = parse_url(url)
        except InvalidInputError:
            raise InvalidInputError(f"Invalid remote URL: {redact_url(url)}") from None
        if parsed.password or (parsed.protocol in ("https:", "http:") and parsed.username):
            raise InvalidInputError(CREDENTIALS)
        secret = secret_parameter(parsed)
        if secret:
            raise InvalidInputError(
                f'Remote URLs must not carry secret query parameters; remove "{secret}".'
            )
        return url
    scp = _SCP.match(url)  # user@host:path (ssh); user:password@host:path is refused
    if scp and ":" in scp.group("userinfo"):
        raise InvalidInputError(CREDENTIALS)
    return url


def validate_name(name: str) -> str:
    """A remote name git accepts."""
    if not _NAME.fullmatch(name):
        raise InvalidInputError("Invalid remote name; use letters, digits, '.', '_' or '-'.")
    return name


# -- the merge -----------------------------------------------------------------------------


def _record(
    view: View, rid: str, parsed: dict[str, dict[str, Any]] | None = None
) -> tuple[str, dict[str, Any], bytes] | None:
    for kind in ("resource", "tombstone"):
        path = layout.record_path(kind, rid)
        data = view.read(path)
        if data is not None:
            known = parsed.get(view.snap.blob_id(path) or "") if parsed else None
            return kind, known if known is not None else parse_record(kind, data), data
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


def merge_files(
    ours: View,
    theirs: View,
    dropped: list[dict[str, Any]] | None = None,
    parsed: dict[str, dict[str, Any]] | None = None,
) -> dict[str, bytes | None]:
    """The changes that turn ``ours`` into the merged tree (symmetric in its choices).

    ``dropped``, when given, receives one entry per id where the two sides held
    different revisions: which side was kept and what the other side had. ``parsed``
    holds records already parsed by the incoming check (blob id → record).
    """
    changes: dict[str, bytes | None] = {}
    merged: dict[str, tuple[str, dict[str, Any]]] = {}
    same = ours.snap.commit == theirs.snap.commit  # re-deriving one tree: read it once
    for rid in sorted(_ids(ours) | _ids(theirs)):
        a = _record(ours, rid, parsed)
        b = a if same else _record(theirs, rid, parsed)
        pick = a if b is None else b if a is None else (a if a[2] == b[2] else _winner(a, b))
        assert pick is not None
        if dropped is not None and a is not None and b is not None and a[2] != b[2]:
            lost, view = (b, theirs) if pick is a else (a, ours)
            dropped.append(
                {
                    "id": rid,
                    "kept": "local" if pick is a else "remote",
                    "dropped": {
                        "revision": digest(lost[1]),
                        "updatedAt": lost[1].get("updatedAt") or lost[1].get("deletedAt"),
                        "deleted": lost[0] == "tombstone",
                        "commit": view.snap.commit,
                    },
                }
            )
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
    # catalog, summary and URL index from the merged records
    entries = {rid: catalog_entry(kind, record) for rid, (kind, record) in merged.items()}
    live = {rid: r["source"]["url"] for rid, (kind, r) in merged.items() if kind == "resource"}
    want = derived_files(entries, live)
    if not merged and ours.read(layout.SUMMARY) is None and theirs.read(layout.SUMMARY) is None:
        del want[layout.SUMMARY]  # two new, empty stores: nothing to sum yet
    for directory in (layout.CATALOG_DIR, layout.URLS_DIR):  # shards no record needs go
        for name in {n for v in (ours, theirs) for n in v.snap.listdir(directory)}:
            out[f"{directory}/{name}"] = None
    out.update(want)
    return out


def _vanished(ours: View, theirs: View, now: str) -> dict[str, bytes | None]:
    """Records ``theirs`` lost without a tombstone (``git rm`` elsewhere): tombstones.

    A deleted resource gets a tombstone, so capture or pull cannot resurrect it; a
    tombstone removed by hand is kept.
    """
    changes: dict[str, bytes | None] = {}
    for rid in sorted(_ids(ours) - _ids(theirs)):
        record = _record(ours, rid)
        assert record is not None
        kind, value, data = record
        if kind == "resource":
            tombstone = {"id": rid, "deletedAt": later_of(now, value["updatedAt"])}
            changes[layout.record_path("tombstone", rid)] = dump_yaml(tombstone)
        else:
            changes[layout.record_path("tombstone", rid)] = data
    return changes


def check_limits(view: View, origin: str, settings: StoreConfig | None = None) -> None:
    """Refuse a pulled or cloned state that holds more than the limits.

    A pull is held to this device's limits (``settings``, see :func:`device`); a clone,
    which the user asked to restore as it is, to the remote's own.
    """
    settings = settings or view.config()
    totals = view.summary()
    entries = totals["resources"] + totals["tombstones"]
    if entries > settings.max_entries:
        raise LimitError(
            f"{origin} would leave {entries:,} resources and tombstones, over this store's "
            f"limit of {settings.max_entries:,}; raise it with xbrain config "
            "limits.maxEntries N and retry. Nothing changed."
        )
    if totals["bytes"] > settings.max_bytes:
        raise LimitError(
            f"{origin} would leave {totals['bytes']:,} bytes of records, over this store's "
            f"limit of {settings.max_bytes:,}; raise it with xbrain config limits.maxBytes N "
            "and retry. Nothing changed."
        )


def device(git: GitStore) -> StoreConfig:
    """The limits a pull is held to: the defaults, or what was raised on this device.

    They live in ``.git/config`` (never committed), so a remote cannot raise them: a
    remote's ``xbrain.yaml`` may win a merge, but it never widens what the next pull
    may bring.
    """
    raised = git.device_limits()
    return StoreConfig(
        max_entries=max(StoreConfig.max_entries, raised.get("maxEntries", 0)),
        max_bytes=max(StoreConfig.max_bytes, raised.get("maxBytes", 0)),
    )


def _derived_in_step(
    git: GitStore, ours: CommitId, head: CommitId, parsed: dict[str, dict[str, Any]] | None
) -> bool:
    """Whether ``head`` (a descendant of ``ours``) already carries the catalog, summary
    and URL index its records imply, judged from what changed since ``ours``.

    True for commits xbrain made; then a fast-forward need not re-derive the whole
    store (which parses every record). Anything else — a commit made with plain git, a
    derived file that disagrees — is False, and the caller re-derives everything.
    """
    old, new = View(git.snapshot(ours)), View(git.snapshot(head))
    if new.summary()["resources"] and not new.snap.listdir(layout.URLS_DIR):
        return False
    changed = {
        Path(p).stem
        for prefix in (layout.RESOURCES_DIR, layout.TOMBSTONES_DIR)
        for p in git.changed_files(ours, head, prefix)
    }
    for path in git.changed_files(ours, head, layout.CATALOG_DIR):  # no entry edited alone
        shard = Path(path).stem
        before = {k: v for k, v in old.catalog_shard(shard).items() if k not in changed}
        after = {k: v for k, v in new.catalog_shard(shard).items() if k not in changed}
        if before != after:
            return False
    totals = dict(old.summary())
    for rid in changed:
        found = _record(new, rid, parsed)
        want = catalog_entry(found[0], found[1]) if found else None
        if new.entry(rid) != want:
            return False
        count_change(totals, old.entry(rid), want)
        was = old.resource(rid)
        for url, live in (
            (was["source"]["url"] if was else None, False),
            (found[1]["source"]["url"] if found and found[0] == "resource" else None, True),
        ):
            if url is not None:
                canonical = canonical_url(url)
                ids = new.read_json(layout.urls_path(layout.url_shard(canonical)), {})
                if (rid in ids.get(canonical, ())) != (live or canonical == _url_of(found)):
                    return False
    return totals == new.summary()


def _url_of(found: tuple[str, dict[str, Any], bytes] | None) -> str | None:
    if found is None or found[0] != "resource":
        return None
    return canonical_url(found[1]["source"]["url"])


def _integrate(
    git: GitStore,
    ours: CommitId | None,
    theirs: CommitId,
    subject: str,
    agent: str | None,
    now: str,
    dropped: list[dict[str, Any]] | None = None,
    parsed: dict[str, dict[str, Any]] | None = None,
) -> tuple[str, CommitId]:
    """The commit ``main`` should move to after checking ``theirs``: (state, commit).

    Fast-forward: ``theirs`` itself, plus tombstones for records it dropped without one
    and a re-derived catalog when git users edited records. Otherwise a merge commit;
    ``dropped`` receives the revisions the merge did not keep.
    """
    when = int(time.time())
    if ours is None or git.is_ancestor(ours, theirs):
        head = theirs
        identity = View(git.snapshot(theirs)).config().identity
        if ours is not None:
            tombstones = _vanished(View(git.snapshot(ours)), View(git.snapshot(theirs)), now)
            if tombstones:
                message = commit_message(
                    "remote-pull",
                    [],
                    agent,
                    subject=f"{subject}: tombstones for "
                    f"{len(tombstones)} records removed without xbrain",
                )
                head = git.write_commit(head, tombstones, message, identity, when)
        view = View(git.snapshot(head))
        consistent = ours is not None and _derived_in_step(git, ours, head, parsed)
        fixes = {} if consistent else merge_files(view, view, parsed=parsed)
        if fixes:  # a commit made with plain git: re-derive the catalog etc.
            message = commit_message(
                "remote-pull", [], agent, subject=f"{subject}: re-derive index"
            )
            head = git.write_commit(head, fixes, message, identity, when)
        return "fast_forward" if ours is not None else "cloned", head
    identity = View(git.snapshot(ours)).config().identity
    changes = merge_files(View(git.snapshot(ours)), View(git.snapshot(theirs)), dropped, parsed)
    message = commit_message("remote-pull", [], agent, subject=f"{subject}: merge {theirs[:12]}")
    return "merged", git.write_commit(ours, changes, message, identity, when, merged=theirs)


# -- commands ------------------------------------------------------------------------------


def pull(store: Store, name: str) -> dict[str, Any]:
    """Fetch into a quarantine (outside the lock), then check, and fast-forward or merge.

    Nothing the remote sent enters the object store, the working tree or a ref before
    :func:`xbrain.intake.check_commit` accepted it; a merge over the limits is refused.
    """
    with GitStore(store.path) as git:
        url = git.remotes().get(name)
        if url is None:
            raise NotFoundError(f"No remote named {name}; add it with xbrain remote add.")
        with git.quarantine() as incoming:
            theirs = incoming.fetch(url, name)  # network I/O outside the store lock
            if theirs is None:
                return {"state": "remote_empty", "commit": None, "dropped": []}
            with store._session() as locked:
                ours = locked.head()
                assert ours is not None
                if ours == theirs or incoming.is_ancestor(theirs, ours):
                    locked.note_remote_head(name, theirs)
                    return {"state": "up_to_date", "commit": ours, "dropped": []}
                parsed: dict[str, dict[str, Any]] = {}
                check_commit(incoming, ours, theirs, f"remote {name}", parsed)
                locked.accept_objects(incoming)
                dropped: list[dict[str, Any]] = []
                state, head = _integrate(
                    locked,
                    ours,
                    theirs,
                    f"remote pull {name}",
                    store.agent,
                    store.clock(),
                    dropped,
                    parsed,
                )
                check_limits(View(locked.snapshot(head)), f"Pulling {name}", device(locked))
                paths = locked.changed_files(ours, head)
                identity = View(locked.snapshot(ours)).config().identity
                locked.move_main(ours, head, identity, f"remote pull {name}: {state}", paths=paths)
                locked.note_remote_head(name, theirs)
                locked.refresh_worktree(head, paths)
    return {"state": state, "commit": head, "dropped": dropped}


def verify(store: Store, name: str) -> dict[str, Any]:
    """Clone the remote aside (checked like any clone) and prove it restores completely.

    The copy lives under ``.git/xbrain/verify/`` and is removed afterwards; copies a
    killed verify left behind are removed by the next one.
    """
    from . import doctor

    with GitStore(store.path) as git:
        location = git.remotes().get(name)
        scratch = git.control_dir / "xbrain" / "verify"
    if location is None:
        raise NotFoundError(f"No remote named {name}; add it with xbrain remote add.")
    sweep_dead(scratch)
    with private_umask():
        scratch.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=scratch))
    try:
        target = work / "copy"
        try:
            clone_into(location, target, rederive=False)
        except InvalidInputError as exc:
            refused = {"code": "refused", "message": exc.message}
            return {
                "ok": False,
                "remote": name,
                "commit": None,
                "checked": None,
                "problems": [refused],
            }
        with GitStore(target) as copy:
            report = doctor.diagnose(copy, repair=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    problems = [p for p in report["problems"] if p["code"] not in ("untracked_file", "permissions")]
    return {
        "ok": not problems,
        "remote": name,
        "commit": report["commit"],
        "checked": report["checked"],
        "problems": problems,
    }


def clone_into(location: str, target: Path, *, rederive: bool = True) -> CommitId:
    """Restore a store from ``location`` into ``target`` (missing, or an empty directory).

    The repository is built in a private sibling directory: fetch ``main`` only, check
    every path and file it brings (:func:`xbrain.intake.check_commit`), re-derive the
    catalog (unless ``rederive`` is False, as ``verify`` wants the remote's own), write
    the working tree, then rename it into place. On any failure everything it created
    is removed and a directory it did not create is left as it was.
    """
    validate_remote_url(location)
    shown = redact_url(location)
    target = Path(os.path.abspath(target))
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InvalidInputError(f"Clone target is not empty: {target}")
    created = _missing_parents(target.parent)
    with private_umask():
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{target.name}.clone-", dir=target.parent))
    try:
        GitStore.init_private(temp)
        with GitStore(temp) as git:
            theirs = git.fetch(location)
            if theirs is None:
                raise InvalidInputError(f"{shown} has no main branch; it is not an xbrain store.")
            parsed: dict[str, dict[str, Any]] = {}
            check_commit(git, None, theirs, shown, parsed)
            head = theirs
            if rederive:
                _, head = _integrate(git, None, theirs, "clone", None, "", parsed=parsed)
            check_limits(View(git.snapshot(head)), f"Cloning {shown}")
            identity = View(git.snapshot(head)).config().identity
            git.move_main(None, head, identity, "clone")
            restored = View(git.snapshot(head)).config().limits()  # the user's, restored too
            for key, value in restored.items():
                if value > StoreConfig().limits()[key]:
                    git.set_device_limit(key, value)
            git.set_remote("origin", location)
            git.note_remote_head("origin", theirs)
            git.refresh_worktree(head, [p for p, _ in git.snapshot(head).files()], fresh=True)
        os.rename(temp, target)
        return head
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        for directory in reversed(created):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise


def _missing_parents(directory: Path) -> list[Path]:
    """The ancestors of ``directory`` (itself included) that do not exist, outermost first."""
    missing = []
    while not directory.exists() and directory.parent != directory:
        missing.append(directory)
        directory = directory.parent
    return list(reversed(missing))


def describe(git: GitStore) -> list[dict[str, str]]:
    """The configured remotes."""
    return [{"name": name, "url": url} for name, url in sorted(git.remotes().items())]
