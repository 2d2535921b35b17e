"""A catalog prefix a plain git commit left at a depth the record count does not give:
it still reads, ``doctor`` names it, and the next write puts it back (core.shards)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, make

pytestmark = [
    pytest.mark.compat,
    pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is not installed"),
]
Run = Callable[..., Result]


def git(store: Path, *args: str) -> str:
    who = ["-c", "user.name=Hand", "-c", "user.email=hand@example.invalid"]
    return subprocess.run(
        ["git", "-C", str(store), *who, *args], capture_output=True, text=True, check=True
    ).stdout


def test_a_prefix_moved_by_hand_reads_is_named_and_is_put_back(
    xb: Run, json_file: Callable[[Any], str]
) -> None:
    assert xb("put", json_file([make(f"hand-{i}") for i in range(40)])).code == 0
    store = Path(xb("status").json["store"])
    catalog = store / "index" / "catalog"
    fullest = max(catalog.glob("*.json"), key=lambda p: len(json.loads(p.read_bytes())))
    prefix, entries = fullest.stem, json.loads(fullest.read_bytes())
    (catalog / prefix).mkdir()
    for rid, entry in entries.items():  # three digits: not what 40 records give
        shard = catalog / prefix / f"{rid.split('_', 1)[1][2]}.json"
        found = json.loads(shard.read_bytes()) if shard.exists() else {}
        shard.write_text(json.dumps({**found, rid: entry}, indent=2, sort_keys=True) + "\n")
    fullest.unlink()
    git(store, "add", "-A", "index")
    git(store, "commit", "-q", "-m", "move a catalog prefix by hand")

    for rid in entries:
        assert xb("get", rid).json["id"] == rid
    drift = [p for p in xb("doctor").json["problems"] if p["code"] == "catalog_drift"]
    assert {p["path"] for p in drift} >= {f"index/catalog/{prefix}.json"}, drift

    other = make("more-0")
    assert xb("put", json_file([other])).code == 0
    assert fullest.is_file() and not (catalog / prefix).exists()
    assert json.loads(fullest.read_bytes()) == entries
    assert xb("doctor").json["problems"] == []
    assert git(store, "status", "--porcelain") == ""
    git(store, "fsck", "--strict", "--no-progress")


def test_a_prefix_left_in_two_forms_is_read_whole_and_put_in_one(
    xb: Run, json_file: Callable[[Any], str]
) -> None:
    items = [make(f"two-{i}") for i in range(20)]
    ids = [item["id"] for item in xb("put", json_file(items)).json["results"]]
    store = Path(xb("status").json["store"])
    catalog = store / "index" / "catalog"
    fullest = max(catalog.glob("*.json"), key=lambda p: len(json.loads(p.read_bytes())))
    entries = json.loads(fullest.read_bytes())
    moved = sorted(entries)[0]  # one line moved into a directory beside the file
    (catalog / fullest.stem).mkdir()
    stray = catalog / fullest.stem / f"{moved.split('_', 1)[1][2]}.json"
    stray.write_text(json.dumps({moved: entries.pop(moved)}, indent=2) + "\n")
    fullest.write_text(json.dumps(entries, indent=2) + "\n")
    git(store, "add", "-A", "index")
    git(store, "commit", "-q", "-m", "a catalog prefix in two forms")
    assert xb("doctor").json["problems"]

    edited = {
        **items[ids.index(moved)],
        "title": "A new title",
        "updatedAt": "2026-11-01T00:00:00.000Z",
    }
    result = xb("put", json_file([edited])).json
    assert result["updated"] == 1 and result["added"] == 0, result  # found, not new
    assert xb("status").json["resources"] == 20
    assert not stray.exists() and not stray.parent.exists()
    assert moved in json.loads(fullest.read_bytes())
    assert xb("doctor").json["problems"] == []
    assert git(store, "status", "--porcelain") == ""


def test_a_pulled_commit_leaving_a_prefix_in_two_forms_is_re_derived(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path
) -> None:
    # a remote's tree is outside input: a prefix there both as a file and as a directory
    # (one entry copied into it) is not taken as in step; the pull derives the catalog
    # from the records, in one form
    assert xb("put", json_file([make(f"pulled-{i}") for i in range(20)])).code == 0
    store = Path(xb("status").json["store"])
    remote, hand = tmp_path / "remote.git", tmp_path / "hand"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    assert xb("remote", "add", "origin", str(remote)).code == 0
    assert xb("remote", "push").code == 0
    git(tmp_path, "clone", "-q", str(remote), str(hand))
    catalog = hand / "index" / "catalog"
    fullest = max(catalog.glob("*.json"), key=lambda p: len(json.loads(p.read_bytes())))
    entries = json.loads(fullest.read_bytes())
    copied = sorted(entries)[0]
    (catalog / fullest.stem).mkdir()
    stray = catalog / fullest.stem / f"{copied.split('_', 1)[1][2]}.json"
    stray.write_text(json.dumps({copied: entries[copied]}, indent=2) + "\n")
    git(hand, "add", "-A")
    git(hand, "commit", "-q", "-m", "a prefix in two forms")
    git(hand, "push", "-q", "origin", "main")

    pulled = xb("remote", "pull")
    assert pulled.code == 0, pulled.stderr
    mine = store / "index" / "catalog"
    assert (mine / fullest.name).is_file() and not (mine / fullest.stem).exists()
    assert xb("doctor").json["problems"] == []
    assert xb("status").json["resources"] == 20
    assert git(store, "status", "--porcelain") == ""
