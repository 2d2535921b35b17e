"""Skills in the store (SPEC §12): a state file per skill and immutable revisions.

```
skills/<slug>/skill.yaml                              the mutable state (below)
skills/<slug>/revisions/<revision_id>/revision.yaml   a revision's manifest and provenance
skills/<slug>/revisions/<revision_id>/files/<path>    the exact bytes (SKILL.md included)
```

Plain files under the slug, so ``git log -p skills/<slug>`` reads as the skill's history.
A revision's directory is written once and never changed; what changes — each revision's
lifecycle state, which revision is the head, whether the skill is archived — lives in
``skill.yaml``. That file repeats each revision's ``parent``, ``number`` and ``created``
so the state of a skill (listing, lifecycle, merging two devices' files) reads one file.

Two devices' ``skill.yaml`` merge without a common ancestor (:func:`merge_states`): the
union of revisions; each revision's state and the skill's status by the later change
(ties by the state's rank); at most one published, the later publication (ties by
revision id); the head is the tip of the longest chain (ties by creation, then id).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from ..codec import dump_yaml, load_yaml
from ..core.registry import FileKind, register
from ..core.view import View, parse_stored
from ..errors import CorruptStoreError, InvalidInputError
from .skillformat import (
    MAX_COMPONENT_BYTES,
    MAX_SKILL_MD_BYTES,
    SKILL_MD,
    file_problem,
    paths_problem,
    revision_problem,
    skill_id,
)

__all__ = [
    "DIRECTORY",
    "STATES",
    "chosen",
    "file_path",
    "instructions",
    "merge_states",
    "parse_revision",
    "parse_state",
    "read_file",
    "read_revision",
    "read_state",
    "revision_dir",
    "revision_files",
    "revision_path",
    "serialize",
    "slugs",
    "state_path",
]

DIRECTORY = "skills"
STATES = ("draft", "proposed", "published", "deprecated")
STATUSES = ("active", "archived")
_SLUG = r"[a-z0-9]+(?:-[a-z0-9]+)*"
_REV = r"rev_[0-9a-f]{32}"


def state_path(slug: str) -> str:
    """``skills/<slug>/skill.yaml``."""
    return f"{DIRECTORY}/{slug}/skill.yaml"


def revision_dir(slug: str, revision: str) -> str:
    """``skills/<slug>/revisions/<revision>``."""
    return f"{DIRECTORY}/{slug}/revisions/{revision}"


def revision_path(slug: str, revision: str) -> str:
    """A revision's ``revision.yaml``."""
    return f"{revision_dir(slug, revision)}/revision.yaml"


def file_path(slug: str, revision: str, path: str) -> str:
    """Where one file of a revision lives."""
    return f"{revision_dir(slug, revision)}/files/{path}"


def _load(data: bytes, what: str) -> dict[str, Any]:
    written = _written.pop(data, None)
    if written is not None:
        return written
    from .plainyaml import load  # what xbrain writes, read without the parser (4x faster)

    plain: dict[str, Any] | None = load(data)
    if plain is not None:
        return plain  # a mapping, checked by the caller as any other
    try:
        value = load_yaml(data)
    except Exception as exc:  # every parser failure means the same: not this kind of file
        raise InvalidInputError(f"{what} is not valid YAML") from exc
    if not isinstance(value, dict):
        raise InvalidInputError(f"{what} is not a mapping")
    return value


def _check(schema: str, value: dict[str, Any]) -> None:
    from ..schemas import schema_errors

    errors = schema_errors(schema, value)
    if errors:
        raise InvalidInputError(errors[0])


# What readers rely on, checked on every read without importing jsonschema (~45 ms in a
# fresh process); the full schemas are checked where files come in (a remote's tree,
# doctor). A type, a tuple of allowed values, a one-item list (each item), or a dict.
_ENTRY = {
    "id": str,
    "number": int,
    "parent": (str, type(None)),
    "created": str,
    "state": STATES,
    "state_changed": str,
}
_STATE_SHAPE = {
    "id": str,
    "slug": str,
    "status": STATUSES,
    "status_changed": str,
    "head": str,
    "revisions": [_ENTRY],
}
_FILE = {"path": str, "type": str, "sha256": str, "bytes": int}
_REVISION_SHAPE = {
    "id": str,
    "skill_id": str,
    "slug": str,
    "parent": (str, type(None)),
    "number": int,
    "created": str,
    "source": {"type": str},
    "canonical_hash": str,
    "files": [_FILE],
}


