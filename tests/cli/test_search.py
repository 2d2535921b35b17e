"""search through the CLI: the original's behaviours (reference §4.5–4.8) on BM25F."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, make
from xbrain.kinds.model import resource_id

Run = Callable[..., Result]
FIXTURE = {
    "title": "Accessible React dialogs",
    "purpose": "Build accessible dialog components",
    "useWhen": ["React dialog accessibility audit", "检查对话框键盘导航"],
    "summary": "Keyboard and focus checklist for React dialogs.",
    "text": "A fictional guide to focus management and keyboard navigation.",
}
FIXTURE_ID = resource_id("web", "fixture")


@pytest.fixture
def seeded(xb: Run, json_file: Callable[[Any], str]) -> Run:
    assert xb("put", json_file(make("fixture", **FIXTURE))).code == 0
    return xb


def hits(result: Result) -> list[str]:
    assert result.code == 0, result.stderr
    return [r["resource"]["id"] for r in result.json["results"]]


def test_worked_example_and_output_shape(seeded: Run) -> None:
    result = seeded("search", "help me audit React dialog accessibility")
    data = result.json
    assert data["mode"] == "lexical_candidates" and data["provider"] is None
    assert data["guidance"].startswith("Check applicability")
    (hit,) = data["results"]
    assert hit["matched"] == ["audit", "react", "dialog", "accessibility"]
    assert hit["score"] > 0
    assert hit["citation"] == {
        "id": FIXTURE_ID,
        "url": "https://example.com/dialog-guide/fixture",
        "updatedAt": "2026-10-07T00:00:00.000Z",
    }
    assert hit["resource"]["title"] == "Accessible React dialogs"


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("React dialog", True),
        ("keyboard", True),  # summary and text
        ("检查对话框键盘导航", True),
        ("react quantum", True),  # 1 of 2 terms: 50% >= 35%
        ("react quantum geology", False),  # 1 of 3: 33% < 35%
        ("quantum geology", False),
        ("the and for", False),  # only filler words
        ("帮我找资源", False),  # only Chinese filler words
        ("limitations", False),  # limitations are not searched
        ("example.com", False),  # nor URLs
    ],
)
def test_coverage_and_fields(seeded: Run, query: str, found: bool) -> None:
    assert (hits(seeded("search", query)) == [FIXTURE_ID]) is found


def test_coverage_boundary_seven_of_twenty(xb: Run, json_file: Callable[[Any], str]) -> None:
    words = [f"word{i}" for i in range(20)]
    xb("put", json_file(make("seven", text=" ".join(words[:7]))))
    xb("put", json_file(make("six", text=" ".join(words[:6]))))
    found = hits(xb("search", " ".join(words)))
    assert found == [resource_id("web", "seven")]


def test_matched_in_query_order(seeded: Run) -> None:
    (hit,) = seeded("search", "accessibility quantum react").json["results"]
    assert hit["matched"] == ["accessibility", "react"]


def test_chinese_word_shared_with_resource(xb: Run, json_file: Callable[[Any], str]) -> None:
    chinese = {
        "summary": "",
        "purpose": "检查弹出窗口",
        "useWhen": ["做前端审查时"],
        "limitations": [],
    }
    xb(
        "put",
        json_file(make("zh", title="对话框无障碍检查清单", text="键盘导航和焦点管理", **chinese)),
    )
    xb("put", json_file(make("en", title="Dialog accessibility checklist", text="keyboard focus")))
    zh = resource_id("web", "zh")
    assert hits(xb("search", "对话框")) == [zh]
    assert hits(xb("search", "对话")) == [zh]  # inside the longer word, found by the search cut
    assert hits(xb("search", "如何检查对话框的键盘导航")) == [zh]
    assert zh not in hits(xb("search", "dialog keyboard checklist"))


def test_ranking_prefers_the_document_that_answers(
    xb: Run, json_file: Callable[[Any], str]
) -> None:
    """Siblings share a purpose line; the body that holds the words wins (BM25F)."""
    purpose = "Reference notes for the storage engine"
    for i in range(5):
        xb(
            "put",
            json_file(
                make(f"sibling-{i}", purpose=purpose, text=f"Chapter {i} about unrelated details.")
            ),
        )
    xb(
        "put",
        json_file(
            make(
                "answer",
                purpose=purpose,
                text="Compaction merges storage segments and drops tombstones.",
            )
        ),
    )
    assert hits(xb("search", "storage compaction tombstones"))[0] == resource_id("web", "answer")


def test_ties_break_by_id(xb: Run, json_file: Callable[[Any], str]) -> None:
    ids = sorted(resource_id("web", f"twin-{i}") for i in range(4))
    for i in range(4):
        xb("put", json_file(make(f"twin-{i}", title="identical twin", text="same words")))
    result = xb("search", "identical twin", "--limit", "20").json["results"]
    assert [r["resource"]["id"] for r in result] == ids
    assert len({r["score"] for r in result}) == 1


def test_limit(xb: Run, json_file: Callable[[Any], str]) -> None:
    xb("put", json_file([make(f"many-{i}", title="common word") for i in range(25)]))
    assert len(hits(xb("search", "common"))) == 5
    assert len(hits(xb("search", "common", "--limit", "20"))) == 20
    assert len(hits(xb("search", "common", "--limit", "1"))) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["", "--limit", "5"],
            "Use a query or design filter (max 2,000 characters), and limit 1–20.",
        ),
        (["   "], "Use a query or design filter (max 2,000 characters), and limit 1–20."),
        (["x" * 2001], "Use a query or design filter (max 2,000 characters), and limit 1–20."),
        (
            ["react", "--limit", "0"],
            "Use a query or design filter (max 2,000 characters), and limit 1–20.",
        ),
        (
            ["react", "--limit", "21"],
            "Use a query or design filter (max 2,000 characters), and limit 1–20.",
        ),
        (["react", "--domain", "food"], "Unknown design domain."),
        (["react", "--style", "s" * 2001], "Invalid design filter."),
    ],
)
def test_bad_requests(seeded: Run, args: list[str], message: str) -> None:
    result = seeded("search", *args)
    assert (result.code, result.stderr, result.stdout) == (4, message + "\n", "")


def test_query_from_stdin(seeded: Run) -> None:
    direct = seeded("search", "keyboard dialog")
    piped = seeded("search", "-", input="keyboard dialog\n")
    assert direct.json["results"] and (piped.code, piped.json) == (0, direct.json)
    chinese = "说" * 2000  # 2,000 characters in 6,000 bytes: allowed
    assert seeded("search", "-", input=chinese.encode()).code == 0
    for data in (b"\xff\xfe", "x" * 2001, ("说" * 2001).encode(), b"a" * 9000, b""):
        bad = seeded("search", "-", input=data)
        assert (bad.code, bad.stdout) == (4, ""), data[:10]
        assert bad.stderr.startswith("Use a query or design filter")


def test_filters_on_analyzed_designs(xb: Run, json_file: Callable[[Any], str]) -> None:
    xb("put", str(EXAMPLES / "batch.json"))  # the X resource has an analyzed web-ui design
    x_id = resource_id("x", "123456789")
    filter_only = xb("search", "", "--domain", "web-ui").json["results"]
    assert [r["resource"]["id"] for r in filter_only] == [x_id]
    assert filter_only[0]["score"] == 1 and filter_only[0]["matched"] == []
    assert hits(xb("search", "", "--feature", "SPACING")) == [x_id]  # kind, case-insensitive
    assert hits(xb("search", "", "--feature", "padding")) == [x_id]  # value substring
    assert hits(xb("search", "", "--style", "MINI")) == [x_id]
    assert hits(xb("search", "", "--domain", "app-ui")) == []
    assert hits(xb("search", "卡片", "--domain", "web-ui")) == [x_id]
    assert hits(xb("search", "accessibility", "--domain", "web-ui")) == []
    assert hits(xb("search", "generous padding")) == [x_id]  # design labels are searchable
    # a text change marks the design stale: it no longer matches filters or labels
    changed = json.loads((EXAMPLES / "batch.json").read_text())[1]
    xb("put", json_file({**changed, "text": "新的文字", "updatedAt": "2027-01-01T00:00:00Z"}))
    assert hits(xb("search", "", "--domain", "web-ui")) == []
    assert hits(xb("search", "generous padding")) == []


def test_index_follows_every_write(xb: Run, json_file: Callable[[Any], str]) -> None:
    rid = resource_id("web", "fixture")
    xb("put", json_file(make("fixture", **FIXTURE)))
    assert hits(xb("search", "accessible")) == [rid]  # builds the index
    xb(
        "put",
        json_file(
            make(
                "fixture", **{**FIXTURE, "title": "Modal windows"}, updatedAt="2027-01-01T00:00:00Z"
            )
        ),
    )
    assert hits(xb("search", "modal")) == [rid]
    xb("delete", rid)
    assert hits(xb("search", "modal")) == []
    xb("put", json_file(make("fixture", title="Restored modal", updatedAt="2028-01-01T00:00:00Z")))
    assert hits(xb("search", "restored")) == [rid]


def test_damaged_index_is_rebuilt_not_trusted(seeded: Run, store_dir: Path) -> None:
    assert hits(seeded("search", "react")) == [FIXTURE_ID]
    index = store_dir / ".git" / "xbrain" / "search.sqlite"
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    index.write_bytes(b"this is not a database" * 100)
    assert hits(seeded("search", "react")) == [FIXTURE_ID]


@pytest.mark.parametrize("noted", ["behind", "", "0" * 39, "g" * 40, "ab" * 40, "é" * 40])
def test_an_index_noting_no_commit_name_is_rebuilt(
    seeded: Run, store_dir: Path, noted: str
) -> None:
    """The commit an index says it reflects went to dulwich as it was, and a name that no
    object can have was its AssertionError: "Internal error" from every search until a
    reindex. It is damage in derived data like any other: the index is built again."""
    assert hits(seeded("search", "react")) == [FIXTURE_ID]
    index = store_dir / ".git" / "xbrain" / "search.sqlite"
    with contextlib.closing(sqlite3.connect(index, isolation_level=None)) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'commit'", (noted,))
    found = seeded("search", "react")
    assert found.code == 0, found.err
    assert hits(found) == [FIXTURE_ID]


def test_doctor_reports_and_removes_a_damaged_index(seeded: Run, store_dir: Path) -> None:
    assert hits(seeded("search", "react")) == [FIXTURE_ID]
    assert seeded("doctor").json["ok"] is True
    index = store_dir / ".git" / "xbrain" / "search.sqlite"
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    index.write_bytes(b"garbage" * 1000)
    report = seeded("doctor")
    assert report.code == 7
    assert {p["code"] for p in report.json["problems"]} == {"search_index"}
    assert seeded("doctor", "--repair").json["ok"] is True
    assert not index.exists()
    assert hits(seeded("search", "react")) == [FIXTURE_ID]


def test_stale_index_is_caught_up(
    seeded: Run, store_dir: Path, json_file: Callable[[Any], str]
) -> None:
    assert hits(seeded("search", "react")) == [FIXTURE_ID]
    index = store_dir / ".git" / "xbrain" / "search.sqlite"
    with sqlite3.connect(index) as conn:  # lie about the commit it reflects
        conn.execute("UPDATE meta SET value = ? WHERE key = 'commit'", ("0" * 40,))
        conn.execute("DELETE FROM docs")
    assert hits(seeded("search", "react")) == [FIXTURE_ID]
    # and a commit made outside xbrain (no index upkeep) is caught up by tree diff
    from xbrain.git import GitStore

    with GitStore(store_dir) as git:
        head = git.head()
        path = f"resources/{FIXTURE_ID[9:11]}/{FIXTURE_ID}.yaml"
        git.commit(head, {path: None}, "outside\n", "t <t@t>", 0)
    assert hits(seeded("search", "react")) == []


def test_reindex(seeded: Run) -> None:
    result = seeded("reindex")
    assert result.code == 0 and result.json["reindexed"] == 1
    assert hits(seeded("search", "react")) == [FIXTURE_ID]


def test_search_at_a_past_commit(xb: Run, json_file: Callable[[Any], str], store_dir: Path) -> None:
    xb("put", json_file(make("fixture", **FIXTURE)))
    first = xb("status").json["commit"]
    xb(
        "put",
        json_file(
            make(
                "fixture", **{**FIXTURE, "title": "Modal windows"}, updatedAt="2027-01-01T00:00:00Z"
            )
        ),
    )
    xb("delete", FIXTURE_ID)
    assert hits(xb("search", "accessible")) == []
    past = xb("search", "accessible", "--at", first)
    assert hits(past) == [FIXTURE_ID]
    assert past.json["results"][0]["resource"]["title"] == "Accessible React dialogs"
    assert hits(xb("search", "modal", "--at", "main~1")) == [FIXTURE_ID]
    assert hits(xb("search", "accessible", "--at", first[:10])) == [FIXTURE_ID]
    assert xb("search", "react", "--at", "nonsense").code == 3


def test_search_on_missing_store(xb: Run, store_dir: Path) -> None:
    assert xb("search", "react").json["results"] == []
    assert not store_dir.exists()


def test_search_never_imports_or_prints_jieba(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    assert xb_proc("put", json_file(make("zh", title="对话框无障碍检查清单"))).code == 0
    assert xb_proc("search", "warm").code == 0  # builds the index
    for query in ("dialog", "对话框"):
        result = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-m",
                "xbrain",
                "search",
                query,
                "--store",
                str(store_dir),
            ],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0
        lines = result.stderr.splitlines()
        assert all(line.startswith("import time:") for line in lines)  # nothing else on stderr
        imported = {line.split("|")[-1].strip() for line in lines}
        assert not any(name.startswith("jieba") for name in imported)
        # the index is current after the put and the first search: the fast path answers
        # without git or YAML machinery
        assert not any(name.startswith(("dulwich", "ruamel")) for name in imported)


def test_the_fast_path_reads_a_packed_main(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """After `git gc` (README offers it) main lives in packed-refs: search, recall and
    skill recall still answer from their indexes without git (they fell back to the
    full path, ≈ 75 ms more, until the next write)."""
    assert xb_proc("put", json_file(make("zh", title="对话框无障碍检查清单"))).code == 0
    assert xb_proc("skill", "save", str(EXAMPLES / "skills" / "deploy-check")).code == 0
    assert xb_proc("entry", "import", str(EXAMPLES / "memex")).code == 0
    commands = [
        ("search", "对话框"),
        ("recall", "-"),
        ("skill", "recall", "deploy rollback"),
        ("skill", "recall", "--slug", "deploy-check"),
    ]
    for argv in commands:  # builds the indexes
        assert xb_proc(*argv, input="can I git push --force to main?").code == 0
    control = store_dir / ".git"
    head = (control / "refs" / "heads" / "main").read_text().strip()
    (control / "packed-refs").write_text(
        f"# pack-refs with: peeled fully-peeled sorted \n{'0' * 40} refs/heads/other\n"
        f"{head} refs/heads/main\n"
    )
    (control / "refs" / "heads" / "main").unlink()
    for argv in commands:
        result = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "xbrain", *argv, "--store", str(store_dir)],
            input="can I git push --force to main?",
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, result.stderr[-300:]
        imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines()}
        assert not any(name.startswith(("dulwich", "ruamel")) for name in imported), argv
    assert xb_proc("search", "对话框").json["results"]


def test_a_cache_dir_that_cannot_be_written_costs_time_not_answers(
    xb: Run, xb_proc: Run, json_file: Callable[[Any], str], tmp_path: Path, segment_cache: Path
) -> None:
    """A read-only home (a sandbox, a container) has no cache for the compiled Chinese
    dictionary: each process compiles it in memory and answers as it always does."""
    xb("put", json_file(make("zh", title="对话框无障碍检查清单", text="键盘导航和焦点管理")))
    expected = xb("search", "如何检查对话框的键盘导航")
    assert hits(expected) == [resource_id("web", "zh")]
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    env = {"XBRAIN_CACHE_DIR": str(blocked / "cache")}
    assert xb_proc("search", "如何检查对话框的键盘导航", env=env).stdout == expected.stdout
    assert xb_proc("reindex", env=env).code == 0
    recalled = xb_proc("recall", "-", input="对话框 键盘导航", env=env)
    assert recalled.code == 0 and recalled.stderr == ""
    bad = tmp_path / "cache"  # the compiled file's name taken by a directory
    bad.mkdir()
    for ref in segment_cache.glob("jieba-*.ref"):  # the session's: names the same .bin
        (bad / ref.name).write_bytes(ref.read_bytes())
        (bad / f"jieba-{ref.read_text().strip()}.bin").mkdir()
    assert xb_proc(
        "search", "如何检查对话框的键盘导航", env={"XBRAIN_CACHE_DIR": str(bad)}
    ).stdout == (expected.stdout)
    assert [p.is_dir() for p in bad.glob("jieba-*.bin")] == [True]  # left, not removed


def test_the_python_api_compiles_the_dictionary_once_per_user_as_the_cli_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Store(path)`` with no cache dir uses the user's ($XBRAIN_CACHE_DIR, else the
    XDG cache dir), as the CLI does: before, each store opened through the API compiled
    the dictionary (a second, 8 MB) into its own ``.git/xbrain/cache``."""
    from xbrain.store import Store

    def two_stores(name: str) -> None:
        for store in (tmp_path / f"{name}-1", tmp_path / f"{name}-2"):
            api = Store(store)
            api.init()
            api.put([make("zh", title="对话框无障碍检查清单", text="键盘导航和焦点管理")])
            found = api.search("对话框的键盘导航")["results"]
            assert [hit["resource"]["id"] for hit in found] == [resource_id("web", "zh")]
            assert not (store / ".git" / "xbrain" / "cache").exists()

    chosen = tmp_path / "chosen"
    monkeypatch.setenv("XBRAIN_CACHE_DIR", str(chosen))
    two_stores("chosen")
    assert len(list(chosen.glob("jieba-*.bin"))) == 1
    monkeypatch.delenv("XBRAIN_CACHE_DIR")
    two_stores("xdg")
    xdg = tmp_path / "home" / "cache" / "xbrain"  # conftest's XDG_CACHE_HOME
    assert len(list(xdg.glob("jieba-*.bin"))) == 1


