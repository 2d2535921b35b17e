"""Creating a store and its settings (``init``, ``config``) in ``xbrain.yaml``."""

from __future__ import annotations

from typing import Any

from .codec import load_yaml
from .core import Core, StoreConfig
from .core.config import set_config_value
from .core.layout import MARKER
from .errors import UsageError

__all__ = ["config", "init"]


def init(core: Core) -> dict[str, Any]:
    """Create the store if missing. An existing git repository must be a store: one that
    is not (a project's repository, an empty ``git init``) is refused, not reported as
    an existing store that every write then refuses."""
    existed = core.exists()
    if existed:
        with core.reading():  # says why it is not a store
            pass
    core.create()
    with core.git() as git:
        head = git.head()
    return {"store": str(core.path), "created": not existed, "commit": head}


def config(core: Core, key: str | None = None, value: str | None = None) -> dict[str, Any]:
    """Show the store's settings, or set one (committed in ``xbrain.yaml``)."""
    if key is None:
        with core.reading() as view:
            settings = view.config() if view is not None else StoreConfig()
            marker = view.read(MARKER) if view is not None else None
        return _shown(settings, None, marker)
    if value is None:
        raise UsageError("Give a VALUE to set.")
    with core.session() as git:
        txn = core.begin(git, "config")
        marker = set_config_value(txn.read(MARKER), key, value)
        txn.write(MARKER, marker)
        dropped = key.startswith("projects.") and not value.strip()
        txn.subject = f"config: {'drop' if dropped else 'set'} {key}"
        settings = StoreConfig.from_marker(marker)
        core.commit(git, txn)
        if key.startswith("limits."):  # what a pull is held to on this device
            git.set_device_limit(key.split(".", 1)[1], int(value))
    return _shown(settings, txn.commit_id, marker)


def _team(marker: bytes | None) -> dict[str, Any]:
    """A team store's own settings (``team.reviewers``), when it names any."""
    try:
        raw = load_yaml(marker) if marker else None
    except Exception:  # the marker was read and checked already: nothing more to show
        return {}
    team = raw.get("team") if isinstance(raw, dict) else None
    listed = team.get("reviewers") if isinstance(team, dict) else None
    return {"team": {"reviewers": [str(x) for x in listed]}} if isinstance(listed, list) else {}


def _shown(settings: StoreConfig, commit: str | None, marker: bytes | None) -> dict[str, Any]:
    return {
        "identity": settings.identity,
        "limits": settings.limits(),
        "recall": dict(settings.recall),
        "projects": dict(settings.projects),
        **({"review": dict(settings.review)} if settings.review else {}),  # set only
        **({"serve": dict(settings.serve)} if settings.serve else {}),  # set only
        **_team(marker),  # set only
        "commit": commit,
    }