def _shaped(value: Any, shape: Any, where: str) -> None:
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            raise InvalidInputError(f"{where} is not a mapping")
        for key, inner in shape.items():
            if key not in value:
                raise InvalidInputError(f"{where} has no {key}")
            item = value[key]
            # a value of the one type its shape names: no need to word where it is
            if type(inner) is type and type(item) is inner and inner is not bool:
                continue
            _shaped(item, inner, f"{where}.{key}")
    elif isinstance(shape, list):
        if not isinstance(value, list) or not value:
            raise InvalidInputError(f"{where} is not a non-empty list")
        for item in value:
            _shaped(item, shape[0], f"{where}[]")
    elif isinstance(shape, tuple) and all(isinstance(v, str) for v in shape):
        if value not in shape:
            raise InvalidInputError(f"{where} is not one of {', '.join(shape)}")
    elif not isinstance(value, shape) or isinstance(value, bool):
        raise InvalidInputError(f"{where} has the wrong type")


def parse_state(data: bytes, *, full: bool = False) -> dict[str, Any]:
    """A ``skill.yaml``, checked for its shape and its own invariants (``full``: against
    its JSON Schema too)."""
    state = _load(data, "skill.yaml")
    _shaped(state, _STATE_SHAPE, "skill.yaml")
    if full:
        _check("skill", state)
    if state["id"] != skill_id(state["slug"]):
        raise InvalidInputError("the skill's id is not the id of its slug")
    ids = [entry["id"] for entry in state["revisions"]]
    if len(set(ids)) != len(ids):
        raise InvalidInputError("a revision is listed twice")
    if state["head"] not in ids:
        raise InvalidInputError("the head is not one of the skill's revisions")
    if sum(entry["state"] == "published" for entry in state["revisions"]) > 1:
        raise InvalidInputError("more than one revision is published")
    return state


def parse_revision(data: bytes, *, full: bool = False) -> dict[str, Any]:
    """A ``revision.yaml``, checked for its shape (``full``: against its schema too)."""
    revision = _load(data, "revision.yaml")
    _shaped(revision, _REVISION_SHAPE, "revision.yaml")
    if full:
        _check("skill-revision", revision)
        problem = paths_problem([item["path"] for item in revision["files"]])
        if problem is not None:
            raise InvalidInputError(problem)
    return revision


# The records this process serialized last, by their bytes, each given back once: a
# save's catch-up of the skill index reads the skill.yaml and revision.yaml the save just
# wrote, and parsing a long skill.yaml again cost about what writing it did (300
# revisions: ≈ 29 ms). A copy of the value the bytes were made from is what the parse
# returns (a tested property), and the readers' checks still run on it.
_written: dict[bytes, dict[str, Any]] = {}
_WRITTEN_KEPT = 4


def serialize(value: dict[str, Any]) -> bytes:
    """A skill's state or a revision as canonical YAML."""
    data = dump_yaml(value)
    _written[data] = copy.deepcopy(value)
    while len(_written) > _WRITTEN_KEPT:
        del _written[next(iter(_written))]
    return data


def _state_problem(data: bytes) -> str | None:
    try:
        parse_state(data, full=True)
    except InvalidInputError as exc:
        return exc.message
    return None


def _revision_problem(data: bytes) -> str | None:
    try:
        parse_revision(data, full=True)
    except InvalidInputError as exc:
        return exc.message
    return None


def merge_states(ours: bytes, theirs: bytes) -> bytes:
    """Two devices' ``skill.yaml`` as one (the same whichever side is ``ours``)."""
    a, b = parse_state(ours), parse_state(theirs)
    by_id: dict[str, dict[str, Any]] = {}
    for entry in [*a["revisions"], *b["revisions"]]:
        known = by_id.get(entry["id"])
        if known is not None:  # one revision, made or changed on both devices
            later = max(known, entry, key=_change_order)
            # revision.yaml merges to the later creation (its bytes sort that way)
            entry = {**later, "created": max(known["created"], entry["created"])}
        by_id[entry["id"]] = entry
    published = [e for e in by_id.values() if e["state"] == "published"]
    if len(published) > 1:
        winner = max(published, key=lambda e: (e.get("published_at", ""), e["id"]))
        for entry in published:
            if entry is not winner:
                by_id[entry["id"]] = {
                    **entry,
                    "state": "deprecated",
                    "state_changed": winner.get("published_at", winner["state_changed"]),
                }
    revisions = sorted(by_id.values(), key=lambda e: (e["number"], e["created"], e["id"]))
    status = max(a, b, key=lambda s: (s["status_changed"], STATUSES.index(s["status"])))
    merged = {
        "id": a["id"],
        "slug": a["slug"],
        "status": status["status"],
        "status_changed": status["status_changed"],
        "head": revisions[-1]["id"],
        "revisions": revisions,
    }
    return serialize(merged)


