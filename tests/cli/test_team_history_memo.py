"""The team history audit is incremental (issue 47): a new team head reads only the
commits no earlier audit read (``.git/xbrain/team-history.json``, by commit id), with
the same answer as a full audit; a rewritten history (other commit ids) is audited
afresh, never from what the memo held of the old one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, head, make
from xbrain.core import CommitId, Core
from xbrain.team import hidden, history

Run = Callable[..., Result]
RITA = ("Rita", "rita@example.org")
BOB = ("Bob", "bob@example.org")
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


def who(xb: Run, store: Path, person: tuple[str, str]) -> None:
    assert xb("config", "identity.name", person[0], store=store).code == 0
    assert xb("config", "identity.email", person[1], store=store).code == 0


def put(xb: Run, store: Path, tmp_path: Path, name: str) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(make(name, title=f"Team note {name}")))
    ran = xb("put", str(path), store=store)
    assert ran.code == 0, ran.stderr
    return str(ran.json["results"][0]["id"])


def team_history(xb: Run, tmp_path: Path, commits: int) -> tuple[Path, Path]:
    """A maker store whose team names Rita its reviewer, with ``commits`` puts by Rita
    and Bob in turn, pushed to a bare repository."""
    from dulwich.repo import Repo

    bare = tmp_path / "team.git"
    Repo.init_bare(str(bare), mkdir=True, default_branch=b"main").close()
    maker = tmp_path / "maker"
    who(xb, maker, RITA)
    assert xb("config", "team.reviewers", "Rita <rita@example.org>", store=maker).code == 0
    for n in range(commits):
        who(xb, maker, RITA if n % 2 == 0 else BOB)
        put(xb, maker, tmp_path, f"note-{n}")
    assert xb("remote", "add", "origin", str(bare), store=maker).code == 0
    assert xb("remote", "push", store=maker).code == 0
    return maker, bare


def fresh(store: Path, commit: str) -> history.Audit:
    with Core(store).reading() as view:
        found = hidden.proposals(view) if view is not None else []
    with Core(store).git() as git:
        return history.audit(git, CommitId(commit), found)


def test_a_pull_audits_only_the_new_commits_with_the_full_audits_answer(
    xb: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    maker, bare = team_history(xb, tmp_path, 12)
    assert xb("team", "add", "eng", str(bare), store=None).code == 0
    clone = Path(os.environ["XDG_DATA_HOME"]) / "xbrain" / "teams" / "eng"
    assert (clone / ".git" / "xbrain" / "team-history.json").is_file()
    who(xb, maker, BOB)
    late = put(xb, maker, tmp_path, "late")
    assert xb("remote", "push", store=maker).code == 0

    read: list[Any] = []
    listed = history.listed_reviewers
    monkeypatch.setattr(history, "listed_reviewers", lambda view: read.append(1) or listed(view))
    pulled = xb("team", "pull", "eng", store=None)
    assert pulled.code == 0, pulled.stderr
    assert head(clone) == head(maker)
    assert len(read) == 1  # the one new commit (a full audit reads every one)

    kept = json.loads((clone / ".git" / "xbrain" / "team-layer.json").read_text())
    full = fresh(clone, str(head(clone)))
    assert kept["hidden"] == sorted(full.hidden) and late in kept["hidden"]  # Bob's
    assert (kept["provenance"], kept["reviewers"]) == (full.provenance, full.reviewers)
    assert kept["untrusted"] == full.untrusted


@needs_git
def test_a_rewritten_history_is_audited_afresh(xb: Run, tmp_path: Path) -> None:
    maker, _ = team_history(xb, tmp_path, 4)  # the last put is Bob's
    top = str(head(maker))
    with Core(maker).reading() as view:
        found = hidden.proposals(view) if view is not None else []
    memo = history.Memo()
    with Core(maker).git() as git:
        before = history.audit(git, CommitId(top), found, memo)
    assert before.untrusted  # Bob's put
    # the same change, committed again by Rita: other commit id, same tree
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": RITA[0],
        "GIT_AUTHOR_EMAIL": RITA[1],
        "GIT_COMMITTER_NAME": RITA[0],
        "GIT_COMMITTER_EMAIL": RITA[1],
    }
    rewritten = subprocess.run(
        ["git", "-C", str(maker), "commit-tree", f"{top}^{{tree}}", "-p", f"{top}^", "-m", "x"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.strip()
    saved = history.Memo(json.loads(json.dumps(memo.dump())))  # as it is kept on disk
    with Core(maker).git() as git:
        after = history.audit(git, CommitId(rewritten), found, saved)
    assert after == fresh(maker, rewritten)
    mine = {u["key"] for u in before.untrusted if u["commit"] == top}  # Bob's last put
    assert len(mine) == 1 and mine.isdisjoint(u["key"] for u in after.untrusted)
    assert {u["key"] for u in after.untrusted} == {u["key"] for u in before.untrusted} - mine
    assert set(saved.commits) == set(memo.commits) - {top} | {rewritten}
    with Core(maker).git() as git:  # and back: the memo never answers for the wrong id
        assert history.audit(git, CommitId(top), found, saved) == before


def test_a_damaged_memo_is_ignored(xb: Run, tmp_path: Path) -> None:
    maker, _ = team_history(xb, tmp_path, 3)
    top = str(head(maker))
    for value in (None, [], {"version": 1, "commits": {top: ["x"]}}, {"version": 2}):
        memo = history.Memo(value)
        assert memo.commits == {} and memo.head is None
        with Core(maker).reading() as view:
            found = hidden.proposals(view) if view is not None else []
        with Core(maker).git() as git:
            assert history.audit(git, CommitId(top), found, memo) == fresh(maker, top)
