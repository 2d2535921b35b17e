"""A server ranks a team layer with the layer's postings in memory (issue 47: through
``xbrain serve`` a team of 10,000 resources adds ≤ 1.2x): the answer a fresh process
gives, and after a ``team pull`` never the answer of before it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.cli.test_team_reads import DIALOG, Run, team
from tests.conftest import make
from tests.unit.test_ranking_inmemory import warm
from xbrain import lightcli
from xbrain.kinds.model import resource_id
from xbrain.search import inmemory, kept

__all__ = ["team", "warm"]  # the fixtures, used by name

PROMPT = b"keyboard focus in an accessible React dialog"


def _results(store: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = lightcli.answer(store, PROMPT, cwd=str(store), record=False)[
        "results"
    ]
    return found


def _held() -> list[str]:
    """The index files whose postings this process holds in memory."""
    return [
        path
        for path, (_, conn, _) in (kept._KEPT or {}).items()
        if isinstance((kept.held(conn) or {}).get("postings"), inmemory.Postings)
    ]


def test_a_served_team_layer_is_ranked_from_memory_and_a_pull_is_seen_at_once(
    warm: None, xb: Run, xb_proc: Run, team: Path, tmp_path: Path, store_dir: Path
) -> None:
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps(make("personal-dialog", title="a personal dialog note")))
    assert xb("put", str(mine)).code == 0
    first = _results(store_dir)  # ranked by the SQL; the team's postings are asked for
    assert DIALOG in [r["id"] for r in first]
    assert _held() == [] and kept.idle()
    teams = Path(os.environ["XDG_DATA_HOME"]) / "xbrain" / "teams"
    search = str(teams / "eng" / ".git" / "xbrain" / "search.sqlite")
    assert search in _held() and all(path.startswith(f"{teams}/") for path in _held())
    again = _results(store_dir)
    assert again == first
    fresh = xb_proc("recall", "-", input=PROMPT.decode()).json["results"]
    assert [(r["id"], r["score"]) for r in fresh] == [(r["id"], r["score"]) for r in first]

    maker = tmp_path / "maker"  # a member shares more; this member pulls it
    newer = tmp_path / "newer.json"
    note = make("team-dialog", title="accessible React dialog keyboard focus guide")
    newer.write_text(json.dumps(note))
    assert xb("put", str(newer), store=maker).code == 0
    assert xb("remote", "push", store=maker).code == 0
    assert xb("team", "pull", "eng", store=None).code == 0
    pulled = _results(store_dir)  # the layer's index caught up (a write of its own)
    assert resource_id(note["source"]["provider"], "team-dialog") in [r["id"] for r in pulled]
    assert _results(store_dir) == pulled  # the kept connection: a commit since its read
    assert _held() == []  # the postings of before the pull are gone, never used
    assert kept.idle() and _results(store_dir) == pulled and search in _held()
