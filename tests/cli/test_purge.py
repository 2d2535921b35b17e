"""``xbrain purge`` (issue 46 item 5): a record, or a string, out of the whole history.

Proved the way a person would check it: no object of the repository holds it (``git
cat-file --batch-all-objects``), ``git fsck --strict`` is clean, and every other record
is byte for byte what it was. The fake key is built from parts (never committed whole).
"""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, make
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
KEY = "AKIA" + "QX7Z" * 4


def git(store: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(store), *args], capture_output=True, text=True, check=True
    ).stdout


def all_objects(store: Path) -> bytes:
    """Every object of the repository, loose or packed, reachable or not."""
    return subprocess.run(
        ["git", "-C", str(store), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout


def fsck(store: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(store), "fsck", "--strict", "--no-dangling"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout + done.stderr


def files(store: Path) -> dict[str, bytes]:
    """The records at the head commit, by path."""
    out = {}
    for path in git(store, "ls-tree", "-r", "--name-only", "main").split():
        if path.startswith(("resources/", "entries/")):
            out[path] = subprocess.run(
                ["git", "-C", str(store), "show", f"main:{path}"], capture_output=True, check=True
            ).stdout
    return out


def messages(store: Path) -> list[str]:
    return [m.strip() for m in git(store, "log", "--format=%B%x00", "main").split("\x00")][:-1]


@pytest.fixture
def secret_store(xb_proc: Run, store_dir: Path) -> dict[str, str]:
    """Three resources and an entry; the key in one resource (allowed) and the entry."""
    ids = {}
    for name in ["one", "two", "three"]:
        text = f"the staging key is {KEY}" if name == "two" else f"plain text {name}"
        put = xb_proc("put", "-", "--allow-secret", "aws", input=make(name, text=text))
        assert put.code == 0, put.stderr
        ids[name] = put.json["results"][0]["id"]
    entry = {"kind": "memory", "name": "deploy notes", "body": f"use {KEY} for staging"}
    assert xb_proc("entry", "put", "-", "--allow-secret", "aws", input=entry).code == 0
    edited = make("three", text="plain text three, edited", updatedAt="2026-10-08T00:00:00.000Z")
    assert xb_proc("put", "-", input=edited).code == 0
    return ids


def test_purge_text_is_a_dry_run_until_yes_then_no_object_holds_it(
    xb_proc: Run, store_dir: Path, secret_store: dict[str, str]
) -> None:
    head = git(store_dir, "rev-parse", "main")
    before_files = files(store_dir)
    before_messages = messages(store_dir)
    dry = xb_proc("purge", "--text", KEY)
    assert dry.code == 0, dry.stderr
    assert dry.json["applied"] is False and dry.json["commitsRewritten"] >= 3
    assert dry.json["commit"] is None and KEY not in dry.stdout
    assert schema_errors("purge-output", dry.json) == []
    assert git(store_dir, "rev-parse", "main") == head and KEY.encode() in all_objects(store_dir)

    done = xb_proc("purge", "--text", KEY, "--yes")
    assert done.code == 0, done.stderr
    assert done.json["applied"] is True and KEY not in done.stdout + done.stderr
    assert schema_errors("purge-output", done.json) == []
    assert done.json["objectsHolding"] == 0
    assert KEY.encode() not in all_objects(store_dir)
    fsck(store_dir)
    assert xb_proc("doctor").json["ok"] is True
    assert git(store_dir, "status", "--porcelain") == ""
    # every other record is byte-identical; the two that held it say (purged) instead
    after_files = files(store_dir)
    assert set(after_files) == set(before_files)
    changed = {p for p in after_files if after_files[p] != before_files[p]}
    assert len(changed) == 2
    for path in changed:
        assert after_files[path] == before_files[path].replace(KEY.encode(), b"(purged)")
    # every message and trailer kept (the allowed-secret trailers too), one purge commit
    after_messages = messages(store_dir)
    assert after_messages[1:] == before_messages
    assert "Xbrain-Command: purge" in after_messages[0]
    assert "Xbrain-Purge-Of: " in after_messages[0]
    assert sum("Xbrain-Allowed-Secret: aws" in m for m in after_messages) == 2
    # the indexes were rebuilt: search still answers, and finds the purged marker
    found = xb_proc("search", "staging key")
    assert found.code == 0 and secret_store["two"] in found.stdout
    log = store_dir / ".git" / "xbrain" / "purge.log"
    assert KEY not in log.read_text() and json.loads(log.read_text())["texts"] == 1
    assert schema_errors("purge-log", json.loads(log.read_text())) == []
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert "reflog" not in git(store_dir, "reflog", "main") and KEY not in git(
        store_dir, "log", "--all", "-p"
    )


def test_purge_id_removes_the_record_from_every_commit(
    xb_proc: Run, store_dir: Path, secret_store: dict[str, str]
) -> None:
    rid = secret_store["two"]
    record = subprocess.run(
        ["git", "-C", str(store_dir), "show", f"main:resources/{rid[9:11]}/{rid}.yaml"],
        capture_output=True,
        check=True,
    ).stdout
    others = {p: d for p, d in files(store_dir).items() if rid not in p}
    done = xb_proc("purge", rid, "--yes")
    assert done.code == 0, done.stderr
    blobs = all_objects(store_dir)
    assert record not in blobs and b"/two" not in blobs  # its text, its URL (the URL index)
    assert b"Fictional accessible dialog guide" in blobs  # the other records' title stays
    fsck(store_dir)
    assert xb_proc("doctor").json["ok"] is True
    assert {p: d for p, d in files(store_dir).items()} == others
    assert xb_proc("get", rid).code == 3
    assert all(
        rid not in path for path in git(store_dir, "log", "--name-only", "--format=").split()
    )


def test_purge_refuses_bad_input_and_changes_nothing(
    xb_proc: Run, store_dir: Path, secret_store: dict[str, str]
) -> None:
    head = git(store_dir, "rev-parse", "main")
    assert xb_proc("purge").code == 4
    assert xb_proc("purge", "--text", "ab", "--yes").code == 4
    assert xb_proc("purge", "--text", "two\nlines", "--yes").code == 4
    assert xb_proc("purge", "--text", "two words", "--yes").code == 4  # YAML may fold it
    assert xb_proc("purge", "not-an-id", "--yes").code == 3
    assert xb_proc("purge", secret_store["one"], "not-an-id", "--yes").code == 3
    assert git(store_dir, "rev-parse", "main") == head
    assert not (store_dir / ".git" / "xbrain" / "purge.log").exists()


def test_purge_refuses_text_inside_a_skill_revision(
    xb_proc: Run, store_dir: Path, tmp_path: Path
) -> None:
    work = tmp_path / "skill"
    shutil.copytree(EXAMPLES / "skills" / "deploy-check", work)
    (work / "scripts" / "check.sh").write_text(f"KEY={KEY}\n")
    assert xb_proc("skill", "save", str(work), "--allow-secret", "aws").code == 0
    head = git(store_dir, "rev-parse", "main")
    refused = xb_proc("purge", "--text", KEY, "--yes")
    assert refused.code == 4 and "deploy-check" in refused.stderr and KEY not in refused.stderr
    assert git(store_dir, "rev-parse", "main") == head
    put = xb_proc("put", "-", input=make("r"))
    head = git(store_dir, "rev-parse", "main")
    both = xb_proc("purge", put.json["results"][0]["id"], "--text", KEY, "--yes")
    assert both.code == 4 and git(store_dir, "rev-parse", "main") == head  # the record stays


def test_remotes_that_hold_purged_history_are_listed_replaced_and_never_merged_back(
    xb_proc: Run, store_dir: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "backup.git"
    assert xb_proc("put", "-", "--allow-secret", "aws", input=make("a", text=KEY)).code == 0
    assert xb_proc("remote", "add", "origin", str(bare)).code == 0
    assert xb_proc("remote", "push", "origin").code == 0
    other = tmp_path / "other"
    assert xb_proc("clone", str(bare), str(other), store=None).code == 0
    assert xb_proc("put", "-", input=make("b")).code == 0

    dry = xb_proc("purge", "--text", KEY)
    assert dry.code == 0, dry.stderr
    assert dry.json["remotesHolding"] == ["origin"]
    done = xb_proc("purge", "--text", KEY, "--yes")
    assert done.json["remotesHolding"] == ["origin"] and KEY.encode() not in all_objects(store_dir)
    # the remote still has it: pulling it back and a plain push are refused, and why
    pull = xb_proc("remote", "pull", "origin")
    assert pull.code == 5 and "--force-with-lease" in pull.stderr
    assert xb_proc("remote", "push", "origin").code == 5
    assert KEY.encode() not in all_objects(store_dir)
    pushed = xb_proc("remote", "push", "origin", "--force-with-lease")
    assert pushed.code == 0, pushed.stderr
    assert schema_errors("remote-push-output", pushed.json) == []
    assert xb_proc("remote", "push", "origin", "--force-with-lease").code == 4  # done already
    assert git(bare, "rev-parse", "main") == git(store_dir, "rev-parse", "main")
    # a device that still holds the old history is told to clone again
    stale = xb_proc("remote", "pull", "origin", store=other)
    assert stale.code == 5 and "Clone the store again" in stale.stderr
    assert KEY.encode() in all_objects(other)  # (nothing merged, nothing changed there)
    fresh = tmp_path / "fresh"
    assert xb_proc("clone", str(bare), str(fresh), store=None).code == 0
    assert KEY.encode() not in all_objects(fresh)
    assert xb_proc("doctor", store=fresh).json["ok"] is True


def _files_holding(root: Path, needle: bytes) -> list[str]:
    """Files under ``root`` (the working tree and .git, objects aside) that hold ``needle``."""
    return [
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and "objects" not in path.parts and needle in path.read_bytes()
    ]


def test_no_file_of_the_store_holds_the_string_after_a_purge(
    xb_proc: Run, store_dir: Path, secret_store: dict[str, str]
) -> None:
    # derived files quote the text too: the search index, the entry cache, the journal
    assert xb_proc("search", "staging").code == 0
    assert _files_holding(store_dir, KEY.encode())
    assert xb_proc("purge", "--text", KEY, "--yes").code == 0
    assert _files_holding(store_dir, KEY.encode()) == []
    assert xb_proc("search", "staging").code == 0


class Killed(BaseException):
    """Nothing catches it, like a SIGKILL."""


@pytest.mark.parametrize("stop", ["move_main", "prune"])
def test_a_purge_stopped_at_any_step_leaves_a_readable_store_and_a_rerun_finishes_it(
    xb: Run,
    store_dir: Path,
    secret_store: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    stop: str,
) -> None:
    from xbrain.git import GitStore
    from xbrain.git.rewrite import Rewriter

    head = git(store_dir, "rev-parse", "main")
    owner = GitStore if stop == "move_main" else Rewriter  # prune: purge's history view
    original = getattr(owner, stop)

    def crash(*args: object, **kwargs: object) -> None:
        raise Killed  # what a kill at this instant leaves

    monkeypatch.setattr(owner, stop, crash)
    with pytest.raises(Killed):
        xb("purge", "--text", KEY, "--yes")
    monkeypatch.setattr(owner, stop, original)
    fsck(store_dir)
    assert xb("doctor").json["ok"] is True
    moved = git(store_dir, "rev-parse", "main") != head
    assert moved is (stop == "prune")  # main moved only once the new history was stored
    assert xb("get", secret_store["one"]).code == 0
    assert xb("purge", "--text", KEY, "--yes").code == 0
    assert KEY.encode() not in all_objects(store_dir)
    fsck(store_dir)
    assert xb("doctor").json["ok"] is True


def test_purge_an_entry_by_id(xb_proc: Run, store_dir: Path, secret_store: dict[str, str]) -> None:
    listed = xb_proc("entry", "list").json
    entries = listed["entries"] if isinstance(listed, dict) else listed
    (entry,) = [e for e in entries if e.get("name") == "deploy notes"]
    others = {p: d for p, d in files(store_dir).items() if entry["id"] not in p}
    done = xb_proc("purge", entry["id"], "--yes")
    assert done.code == 0, done.stderr
    assert xb_proc("entry", "get", entry["id"]).code == 3
    assert b"deploy notes" not in all_objects(store_dir)
    assert files(store_dir) == others
    fsck(store_dir)
    assert xb_proc("doctor").json["ok"] is True


def _pack_counts(store: Path) -> list[tuple[int, int]]:
    """(objects the header counts, objects the index names) of every pack."""
    out = []
    for pack in sorted((store / ".git" / "objects" / "pack").glob("pack-*.pack")):
        index = pack.with_suffix(".idx").read_bytes()
        header = int.from_bytes(pack.read_bytes()[8:12], "big")
        out.append((header, int.from_bytes(index[8 + 255 * 4 : 8 + 256 * 4], "big")))
    return out


def test_a_purge_whose_rewrite_makes_the_same_shard_twice_packs_it_once(
    xb_proc: Run, store_dir: Path, json_file: Callable[[Any], str]
) -> None:
    # records beside the purged one in its catalog shard: every later commit's rewrite
    # makes that shard (and its directory) again, the same bytes; a pack that counted
    # them twice was one git refuses (the purge failed half-way: "Git object … is damaged")
    from xbrain.kinds.model import resource_id

    first = xb_proc("put", json_file([make("purged-0")])).json["results"][0]["id"]
    near = [
        n for n in (f"kept-{i}" for i in range(3000)) if resource_id("web", n)[9:11] == first[9:11]
    ]
    for name in [*near[:3], *(f"other-{i}" for i in range(10))]:
        assert xb_proc("put", json_file([make(name)])).code == 0
    done = xb_proc("purge", first, "--yes")
    assert done.code == 0, done.stderr
    counts = _pack_counts(store_dir)
    assert counts and all(header == indexed for header, indexed in counts), counts
    fsck(store_dir)
    assert xb_proc("doctor").json["ok"] is True
    assert xb_proc("list", "--limit", "50").json["total"] == 13
