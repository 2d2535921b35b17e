"""``xbrain ui`` in a real headless Chromium (Debian's ``chromium``, driven by Playwright
with that executable; never a downloaded browser): open the printed URL, search in
English and Chinese, open a skill's diff, retire an entry and see it gone from recall,
and a stored ``<script>``/``onerror`` payload that never runs.

Each page is photographed into the test's folder, and into ``$XB_UI_SCREENSHOTS``
when it names one (``docs/ui`` holds the committed set)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.conftest import Result
from tests.ui.server import Running, seed, start
from tests.ui.teamseed import ann_shares, make_team

pytest.importorskip("starlette", reason="the viewer's extra (xbrain[ui]) is not installed")

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@pytest.fixture
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (as root: apt-get install chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
    )
    with sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def ids(store_dir: Path) -> dict[str, str]:
    return seed(store_dir)


@pytest.fixture
def ui(store_dir: Path, ids: dict[str, str]) -> Iterator[Running]:
    running = start(store_dir, "--idle", "300")
    yield running
    running.stop()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 800}, locale="en-US")
    opened = context.new_page()
    opened.set_default_timeout(30_000)
    try:
        yield opened
    finally:
        context.close()


def shoot(page: Any, tmp_path: Path, name: str) -> None:
    """A full-page screenshot, kept in the test's folder (and $XB_UI_SCREENSHOTS)."""
    path = tmp_path / "shots" / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    wanted = os.environ.get("XB_UI_SCREENSHOTS")
    if wanted:
        Path(wanted).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, Path(wanted) / f"{name}.png")


def test_browse_search_diff_and_retire(
    page: Any, ui: Running, ids: dict[str, str], tmp_path: Path, xb_proc: Any, store_dir: Path
) -> None:
    from xbrain.store import Store

    for session, prompt in (("session-1", "git push force to main"), ("session-2", "部署窗口")):
        assert xb_proc("recall", "--session", session, input=prompt).code == 0  # telemetry
    Store(store_dir).entry_put(
        [{"kind": "rule", "name": "tabs", "description": "Indent with tabs", "body": "Tabs."}],
        propose={"agent": "claude"},
    )
    page.goto(ui.url)
    assert page.title() == "Store · xbrain"
    shoot(page, tmp_path, "home")

    page.fill("form.search input[name=q]", "git push force to main")
    page.click("form.search button")
    page.wait_for_url("**/search?**")
    rule = page.locator(f"a[href$='/entry/{ids['rule']}']")
    assert rule.count() == 1 and rule.inner_text() == "no-force-push"
    assert "why: query" in page.locator("#recalled").inner_text()
    shoot(page, tmp_path, "search")

    page.fill("#q", "部署窗口")
    page.click("form.search button")
    page.wait_for_url("**/search?**")
    assert page.locator(f"a[href$='/entry/{ids['memory_zh']}']").inner_text() == "部署窗口"
    assert page.locator(f"a[href$='/resource/{ids['resource_zh']}']").count() == 1
    shoot(page, tmp_path, "search-zh")

    page.click("nav >> text=Skills")
    shoot(page, tmp_path, "skills")
    page.click("text=deploy-check")
    page.wait_for_selector("#revisions")
    shoot(page, tmp_path, "skill")
    page.click("a.diff-link")
    page.wait_for_url("**/diff?**")
    assert page.locator(".old del").first.inner_text() == "检查"
    assert page.locator(".new ins").first.inner_text() == "确认"
    shoot(page, tmp_path, "skill-diff")

    page.goto(f"{ui.url}entry/{ids['rule']}")
    shoot(page, tmp_path, "entry")
    page.click("button[data-action=entry-retire]")
    page.wait_for_selector(".message")
    assert "Retired" in page.locator(".message").inner_text()
    assert page.locator("#status").inner_text() == "retired"
    page.goto(f"{ui.url}search?q=" + quote("git push force to main"))
    assert page.locator(f"a[href$='/entry/{ids['rule']}']").count() == 0
    recalled: Result = xb_proc("recall", input="git push force to main")
    assert recalled.json["results"] == []  # gone from recall too, not only from the page

    page.goto(f"{ui.url}diff/{ids['rule']}")
    assert "retired" in page.locator("table.sbs").inner_text()
    shoot(page, tmp_path, "entry-diff")
    page.goto(ui.url + "telemetry")
    assert page.locator("#matches svg.chart").count() == 2  # the two entries recall showed
    for name, path in (
        ("entries", "entries"),
        ("review", "review"),
        ("telemetry", "telemetry"),
        ("health", "health"),
        ("resource", f"resource/{ids['resource_zh']}"),
    ):
        page.goto(ui.url + path)
        assert page.locator("h1").count() == 1
        shoot(page, tmp_path, name)


