"""The facade's remote methods (a mixin of ``Store``): backups and other devices, one
call into :mod:`xbrain.remote` each (``clone``, which makes a store, is beside ``Store``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core import Core

__all__ = ["Remotes"]


class Remotes:
    """``Store``'s remote operations (SPEC §8): add, remove, list, push, pull, verify,
    and a backup bundle."""

    core: Core

    def remote_add(self, name: str, url: str) -> dict[str, Any]:
        """Remember a git remote (a path or URL you chose) for backups or other devices."""
        from .. import remote

        return remote.add(self.core, name, url)

    def remote_remove(self, name: str) -> dict[str, Any]:
        """Forget a remote (nothing on the remote changes)."""
        from .. import remote

        return remote.remove(self.core, name)

    def remote_list(self) -> dict[str, Any]:
        """The configured remotes."""
        from .. import remote

        return remote.remotes(self.core)

    def remote_push(
        self, name: str = "origin", *, force_with_lease: bool = False, team: str | None = None
    ) -> dict[str, Any]:
        """Push main to a remote (a backup); refused if the remote has diverged
        (``force_with_lease``: replace what a purge removed there). ``team``: this store
        is that team's clone, and nothing its members' pulls would refuse is sent."""
        from .. import remote

        return remote.push(self.core, name, force_with_lease=force_with_lease, team=team)

    def remote_pull(self, name: str = "origin", *, team: str | None = None) -> dict[str, Any]:
        """Fetch a remote and fast-forward or merge deterministically (``team``: this
        store is that team's clone; refusals name it)."""
        from .. import remote

        self.core.existing()
        return {"remote": name, **remote.pull(self.core, name, team)}

    def remote_verify(self, name: str = "origin") -> dict[str, Any]:
        """Prove the remote restores: clone it aside, check objects, records and catalog."""
        from .. import doctor, remote

        self.core.existing()
        return remote.verify(self.core, name, lambda git: doctor.diagnose(git, repair=False))

    def backup_create(self, file: Path, *, force: bool = False) -> dict[str, Any]:
        """Write the whole store (``main``, every kind, all history) as a git bundle."""
        from ..remote import backup

        return backup.create(self.core, file, force=force)
