"""Team memory (issue 47): team stores added from a git URL, listed, pulled, removed."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Result, make

Run = Callable[..., Result]


def team_repo(xb: Run, tmp_path: Path, name: str = "team.git") -> tuple[Path, Path]:
    """A team's bare repository holding one resource, and the store that made it."""
    from dulwich.repo import Repo

    bare = tmp_path / name
    Repo.init_bare(str(bare), mkdir=True, default_branch=b"main").close()
    maker = tmp_path / f"{name}-maker"
    assert xb("put", str(EXAMPLES / "synthetic-resource.json"), store=maker).code == 0
    assert xb("remote", "add", "origin", str(bare), store=maker).code == 0
    assert xb("remote", "push", store=maker).code == 0
    return bare, maker


def teams_root() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "xbrain" / "teams"


def test_team_add_list_pull_remove(xb_proc: Run, xb: Run, tmp_path: Path) -> None:
    bare, maker = team_repo(xb, tmp_path)
    added = xb_proc("team", "add", "eng", str(bare))
    assert added.code == 0, added.stderr
    team = added.json["team"]
    assert team["name"] == "eng" and team["layer"] == "team:eng"
    assert team["url"] == str(bare) and team["commit"] is not None
    folder = teams_root() / "eng"
    assert (folder / ".git").is_dir()
    assert stat.S_IMODE(teams_root().stat().st_mode) == 0o700
    assert [t["name"] for t in xb_proc("team", "list").json["teams"]] == ["eng"]

    new = tmp_path / "new.json"
    new.write_text(json.dumps(make("later-one")))
    assert xb("put", str(new), store=maker).code == 0
    assert xb("remote", "push", store=maker).code == 0
    pulled = xb_proc("team", "pull", "eng")
    assert pulled.code == 0, pulled.stderr
    assert pulled.json["team"] == "eng" and pulled.json["state"] == "fast_forward"
    every = xb_proc("team", "pull")
    assert every.code == 0 and every.json["pulled"][0]["state"] == "up_to_date"

    again = xb_proc("team", "add", "eng", str(bare))
    assert again.code == 5 and "exists" in again.stderr

    removed = xb_proc("team", "remove", "eng")
    assert removed.code == 0 and removed.json == {"removed": "eng", "teams": []}
    assert not folder.exists() and os.listdir(teams_root()) == []
    assert bare.is_dir()  # the team repository is untouched
    assert xb_proc("team", "remove", "eng").code == 3
    assert xb_proc("team", "pull", "eng").code == 3


@pytest.mark.parametrize("name", ["Eng", "", "x.y", "a/b", "..", ".eng", "x" * 41, "é"])
def test_a_bad_team_name_is_refused_and_nothing_is_made(
    xb_proc: Run, tmp_path: Path, name: str
) -> None:
    result = xb_proc("team", "add", name, str(tmp_path / "whatever.git"))
    assert result.code == 4, result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""
    assert not teams_root().exists()


def test_an_unreachable_team_url_exits_8_and_leaves_nothing(xb_proc: Run, tmp_path: Path) -> None:
    for url in (str(tmp_path / "missing.git"), "git://127.0.0.1:9/team.git"):
        result = xb_proc("team", "add", "eng", url)
        assert result.code == 8, result.stderr
        assert result.stderr.count("\n") == 1 and result.stdout == ""
        assert not teams_root().exists()


def test_an_unreachable_team_on_pull_is_reported_and_remembered(
    xb_proc: Run, xb: Run, tmp_path: Path
) -> None:
    bare, _ = team_repo(xb, tmp_path)
    assert xb_proc("team", "add", "eng", str(bare)).code == 0
    bare.rename(tmp_path / "gone.git")
    one = xb_proc("team", "pull", "eng")
    assert one.code == 8 and one.stdout == ""
    # named as the team, and said missing: never sent to git fsck for a path not there
    assert "team eng" in one.stderr and "no repository at" in one.stderr, one.stderr
    assert "damaged" not in one.stderr and "origin" not in one.stderr
    bare.mkdir()  # an empty folder where a share was mounted
    assert "no repository at" in xb_proc("team", "pull", "eng").stderr
    bare.rmdir()
    every = xb_proc("team", "pull")
    assert every.code == 8 and every.json["failed"][0]["team"] == "eng"
    listed = xb_proc("team", "list").json["teams"][0]
    assert listed["lastError"] and listed["lastSync"]


def test_a_hostile_team_repository_is_refused_like_a_clone(xb_proc: Run, tmp_path: Path) -> None:
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo

    bare = tmp_path / "evil.git"
    repo = Repo.init_bare(str(bare), mkdir=True, default_branch=b"main")
    blob = Blob.from_string(b"not a store\n")
    tree = Tree()
    tree.add(b"..evil", 0o100644, blob.id)
    commit = Commit()
    commit.tree = tree.id
    commit.author = commit.committer = b"M <m@example.invalid>"
    commit.author_time = commit.commit_time = 0
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = b"evil\n"
    for obj in (blob, tree, commit):
        repo.object_store.add_object(obj)
    repo.refs[b"refs/heads/main"] = commit.id
    repo.close()
    result = xb_proc("team", "add", "eng", str(bare))
    assert result.code == 4, result.stderr
    assert not teams_root().exists()


def test_a_backup_path_that_is_gone_is_said_missing_on_pull(xb_proc: Run, tmp_path: Path) -> None:
    assert xb_proc("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    gone = tmp_path / "backup.git"
    assert xb_proc("remote", "add", "origin", str(gone)).code == 0
    pulled = xb_proc("remote", "pull")
    assert pulled.code == 8 and pulled.stderr.count("\n") == 1, pulled.stderr
    assert "origin" in pulled.stderr and "no repository at" in pulled.stderr
    assert "damaged" not in pulled.stderr
