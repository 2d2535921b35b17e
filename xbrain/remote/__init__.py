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
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core import (
    NO_LIMIT,
    CommitId,
    Core,
    GitStore,
    PackBound,
    StoreConfig,
    View,
    local_path,
    new_store_path,
    private_umask,
    refuse_hand_edits,
    sweep_dead,
)
from ..core.registry import largest_file
from ..errors import (
    ConflictError,
    InvalidInputError,
    NotFoundError,
    ProviderError,
    XbrainError,
)
from ..inputs import read_file
from ..kinds import resource as resource_kind
from ..messages import PURGE_TRAILER
from ..urls import redact_url
from .backup import bundle_bound, bundle_file
from .intake import check_commit, check_outgoing
from .merge import integrate
from .received import received
from .settings import (
    check_limits,
    describe,
    device,
    stored_location,
    validate_name,
    validate_remote_url,
)

__all__ = ["add", "clone_into", "pull", "push", "remotes", "remove", "verify"]

Diagnose = Callable[[GitStore], dict[str, Any]]


def add(core: Core, name: str, url: str) -> dict[str, Any]:
    """Remember a git remote (a path or URL you chose) for backups or other devices."""
    validate_name(name)
    validate_remote_url(url)
    url = stored_location(url, core.path)
    with core.session() as git:
        if name in git.remotes():
            raise ConflictError(f"A remote named {name} exists; remove it first.")
        git.set_remote(name, url)
        return {"remotes": describe(git)}


def remove(core: Core, name: str) -> dict[str, Any]:
    """Forget a remote (nothing on the remote changes)."""
    core.existing()
    with core.session() as git:
        if name not in git.remotes():
            raise NotFoundError(f"No remote named {name}.")
        git.set_remote(name, None)
        return {"remotes": describe(git)}


def remotes(core: Core) -> dict[str, Any]:
    """The configured remotes."""
    if not core.exists():
        core.check_dir()
        return {"remotes": []}
    with core.git() as git:
        return {"remotes": describe(git)}


def _new_or_empty(path: Path) -> bool:
    """Nothing there yet, or an empty folder (a mount point, a folder made for it)."""
    if not os.path.lexists(path):
        return True
    try:
        return path.is_dir() and not path.is_symlink() and not any(path.iterdir())
    except OSError:
        return False


def push(
    core: Core, name: str = "origin", *, force_with_lease: bool = False, team: str | None = None
) -> dict[str, Any]:
    """Push main to a remote (a backup); refused if the remote has diverged.

    ``force_with_lease``: replace the history ``xbrain purge`` removed, only if the remote
    still holds exactly the commit it held then. ``team``: the team this store is the
    clone of; what it would send is checked as the members' pulls check it first, and
    a path on this machine that is missing or an empty folder (a share not mounted) is
    a failed push (ProviderError), where a backup's is started as a bare repository."""
    core.existing()
    with core.git() as git:
        url = git.remotes().get(name)
        if url is None:
            raise NotFoundError(f"No remote named {name}; add it with xbrain remote add.")
        local = local_path(url)
        if local is not None and os.path.isabs(local) and _new_or_empty(Path(local)):
            if team is not None:  # never a new team: the share is missing, or unmounted
                raise ProviderError(
                    f"The team's repository {redact_url(url)} is missing or empty (a share "
                    "not mounted?); nothing was pushed. xbrain never starts a team's "
                    "repository there: mount it, or make it with git init --bare "
                    "--shared=group."
                )
            GitStore.init_bare(Path(local))  # a backup on a local disk: start it
        if local is not None and _main_checked_out(Path(local)):
            raise ConflictError(
                f"Refusing to push into {redact_url(url)}: main is checked out there (a store, "
                "or another working tree) and its files would fall behind it. Push to a bare "
                "repository, or run xbrain remote pull in that store."
            )
        lease = git.history().purge_lease(name)
        if force_with_lease and lease is None:
            raise InvalidInputError(
                f"Nothing to replace on {name}: no purge removed history it holds; push "
                "without --force-with-lease."
            )
        if lease is not None and not force_with_lease:
            raise ConflictError(
                f"{name} still holds history xbrain purge removed; run xbrain remote push "
                f"--force-with-lease {name} to replace it there."
            )
        head = git.head()
        if team is not None and head is not None:
            check_outgoing(git, git.history().remote_refs().get(name), head, team)
        git.push(name, lease, retry=None if team is None else f"xbrain team sync {team}")
        if lease is not None:
            git.history().clear_purge_lease(name)
        return {"pushed": name, "commit": git.head()}


