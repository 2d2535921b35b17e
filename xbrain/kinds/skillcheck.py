"""Integrity of every skill at a commit (``doctor``): hashes, chain links, stray files.

A revision is verified from its bytes up: each file's SHA-256 and size against the
manifest, the canonical hash against the manifest, the revision id against
``[skill_id, parent, canonical_hash]``, and its place in the chain (its parent exists,
its number is one more than the parent's). A hand-edited revision file fails the first
check that covers it; a file or revision the state does not list is reported too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..codec import sha256_hex
from ..core import View
from ..errors import XbrainError
from . import skill as kind
from .skillformat import canonical_hash, revision_id

__all__ = ["skill_counts", "skill_problems"]

Problem = tuple[str, str, str]  # (code, message, path)


def skill_problems(view: View, slugs: Iterable[str] | None = None) -> list[Problem]:
    """Every integrity problem of the skills at ``view``'s commit (or of ``slugs`` only)."""
    problems: list[Problem] = []
    for slug in kind.slugs(view) if slugs is None else sorted(slugs):
        problems.extend(_one_skill(view, slug))
    return problems


def skill_counts(view: View) -> dict[str, int]:
    """What ``doctor`` checked of the skills at ``view``'s commit: the skills, the
    revisions their states list, and the files of those revisions' manifests."""
    skills = revisions = files = 0
    for slug in kind.slugs(view):
        skills += 1
        try:
            state = kind.read_state(view, slug)
        except XbrainError:
            continue  # reported by skill_problems
        for entry in state["revisions"] if state is not None else ():
            revisions += 1
            try:
                revision = kind.read_revision(view, slug, entry["id"])
            except XbrainError:
                continue
            files += len(revision["files"]) if revision is not None else 0
    return {"skills": skills, "revisions": revisions, "skillFiles": files}


def _one_skill(view: View, slug: str) -> Iterator[Problem]:
    path = kind.state_path(slug)
    try:
        state = kind.read_state(view, slug)
    except XbrainError as exc:
        yield ("skill_state", exc.message, path)
        return
    if state is None:
        yield ("skill_state", "A skill directory without skill.yaml.", f"{kind.DIRECTORY}/{slug}")
        return
    if state["slug"] != slug:
        yield ("skill_state", f"skill.yaml names {state['slug']!r}, not its directory.", path)
        return
    entries = {entry["id"]: entry for entry in state["revisions"]}
    stored = set(view.listdir(f"{kind.DIRECTORY}/{slug}/revisions"))
    for extra in sorted(stored - entries.keys()):
        yield (
            "skill_orphan",
            "A revision skill.yaml does not list.",
            kind.revision_dir(slug, extra),
        )
    for entry in entries.values():
        yield from _one_revision(view, state, entry, entries)


def _one_revision(
    view: View, state: dict[str, Any], entry: dict[str, Any], entries: dict[str, dict[str, Any]]
) -> Iterator[Problem]:
    slug, rev = state["slug"], entry["id"]
    path = kind.revision_path(slug, rev)
    try:
        revision = kind.read_revision(view, slug, rev)
    except XbrainError as exc:
        yield ("skill_revision", exc.message, path)
        return
    if revision is None:
        yield ("skill_revision", "A listed revision has no revision.yaml.", path)
        return
    for key in ("parent", "number", "created"):
        if revision[key] != entry[key]:
            yield ("skill_revision", f"{key} differs from skill.yaml.", path)
    if revision["id"] != rev or revision["slug"] != slug or revision["skill_id"] != state["id"]:
        yield ("skill_revision", "id, slug or skill_id differs from its place.", path)
    listed = {item["path"] for item in revision["files"]}
    files_dir = f"{kind.revision_dir(slug, rev)}/files"
    for stray, _ in view.files(files_dir):
        if stray[len(files_dir) + 1 :] not in listed:
            yield ("skill_file", "A file the manifest does not list.", stray)
    for item in revision["files"]:
        data = view.read(kind.file_path(slug, rev, item["path"]))
        where = kind.file_path(slug, rev, item["path"])
        if data is None:
            yield ("skill_file", "A file of the manifest is missing.", where)
        elif sha256_hex(data) != item["sha256"] or len(data) != item["bytes"]:
            yield ("skill_hash", "The file's bytes do not match its manifest hash.", where)
    if canonical_hash(revision["files"]) != revision["canonical_hash"]:
        yield ("skill_hash", "canonical_hash does not match the manifest.", path)
    elif revision_id(state["id"], revision["parent"], revision["canonical_hash"]) != rev:
        yield ("skill_chain", "The revision id does not match its parent and hash.", path)
    parent = revision["parent"]
    if parent is None and revision["number"] != 1:
        yield ("skill_chain", "A first revision must be number 1.", path)
    elif parent is not None:
        above = entries.get(parent)
        if above is None:
            yield ("skill_chain", f"Its parent {parent} is not a revision of the skill.", path)
        elif revision["number"] != above["number"] + 1:
            yield ("skill_chain", "Its number is not its parent's plus one.", path)
