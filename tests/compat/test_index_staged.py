"""What a user stages with git survives xbrain's writes whatever form git left the index
in: split on a base git wrote (``git update-index --split-index``, ``core.splitIndex``),
small or big, and with git's per-entry flags (skip-worktree, assume-unchanged)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.compat.test_index_order import git
from tests.conftest import Result, make
from xbrain.git import GitStore, splitindex
from xbrain.store import Store

pytestmark = [
    pytest.mark.compat,
    pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is not installed"),
]


def _ok(store_dir: Path, *args: str) -> str:
    done = git(store_dir, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _stage(store_dir: Path) -> None:
    """A file added and a store file's change staged, both by hand."""
    (store_dir / "new.txt").write_text("s\n")
    resource = sorted((store_dir / "resources").rglob("*.yaml"))[0]
    resource.write_text(resource.read_text() + "# a hand edit\n")
    _ok(store_dir, "add", "new.txt", str(resource.relative_to(store_dir)))


def _staged(store_dir: Path) -> list[str]:
    return sorted(_ok(store_dir, "status", "--short").splitlines())


def _bases_git_wrote(store_dir: Path) -> list[str]:
    ours = (store_dir / ".git" / "xbrain" / "index-shared").read_text().split()
    named = _ok(store_dir, "ls-files", "--debug").count("\n") > 0  # the index reads
    assert named
    link = (store_dir / ".git" / "index").read_bytes()
    at = link.rindex(b"link")
    sha = link[at + 8 : at + 28].hex()
    return [] if sha in ours else [sha]


@pytest.mark.parametrize("how", ["refresh", "resplit"])
def test_staged_changes_survive_a_write_on_a_base_git_wrote(
    store_dir: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setattr(splitindex, "SPLIT_MIN", 40)  # this store's index counts as big
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"batch-{i}") for i in range(60)])
    _ok(store_dir, "config", "core.splitIndex", "true")
    _stage(store_dir)
    if how == "refresh":  # every entry's stat data changes: git writes a base of its own
        for path in (store_dir / "resources").rglob("*.yaml"):
            path.touch()
        git(store_dir, "update-index", "--refresh")
    else:
        _ok(store_dir, "update-index", "--no-split-index")
        _ok(store_dir, "update-index", "--split-index")
    before = _staged(store_dir)
    assert "A  new.txt" in before and any(line.startswith("M  resources/") for line in before)
    assert _bases_git_wrote(store_dir)
    store.put([make("one")])
    assert _staged(store_dir) == before
    store.put([make(f"more-{i}") for i in range(20)])  # past a sixteenth: a new base
    assert _staged(store_dir) == before
    with GitStore(store_dir) as repo:
        assert "new.txt" in repo.index_paths()


def test_a_small_index_split_by_hand_keeps_what_is_staged(
    store_dir: Path, segment_cache: Path, xb_proc: Callable[..., Result]
) -> None:
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"small-{i}") for i in range(5)])
    _stage(store_dir)
    _ok(store_dir, "update-index", "--split-index")  # git's base, far below SPLIT_MIN
    before = _staged(store_dir)
    assert "A  new.txt" in before
    store.put([make("one")])
    assert _staged(store_dir) == before
    assert b"link" in (store_dir / ".git" / "index").read_bytes()
    index = (store_dir / ".git" / "index").read_bytes()
    checked = xb_proc("doctor")  # the index is read, not called unreadable
    assert "git_index" not in checked.stdout
    assert (store_dir / ".git" / "index").read_bytes() == index


@pytest.mark.parametrize("split", [True, False])
def test_git_s_entry_flags_are_kept(
    store_dir: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch, split: bool
) -> None:
    if split:
        monkeypatch.setattr(splitindex, "SPLIT_MIN", 40)  # kept split on xbrain's base
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"flag-{i}") for i in range(60 if split else 3)])
    first, second, third = sorted(_ok(store_dir, "ls-files", "resources").split())[:3]
    _ok(store_dir, "update-index", "--skip-worktree", first)
    _ok(store_dir, "update-index", "--assume-unchanged", second)
    assert (store_dir / ".git" / "index").read_bytes()[4:8] == b"\0\0\0\3"
    store.put([make("flag-new")])
    flags = dict(line.split(" ", 1)[::-1] for line in _ok(store_dir, "ls-files", "-v").splitlines())
    assert flags[first] == "S" and flags[second] == "h" and flags[third] == "H"
    assert (store_dir / ".git" / "index").read_bytes()[4:8] == b"\0\0\0\3"
    assert git(store_dir, "fsck", "--strict").returncode == 0
    assert (b"link" in (store_dir / ".git" / "index").read_bytes()) is split
    store.put([make(f"flag-more-{i}") for i in range(20 if split else 1)])  # a new base
    flags = dict(line.split(" ", 1)[::-1] for line in _ok(store_dir, "ls-files", "-v").splitlines())
    assert flags[first] == "S" and flags[second] == "h" and flags[third] == "H"


def _all_bases(store_dir: Path) -> set[str]:
    return {path.name.split(".")[1] for path in (store_dir / ".git").glob("sharedindex.*")}


