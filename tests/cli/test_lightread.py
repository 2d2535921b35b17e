"""`xbrain get` answered from a current search index: the same bytes as through git."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import (
    COMMON_UNITS,
    EXAMPLES,
    Result,
    command_lines,
    light_and_click,
    make,
    run_entry,
)
from xbrain.cli.records import get as get_command
from xbrain.cli.records import list_command
from xbrain.kinds.model import resource_id
from xbrain.lightread import parse_get, parse_list

Run = Callable[..., Result]
DESIGNED = "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56"
CHINESE = "resource_b9fd64f7614d707b8c04d4f72a7e57d656097ea1aac5bd09e377372def162b89"


def loaded(store_dir: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``xbrain ARGV --store STORE`` as a fresh process: the result, the modules it
    imported."""
    command = [sys.executable, "-X", "importtime", "-m", "xbrain", *argv, "--store", str(store_dir)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    return proc, imported


def index_files(store_dir: Path) -> list[Path]:
    return sorted((store_dir / ".git" / "xbrain").glob("search.sqlite*"))


def test_get_from_a_current_index_prints_what_git_holds(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """English, Chinese and a resource with a design analysis: the light path's bytes are
    the full path's, and it loads neither git nor YAML code nor click."""
    assert xb_proc("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    assert xb_proc("analyze", str(EXAMPLES / "analysis.json")).code == 0
    assert xb_proc("put", str(EXAMPLES / "batch.json")).code == 0
    plain = make("plain", title="Plain", savedReason="the user asked")
    assert xb_proc("put", json_file(plain)).code == 0
    ids = [DESIGNED, CHINESE, resource_id("web", "plain")]
    through_git = {rid: xb_proc("get", rid) for rid in ids}  # no index yet: git
    assert all(r.code == 0 for r in through_git.values())
    assert "design" in through_git[DESIGNED].json
    assert xb_proc("search", "dialog").code == 0  # builds the index
    for rid in ids:
        proc, imported = loaded(store_dir, "get", rid)
        assert (proc.returncode, proc.stdout) == (0, through_git[rid].stdout)
        assert not imported & {"dulwich", "ruamel", "click"}, rid
    with_option = xb_proc("get", f"--store={store_dir}", DESIGNED)
    assert with_option.stdout == through_git[DESIGNED].stdout


def test_get_after_a_write_reads_the_new_revision(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """Every write keeps the index at main, so the fast answer is never an old one."""
    assert xb_proc("put", json_file(make("r", title="First"))).code == 0
    assert xb_proc("search", "first").code == 0
    rid = resource_id("web", "r")
    assert xb_proc("get", rid).json["title"] == "First"
    newer = make("r", title="Second", updatedAt="2026-10-09T00:00:00.000Z")
    assert xb_proc("put", json_file(newer)).code == 0
    proc, imported = loaded(store_dir, "get", rid)
    assert '"title": "Second"' in proc.stdout and "dulwich" not in imported


def test_a_deleted_or_unknown_id_is_worded_by_git(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    assert xb_proc("put", json_file(make("gone"))).code == 0
    assert xb_proc("search", "dialog").code == 0
    rid = resource_id("web", "gone")
    assert xb_proc("delete", rid).code == 0
    deleted = xb_proc("get", rid)
    assert deleted.code == 3 and "bring it back with xbrain restore" in deleted.stderr
    for wrong in ("resource_" + "0" * 64, "nonsense", "-"):
        result = xb_proc("get", wrong)
        assert (result.code, result.stdout) == (3, ""), wrong
        assert result.stderr == "Resource not found.\n"


def test_a_stale_or_damaged_index_is_passed_by(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """An index that reflects another commit, or is not SQLite at all, is not read: git
    answers, with the current revision."""
    assert xb_proc("put", json_file(make("r", title="Indexed"))).code == 0
    assert xb_proc("search", "indexed").code == 0
    rid = resource_id("web", "r")
    expected = xb_proc("get", rid).stdout
    (index,) = [p for p in index_files(store_dir) if p.name == "search.sqlite"]
    import sqlite3

    with sqlite3.connect(index) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'commit'", ("0" * 40,))
        conn.execute('UPDATE docs SET resource = \'{"title": "stale"}\'')
    conn.close()
    proc, imported = loaded(store_dir, "get", rid)
    assert (proc.returncode, proc.stdout) == (0, expected)
    assert "dulwich" in imported  # the full path answered
    for path in index_files(store_dir):
        path.unlink()
    index.write_bytes(b"not a database" * 100)
    assert xb_proc("get", rid).stdout == expected


def listed_store(xb_proc: Run, json_file: Callable[[Any], str]) -> None:
    """Nine resources from three providers; equal updatedAt values, so ties by id count."""
    items = []
    for i in range(9):
        item = make(f"n{i}", title=f"Note {i}", updatedAt=f"2026-10-0{1 + i % 3}T00:00:00.000Z")
        item["source"]["provider"] = ("web", "x", "github")[i % 3]
        items.append(item)
    assert xb_proc("put", json_file(items)).code == 0
    assert xb_proc("delete", resource_id("web", "n3")).code == 0
    assert xb_proc("search", "note").code == 0  # builds the index


LISTINGS = [
    [],
    ["--limit", "3"],
    ["--limit=2", "--offset", "3"],
    ["--offset", "7"],
    ["--offset", "50"],
    ["--since", "2026-10-02"],
    ["--since", "2026-10-02T00:00:00Z", "--provider", "x"],
    ["--provider", "github", "--limit", "1", "--offset", "1"],
    ["--provider=nobody"],
    ["--limit", "0"],
    ["--offset", "-1"],
    ["--since", "yesterday"],
]


def test_list_from_a_current_index_prints_what_git_holds(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """Order (newest first, ties by id), totals, pages, filters and refusals: the light
    path's bytes and exit code are click's through git, and it loads no git code."""
    listed_store(xb_proc, json_file)
    for argv in LISTINGS:
        through_git = run_entry(["--store", str(store_dir), "list", *argv], light=False)
        proc, imported = loaded(store_dir, "list", *argv)
        assert (proc.returncode, proc.stdout) == through_git[:2], argv
        if proc.returncode == 0:
            assert not imported & {"dulwich", "ruamel", "click"}, argv
        else:
            assert proc.stderr.splitlines()[-1] == through_git[2].strip(), argv
    first = json.loads(loaded(store_dir, "list")[0].stdout)
    assert first["total"] == 8
    assert [r["id"] for r in first["results"][:3]] == sorted(
        [resource_id(p, f"n{i}") for p, i in (("github", 2), ("github", 5), ("github", 8))],
        reverse=True,
    )


def test_list_passes_a_stale_index_by(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    listed_store(xb_proc, json_file)
    expected = xb_proc("list").stdout
    (index,) = [p for p in index_files(store_dir) if p.name == "search.sqlite"]
    with sqlite3.connect(index) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'commit'", ("0" * 40,))
        conn.execute("DELETE FROM docs")
    conn.close()
    proc, imported = loaded(store_dir, "list")
    assert (proc.returncode, proc.stdout) == (0, expected) and "dulwich" in imported


# Each command's arguments as units — a whole option with its value, an argument — and
# loose tokens, so that well-formed command lines are drawn often and broken ones too.
READERS: dict[str, tuple[Any, Any, list[str], Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "get": (
        parse_get,
        get_command,
        ["-", "", "resource_x", "entry_y", "/tmp/b/", "--store=/tmp/c", "--", "-x", "--store="],
        lambda light: {"resource_id": light["query"]},
    ),
    "list": (
        parse_list,
        list_command,
        [
            *("--limit 3", "--limit=2", "--limit x", "--offset -1", "--offset 4"),
            *("--since 2026-10-02", "--provider web", "--provider=", "--provider", "x", ""),
        ],
        lambda light: {"limit": 20, "offset": 0, "since": None, "provider": None, **light},
    ),
}


@pytest.mark.parametrize("command", sorted(READERS))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_light_reads_read_only_what_click_reads_the_same(command: str, data: Any) -> None:
    """Whatever the light get and list take, click takes and reads the same."""
    parse, click_command, units, expected = READERS[command]
    argv = data.draw(command_lines(units + COMMON_UNITS, ["--store", "1", "--help"], max_size=4))
    light = parse(argv)
    theirs = light_and_click(light, click_command, argv)
    if light is None:
        return  # click parses it (and says what is wrong), as it always did
    store = light.pop("store", None)
    assert theirs == {**expected(light), "store": None if store is None else str(Path(store))}


def test_the_store_lists_from_a_current_index(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path, monkeypatch: Any
) -> None:
    """A warm process (the MCP server, xbrain serve) lists from the index as well: the
    catalog and the records in git are not read while the index reflects main."""
    from xbrain import listing
    from xbrain.store import Store

    listed_store(xb_proc, json_file)
    expected = {argv: xb_proc("list", *argv).json for argv in [(), ("--provider", "x")]}

    def through_git(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("listed through git")

    monkeypatch.setattr(listing, "list_resources", through_git)
    store = Store(store_dir)
    assert store.list() == expected[()]
    assert store.list(provider="x") == expected[("--provider", "x")]
    assert xb_proc("delete", resource_id("x", "n1")).code == 0  # the index follows the write
    assert store.list(provider="x")["total"] == expected[("--provider", "x")]["total"] - 1
