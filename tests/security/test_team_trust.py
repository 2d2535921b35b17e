"""Team memory against a member with push rights (issue 47's hostile trial): records and
reviewer lists committed with plain git by someone not a reviewer are never trusted,
an accepted record stays accepted, merges are the member's, and the CLI's edges."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli.test_team_share import MEMORY, Member, joined, stock, team_remote
from tests.conftest import Result, make

Run = Callable[..., Result]
MALLORY = "Mallory <m@evil.org>"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


def git(cwd: Path, *args: str, who: str = MALLORY) -> str:
    """Plain git, as a member with push rights and no xbrain."""
    name, email = who[: who.index(" <")], who[who.index("<") + 1 : -1]
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def push_straight(bare: Path, tmp_path: Path, files: dict[str, bytes], who: str = MALLORY) -> None:
    """Clone the team repository with git, commit ``files`` as ``who``, push."""
    work = tmp_path / "plain-git"
    if work.exists():
        git(work, "pull", "-q", "origin", "main", who=who)
    else:
        git(tmp_path, "clone", "-q", "-b", "main", str(bare), str(work), who=who)
    for path, data in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(data)
    git(work, "add", "-A", who=who)
    git(work, "commit", "-q", "-m", "straight in", who=who)
    git(work, "push", "-q", "origin", "main", who=who)


@contextlib.contextmanager
def offline(member: Member, url: str) -> Iterator[None]:
    """The member's team clone points at a team that cannot be reached, for a while."""
    clone = Path(member.env["XDG_DATA_HOME"]) / "xbrain" / "teams" / "eng"

    def remote(*args: str) -> None:
        assert member.run_cli("remote", *args, store=clone, env=member.env).code == 0

    remote("remove", "origin")
    remote("add", "origin", "git://127.0.0.1:9/away.git")
    yield
    remote("remove", "origin")
    remote("add", "origin", url)


def planted_entry(ann: Member) -> tuple[str, bytes]:
    """Ann's entry file made always-on: what Mallory writes into the team."""
    path = f"entries/{MEMORY[6:8]}/{MEMORY}.yaml"
    data = (ann.store / path).read_bytes().replace(b"alwaysOn: false", b"alwaysOn: true")
    assert b"alwaysOn: true" in data
    return path, data


def recalled(member: Member, prompt: str = "build tips: make -j2 on the CI box?") -> list[str]:
    return [r["id"] for r in member.ok("recall", "-", input=prompt)["results"]]