def test_bases_no_index_names_are_removed_as_git_would(
    store_dir: Path,
    segment_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    xb: Callable[..., Result],
) -> None:
    monkeypatch.setattr(splitindex, "SPLIT_MIN", 40)
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"batch-{i}") for i in range(60)])
    (ours,) = _all_bases(store_dir)
    for i in range(3):  # rounds of git's own: a base each, xbrain's left behind
        (store_dir / f"hand-{i}.txt").write_text(f"{i}\n")
        _ok(store_dir, "add", f"hand-{i}.txt")
        _ok(store_dir, "update-index", "--no-split-index")
        _ok(store_dir, "update-index", "--split-index")
    _ok(store_dir, "update-index", "--index-version", "4")
    gits = _all_bases(store_dir) - {ours}
    assert len(gits) == 3
    held = sum(p.stat().st_size for p in (store_dir / ".git").glob("sharedindex.*"))
    index = (store_dir / ".git" / "index").read_bytes()
    at = index.rfind(b"link")  # (no path here holds the word)
    named = {index[at + 8 : at + 28].hex()} if at > 0 else set()
    in_use = sum((store_dir / ".git" / f"sharedindex.{n}").stat().st_size for n in named)
    report = xb("doctor").json["checked"]["indexBases"]
    assert report == {"unnamed": 4 - len(named), "unnamedBytes": held - in_use}
    old = sorted(gits - named)[0]
    weeks_ago = time.time() - 15 * 86400
    os.utime(store_dir / ".git" / f"sharedindex.{old}", (weeks_ago, weeks_ago))
    store.put([make("one")])
    assert _all_bases(store_dir) == gits - {old}  # xbrain's gone, git's expired one too
    assert xb("doctor").json["checked"]["indexBases"]["unnamed"] == len(gits) - 1
    _ok(store_dir, "config", "splitIndex.sharedIndexExpire", "never")
    for path in (store_dir / ".git").glob("sharedindex.*"):
        os.utime(path, (weeks_ago, weeks_ago))
    store.put([make("two")])
    assert _all_bases(store_dir) == gits - {old}
    _ok(store_dir, "config", "splitIndex.sharedIndexExpire", "now")
    store.put([make("three")])
    assert _all_bases(store_dir) == set()  # the index is whole again: none named
    assert xb("doctor").json["checked"]["indexBases"] == {"unnamed": 0, "unnamedBytes": 0}
    assert git(store_dir, "fsck", "--strict").returncode == 0


def test_a_lost_base_keeps_what_the_index_names_itself_and_doctor_says_what_is_lost(
    store_dir: Path, segment_cache: Path, xb_proc: Callable[..., Result]
) -> None:
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"lost-{i}") for i in range(5)])
    _ok(store_dir, "update-index", "--split-index")
    (store_dir / "new.txt").write_text("s\n")
    _ok(store_dir, "add", "new.txt")  # past the base: the split index names it itself
    for base in (store_dir / ".git").glob("sharedindex.*"):
        base.unlink()
    report = xb_proc("doctor")
    (problem,) = [p for p in report.json["problems"] if p["code"] == "git_index"]
    assert "staged" in problem["message"] and "lost" in problem["message"]
    store.put([make("one")])  # written afresh from main
    assert "A  new.txt" in _staged(store_dir)
    assert git(store_dir, "fsck", "--strict").returncode == 0


@pytest.mark.parametrize("big", [False, True])
def test_a_merge_s_conflict_stages_survive_a_write(
    store_dir: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch, big: bool
) -> None:
    """git holds a merge's unresolved conflict (stages 1, 2, 3 of a file) in the index:
    an xbrain write leaves the index to git until it is resolved (a split index kept
    only the last stage, and git then showed ``UA`` for ``UU``)."""
    if big:
        monkeypatch.setattr(splitindex, "SPLIT_MIN", 40)
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"batch-{i}") for i in range(60)])
    if big:
        _ok(store_dir, "config", "core.splitIndex", "true")
    who = ["-c", "user.name=t", "-c", "user.email=t@x.invalid"]
    (store_dir / "c.txt").write_text("base\n")
    _ok(store_dir, "add", "c.txt")
    _ok(store_dir, *who, "commit", "-q", "-m", "c")
    _ok(store_dir, "checkout", "-q", "-b", "side")
    (store_dir / "c.txt").write_text("side\n")
    _ok(store_dir, *who, "commit", "-q", "-am", "side")
    _ok(store_dir, "checkout", "-q", "main")
    (store_dir / "c.txt").write_text("main\n")
    _ok(store_dir, *who, "commit", "-q", "-am", "main")
    assert git(store_dir, *who, "merge", "side").returncode != 0  # the conflict
    before = _ok(store_dir, "ls-files", "--stage", "c.txt")
    assert len(before.splitlines()) == 3
    store.put([make("one-more")])
    assert _ok(store_dir, "ls-files", "--stage", "c.txt") == before
    assert "UU c.txt" in _ok(store_dir, "status", "--short")


@pytest.mark.parametrize("big", [False, True])
def test_a_git_add_between_the_read_and_the_lock_is_kept(
    store_dir: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch, big: bool
) -> None:
    """xbrain reads the index before it takes ``index.lock``: a ``git add`` that lands in
    between is read again, never undone by the write (git takes the lock first)."""
    from xbrain.git import index

    if big:
        monkeypatch.setattr(splitindex, "SPLIT_MIN", 40)
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"batch-{i}") for i in range(60)])
    (store_dir / "late.txt").write_text("added by git meanwhile\n")
    edit, calls = index._edit, []

    def racing(*args: object) -> bool:
        if not calls:  # the first read: git stages a file before xbrain locks
            _ok(store_dir, "add", "late.txt")
        calls.append(1)
        return edit(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "_edit", racing)
    store.put([make("one-more")])
    assert len(calls) == 2  # read again once
    assert _staged(store_dir) == ["A  late.txt"]  # and the write's own files in step