def _main_checked_out(folder: Path) -> bool:
    """Whether ``folder`` is a repository with a working tree whose HEAD is ``main``
    (git's own ``receive.denyCurrentBranch`` refuses pushing there)."""
    try:
        data = read_file(folder / ".git" / "HEAD", 4096, "HEAD is too big")
    except XbrainError:  # no such file (a bare repository), or not one git reads
        return False
    return data.strip() == b"ref: refs/heads/main"


def _bound() -> PackBound:
    """What a remote may send: history has no bound, but no object of a valid store is
    larger than its largest kind of file, so a pack declaring one is refused unread."""
    return PackBound(NO_LIMIT, NO_LIMIT, largest_file(), NO_LIMIT)


def pull(core: Core, name: str, team: str | None = None) -> dict[str, Any]:
    """Fetch into a quarantine (outside the lock), then check, and fast-forward or merge.

    Nothing the remote sent enters the object store, the working tree or a ref before
    :func:`xbrain.remote.intake.check_commit` accepted it; a merge over the limits is refused.
    ``team``: the team this store is the clone of (refusals name it).
    """
    with core.git() as git:
        url = git.remotes().get(name)
        if url is None:
            raise NotFoundError(f"No remote named {name}; add it with xbrain remote add.")
        if git.history().purge_lease(name) is not None:
            raise ConflictError(
                f"{name} still holds history xbrain purge removed, and a pull would merge it "
                f"back; run xbrain remote push --force-with-lease {name} to replace it there."
            )
        with git.quarantine() as incoming:
            label = name if team is None else f"team {team}"
            theirs = incoming.fetch(url, _bound(), label)  # network I/O outside the store lock
            if theirs is None:
                return {"state": "remote_empty", "commit": None, "dropped": []}
            with core.session() as locked:
                ours = locked.head()
                assert ours is not None
                if ours == theirs or incoming.is_ancestor(theirs, ours):
                    locked.note_remote_head(name, theirs)
                    return {"state": "up_to_date", "commit": ours, "dropped": []}
                if not incoming.is_ancestor(ours, theirs):
                    _refuse_purged(incoming, locked, ours, theirs, name)
                parsed: dict[str, dict[str, Any]] = {}
                limits = device(locked)
                origin = f"team {team}" if team is not None else f"remote {name}"
                check_commit(incoming, ours, theirs, origin, parsed, limits.max_entries)
                locked.accept_objects(incoming)
                dropped: list[dict[str, Any]] = []
                command = f"team pull {team}" if team is not None else f"remote pull {name}"
                state, head = integrate(
                    locked,
                    ours,
                    theirs,
                    command,
                    core.agent,
                    core.clock(),
                    dropped,
                    parsed,
                    core.identity,
                )
                check_limits(View(locked.snapshot(head)), f"Pulling {name}", limits)
                paths = locked.changed_files(ours, head)
                edited = locked.hand_edits(locked.snapshot(ours), paths, locked.snapshot(head).read)
                refuse_hand_edits(locked, edited)
                identity = View(locked.snapshot(ours)).config().identity
                locked.move_main(ours, head, identity, f"{command}: {state}", paths=paths)
                locked.note_remote_head(name, theirs)
                locked.refresh_worktree(head, paths)
                got = received(View(locked.snapshot(ours)), View(locked.snapshot(head)), paths)
    return {"state": state, "commit": head, "dropped": dropped, "received": got}


