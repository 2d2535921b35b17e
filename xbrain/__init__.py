"""xbrain: a private, local, git-backed memory for AI agents.

The public API is :class:`Store` plus the error classes; the ``xbrain`` command is a thin
click layer over it.
"""

from __future__ import annotations

from .errors import (
    BusyError,
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    NotFoundError,
    ProviderError,
    StaleError,
    UsageError,
    XbrainError,
)

TYPE_CHECKING = False  # typing itself costs a hook ≈ 5 ms to import
if TYPE_CHECKING:
    from .store import Store

__version__ = "0.1.0"

__all__ = [
    "BusyError",
    "ConflictError",
    "CorruptStoreError",
    "InvalidInputError",
    "NotFoundError",
    "ProviderError",
    "StaleError",
    "Store",
    "UsageError",
    "XbrainError",
    "__version__",
]


def __getattr__(name: str) -> object:
    # Store pulls in dulwich; import it only when asked for, so `xbrain --help` stays fast.
    if name == "Store":
        from .store import Store

        return Store
    raise AttributeError(name)
