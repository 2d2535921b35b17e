"""One exception root for everything xbrain reports to a user.

Every error carries a process exit code (the table in the README) and a stable string
``code`` that agents can match on. Library code raises these; only the front ends (the
CLI, the MCP server) turn them into a message, through ``describe``.
"""

from __future__ import annotations

import errno

__all__ = [
    "BusyError",
    "ConflictError",
    "CorruptStoreError",
    "InvalidInputError",
    "NotFoundError",
    "ProviderError",
    "StaleError",
    "UsageError",
    "XbrainError",
    "describe",
    "no_space",
    "one_line",
]


class XbrainError(Exception):
    """Root of every error xbrain raises on purpose."""

    exit_code = 1
    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(XbrainError):
    """The command line itself is wrong (unknown option, missing argument)."""

    exit_code = 2
    code = "usage"


class NotFoundError(XbrainError):
    """A named resource, revision or file does not exist."""

    exit_code = 3
    code = "not_found"


class InvalidInputError(XbrainError):
    """Input failed validation; nothing was written."""

    exit_code = 4
    code = "invalid_input"


class ConflictError(XbrainError):
    """The write conflicts with what the store already holds; nothing was written."""

    exit_code = 5
    code = "conflict"


class StaleError(ConflictError):
    """The input is older than what the store holds (or was read from an old revision)."""

    code = "stale"


class BusyError(XbrainError):
    """Another process holds the store lock."""

    exit_code = 6
    code = "busy"


class CorruptStoreError(XbrainError):
    """The store is missing, not an xbrain store, or fails its own invariants."""

    exit_code = 7
    code = "corrupt"


class ProviderError(XbrainError):
    """A provider, source adapter or git remote failed."""

    exit_code = 8
    code = "provider"


def no_space(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the user's quota) is full."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def describe(exc: BaseException) -> tuple[str, int]:
    """The one-line message and exit code a user is shown for ``exc``.

    Unexpected exceptions get a generic line: their text may quote private content.
    Any URL credential or secret parameter a message might quote is redacted.
    """
    from .redact import redact_url

    if isinstance(exc, XbrainError):
        message, code = exc.message, exc.exit_code
    elif _damaged_pack(exc):
        message, code = "A pack or object of the store is damaged; run xbrain doctor.", 7
    elif isinstance(exc, KeyboardInterrupt):
        message, code = "Interrupted.", 130
    elif isinstance(exc, OSError):
        message, code = f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), 1
        if no_space(exc):
            message = f"The disk is full ({message}); free some space, then retry."
    elif type(exc).__module__ == "sqlite3" and type(exc).__name__ == "OperationalError":
        # a derived index under .git/xbrain that cannot be written or read here (a full
        # disk, a read-only store, held by another process): SQLite's words say which
        message, code = f"Local index: {str(exc).rstrip('.')}.", 1
    elif isinstance(exc, UnicodeEncodeError):
        # a file name or text this process's locale cannot hold (a C locale without
        # UTF-8, where Python encodes file names as ASCII): the way out, not a traceback
        encoding = exc.encoding or "this locale's"
        message = (
            f"Text that the {encoding} encoding of this locale cannot hold (a file name?); "
            "run xbrain with a UTF-8 locale, e.g. LANG=C.UTF-8."
        )
        if encoding.replace("-", "").lower() == "utf8":  # the locale is not the cause
            # bytes that are no UTF-8 (an argument or a file name in another encoding)
            # reach Python as lone surrogates, which no UTF-8 text can hold
            message = (
                "Text that is not valid UTF-8 (an argument or a file name?); give it in UTF-8."
            )
        code = 1
    else:
        message, code = f"Internal error ({type(exc).__name__}); rerun with --traceback.", 1
    return one_line(redact_url(message)) or "Request failed.", code


def _damaged_pack(exc: BaseException) -> bool:
    """Whether ``exc`` is dulwich's word for a damaged pack or object that no caller
    mapped: an assertion (a pack's header, an entry cut short) or a zlib error raised
    in dulwich's pack or object code."""
    if not isinstance(exc, AssertionError) and type(exc).__module__ != "zlib":
        return False
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    module = "" if tb is None else str(tb.tb_frame.f_globals.get("__name__", ""))
    return module in ("dulwich.pack", "dulwich.object_store", "dulwich.objects")


MAX_WORD = 200


def one_line(message: str) -> str:
    """``message`` on one line, each word of it at most ``MAX_WORD`` characters: a value
    quoted back (an argument, a path) of megabytes is cut, not printed whole. Secrets are
    redacted before this, so a cut never hides the part redaction looks for."""
    return " ".join(
        word if len(word) <= MAX_WORD else f"{word[:MAX_WORD]}…" for word in message.split()
    )
