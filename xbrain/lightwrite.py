"""``xbrain put`` and ``xbrain skill save`` without click: the writes agents make.

Like ``lightcli`` for recall and search, the console script hands these two commands
here first. Only the plain forms are read (the positional source, ``--store``,
``--wait``, ``--agent``, ``--traceback``, and save's ``--publish`` and
``--expect-revision``); anything else — ``--help``, an unknown or repeated option, a
value click would refuse — answers ``None`` and click parses the command exactly as it
always does. The work is the same ``Store`` call the click command makes, in the same
order, with the same one-line errors and exit codes.
"""

from __future__ import annotations

import sys

from .lightcli import cache_dir, default_store_path, failed, parse_plain

TYPE_CHECKING = False  # the write path loads neither typing nor click at import
if TYPE_CHECKING:
    from typing import Any

__all__ = ["parse_put", "parse_skill_save", "run_put", "run_skill_save"]


def _wait(value: str) -> float:
    """click's ``FloatRange(min=0)``: a float at least 0 (NaN is refused)."""
    seconds = float(value)
    if not seconds >= 0:
        raise ValueError(value)
    return seconds


def _path(value: str) -> str:
    """A store path; an empty one is click's to read (it means the current directory)."""
    if not value:
        raise ValueError(value)
    return value


_COMMON: dict[str, tuple[str, Any]] = {
    "--store": ("store", _path),
    "--wait": ("wait", _wait),
    "--agent": ("agent", str),
}
_COMMON_FLAGS = {"--traceback": "traceback"}
_SAVE: dict[str, tuple[str, Any]] = {**_COMMON, "--expect-revision": ("expect", str)}
_SAVE_FLAGS = {**_COMMON_FLAGS, "--publish": "publish"}


def parse_put(args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``xbrain put ARGS`` (``source`` is FILE or ``-``), or None when
    click should parse them."""
    return _with_source(parse_plain(args, _COMMON, _COMMON_FLAGS, query=True))


def parse_skill_save(args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``xbrain skill save ARGS``, or None when click should parse them."""
    return _with_source(parse_plain(args, _SAVE, _SAVE_FLAGS, query=True))


def _with_source(found: dict[str, Any] | None) -> dict[str, Any] | None:
    if found is None or "query" not in found:
        return None
    found["source"] = found.pop("query")
    return found


def _open(found: dict[str, Any]) -> Any:
    """The ``Store`` the click command would open for these options."""
    import os
    from pathlib import Path

    from .store import Store

    agent = found.get("agent")
    if agent is None:
        agent = os.environ.get("XBRAIN_AGENT")
    where = found.get("store", default_store_path())
    return Store(Path(where), wait=found.get("wait") or 0.0, agent=agent, cache_dir=cache_dir())


def _source(value: str) -> Any:
    from pathlib import Path

    return sys.stdin.buffer if value == "-" else Path(value)


def _print(value: Any) -> int:
    from .codec import json_document

    sys.stdout.write(json_document(value))
    sys.stdout.flush()
    return 0


def run_put(args: list[str]) -> int | None:
    """Run ``xbrain put ARGS`` if this module can parse them: the exit code, or None."""
    found = parse_put(args)
    if found is None:
        return None
    try:
        from .inputs import read_json_input

        store = _open(found)
        return _print(store.put(read_json_input(_source(found["source"]))))
    except Exception as exc:
        return failed(exc, bool(found.get("traceback")))


def run_skill_save(args: list[str]) -> int | None:
    """Run ``xbrain skill save ARGS`` if this module can parse them: the exit code, or
    None."""
    found = parse_skill_save(args)
    if found is None:
        return None
    try:
        store = _open(found)
        saved = store.skill_save(
            _source(found["source"]),
            publish=bool(found.get("publish")),
            expect=found.get("expect"),
        )
        return _print(saved)
    except Exception as exc:
        return failed(exc, bool(found.get("traceback")))
