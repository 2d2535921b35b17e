"""A server keeps a read connection per index file, and beside it what it computed
(a team layer's postings in memory: megabytes). A file that is gone (a team removed) or
replaced and not read since is let go while no request waits."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from xbrain.search import kept


def _index(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    return path


@pytest.fixture()
def warm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "_KEPT", None)
    monkeypatch.setattr(kept, "_HELD", {})
    monkeypatch.setattr(kept, "_LATER", {})
    monkeypatch.setattr(kept, "_SWEPT", [float("-inf")])
    kept.keep_warm()


@pytest.mark.usefixtures("warm")
def test_what_was_kept_for_a_removed_or_replaced_file_is_let_go_when_idle(
    tmp_path: Path,
) -> None:
    gone, replaced, stays = (_index(tmp_path / f"{n}.sqlite") for n in ("gone", "old", "stays"))
    conns = {}
    for path in (gone, replaced, stays):
        conn = kept.reader(path)
        assert conn is not None
        conns[path] = conn
        held = kept.held(conn)
        assert held is not None
        held["arrays"] = bytearray(1 << 20)
    gone.unlink()
    replaced.unlink()
    _index(tmp_path / "new.sqlite").rename(replaced)
    kept.idle()
    assert kept._KEPT is not None and set(kept._KEPT) == {str(stays)}
    assert set(kept._HELD) == {str(stays)}
    for path in (gone, replaced):
        with pytest.raises(sqlite3.ProgrammingError):  # closed
            conns[path].execute("SELECT 1")
    assert conns[stays].execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


@pytest.mark.usefixtures("warm")
def test_work_asked_for_a_removed_file_is_dropped_with_it(tmp_path: Path) -> None:
    path = _index(tmp_path / "team.sqlite")
    conn = kept.reader(path)
    assert conn is not None
    ran: list[str] = []
    kept.later(conn, "read", lambda c: ran.append("ran"))
    path.unlink()
    assert kept.idle() is False
    assert ran == [] and kept._LATER == {} and kept._KEPT == {}


@pytest.mark.usefixtures("warm")
def test_the_check_runs_at_most_every_few_seconds(tmp_path: Path) -> None:
    path = _index(tmp_path / "team.sqlite")
    assert kept.reader(path) is not None
    kept.idle()  # checks (and keeps it)
    path.unlink()
    kept.idle()  # within SWEEP_EVERY: not checked again yet
    assert kept._KEPT is not None and str(path) in kept._KEPT
    kept._SWEPT[0] = float("-inf")
    kept.idle()
    assert kept._KEPT == {}
