"""The Agent Skills format and a skill's identities (SPEC §12), as pure functions.

A skill is a ``SKILL.md`` (YAML frontmatter, then Markdown) plus optional component files.
This module checks the frontmatter and every component path, builds a revision's manifest
and computes the three identities: ``skill_id`` (from the slug), ``canonical_hash`` (of
the exact bytes of every file) and ``revision_id`` (the chain link). Nothing here reads or
writes a store.

Decisions where SPEC §12 leaves a choice:

* ``SKILL.md`` is itself a file of the manifest (type ``instructions``), so the canonical
  hash covers the instructions as well as the components.
* ``SKILL.md`` must begin with its frontmatter (``---`` on the first line, ``---`` or
  ``...`` closing it); a byte-order mark or text before it is refused.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any, NamedTuple

from ..codec import canonical_json, load_yaml, sha256_hex, yaml_problem
from ..errors import InvalidInputError
from ..paths import component_problem, git_own_name, same_file_key
from .plainyaml import frontmatter

__all__ = [
    "COMPONENT_TYPES",
    "FORMAT",
    "MANUAL_KEY",
    "MAX_COMPONENTS",
    "MAX_COMPONENT_BYTES",
    "MAX_SKILL_MD_BYTES",
    "SKILL_MD",
    "Instructions",
    "canonical_hash",
    "check_path",
    "check_shown",
    "component_type",
    "file_problem",
    "kept_by_git",
    "manifest",
    "parse_skill_md",
    "path_clash",
    "paths_problem",
    "revision_id",
    "revision_problem",
    "skill_id",
]

FORMAT = "xbrain.skill/1"
SKILL_MD = "SKILL.md"
MAX_SKILL_MD_BYTES = 64 * 1024
MAX_COMPONENTS = 50
MAX_COMPONENT_BYTES = 128 * 1024
MAX_PATH_BYTES = 512
MAX_NAME = 255  # bytes of one file or folder name, on any file system
MAX_DEPTH = 8
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
COMPONENT_TYPES = ("reference", "example", "template", "document", "artifact", "script")
_BY_TOP_DIRECTORY = {
    "references": "reference",
    "examples": "example",
    "templates": "template",
    "scripts": "script",
    "assets": "artifact",
}
FRONTMATTER_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
MANUAL_KEY = "disable-model-invocation"
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*", re.ASCII)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Characters a screen does not show as themselves: the C1 controls, every format
# character (bidirectional overrides, embeddings, isolates and marks; zero-width space,
# word joiner, soft hyphen, byte-order mark, tags, …) and the line and paragraph
# separators. A name holding one can pass for another (``evil\u202egnp.md`` shows as
# ``evilpng.md``). The zero-width non-joiner and joiner stay: Persian and Indic words
# and emoji sequences are spelt with them, and a name that differs from another only by
# one is already the same name after folding (:func:`xbrain.paths.same_file_key`).
_UNSHOWN_CATEGORIES = ("Cc", "Cf", "Zl", "Zp")
_SPELLING = ("\u200c", "\u200d")
# Path segments git refuses or treats specially on some file system (case-insensitive):
# .git itself, its NTFS short name, and the NTFS alternate-stream spelling.
_GIT_SEGMENT = re.compile(r"\.git(?:\.|::\$index_allocation)?|git~\d+", re.IGNORECASE)


def skill_id(slug: str) -> str:
    """``"skill_" + sha256(JSON ["skill", slug])``, hex."""
    return "skill_" + sha256_hex(canonical_json(["skill", slug]).encode())


def revision_id(skill: str, parent: str | None, content_hash: str) -> str:
    """``"rev_" + the first 32 hex of sha256(JSON [skill_id, parent, canonical_hash])``."""
    return "rev_" + sha256_hex(canonical_json([skill, parent, content_hash]).encode())[:32]


class Instructions(NamedTuple):
    """A parsed ``SKILL.md``: its frontmatter (allowed keys only), the unknown keys, the
    Markdown body."""

    frontmatter: dict[str, Any]
    unknown: tuple[str, ...]
    body: str
    # ``disable-model-invocation: true`` (Claude Code's key, kept as is): the skill runs
    # only when asked for by name, so automatic recall never offers it
    manual: bool = False

    @property
    def slug(self) -> str:
        """The skill's name, which is its slug."""
        return str(self.frontmatter["name"])


