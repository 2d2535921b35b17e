"""Hostile team repositories (issue 47): a team store is checked like any clone, and its
own files (proposals, the reviewers list) are held to their shapes before anything of it
is read."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Result

Run = Callable[..., Result]
KEY = "resource_" + "ab" * 32


def planted(xb: Run, tmp_path: Path, path: str, data: bytes) -> Path:
    """A team repository whose main holds ``path`` with ``data`` beside a valid store."""
    import time

    from dulwich.repo import Repo

    from xbrain.git import GitStore

    bare = tmp_path / "evil.git"
    Repo.init_bare(str(bare), mkdir=True, default_branch=b"main").close()
    maker = tmp_path / "maker"
    assert xb("put", str(EXAMPLES / "synthetic-resource.json"), store=maker).code == 0
    with GitStore(maker) as git:
        parent = git.head()
        git.commit(parent, {path: data}, "plant\n", "M <m@example.invalid>", int(time.time()))
    assert xb("remote", "add", "origin", str(bare), store=maker).code == 0
    assert xb("remote", "push", store=maker).code == 0
    return bare


@pytest.mark.parametrize(
    ("path", "data"),
    [
        (f"proposals/{KEY}.yaml", b"key: [1, 2]\n"),
        (f"proposals/{KEY}.yaml", b"key: " + KEY.encode() + b"\nkind: resource\n"),
        (
            f"proposals/{KEY}.yaml",
            b"key: rev_0123\nkind: skill\nid: x\nstate: accepted\nsharedBy: a\nsharedAt: b\n",
        ),
        ("proposals/not-a-key.yaml", b"{}\n"),
        (
            "xbrain.yaml",
            b"format: xbrain-store/1\nteam:\n  reviewers: Mallory <m@example.invalid>\n",
        ),
        ("xbrain.yaml", b"format: xbrain-store/1\nteam:\n  reviewers: ['no identity']\n"),
    ],
)
def test_a_team_repository_with_a_malformed_team_file_is_refused(
    xb: Run, xb_proc: Run, tmp_path: Path, path: str, data: bytes
) -> None:
    bare = planted(xb, tmp_path, path, data)
    result = xb_proc("team", "add", "eng", str(bare), store=None)
    assert result.code == 4, (result.code, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stdout == ""
    assert not (Path(os.environ["XDG_DATA_HOME"]) / "xbrain" / "teams").exists()


def test_a_linked_team_folder_is_never_read(xb_proc: Run, tmp_path: Path) -> None:
    """A link planted in the teams folder (to a store elsewhere) is no team layer."""
    elsewhere = tmp_path / "elsewhere"
    assert xb_proc("put", str(EXAMPLES / "synthetic-resource.json"), store=elsewhere).code == 0
    teams = Path(os.environ["XDG_DATA_HOME"]) / "xbrain" / "teams"
    teams.mkdir(parents=True)
    (teams / "eng").symlink_to(elsewhere)
    assert xb_proc("init").code == 0
    assert xb_proc("search", "accessible dialog").json["results"] == []
    assert xb_proc("team", "list", store=None).json == {"teams": []}
    assert xb_proc("team", "remove", "eng", store=None).code == 3
    assert (teams / "eng").is_symlink() and elsewhere.is_dir()
