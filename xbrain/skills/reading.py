"""Reading skills: the list, Level 1 and Level 2 of recall, a skill's log, a diff.

Level 1 gives the instructions and component manifest of one revision, and its id;
Level 2 gives one component of exactly the revision named, so a workflow that read
Level 1 never mixes files of two revisions.
"""

from __future__ import annotations

from typing import Any

from ..core import Core, View
from ..errors import NotFoundError, UsageError
from ..kinds import skill as kind
from ..kinds import skilldiff, skillshow
from ..kinds.skill import chosen
from ..kinds.skillformat import parse_skill_md
from ..messages import describe_commit
from .writing import resolve_revision

__all__ = [
    "DIFF_FORMATS",
    "chosen",
    "describe",
    "diff",
    "list_skills",
    "log",
    "read_component",
    "read_level1",
    "state_of",
]


def state_of(view: View | None, slug: str) -> dict[str, Any]:
    """A skill's state; NotFoundError when there is none."""
    state = None if view is None else kind.read_state(view, slug)
    if state is None:
        raise NotFoundError(f"No skill named {slug}.")
    return state


def describe(view: View, state: dict[str, Any]) -> dict[str, Any]:
    """One skill as listed: slug, name, description, status and its revisions' states."""
    entry, fallback = chosen(state)
    revision = kind.stored_revision(view, state["slug"], entry["id"])
    meta = parse_skill_md(kind.instructions(view, state["slug"], revision)).frontmatter
    published = None if fallback else entry["id"]
    return {
        "slug": state["slug"],
        "skill_id": state["id"],
        "name": meta["name"],
        "description": meta["description"],
        "status": state["status"],
        "published": published,
        "head": state["head"],
        "revisions": len(state["revisions"]),
    }


def list_skills(core: Core, *, include_archived: bool = True) -> dict[str, Any]:
    """Every skill, by slug."""
    with core.reading() as view:
        skills: list[dict[str, Any]] = []
        if view is None:
            return {"count": 0, "skills": skills}
        for slug in kind.slugs(view):
            state = kind.read_state(view, slug)
            if state is None or (state["status"] == "archived" and not include_archived):
                continue
            skills.append(describe(view, state))
    return {"count": len(skills), "skills": skills}


def read_level1(
    core: Core, slug: str, ref: str | None = None, *, proposed: bool = False
) -> dict[str, Any]:
    """Level 1: the instructions and component manifest of the published revision
    (else the latest that is not proposed, marked ``"fallback": "latest"``), or of
    revision ``ref``. A proposed revision waits for review: it is shown only when named,
    or with ``proposed`` (a reviewer's page, which may show a proposed head)."""
    with core.reading() as view:
        state = state_of(view, slug)
        assert view is not None
        if ref is None:
            entry, fallback = chosen(state) if proposed else skillshow.served(state)
            if entry is None:
                raise NotFoundError(
                    f"Skill {slug} has only proposed revisions, which are not served until "
                    f"reviewed: read one with --revision R, or publish it (xbrain skill "
                    f"publish {slug} R)."
                )
        else:
            rev = resolve_revision(state, ref)
            entry, fallback = next(e for e in state["revisions"] if e["id"] == rev), False
        return skillshow.level1(view, state, entry, fallback)


def read_component(core: Core, slug: str, ref: str | None, path: str) -> dict[str, Any]:
    """Level 2: one file of exactly revision ``ref`` (text as is, other bytes as base64)."""
    if ref is None:
        raise UsageError(
            "Level 2 needs --revision (the revision_id Level 1 gave), so a workflow never "
            "reads files of two revisions."
        )
    with core.reading() as view:
        state = state_of(view, slug)
        assert view is not None
        rev = resolve_revision(state, ref)
        revision = kind.stored_revision(view, slug, rev)
        item = next((f for f in revision["files"] if f["path"] == path), None)
        if item is None:
            raise NotFoundError(f"Revision {rev} of {slug} has no file {path!a}.")
        data = kind.read_file(view, slug, revision, path)
    return skillshow.component(slug, rev, item, data)


def log(core: Core, slug: str, limit: int = 20) -> dict[str, Any]:
    """A skill's revisions, newest first, with state and provenance, and the last
    ``limit`` commits that changed its files."""
    with core.reading() as view:
        state = state_of(view, slug)
        assert view is not None
        revisions = []
        for entry in reversed(state["revisions"]):
            revision = kind.stored_revision(view, slug, entry["id"])
            revisions.append(
                {
                    "revision_id": entry["id"],
                    "revision_number": entry["number"],
                    "parent": entry["parent"],
                    "created": entry["created"],
                    "state": entry["state"],
                    "head": entry["id"] == state["head"],
                    "source": revision["source"],
                    "canonical_hash": revision["canonical_hash"],
                    "files": len(revision["files"]),
                }
            )
        with core.git() as git:
            changes = git.path_commits(f"{kind.DIRECTORY}/{slug}", limit)
    return {
        "slug": slug,
        "skill_id": state["id"],
        "status": state["status"],
        "revisions": revisions,
        "commits": [describe_commit(info) for info in changes],
    }


DIFF_FORMATS = ("hunks", "ops", "unified")


def diff(
    core: Core, slug: str, a: str, b: str, cut: skilldiff.Cut, form: str = "hunks"
) -> dict[str, Any]:
    """A word-level diff of two revisions, file by file (binary files: changed or not).

    ``form``: ``hunks`` (the changes with a few words of context, bounded), ``ops`` (every
    op, lossless, and a rendering) or ``unified`` (a line diff for people)."""
    if form not in DIFF_FORMATS:
        raise UsageError(f"Unknown diff format {form!r}; use one of {', '.join(DIFF_FORMATS)}.")
    with core.reading() as view:
        state = state_of(view, slug)
        assert view is not None
        old_id, new_id = resolve_revision(state, a), resolve_revision(state, b)
        old = dict(kind.revision_files(view, slug, kind.stored_revision(view, slug, old_id)))
        new = dict(kind.revision_files(view, slug, kind.stored_revision(view, slug, new_id)))
    files = []
    for path in sorted(set(old) | set(new), key=lambda p: p.encode("utf-8")):
        before, after = old.get(path), new.get(path)
        status = (
            "added"
            if before is None
            else "removed"
            if after is None
            else "unchanged"
            if before == after
            else "modified"
        )
        item: dict[str, Any] = {"path": path, "status": status}
        if status != "unchanged":
            old_text = "" if before is None else _text(before)
            new_text = "" if after is None else _text(after)
            if old_text is None or new_text is None:
                item["binary"] = True
            elif form == "unified":
                labels = (old_id, new_id)
                item["unified"] = skilldiff.unified(path, old_text, new_text, labels)
            else:
                ops = skilldiff.diff(old_text, new_text, cut)
                if form == "ops":
                    item.update(ops=ops, rendered=skilldiff.render(ops))
                else:
                    item.update(skilldiff.hunks(ops))
        files.append(item)
    changed = sum(item["status"] != "unchanged" for item in files)
    return {
        "slug": slug,
        "from": old_id,
        "to": new_id,
        "format": form,
        "changed": changed,
        "files": files,
    }


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