def test_a_damaged_history_table_is_rebuilt_for_log(seeded: Run, store_dir: Path) -> None:
    """The table behind ``log`` is derived data, as the search index is: before, a
    damaged one made every ``log`` "Internal error (DatabaseError)"."""
    first = seeded("log").json["commits"]
    table = store_dir / ".git" / "xbrain" / "history-v2.sqlite"
    assert table.exists()
    for suffix in ("-wal", "-shm"):
        Path(f"{table}{suffix}").unlink(missing_ok=True)
    table.write_bytes(b"garbage" * 1000)
    again = seeded("log")
    assert again.code == 0 and again.json["commits"] == first, again.stderr
    assert seeded("log", FIXTURE_ID).json["commits"]
    with sqlite3.connect(table) as conn:  # written afresh, readable again
        assert conn.execute("SELECT COUNT(*) FROM commits").fetchone()[0] >= 1


def test_a_damaged_telemetry_database_is_said_reported_and_cleared(
    seeded: Run, store_dir: Path
) -> None:
    """Telemetry is the only copy, so it is not rebuilt: ``telemetry`` says it is damaged
    (before: Internal error (DatabaseError)), doctor reports it and ``--repair`` or
    ``telemetry --clear`` starts it anew."""
    database = store_dir / ".git" / "xbrain" / "telemetry.sqlite"
    database.parent.mkdir(exist_ok=True)
    database.write_bytes(b"garbage" * 1000)
    database.chmod(0o600)  # private, as recall makes it
    told = seeded("telemetry")
    assert told.code == 7 and "telemetry --clear" in told.stderr
    assert len(told.stderr.strip().splitlines()) == 1
    report = seeded("doctor")
    assert report.code == 7 and {p["code"] for p in report.json["problems"]} == {"telemetry"}
    from xbrain.schemas import schema_errors

    assert schema_errors("doctor-output", report.json) == []
    repaired = seeded("doctor", "--repair").json
    assert [p["code"] for p in repaired["repaired"]] == ["telemetry"] and repaired["ok"] is True
    assert not database.exists()
    database.write_bytes(b"garbage" * 1000)
    assert seeded("telemetry", "--clear").json == {"enabled": True, "cleared": 0}
    assert seeded("telemetry").json == {"enabled": True, "entries": []}


