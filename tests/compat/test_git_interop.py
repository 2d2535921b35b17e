"""The real git binary agrees with what xbrain writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, make, sample
from xbrain.kinds.model import resource_id

pytestmark = [
    pytest.mark.compat,
    pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is not installed"),
]
Run = Callable[..., Result]
ID = "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56"


def git(store: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(store), *args], capture_output=True, text=True, check=True
    ).stdout


def build_history(xb: Run, json_file: Callable[[Any], str]) -> None:
    """A store with edits, a design analysis, a packed batch and a deletion."""
    xb("put", str(EXAMPLES / "batch.json"))
    xb("put", json_file(sample(text="First line.\nSecond line.\nThird line.")))
    edited = sample(
        text="First line.\nSecond line, edited.\nThird line.", updatedAt="2026-10-08T00:00:00Z"
    )
    xb("put", json_file(edited))
    xb("put", json_file([make(f"bulk-{i}") for i in range(80)]))  # a pack, not loose objects
    analysis = json.loads((EXAMPLES / "analysis.json").read_text())
    analysis["resourceRevision"] = xb("inspect", ID).json["resourceRevision"]
    assert xb("analyze", json_file(analysis)).code == 0
    assert xb("delete", resource_id("web", "bulk-1")).json["deleted"] is True


def test_fsck_status_and_log(xb: Run, json_file: Callable[[Any], str], store_dir: Path) -> None:
    build_history(xb, json_file)
    subprocess.run(
        ["git", "-C", str(store_dir), "fsck", "--strict", "--no-progress"],
        check=True,
        capture_output=True,
    )
    assert git(store_dir, "status", "--porcelain", "--untracked-files=all") == ""
    patch = git(store_dir, "log", "-p", "--", f"resources/e6/{ID}.yaml")
    assert "-  Second line.\n+  Second line, edited.\n" in patch
    subjects = git(store_dir, "log", "--format=%s").splitlines()
    assert subjects[-1] == "init: create xbrain store"
    assert any(s.startswith("delete: delete resource_") for s in subjects)
    trailers = git(store_dir, "log", "-1", "--format=%(trailers:key=Xbrain-Command,valueonly)")
    assert trailers.strip() == "delete"


def test_status_clean_after_every_command(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    steps = [
        lambda: xb("put", json_file(sample())),
        lambda: xb("put", json_file(sample())),
        lambda: xb("put", json_file(sample(title="t2", updatedAt="2026-10-09T00:00:00Z"))),
        lambda: xb("delete", ID),
        lambda: xb("put", json_file(sample(updatedAt="2030-01-01T00:00:00Z"))),
        lambda: xb("put", json_file([make(f"m{i}") for i in range(70)])),
    ]
    for step in steps:
        assert step().code == 0
        assert git(store_dir, "status", "--porcelain", "--untracked-files=all") == ""


def test_git_clone_gives_same_files(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path, tmp_path: Path
) -> None:
    build_history(xb, json_file)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(store_dir), str(clone)], check=True)
    for path in store_dir.rglob("*"):
        if ".git" in path.relative_to(store_dir).parts or not path.is_file():
            continue
        assert (clone / path.relative_to(store_dir)).read_bytes() == path.read_bytes()
    # and the clone is itself a readable store
    assert xb("status", store=clone).json["resources"] == xb("status").json["resources"]


def test_index_written_by_git_then_xbrain(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb("put", json_file([make(f"i{i}") for i in range(30)]))
    # git adds its own cache-tree extension; xbrain must keep the index valid around it
    subprocess.run(["git", "-C", str(store_dir), "read-tree", "HEAD"], check=True)
    subprocess.run(["git", "-C", str(store_dir), "update-index", "--refresh", "-q"], check=False)
    xb("put", json_file(make("after-git")))
    assert git(store_dir, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(store_dir, "ls-files") == git(store_dir, "ls-tree", "-r", "--name-only", "HEAD")
    # version 4 (path compression) is left to dulwich's slower, complete writer
    subprocess.run(
        ["git", "-C", str(store_dir), "update-index", "--index-version", "4"], check=True
    )
    xb("put", json_file(make("after-v4")))
    assert git(store_dir, "status", "--porcelain", "--untracked-files=all") == ""
    xb("delete", resource_id("web", "i3"))
    assert git(store_dir, "status", "--porcelain", "--untracked-files=all") == ""
    subprocess.run(
        ["git", "-C", str(store_dir), "fsck", "--strict", "--no-progress"],
        check=True,
        capture_output=True,
    )


def test_git_gc_packs_a_store_that_xbrain_keeps_using(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """`git gc` (what README offers for loose objects): packs and packed refs stay
    private, and reads, writes, doctor and fsck work on after it."""
    build_history(xb, json_file)
    xb("skill", "save", str(EXAMPLES / "skills" / "deploy-check"))
    before = xb("search", "dialog accessibility").json["results"]
    subprocess.run(["git", "-C", str(store_dir), "gc", "-q"], check=True, capture_output=True)
    objects = store_dir / ".git" / "objects"
    assert not [p for p in objects.iterdir() if len(p.name) == 2]  # nothing loose is left
    assert (store_dir / ".git" / "packed-refs").is_file()
    assert xb("search", "dialog accessibility").json["results"] == before
    assert xb("put", json_file(make("after-gc"))).json["added"] == 1
    assert xb("delete", resource_id("web", "bulk-2")).json["deleted"] is True
    assert xb("skill", "recall", "--slug", "deploy-check").code == 0
    doctor = xb("doctor").json
    assert doctor["ok"], doctor["problems"]
    subprocess.run(
        ["git", "-C", str(store_dir), "fsck", "--strict", "--no-progress"],
        check=True,
        capture_output=True,
    )
    assert git(store_dir, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_plain_git_checkout_elsewhere_is_named_not_called_a_hand_edit(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """``git checkout main~1`` to look at an old state puts old files in the working tree.
    A write that would replace them is refused with the way back (git checkout main),
    not mistaken for a hand edit; doctor names the checkout."""
    xb("put", json_file(sample(text="First body.")))
    newer = sample(text="Second body.", updatedAt="2026-11-01T00:00:00.000Z")
    assert xb("put", json_file(newer)).code == 0
    git(store_dir, "checkout", "-q", "--detach", "main~1")
    before = git(store_dir, "rev-parse", "main")
    newest = sample(text="Third body.", updatedAt="2026-12-01T00:00:00.000Z")
    refused = xb("put", json_file(newest))
    assert refused.code == 5 and refused.stderr.count("\n") == 1
    assert "checked out at commit" in refused.stderr and "git checkout main" in refused.stderr
    assert git(store_dir, "rev-parse", "main") == before
    assert "First body." in (store_dir / "resources" / "e6" / f"{ID}.yaml").read_text()
    report = xb("doctor").json
    assert "checked_out" in {p["code"] for p in report["problems"]}
    adopted = xb("adopt")  # the old files are not edits: adopting them reverted main
    assert adopted.code == 5 and "checked out at commit" in adopted.stderr
    assert git(store_dir, "rev-parse", "main") == before
    git(store_dir, "checkout", "-q", "main")
    assert xb("put", json_file(newest)).json["results"][0]["status"] == "updated"
    assert git(store_dir, "status", "--porcelain") == ""
    git(store_dir, "checkout", "-q", "-b", "experiment")  # same files: writes go on
    assert xb("delete", ID).json["deleted"] is True
    problems = xb("doctor").json["problems"]
    assert [p["message"] for p in problems if p["code"] == "checked_out"] == [
        "HEAD is at branch experiment, not main; xbrain reads and writes main: run "
        "git checkout main."
    ]


def test_git_checkouts_under_a_global_autocrlf_keep_records_as_stored(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path, tmp_path: Path
) -> None:
    """A user whose global git config says ``core.autocrlf true`` restores a deleted
    record with ``git checkout -- .``: git wrote it with CRLF, and every later write to
    it was refused as a hand edit. The store's own config now keeps files as stored."""
    xb("put", json_file(sample()))
    assert git(store_dir, "config", "--get", "core.autocrlf").strip() == "false"
    crlf = tmp_path / "global-gitconfig"
    crlf.write_text("[core]\n\tautocrlf = true\n")
    path = store_dir / "resources" / "e6" / f"{ID}.yaml"
    committed = path.read_bytes()
    path.unlink()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(crlf)}
    subprocess.run(["git", "-C", str(store_dir), "checkout", "--", "."], check=True, env=env)
    assert path.read_bytes() == committed
    newer = sample(text="A newer body.", updatedAt="2027-01-01T00:00:00.000Z")
    assert xb("put", json_file(newer)).json["results"][0]["status"] == "updated"
    # a store made before, or cloned by plain git, has no such setting: git's CRLF copy
    # is what git status calls clean, and no hand edit either
    git(store_dir, "config", "--unset", "core.autocrlf")
    path.unlink()
    subprocess.run(["git", "-C", str(store_dir), "checkout", "--", "."], check=True, env=env)
    now = git(store_dir, "show", f"main:resources/e6/{ID}.yaml").encode()
    assert path.read_bytes() == now.replace(b"\n", b"\r\n") != now
    assert xb("delete", ID).json["deleted"] is True
    status = ["git", "-C", str(store_dir), "status", "--porcelain"]
    assert subprocess.run(status, env=env, capture_output=True, check=True).stdout == b""
    repaired = xb("doctor", "--repair").json["repaired"]
    assert "git_config" in [r["code"] for r in repaired]
    assert git(store_dir, "config", "--get", "core.autocrlf").strip() == "false"


