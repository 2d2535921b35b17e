"""Who a team store's history says may be trusted, worked out once per team commit.

The team's git host lets every member push; the reviewer list is the review workflow on
top, and a member with push rights must not get around it:

* **The reviewer list in force.** The first ``team.reviewers`` is the one of the commit
  that made it (the store's root, or the commit that first named reviewers); a later
  change of the list counts only when committed by a reviewer of the list before it.
  Otherwise the old list stays in force and the change is reported ``untrusted``.
* **Trusted records.** A record (a resource, an entry, a skill's files) is trusted when
  the commit that last changed it was made by a reviewer in force before that commit,
  or when a reviewer accepted its proposal after that change; anything else is reported
  ``untrusted`` and hidden from every read until a reviewer accepts it. A team that
  names no reviewers has no review: what it holds is trusted as it always was.
* **The last change** of a path follows a merge into the side that brought the change
  (a merge commit is never the author of what its side branch changed).

Identities are the commits' own, as git records them; the git host's permissions remain
the real gate.

**Incremental.** What each commit says (its parents, author, time and the reviewer list
it names) depends on that commit alone, and so does where a
path was last changed as seen from one commit: a :class:`Memo` keeps both by commit id
(``hidden`` stores it in ``.git/xbrain/team-history.json``), so a new team head reads
only the commits it has not seen. A rewritten history has other commit ids: what the
memo holds of the old one is never used, and is dropped at the next save.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..codec import load_yaml
from ..core import CommitId, GitStore, View, layout
from ..kinds import proposal as proposal_kind
from ..kinds import skill as skill_kind

__all__ = [
    "Audit",
    "Memo",
    "audit",
    "last_changes",
    "listed_reviewers",
    "record_key",
    "reviewers_at",
]

_SCAN = 100_000
REVIEWERS_KEY = "team.reviewers"


class Audit(NamedTuple):
    """What a team's history says at one head."""

    reviewers: list[str]  # the list in force
    provenance: dict[str, list[Any]]  # key → [author, epoch, commit] of its last change
    untrusted: list[dict[str, Any]]  # records and reviewer changes no reviewer made
    hidden: set[str]  # the ids reads leave out for it (``skill:SLUG`` for skills)


class _Info(NamedTuple):
    id: CommitId
    parents: tuple[CommitId, ...]
    author: str
    time: int


class Memo:
    """What earlier audits worked out, by commit id: ``commits`` (id → [parents, author,
    time, the reviewer list it names]) and ``last`` (a head and, for each path there, the commit
    that last changed it). Anything malformed is dropped: the audit then reads git."""

    def __init__(self, value: Any = None) -> None:
        self.commits: dict[str, list[Any]] = {}
        self.head: str | None = None
        self.last: dict[str, str] = {}
        if not isinstance(value, dict) or value.get("version") != 1:
            return
        commits, last = value.get("commits"), value.get("last")
        if isinstance(commits, dict) and all(_entry(v) for v in commits.values()):
            self.commits = commits
        if isinstance(last, dict) and isinstance(last.get("head"), str):
            paths = last.get("paths")
            if isinstance(paths, dict) and all(isinstance(v, str) for v in paths.values()):
                self.head, self.last = last["head"], paths

    def dump(self) -> dict[str, Any]:
        """The memo as JSON data."""
        last = {"head": self.head, "paths": self.last}
        return {"version": 1, "commits": self.commits, "last": last}


def _entry(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(x, list) and all(isinstance(y, str) for y in x) for x in value[::3])
        and isinstance(value[1], str)
        and isinstance(value[2], int)
    )


def record_key(path: str) -> str | None:
    """The record a path belongs to: a resource or entry id, ``skill:SLUG``."""
    parts = path.split("/")
    if parts[0] in ("resources", "entries") and len(parts) == 3:
        return parts[2].removesuffix(".yaml")
    if parts[0] == skill_kind.DIRECTORY and len(parts) > 2:
        return f"skill:{parts[1]}"
    return None


