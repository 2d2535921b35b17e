"""Bounds on one conversation with a remote: an overall deadline, and a bound on what the
server says before its pack.

A server that accepts and never answers, or trickles a byte a minute, would hold a fetch
or a push forever; one that advertises refs without end would grow the list dulwich
builds past any memory. A ``Budget`` holds one network operation (connect, negotiation
and pack) to both, through dulwich's public hooks only:

* every socket made during the operation waits at most the deadline for a connect or a
  read (the process's default socket timeout, set for the operation and put back);
* every pkt-line the server sends is reported (``report_activity``) before it is read:
  past the deadline the operation stops there, and before the pack (refs, capabilities,
  acknowledgements) at most ``MAX_TALK`` bytes are accepted; over http(s) the same holds
  for every read of every response (a urllib3 pool whose responses are bounded);
* the ref list is held to ``MAX_REFS``; the pack itself, to the deadline as it arrives
  (a repository on this machine has no deadline: there is nothing to wait on).

So a silent server is given up after the deadline, and one that stalls just before it
after at most twice that. The deadline is ``XBRAIN_NETWORK_TIMEOUT`` seconds (default
120). Over ssh a server that sends nothing at all is left to ssh's own settings.
"""

from __future__ import annotations

import math
import os
import socket
import time
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError, ProviderError, UsageError, XbrainError, no_space
from ..redact import redact_url
from .objects import disk_full, remote_failure
from .packcheck import amount

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_REFS",
    "MAX_TALK",
    "TIMEOUT_VARIABLE",
    "Budget",
    "Expired",
    "fetch_failure",
]

TIMEOUT_VARIABLE = "XBRAIN_NETWORK_TIMEOUT"
DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 86_400.0
MAX_REFS = 50_000  # a repository with every tag of a big project has a few thousand
MAX_TALK = 8 << 20  # bytes before the pack: 50,000 refs take about 4 MiB
_PIECE = 1 << 16
_MORE_LINES = 1_000  # lines before the pack that are not refs (capabilities, ACKs, shallow)


def network_timeout() -> float:
    """The deadline of one network operation, in seconds (``XBRAIN_NETWORK_TIMEOUT``)."""
    text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_TIMEOUT:  # NaN fails too
        raise UsageError(
            f"{TIMEOUT_VARIABLE} must be a number of seconds above 0 and at most "
            f"{MAX_TIMEOUT:,.0f}, not {text[:40]!r}."
        )
    return value


def fetch_failure(
    budget: Budget, local: bool, location: str, exc: Exception, path: str | None = None
) -> XbrainError:
    """One line for a fetch that failed: past its deadline, a full disk, a path on this
    machine (``path``) that holds no repository (missing, or an empty folder: a share not
    mounted), a repository there that cannot be read whole (damaged), or the remote's own
    words."""
    if budget.expired or isinstance(exc, Expired):
        return budget.timed_out("fetch from", location)
    if no_space(exc):
        return disk_full()
    if local and path is not None and _no_repository(Path(path)):
        return ProviderError(
            redact_url(
                f"Could not fetch from {location}: there is no repository at {path} (missing, "
                "or an empty folder: a share not mounted?); nothing changed."
            )
        )
    if local and not isinstance(exc, OSError):
        return ProviderError(
            redact_url(
                f"Could not fetch from {location}: its repository is damaged (an object or "
                "pack of it cannot be read); nothing changed. Check it with git fsck."
            )
        )
    return remote_failure("fetch from", location, exc)


def _no_repository(path: Path) -> bool:
    """Whether ``path`` is missing, an empty folder, or a folder git would not call a
    repository (no ``HEAD`` in it or in its ``.git``)."""
    try:
        if not path.is_dir() or not any(path.iterdir()):
            return True
    except OSError:
        return True
    return not ((path / "HEAD").is_file() or (path / ".git" / "HEAD").is_file())


class Expired(Exception):
    """The deadline passed (caught where the operation's failure is worded)."""