def test_a_record_pushed_straight_into_the_team_is_untrusted_until_a_reviewer_accepts(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    bob = Member(xb_proc, tmp_path / "bob", "bob")
    stock(ann, tmp_path)
    for member in (rita, bob):
        member.ok("init")
        member.ok("team", "add", "eng", url, store=False)
    push_straight(bare, tmp_path, dict([planted_entry(ann)]))

    pulled = bob.ok("team", "pull", "eng", store=False)
    (doubt,) = pulled["untrusted"]
    assert doubt["id"] == MEMORY and doubt["kind"] == "entry" and doubt["by"] == MALLORY
    assert MEMORY not in recalled(bob)
    payload = {"hook_event_name": "UserPromptSubmit", "prompt": "hello", "session_id": "b1"}
    hook = bob("hook", "claude-code", input=json.dumps(payload), store=False)
    assert hook.code == 0 and "make -j2" not in hook.stdout
    assert bob("entry", "get", MEMORY).code == 3
    listed = bob.ok("team", "review", "eng", store=False)
    assert [d["id"] for d in listed["untrusted"]] == [MEMORY]

    decided = rita.ok("team", "review", "eng", "accept", MEMORY)
    assert decided["decided"]["state"] == "accepted" and decided["pushed"]
    assert bob.ok("team", "pull", "eng", store=False)["untrusted"] == []
    assert MEMORY in recalled(bob)


def test_a_record_merged_in_from_a_side_branch_stays_untrusted(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    stock(ann, tmp_path)
    (tmp_path / "mine.json").write_text(json.dumps(make("rita-own", title="Rita's own")))
    own = rita.ok("put", str(tmp_path / "mine.json"))["results"][0]["id"]
    rita.ok("team", "add", "eng", url, store=False)
    with offline(rita, url):  # the reviewer shares while the team cannot be reached
        assert rita("share", own, "--team", "eng").code == 8
    push_straight(bare, tmp_path, dict([planted_entry(ann)]))
    synced = rita.ok("team", "sync", "eng", store=False)  # merges Mallory's commit
    assert synced["synced"][0]["state"] == "merged"
    merges = git(bare, "log", "--merges", "--format=%an <%ae>", "main").split("\n")
    assert merges[0] == rita.identity
    assert [d["id"] for d in rita.ok("team", "review", "eng", store=False)["untrusted"]] == [MEMORY]
    assert MEMORY not in recalled(rita)


def test_provenance_names_who_changed_a_record_not_the_merge(xb_proc: Run, tmp_path: Path) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    bob = Member(xb_proc, tmp_path / "bob", "bob")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    ids = stock(ann, tmp_path)
    (tmp_path / "bobs.json").write_text(json.dumps(make("bob-own", title="Bob's own")))
    own = bob.ok("put", str(tmp_path / "bobs.json"))["results"][0]["id"]
    for member in (ann, bob, rita):
        member.ok("team", "add", "eng", url, store=False)
    with offline(bob, url):
        assert bob("share", own, "--team", "eng").code == 8
    ann.ok("share", ids["resource"], "--team", "eng")
    assert bob.ok("team", "sync", "eng", store=False)["synced"][0]["state"] == "merged"
    merges = git(bare, "log", "--merges", "--format=%an <%ae>", "main").split()
    assert " ".join(merges) == bob.identity
    rita.ok("team", "review", "eng", "accept", ids["resource"], own)
    got = rita.ok("get", ids["resource"])
    assert got["layer"] == "team:eng" and got["provenance"]["committer"] == ann.identity
    assert rita.ok("get", own)["provenance"]["committer"] == bob.identity


def test_a_non_reviewer_naming_themselves_a_reviewer_does_not_count(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    mallory = Member(xb_proc, tmp_path / "mallory", "mallory")
    ids = stock(ann, tmp_path)
    ann.ok("team", "add", "eng", url, store=False)
    ann.ok("share", ids["resource"], "--team", "eng")
    mallory.ok("config", "identity.email", "m@evil.org")  # the same identity as her git
    mallory.identity = MALLORY
    marker = git_show(bare, "main:xbrain.yaml")
    listed = marker.replace(
        b"- Rita <rita@example.org>", b"- Rita <rita@example.org>\n  - " + MALLORY.encode()
    )
    assert listed != marker
    push_straight(bare, tmp_path, {"xbrain.yaml": listed})
    mallory.ok("init")
    added = mallory.ok("team", "add", "eng", url, store=False)
    assert added["team"]["reviewers"] == ["Rita <rita@example.org>"]
    assert [d["key"] for d in added["untrusted"]] == ["team.reviewers"]
    refused = mallory("team", "review", "eng", "accept", ids["resource"])
    assert refused.code == 4 and "not a reviewer" in refused.stderr

    rita.ok("init")
    rita.ok("team", "add", "eng", url, store=False)
    review = rita.ok("team", "review", "eng", store=False)
    assert review["reviewers"] == ["Rita <rita@example.org>"]
    assert review["untrusted"][0]["by"] == MALLORY
    assert rita("get", ids["resource"]).code == 3  # still only proposed
    # the reviewer's own change of the list counts
    carol = b"- Rita <rita@example.org>\n  - Carol <carol@example.org>"
    push_straight(
        bare,
        tmp_path,
        {"xbrain.yaml": marker.replace(b"- Rita <rita@example.org>", carol)},
        who=rita.identity,
    )
    pulled = rita.ok("team", "pull", "eng", store=False)
    assert pulled["untrusted"] == []
    assert rita.ok("team", "list", store=False)["teams"][0]["reviewers"] == [
        "Rita <rita@example.org>",
        "Carol <carol@example.org>",
    ]


def git_show(bare: Path, what: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(bare), "show", what], capture_output=True, check=True
    ).stdout


def test_sharing_an_accepted_record_again_keeps_it_accepted(xb_proc: Run, tmp_path: Path) -> None:
    bare, _url, ann, rita, ids = joined(xb_proc, tmp_path)
    for what in (ids["resource"], ids["entry"], "deploy-check"):
        ann.ok("share", what, "--team", "eng")
        rita.ok("team", "review", "eng", "accept", what)
    head = git(bare, "rev-parse", "main")
    for what in (ids["resource"], ids["entry"], "deploy-check"):
        again = ann.ok("share", what, "--team", "eng")
        assert again["unchanged"] is True and "already accepted" in again["message"]
    assert git(bare, "rev-parse", "main") == head
    rita.ok("team", "pull", "eng", store=False)
    assert rita.ok("get", ids["resource"])["layer"] == "team:eng"
    assert MEMORY in recalled(rita)

    changed = make(
        "private-0", title="Private note 0, changed by Ann", updatedAt="2099-01-01T00:00:00.000Z"
    )
    (tmp_path / "changed.json").write_text(json.dumps(changed))
    assert ann.ok("put", str(tmp_path / "changed.json"))["results"][0]["id"] == ids["resource"]
    refused = ann("share", ids["resource"], "--team", "eng")
    assert refused.code == 5 and "already accepted" in refused.stderr
    assert refused.stderr.count("\n") == 1 and refused.stdout == ""
    assert git(bare, "rev-parse", "main") == head
    assert rita.ok("get", ids["resource"])["resource"]["title"] != changed["title"]


def test_an_unknown_team_exits_3_everywhere(xb_proc: Run, tmp_path: Path) -> None:
    _bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    ann.ok("init")
    ann.ok("team", "add", "eng", url, store=False)
    for verb in ("sync", "pull", "review", "remove"):
        unknown = ann("team", verb, "nope", store=False)
        assert unknown.code == 3, (verb, unknown.stderr)
        assert unknown.stderr.count("\n") == 1 and unknown.stdout == ""


def test_a_team_that_fails_to_pull_says_so_on_stderr(xb_proc: Run, tmp_path: Path) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    rita.ok("init")
    rita.ok("team", "add", "eng", url, store=False)
    head = rita.ok("team", "list", store=False)["teams"][0]["commit"]
    push_straight(bare, tmp_path, {"..evil/x": b"hostile\n"})
    for args in (("pull",), ("pull", "eng"), ("sync",), ("sync", "eng")):
        failed = rita("team", *args, store=False)
        assert failed.code == (4 if args == ("pull", "eng") else 8), (args, failed)
        assert failed.stderr.count("\n") == 1 and "..evil" in failed.stderr, args
    assert rita.ok("team", "list", store=False)["teams"][0]["commit"] == head


def test_team_review_decides_several_and_keeps_a_reason(xb_proc: Run, tmp_path: Path) -> None:
    bare, _url, ann, rita, ids = joined(xb_proc, tmp_path)
    ann.ok("share", ids["resource"], "--team", "eng")
    ann.ok("share", ids["entry"], "--team", "eng")
    misuse = rita("team", "review", "eng", "accept", ids["entry"], "--reason", "x")
    assert misuse.code == 2 and misuse.stderr.count("\n") == 1
    both = rita.ok(
        "team", "review", "eng", "reject", ids["resource"], ids["entry"], "--reason", "dup"
    )
    assert [(d["id"], d["state"], d["reason"]) for d in both["decisions"]] == [
        (ids["resource"], "rejected", "dup"),
        (ids["entry"], "rejected", "dup"),
    ]
    assert b"reason: dup" in git_show(bare, f"main:proposals/{ids['resource']}.yaml")
    head = git(bare, "rev-parse", "main")
    again = rita("team", "review", "eng", "reject", ids["resource"], "nope", "--reason", "x")
    assert again.code == 3 and git(bare, "rev-parse", "main") == head


def test_an_accepted_record_changed_straight_in_the_team_is_untrusted(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, _url, ann, rita, ids = joined(xb_proc, tmp_path)
    ann.ok("share", ids["resource"], "--team", "eng")
    rita.ok("team", "review", "eng", "accept", ids["resource"])
    assert rita.ok("get", ids["resource"])["layer"] == "team:eng"
    path = f"resources/{ids['resource'][9:11]}/{ids['resource']}.yaml"
    data = git_show(bare, f"main:{path}")
    assert b"title: Private note 0" in data
    push_straight(bare, tmp_path, {path: data.replace(b"title: Private", b"title: Evil")})

    (doubt,) = ann.ok("team", "pull", "eng", store=False)["untrusted"]
    assert doubt["id"] == ids["resource"] and doubt["by"] == MALLORY
    assert ann.ok("get", ids["resource"]).get("layer") is None  # her own copy, not the team's
    rita.ok("team", "pull", "eng", store=False)
    assert rita("get", ids["resource"]).code == 3


def test_a_skill_pushed_straight_into_the_team_waits_for_a_reviewer(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    stock(ann, tmp_path)  # a published deploy-check: its files, as Mallory copies them
    rita.ok("init")
    rita.ok("team", "add", "eng", url, store=False)
    folder = ann.store / "skills" / "deploy-check"
    files = {
        str(p.relative_to(ann.store)): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }
    push_straight(bare, tmp_path, files)

    (doubt,) = rita.ok("team", "pull", "eng", store=False)["untrusted"]
    assert (doubt["key"], doubt["kind"], doubt["by"]) == ("skill:deploy-check", "skill", MALLORY)
    assert rita.ok("skill", "recall", "deploy database")["results"] == []
    decided = rita.ok("team", "review", "eng", "accept", "deploy-check")
    assert decided["decided"]["kind"] == "skill" and decided["pushed"]
    assert rita.ok("team", "pull", "eng", store=False)["untrusted"] == []
    skills = rita.ok("skill", "recall", "deploy database")["results"]
    assert [(s["slug"], s["layer"]) for s in skills] == [("deploy-check", "team:eng")]