def parse_skill_md(data: bytes) -> Instructions:
    """Check a ``SKILL.md``: size, UTF-8, frontmatter shape and every allowed key.

    Unknown keys are returned, not refused: save and import keep them and warn.
    """
    if len(data) > MAX_SKILL_MD_BYTES:
        raise InvalidInputError(f"{SKILL_MD} is {len(data):,} bytes; the limit is 64 KiB.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{SKILL_MD} is not UTF-8 text.") from None
    lines = text.split("\n")
    if lines[0].rstrip("\r") != "---":
        why = " (it starts with a byte-order mark: save it as UTF-8 without one)"
        raise InvalidInputError(
            f"{SKILL_MD} must begin with YAML frontmatter ('---')"
            + (why if text.startswith("\ufeff") else "")
            + "."
        )
    end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip("\r") in ("---", "...")), 0)
    if not end:
        raise InvalidInputError(f"{SKILL_MD}'s frontmatter is not closed by '---'.")
    block = "\n".join(lines[1:end])
    meta = frontmatter(block)  # flat one-line text, as most are, read without the parser
    if meta is None:
        try:
            meta = load_yaml(block.encode())
        except Exception as exc:  # ruamel's errors and the values it cannot construct
            message = yaml_problem(exc, first_line=2)
            raise InvalidInputError(
                f"{SKILL_MD}'s frontmatter is not valid YAML: {message}"
            ) from None
    if not isinstance(meta, dict):
        raise InvalidInputError(f"{SKILL_MD}'s frontmatter must be a mapping of keys.")
    unknown = tuple(sorted(str(key) for key in meta if key not in FRONTMATTER_KEYS))
    known = {key: value for key, value in meta.items() if key in FRONTMATTER_KEYS}
    _check_frontmatter(known)
    manual = meta.get(MANUAL_KEY) in (True, "true")
    return Instructions(known, unknown, "\n".join(lines[end + 1 :]), manual)


def _check_frontmatter(meta: dict[str, Any]) -> None:
    name = meta.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 64 or not _SLUG.fullmatch(name):
        hint = "" if isinstance(name, str) or name is None else "; quote it, YAML read a non-text"
        raise InvalidInputError(
            "The skill's name must be 1-64 characters of a-z, 0-9 and '-', with no '-' "
            f"at either end and no '--' (got {name!r}{hint})."
        )
    description = meta.get("description")
    if not isinstance(description, str) or not 1 <= len(description.strip()) <= MAX_DESCRIPTION:
        raise InvalidInputError("The skill's description must be 1-1,024 characters of text.")
    for key in ("license", "compatibility"):
        if key in meta and not isinstance(meta[key], str):
            raise InvalidInputError(f"The skill's {key} must be text.")
    if len(meta.get("compatibility", "")) > MAX_COMPATIBILITY:
        raise InvalidInputError("The skill's compatibility must be at most 500 characters.")
    metadata = meta.get("metadata", {})
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise InvalidInputError("The skill's metadata must map text keys to text values.")
    tools = meta.get("allowed-tools", "")
    if not isinstance(tools, str) and not (
        isinstance(tools, list) and all(isinstance(tool, str) for tool in tools)
    ):
        raise InvalidInputError("The skill's allowed-tools must be text or a list of text.")