class Budget:
    """The deadline and the bound of talk of one network operation (a context manager
    around everything that may open a connection)."""

    def __init__(self, what: str, seconds: float | None = None) -> None:
        self.seconds = network_timeout() if seconds is None else seconds
        self.what = what  # "The repository at …", for a refusal
        self._end = time.monotonic() + self.seconds
        self._pack = False  # the pack has begun: what follows is held by the PackBound
        self._talk = 0
        self._lines = 0
        self._before: float | None = None

    def __enter__(self) -> Budget:
        self._before = socket.getdefaulttimeout()
        socket.setdefaulttimeout(self.seconds)
        return self

    def __exit__(self, *exc: object) -> None:
        socket.setdefaulttimeout(self._before)

    @property
    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return time.monotonic() >= self._end

    def no_deadline(self) -> None:
        """The repository is on this machine: nothing to wait on but the disk, and a big
        store's first fetch from a slow one may take long; only the bounds hold."""
        self._end = math.inf

    def remaining(self) -> float:
        """Seconds left before the deadline (0 once it has passed)."""
        return max(self._end - time.monotonic(), 0.0)

    def check(self) -> None:
        """Raise Expired once the deadline has passed."""
        if self.expired:
            raise Expired

    def timed_out(self, action: str, location: str) -> ProviderError:
        """The one line a user sees when the deadline passed."""
        return ProviderError(
            redact_url(
                f"Could not {action} {location}: no complete answer within {self.seconds:g} s; "
                f"nothing changed (set {TIMEOUT_VARIABLE} to wait longer)."
            )
        )

    def activity(self, size: int, direction: str) -> None:
        """dulwich's ``report_activity``: each pkt-line, before it is read."""
        self.check()
        if direction == "read" and not self._pack:
            self._lines += 1  # refs, capabilities, acknowledgements: a line each
            if self._lines > MAX_REFS + _MORE_LINES:
                raise InvalidInputError(
                    f"{self.what} advertised more than {MAX_REFS:,} refs, the limit."
                )
            self.heard(size)

    def heard(self, size: int) -> None:
        """``size`` more bytes from the server: counted until its pack begins."""
        if self._pack:
            return
        self._talk += size
        if self._talk > MAX_TALK:
            raise InvalidInputError(
                f"{self.what} sent more than {amount(MAX_TALK)} before its pack "
                "(refs and negotiation), the limit."
            )

    def pack_begins(self) -> None:
        """The server has started its pack (a fetch's ``pack_data`` was called)."""
        self._pack = True
        self.check()

    def count_refs(self, refs: Any) -> None:
        """Refuse a ref list longer than ``MAX_REFS``."""
        if len(refs) > MAX_REFS:
            raise InvalidInputError(
                f"{self.what} advertised {len(refs):,} refs; the limit is {MAX_REFS:,}."
            )

    def client_for(self, config: Any, url: str) -> tuple[Any, str | bytes]:
        """dulwich's client for ``url`` (reporting to this budget) and the path on it.
        Over ssh it runs the command git would: ``GIT_SSH_COMMAND``, else ``GIT_SSH``,
        else ``core.sshCommand``, else ``ssh`` (dulwich leaves the first two to its
        porcelain, which xbrain does not use)."""
        from dulwich.client import SSHGitClient, get_transport_and_path

        client, path = get_transport_and_path(
            url, config=config, **self.client_options(config, url)
        )
        chosen = os.environ.get("GIT_SSH_COMMAND") or os.environ.get("GIT_SSH")
        if isinstance(client, SSHGitClient) and chosen:
            client.ssh_command = chosen
        return client, path

    def client_options(self, config: Any, url: str) -> dict[str, Any]:
        """What ``get_transport_and_path`` is given so that the client it makes for
        ``url`` reports to this budget."""
        return {"report_activity": self.activity, "pool_manager": _Pool(self, config, url)}


class _Pool:
    """dulwich's urllib3 pool for ``url`` (made when first used, with the deadline as
    its timeout), whose responses are read through the budget."""

    def __init__(self, budget: Budget, config: Any, url: str) -> None:
        self.budget, self.config, self.url = budget, config, url
        self.made: Any = None

    def __getattr__(self, name: str) -> Any:
        if self.made is None:
            from dulwich.client import default_urllib3_manager

            self.made = default_urllib3_manager(
                self.config, base_url=self.url, timeout=self.budget.seconds
            )
        return getattr(self.made, name)

    def request(self, *args: Any, **kwargs: Any) -> Any:
        from urllib3.util import Retry

        self.budget.check()
        # what remains of the deadline, and no second attempt after a timeout (urllib3
        # would try a GET four times); redirects are still followed
        kwargs["timeout"] = max(self.budget.remaining(), 0.001)
        kwargs["retries"] = Retry(total=3, connect=0, read=0)
        return _Response(self.__getattr__("request")(*args, **kwargs), self.budget)


class _Response:
    """A urllib3 response whose reads are held to a budget (dulwich sets attributes on
    it, kept here)."""

    def __init__(self, response: Any, budget: Budget) -> None:
        self.response, self.budget = response, budget

    def __getattr__(self, name: str) -> Any:
        return getattr(self.response, name)

    def read(self, amt: int | None = None, *args: Any, **kwargs: Any) -> bytes:
        if amt is None or amt < 0:  # to the end: in pieces, each counted
            pieces = []
            for _ in range(MAX_TALK // _PIECE + 2):  # the count refuses before this ends
                piece = self.read(_PIECE)
                if not piece:
                    break
                pieces.append(piece)
            return b"".join(pieces)
        self.budget.check()
        data: bytes = self.response.read(amt, *args, **kwargs)
        self.budget.heard(len(data))
        self.budget.check()
        return data
