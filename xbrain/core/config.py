"""The store's settings: ``xbrain.yaml`` (format marker, identity, limits, recall's
defaults, the folder → project mapping).

Committed, so they travel with the store; limits can only be raised.
"""

from __future__ import annotations

import os
import re
from typing import Any, NamedTuple

from ..codec import dump_yaml, load_yaml
from ..errors import CorruptStoreError, InvalidInputError, XbrainError
from . import layout
from .registry import FileKind, register

__all__ = ["DEFAULT_IDENTITY", "LimitError", "StoreConfig", "marker_bytes", "set_config_value"]

DEFAULT_IDENTITY = "xbrain <xbrain@localhost>"
DEFAULT_MAX_ENTRIES = 10_000
DEFAULT_MAX_BYTES = 20 * 1024 * 1024


class LimitError(InvalidInputError):
    """A write would take the store past one of its limits."""

    code = "limit_exceeded"


class StoreConfig(NamedTuple):
    """Settings read from ``xbrain.yaml`` (committed, so they travel with the store)."""

    identity: str = DEFAULT_IDENTITY
    max_entries: int = DEFAULT_MAX_ENTRIES
    max_bytes: int = DEFAULT_MAX_BYTES
    recall: tuple[tuple[str, Any], ...] = ()  # recall's defaults set here (key, value)
    projects: tuple[tuple[str, str], ...] = ()  # folder → project id (``projects.PATH``)
    review: tuple[tuple[str, Any], ...] = ()  # the review queue's settings (key, value)
    serve: tuple[tuple[str, Any], ...] = ()  # ``xbrain serve``'s settings (key, value)

    @classmethod
    def from_marker(cls, data: bytes | None) -> StoreConfig:
        """Parse the marker file; a missing or foreign one means this is not a store."""
        if data is None:
            raise CorruptStoreError("Not an xbrain store (no xbrain.yaml); refusing to touch it.")
        try:
            raw = load_yaml(data)
        except Exception as exc:
            raise CorruptStoreError("Invalid xbrain.yaml; run xbrain doctor.") from exc
        if not isinstance(raw, dict) or raw.get("format") != layout.FORMAT:
            raise CorruptStoreError(
                f"Unsupported store format (expected {layout.FORMAT}); upgrade xbrain."
            )
        identity, limits = raw.get("identity") or {}, raw.get("limits") or {}
        recall, projects = raw.get("recall") or {}, raw.get("projects") or {}
        review, serve = raw.get("review") or {}, raw.get("serve") or {}
        parts = (identity, limits, recall, projects, review, serve)
        if not all(isinstance(part, dict) for part in parts):
            raise CorruptStoreError(
                "Invalid xbrain.yaml (identity/limits/recall/projects); run xbrain doctor."
            )
        for key, value in recall.items():
            if key not in RECALL_KEYS or _recall_problem(key, value):
                raise CorruptStoreError(f"Invalid xbrain.yaml (recall.{key}); run xbrain doctor.")
        for key, value in review.items():
            if REVIEW_KEYS.get(key) is None or value not in REVIEW_KEYS[key]:
                raise CorruptStoreError(f"Invalid xbrain.yaml (review.{key}); run xbrain doctor.")
        for key, value in serve.items():
            if SERVE_KEYS.get(key) is None or value not in SERVE_KEYS[key]:
                raise CorruptStoreError(f"Invalid xbrain.yaml (serve.{key}); run xbrain doctor.")
        for folder, pid in projects.items():
            if _folder_problem(folder) or not isinstance(pid, str) or _project_problem(pid):
                raise CorruptStoreError("Invalid xbrain.yaml (projects); run xbrain doctor.")
        name, email = identity.get("name"), identity.get("email")
        if not all(v is None or _IDENTITY_TEXT.fullmatch(str(v)) for v in (name, email)):
            raise CorruptStoreError("Invalid xbrain.yaml (identity); run xbrain doctor.")
        raised = []
        for key, floor in (("maxEntries", DEFAULT_MAX_ENTRIES), ("maxBytes", DEFAULT_MAX_BYTES)):
            value = limits.get(key, floor)
            if isinstance(value, bool) or not isinstance(value, int):
                raise CorruptStoreError(f"Invalid xbrain.yaml (limits.{key}); run xbrain doctor.")
            raised.append(max(floor, value))
        # one part alone is completed from the default (xbrain <xbrain@localhost>)
        ident = (
            f"{name or 'xbrain'} <{email or 'xbrain@localhost'}>"
            if name or email
            else DEFAULT_IDENTITY
        )
        return cls(
            identity=ident,
            max_entries=raised[0],
            max_bytes=raised[1],
            recall=tuple(sorted(recall.items())),
            projects=tuple(sorted(projects.items())),
            review=tuple(sorted(review.items())),
            serve=tuple(sorted(serve.items())),
        )

    def review_setting(self, key: str) -> str:
        """A review setting (``REVIEW_KEYS``), its default (the first value) when unset."""
        return str(dict(self.review).get(key, REVIEW_KEYS[key][0]))

    def recall_settings(self) -> dict[str, Any]:
        """What recall reads of the settings: its defaults and, under ``projects``, the
        folder → project id mapping."""
        settings: dict[str, Any] = dict(self.recall)
        if self.projects:
            settings["projects"] = dict(self.projects)
        if self.serve:  # read by a fresh process that finds no server (``autoserve``)
            settings["serve"] = dict(self.serve)
        return settings

    def limits(self) -> dict[str, int]:
        """The limits in force."""
        return {"maxEntries": self.max_entries, "maxBytes": self.max_bytes}


