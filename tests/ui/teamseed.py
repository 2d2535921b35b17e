"""A team for the viewer's tests, made the way ``tests/cli/test_team*.py`` make one: a
bare repository on a path holding a team store (records made before it names its
reviewer, so trusted), added as team ``eng`` of the test's user, who is Rita, the
team's reviewer; and Ann, another member, who shares records to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result
from tests.ui.server import HOSTILE, Running, seed, start

Run = Callable[..., Result]
RITA = "Rita <rita@example.org>"
RUNBOOK_V1 = (
    "---\nname: team-runbook\ndescription: The team's release runbook 发布手册\n---\n"
    "# Release\n\n1. Tag the release.\n2. 通知值班同事。\n"
)
RUNBOOK_V2 = RUNBOOK_V1.replace("通知值班同事", "提前通知所有值班同事")


def make_team(xb: Run, tmp_path: Path, store_dir: Path) -> dict[str, Any]:
    """Team ``eng`` (a bare repository at tmp_path/team.git) with a rule, a hostile
    memory, a resource and a skill of two published revisions, added for the test's
    user (identity Rita, the team's reviewer): the ids."""
    from dulwich.repo import Repo

    from xbrain.store import Store

    bare = tmp_path / "team.git"
    Repo.init_bare(str(bare), mkdir=True, default_branch=b"main").close()
    maker_dir = tmp_path / "maker"
    assert xb("config", "identity.name", "Mia Maker", store=maker_dir).code == 0
    assert xb("config", "identity.email", "mia@example.org", store=maker_dir).code == 0
    maker = Store(maker_dir)
    entries = maker.entry_put(
        [
            {
                "kind": "rule",
                "name": "team-changelog",
                "description": "Every release updates the changelog",
                "body": "Write the **changelog** entry before tagging.",
                "queries": ["release changelog before tagging"],
            },
            {
                "kind": "memory",
                "name": "team-hostile",
                "description": "A team note about a pwned payload",
                "body": HOSTILE,
                "keywords": ["pwned"],
            },
        ]
    )
    ids = {item["name"]: item["id"] for item in entries["results"]}
    put = maker.put(
        [
            {
                "source": {
                    "provider": "web",
                    "id": "team-oncall",
                    "url": "https://example.com/team-oncall",
                },
                "title": "Team on-call handbook",
                "text": "Escalate pager alerts within fifteen minutes.",
                "summary": "How the team escalates pager alerts.",
                "purpose": "On-call escalation",
                "useWhen": ["paged at night"],
                "limitations": [],
                "savedReason": None,
                "updatedAt": "2026-10-07T00:00:00.000Z",
            }
        ]
    )
    first = maker.skill_save_files({"SKILL.md": RUNBOOK_V1.encode()}, publish=True)
    second = maker.skill_save_files({"SKILL.md": RUNBOOK_V2.encode()}, publish=True)
    for args in (
        ("config", "team.reviewers", RITA),
        ("remote", "add", "origin", str(bare)),
        ("remote", "push"),
    ):
        assert xb(*args, store=maker_dir).code == 0, args
    assert xb("config", "identity.name", "Rita", store=store_dir).code == 0
    assert xb("config", "identity.email", "rita@example.org", store=store_dir).code == 0
    added = xb("team", "add", "eng", str(bare), store=None)
    assert added.code == 0, added.stderr
    return {
        "bare": bare,
        "rule": ids["team-changelog"],
        "hostile": ids["team-hostile"],
        "resource": put["results"][0]["id"],
        "rev1": first["revision_id"],
        "rev2": second["revision_id"],
    }


def ann_shares(tmp_path: Path, bare: Path, names: list[str]) -> dict[str, str]:
    """Ann (her own store and teams folder) adds team ``eng`` and shares one new rule
    per name: name → the shared entry's id."""
    from xbrain.store import Store
    from xbrain.team.manage import add
    from xbrain.team.share import share

    home = tmp_path / "ann"
    root = home / "teams"
    store = Store(home / "store")
    store.init()
    add(root, "eng", str(bare))
    made = store.entry_put(
        [
            {
                "kind": "rule",
                "name": name,
                "description": f"Ann's proposal {name}",
                "body": f"Proposed by Ann: {name}.",
            }
            for name in names
        ]
    )
    ids = {item["name"]: item["id"] for item in made["results"]}
    for rid in ids.values():
        shared = share(store, root, "eng", rid)
        assert shared["pushed"], shared
    return ids


# The fixtures of every test file that opens the viewer over a store with a team layer
# (import them by name into the test module).
@pytest.fixture
def ids(store_dir: Path) -> dict[str, str]:
    return seed(store_dir)


@pytest.fixture
def team(xb: Run, tmp_path: Path, store_dir: Path, ids: dict[str, str]) -> dict[str, Any]:
    return make_team(xb, tmp_path, store_dir)


@pytest.fixture
def ui(store_dir: Path, team: dict[str, Any]) -> Iterator[Running]:
    running = start(store_dir, "--idle", "300")
    yield running
    running.stop()