def check_path(path: str, *, in_store: bool = True) -> str:
    """A component's path, NFC-normalized, or InvalidInputError saying what is wrong.

    ``in_store``: the path is written in the store's working tree (a skill's files), so
    every name must be one the store writes there (:func:`xbrain.paths.component_problem`:
    no colon, nothing starting with ``.git``); else (an entry's source file, written only
    by an export) each name must just fit a file system."""
    shown = ascii(path)
    if not path or path.startswith("/") or re.match(r"[A-Za-z]:", path):
        raise InvalidInputError(f"Component path {shown} must be relative.")
    if "\\" in path or _CONTROL.search(path):
        raise InvalidInputError(f"Component path {shown} has a backslash or control character.")
    check_shown(path)
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # a file name that is not UTF-8, as the file system gave it
        raise InvalidInputError(f"Component path {shown} is not valid UTF-8.") from None
    path = unicodedata.normalize("NFC", path)
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        raise InvalidInputError(f"Component path {shown} is over {MAX_PATH_BYTES} bytes.")
    parts = path.split("/")
    if len(parts) > MAX_DEPTH:
        raise InvalidInputError(f"Component path {shown} is deeper than {MAX_DEPTH} levels.")
    for part in parts:
        if part in ("", ".", ".."):
            raise InvalidInputError(f"Component path {shown} has an empty, '.' or '..' part.")
        if _GIT_SEGMENT.fullmatch(part.rstrip(". ")):
            raise InvalidInputError(f"Component path {shown} names a git directory.")
        # and every other name the store never writes in its working tree (a name over
        # 255 bytes, a colon, .git…): refused here, before the commit would refuse it
        problem = component_problem(part.encode("utf-8"))
        if problem is not None and (in_store or len(part.encode("utf-8")) > MAX_NAME):
            raise InvalidInputError(f"Component path {shown} has {problem}.")
    return path


def check_shown(path: str) -> None:
    """Refuse a path holding a character a screen does not show as itself (a
    bidirectional control, a zero-width or other format character, a C1 control, a line
    or paragraph separator): a name that can pass for another is InvalidInputError."""
    if path.isascii():
        return
    for char in path:
        if char not in _SPELLING and unicodedata.category(char) in _UNSHOWN_CATEGORIES:
            raise InvalidInputError(
                f"Component path {path!a} has an invisible or bidirectional control "
                f"character (U+{ord(char):04X}): a name must show as what it is."
            )


def path_clash(paths: Iterable[str]) -> str | None:
    """Why ``paths`` (checked, NFC) cannot all be files of one folder, or None: two are
    the same name after NFC and case folding, or one is a folder of another (``a``
    beside ``a/b``; ``A`` beside ``a/b`` too, as a case-insensitive file system sees it).
    Either way a checkout keeps only one of them."""
    files: dict[str, str] = {}
    folders: dict[str, str] = {}
    for path in paths:
        key = same_file_key(path)
        if key in files:
            return f"Two paths are the same after NFC and case folding: {path!a}."
        files[key] = path
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folders.setdefault(same_file_key("/".join(parts[:depth])), path)
    for key, path in files.items():
        if key in folders:
            return (
                f"Component path {path!a} is a file and also the folder of "
                f"{folders[key]!a} (after NFC and case folding)."
            )
    return None


def paths_problem(paths: list[str]) -> str | None:
    """Why the paths of a stored manifest (a remote's revision, one doctor reads) are
    not what :func:`manifest` writes, or None: each a checked path in NFC, no clash."""
    for path in paths:
        try:
            checked = path if path == SKILL_MD else check_path(path)
        except InvalidInputError as exc:
            return exc.message
        if checked != path:
            return f"Component path {path!a} is not in NFC."
    return path_clash(paths)


def kept_by_git(path: str) -> bool:
    """Whether ``path`` is one of git's own files in a skill kept in git (``.gitignore``,
    ``.gitattributes``, ``.github/…``): skipped on import, as ``.DS_Store`` is. Git's own
    directory itself (``.git``, ``git~1``) is not one: an archive carrying it is refused."""
    return any(
        git_own_name(part) and not _GIT_SEGMENT.fullmatch(part.rstrip(". "))
        for part in path.rstrip("/").split("/")
    )


def component_type(path: str) -> str:
    """A component's default type, from its top directory."""
    top = path.split("/", 1)[0] if "/" in path else ""
    return _BY_TOP_DIRECTORY.get(top, "document")