def test_other_forms_of_an_english_word_are_found(
    xb: Run, xb_proc: Run, json_file: Callable[[Any], str]
) -> None:
    """A query word finds the other forms of its English stem (``sorted`` → ``sorting``,
    ``directories`` → ``directory``), and the document with the words as asked ranks
    first; in a fresh process (the index's fast path) as in-process."""
    xb("put", json_file(make("forms", title="Sorting a directory listing", text="by time")))
    xb("put", json_file(make("exact", title="Sorted directories list", text="by time")))
    xb("put", json_file(make("other", title="Keyboard shortcuts", text="focus order")))
    forms, exact = resource_id("web", "forms"), resource_id("web", "exact")
    for run in (xb, xb_proc):
        found = run("search", "sorted directories list")
        assert hits(found) == [exact, forms]
        assert [r["matched"] for r in found.json["results"]] == [
            ["sorted", "directories", "list"]
        ] * 2
        assert set(hits(run("search", "listings"))) == {exact, forms}
    assert hits(xb("search", "sorters")) == []  # a word of its own stem: "sorter"


def test_an_index_of_an_older_layout_is_rebuilt(seeded: Run, store_dir: Path) -> None:
    """An index written by a version before stems (layout "2": no stems table) is not
    read as it is: the next search builds it again, with the stems."""
    assert hits(seeded("search", "dialogs")) == [FIXTURE_ID]  # "dialog" in its title
    index = store_dir / ".git" / "xbrain" / "search.sqlite"
    with contextlib.closing(sqlite3.connect(index, isolation_level=None)) as conn:
        conn.execute("DROP TABLE stems")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'version'")
    assert seeded("doctor").json["ok"] is True  # an older layout is not damage
    assert hits(seeded("search", "dialogs")) == [FIXTURE_ID]
    with contextlib.closing(sqlite3.connect(index)) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() != ("2",)
        assert ("dialog", "dialogs") in conn.execute("SELECT stem, term FROM stems").fetchall()
        assert conn.execute("SELECT COUNT(*) FROM stems").fetchone()[0] > 0