def test_a_stored_script_never_runs(page: Any, ui: Running, ids: dict[str, str]) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for path in (f"entry/{ids['hostile']}", "search?q=pwned", "entries"):
        page.goto(ui.url + path)
        page.wait_for_load_state("load")
        assert page.evaluate("() => window.__pwned === undefined"), path
        assert page.locator("main script, main img, main [onerror], main [onclick]").count() == 0
        assert page.locator("a[href^='javascript:']").count() == 0
    page.goto(ui.url + f"entry/{ids['hostile']}")
    assert "<script>window.__pwned = 1</script>" in page.locator("section.body").inner_text()
    for link in page.locator("section.body a").all():
        link.click(no_wait_after=True)
    assert page.evaluate("() => window.__pwned === undefined")
    assert dialogs == []


def test_a_team_record_from_search_its_page_and_a_team_review(
    page: Any, store_dir: Path, ids: dict[str, str], xb: Any, tmp_path: Path
) -> None:
    """Team ``eng`` (issue 47) in the viewer: a search result of the team opens its team
    page (layer, trust, provenance, no action), a hostile team memory never runs, and
    a team proposal is accepted from the review queue."""
    team = make_team(xb, tmp_path, store_dir)
    shared = ann_shares(tmp_path, team["bare"], ["ann-proposal"])
    assert xb("team", "pull", "eng", store=None).code == 0
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    ui = start(store_dir, "--idle", "300")
    try:
        page.goto(f"{ui.url}search?q=" + quote("release changelog before tagging"))
        link = page.locator(f"a[href$='/team/eng/entry/{team['rule']}']")
        assert link.count() == 1 and page.locator("#recalled .layer").first.inner_text() == (
            "team:eng"
        )
        link.click()
        page.wait_for_url(f"**/team/eng/entry/{team['rule']}")
        assert page.locator("#layer strong").inner_text() == "team:eng"
        assert page.locator("#trust").inner_text() == "team"
        assert "Mia Maker" in page.locator("#layer").inner_text()
        assert page.locator("main button[data-action]").count() == 0  # read-only
        shoot(page, tmp_path, "team-entry")

        page.goto(f"{ui.url}team/eng/entry/{team['hostile']}")
        page.wait_for_load_state("load")
        assert page.evaluate("() => window.__pwned === undefined")
        for hostile in page.locator("section.body a").all():
            hostile.click(no_wait_after=True)
        assert page.evaluate("() => window.__pwned === undefined")

        page.goto(ui.url + "entries")
        assert page.locator("td.layer", has_text="team:eng").count() >= 2
        page.goto(ui.url + "review")
        section = page.locator("#team-eng")
        assert section.locator(f"a[href$='/team/eng/entry/{shared['ann-proposal']}']").count()
        shoot(page, tmp_path, "team-review")
        section.locator("button[data-action=team-accept]").first.click()
        page.wait_for_selector(".message")
        assert "(pushed)" in page.locator(".message").inner_text()
        assert page.locator(f"a[href$='/entry/{shared['ann-proposal']}']").count() == 0
    finally:
        ui.stop()
    assert dialogs == []