def _refuse_purged(
    incoming: GitStore, local: GitStore, ours: CommitId, theirs: CommitId, name: str
) -> None:
    """A purge on another device rewrote history this store still holds: merging would
    bring the purged data back, so the store must be cloned again."""
    for old in incoming.history().trailer_values(theirs, PURGE_TRAILER, local.has_commit):
        if old == ours or (local.has_commit(old) and local.is_ancestor(CommitId(old), ours)):
            raise ConflictError(
                f"{name} holds a history rewritten by xbrain purge on another device; this "
                "store still has the purged data, and merging would bring it back. Clone the "
                "store again (xbrain clone) and remove this copy."
            )


def verify(core: Core, name: str, diagnose: Diagnose) -> dict[str, Any]:
    """Clone the remote aside (checked like any clone) and prove it restores completely.

    The copy lives under ``.git/xbrain/verify/`` and is removed afterwards; copies a
    killed verify left behind are removed by the next one. ``diagnose`` checks the copy
    (``doctor``'s checks, handed in so that remotes and doctor stay independent).
    """
    with core.git() as git:
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
            clone_into(location, target, rederive=False, scratch=True)
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
            report = diagnose(copy)
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


def clone_into(
    location: str,
    target: Path,
    *,
    rederive: bool = True,
    resources: list[dict[str, Any]] | None = None,
    scratch: bool = False,
    team: str | None = None,
) -> CommitId:
    """Restore a store from ``location`` into ``target`` (missing, or an empty directory);
    ``location`` may be a bundle file ``backup create`` wrote, read through the same checks.

    The repository is built in a private sibling directory: fetch ``main`` only, check
    every path and file it brings (:func:`xbrain.remote.intake.check_commit`), re-derive the
    catalog (unless ``rederive`` is False, as ``verify`` wants the remote's own), write
    the working tree, then rename it into place. On any failure everything it created
    is removed and a directory it did not create is left as it was.

    ``resources``, when given, receives the clone's live resources as the check parsed
    them (so the caller can index them without reading them back). ``scratch``: a copy
    ``verify`` makes in the store's own ``.git``, the one place a store may be made
    inside another. ``team``: the team this is the clone of, checked as its pulls are
    (records dated ahead too; refusals name it).
    """
    validate_remote_url(location)
    shown = redact_url(location)
    target = Path(os.path.abspath(target))
    # a link's directory; never inside another store
    where = target if scratch else new_store_path(target)
    if where.exists() and (not where.is_dir() or any(where.iterdir())):
        raise InvalidInputError(f"Clone target is not empty: {target}")
    created = _missing_parents(where.parent)
    with private_umask():
        where.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{where.name}.clone-", dir=where.parent))
    try:
        GitStore.init_private(temp)
        with GitStore(temp) as git:
            bundle = bundle_file(location)  # a backup create's file, read as one
            theirs: CommitId | None
            if bundle is not None:
                theirs = git.bundles().read_bundle(bundle, bundle_bound(), f"The bundle {shown}")
            else:
                theirs = git.fetch(location, _bound())
            if theirs is None:
                raise InvalidInputError(f"{shown} has no main branch; it is not an xbrain store.")
            parsed: dict[str, dict[str, Any]] = {}
            origin = f"team {team}" if team is not None else shown
            check_commit(git, None, theirs, origin, parsed, dated=team is not None)
            head = theirs
            if rederive:
                _, head = integrate(git, None, theirs, "clone", None, "", parsed=parsed)
            check_limits(View(git.snapshot(head)), f"Cloning {shown}")
            identity = View(git.snapshot(head)).config().identity
            git.move_main(None, head, identity, "clone")
            restored = View(git.snapshot(head)).config().limits()  # the user's, restored too
            for key, value in restored.items():
                if value > StoreConfig().limits()[key]:
                    git.set_device_limit(key, value)
            if bundle is None:  # a bundle is a snapshot, not a remote to pull from
                git.set_remote("origin", stored_location(location, where))
                git.note_remote_head("origin", theirs)
            git.refresh_worktree(head, [p for p, _ in git.snapshot(head).files()], fresh=True)
            if resources is not None:  # the live resources, as the check parsed them
                for _, blob in git.snapshot(head).files(resource_kind.DIRECTORY):
                    record = parsed.get(blob)
                    if record is not None:
                        resources.append(record)
        os.rename(temp, where)
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