_IDENTITY_TEXT = re.compile(r"[^<>\x00-\x1f\x7f]{1,100}")
RECALL_KEYS = {  # recall's defaults: key → (type, low, high) or the allowed values
    "topK": (int, 1, 20),
    "threshold": (float, 0.0, 2.0),
    "maxDropoff": (float, 0.0, 2.0),
    "budget": (int, 100, 200_000),
    "scoring": ("relative", "absolute"),
}
REVIEW_KEYS = {  # the review queue's settings: key → the allowed values, the default first
    # an entry written through the CLI by a named agent (--agent, XBRAIN_AGENT)
    "agentWrites": ("active", "proposed"),
    # the Stop hook asks the agent, once per session, to propose what it learned
    "sessionLearning": ("off", "on"),
}
SERVE_KEYS = {  # ``xbrain serve``'s settings: key → the allowed values, the default first
    # with semantic recall on, a fresh process that finds no server starts one
    "auto": ("on", "off"),
}
CONFIG_KEYS = (
    "identity.name",
    "identity.email",
    "limits.maxEntries",
    "limits.maxBytes",
    *(f"recall.{key}" for key in RECALL_KEYS),
    *(f"review.{key}" for key in REVIEW_KEYS),
    *(f"serve.{key}" for key in SERVE_KEYS),
    "team.reviewers",  # a team store's reviewers: "Name <email>, Name <email>" (issue 47)
)
_REVIEWER = re.compile(r"[^<>,\x00-\x1f\x7f]{1,100} <[^<>,\x00-\x1f\x7f]{1,100}>")
_PROJECT_ID = re.compile(r"[^\s\x00-\x1f\x7fA-Z]{1,200}")


def _folder_problem(folder: Any) -> str | None:
    """Why ``folder`` cannot be mapped to a project, or None."""
    if (
        not isinstance(folder, str)
        or not folder.startswith("/")
        or len(folder) > 4096
        or any(ch < " " or ch == "\x7f" for ch in folder)
        or os.path.normpath(folder) != folder
    ):
        return "an absolute, normalized folder path (projects./home/me/work/api)"
    return None


def _project_problem(pid: str) -> str | None:
    """Why ``pid`` is not a project id, or None."""
    if not _PROJECT_ID.fullmatch(pid):
        return "a project id: lowercase, no spaces, at most 200 characters"
    return None


