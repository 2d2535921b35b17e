# ruff: noqa: F811 (pytest fixtures imported from tests.ui.teamseed are named as parameters)
"""``xbrain ui``'s team pages under hostile input: a team name or record id in the URL
that is a path, a traversal or an unknown team opens nothing outside the user's team
folders; a team record's stored HTML is text; the team review's POST actions need the
page's CSRF token and the viewer's own origin; and a personal action never reaches a
team store."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, head
from tests.ui.server import Running, seed
from tests.ui.teamseed import ann_shares, ids, team, ui  # noqa: F401 (fixtures)

pytest.importorskip("starlette", reason="the viewer's extra (xbrain[ui]) is not installed")

Run = Callable[..., Result]


def teams_root() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "xbrain" / "teams"


def test_a_team_name_or_id_that_is_a_path_opens_nothing(
    ui: Running, team: dict[str, Any], ids: dict[str, str], tmp_path: Path
) -> None:
    rule = team["rule"]
    for path, status in (
        (f"/team/nope/entry/{rule}", 404),  # no such team
        (f"/team/ENG/entry/{rule}", 400),  # not a team name
        (f"/team/../entry/{ids['rule']}", 400),
        (f"/team/%2e%2e/entry/{ids['rule']}", 400),
        (f"/team/.eng/entry/{rule}", 400),
        (f"/team/eng%2F..%2F..%2Fstore/entry/{ids['rule']}", 404),  # a slash: no page
        (f"/team/..%2F..%2F..%2Fetc/resource/{team['resource']}", 404),
        ("/team/eng/entry/..%2F..%2Fxbrain.yaml", 404),
        ("/team/eng/entry/entry_..", 400),
        (f"/team/eng/entry/entry_{'0' * 64}", 404),
        (f"/team/eng/skill/..%2F..%2Fetc?rev={team['rev1']}", 404),
        (f"/team/eng/skill/team-runbook/file?rev={team['rev1']}&path=../../../etc/passwd", 404),
        ("/team/eng/skill/team-runbook/file?rev=rev_nope&path=SKILL.md", 404),
        (f"/team/{'x' * 300}/entry/{rule}", 400),
    ):
        answer = ui.get(path)
        assert answer.status == status, (path, answer.status)
        assert answer.status != 200 and "root:" not in answer.body, path
        assert "Write the <strong>changelog</strong>" not in answer.body, path

    # a folder in the teams folder that is a link to another store is no team
    other = tmp_path / "other-store"
    seed(other)
    (teams_root() / "evil").symlink_to(other)
    linked = ui.get(f"/team/evil/entry/{ids['rule']}")
    assert linked.status == 404 and "No team named evil" in linked.body
    assert "git push --force" not in linked.body
    assert "/team/evil/" not in ui.get("/entries").body  # nor listed


def test_a_team_record_s_stored_html_is_text(ui: Running, team: dict[str, Any]) -> None:
    for path in (
        f"/team/eng/entry/{team['hostile']}",
        "/entries",
        "/search?q=pwned",
        f"/team/eng/diff/{team['hostile']}",
    ):
        answer = ui.get(path)
        assert answer.status == 200, path
        body = answer.body
        assert "<script>window" not in body and "<img" not in body, path
        assert not re.search(r"<[^>]+\son(error|click)\s*=", body), path
        assert 'href="javascript:' not in body, path
    page = ui.get(f"/team/eng/entry/{team['hostile']}").body
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page


def test_the_team_review_actions_need_the_csrf_token_and_the_own_origin(
    ui: Running, team: dict[str, Any], xb: Run, tmp_path: Path
) -> None:
    from dulwich.repo import Repo

    def team_head() -> bytes:
        repo = Repo(str(team["bare"]))
        try:
            return repo.refs[b"refs/heads/main"]
        finally:
            repo.close()

    shared = ann_shares(tmp_path, team["bare"], ["ann-csrf"])
    assert xb("team", "pull", "eng", store=None).code == 0
    clone = teams_root() / "eng"
    before, local = team_head(), head(clone)
    token = ui.csrf("/review")
    fields = {"action": "team-accept", "team": "eng", "id": shared["ann-csrf"]}
    for given in ({}, {"csrf": ""}, {"csrf": "0" * 64}, {"csrf": token[:-1]}):
        answer = ui.post({**fields, **given})
        assert answer.status == 403 and "CSRF" in answer.body
    foreign = ui.post({**fields, "csrf": token}, headers={"Origin": "http://evil.example"})
    assert foreign.status == 403
    cross = ui.post({**fields, "csrf": token}, headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status == 403
    for team_name in ("../eng", "nope", "ENG", ""):
        refused = ui.post({**fields, "csrf": token, "team": team_name})
        assert refused.status in (400, 404), team_name
    assert team_head() == before and head(clone) == local  # nothing decided, nothing pushed
    own = ui.post({**fields, "csrf": token}, headers={"Origin": f"http://127.0.0.1:{ui.port}"})
    assert own.status == 303 and team_head() != before  # the page's own form: decided


def test_a_personal_action_never_changes_a_team_record(
    ui: Running, team: dict[str, Any], store_dir: Path
) -> None:
    clone = teams_root() / "eng"
    before, local = head(store_dir), head(clone)
    token = ui.csrf(f"/team/eng/entry/{team['rule']}")
    for action, field in (
        ("entry-retire", {"id": team["rule"]}),
        ("skill-archive", {"slug": "team-runbook"}),
        ("review-accept", {"id": team["rule"]}),
    ):
        answer = ui.post({"csrf": token, "action": action, "team": "eng", **field})
        assert answer.status in (400, 404), (action, answer.status)
    # as xbrain delete says of an id the store does not hold: nothing to do
    gone = ui.post({"csrf": token, "action": "resource-delete", "id": team["resource"]})
    assert gone.status == 303 and "Nothing%20deleted" in gone.headers["location"]
    assert head(store_dir) == before and head(clone) == local
    assert 'id="trust">team<' in ui.get(f"/team/eng/entry/{team['rule']}").body
