"""Sharing with a team and reviewing (issue 47): two members, one team repository."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, make
from xbrain.kinds.entry import entry_id

Run = Callable[..., Result]
MEMORY = entry_id("global", "project-notes#Build tips")
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


class Member:
    """One person: their own store and data folder (so their own team clones)."""

    def __init__(self, xb_proc: Run, home: Path, name: str) -> None:
        self.run_cli = xb_proc
        self.store = home / "store"
        self.env = {
            "XDG_DATA_HOME": str(home / "data"),
            "HOME": str(home),
            "XBRAIN_STORE": str(self.store),
        }
        self.identity = f"{name.title()} <{name}@example.org>"
        assert self("config", "identity.name", name.title()).code == 0
        assert self("config", "identity.email", f"{name}@example.org").code == 0

    def __call__(self, *args: str, input: Any = None, store: bool = True) -> Result:
        return self.run_cli(*args, input=input, store=self.store if store else None, env=self.env)

    def ok(self, *args: str, input: Any = None, store: bool = True) -> Any:
        result = self(*args, input=input, store=store)
        assert result.code == 0, (args, result.stderr)
        return result.json


def team_remote(xb_proc: Run, tmp_path: Path, url: str | None = None) -> tuple[Path, str]:
    """A bare team repository whose store names Rita as its reviewer; its URL."""
    from dulwich.repo import Repo

    bare = tmp_path / "team.git"
    Repo.init_bare(str(bare), mkdir=True, default_branch=b"main").close()
    maker = tmp_path / "maker"
    for args in (  # the record is the team's before it names reviewers: trusted
        ("put", str(EXAMPLES / "synthetic-resource.json")),
        ("config", "team.reviewers", "Rita <rita@example.org>"),
        ("remote", "add", "origin", str(bare)),
        ("remote", "push"),
    ):
        assert xb_proc(*args, store=maker).code == 0, args
    return bare, url or str(bare)


def tree(bare: Path) -> list[str]:
    """Every path of the team repository's main, as real git lists it."""
    out = subprocess.run(
        ["git", "--git-dir", str(bare), "ls-tree", "-r", "--name-only", "main"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def records(paths: list[str], top: str) -> set[str]:
    return {p.rsplit("/", 1)[-1].removesuffix(".yaml") for p in paths if p.startswith(top + "/")}


def stock(member: Member, tmp_path: Path) -> dict[str, str]:
    """Private writes: resources, entries and a skill; the ids to share and to keep."""
    batch = [make(f"private-{n}", title=f"Private note {n} about deploys") for n in range(3)]
    (tmp_path / "batch.json").write_text(json.dumps(batch))
    put = member.ok("put", str(tmp_path / "batch.json"))
    ids = [r["id"] for r in put["results"]]
    member.ok("entry", "import", str(EXAMPLES / "memex"))
    member.ok("skill", "save", str(EXAMPLES / "skills" / "deploy-check"), "--publish")
    return {"resource": ids[0], "private": ids[1], "entry": MEMORY}


def joined(xb_proc: Run, tmp_path: Path) -> tuple[Path, str, Member, Member, dict[str, str]]:
    """The team repository (Rita its reviewer), Ann with her private records and Rita
    with a store, both having added the team as ``eng``: (bare, url, ann, rita, ids)."""
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    ids = stock(ann, tmp_path)
    rita.ok("init")
    for member in (ann, rita):
        member.ok("team", "add", "eng", url, store=False)
    return bare, url, ann, rita, ids


@needs_git
def test_share_review_recall_across_two_members(xb_proc: Run, tmp_path: Path) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    ids = stock(ann, tmp_path)
    ann.ok("team", "add", "eng", url, store=False)
    before = tree(bare)

    shared = [ann.ok("share", ids["resource"], "--team", "eng")]
    shared.append(ann.ok("share", ids["entry"], "--team", "eng"))
    shared.append(ann.ok("share", "deploy-check", "--team", "eng"))
    assert all(s["pushed"] and s["shared"]["sharedBy"] == ann.identity for s in shared)
    ann.ok("put", str(EXAMPLES / "batch.json"))  # more private writes after the shares

    after = tree(bare)  # exactly the shared records arrived, nothing private
    assert records(after, "resources") - records(before, "resources") == {ids["resource"]}
    assert records(after, "entries") == {ids["entry"]}
    assert {p.split("/")[1] for p in after if p.startswith("skills/")} == {"deploy-check"}
    assert ids["private"] not in " ".join(after)
    log = subprocess.run(
        ["git", "--git-dir", str(bare), "log", "--format=%an <%ae>", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert ann.identity in log

    rita.ok("init")
    rita.ok("team", "add", "eng", url, store=False)
    listed = rita.ok("team", "review", "eng", store=False)
    assert listed["reviewers"] == ["Rita <rita@example.org>"]
    assert rita.ok("team", "list", store=False)["teams"][0]["reviewers"] == listed["reviewers"]
    assert {p["kind"] for p in listed["proposals"]} == {"resource", "entry", "skill"}
    prompt = "build tips: make -j2 on the CI box?"
    assert MEMORY not in [r["id"] for r in rita.ok("recall", "-", input=prompt)["results"]]
    assert rita.ok("skill", "recall", "deploy database")["results"] == []

    refused = ann("team", "review", "eng", "accept", ids["entry"])
    assert refused.code == 4 and "not a reviewer" in refused.stderr
    for key in (ids["resource"], ids["entry"], "deploy-check"):
        decided = rita.ok("team", "review", "eng", "accept", key)
        assert decided["decided"]["state"] == "accepted" and decided["pushed"]
    assert rita.ok("team", "review", "eng", store=False)["proposals"] == []

    payload = {"hook_event_name": "UserPromptSubmit", "prompt": prompt, "session_id": "r1"}
    hook = rita("hook", "claude-code", input=json.dumps(payload), store=False)
    assert hook.code == 0, hook.stderr
    assert "make -j" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    recalled = rita.ok("recall", "-", input=prompt)["results"]
    assert [(r["layer"], r["trust"]) for r in recalled if r["id"] == MEMORY] == [
        ("team:eng", "team")
    ]
    skills = rita.ok("skill", "recall", "deploy database")["results"]
    assert [(s["slug"], s["layer"]) for s in skills] == [("deploy-check", "team:eng")]
    got = rita.ok("get", ids["resource"])
    assert got["layer"] == "team:eng" and got["provenance"]["committer"] == ann.identity

    pulled = ann.ok("team", "pull", "eng", store=False)
    assert pulled["state"] == "fast_forward" and pulled["untrusted"] == []


def test_a_decision_by_a_non_reviewer_is_reported_and_not_trusted(
    xb_proc: Run, tmp_path: Path
) -> None:
    from xbrain.store import Store
    from xbrain.team.hidden import proposals
    from xbrain.team.share import write_proposal

    _bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    ids = stock(ann, tmp_path)
    ann.ok("team", "add", "eng", url, store=False)
    ann.ok("share", ids["resource"], "--team", "eng")
    rita.ok("init")
    rita.ok("team", "add", "eng", url, store=False)
    # Ann accepts her own proposal by writing the file herself, and pushes it
    team = Store(tmp_path / "ann" / "data" / "xbrain" / "teams" / "eng")
    team.core.identity = ann.identity
    with team.core.reading() as view:
        assert view is not None
        (item,) = proposals(view)
    write_proposal(
        team,
        {
            **item,
            "state": "accepted",
            "reviewedBy": ann.identity,
            "reviewedAt": "2026-12-05T00:00:00.000Z",
        },
        "accept it myself",
    )
    team.remote_push("origin")

    pulled = rita.ok("team", "pull", "eng", store=False)
    (doubt,) = pulled["untrusted"]
    assert doubt["id"] == ids["resource"] and doubt["by"] == ann.identity
    assert rita("get", ids["resource"]).code == 3  # still hidden: not trusted
    found = rita.ok("search", "private note deploys")["results"]
    assert ids["resource"] not in [r["citation"]["id"] for r in found]
    assert rita.ok("team", "review", "eng", store=False)["untrusted"][0]["by"] == ann.identity
    rita.ok("team", "review", "eng", "accept", ids["resource"])  # the reviewer decides
    assert rita.ok("get", ids["resource"])["layer"] == "team:eng"


def test_a_rejected_proposal_is_removed_from_the_team(xb_proc: Run, tmp_path: Path) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    ids = stock(ann, tmp_path)
    ann.ok("team", "add", "eng", url, store=False)
    ann.ok("share", ids["resource"], "--team", "eng")
    rita.ok("init")
    rita.ok("team", "add", "eng", url, store=False)
    rejected = rita.ok("team", "review", "eng", "reject", ids["resource"])
    assert rejected["decided"]["state"] == "rejected"
    assert ids["resource"] not in records(tree(bare), "resources")
    assert rita("team", "review", "eng", "accept", ids["resource"]).code == 5
    assert rita("team", "review", "eng", "accept", "resource_" + "0" * 64).code == 3


def test_share_refuses_bad_input_and_changes_nothing(xb_proc: Run, tmp_path: Path) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    stock(ann, tmp_path)
    assert ann("share", "resource_" + "0" * 64, "--team", "eng").code == 3  # no such team
    ann.ok("team", "add", "eng", url, store=False)
    before = tree(bare)
    for args, code in (
        (("resource_" + "0" * 64,), 3),
        (("no-such-skill",), 3),
        (("resource_" + "0" * 64, "--revision", "1"), 4),
    ):
        result = ann("share", *args, "--team", "eng")
        assert result.code == code, (args, result.stderr)
        assert result.stderr.count("\n") == 1
    assert tree(bare) == before
