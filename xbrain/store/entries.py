"""The facade's entry methods (a mixin of ``Store``): one call into the feature each."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core import Core

__all__ = ["Entries"]


class Entries:
    """``Store``'s entry operations (SPEC §13)."""

    core: Core
    path: Path
    cache_dir: Path

    if TYPE_CHECKING:  # the other halves of Store

        def get(self, rid: str) -> Any: ...  # noqa: D102

        def _proposed_resources(self) -> list[dict[str, Any]]: ...

    def entry_put(self, items: Any, propose: dict[str, str] | None = None) -> dict[str, Any]:
        """Validate then upsert 1–1,000 entries as one commit; each result names the
        active entries it may conflict with. ``propose``: ``proposedBy`` of a proposal."""
        from .. import entries

        return entries.put(self.core, items, propose=propose, existing=self._all_entries)

    def _all_entries(self) -> list[dict[str, Any]]:
        from functools import partial

        from ..entries.review import everything
        from ..search.entrycache import listed

        return everything(self.core, partial(listed, self.core.path / ".git"))

    def entry_supersede(self, old: str, new: str) -> dict[str, Any]:
        """Record that entry ``new`` supersedes entry ``old``."""
        from ..entries.review import supersede

        return supersede(self.core, old, new)

    def review_list(self) -> dict[str, Any]:
        """The review queue: proposed entries and resources, who proposed them, possible
        conflicts."""
        from ..entries.review import pending

        self.core.check_dir()
        if not self.core.exists():
            return pending([])
        queue = pending(self._all_entries())
        resources = self._proposed_resources()
        proposals = sorted(
            [*queue["proposals"], *resources], key=lambda item: (item["updatedAt"], item["id"])
        )
        return {"count": len(proposals), "proposals": proposals}

    def review_accept(self, ids: list[str]) -> dict[str, Any]:
        """Make proposed entries and resources active (one commit)."""
        from ..entries.review import accept
        from ..resourcereview import accept as accept_resources

        return accept(self.core, ids, accept_resources)

    def review_reject(self, ids: list[str], reason: str) -> dict[str, Any]:
        """Replace proposed entries and resources with tombstones that say why."""
        from ..entries.review import reject
        from ..resourcereview import reject as reject_resources

        return reject(self.core, ids, reason, reject_resources)

    def review_item(self, rid: str) -> dict[str, Any]:
        """A proposed entry or resource, to edit (anything else: refused)."""
        from ..errors import InvalidInputError

        if rid.startswith("resource_"):
            found = self.get(rid)
            if not any(item["id"] == rid for item in self._proposed_resources()):
                raise InvalidInputError(f"Resource {rid} is not proposed (it is in force).")
            return dict(found)
        entry = self.entry_get(rid)
        if entry["status"] != "proposed":
            raise InvalidInputError(f"Entry {rid} is not proposed (it is {entry['status']}).")
        return entry

    def review_edit(self, rid: str, raw: Any) -> dict[str, Any]:
        """Replace a proposed entry or resource with its edited text and accept it."""
        if rid.startswith("resource_"):
            from ..resourcereview import edit as edit_resource

            return edit_resource(self.core, rid, raw)
        from ..entries.review import edit

        return edit(self.core, rid, raw)

    def entry_get(self, rid: str) -> dict[str, Any]:
        """One entry (private content)."""
        from .. import entries

        return entries.get(self.core, rid)

    def entry_list(self, kind: str | None = None, status: str | None = None) -> dict[str, Any]:
        """Entries as brief records, by kind and name."""
        from functools import partial

        from .. import entries
        from ..search.entrycache import listed

        cached = partial(listed, self.core.path / ".git")
        return entries.list_entries(self.core, kind_filter=kind, status=status, cached=cached)

    def entry_delete(self, rid: str) -> dict[str, Any]:
        """Replace an entry with a tombstone."""
        from .. import entries

        return entries.delete(self.core, rid)

    def entry_status(self, rid: str, status: str) -> dict[str, Any]:
        """Retire (``retired``) or activate (``active``) an entry."""
        from .. import entries

        return entries.set_status(self.core, rid, status)

    def entry_import(
        self, folder: Path, scope: str | None = None, *, prune: bool = False
    ) -> dict[str, Any]:
        """Import a memex-style folder: rules/, memory/ and skills/*.md as entries in one
        commit, each skills/<name>/ with a SKILL.md as a skill (a revision each, checked
        like skill import, all of them before anything is written)."""
        from .. import skills
        from ..entries.importing import import_dir, read_folder
        from ..errors import XbrainError

        found = read_folder(folder)
        for path in found.skills:
            try:
                skills.check_folder(path)
            except XbrainError as exc:  # which folder, among several
                exc.message = f"skills/{path.name}: {exc.message}"
                exc.args = (exc.message,)
                raise
        result = import_dir(self.core, found, scope, prune=prune)
        saved = [skills.import_skill(self.core, path) for path in found.skills]
        keys = ("slug", "status", "revision_id", "state", "warnings")
        result["skills"] = [{k: one[k] for k in keys if k in one} for one in saved]
        for path, one in zip(found.skills, result["skills"], strict=True):
            if one["slug"] != path.name:  # saved under its name: say where it came from
                note = f"skills/{path.name}/ holds the skill named {one['slug']}"
                one["warnings"] = [*one.get("warnings", []), note]
        return result

    def entry_export(self, folder: Path) -> dict[str, Any]:
        """Write every entry into a new folder as memex-style Markdown."""
        from ..entries.folders import export_dir

        return export_dir(self.core, folder)

    def telemetry(
        self, session: str | None = None, unused: bool = False, observations: bool = False
    ) -> dict[str, Any]:
        """Local recall telemetry: per entry, one session's trace, unused entries, or what
        the execution traces suggest (``observations``: a report, nothing changed)."""
        from ..entries import list_entries
        from ..recall.telemetry import report

        self.core.check_dir()  # a file or a folder that is no store: said, not "no data"
        listed = list_entries(self.core)["entries"] if self.core.exists() else []
        entries = {entry["id"]: entry for entry in listed}
        if observations:
            from ..recall.traces import observations as observed

            return observed(self.path / ".git", entries)
        return report(self.path / ".git", entries, session=session, unused=unused)

    def telemetry_overview(self, days: int = 30, sessions: int = 10) -> dict[str, Any]:
        """Matches per entry and day over the last ``days``, and the last ``sessions``
        sessions with what each was shown and why (what ``xbrain ui`` draws)."""
        from ..recall.telemetry import overview

        self.core.check_dir()
        return overview(self.path / ".git", days=days, sessions=sessions)

    def clear_telemetry(self) -> dict[str, Any]:
        """Erase the local recall telemetry of this device: ``{enabled, cleared}``."""
        from ..recall.telemetry import clear, enabled

        self.core.check_dir()
        control = self.path / ".git"
        return {"enabled": enabled(control), "cleared": clear(control) if self.core.exists() else 0}

    def set_telemetry(self, on: bool) -> None:
        """Switch local recall telemetry on or off on this device."""
        from ..recall.telemetry import set_enabled

        self.core.existing()
        set_enabled(self.path / ".git", on)

    def project(self, target: str, *, dry_run: bool = False) -> dict[str, Any]:
        """Link published skills and always-on rules into an agent's folders."""
        from ..projection import project, resolve_target

        return project(self.core, resolve_target(target), dry_run=dry_run)
