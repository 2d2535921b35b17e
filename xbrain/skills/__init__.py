"""Skills (SPEC §12): procedures saved as immutable revisions, with a lifecycle.

``save`` and ``import_skill`` append a revision (``writing``) from files gathered and
checked first (``sources``; git URLs through the core's transport); ``publish``,
``deprecate`` and ``archive`` change state; ``reading`` serves the list, Level 1 and
Level 2 of recall, the log and the diff; ``capsule`` exports a revision. Level 0 (ranked
descriptors) is search's: it indexes skills beside resources.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from ..core import Core, Limits, PackBound, read_foreign_tree
from ..kinds.skillformat import MAX_COMPONENT_BYTES, MAX_COMPONENTS, MAX_DEPTH
from ..redact import redact_url
from .sources import CAPSULE, Gathered, from_path, from_stream
from .writing import archive, deprecate, publish, save

__all__ = [
    "archive",
    "check_folder",
    "deprecate",
    "import_git",
    "import_skill",
    "publish",
    "restore",
    "save",
    "save_input",
]


# What a repository may send for one import (it arrives whole at depth 1, so a skill in a
# bigger repository counts the rest): generous for a skills repository, refused well
# before a pack could fill the disk or inflate an object beyond memory.
IMPORT_BOUND = PackBound(
    max_wire=64 << 20,
    max_objects=100_000,
    max_object=32 << 20,
    max_total=256 << 20,
    advice=" To import a skill from a big repository, import its folder from a checkout:"
    " xbrain skill import DIR.",
)


def _gather(source: Path | BinaryIO) -> Gathered:
    return from_path(source) if isinstance(source, Path) else from_stream(source)


def save_input(
    core: Core, source: Path | BinaryIO, *, publish: bool = False, expect: str | None = None
) -> dict[str, Any]:
    """``skill save``: a directory, ``SKILL.md`` or ZIP from the user (draft, or published)."""
    gathered = _gather(source)
    if gathered.capsule is not None:  # your own save: the files, not where they came from
        gathered.skipped.append(CAPSULE)
    return save(
        core,
        gathered.files,
        source={"type": "save"},
        state="published" if publish else "draft",
        expect=expect,
        skipped=gathered.skipped,
        executable=gathered.executable,
    )


def check_folder(source: Path) -> None:
    """Everything :func:`import_skill` checks of a skill folder before it writes (its
    files, ``SKILL.md``, the manifest), without writing: a caller importing several
    refuses them all before it writes any."""
    from ..kinds.skillformat import SKILL_MD, manifest, parse_skill_md

    gathered = _gather(source)
    if SKILL_MD not in gathered.files:
        from ..errors import InvalidInputError

        raise InvalidInputError(f"{source.name}: a skill needs a {SKILL_MD}.")
    parse_skill_md(gathered.files[SKILL_MD])
    manifest(gathered.files, executable=gathered.executable)


def import_skill(core: Core, source: Path | BinaryIO, *, state: str = "proposed") -> dict[str, Any]:
    """``skill import`` of a directory, ``SKILL.md`` or ZIP: lands as ``proposed``.

    An export's capsule file, valid and describing these files, becomes the revision's
    source (type ``capsule``, with the exported revision's states and first source);
    any other is ignored with a warning (:mod:`.provenance`)."""
    gathered = _gather(source)
    origin: dict[str, Any] = {"type": gathered.origin}
    if isinstance(source, Path):
        origin["path"] = str(source.name)
    warnings: list[str] = []
    if gathered.capsule is not None:
        origin, warning = _capsule_origin(gathered, origin)
        warnings += [warning] if warning else []
    result = save(
        core,
        gathered.files,
        source=origin,
        state=state,
        skipped=gathered.skipped,
        executable=gathered.executable,
    )
    if origin["type"] == "capsule":
        result["origin"] = origin["origin"]
    if warnings:
        result["warnings"] = [*result.get("warnings", []), *warnings]
    return result


def _capsule_origin(gathered: Gathered, plain: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The source a capsule gives the import (``plain`` and a warning when it is ignored)."""
    from ..kinds.skillformat import SKILL_MD, canonical_hash, manifest, parse_skill_md
    from .provenance import capsule_source

    assert gathered.capsule is not None
    if SKILL_MD not in gathered.files:
        return plain, None  # save refuses it, as always
    slug = parse_skill_md(gathered.files[SKILL_MD]).slug
    content_hash = canonical_hash(manifest(gathered.files, executable=gathered.executable))
    found, warning = capsule_source(gathered.capsule, slug, content_hash, plain.get("path"))
    return (plain, warning) if found is None else (found, None)


def import_git(core: Core, url: str, *, ref: str | None, path: str | None) -> dict[str, Any]:
    """``skill import GIT-URL [--ref R] [--path P]``: fetched with dulwich into a scratch
    repository (a repository on this machine: read in place), the commit recorded; lands
    as ``proposed``."""
    limits = Limits(MAX_COMPONENTS + 1, MAX_COMPONENT_BYTES, MAX_DEPTH, IMPORT_BOUND)
    tree = read_foreign_tree(url, ref, path, limits, _scratch_root(core))
    source = {"type": "git", "url": redact_url(url), "commit": tree.commit}
    if ref:
        source["ref"] = ref
    if path:
        source["path"] = path
    return save(
        core,
        tree.files,
        source=source,
        state="proposed",
        skipped=tree.skipped,
        executable=tree.executable,
    )


def _scratch_root(core: Core) -> Path | None:
    """Where a git import's scratch repository goes: ``import/`` of the cache directory
    (private; a killed import's is removed by the next). None (the system's temporary
    directory) when the cache directory lies inside a store not made yet."""
    if not core.exists() and core.cache_dir.is_relative_to(core.path):
        return None
    return core.cache_dir / "import"


def restore(core: Core, slug: str, ref: str, *, publish: bool = False) -> dict[str, Any]:
    """``skill restore SLUG R``: R's exact files as a new head revision (history is never
    rewritten); the same content as the head is ``unchanged``."""
    from ..kinds import skill as kind
    from .reading import state_of
    from .writing import resolve_revision

    with core.reading() as view:
        state = state_of(view, slug)
        assert view is not None
        rev = resolve_revision(state, ref)
        revision = kind.stored_revision(view, slug, rev)
        files = dict(kind.revision_files(view, slug, revision))
        types = {item["path"]: item["type"] for item in revision["files"]}
        executable = {item["path"] for item in revision["files"] if item.get("executable")}
    result = save(
        core,
        files,
        source={"type": "save"},
        state="published" if publish else "draft",
        command="skill restore",
        types=types,
        executable=executable,
    )
    result["restored_from"] = rev
    return result
