"""Trees from outside are hostile until checked: the gate every incoming commit passes.

A remote (``remote pull``, its merge, ``clone``, ``remote verify``) can hand over any
tree git can encode: ``..`` or ``.git`` entries, symbolic links, submodules, files no
store has, records that do not parse. ``check_commit`` walks what a commit brings
before anything of it is written, refs and working tree included, and refuses the whole
commit at the first problem, naming the path:

* every path component is a plain name (:mod:`xbrain.paths`);
* every entry is a regular, non-executable file (no links, submodules, ``100755``);
* every path has a place in the store's layout (:func:`xbrain.core.registry.classify`);
* every file is within its size bound, every record parses and sits at its own path,
  and ``xbrain.yaml``, receipts and ingestion state validate against ``schema/``;
* every skill the commit touches passes doctor's integrity check (each file's hash
  against its manifest, the canonical hash, the revision id, the chain), and every
  revision the two histories had in common is still there, byte for byte: a revision is
  immutable, so a remote can add revisions but never change or remove one;
* nothing it brings is dated more than a day ahead of this machine's clock: a skill
  state's times always, and on a pull (a base to merge into) every record's clock
  (``updatedAt``, a tombstone's ``deletedAt``), which would otherwise win every
  last-writer-wins merge after it and sort first. A clone restores a store as it is.

A push to a team goes through the same gate first (``check_outgoing``): what every
member's pull would refuse, such as one record dated 2099, would otherwise lock the
whole team out of pulling until it is removed.
"""

from __future__ import annotations

import json
from typing import Any

from .. import kinds  # noqa: F401  (the built-in record kinds register themselves)
from ..core import FILE_MODE, CommitId, GitStore, View, layout
from ..core.config import DEFAULT_MAX_ENTRIES
from ..core.registry import classify, content_problem, max_bytes, record_kinds
from ..errors import CorruptStoreError, InvalidInputError, ProviderError
from ..kinds import skill as skill_kind
from ..kinds.skillcheck import skill_problems
from ..paths import component_problem

__all__ = ["WALK_PER_RECORD", "check_commit", "check_outgoing", "dated_ahead", "horizon"]

# trees and entries a check may walk for each record the store may hold: a store at its
# limit holds one file per record, its shard folders and catalog, URL and entry files
# (entries and skills do not count toward the limit): 1,000,000 at the default 10,000
WALK_PER_RECORD = 100

_MODES = {0o120000: "a symbolic link", 0o160000: "a submodule (gitlink)"}


def _shown(parts: tuple[bytes, ...]) -> str:
    return json.dumps(b"/".join(parts).decode("utf-8", "backslashreplace"))


def _refuse(origin: str, shown: str, why: str) -> InvalidInputError:
    return InvalidInputError(f"Refused {origin}: {shown} is {why}; nothing changed.")


def check_commit(
    git: GitStore,
    base: CommitId | None,
    commit: CommitId,
    origin: str,
    parsed: dict[str, dict[str, Any]] | None = None,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    *,
    dated: bool = False,
) -> list[str]:
    """Check what ``commit`` brings on top of ``base`` (None: all of it); its paths.

    ``origin`` names where it came from in messages (``remote origin``, a URL).
    Raises InvalidInputError naming the first refused path. ``parsed``, when given,
    receives each record parsed on the way (blob id → record), so the merge that
    follows does not parse it again. The walk is held to ``WALK_PER_RECORD`` trees and
    entries for each of the ``max_entries`` records the store may hold (this device's
    limit). An object the commit needs that is missing or damaged is the remote's
    damage (ProviderError), not the store's. Records dated more than a day ahead are
    refused when ``base`` is given (a pull) or ``dated`` (a team's clone, which its
    next pull would refuse; a plain clone restores a store as it is).
    """
    try:
        walk = WALK_PER_RECORD * max_entries
        return _check(git, base, commit, origin, parsed, walk, outgoing=dated)
    except CorruptStoreError as exc:
        raise ProviderError(
            f"Refused {origin}: a git object it should have sent is missing or damaged; "
            "nothing changed. Check that repository with git fsck."
        ) from exc


def check_outgoing(git: GitStore, base: CommitId | None, commit: CommitId, team: str) -> None:
    """Before a push to team ``team``: refuse what its members' pulls would refuse (a
    record or skill state dated more than a day ahead, which would lock every member out
    of pulling), checked as a pull checks it; ``base``: what the team last held (None:
    all of it)."""
    _check(git, base, commit, f"to push to team {team}", None, None, outgoing=True)


