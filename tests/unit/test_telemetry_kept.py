"""``xbrain serve`` keeps recall telemetry's connection open across prompts: each row is
committed at once all the same, ``clear`` still erases everything, and a database
removed since (``doctor --repair``) is opened anew, never written into the removed file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from xbrain.recall import telemetry
from xbrain.sqlitefiles import remove_database

SHOWN = [{"id": "e1", "kind": "rule", "disclosure": "full", "why": {"via": "query", "query": "q"}}]


def _rows(control: Path) -> int:
    path = control / telemetry.TELEMETRY_FILE
    with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM shown").fetchone()[0])


def test_a_kept_connection_commits_each_row_and_follows_a_removed_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    control = tmp_path / ".git"
    (control / "xbrain").mkdir(parents=True)
    monkeypatch.setattr(telemetry, "_OPEN", None)
    telemetry.keep_open()
    opened: list[Path] = []
    connect = vars(telemetry)["_connect"]

    def counted(at: Path) -> sqlite3.Connection:
        opened.append(at)
        return connect(at)

    monkeypatch.setattr(telemetry, "_connect", counted)
    telemetry.record(control, "s1", "UserPromptSubmit", SHOWN)
    telemetry.record(control, "s1", "UserPromptSubmit", SHOWN)
    assert _rows(control) == 2 and len(opened) == 1  # kept open, and committed
    path = control / telemetry.TELEMETRY_FILE
    assert path.stat().st_mode & 0o777 == 0o600

    assert telemetry.clear(control) == 2  # beside the kept connection
    telemetry.record(control, "s2", "UserPromptSubmit", SHOWN)
    assert _rows(control) == 1 and len(opened) == 2  # clear's own; the kept one still serves

    remove_database(path)  # what doctor --repair does to a damaged one
    telemetry.record(control, "s3", "UserPromptSubmit", SHOWN)
    assert _rows(control) == 1 and len(opened) == 3  # a new file, opened anew