@pytest.mark.parametrize("change", ["version", "table"])
def test_doctor_repair_rebuilds_an_index_of_an_older_layout(
    seeded: Run, store_dir: Path, change: str
) -> None:
    """An index another version wrote (or one missing a table) is not damage, so plain
    ``doctor`` passes and writes nothing; ``doctor --repair`` rebuilds it in this
    version's layout, for the commit on main, so the next search does not have to."""
    assert hits(seeded("search", "dialogs")) == [FIXTURE_ID]
    index = store_dir / ".git" / "xbrain" / "search.sqlite"
    with contextlib.closing(sqlite3.connect(index, isolation_level=None)) as conn:
        conn.execute("DROP TABLE stems")
        if change == "version":
            conn.execute("UPDATE meta SET value = '2' WHERE key = 'version'")
        (version,) = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        (commit,) = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
    before = index.read_bytes()
    plain = seeded("doctor")
    assert plain.json["ok"] is True and plain.json["repaired"] == []
    assert index.read_bytes() == before
    report = seeded("doctor", "--repair")
    assert report.code == 0, report.err
    assert [(p["code"], p["path"]) for p in report.json["repaired"]] == [
        ("search_index", ".git/xbrain/search.sqlite")
    ]
    with contextlib.closing(sqlite3.connect(f"{index.as_uri()}?mode=ro", uri=True)) as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        assert ("dialog", "dialogs") in conn.execute("SELECT stem, term FROM stems").fetchall()
    assert meta["commit"] == commit
    assert meta["version"] != "2" and (change == "version" or meta["version"] == version)
    assert seeded("doctor", "--repair").json["repaired"] == []  # current now: left alone
    assert hits(seeded("search", "dialogs")) == [FIXTURE_ID]


