"""A team store's proposals (issue 47): one file per record shared with the team.

```
proposals/<key>.yaml    {key, kind, id, revision?, state, sharedBy, sharedAt,
                         reviewedBy?, reviewedAt?, reason?}
```

``key`` is the record's id (``resource_…``, ``entry_…``) or, for a skill, the shared
revision's id (``rev_…``; ``id`` is then the skill's slug). ``state`` is ``proposed``
until a reviewer ``accepted`` or ``rejected`` it. One file per proposal, so two members
sharing at once never touch the same file; two devices' copies of one proposal merge
to the later change (``reviewedAt``, else ``sharedAt``).
"""

from __future__ import annotations

import re
from typing import Any

from ..codec import load_yaml
from ..core.registry import FileKind, register

__all__ = ["DIRECTORY", "KEY", "STATES", "parse_proposal", "proposal_path"]

DIRECTORY = "proposals"
KEY = r"(?:resource|entry)_[0-9a-f]{64}|rev_[0-9a-f]{32}"
STATES = ("proposed", "accepted", "rejected")
KINDS = ("resource", "entry", "skill")
_TEXT = re.compile(r"[^\x00-\x1f\x7f]{1,200}")
_REQUIRED = ("key", "kind", "id", "state", "sharedBy", "sharedAt")
_OPTIONAL = ("revision", "reviewedBy", "reviewedAt", "reason")


def proposal_path(key: str) -> str:
    """``proposals/<key>.yaml``."""
    return f"{DIRECTORY}/{key}.yaml"


def parse_proposal(data: bytes) -> dict[str, Any]:
    """A proposal file's fields (ValueError when it is not one)."""
    value = load_yaml(data)
    problem = _problem(value)
    if problem is not None:
        raise ValueError(problem)
    assert isinstance(value, dict)
    return value


def _problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "a proposal is a mapping"
    if any(key not in value for key in _REQUIRED):
        return "a proposal needs key, kind, id, state, sharedBy and sharedAt"
    if any(key not in (*_REQUIRED, *_OPTIONAL) for key in value):
        return "a proposal has an unknown field"
    if not all(isinstance(v, str) and _TEXT.fullmatch(v) for v in value.values()):
        return "a proposal's fields are one line of text each"
    if not re.fullmatch(KEY, value["key"]):
        return "a proposal's key is a record id or a skill revision id"
    if value["kind"] not in KINDS or value["state"] not in STATES:
        return "a proposal's kind or state is unknown"
    if (value["kind"] == "skill") != value["key"].startswith("rev_"):
        return "a skill's proposal is keyed by its revision"
    return None


def _check(data: bytes) -> str | None:
    try:
        return _problem(load_yaml(data))
    except Exception:  # every parser failure means the same: not a proposal
        return "a proposal is YAML"


def _clock(data: bytes) -> str:
    try:
        value = parse_proposal(data)
    except Exception:
        return ""
    return str(value.get("reviewedAt") or value["sharedAt"])


def _merge(a: bytes, b: bytes) -> bytes:
    """The later change of one proposal (ties: the greater bytes, the same either way)."""
    return max(a, b, key=lambda data: (_clock(data), data))


register(
    FileKind(
        "proposal",
        rf"{DIRECTORY}/(?:{KEY})\.yaml",
        8 << 10,
        None,
        yaml=True,
        check=_check,
        merge=_merge,
    )
)
