# ruff: noqa: F811 (pytest fixtures imported from tests.ui.teamseed are named as parameters)
"""``xbrain ui`` with a team layer (``xbrain team``): team records open on their own
pages (layer, trust, provenance, the team store's history and diffs), lists say each
record's layer, and the review queue accepts and rejects a team's proposals through
``xbrain team review``'s own function — read-only for team records otherwise."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.conftest import Result
from tests.ui.server import Running
from tests.ui.teamseed import RITA, ann_shares, ids, team, ui  # noqa: F401 (fixtures)

pytest.importorskip("starlette", reason="the viewer's extra (xbrain[ui]) is not installed")

Run = Callable[..., Result]


def team_log(bare: Path) -> list[str]:
    """``author: subject`` of every commit of the team repository's main, newest first."""
    out = subprocess.run(
        ["git", "--git-dir", str(bare), "log", "--format=%an <%ae>: %s", "main"],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:  # no git binary: dulwich reads the same log
        from dulwich.repo import Repo

        repo = Repo(str(bare))
        try:
            return [
                f"{e.commit.author.decode()}: {e.commit.message.decode().splitlines()[0]}"
                for e in repo.get_walker(include=[repo.refs[b"refs/heads/main"]])
            ]
        finally:
            repo.close()
    return out.stdout.splitlines()


def head_of(bare: Path) -> bytes:
    from dulwich.repo import Repo

    repo = Repo(str(bare))
    try:
        return repo.refs[b"refs/heads/main"]
    finally:
        repo.close()


def test_team_records_open_on_their_own_pages_read_only(
    ui: Running, team: dict[str, Any], ids: dict[str, str]
) -> None:
    rule = ui.get(f"/team/eng/entry/{team['rule']}")
    assert rule.status == 200, rule.body[:500]
    assert "<strong>changelog</strong>" in rule.body  # its Markdown, from the team store
    assert "layer <strong>team:eng</strong>" in rule.body and 'id="trust">team<' in rule.body
    assert "last changed by Mia Maker &lt;mia@example.org&gt;" in rule.body  # provenance
    assert "entry put" in rule.body  # history: the team store's own git log
    assert "data-action=" not in rule.body.split("<main>", 1)[1]  # no retire, no delete
    assert f"/team/eng/diff/{team['rule']}" in rule.body
    diff = ui.get(f"/team/eng/diff/{team['rule']}")
    assert diff.status == 200 and "team:eng" in diff.body and "changelog" in diff.body

    resource = ui.get(f"/team/eng/resource/{team['resource']}")
    assert resource.status == 200 and "https://example.com/team-oncall" in resource.body
    assert 'id="trust">team<' in resource.body and "data-action=" not in resource.body

    skill = ui.get("/team/eng/skill/team-runbook")
    assert skill.status == 200 and team["rev1"] in skill.body and team["rev2"] in skill.body
    assert "提前通知所有值班同事" in skill.body and "data-action=" not in skill.body
    assert "/team/eng/skill/team-runbook/diff?" in skill.body
    changes = ui.get("/team/eng/skill/team-runbook/diff")
    assert changes.status == 200 and "<ins>提前</ins>" in changes.body
    assert "<ins>所有</ins>" in changes.body
    part = ui.get(f"/team/eng/skill/team-runbook/file?rev={team['rev1']}&path=SKILL.md")
    assert part.status == 200 and "通知值班同事" in part.body

    mine = ui.get(f"/entry/{team['rule']}")  # the personal page does not read the team
    assert mine.status == 404


def test_lists_and_search_say_each_record_s_layer_and_link_its_page(
    ui: Running, team: dict[str, Any], ids: dict[str, str]
) -> None:
    listed = ui.get("/entries")
    assert f'href="/{ui.token}/team/eng/entry/{team["rule"]}"' in listed.body
    assert f'href="/{ui.token}/entry/{ids["rule"]}"' in listed.body
    layers = re.findall(r'<td class="layer">([^<]+)</td>', listed.body)
    assert set(layers) == {"personal", "team:eng"}
    skills = ui.get("/skills")
    assert f'href="/{ui.token}/team/eng/skill/team-runbook"' in skills.body
    assert f'href="/{ui.token}/skill/deploy-check"' in skills.body

    listed_resources = ui.get("/resources")
    assert listed_resources.status == 200 and "3 resources" in listed_resources.body
    assert f'href="/{ui.token}/team/eng/resource/{team["resource"]}"' in listed_resources.body
    assert f'href="/{ui.token}/resource/{ids["resource"]}"' in listed_resources.body
    assert '<td class="layer">team:eng</td>' in listed_resources.body
    assert ui.get("/resources?offset=-1").status == 400

    found = ui.get("/search?q=" + quote("release changelog before tagging"))
    assert f"/team/eng/entry/{team['rule']}" in found.body and "team:eng" in found.body
    oncall = ui.get("/search?what=resources&q=" + quote("pager alerts escalate"))
    assert f"/team/eng/resource/{team['resource']}" in oncall.body
    runbook = ui.get("/search?what=skills&q=" + quote("release runbook 发布手册"))
    assert "/team/eng/skill/team-runbook" in runbook.body


def test_a_team_proposal_is_accepted_and_rejected_in_the_review_queue(
    ui: Running, team: dict[str, Any], xb: Run, tmp_path: Path
) -> None:
    shared = ann_shares(tmp_path, team["bare"], ["ann-tabs", "ann-spaces"])
    assert xb("team", "pull", "eng", store=None).code == 0  # what the team holds now
    queue = ui.get("/review")
    assert queue.status == 200 and 'id="team-eng"' in queue.body
    for rid in shared.values():
        assert f"/team/eng/entry/{rid}" in queue.body
    proposed = ui.get(f"/team/eng/entry/{shared['ann-tabs']}")  # the reviewer reads it
    assert proposed.status == 200 and "Not accepted by a reviewer" in proposed.body
    before = head_of(team["bare"])
    token = ui.csrf("/review")
    done = ui.post(
        {"csrf": token, "action": "team-accept", "team": "eng", "id": shared["ann-tabs"]}
        | {"back": "/review"}
    )
    assert done.status == 303, done.body
    assert "(pushed)" in done.headers["location"].replace("%28", "(").replace("%29", ")")
    rejected = ui.post(
        {"csrf": token, "action": "team-reject", "team": "eng", "id": shared["ann-spaces"]}
        | {"reason": "we use tabs", "back": "/review"}
    )
    assert rejected.status == 303, rejected.body
    assert head_of(team["bare"]) != before  # pushed to the team's host
    log = team_log(team["bare"])
    assert any(line.startswith(f"{RITA}: team review: accept entry") for line in log)
    assert any(line.startswith(f"{RITA}: team review: reject entry") for line in log)
    after = ui.get("/review").body
    assert f"/team/eng/entry/{shared['ann-tabs']}" not in after
    accepted = ui.get(f"/team/eng/entry/{shared['ann-tabs']}")
    assert 'id="trust">team<' in accepted.body and "Not accepted" not in accepted.body
    found = ui.get("/search?what=entries&q=" + quote("Ann's proposal ann-tabs"))
    assert f"/team/eng/entry/{shared['ann-tabs']}" in found.body  # recall reads it now


def test_a_push_the_host_refuses_is_a_message_and_the_decision_is_kept(
    ui: Running, team: dict[str, Any], xb: Run, tmp_path: Path
) -> None:
    shared = ann_shares(tmp_path, team["bare"], ["ann-offline"])
    assert xb("team", "pull", "eng", store=None).code == 0
    moved = tmp_path / "moved.git"
    team["bare"].rename(moved)
    team["bare"].write_text("not a repository\n")  # the host refuses the push
    token = ui.csrf("/review")
    done = ui.post(
        {"csrf": token, "action": "team-accept", "team": "eng", "id": shared["ann-offline"]}
        | {"back": "/review"}
    )
    assert done.status == 303, done.body
    page = ui.get(done.headers["location"].removeprefix(f"/{ui.token}"))
    assert "the push failed" in page.body and "xbrain team sync" in page.body
    team["bare"].unlink()
    moved.rename(team["bare"])
    synced = xb("team", "sync", "eng", store=None)
    assert synced.code == 0, synced.stderr
    assert any("team review: accept entry" in line for line in team_log(team["bare"]))


def test_someone_not_a_reviewer_sees_the_count_and_no_buttons(
    ui: Running, team: dict[str, Any], xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    ann_shares(tmp_path, team["bare"], ["ann-other"])
    assert xb("team", "pull", "eng", store=None).code == 0
    assert xb("config", "identity.email", "mallory@example.org", store=store_dir).code == 0
    queue = ui.get("/review").body
    section = queue.split('id="team-eng"', 1)[1]
    assert "1 proposed; you (Rita &lt;mallory@example.org&gt;) are not one of" in section
    assert "team-accept" not in section


def test_the_review_queue_shows_each_proposal_s_description(
    ui: Running, team: dict[str, Any], xb: Run, tmp_path: Path
) -> None:
    shared = ann_shares(tmp_path, team["bare"], ["ann-described"])
    assert xb("team", "pull", "eng", store=None).code == 0
    queue = ui.get("/review")
    assert queue.status == 200 and f"/team/eng/entry/{shared['ann-described']}" in queue.body
    assert 'class="description">Ann&#39;s proposal ann-described</p>' in queue.body, queue.body