@pytest.mark.parametrize("table", ["stems", "postings", "totals"])
def test_an_index_missing_a_table_is_rebuilt(seeded: Run, store_dir: Path, table: str) -> None:
    """A table dropped from the index (by hand, by a tool) is damage like any other: the
    next search builds the index again instead of failing on it."""
    assert hits(seeded("search", "dialogs")) == [FIXTURE_ID]
    index = store_dir / ".git" / "xbrain" / "search.sqlite"
    with contextlib.closing(sqlite3.connect(index, isolation_level=None)) as conn:
        conn.execute(f"DROP TABLE {table}")
    found = seeded("search", "dialogs")
    assert found.code == 0, found.err
    assert hits(found) == [FIXTURE_ID]


@pytest.mark.parametrize("damage", ["{not json", "[]", '{"id": "x"}'])
def test_a_damaged_index_row_is_rebuilt_by_search_and_passed_over_by_get_and_list(
    xb: Run, xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path, damage: str
) -> None:
    """A row of the search index that is not what the index writes (a hand edit, bit
    rot) is damage, like a file SQLite cannot read: a search rebuilds the index and
    answers; get and list read git meanwhile. Never an internal error."""
    items = [make(f"d{i}", title=f"Damage check {i}", text="keyboard focus") for i in range(3)]
    assert xb("put", json_file(items)).code == 0
    searched = xb("search", "keyboard focus damage").json
    rid = searched["results"][0]["citation"]["id"]
    got, listed = xb("get", rid).stdout, xb("list").stdout
    index = store_dir / ".git" / "xbrain" / "search.sqlite"
    for run in (xb, xb_proc):  # in-process (click) and a fresh process (the light paths)
        with sqlite3.connect(index) as conn:
            conn.execute("UPDATE docs SET resource = ? WHERE rid = ?", (damage, rid))
        assert run("get", rid).stdout == got
        assert run("list").stdout == listed
        again = run("search", "keyboard focus damage")
        assert again.code == 0, again.stderr
        assert again.json["results"] == searched["results"]
        with sqlite3.connect(index) as conn:
            (row,) = conn.execute("SELECT resource FROM docs WHERE rid = ?", (rid,)).fetchone()
        assert json.loads(row)["id"] == rid  # rebuilt from the commits


