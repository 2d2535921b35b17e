"""A reviewer accepts only what they could read (issue 47's trial, findings 2 and 6):
``team review NAME`` pulls first and lists every proposal and untrusted record with its
title and description, hidden characters marked; an accept refuses a record whose short
fields hold one, as put refuses it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.test_team_share import MEMORY, Member, joined, team_remote, tree
from tests.conftest import Result, make
from tests.security.test_team_trust import git, offline, push_straight

Run = Callable[..., Result]
BIDI = "Invoice \u202efdp.exe"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


def crafted_resource(xb_proc: Run, tmp_path: Path) -> tuple[str, str, bytes]:
    """A resource file whose title holds U+202E (put refuses it; plain git does not):
    its id, path and bytes."""
    scratch = tmp_path / "scratch"
    (tmp_path / "plain.json").write_text(json.dumps(make("invoice", title="Invoice XYZ")))
    put = xb_proc("put", str(tmp_path / "plain.json"), store=scratch)
    assert put.code == 0, put.stderr
    rid = put.json["results"][0]["id"]
    path = next((scratch / "resources").rglob(f"{rid}.yaml"))
    data = path.read_text(encoding="utf-8").replace("Invoice XYZ", BIDI)
    assert BIDI in data
    return rid, path.relative_to(scratch).as_posix(), data.encode("utf-8")


def test_an_untrusted_title_with_a_bidi_control_is_shown_marked_and_never_accepted(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    rita.ok("init")
    rita.ok("team", "add", "eng", url, store=False)
    rid, path, data = crafted_resource(xb_proc, tmp_path)
    push_straight(bare, tmp_path, {path: data})

    listed = rita.ok("team", "review", "eng", store=False)
    (doubt,) = [d for d in listed["untrusted"] if d["id"] == rid]
    assert doubt["title"] == "Invoice <U+202E>fdp.exe"
    before = git(bare, "rev-parse", "main")

    refused = rita("team", "review", "eng", "accept", rid)

    assert refused.code == 4, refused.stderr
    assert "U+202E" in refused.stderr and "title" in refused.stderr and rid in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert git(bare, "rev-parse", "main") == before
    assert rita("get", rid).code == 3  # still not served as the team's
    rejected = rita("team", "review", "eng", "reject", rid)  # a reject still works
    assert rejected.code == 0, rejected.stderr
    assert path not in tree(bare)


def test_the_review_list_pulls_first_and_shows_each_proposal_s_name_and_description(
    xb_proc: Run, tmp_path: Path
) -> None:
    _, url, ann, rita, ids = joined(xb_proc, tmp_path)
    for what in (ids["resource"], ids["entry"], "deploy-check"):
        ann.ok("share", what, "--team", "eng")

    listed = rita.ok("team", "review", "eng", store=False)  # no team pull before it

    assert listed["pulled"] is True
    shown = {p["kind"]: p for p in listed["proposals"]}
    assert set(shown) == {"resource", "entry", "skill"}
    entry = ann.ok("entry", "get", MEMORY)
    assert shown["entry"]["title"] == entry["name"]
    assert shown["entry"]["description"] == entry["description"]
    assert shown["resource"]["title"] == "Private note 0 about deploys"
    assert shown["skill"]["title"] and shown["skill"]["description"]

    with offline(rita, url):
        stale = rita.ok("team", "review", "eng", store=False)
    assert stale["pulled"] is False and "last pull" in stale["note"]
    assert [p["key"] for p in stale["proposals"]] == [p["key"] for p in listed["proposals"]]