def listed_reviewers(view: View) -> list[str]:
    """The reviewers ``team.reviewers`` in the team's ``xbrain.yaml`` names at ``view``
    (not necessarily in force)."""
    try:
        raw = load_yaml(view.read(layout.MARKER) or b"")
        listed = raw.get("team", {}).get("reviewers", []) if isinstance(raw, dict) else []
    except Exception:
        return []
    return [str(x) for x in listed] if isinstance(listed, list) else []


def _listed(view: View) -> tuple[str, ...]:
    return tuple(listed_reviewers(view))


def _order(git: GitStore, head: CommitId, memo: Memo | None = None) -> list[Any]:
    """Every commit reachable from ``head``, parents before children (what ``memo``
    knows of a commit is not read from git again)."""
    known = memo.commits if memo is not None else {}
    infos: dict[str, Any] = {}
    order: list[Any] = []
    stack: list[tuple[CommitId, bool]] = [(head, False)]
    while stack and len(infos) <= _SCAN:
        commit, done = stack.pop()
        if done:
            order.append(infos[commit])
            continue
        if commit in infos:
            continue
        kept = known.get(commit)
        if kept is not None:
            info = _Info(commit, tuple(CommitId(p) for p in kept[0]), kept[1], kept[2])
        else:
            full = git.commit_info(commit)
            info = _Info(full.id, full.parents, full.author, full.time)
        infos[commit] = info
        stack.append((commit, True))
        stack.extend((p, False) for p in info.parents if p not in infos)
    return order


def _in_force(
    git: GitStore, order: list[Any], memo: Memo | None = None
) -> tuple[dict[str, tuple[str, ...]], Any]:
    """commit → the reviewer list in force after it; the last untrusted change of the
    list still present at the end (or None). Filled into ``memo`` as it goes."""
    known = memo.commits if memo is not None else {}
    raw: dict[str, tuple[str, ...]] = {}
    force: dict[str, tuple[str, ...]] = {}
    doubted: Any = None
    for info in order:
        kept = known.get(info.id)
        listed = tuple(kept[3]) if kept is not None else _listed(View(git.snapshot(info.id)))
        raw[info.id] = listed
        same = [p for p in info.parents if p in raw and raw[p] == listed]
        before = force.get(info.parents[0], ()) if info.parents else ()
        if same:
            force[info.id] = force[same[0]]
        elif not before or info.author in before:
            force[info.id] = listed  # the first list, or a reviewer's change
        else:
            force[info.id] = before
            doubted = info
        if memo is not None and kept is None:
            known[info.id] = [list(info.parents), info.author, info.time, list(listed)]
    if order and raw[order[-1].id] == force[order[-1].id]:
        doubted = None
    return force, doubted


def _last_changes(
    git: GitStore, order: list[Any], paths: set[str], memo: Memo | None = None
) -> dict[str, Any]:
    """path → the commit that last changed it (following the side of a merge that
    brought the change). A path that reaches the head ``memo`` last saw unchanged takes
    the answer worked out then."""
    if not order:
        return {}
    pending: dict[str, set[str]] = {order[-1].id: set(paths)}
    found: dict[str, Any] = {}
    infos = {info.id: info for info in order}
    for info in reversed(order):
        rest = pending.pop(info.id, None)
        if not rest:
            continue
        if memo is not None and info.id == memo.head:
            for path in [p for p in rest if memo.last.get(p) in infos]:
                found[path] = infos[memo.last[path]]
                rest.discard(path)
        for parent in info.parents:
            if not rest:
                break
            same = rest - set(git.changed_files(parent, info.id))
            if same:
                pending.setdefault(parent, set()).update(same)
                rest -= same
        for path in rest:
            found[path] = info
    if memo is not None:
        memo.head, memo.last = str(order[-1].id), {p: str(i.id) for p, i in found.items()}
    return found