def test_a_split_index_on_a_lost_base_is_written_afresh_not_a_crash(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """With ``core.splitIndex`` (or ``git update-index --split-index``) git writes an index
    dulwich does not read: a put committed, then failed with an internal error and left
    every later write failing the same way; doctor crashed. xbrain's editor reads it now
    (``test_index_staged``) unless its base is lost, as here."""
    xb("put", str(EXAMPLES / "batch.json"))
    xb("put", json_file(sample()))
    other = next((store_dir / "resources" / "86").glob("*.yaml"))
    other.write_text(other.read_text().replace("title:", "title: Edited", 1))  # a hand edit
    git(store_dir, "update-index", "--split-index")
    _lose_the_base(store_dir)
    report = xb("doctor")
    assert report.code == 7 and "git_index" in {p["code"] for p in report.json["problems"]}
    newer = sample(text="A newer body.", updatedAt="2027-01-01T00:00:00.000Z")
    assert xb("put", json_file(newer)).json["results"][0]["status"] == "updated"
    assert git(store_dir, "status", "--porcelain") == f" M {other.relative_to(store_dir)}\n"
    subprocess.run(["git", "-C", str(store_dir), "fsck", "--strict"], check=True)
    other.write_text(git(store_dir, "show", f"main:{other.relative_to(store_dir)}"))
    git(store_dir, "update-index", "--split-index")
    _lose_the_base(store_dir)
    repaired = xb("doctor", "--repair").json["repaired"]
    assert "git_index" in {r["code"] for r in repaired}
    assert xb("doctor").json["ok"] is True
    assert git(store_dir, "status", "--porcelain") == ""


def _lose_the_base(store_dir: Path) -> None:
    for base in (store_dir / ".git").glob("sharedindex.*"):
        base.unlink()


# ``xbrain put`` in a new process whose write lets the real git binary commit on main
# between xbrain's snapshot (the commit is built on it) and its compare-and-swap of main.
_RACING_PUT = """
import subprocess, sys
from xbrain.git import writing

store, built = sys.argv[1], writing.Writer.write_commit

def racing(self, *args, **kwargs):
    made = built(self, *args, **kwargs)
    subprocess.run(
        ["git", "-C", store, "-c", "user.name=Other", "-c", "user.email=o@example.invalid",
         "commit", "-q", "--allow-empty", "-m", "made by git meanwhile"],
        check=True,
        umask=0o077,  # as a user's private store would have it (doctor checks modes)
    )
    return made

writing.Writer.write_commit = racing
sys.argv = ["xbrain", *sys.argv[2:], "--store", store]
from xbrain.cli import main
main()
"""


def test_a_git_commit_made_during_a_write_is_kept_and_the_write_is_a_conflict(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    assert xb("put", json_file(sample())).code == 0
    before = git(store_dir, "rev-parse", "main").strip()
    racing = subprocess.run(
        [sys.executable, "-c", _RACING_PUT, str(store_dir), "put", json_file(make("late"))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert racing.returncode == 5, (racing.stdout, racing.stderr)
    assert "The store changed during this write" in racing.stderr
    # main is git's commit, on top of the head xbrain started from: nothing was lost
    assert git(store_dir, "log", "-1", "--format=%s", "main").strip() == "made by git meanwhile"
    assert git(store_dir, "rev-parse", "main~1").strip() == before
    assert xb("get", resource_id("web", "late")).code == 3  # the refused put wrote nothing
    assert git(store_dir, "status", "--porcelain", "--untracked-files=all") == ""
    assert xb("doctor").json["problems"] == []
    # and the same put, run again, goes on top of git's commit
    again = xb("put", json_file(make("late")))
    assert again.code == 0, again.stderr
    assert git(store_dir, "log", "-1", "--format=%s", "main~1").strip() == "made by git meanwhile"
    assert xb("get", resource_id("web", "late")).code == 0


def test_a_folder_a_write_empties_leaves_no_empty_tree_behind(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """git itself never records an empty tree: the tree git would write from the index
    (the one a plain ``git commit`` would make) is the tree of main, after a delete too."""
    assert xb("put", json_file(sample())).code == 0
    assert xb("delete", ID).json["deleted"] is True  # resources/e6/ is now empty
    assert git(store_dir, "ls-tree", "-r", "-t", "--name-only", "main", "resources") == ""
    assert (
        git(store_dir, "write-tree").strip() == git(store_dir, "rev-parse", "main^{tree}").strip()
    )
