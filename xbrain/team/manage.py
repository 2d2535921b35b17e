"""``xbrain team add|list|remove|pull``: team stores cloned into the teams folder.

``add`` clones through ``xbrain clone``'s gate (every path, file and record of the team
repository checked before anything is written, as the team's pulls check them: a record
dated more than a day ahead too; on any failure nothing is left behind)
and builds the clone's own derived indexes, so reading it later costs one more index
lookup, never a rebuild. ``pull`` is ``remote pull origin`` in the team store (its
merges read ``team pull NAME``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

from ..core import private_umask
from ..errors import ConflictError, NotFoundError, ProviderError, XbrainError
from ..remote.settings import validate_remote_url
from ..store import Store, clone
from ..timestamps import now_timestamp
from ..urls import redact_url
from .hidden import doubted, in_force, refresh
from .place import Layer, team_layers, validate_team_name
from .syncstate import note_sync, read_sync
from .trust import check_arrivals

__all__ = [
    "add",
    "describe",
    "list_teams",
    "pull",
    "pull_all",
    "pull_first",
    "push",
    "remove",
    "sweep_removals",
    "sync",
    "team_path",
]


def team_path(root: Path, name: str) -> Path:
    """The folder of team ``name``, which must exist (else exit 3)."""
    validate_team_name(name)
    path = Path(root) / name
    if path.is_symlink() or not (path / ".git").is_dir():
        raise NotFoundError(f"No team named {name}; add it with xbrain team add {name} URL.")
    return path


def add(root: Path, name: str, url: str, cache_dir: Path | None = None) -> dict[str, Any]:
    """Clone the team store at ``url`` as team ``name``."""
    validate_team_name(name)
    validate_remote_url(url)
    target = Path(root) / name
    if os.path.lexists(target):
        raise ConflictError(f"A team named {name} exists; remove it first.")
    made = [p for p in (Path(root), *Path(root).parents) if not os.path.lexists(p)]
    with private_umask():
        Path(root).mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        clone(url, target, None, cache_dir, team=name)  # checked as its pulls are
    except OSError as exc:  # another add of the same name won the rename
        raise ConflictError(f"A team named {name} exists; remove it first.") from exc
    except BaseException:
        # nothing left behind: not even the teams folder, nor the data folder above it,
        # this add made (each only while empty: another process may have used it since)
        with contextlib.suppress(OSError):
            for folder in made:
                folder.rmdir()
        raise
    note_sync(target, lastSync=now_timestamp(), lastError=None)
    # what recall showed is recorded once, by the personal store (the merged answer)
    Store(target).set_telemetry(False)
    with Store(target).core.git() as git:
        head = git.head()
    check_arrivals(target, None, head)
    return {"team": describe(Layer(name, str(target))), "untrusted": doubted(target)}


def describe(layer: Layer) -> dict[str, Any]:
    """A team as ``team list`` shows it."""
    store = Store(Path(layer.path))
    remotes = {r["name"]: r["url"] for r in store.remote_list()["remotes"]}
    sync = read_sync(layer.path)
    with store.core.git() as git:
        head = git.head()
    listed = in_force(layer.path)
    url = remotes.get("origin")
    return {
        "name": layer.name,
        "layer": layer.label,
        "url": redact_url(url) if url else None,
        "path": layer.path,
        "commit": head,
        "reviewers": listed,
        "lastSync": sync.get("lastSync"),
        "lastError": sync.get("lastError"),
    }


def list_teams(root: Path | None) -> dict[str, Any]:
    """Every team of this device."""
    return {"teams": [describe(layer) for layer in team_layers(root)]}


def remove(root: Path, name: str) -> dict[str, Any]:
    """Forget team ``name``: its local clone is removed (the team repository is
    untouched). Renamed aside first, so no reader ever sees half of it."""
    path = team_path(root, name)
    aside = Path(root) / f".{name}.removing-{os.getpid()}"
    os.rename(path, aside)
    shutil.rmtree(aside, ignore_errors=True)
    return {"removed": name, "teams": list_teams(root)["teams"]}


def pull(
    root: Path, name: str, cache_dir: Path | None = None, identity: str | None = None
) -> dict[str, Any]:
    """Fetch the team repository and fast-forward or merge the local layer (a merge
    commit made as ``identity``: the member's); the outcome (or the error) is
    remembered for ``team list`` and ``status``."""
    path = team_path(root, name)
    store = Store(path, cache_dir=cache_dir)
    store.core.identity = identity
    with store.core.git() as git:
        before = git.head()
    try:
        result = store.remote_pull("origin", team=name)
    except XbrainError as exc:
        note_sync(path, lastAttempt=now_timestamp(), lastError=exc.message)
        raise
    note_sync(path, lastSync=now_timestamp(), lastAttempt=now_timestamp(), lastError=None)
    result.pop("remote", None)
    check_arrivals(path, before, result.get("commit"))
    hidden = set(refresh(path)["hidden"])
    doubts = doubted(path)
    received = result.get("received")
    if isinstance(received, dict):  # one answer per record: the team's, as reads give it
        listed = {str(d.get("id")) for d in doubts}
        received["entries"] = [
            {**e, "trust": _trust(e, listed, hidden)} for e in received["entries"]
        ]
    return {"team": name, **result, "untrusted": doubts}


def _trust(entry: dict[str, Any], listed: set[str], hidden: set[str]) -> str:
    """A team entry's trust, as reads give it: ``team`` (read as the team's),
    ``untrusted`` (no reviewer vouches for it: listed under ``untrusted``; or stored
    untrusted, which stays so), ``proposed`` (read once a reviewer accepts it)."""
    if entry["id"] in listed:
        return "untrusted"
    from .layers import layer_trust

    trust = layer_trust(entry)
    return "proposed" if trust == "team" and entry["id"] in hidden else trust


def pull_first(
    root: Path, name: str, done: str, cache_dir: Path | None = None, identity: str | None = None
) -> ProviderError | None:
    """Pull team ``name`` before changing or listing it (a share, a review). A team that
    cannot be reached is normal: the change is made on (the list answers from) the last
    pull and the next sync sends it; its error is returned (None: pulled). Any other
    failure (a pull the team's commits made refuse, a busy clone) is raised with its own
    exit code, saying that nothing was ``done``: a change made on a clone that cannot
    take the team's newest commits could never be pushed."""
    try:
        pull(root, name, cache_dir, identity)
    except ProviderError as exc:
        return exc
    except XbrainError as exc:
        raise type(exc)(
            f"Could not pull team {name} first, so nothing was {done}: {exc.message}"
        ) from exc
    return None


def pull_all(
    root: Path, cache_dir: Path | None = None, identity: str | None = None
) -> dict[str, Any]:
    """Pull every team; one unreachable team is reported, never fatal (offline is
    normal): ``pulled`` and ``failed`` (name, error, exit code)."""
    pulled, failed = [], []
    for layer in team_layers(root):
        try:
            pulled.append(pull(root, layer.name, cache_dir, identity))
        except XbrainError as exc:
            failed.append({"team": layer.name, "error": exc.message, "code": exc.code})
    return {"pulled": pulled, "failed": failed}


def sweep_removals(root: Path) -> None:
    """Remove what a killed ``team remove`` left renamed aside."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            if entry.name.startswith(".") and ".removing-" in entry.name:
                shutil.rmtree(entry.path, ignore_errors=True)


def push(root: Path, name: str, cache_dir: Path | None = None) -> dict[str, Any]:
    """Push the team's clone (what shares and reviews committed while the team could
    not be reached); nothing to push changes nothing."""
    path = team_path(root, name)
    store = Store(path, cache_dir=cache_dir)
    try:
        result = store.remote_push("origin", team=name)
    except XbrainError as exc:
        note_sync(path, lastAttempt=now_timestamp(), lastError=exc.message, ahead=True)
        raise
    note_sync(path, lastPush=now_timestamp(), lastError=None, ahead=False)
    return {"team": name, "pushed": True, "commit": result["commit"]}


def sync(
    root: Path,
    cache_dir: Path | None = None,
    name: str | None = None,
    identity: str | None = None,
) -> dict[str, Any]:
    """Pull, then push, every team (or ``name``, which must exist: else exit 3):
    ``synced`` and ``failed`` (offline is normal: a team that cannot be reached is
    listed, never fatal)."""
    if name is not None:
        team_path(root, name)
    synced, failed = [], []
    names = [name] if name is not None else [layer.name for layer in team_layers(root)]
    for each in names:
        try:
            pulled = pull(root, each, cache_dir, identity)
            pushed = push(root, each, cache_dir)
        except XbrainError as exc:
            failed.append({"team": each, "error": exc.message, "code": exc.code})
            continue
        synced.append({**pulled, "pushed": pushed["pushed"], "commit": pushed["commit"]})
    return {"synced": synced, "failed": failed}