def _check(
    git: GitStore,
    base: CommitId | None,
    commit: CommitId,
    origin: str,
    parsed: dict[str, dict[str, Any]] | None,
    max_walk: int | None,
    *,
    outgoing: bool = False,
) -> list[str]:
    found: list[tuple[str, str, str]] = []
    for leaf in git.walk_leaves(base, commit, max_walk, origin):
        shown = _shown(leaf.parts)
        for part in leaf.parts:
            problem = component_problem(part)
            if problem is not None:
                raise _refuse(origin, shown, problem)
        if leaf.mode != FILE_MODE:
            why = _MODES.get(leaf.mode, f"not a regular file (mode {leaf.mode:o})")
            raise _refuse(origin, shown, why)
        path = b"/".join(leaf.parts).decode("utf-8")
        kind = classify(path)
        if kind is None:
            raise _refuse(origin, shown, "not part of an xbrain store's layout")
        found.append((path, leaf.sha, kind))
    snap = git.snapshot(commit)
    seen: dict[str, dict[str, Any]] = parsed if parsed is not None else {}
    latest = horizon()
    dated = base is not None or outgoing
    clocks = {spec.name: spec.clock for spec in record_kinds()} if dated else {}
    for path, sha, kind in sorted(found):
        size = git.blob_size(sha)  # from the header: a huge blob is never inflated
        if size is not None and size > max_bytes(kind):
            raise _refuse(origin, json.dumps(path), f"larger than {max_bytes(kind):,} bytes")
        data = snap.blob(sha)
        if len(data) > max_bytes(kind):
            raise _refuse(origin, json.dumps(path), f"larger than {max_bytes(kind):,} bytes")
        problem = content_problem(kind, path, data, seen, sha)
        if problem is not None:
            raise _refuse(origin, json.dumps(path), f"invalid ({problem})")
        clock = clocks.get(kind)  # only a record kind has a clock (and a parsed record)
        ahead = _ahead(clock, seen[sha], latest) if clock is not None else None
        if ahead is not None:
            raise _future(origin, path, ahead)
    if base is None and snap.read(layout.MARKER) is None:
        raise InvalidInputError(f"Refused {origin}: it is not an xbrain store (no xbrain.yaml).")
    _check_skills(git, base, commit, {path for path, _, _ in found}, origin, latest)
    return [path for path, _, _ in found]


_SKEW_DAYS = 1  # how far ahead of this machine's clock another device's clock may be


def dated_ahead(kind: str, record: dict[str, Any]) -> str | None:
    """``"<time> (<field>)"`` when ``record`` (of record kind ``kind``) is dated more
    than a day ahead of this machine's clock, the bound a pull holds it to; else None."""
    clock = {spec.name: spec.clock for spec in record_kinds()}.get(kind)
    return _ahead(clock, record, horizon())


def _ahead(clock: str | None, record: dict[str, Any], latest: str) -> str | None:
    """``"<time> (<clock>)"`` when ``record``'s ``clock`` field is later than ``latest``
    (the one rule a pull, a share and a team push hold records to); else None."""
    when = record.get(clock, "") if clock is not None else ""
    return f"{when} ({clock})" if isinstance(when, str) and when > latest else None


def horizon() -> str:
    """The latest time a skill state from outside may carry: now plus a day of clock
    skew. Its times are written by xbrain's clock, never given by a user, and a later
    one would win every merge after it (a publication dated 2099 beats each of the
    user's own), so it is refused. A record's ``updatedAt`` is the caller's to choose,
    as in the original, so a local write is not held to it; but one pulled from
    elsewhere is (the day also covers a local time typed without its offset, read as
    UTC: at most 14 hours ahead)."""
    from datetime import datetime, timedelta, timezone

    from ..timestamps import format_timestamp

    return format_timestamp(datetime.now(timezone.utc) + timedelta(days=_SKEW_DAYS))


def _future(origin: str, path: str, when: str) -> InvalidInputError:
    return InvalidInputError(
        f"Refused {origin}: {json.dumps(path)} is dated {when}, more than a day ahead of "
        "this machine's clock (it would win every merge); nothing changed. Whoever wrote "
        "it dates it right (its date, or their device's clock) and writes it again."
    )


def _check_skills(
    git: GitStore,
    base: CommitId | None,
    commit: CommitId,
    paths: set[str],
    origin: str,
    horizon: str,
) -> None:
    """Refuse a commit that changes, removes or forges a skill revision (see above), or
    whose skill state is dated ahead of this machine's clock."""
    view = View(git.snapshot(commit))
    prefix = skill_kind.DIRECTORY + "/"
    touched = {p[len(prefix) :].split("/", 1)[0] for p in paths if p.startswith(prefix)}
    for code, message, path in skill_problems(view, touched & set(skill_kind.slugs(view))):
        raise _refuse(origin, json.dumps(path), f"not a valid skill revision ({code}: {message})")
    for slug in sorted(touched & set(skill_kind.slugs(view))):
        state = skill_kind.read_state(view, slug)
        times = [] if state is None else [state["status_changed"]]
        for entry in [] if state is None else state["revisions"]:
            times += [entry["created"], entry["state_changed"], entry.get("published_at", "")]
        if times and max(times) > horizon:
            raise _future(origin, skill_kind.state_path(slug), max(times))
    if base is None:
        return
    common = base if git.is_ancestor(base, commit) else git.merge_base(base, commit)
    if common is None:
        return
    before, after = View(git.snapshot(common)), view
    was, now = before.children(skill_kind.DIRECTORY), after.children(skill_kind.DIRECTORY)
    for slug, tree in sorted(was.items()):
        if now.get(slug) == tree:
            continue  # the skill's whole folder is unchanged
        where = f"{skill_kind.DIRECTORY}/{slug}/revisions"
        kept = after.children(where)
        for rev, rev_tree in sorted(before.children(where).items()):
            if kept.get(rev) != rev_tree:
                how = "removed" if rev not in kept else "changed"
                raise InvalidInputError(
                    f"Refused {origin}: it {how} revision {rev} of skill {slug}, and a "
                    "revision is immutable; nothing changed."
                )