def last_changes(
    git: GitStore, head: CommitId, paths: set[str], memo: Memo | None = None
) -> dict[str, Any]:
    """path → the commit (``id``, ``parents``, ``author``, ``time``) that gave it the
    content it has at ``head``, following the side of a merge that brought the change;
    a path whose change lies past what is walked is left out. ``memo``: the commits
    earlier audits read (not read from git again; the memo is not changed)."""
    return _last_changes(git, _order(git, head, memo), paths)


def _ancestors(order: list[Any], commit: str) -> set[str]:
    parents = {info.id: info.parents for info in order}
    seen, stack = set(), [commit]
    while stack:
        one = stack.pop()
        if one not in seen:
            seen.add(one)
            stack.extend(parents.get(one, ()))
    return seen


def reviewers_at(git: GitStore, commit: CommitId, memo: Memo | None = None) -> list[str]:
    """The reviewer list in force at ``commit`` (``memo``: what earlier audits read)."""
    order = _order(git, commit, memo)
    return list(_in_force(git, order, memo)[0].get(commit, ())) if order else []


def audit(
    git: GitStore, head: CommitId, proposals: list[dict[str, Any]], memo: Memo | None = None
) -> Audit:
    """The reviewer list in force at ``head``, each record's provenance, and what no
    reviewer vouches for (``proposals``: the team's proposal files at ``head``). With a
    ``memo``, the commits it knows are not read again, and it is brought up to ``head``
    (only the commits reachable from it are kept)."""
    order = _order(git, head, memo)
    force, doubted = _in_force(git, order, memo)
    if memo is not None:
        memo.commits = {info.id: memo.commits[info.id] for info in order}
    index = {info.id: n for n, info in enumerate(order)}
    snap = git.snapshot(head)
    paths = {p for p, _ in snap.files() if record_key(p) is not None}
    props = {proposal_kind.proposal_path(item["key"]): item for item in proposals}
    last = _last_changes(git, order, paths | set(props), memo)

    def before(info: Any) -> tuple[str, ...]:
        return force.get(info.parents[0], ()) if info.parents else force[info.id]

    newest: dict[str, Any] = {}
    for path in paths:
        key, info = record_key(path), last[path]
        assert key is not None
        if key not in newest or index[info.id] > index[newest[key].id]:
            newest[key] = info
    vouched: dict[str, list[str]] = {}  # record id → accept commits a reviewer made
    for path, item in props.items():
        info = last.get(path)
        if item["state"] == "accepted" and info is not None and info.author in before(info):
            vouched.setdefault(item["id"], []).append(info.id)
    open_ = {item["id"] for item in proposals if item["state"] != "accepted"}
    untrusted, hidden = [], set()
    provenance = {key: [i.author, i.time, str(i.id)] for key, i in newest.items()}
    for key, info in sorted(newest.items()):
        listed = before(info)
        if not listed or info.author in listed:
            continue
        rid = key.removeprefix("skill:")
        if rid in open_:
            continue  # a proposal under review: hidden until a reviewer accepts it
        if any(info.id in _ancestors(order, a) for a in vouched.get(rid, [])):
            continue
        kind = "skill" if key.startswith("skill:") else rid.split("_", 1)[0]
        hidden.add(key)
        untrusted.append(
            {
                "key": key,
                "kind": kind,
                "id": rid,
                "state": "committed",
                "by": info.author,
                "commit": str(info.id),
                "reason": "not committed by a reviewer of this team",
            }
        )
    if doubted is not None:
        untrusted.append(
            {
                "key": REVIEWERS_KEY,
                "kind": "reviewers",
                "id": REVIEWERS_KEY,
                "state": "committed",
                "by": doubted.author,
                "commit": str(doubted.id),
                "reason": "the reviewer list changed by someone not on it",
            }
        )
    reviewers = list(force[order[-1].id]) if order else []
    return Audit(reviewers, provenance, untrusted, hidden)
