"""Writing skills: save a revision, change a revision's lifecycle, archive a skill.

Each operation is one core transaction: everything is checked before anything is
staged, a revision's files are written once and never again, and an operation that
changes nothing makes no commit.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ..core import Core, Transaction, View
from ..errors import InvalidInputError, NotFoundError, StaleError
from ..kinds import skill as kind
from ..kinds.skillformat import (
    SKILL_MD,
    canonical_hash,
    check_shown,
    manifest,
    parse_skill_md,
    revision_id,
    skill_id,
)
from ..secretscan import record_texts
from ..text import refuse_hidden

__all__ = ["archive", "deprecate", "publish", "resolve_revision", "save"]


def save(
    core: Core,
    files: dict[str, bytes],
    *,
    source: dict[str, Any],
    state: str,
    expect: str | None = None,
    skipped: list[str] | None = None,
    command: str | None = None,
    types: dict[str, str] | None = None,
    executable: set[str] | None = None,
) -> dict[str, Any]:
    """Append a revision of the skill in ``files`` (``SKILL.md`` and components).

    ``state``: the new revision's lifecycle state (``draft``, ``proposed`` or
    ``published``). Frontmatter keys outside the Agent Skills set (Claude Code's ``model``,
    memex's ``queries``, …) stay byte-exact in ``SKILL.md`` and come back as ``warnings``
    (SPEC §12). ``expect``: the head revision
    the caller last read; another head is a StaleError and nothing is written. ``types``
    may set components' types (default: by their top directory); ``executable`` names
    the files that had the executable bit (marked so in the manifest).
    """
    if SKILL_MD not in files:
        raise InvalidInputError(f"A skill needs a {SKILL_MD}.")
    for name in skipped or ():  # reported, so shown: it must show as what it is too
        check_shown(name)
    parsed = parse_skill_md(files[SKILL_MD])
    refuse_hidden(parsed.frontmatter["description"], "description")  # read at a glance
    warnings = [
        f"frontmatter key {key!r} is not part of the Agent Skills format" for key in parsed.unknown
    ]
    entries = manifest(files, types, executable or ())
    content_hash = canonical_hash(entries)
    slug = parsed.slug
    sid = skill_id(slug)
    command = command or f"skill {'import' if source['type'] != 'save' else 'save'}"
    with core.transaction(command) as txn:
        now = core.clock()
        current = kind.read_state(txn, slug)
        head = current["head"] if current else None
        if expect is not None and current is not None and not expect.startswith("rev_"):
            with contextlib.suppress(NotFoundError):  # an unknown number: stale, below
                expect = resolve_revision(current, expect)
        if expect is not None and expect != head:
            raise StaleError(
                f"Skill {slug} is at revision {head or '(none)'}, not {expect}; "
                "read it again and retry."
            )
        head_entry = _entry(current, head) if current and head else None
        same = head is not None and _hash_of(txn, slug, head) == content_hash
        if same:
            assert current is not None and head_entry is not None and head is not None
            rev, number, status = head, head_entry["number"], "unchanged"
            if state == "published" and head_entry["state"] != "published":
                _set_state(current, head, "published", now)
                status = "published"
            new_state = _entry(current, head)["state"]
        else:
            number = head_entry["number"] + 1 if head_entry else 1
            rev = revision_id(sid, head, content_hash)
            record = {
                "id": rev,
                "skill_id": sid,
                "slug": slug,
                "parent": head,
                "number": number,
                "created": now,
                "source": source,
                "canonical_hash": content_hash,
                "files": entries,
            }
            txn.scan_secrets(
                [
                    *record_texts({"source": source}),
                    *(
                        (item["path"], _bytes_of(files, item["path"]).decode("utf-8", "replace"))
                        for item in entries
                    ),
                ]
            )
            txn.write(kind.revision_path(slug, rev), kind.serialize(record))
            for item in entries:
                txn.write(kind.file_path(slug, rev, item["path"]), _bytes_of(files, item["path"]))
            current = current or _new_state(sid, slug, now)
            current["revisions"].append(
                {
                    "id": rev,
                    "number": number,
                    "parent": head,
                    "created": now,
                    "state": "draft" if state == "published" else state,
                    "state_changed": now,
                }
            )
            current["head"] = rev
            if state == "published":
                _set_state(current, rev, "published", now)
            status = "created" if number == 1 else "updated"
            new_state = state
        if status != "unchanged":
            txn.write(kind.state_path(slug), kind.serialize(current))
            txn.subject = f"{txn.command}: {slug} {rev} (revision {number}, {new_state})"
    result: dict[str, Any] = {
        "status": status,
        "slug": slug,
        "skill_id": sid,
        "revision_id": rev,
        "revision_number": number,
        "canonical_hash": content_hash,
        "state": new_state,
        "commit": txn.commit_id,
    }
    if skipped:
        result["skipped"] = skipped
    if warnings:
        result["warnings"] = warnings
    return result


def _bytes_of(files: dict[str, bytes], path: str) -> bytes:
    """A file's bytes by its manifest path (NFC; the input may have used another form)."""
    if path in files:
        return files[path]
    import unicodedata

    return next(data for raw, data in files.items() if unicodedata.normalize("NFC", raw) == path)


def _new_state(sid: str, slug: str, now: str) -> dict[str, Any]:
    return {
        "id": sid,
        "slug": slug,
        "status": "active",
        "status_changed": now,
        "head": "",
        "revisions": [],
    }


def _hash_of(view: View, slug: str, revision: str) -> str:
    """The head's hash: a save never builds on a revision that is gone (a damaged store)."""
    return str(kind.stored_revision(view, slug, revision)["canonical_hash"])


def _entry(state: dict[str, Any], revision: str) -> dict[str, Any]:
    entry: dict[str, Any] = next(e for e in state["revisions"] if e["id"] == revision)
    return entry


def _set_state(state: dict[str, Any], revision: str, new: str, now: str) -> None:
    """Move one revision to ``new``; publishing deprecates the published one."""
    for entry in state["revisions"]:
        if entry["id"] == revision:
            entry["state"] = new
            entry["state_changed"] = now
            if new == "published":
                entry["published_at"] = now
        elif new == "published" and entry["state"] == "published":
            entry["state"] = "deprecated"
            entry["state_changed"] = now


def resolve_revision(state: dict[str, Any], ref: str) -> str:
    """A revision of the skill by id or by number (``3``); NotFoundError otherwise.

    Two devices that each saved a revision on the same parent give two revisions one
    number; such a number names neither (InvalidInputError listing both), never the
    first found."""
    numbered = []
    for entry in state["revisions"]:
        if ref == entry["id"]:
            return str(entry["id"])
        if ref == str(entry["number"]):
            numbered.append(entry)
    if len(numbered) == 1:
        return str(numbered[0]["id"])
    if numbered:
        both = ", ".join(f"{e['id']} ({e['state']})" for e in numbered)
        raise InvalidInputError(
            f"Skill {state['slug']} has {len(numbered)} revisions numbered {ref} (saved on "
            f"two devices): {both}; name one by its id."
        )
    raise NotFoundError(f"Skill {state['slug']} has no revision {ref}.")


def _existing(txn: Transaction, slug: str) -> dict[str, Any]:
    state = kind.read_state(txn, slug)
    if state is None:
        raise NotFoundError(f"No skill named {slug}.")
    return state


def _lifecycle(core: Core, command: str, slug: str, ref: str, new: str) -> dict[str, Any]:
    with core.transaction(command) as txn:
        state = _existing(txn, slug)
        rev = resolve_revision(state, ref)
        kind.stored_revision(txn, slug, rev)  # never a state for a revision that is gone
        changed = _entry(state, rev)["state"] != new
        if changed:
            before = {e["id"]: e["state"] for e in state["revisions"]}
            _set_state(state, rev, new, core.clock())
            txn.write(kind.state_path(slug), kind.serialize(state))
            txn.subject = f"{command}: {slug} {rev} (revision {_entry(state, rev)['number']})"
            moved = [e["id"] for e in state["revisions"] if before[e["id"]] != e["state"]]
    return {
        "status": new if changed else "unchanged",
        "slug": slug,
        "revision_id": rev,
        "changed": moved if changed else [],
        "commit": txn.commit_id,
    }


def publish(core: Core, slug: str, ref: str) -> dict[str, Any]:
    """Publish one revision (the previously published one becomes deprecated)."""
    return _lifecycle(core, "skill publish", slug, ref, "published")


def deprecate(core: Core, slug: str, ref: str) -> dict[str, Any]:
    """Deprecate one revision (it stays readable)."""
    return _lifecycle(core, "skill deprecate", slug, ref, "deprecated")


def archive(core: Core, slug: str, archived: bool) -> dict[str, Any]:
    """Archive a skill (hidden from Level 0 recall, still readable) or make it active."""
    status = "archived" if archived else "active"
    command = "skill archive" if archived else "skill unarchive"
    with core.transaction(command) as txn:
        state = _existing(txn, slug)
        changed = state["status"] != status
        if changed:
            state["status"] = status
            state["status_changed"] = core.clock()
            txn.write(kind.state_path(slug), kind.serialize(state))
            txn.subject = f"{command}: {slug}"
    return {"status": status if changed else "unchanged", "slug": slug, "commit": txn.commit_id}
