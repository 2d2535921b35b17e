"""What a team layer costs a prompt (issue 47: a fresh recall ≤ 1.5x, through ``xbrain
serve`` ≤ 1.2x): each team's leg runs on a thread of its own (always the same one for a
layer) while the personal leg runs."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_team_reads import MEMORY, team
from xbrain import lightcli, lightsearch
from xbrain.recall import route
from xbrain.search import kept
from xbrain.team.place import Layer, team_layers

__all__ = ["team"]  # the fixture, used by name

PROMPT = b"build tips: make -j2?"


def the_layer() -> Layer:
    (layer,) = team_layers(Path(os.environ["XDG_DATA_HOME"]) / "xbrain" / "teams")
    return layer


def test_each_team_leg_runs_on_its_layers_own_thread_while_the_personal_leg_runs(
    xb: Any, team: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert xb("init").code == 0
    ran: list[tuple[str, int]] = []
    recall = route.recall

    def noted(store: Path, *args: Any) -> dict[str, Any]:
        ran.append((str(store), threading.get_ident()))
        return recall(store, *args)

    monkeypatch.setattr(route, "recall", noted)
    found = [lightcli.answer(store_dir, PROMPT) for _ in range(2)]
    assert found[0] == found[1] and [r["layer"] for r in found[0]["results"]] == ["team:eng"]
    main = threading.get_ident()
    assert [who for store, who in ran if store == str(store_dir)] == [main, main]
    team_legs = {who for store, who in ran if store == the_layer().path}
    assert len(team_legs) == 1 and main not in team_legs  # one thread, the same each time


def test_a_failed_personal_leg_leaves_no_team_result_counted_as_shown(
    xb: Any, team: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert xb("init").code == 0
    recall = route.recall

    def failing(store: Path, *args: Any) -> dict[str, Any]:
        if store == store_dir:
            raise OSError("the personal store failed")
        return recall(store, *args)

    monkeypatch.setattr(route, "recall", failing)
    with pytest.raises(OSError, match="personal store failed"):
        lightcli.answer(store_dir, PROMPT, session="s-1")
    monkeypatch.setattr(route, "recall", recall)
    found = lightcli.answer(store_dir, PROMPT, session="s-1")
    assert [(r["id"], r["layer"]) for r in found["results"]] == [(MEMORY, "team:eng")]


def test_a_servers_kept_team_connections_answer_a_search_after_a_recall(
    xb: Any, team: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert xb("init").code == 0
    monkeypatch.setattr(kept, "_KEPT", None)
    kept.keep_warm()  # as xbrain serve: a team index's connection opened on its thread
    try:
        for _ in range(2):
            assert lightcli.answer(store_dir, b"keyboard focus in an accessible dialog")
            found = lightsearch.search_document(store_dir, "accessible dialog")
            assert [r["layer"] for r in found["results"]] == ["team:eng"]
    finally:
        for _, conn, _ in (kept._KEPT or {}).values():
            conn.close()