def superseded(ours: bytes, theirs: bytes, merged: bytes) -> list[tuple[int, dict[str, Any]]]:
    """The publications :func:`merge_states` set aside: each revision published on one
    side (0: ``ours``, 1: ``theirs``) that the merged state no longer publishes, with the
    skill's ``id``."""
    after = {e["id"]: e["state"] for e in parse_state(merged)["revisions"]}
    out = []
    for side, data in enumerate((ours, theirs)):
        state = parse_state(data)
        for entry in state["revisions"]:
            if entry["state"] == "published" and after.get(entry["id"]) != "published":
                what = {"id": state["id"], "slug": state["slug"], "revision": entry["id"]}
                out.append((side, {**what, "state": "published", "now": after[entry["id"]]}))
    return out


def _change_order(entry: dict[str, Any]) -> tuple[str, int, str, bytes]:
    """Later change first, then the later state; the bytes make the order total."""
    rank = STATES.index(entry["state"])
    return (entry["state_changed"], rank, entry.get("published_at", ""), serialize(entry))


_IN_SKILL = rf"{DIRECTORY}/{_SLUG}"
register(
    FileKind(
        "skill",
        rf"{_IN_SKILL}/skill\.yaml",
        4 << 20,
        yaml=True,
        check=_state_problem,
        merge=merge_states,
        superseded=superseded,
    )
)
register(
    FileKind(
        "skill-revision",
        rf"{_IN_SKILL}/revisions/{_REV}/revision\.yaml",
        1 << 20,
        yaml=True,
        check=_revision_problem,
    )
)
register(
    FileKind(
        "skill-file",
        rf"{_IN_SKILL}/revisions/{_REV}/files/[^/]+(?:/[^/]+)*",
        max(MAX_COMPONENT_BYTES, MAX_SKILL_MD_BYTES),
        raw=True,
    )
)


# -- reading -------------------------------------------------------------------------------


def slugs(view: View) -> list[str]:
    """Every skill's slug at this commit, sorted."""
    return sorted(view.listdir(DIRECTORY))


def _stored(view: View, path: str, parse: Callable[[bytes], dict[str, Any]]) -> Any:
    data = view.read(path)
    return None if data is None else parse_stored(parse, path, data)


def read_state(view: View, slug: str) -> dict[str, Any] | None:
    """A skill's state, or None when there is no such skill."""
    state: dict[str, Any] | None = _stored(view, state_path(slug), parse_state)
    return state


def read_revision(view: View, slug: str, revision: str) -> dict[str, Any] | None:
    """A revision's manifest and provenance, or None."""
    found: dict[str, Any] | None = _stored(view, revision_path(slug, revision), parse_revision)
    return found


def stored_revision(view: View, slug: str, revision: str) -> dict[str, Any]:
    """A revision the skill's state lists, checked against its own id (a revision is
    immutable: one changed after it was made is never served); missing or changed means
    the store is damaged."""
    found = read_revision(view, slug, revision)
    if found is None:
        where = revision_path(slug, revision)
        raise CorruptStoreError(f"Stored revision {where} is missing; run xbrain doctor.")
    _refuse(slug, revision, revision_problem(slug, revision, found))
    return found


def read_file(view: View, slug: str, revision: dict[str, Any], path: str) -> bytes:
    """One file of a revision (from :func:`stored_revision`), exactly the bytes its
    manifest records; a missing or changed one means the store is damaged."""
    item = next((f for f in revision["files"] if f["path"] == path), None)
    where = file_path(slug, revision["id"], path)
    data = None if item is None else view.read(where)
    if data is None or item is None:
        raise CorruptStoreError(f"Stored skill file {where} is missing; run xbrain doctor.")
    _refuse(slug, revision["id"], file_problem(item, data))
    return data


def _refuse(slug: str, revision: str, problem: str | None) -> None:
    if problem is not None:
        raise CorruptStoreError(
            f"Revision {revision} of skill {slug} was changed after it was made ({problem}); "
            "it is not served. Run xbrain doctor."
        )


def revision_files(view: View, slug: str, revision: dict[str, Any]) -> Iterator[tuple[str, bytes]]:
    """``(path, bytes)`` of every file of a revision, in manifest order, each checked."""
    for item in revision["files"]:
        yield item["path"], read_file(view, slug, revision, item["path"])


def chosen(state: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The revision recall shows: the published one, else the head (and True: a fallback)."""
    for entry in state["revisions"]:
        if entry["state"] == "published":
            return entry, False
    return next(e for e in state["revisions"] if e["id"] == state["head"]), True


def instructions(view: View, slug: str, revision: dict[str, Any]) -> bytes:
    """A revision's ``SKILL.md`` (checked, as :func:`read_file`)."""
    return read_file(view, slug, revision, SKILL_MD)