def _stderr_on_a_terminal(*args: str) -> tuple[int, str]:
    """Run ``python -m xbrain ARGS`` with stderr on a pseudo-terminal (stdout a pipe):
    the exit code and what the terminal received."""
    import os
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "xbrain", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    proc.communicate(timeout=120)
    return proc.wait(), seen.decode("utf-8", "replace")


def test_reindex_and_a_search_that_builds_show_a_progress_bar_on_a_terminal(
    seeded: Run, store_dir: Path
) -> None:
    """Issue 14: ``reindex``, and a search that has to build the index (the first after a
    clone or an import), show a progress bar when stderr is a terminal — and nothing when
    it is not, so scripts and agents read clean output."""
    code, shown = _stderr_on_a_terminal("reindex", "--store", str(store_dir))
    assert code == 0, shown
    assert "reindex" in shown and "100%" in shown
    (store_dir / ".git" / "xbrain" / "search.sqlite").unlink()
    code, shown = _stderr_on_a_terminal("search", "dialogs", "--store", str(store_dir))
    assert code == 0, shown
    assert "indexing" in shown and "100%" in shown
    piped = subprocess.run(
        [sys.executable, "-m", "xbrain", "reindex", "--store", str(store_dir)],
        capture_output=True,
        text=True,
    )
    assert piped.returncode == 0 and piped.stderr == ""
    assert json.loads(piped.stdout)["reindexed"] == 1