def _recall_problem(key: str, value: Any) -> str | None:
    """Why ``value`` is not a valid recall default, or None."""
    rule = RECALL_KEYS[key]
    if isinstance(rule[0], str):
        return None if value in rule else f"one of {', '.join(map(str, rule))}"
    kind, low, high = rule
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if not numeric or (kind is int and not isinstance(value, int)) or not low <= value <= high:
        return f"a{'n integer' if kind is int else ' number'} from {low} to {high}"
    return None


def set_config_value(marker: bytes | None, key: str, value: str) -> bytes:
    """The marker file with one setting changed (validated)."""
    try:
        (key + value).encode("utf-8")
    except UnicodeEncodeError:  # bytes from the command line that are not UTF-8
        raise InvalidInputError("Settings and their values must be valid UTF-8 text.") from None
    StoreConfig.from_marker(marker)
    raw = load_yaml(marker or b"")
    section, name = key.split(".", 1) if "." in key else (key, "")
    if key not in CONFIG_KEYS and section != "projects":
        known = ", ".join((*CONFIG_KEYS, "projects.FOLDER"))
        raise InvalidInputError(f"Unknown setting {key!r}; use one of: {known}.")
    parsed: Any
    if section == "projects":
        name = os.path.normpath(name) if name.startswith("/") else name
        value = value.strip().lower()
        problem = _folder_problem(name)
        if problem is None and value:
            problem = _project_problem(value)
        if problem is not None:
            raise InvalidInputError(f"Invalid {key[:80]}; use {problem}.")
        mapping = raw.setdefault("projects", {})
        if value:
            mapping[name] = value
        else:  # an empty id drops the mapping
            mapping.pop(name, None)
            if not mapping:
                del raw["projects"]
        return _acceptable(key, dump_yaml(raw))
    if section == "recall":
        parsed = _parse_number(value) if not isinstance(RECALL_KEYS[name][0], str) else value
        problem = _recall_problem(name, parsed)
        if problem is not None:
            raise InvalidInputError(f"Invalid {key}; use {problem}.")
    elif section in ("review", "serve"):
        allowed = (REVIEW_KEYS if section == "review" else SERVE_KEYS)[name]
        if value not in allowed:
            raise InvalidInputError(f"Invalid {key}; use one of {', '.join(allowed)}.")
        parsed = value
    elif section == "team":  # a list: the whole list each time ("" empties it)
        parsed = [part.strip() for part in value.split(",") if part.strip()]
        if not all(_REVIEWER.fullmatch(part) for part in parsed):
            raise InvalidInputError(f"Invalid {key}; use identities like 'Ann <ann@example.org>'.")
    elif section == "identity":
        if not _IDENTITY_TEXT.fullmatch(value) or value != value.strip():
            raise InvalidInputError(
                f"Invalid {key}; use one line without < > or control characters."
            )
        parsed = value
    else:
        floor = DEFAULT_MAX_ENTRIES if name == "maxEntries" else DEFAULT_MAX_BYTES
        if not value.isdigit() or int(value) < floor:
            raise InvalidInputError(f"Invalid {key}; limits can only be raised (at least {floor}).")
        parsed = int(value)
    raw.setdefault(section, {})[name] = parsed
    return _acceptable(key, dump_yaml(raw))


def _acceptable(key: str, marker: bytes) -> bytes:
    """``marker`` if a clone or a pull would take it (they check xbrain.yaml as every
    store file is checked: its schema, then ``from_marker``); else why not, for ``key``.
    One rule for both, so no setting makes a store whose backup cannot be restored."""
    from .registry import content_problem

    problem = content_problem("marker", layout.MARKER, marker)
    if problem is not None:
        raise InvalidInputError(f"Invalid {key}: {problem}.")
    return marker


def _parse_number(value: str) -> Any:
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return value


def marker_bytes() -> bytes:
    """The marker file of a new store."""
    return dump_yaml({"format": layout.FORMAT})


def _marker_problem(data: bytes) -> str | None:
    try:
        StoreConfig.from_marker(data)
    except XbrainError as exc:
        return exc.message.rstrip(".")
    return None


register(
    FileKind(
        "marker",
        re.escape(layout.MARKER),
        64 << 10,
        "store-files#marker",
        yaml=True,
        check=_marker_problem,
    )
)
