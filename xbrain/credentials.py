"""One rule keeps credentials out of every config xbrain stores or passes on.

Provider and source configs are committed (their identity is a receipts key) and
adapter arguments are visible to every process on the machine, so neither may carry a
secret: a key named like a credential at any depth (``token``, ``options.token``,
``X-Amz-Security-Token``), an argument that sets one (``--token=…``, ``TOKEN=…`` or
``--token …`` as two words), or a URL with a password, an https username or a secret
parameter. Names are matched by :func:`xbrain.urls.is_secret_name`.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import InvalidInputError
from .urls import is_secret_name, parse_url, secret_parameter

__all__ = ["reject_credentials"]

_ASSIGNMENT = re.compile(r"-{0,2}([A-Za-z][A-Za-z0-9_.\[\]-]*)=(.*)", re.DOTALL)
_FLAG = re.compile(r"-{1,2}([A-Za-z][A-Za-z0-9_.-]*)")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")
_HINT = "let the adapter read them from its own keychain or environment."


def reject_credentials(config: dict[str, Any], what: str) -> None:
    """Raise InvalidInputError when ``config`` (``what``: e.g. "Provider configs") holds one."""
    _check_keys(config, what, "", 0)
    command = config.get("command")
    if isinstance(command, list):
        _check_arguments([arg for arg in command if isinstance(arg, str)])


def _check_keys(value: Any, what: str, prefix: str, depth: int) -> None:
    if depth > 32:
        raise InvalidInputError(f"{what} are nested too deeply.")
    if isinstance(value, dict):
        for name, item in value.items():
            key = f"{prefix}{name}"
            if is_secret_name(str(name)) and item not in (None, "", [], {}):
                raise InvalidInputError(f'{what} must not hold credentials ("{key}"); {_HINT}')
            _check_keys(item, what, key + ".", depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_keys(item, what, prefix, depth + 1)


def _check_arguments(args: list[str]) -> None:
    for index, arg in enumerate(args):
        assignment = _ASSIGNMENT.fullmatch(arg)
        flag = _FLAG.fullmatch(arg)
        name = (
            assignment.group(1)
            if assignment
            else flag.group(1)
            if flag and index + 1 < len(args) and not args[index + 1].startswith("-")
            else None
        )
        if name is not None and is_secret_name(name):
            raise InvalidInputError(
                f'Adapter arguments must not carry credentials ("{name}"); {_HINT}'
            )
        for found in _URL.findall(arg):  # --url=https://… as well as a bare URL
            try:
                url = parse_url(found)
            except InvalidInputError:
                continue
            secret = secret_parameter(url)
            if url.username or url.password or secret:
                raise InvalidInputError(
                    "Adapter arguments must not carry URLs with credentials or secret "
                    f'parameters ("{secret or "user:password"}").'
                )
