"""The skill index's whole build (``xbrain reindex``) shared with a helper process gives
exactly the index a serial build gives: the same documents, postings, totals and meta,
archived skills left out, a damaged skill one clear error (issue 45 item 4)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_index_build import tables
from xbrain.core import bulk
from xbrain.errors import CorruptStoreError
from xbrain.kinds import skill as skill_kind
from xbrain.search import skilldoc, skills
from xbrain.store import Store

WORDS = ["keyboard", "focus", "dialog", "目录", "文件", "排序", "sorted", "time", "list"]


@pytest.fixture
def store(tmp_path: Path, segment_cache: Path) -> Store:
    found = Store(tmp_path / "store", cache_dir=segment_cache)
    for i in range(14):
        body = " ".join(WORDS[i % 5 :: 2]) + f" step {i}"
        text = f"---\nname: skill-{i}\ndescription: {WORDS[i % 9]} helper {i}\n---\n{body}\n"
        found.skill_save_files({"SKILL.md": text.encode()}, publish=i % 2 == 0)
    found.skill_lifecycle("archive", "skill-4")  # not indexed: a gap in the numbers
    # the odd ones hold only a proposed revision: never offered, so never indexed
    return found


def skill_index(store: Store) -> dict[str, Any]:
    """The skill index's content (document numbers replaced by slugs) and its meta."""
    with sqlite3.connect(store.core.path / ".git" / "xbrain" / "skills.sqlite") as conn:
        found: dict[str, Any] = tables(conn)
        # (less the mark each build gets anew: which build a file holds, by design)
        found["meta"] = sorted(conn.execute("SELECT * FROM meta WHERE key != 'built'"))
        assert len(conn.execute("SELECT value FROM meta WHERE key = 'built'").fetchone()[0]) == 16
    return found


def shared(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, Any]]:
    """Make every skill build share, in chunks of 3; what each ``bulk.process`` returned."""
    monkeypatch.setattr(skilldoc, "PARALLEL_MIN", 1)
    monkeypatch.setattr(skilldoc, "idle_core", lambda: True)
    monkeypatch.setattr(skilldoc, "CHUNK", 3)
    monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    returned: list[tuple[bool, Any]] = []
    real = bulk.process

    def spy(*args: Any, **kwargs: Any) -> tuple[bool, Any]:
        returned.append(real(*args, **kwargs))
        return returned[-1]

    monkeypatch.setattr(bulk, "process", spy)
    return returned


def test_a_shared_skill_build_is_the_serial_build(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = store.skill_recall("keyboard helper", limit=10)
    monkeypatch.setattr(skilldoc, "PARALLEL_MIN", 10**9)
    assert store.reindex()["skills"] == 6
    serial = skill_index(store)
    assert store.skill_recall("keyboard helper", limit=10) == before
    returned = shared(monkeypatch)
    assert store.reindex()["skills"] == 6
    assert skill_index(store) == serial
    [(helped, (count, _))] = [r for r in returned if r[0]]  # the helper indexed a share
    assert helped and 0 < count < 6
    assert store.skill_recall("keyboard helper", limit=10) == before
    assert not list((store.core.path / ".git" / "xbrain").glob("build-*"))


def test_a_busy_machine_builds_on_one_core(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    returned = shared(monkeypatch)
    monkeypatch.setattr(skilldoc, "idle_core", lambda: False)
    assert store.reindex()["skills"] == 6
    assert returned and not any(helped for helped, _ in returned)


def test_a_damaged_skill_in_the_helpers_share_is_one_clear_error(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    with store.core.transaction("test") as txn:  # the first chunk: the helper's
        txn.write(skill_kind.state_path("skill-0"), b"id: [not, a, state]\n")
    shared(monkeypatch)
    with pytest.raises(CorruptStoreError, match=re.escape("skills/skill-0/skill.yaml")):
        store.reindex()
    assert not list((store.core.path / ".git" / "xbrain").glob("build-*"))


def test_a_build_reads_the_skills_files_xbrain_wrote_without_the_yaml_parser(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each skill's ``skill.yaml`` and ``revision.yaml`` are in the plain form xbrain
    writes, read by ``kinds/plainyaml`` (a third of the build's time went to the parser);
    the index is the same."""
    monkeypatch.setattr(skilldoc, "PARALLEL_MIN", 10**9)
    assert store.reindex()["skills"] == 6
    before = skill_index(store)
    parsed: list[bytes] = []
    real = skill_kind.load_yaml

    def spy(data: bytes) -> Any:
        parsed.append(data)
        return real(data)

    monkeypatch.setattr(skill_kind, "load_yaml", spy)
    skill_kind._written.clear()  # nothing this process wrote: every file read from git
    assert store.reindex()["skills"] == 6
    assert parsed == []
    assert skill_index(store) == before


def test_a_missing_index_built_by_recall_is_the_one_reindex_builds(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both first builds read every skill through ``skilldoc.documents``: recall building
    a missing index and ``reindex`` on one core make the same index."""
    monkeypatch.setattr(skilldoc, "PARALLEL_MIN", 10**9)
    assert store.reindex()["skills"] == 6
    rebuilt = skill_index(store)
    (store.core.path / ".git" / "xbrain" / "skills.sqlite").unlink()
    read: list[int] = []
    real = skilldoc.documents

    def spy(*args: Any) -> Any:
        read.append(1)
        return real(*args)

    monkeypatch.setattr(skilldoc, "documents", spy)
    monkeypatch.setattr(skills, "documents", spy)
    assert store.skill_recall("keyboard helper", limit=10)["count"] > 0
    assert read == [1]
    assert skill_index(store) == rebuilt
