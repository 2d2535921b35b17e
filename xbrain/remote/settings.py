"""Remote names and URLs, the limits a pull is held to, and the remote listing."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..core import GitStore, LimitError, StoreConfig, View, limited_count, local_path
from ..errors import InvalidInputError
from ..urls import parse_url, redact_url, secret_parameter

__all__ = [
    "check_limits",
    "describe",
    "device",
    "stored_location",
    "validate_name",
    "validate_remote_url",
]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", re.ASCII)
_SCP = re.compile(r"(?P<userinfo>[^/@:\s]+(?::[^/@\s]*)?)@(?P<host>[^/:\s]+):(?!//)")
CREDENTIALS = "Remote URLs must not embed credentials; use your ssh agent or git credential helper."
# git's "<transport>::<address>": a remote helper program (ext:: runs any command). dulwich
# has no helpers (it read "ext::sh -c …" as an ssh host "ext"), and git itself would run it
_HELPER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*::")


def validate_remote_url(url: str) -> str:
    """Any URL dulwich supports, but never with credentials or secret parameters.

    Messages never quote a credential (the URL is redacted).
    """
    if not isinstance(url, str) or not url.strip() or "\n" in url or "\0" in url:
        raise InvalidInputError("Give a remote URL or path.")
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:  # git keeps remotes as text (never quoted: it may hold a secret)
        raise InvalidInputError("Remote URLs and paths must be valid UTF-8.") from None
    if url.startswith("-"):  # an option to git or ssh, not a place (./-name is a path)
        raise InvalidInputError("Remote URLs and paths must not begin with '-'.")
    if _HELPER.match(url):
        raise InvalidInputError(
            "Remote helper URLs (transport::address) are not supported; give an https, "
            "ssh, git or file URL, user@host:path, or a path."
        )
    if "://" in url:
        try:
            parsed = parse_url(url)
        except InvalidInputError:
            raise InvalidInputError(f"Invalid remote URL: {redact_url(url)}") from None
        if parsed.password or (parsed.protocol in ("https:", "http:") and parsed.username):
            raise InvalidInputError(CREDENTIALS)
        if str(parsed.hostname).startswith("-"):  # ssh would read it as an option
            raise InvalidInputError("Remote host names must not begin with '-'.")
        if str(parsed.username or "").startswith("-"):  # so would it read user@host
            raise InvalidInputError("Remote user names must not begin with '-'.")
        secret = secret_parameter(parsed)
        if secret:
            raise InvalidInputError(
                f'Remote URLs must not carry secret query parameters; remove "{secret}".'
            )
        return url
    scp = _SCP.match(url)  # user@host:path (ssh); user:password@host:path is refused
    if scp and ":" in scp.group("userinfo"):
        raise InvalidInputError(CREDENTIALS)
    if scp and scp.group("host").startswith("-"):
        raise InvalidInputError("Remote host names must not begin with '-'.")
    return url


def validate_name(name: str) -> str:
    """A remote name git accepts."""
    if not _NAME.fullmatch(name):
        raise InvalidInputError("Invalid remote name; use letters, digits, '.', '_' or '-'.")
    return name


def check_limits(view: View, origin: str, settings: StoreConfig | None = None) -> None:
    """Refuse a pulled or cloned state that holds more than the limits.

    A pull is held to this device's limits (``settings``, see :func:`device`); a clone,
    which the user asked to restore as it is, to the remote's own.
    """
    settings = settings or view.config()
    totals = view.summary()
    entries = limited_count(totals)
    if entries > settings.max_entries:
        raise LimitError(
            f"{origin} would leave {entries:,} resources and tombstones, over this store's "
            f"limit of {settings.max_entries:,}; raise it with xbrain config "
            "limits.maxEntries N and retry. Nothing changed."
        )
    if totals["bytes"] > settings.max_bytes:
        raise LimitError(
            f"{origin} would leave {totals['bytes']:,} bytes of records, over this store's "
            f"limit of {settings.max_bytes:,}; raise it with xbrain config limits.maxBytes N "
            "and retry. Nothing changed."
        )


def device(git: GitStore) -> StoreConfig:
    """The limits a pull is held to: the defaults, or what was raised on this device.

    They live in ``.git/config`` (never committed), so a remote cannot raise them: a
    remote's ``xbrain.yaml`` may win a merge, but it never widens what the next pull
    may bring.
    """
    raised = git.device_limits()
    defaults = StoreConfig()
    return StoreConfig(
        max_entries=max(defaults.max_entries, raised.get("maxEntries", 0)),
        max_bytes=max(defaults.max_bytes, raised.get("maxBytes", 0)),
    )


def describe(git: GitStore) -> list[dict[str, str]]:
    """The configured remotes."""
    return [{"name": name, "url": url} for name, url in sorted(git.remotes().items())]


def stored_location(url: str, store: Path) -> str:
    """The form of ``url`` a store keeps: a relative path on this machine made absolute
    (kept as given, it would name another folder from another working directory). A
    folder inside the store itself is refused: it is no backup, and a push would put a
    repository among the records."""
    local = local_path(url)
    if local is None:
        return url
    where = os.path.abspath(local)
    if Path(os.path.realpath(where)).is_relative_to(store.resolve()):
        raise InvalidInputError(
            f"A remote inside the store is no backup; choose a folder outside {store}."
        )
    return url if "://" in url else where
