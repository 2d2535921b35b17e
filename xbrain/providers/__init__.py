"""Where else memory may live: providers, chosen explicitly by the user.

Built-in kinds register exactly as a third-party kind would (``register``): a factory
takes the validated :class:`ProviderConfig` and the ``Host`` — what the store using it
lends: opening another xbrain store and its lexical ranking (handed in, so providers
never import the store API or search) and returns an object with ``kind``, ``key``, ``upsert``,
``delete`` and ``search``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ..kinds.model import Resource
from .config import ProviderConfig, load_provider_config

__all__ = ["Host", "Provider", "ProviderConfig", "Target", "load_provider", "register"]


class Provider(Protocol):
    """What sync, status and search need from a memory provider."""

    kind: str
    key: str

    def upsert(self, resource: Resource, revision: str) -> None: ...  # noqa: D102

    def delete(self, rid: str, revision: str) -> None: ...  # noqa: D102

    def search(self, query: str, limit: int) -> list[Resource]: ...  # noqa: D102


class Target(Protocol):
    """Another xbrain store as a file provider's target."""

    def receive(self, resource: Resource) -> dict[str, Any]: ...  # noqa: D102

    def forget(self, rid: str) -> dict[str, Any]: ...  # noqa: D102

    def search(self, query: str, *, limit: int = 5) -> dict[str, Any]: ...  # noqa: D102


class Host(Protocol):
    """What the store using a provider lends it: opening another store, and ranking."""

    def open_store(self, path: Path) -> Target: ...  # noqa: D102

    def rank(self, resources: list[Resource], query: str, limit: int) -> list[Resource]: ...  # noqa: D102


Factory = Callable[[ProviderConfig, Host], Provider]
_KINDS: dict[str, Factory] = {}


def register(kind: str, factory: Factory) -> None:
    """Make a provider kind available to ``load_provider``."""
    _KINDS[kind] = factory


def _file(config: ProviderConfig, host: Host) -> Provider:
    from .file import FileProvider

    assert config.path is not None
    return FileProvider(config.key, config.path, host)


def _command(config: ProviderConfig, host: Host) -> Provider:
    from .command import CommandProvider

    del host
    return CommandProvider(config.key, config.command, config.namespace, config.timeout)


register("file", _file)
register("command", _command)


def load_provider(file: Path, store_path: Path, host: Host) -> Any:
    """The provider a config file selects (validated; nothing is contacted)."""
    config = load_provider_config(file, store_path)
    return _KINDS[config.kind](config, host)
