"""Where else memory may live: providers, chosen explicitly by the user.

Built-in kinds register exactly as a third-party kind would (``register``): a factory
takes the validated :class:`ProviderConfig` and the cache directory and returns an
object with ``kind``, ``key``, ``upsert``, ``delete`` and ``search``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ..model import Resource
from .config import ProviderConfig, load_provider_config

__all__ = ["Provider", "ProviderConfig", "load_provider", "register"]


class Provider(Protocol):
    """What sync, status and search need from a memory provider."""

    kind: str
    key: str

    def upsert(self, resource: Resource, revision: str) -> None: ...  # noqa: D102

    def delete(self, rid: str, revision: str) -> None: ...  # noqa: D102

    def search(self, query: str, limit: int) -> list[Resource]: ...  # noqa: D102


Factory = Callable[[ProviderConfig, Path], Provider]
_KINDS: dict[str, Factory] = {}


def register(kind: str, factory: Factory) -> None:
    """Make a provider kind available to ``load_provider``."""
    _KINDS[kind] = factory


def _file(config: ProviderConfig, cache_dir: Path) -> Provider:
    from .file import FileProvider

    assert config.path is not None
    return FileProvider(config.key, config.path, cache_dir)


def _command(config: ProviderConfig, cache_dir: Path) -> Provider:
    from .command import CommandProvider

    del cache_dir
    return CommandProvider(config.key, config.command, config.namespace, config.timeout)


register("file", _file)
register("command", _command)


def load_provider(file: Path, store_path: Path, cache_dir: Path) -> Any:
    """The provider a config file selects (validated; nothing is contacted)."""
    config = load_provider_config(file, store_path)
    return _KINDS[config.kind](config, cache_dir)