def manifest(
    files: dict[str, bytes],
    types: dict[str, str] | None = None,
    executable: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The manifest of a revision: ``SKILL.md`` and every component as ``{path, type,
    sha256, bytes}``, sorted by the UTF-8 bytes of the path.

    ``files`` maps paths to exact bytes and must hold ``SKILL.md``; ``types`` may set a
    component's type. ``executable`` names the files (as in ``files``) that had the
    executable bit where they came from: their line adds ``"executable": true`` (only
    theirs, so every other manifest, and every revision made before, hashes as it did).
    Every limit of SPEC §12 is checked; two paths equal after NFC and case folding, or
    one the folder of another, are refused (:func:`path_clash`).
    """
    marked = set(executable)
    if SKILL_MD not in files:
        raise InvalidInputError(f"A skill needs a {SKILL_MD}.")
    components = {path: data for path, data in files.items() if path != SKILL_MD}
    if len(components) > MAX_COMPONENTS:
        raise InvalidInputError(
            f"A skill has at most {MAX_COMPONENTS} components (got {len(components)})."
        )
    entries: dict[str, dict[str, Any]] = {}
    checked = {raw: SKILL_MD if raw == SKILL_MD else check_path(raw) for raw in files}
    # a store must check out on case-insensitive file systems too, every file in place
    clash = path_clash(checked.values())
    if clash is not None:
        raise InvalidInputError(clash)
    for raw, data in files.items():
        path = checked[raw]
        if path != SKILL_MD and len(data) > MAX_COMPONENT_BYTES:
            raise InvalidInputError(
                f"Component {path!a} is {len(data):,} bytes; the limit is 128 KiB."
            )
        kind = "instructions" if path == SKILL_MD else (types or {}).get(raw, component_type(path))
        if path != SKILL_MD and kind not in COMPONENT_TYPES:
            raise InvalidInputError(f"Component type {kind!r} is not one of {COMPONENT_TYPES}.")
        entries[path] = {"path": path, "type": kind, "sha256": sha256_hex(data), "bytes": len(data)}
        if raw in marked or path in marked:
            entries[path]["executable"] = True
    parse_skill_md(files[SKILL_MD])
    return [entries[path] for path in sorted(entries, key=lambda p: p.encode("utf-8"))]


def canonical_hash(files: list[dict[str, Any]]) -> str:
    """``"sha256:" + sha256(RFC 8785 JSON of {"format": "xbrain.skill/1", "files": …})``."""
    return "sha256:" + sha256_hex(_rfc8785({"format": FORMAT, "files": files}))


_SAFE_INT = 2**53 - 1  # RFC 8785's integers: what a double holds exactly


def _rfc8785(value: Any) -> bytes:
    """RFC 8785 JSON of ``value``: json's sorted compact form when that is the same bytes
    (ASCII keys, which sort alike by code point and by UTF-16 unit; text, booleans, null
    and whole numbers in the safe range; json and rfc8785 escape the same characters
    alike), else rfc8785's (floats, other keys, a lone surrogate: its result or error)."""
    if _json_is_jcs(value):
        import json

        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: rfc8785 refuses it
            pass
    import rfc8785

    return rfc8785.dumps(value)


def _json_is_jcs(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_SAFE_INT <= value <= _SAFE_INT)
    if kind is list:
        return all(_json_is_jcs(item) for item in value)
    if kind is dict:
        return all(
            type(key) is str and key.isascii() and _json_is_jcs(item) for key, item in value.items()
        )
    return False


def revision_problem(slug: str, name: str, revision: dict[str, Any]) -> str | None:
    """Why stored revision ``name`` of ``slug`` is not the one its id names (None: it is).

    The id is a hash of the skill's id, the parent and the manifest's canonical hash, so a
    manifest or a parent edited after the fact (by hand, by a remote) shows here.
    """
    if revision["id"] != name or revision["skill_id"] != skill_id(slug):
        return "its id or skill_id differs from its place"
    if canonical_hash(revision["files"]) != revision["canonical_hash"]:
        return "its manifest does not match its canonical_hash"
    if revision_id(revision["skill_id"], revision["parent"], revision["canonical_hash"]) != name:
        return "its revision id does not match its parent and canonical_hash"
    return None


def file_problem(item: dict[str, Any], data: bytes) -> str | None:
    """Why ``data`` is not the file manifest line ``item`` records (None: it is)."""
    if len(data) != item["bytes"] or sha256_hex(data) != item["sha256"]:
        return f"{item['path']} does not match its manifest hash"
    return None
