"""Where a push lands (issue 47, the fresh-clone trial): a team's repository that is
missing or an empty folder (a share not mounted) is a failed push, never a new team; a
repository made for several Unix accounts (``git init --bare --shared=group``) gets
what xbrain pushed with the modes git would give it; a refused team push names the
team, and with sync.auto on the automatic push sends it."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.test_team_share import Member, joined, tree
from tests.cli.test_team_sync import FAST, bare_main, eventually
from tests.conftest import EXAMPLES, Result, head, make

Run = Callable[..., Result]
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


def two_members(xb_proc: Run, tmp_path: Path) -> tuple[Path, Member, Member, dict[str, str]]:
    bare, _url, ann, rita, ids = joined(xb_proc, tmp_path)
    return bare, ann, rita, ids


def clone_of(member: Member) -> Path:
    return Path(member.env["XDG_DATA_HOME"]) / "xbrain" / "teams" / "eng"


def unpushed(result: Result) -> None:
    """Exit 8, ``pushed: false`` with the note, one line on stderr."""
    assert result.code == 8, result.stderr
    assert result.json["pushed"] is False and "team sync eng" in result.json["note"]
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Could not push to team")


def test_a_share_to_a_missing_team_repository_fails_and_creates_nothing(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, ann, _rita, ids = two_members(xb_proc, tmp_path)
    away = tmp_path / "away.git"
    bare.rename(away)  # the team's path is gone (a share not mounted, a moved folder)
    shared = ann("share", ids["resource"], "--team", "eng")
    unpushed(shared)
    assert "missing or empty" in shared.stderr and "git init --bare" in shared.stderr
    assert not os.path.lexists(bare)  # no new repository: the team was not forked
    synced = ann("team", "sync", "eng", store=False)
    assert synced.code == 8 and not os.path.lexists(bare)
    away.rename(bare)
    ann.ok("team", "sync", "eng", store=False)  # kept in the clone: sent now
    assert ids["resource"] in " ".join(tree(bare))


def test_an_empty_mount_point_is_not_started_as_a_team_repository(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, ann, rita, ids = two_members(xb_proc, tmp_path)
    ann.ok("share", ids["resource"], "--team", "eng")
    rita.ok("team", "pull", "eng", store=False)
    away = tmp_path / "away.git"
    bare.rename(away)
    bare.mkdir()  # the empty folder an unmounted share leaves
    decided = rita("team", "review", "eng", "accept", ids["resource"])
    unpushed(decided)
    assert decided.json["decided"]["state"] == "accepted"  # kept for the next sync
    assert list(bare.iterdir()) == []
    shared = ann("share", ids["entry"], "--team", "eng")
    unpushed(shared)
    assert list(bare.iterdir()) == []
    bare.rmdir()
    away.rename(bare)
    rita.ok("team", "sync", "eng", store=False)
    assert bare_main(bare) == head(clone_of(rita))


def test_a_personal_backup_to_a_new_path_still_starts_a_bare_repository(
    xb_proc: Run, store_dir: Path, tmp_path: Path
) -> None:
    backup = tmp_path / "backup.git"
    assert xb_proc("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    assert xb_proc("remote", "add", "origin", str(backup)).code == 0
    pushed = xb_proc("remote", "push")
    assert pushed.code == 0, pushed.stderr
    assert bare_main(backup) == head(store_dir)


@pytest.mark.parametrize(
    ("shared", "ref_mode", "pack_mode"),
    [
        ("group", 0o660, 0o440),
        ("all", 0o664, 0o444),
        ("0640", 0o640, 0o440),
        (None, 0o600, 0o400),  # a plain git init --bare: as private as the store
    ],
)
def test_a_push_into_a_shared_repository_honours_its_shared_setting(
    xb_proc: Run,
    store_dir: Path,
    tmp_path: Path,
    shared: str | None,
    ref_mode: int,
    pack_mode: int,
) -> None:
    bare = tmp_path / "shared.git"
    option = [] if shared is None else [f"--shared={shared}"]
    subprocess.run(["git", "init", "-q", "--bare", *option, str(bare)], check=True)
    assert xb_proc("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    assert xb_proc("remote", "add", "origin", str(bare)).code == 0
    pushed = xb_proc("remote", "push")
    assert pushed.code == 0, pushed.stderr

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.lstat().st_mode)

    assert mode(bare / "refs" / "heads" / "main") == ref_mode
    assert mode(bare / "HEAD") == ref_mode  # pointed at main by the push
    packs = list((bare / "objects" / "pack").iterdir())
    assert packs and all(mode(p) == pack_mode for p in packs), [oct(mode(p)) for p in packs]
    if shared in ("group", "all"):  # directories keep what git gave them, group-writable
        for directory in (bare / "objects" / "pack", bare / "refs" / "heads"):
            assert mode(directory) & 0o2070 == 0o2070, oct(mode(directory))
    git = ["git", "--git-dir", str(bare)]
    subprocess.run([*git, "fsck", "--no-progress"], check=True, capture_output=True)
    logged = subprocess.run([*git, "log", "--format=%H", "-1", "main"], capture_output=True)
    assert logged.stdout.decode().strip() == head(store_dir)
    own = [p for p in (store_dir / ".git").rglob("*") if not p.is_symlink()]
    assert [str(p) for p in own if mode(p) & 0o077] == []  # the store stays private


def test_a_refused_team_push_names_the_team_and_its_merge_too(xb_proc: Run, tmp_path: Path) -> None:
    bare, ann, rita, ids = two_members(xb_proc, tmp_path)
    lock = bare / "refs" / "heads" / "main.lock"
    lock.write_text("")  # another push holds the team's main
    shared = ann("share", ids["resource"], "--team", "eng")
    unpushed(shared)
    error = shared.json["error"]  # the refusal itself, not the note after it
    assert "locked" in error and error.endswith("retry xbrain team sync eng."), error
    assert "origin" not in shared.stderr
    lock.unlink()
    (tmp_path / "rita.json").write_text(json.dumps(make("rita-one", title="Rita's own note")))
    mine = rita.ok("put", str(tmp_path / "rita.json"))["results"][0]["id"]
    rita.ok("share", mine, "--team", "eng")  # the team moved on meanwhile
    ann.ok("team", "sync", "eng", store=False)  # Ann's share and Rita's: a merge
    subjects = subprocess.run(
        ["git", "--git-dir", str(bare), "log", "--format=%s", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    merges = [s for s in subjects if "pull" in s]
    assert merges and all(s.startswith("team pull eng: ") for s in merges), subjects


def test_a_refused_share_with_sync_auto_on_is_pushed_by_the_automatic_push(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, ann, _rita, ids = two_members(xb_proc, tmp_path)
    ann.env.update(FAST)
    ann.ok("config", "sync.auto", "on")
    lock = bare / "refs" / "heads" / "main.lock"
    lock.write_text("")  # another push holds the team's main
    shared = ann("share", ids["resource"], "--team", "eng")
    unpushed(shared)
    assert "automatic push retries it" in shared.json["note"]
    lock.unlink()  # the retried background push sends it
    eventually(lambda: bare_main(bare) == head(clone_of(ann)), "the share pushed")
    assert ids["resource"] in " ".join(tree(bare))
