"""``xbrain recall``: routing entries, skill pointers and resources into a prompt's context."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import EXAMPLES, Result, head
from xbrain.kinds.entry import entry_id
from xbrain.recall.route import Options, choose, fill_budget
from xbrain.recall.session import file_name

Run = Callable[..., Result]
RULE = entry_id("global", "no-force-push")
MEMORY = entry_id("global", "project-notes#Build tips")


@pytest.fixture
def stocked(xb: Run, store_dir: Path) -> Path:
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    assert xb("skill", "save", str(EXAMPLES / "skills" / "deploy-check"), "--publish").code == 0
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    return store_dir


def ask(xb: Run, prompt: str, session: str | None = None, *args: str, **payload: Any) -> Any:
    body: Any = prompt
    if session is not None:
        body = json.dumps({"prompt": prompt, "session_id": session, "cwd": "/tmp", **payload})
    result = xb("recall", "-", *args, input=body)
    assert result.code == 0, result.stderr
    return result.json


def test_a_rule_in_full_once_per_session_then_its_one_liner(xb: Run, stocked: Path) -> None:
    first = ask(xb, "can I git push --force to main?", "s-1")
    (hit,) = first["results"]
    assert (hit["id"], hit["kind"], hit["disclosure"]) == (RULE, "rule", "full")
    assert "force-with-lease" in hit["text"]
    assert hit["why"] == {
        "via": "query",
        "query": "git push --force",
        "matched": ["git", "push", "force"],
    }
    second = ask(xb, "git push --force again?", "s-1")["results"]
    assert [(r["id"], r["disclosure"], r["text"]) for r in second] == [
        (RULE, "one-liner", "Rule: no force-push on shared branches.")
    ]
    other_session = ask(xb, "git push --force again?", "s-2")["results"]
    assert other_session[0]["disclosure"] == "full"
    no_session = ask(xb, "git push --force again?")["results"]
    assert no_session[0]["disclosure"] == "full"
    # a changed rule is shown in full again
    rule = xb("entry", "get", RULE).json
    rule.pop("updatedAt")
    rule["body"] = "Never force-push a shared branch."
    assert xb("entry", "put", "-", input=json.dumps(rule)).code == 0
    changed = ask(xb, "git push --force again?", "s-1")["results"]
    assert [(r["disclosure"], r["text"]) for r in changed] == [
        ("full", "Never force-push a shared branch.")
    ]


@pytest.mark.parametrize(
    "session",
    ["proj.feature:2026-12-01", "a/b", "..", "会话 1", "x" * 300, "s-9"],
)
def test_any_session_id_gets_graduated_disclosure(xb: Run, stocked: Path, session: str) -> None:
    """An id that is not a plain file name works like one (on the command line and in a
    payload); sessions stay apart."""
    prompt = "git push --force again?"
    assert ask(xb, prompt, session)["results"][0]["disclosure"] == "full"
    shown = xb("recall", "-", "--session", session, input=prompt).json["results"]
    assert [r["disclosure"] for r in shown] == ["one-liner"]
    assert ask(xb, prompt, session + "x")["results"][0]["disclosure"] == "full"
    assert ask(xb, prompt, "")["results"][0]["disclosure"] == "full"  # empty: no session
    folder = stocked / ".git/xbrain/sessions"
    assert {path.parent for path in folder.rglob("*")} == {folder}
    trace = xb("telemetry", "--session", session).json["trace"]
    assert [row["disclosure"] for row in trace] == ["full", "one-liner"]


def test_week_old_session_files_are_swept_with_what_a_killed_hook_left(
    xb: Run, stocked: Path
) -> None:
    """A hook cut off while it saved its session leaves ``<session>.tmp`` (one whose first
    save was cut short has nothing else). Sessions idle for a week are forgotten; those
    files were never swept with them. A sweep reads every session's file, so it runs at
    most once an hour (20,000 sessions made every prompt 58 → 214 ms)."""
    folder = stocked / ".git/xbrain/sessions"
    ask(xb, "git push --force again?", "current")
    old = time.time() - 8 * 86400
    for name in ("idle.json", "idle.tmp", "idle.lock", "cut-short.tmp", "cut-short.lock"):
        (folder / name).write_text("{}")
        os.utime(folder / name, (old, old))
    (folder / "recent.tmp").write_text("{}")
    for name in ("busy.json", "busy.lock", "busy.tmp"):  # in use, with an old temp file
        (folder / name).write_text("{}")
    os.utime(folder / "busy.tmp", (old, old))
    everything = sorted(path.name for path in folder.iterdir())
    ask(xb, "git push --force again?", "current")  # swept a moment ago: not again
    assert sorted(path.name for path in folder.iterdir()) == everything
    hour_ago = time.time() - 3601
    os.utime(folder / ".swept", (hour_ago, hour_ago))
    ask(xb, "git push --force again?", "current")
    names = sorted(path.name for path in folder.iterdir())
    assert names == [
        ".swept",
        "busy.json",
        "busy.lock",
        "current.json",
        "current.lock",
        "recent.tmp",
    ]
    assert time.time() - (folder / ".swept").stat().st_mtime < 600


def test_memory_once_skills_as_pointers_resources_as_citations(xb: Run, stocked: Path) -> None:
    prompt = "build tips: make -j2 on the CI box?"
    first = ask(xb, prompt, "s-3")
    assert [r["id"] for r in first["results"]][:1] == [MEMORY]
    again = ask(xb, prompt, "s-3")
    assert MEMORY not in [r["id"] for r in again["results"]]
    assert {"id": MEMORY, "reason": "shown this session"} in again["skipped"]
    skill = ask(xb, "部署前要检查数据库迁移回滚吗", "s-3")["results"]
    assert [(r["kind"], r["disclosure"]) for r in skill] == [("skill", "pointer")]
    assert "xbrain skill recall --slug deploy-check" in skill[0]["text"]
    cited = ask(xb, "keyboard focus in an accessible React dialog", "s-3")["results"]
    assert cited[0]["kind"] == "resource" and cited[0]["disclosure"] == "candidate"
    assert "https://" in cited[0]["text"]


@pytest.mark.parametrize("prompt", ["ok thanks", "好的", "继续", "thanks!", "yes"])
def test_off_topic_prompts_recall_nothing(xb: Run, stocked: Path, prompt: str) -> None:
    assert ask(xb, prompt)["results"] == []


def test_a_store_path_that_is_no_store_is_said_as_search_says_it(xb: Run, tmp_path: Path) -> None:
    """recall answered nothing (exit 0) where search says what is wrong; a missing store
    still recalls nothing, and the hook still never fails what it hooks."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    other = tmp_path / "project"
    other.mkdir()
    (other / "main.c").write_text("int main;")
    for path, why in ((a_file, "not a directory"), (other, "without .git")):
        for command in (
            ("recall", "-"),
            ("search", "deploy"),
            ("telemetry",),
            ("delete", "resource_" + "0" * 64),
            ("entry", "delete", "entry_" + "0" * 64),
        ):
            result = xb(*command, input="how do I deploy", store=path)
            assert result.code == 7 and why in result.stderr, (command, result.stderr)
    assert xb("recall", "-", input="how do I deploy", store=tmp_path / "none").json == {
        "results": [],
        "skipped": [],
        "budget": {"limit": 8000, "used": 0},
    }
    payload = {"prompt": "how do I deploy", "session_id": "s", "cwd": str(tmp_path)}
    hook = subprocess.run(
        [sys.executable, "-m", "xbrain", "hook", "claude-code"],
        input=json.dumps({**payload, "hook_event_name": "UserPromptSubmit"}),
        capture_output=True,
        text=True,
        env={**os.environ, "XBRAIN_STORE": str(a_file)},
    )
    assert (hook.returncode, hook.stdout) == (0, "")


def test_retired_scoped_and_untrusted_entries(xb: Run, stocked: Path) -> None:
    assert xb("entry", "retire", RULE).code == 0
    assert ask(xb, "git push --force?")["results"] == []
    assert ask(xb, "git push --force?", None, "--include-retired")["results"][0]["id"] == RULE
    scoped = {
        "kind": "rule",
        "name": "lint-first",
        "scope": "project:example.org/team/app",
        "queries": ["run the linter before commit"],
        "body": "Run make lint.",
        "trust": "untrusted",
        "provenance": "https://example.org/team/app/RULES.md",
    }
    assert xb("entry", "put", "-", input=json.dumps(scoped)).code == 0
    prompt = "should I run the linter before commit"
    assert ask(xb, prompt)["results"] == []  # another project (the cwd's)
    here = ask(xb, prompt, None, "--project", "example.org/team/app")["results"]
    assert here[0]["name"] == "lint-first" and here[0]["trust"] == "untrusted"
    assert here[0]["text"].startswith("[untrusted, from https://example.org/team/app/RULES.md")


def test_the_project_comes_from_the_payloads_git_remote(
    xb: Run, stocked: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "work" / "app"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = git@Example.org:Team/App.git\n'
    )
    entry = {
        "kind": "rule",
        "name": "app-only",
        "scope": "project:example.org/team/app",
        "queries": ["deploy the app service"],
        "body": "Use the blue-green script.",
    }
    assert xb("entry", "put", "-", input=json.dumps(entry)).code == 0
    payload = {"prompt": "how do I deploy the app service", "cwd": str(repo / "src")}
    found = xb("recall", "-", input=json.dumps(payload)).json["results"]
    assert [r["name"] for r in found][:1] == ["app-only"]


def test_a_linked_worktree_and_a_submodule_take_their_repositorys_remote(
    xb: Run, stocked: Path, tmp_path: Path
) -> None:
    """A worktree's ``.git`` is a file naming its git dir, whose ``commondir`` names the
    main repository (where the remote is); a submodule's git dir holds its own config.
    Both were read as no repository: the project became the encoded path."""
    main = tmp_path / "app"
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    (main / ".git" / "config").write_text('[remote "origin"]\n\turl = https://x.org/Team/App\n')
    (main / ".git" / "worktrees" / "feature" / "commondir").write_text("../..\n")
    feature = tmp_path / "app-feature"
    (feature / "src").mkdir(parents=True)
    (feature / ".git").write_text(f"gitdir: {main}/.git/worktrees/feature\n")
    (main / ".git" / "modules" / "lib").mkdir(parents=True)
    (main / ".git" / "modules" / "lib" / "config").write_text(
        '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@x.org:team/lib.git\n'
    )
    (main / "lib").mkdir()
    (main / "lib" / ".git").write_text("gitdir: ../.git/modules/lib\n")
    entries = [
        {"kind": "rule", "name": n, "scope": s, "queries": ["deploy the app service"], "body": n}
        for n, s in (("app", "project:x.org/team/app"), ("lib", "project:x.org/team/lib"))
    ]
    assert xb("entry", "put", "-", input=json.dumps(entries)).code == 0

    def names(cwd: Path) -> list[str]:
        payload = {"prompt": "how do I deploy the app service", "cwd": str(cwd)}
        result = xb("recall", "-", "--only", "rule", input=json.dumps(payload))
        return [r["name"] for r in result.json["results"]]

    assert names(main) == ["app"]
    assert names(feature / "src") == ["app"]
    assert names(main / "lib") == ["lib"]
    (feature / ".git").write_text("gitdir: " + "x" * 5000)  # not a pointer we can follow
    assert names(feature / "src") == []
    # a name too long to look up (the payload allows 4,096 characters) was exit 1
    assert names(tmp_path / ("d" * (4090 - len(str(tmp_path))))) == []


def test_a_fifo_in_the_callers_repository_never_holds_recall(
    xb: Run, stocked: Path, tmp_path: Path
) -> None:
    """The ``cwd`` is the caller's: a ``.git`` pointer naming a git dir whose
    ``commondir`` (or ``config``) is a FIFO made recall wait forever, and with it every
    prompt's hook in that folder."""
    repo = tmp_path / "repo"
    (repo / "g").mkdir(parents=True)
    (repo / ".git").write_text("gitdir: g\n")
    os.mkfifo(repo / "g" / "commondir")
    os.mkfifo(repo / "g" / "config")
    payload = {"prompt": "how do I deploy the app service", "cwd": str(repo / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "xbrain", "recall", "-", "--store", str(stocked)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0 and "results" in json.loads(done.stdout), done.stderr


def test_a_mapped_folder_wins_over_the_remote_and_the_encoded_path(
    xb: Run, stocked: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "work" / "app"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text('[remote "origin"]\n\turl = https://x.org/a/b.git\n')
    entries = [
        {"kind": "rule", "name": n, "scope": s, "queries": ["deploy the app service"], "body": n}
        for n, s in (
            ("mapped", "project:acme/app"),
            ("remote", "project:x.org/a/b"),
            ("encoded", "project:" + str(tmp_path / "loose").replace("/", "-").strip("-").lower()),
        )
    ]
    assert xb("entry", "put", "-", input=json.dumps(entries)).code == 0

    def names(cwd: Path) -> list[str]:
        payload = {"prompt": "how do I deploy the app service", "cwd": str(cwd)}
        result = xb("recall", "-", "--only", "rule", input=json.dumps(payload))
        return [r["name"] for r in result.json["results"]]

    (tmp_path / "loose").mkdir()
    assert names(repo / "src") == ["remote"]
    assert names(tmp_path / "loose") == ["encoded"]
    shown = xb("config", f"projects.{repo}/", "Acme/App")  # normalized and lowercased
    assert shown.code == 0 and shown.json["projects"] == {str(repo): "acme/app"}
    assert names(repo / "src") == ["mapped"]  # a folder below the mapped one too
    assert names(tmp_path / "loose") == ["encoded"]
    assert xb("config", f"projects.{repo}", "").json["projects"] == {}
    assert names(repo / "src") == ["remote"]
    before = head(stocked)
    for key, value in (("projects.rel/dir", "a"), (f"projects.{repo}", "a b"), ("projects.", "a")):
        refused = xb("config", key, value)
        assert refused.code == 4 and refused.stderr.count("\n") == 1, refused.stderr
    assert head(stocked) == before


def test_budget_skips_what_does_not_fit_and_tries_the_next(xb: Run, stocked: Path) -> None:
    big = {"kind": "rule", "name": "big", "queries": ["release checklist steps"], "body": "x" * 900}
    small = {
        "kind": "rule",
        "name": "small",
        "queries": ["release checklist steps"],
        "body": "Tag it.",
        "boost": -0.05,
    }
    assert xb("entry", "put", "-", input=json.dumps([big, small])).code == 0
    found = ask(xb, "what are the release checklist steps", None, "--budget", "300")
    assert [r["name"] for r in found["results"] if r["kind"] == "rule"] == ["small"]
    assert {"id": entry_id("global", "big"), "reason": "budget"} in found["skipped"]
    used = sum(len(r["text"]) for r in found["results"])
    assert found["budget"] == {"limit": 300, "used": used} and used <= 300
    assert xb("recall", "-", "--budget", "5", input="x").code == 4


def fixed(scores: list[float]) -> list[Any]:
    return [(s, {"id": f"entry_{i}"}, {}) for i, s in enumerate(scores)]


def test_relative_and_absolute_scoring_with_fixed_scores() -> None:
    scores = [0.9, 0.85, 0.75, 0.6, 0.3]
    relative, cut = choose(fixed(scores), Options(threshold=0.5, max_dropoff=0.1, top_k=3))
    assert [s for s, _, _ in relative] == [0.9, 0.85]
    assert [c["reason"] for c in cut] == ["dropoff", "dropoff"]  # 0.75, 0.6 cleared; 0.3 not
    absolute, cut = choose(fixed(scores), Options(scoring="absolute", threshold=0.5, top_k=3))
    assert [s for s, _, _ in absolute] == [0.9, 0.85, 0.75]
    assert cut == [{"id": "entry_3", "reason": "top-k"}]
    assert choose(fixed([0.45, 0.44]), Options(threshold=0.5))[0] == []
    wide, _ = choose(fixed([0.45, 0.44]), Options(scoring="absolute", threshold=0.4))
    assert len(wide) == 2


ITEMS = st.lists(
    st.tuples(st.integers(1, 3000), st.integers(0, 200), st.sampled_from(["rule", "memory"])),
    max_size=12,
)


@given(ITEMS, st.integers(100, 5000))
def test_the_budget_is_never_exceeded_and_nothing_is_cut(items: list[Any], budget: int) -> None:
    candidates = [
        {
            "id": f"entry_{i}",
            "kind": kind,
            "name": str(i),
            "score": 1.0,
            "why": {},
            "full": "f" * size,
            "short": "s" * short if kind == "rule" else "",
            "revision": "r",
        }
        for i, (size, short, kind) in enumerate(items)
    ]
    results, skipped, used = fill_budget(candidates, {}, budget)
    assert used == sum(len(r["text"]) for r in results) <= budget
    for result, item in ((r, candidates[int(r["name"])]) for r in results):
        assert result["text"] in (item["full"], item["short"])  # whole texts only
    assert len(results) + len(skipped) == len(candidates)
    shown = {r["id"]: r for r in results}
    running = 0
    for item in candidates:  # greedy: a skipped item fitted neither way at its turn
        if item["id"] in shown:
            running += len(shown[item["id"]]["text"])
            continue
        fits = [len(text) for text in (item["full"], item["short"]) if text]
        assert min(fits) > budget - running
    assert all(s["reason"] == "budget" for s in skipped)


@pytest.mark.slow
def test_concurrent_hook_processes_of_one_session(stocked: Path) -> None:
    """16 hook processes of one session at once: none fails, the rule is shown in full by
    exactly one of them, and the session state and telemetry stay whole."""
    import os
    import sqlite3

    from tests.conftest import ROOT

    payload = json.dumps(
        {
            "prompt": "can I git push --force?",
            "session_id": "busy-1",
            "cwd": "/tmp",
            "hook_event_name": "UserPromptSubmit",
        }
    )
    # (what is tested is 16 at once, not each within a hook's 5 s: on a loaded 2-core CI
    # machine one of them can take longer, and then says nothing, as a hook must)
    env = {
        **os.environ,
        "XBRAIN_STORE": str(stocked),
        "XBRAIN_BIN": "",
        "XBRAIN_HOOK_TIMEOUT": "120",
    }
    procs = [
        subprocess.Popen(
            [sys.executable, str(ROOT / "hooks" / "claude_recall.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(16)
    ]
    outs = [proc.communicate(payload.encode(), timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 16
    assert all(err == b"" for _, err in outs)
    contexts = [json.loads(out)["hookSpecificOutput"]["additionalContext"] for out, _ in outs]
    full = [c for c in contexts if "Use `--force-with-lease`" in c]
    short = [c for c in contexts if "Rule: no force-push on shared branches." in c]
    assert (len(full), len(short)) == (1, 15)  # exactly one saw it first
    state = stocked / ".git/xbrain/sessions/busy-1.json"
    assert list(json.loads(state.read_text())["shown"]) == [RULE]
    assert oct(state.stat().st_mode & 0o777) == "0o600"
    with sqlite3.connect(stocked / ".git/xbrain/telemetry.sqlite") as conn:
        rows = conn.execute("SELECT disclosure, COUNT(*) FROM shown GROUP BY disclosure").fetchall()
    assert dict(rows) == {"full": 1, "one-liner": 15}


def test_outputs_match_the_schema_and_the_entry_cache_follows_commits(
    xb: Run, stocked: Path
) -> None:
    from xbrain.schemas import schema_errors

    for prompt in ("can I git push --force?", "部署前要检查数据库迁移回滚吗", "ok thanks"):
        assert schema_errors("recall-output", ask(xb, prompt, "s-9")) == []
    cache = stocked / ".git/xbrain/entries.sqlite"

    def cached_commit() -> str:
        import sqlite3

        with sqlite3.connect(cache) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
        return str(row[0])

    assert cached_commit() == (stocked / ".git/refs/heads/main").read_text().strip()
    rule = {
        "kind": "rule",
        "name": "fresh",
        "queries": ["rotate the api keys"],
        "body": "Use the vault.",
    }
    assert xb("entry", "put", "-", input=json.dumps(rule)).code == 0
    head = (stocked / ".git/refs/heads/main").read_text().strip()
    assert cached_commit() == head  # the put's hook moved it
    assert ask(xb, "how do I rotate the api keys")["results"][0]["name"] == "fresh"
    assert oct(cache.stat().st_mode & 0o777) == "0o600"
    # recall's own files (caches, session state and its lock, telemetry) are private and
    # none of them is taken for a git writer's leftover
    report = xb("doctor").json
    assert report["ok"] is True, report["problems"]


def test_a_one_word_query_or_name_still_matches_a_one_word_prompt(xb: Run, stocked: Path) -> None:
    entries = [
        {"kind": "rule", "name": "k8s", "queries": ["kubernetes"], "body": "Use kubectl."},
        {"kind": "memory", "name": "tabs", "body": "This team indents with tabs."},
    ]
    assert xb("entry", "put", "-", input=json.dumps(entries)).code == 0
    assert [r["name"] for r in ask(xb, "kubernetes?")["results"]] == ["k8s"]
    assert [r["name"] for r in ask(xb, "tabs")["results"]] == ["tabs"]


def test_telemetry_is_local_holds_no_prompt_text_and_can_be_switched_off(
    xb: Run, stocked: Path
) -> None:
    secret_prompt = "can I git push --force to the zebra-unicorn branch?"
    ask(xb, secret_prompt, "t-1", hook_event_name="UserPromptSubmit")
    ask(xb, "git push --force again", "t-1", hook_event_name="UserPromptSubmit")
    ask(xb, "git push --force", "t-2")
    from xbrain.schemas import schema_errors

    report = xb("telemetry").json
    assert schema_errors("telemetry-output", report) == []
    assert schema_errors("telemetry-output", xb("telemetry", "--session", "t-1").json) == []
    assert schema_errors("telemetry-output", xb("telemetry", "--unused").json) == []
    (rule,) = [e for e in report["entries"] if e["id"] == RULE]
    assert (rule["matches"], rule["sessions"], rule["name"]) == (3, 2, "no-force-push")
    assert rule["queries"] == {"git push --force": 3}
    assert rule["first"] <= rule["last"]
    trace = xb("telemetry", "--session", "t-1").json["trace"]
    assert [(t["id"], t["disclosure"], t["event"]) for t in trace] == [
        (RULE, "full", "UserPromptSubmit"),
        (RULE, "one-liner", "UserPromptSubmit"),
    ]
    unused = {e["name"] for e in xb("telemetry", "--unused").json["unused"]}
    assert "no-force-push" not in unused and "review-checklist" in unused
    database = stocked / ".git/xbrain/telemetry.sqlite"
    assert b"zebra" not in database.read_bytes()
    assert oct(database.stat().st_mode & 0o777) == "0o600"
    assert (
        "telemetry"
        not in subprocess.run(
            ["git", "-C", str(stocked), "ls-files"], capture_output=True, text=True
        ).stdout
    )
    off = xb("config", "telemetry", "off")
    assert off.code == 0 and off.json["telemetry"] == "off" and off.json["commit"] is None
    ask(xb, "git push --force", "t-3")
    assert xb("telemetry").json["enabled"] is False
    assert xb("telemetry", "--session", "t-3").json["trace"] == []
    assert xb("config", "telemetry", "maybe").code == 2
    assert xb("config", "telemetry", "on").json["telemetry"] == "on"


def test_telemetry_clear_erases_the_rows_from_the_files_and_keeps_the_switch(
    xb: Run, stocked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from xbrain.recall import telemetry

    # SQLite's own default is secure_delete off (Debian's build turns it on): hold every
    # connection to the stock default, so only what clear() does itself can erase
    connect = telemetry._connect

    def stock(control: Path) -> Any:
        conn = connect(control)
        conn.execute("PRAGMA secure_delete=OFF")
        return conn

    monkeypatch.setattr(telemetry, "_connect", stock)

    ask(xb, "git push --force", "t-1")
    ask(xb, "git push --force", "t-2")
    shown = {"id": RULE, "kind": "rule", "disclosure": "one-liner", "why": {"via": "query"}}
    for i in range(40):  # enough rows for pages that a plain DELETE would only free
        telemetry.record(stocked / ".git", f"old-{i}", "UserPromptSubmit", [shown] * 50)
    database = stocked / ".git/xbrain/telemetry.sqlite"
    files = [database, database.with_name("telemetry.sqlite-wal")]
    assert any(RULE.encode() in f.read_bytes() for f in files if f.exists())
    assert xb("telemetry", "--clear", "--unused").code == 2  # one question at a time
    assert xb("telemetry", "--session", "t-1").json["trace"] != []
    cleared = xb("telemetry", "--clear")
    from xbrain.schemas import schema_errors

    assert cleared.code == 0 and schema_errors("telemetry-output", cleared.json) == []
    assert cleared.json == {"enabled": True, "cleared": 2 + 40 * 50}
    assert xb("telemetry").json["entries"] == []
    assert xb("telemetry", "--session", "t-1").json["trace"] == []
    # erased, not only unlinked: no free page or WAL frame keeps an id
    assert not any(RULE.encode() in f.read_bytes() for f in files if f.exists())
    assert oct(database.stat().st_mode & 0o777) == "0o600"
    ask(xb, "git push --force", "t-3")  # recording goes on as it was switched
    assert [e["matches"] for e in xb("telemetry").json["entries"] if e["id"] == RULE] == [1]
    assert xb("telemetry", "--clear").json["cleared"] == 1
    assert xb("telemetry", "--clear").json["cleared"] == 0


def test_recall_defaults_live_in_the_store_settings(xb: Run, stocked: Path) -> None:
    entries = [
        {
            "kind": "rule",
            "name": f"restart-{i}",
            "queries": ["restart the web service"],
            "body": f"Step {i}.",
        }
        for i in range(3)
    ]
    assert xb("entry", "put", "-", input=json.dumps(entries)).code == 0
    prompt = "how do I restart the web service"
    assert len([r for r in ask(xb, prompt)["results"] if r["kind"] == "rule"]) == 3
    set_one = xb("config", "recall.topK", "1")
    assert set_one.code == 0 and set_one.json["recall"] == {"topK": 1}
    assert len([r for r in ask(xb, prompt)["results"] if r["kind"] == "rule"]) == 1
    assert (
        len([r for r in ask(xb, prompt, None, "--top-k", "2")["results"] if r["kind"] == "rule"])
        == 2
    )
    assert xb("config", "recall.budget", "50").code == 4
    assert xb("config", "recall.scoring", "fuzzy").code == 4
    assert xb("config", "recall.threshold", "1.5").json["recall"] == {"threshold": 1.5, "topK": 1}
    assert [r for r in ask(xb, prompt)["results"] if r["kind"] == "rule"] == []
    assert xb("config").json["recall"] == {"threshold": 1.5, "topK": 1}


def test_an_entry_cache_of_an_older_shape_is_rebuilt(xb: Run, stocked: Path) -> None:
    import sqlite3

    cache = stocked / ".git/xbrain/entries.sqlite"
    ask(xb, "git push --force?")
    cache.unlink()
    with sqlite3.connect(cache) as conn:  # an earlier layout: no body column, old version
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("CREATE TABLE entry (i INTEGER PRIMARY KEY, id TEXT UNIQUE, data TEXT)")
        conn.execute("INSERT INTO meta VALUES ('version', '0')")
    found = ask(xb, "git push --force?")["results"]
    assert [r["id"] for r in found] == [RULE]
    cache.write_bytes(b"not a database at all")
    assert [r["id"] for r in ask(xb, "git push --force?")["results"]] == [RULE]


def test_a_hook_payload_is_bounded_before_it_reaches_telemetry(xb: Run, stocked: Path) -> None:
    import sqlite3

    odd = {
        "prompt": "can I git push --force?",
        "session_id": "../../etc/passwd",
        "hook_event_name": "x" * 5000,
        "cwd": "\u0000" * 10,
    }
    result = xb("recall", "-", input=json.dumps(odd))
    assert result.code == 0 and result.json["results"][0]["id"] == RULE
    # the session is kept under a digest of its id, inside the sessions folder only
    folder = stocked / ".git/xbrain/sessions"
    names = sorted(path.name for path in folder.iterdir() if path.name != ".swept")
    assert names == [f"{file_name(odd['session_id'])}.{ext}" for ext in ("json", "lock")]
    assert names[0].startswith("~") and not (stocked / ".git/etc").exists()
    with sqlite3.connect(stocked / ".git/xbrain/telemetry.sqlite") as conn:
        rows = list(conn.execute("SELECT event, session FROM shown"))
    assert rows == [(None, names[0].removesuffix(".json"))]


def test_recall_matches_other_forms_of_the_words_as_search_does(
    xb: Run, xb_proc: Run, stocked: Path, json_file: Callable[[Any], str]
) -> None:
    """A note about "sorting directory listings": `search` finds it for "sorted directory
    listing" (every word in some form), and so does recall now (issue 43 item 4: English
    stemming in recall as in search; it answered to the words as typed only before), as
    it does for the words the note holds. Both the in-process CLI and a fresh process
    (the fast path) agree."""
    from tests.conftest import make
    from xbrain.kinds.model import resource_id

    note = make("forms", title="Sorting directory listings", text="by modification time")
    assert xb("put", json_file(note)).code == 0
    rid = resource_id("web", "forms")
    for run in (xb, xb_proc):
        found = run("search", "sorted directory listing").json["results"]
        assert [r["resource"]["id"] for r in found] == [rid]
        asked = run("recall", "-", input="sorted directory listing")
        assert asked.code == 0, asked.err
        assert rid in [r["id"] for r in asked.json["results"]]
        typed = run("recall", "-", input="sorting directory listings").json["results"]
        assert rid in [r["id"] for r in typed]


def test_a_store_that_is_not_there_is_said_on_stderr(xb: Run, xb_proc: Run, tmp_path: Path) -> None:
    """Issue 44 item 7: ``search`` and ``recall`` on a store path that does not exist (or
    an empty folder) answered nothing, exit 0, with nothing on stderr — a mistyped
    --store looked like a store with nothing relevant in it. The answer stays empty and
    exit 0; one line on stderr now says there is no store, and nothing is created."""
    from xbrain.schemas import schema_errors

    empty = tmp_path / "empty"
    empty.mkdir()
    for where in (tmp_path / "no-such-store", empty):
        for run in (xb_proc, xb):  # the light path, and click's
            for argv, schema in ((("recall", "-"), "recall-output"), (("search", "deploy"), None)):
                result = run(*argv, input="how do I deploy", store=where)
                assert result.code == 0 and result.json["results"] == [], result
                if schema:
                    assert schema_errors(schema, result.json) == []
                assert result.stderr.count("\n") == 1, result.stderr
                assert result.stderr.startswith(f"No store at {where}: "), result.stderr
    assert not (tmp_path / "no-such-store").exists() and list(empty.iterdir()) == []


def test_reads_of_a_store_that_is_not_there_say_so(xb: Run, xb_proc: Run, tmp_path: Path) -> None:
    """A new user's trial: ``get ID --store /mistyped`` said only "Resource not found."
    and ``list`` printed an empty page with nothing on stderr, where ``search`` says there
    is no store. ``get`` and ``entry get`` now say it in their one line (exit 3 as
    before); ``list`` and ``entry list`` answer empty (exit 0) with the same line on
    stderr; nothing is created. A store that exists says only "not found"."""
    rid = "resource_" + "ab" * 32
    eid = "entry_" + "cd" * 32
    empty = tmp_path / "empty"
    empty.mkdir()
    for where in (tmp_path / "no-such-store", empty):
        for run in (xb_proc, xb):  # the light path, and click's
            for argv, what in ((("get", rid), "Resource"), (("entry", "get", eid), "Entry")):
                got = run(*argv, store=where)
                assert got.code == 3, got
                assert got.stderr.count("\n") == 1, got.stderr
                assert got.stderr.startswith(f"{what} not found. No store at {where}: ")
            for argv, key in ((("list",), "results"), (("entry", "list"), "entries")):
                listed = run(*argv, store=where)
                assert listed.code == 0 and listed.json[key] == [], listed
                assert listed.stderr.startswith(f"No store at {where}: "), listed.stderr
                assert listed.stderr.count("\n") == 1, listed.stderr
    assert not (tmp_path / "no-such-store").exists() and list(empty.iterdir()) == []
    there = tmp_path / "there"
    assert xb_proc("put", str(EXAMPLES / "synthetic-resource.json"), store=there).code == 0
    missing = xb_proc("get", rid, store=there)
    assert missing.code == 3 and missing.stderr.strip() == "Resource not found.", missing
    listed = xb_proc("list", store=there)
    assert listed.code == 0 and listed.stderr == "", listed


ROUTED = [
    {
        "kind": "rule",
        "name": "migrations-reversible",
        "paths": ["migrations/**/*.py"],
        "body": "Every migration needs a downgrade that restores the old schema.",
        "oneLiner": "Migrations: write the downgrade.",
    },
    {"kind": "memory", "name": "sql-dialect", "paths": ["*.sql", "!legacy/**"], "body": "PG 16."},
    {"kind": "rule", "name": "prompt-only", "paths": ["*.sql"], "events": ["UserPromptSubmit"]},
    {"kind": "stop-rule", "name": "never-by-path", "paths": ["**"], "body": "Stop."},
]


def test_paths_route_entries_to_the_file_a_tool_names(
    xb: Run, xb_proc: Run, store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 44 item 6: an entry's ``paths`` were stored but never used — a rule with
    ``migrations/**/*.py`` was not recalled when the agent edited
    ``migrations/versions/0042_add_col.py``. A PreToolUse payload of a tool that names a
    file, and ``recall --path FILE``, now recall the entries whose globs match the file
    relative to the project root (the git work tree above the cwd), with graduated
    disclosure; a stop-rule is never routed, an entry's events still hold, a file
    outside the project matches nothing."""
    from xbrain.schemas import schema_errors

    assert xb("entry", "put", "-", input=json.dumps(ROUTED)).code == 0
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "migrations" / "versions").mkdir(parents=True)
    target = project / "migrations" / "versions" / "0042_add_col.py"

    def tool(name: str, file: str, **more: Any) -> str:
        key = "notebook_path" if name == "NotebookEdit" else "file_path"
        payload = {"hook_event_name": "PreToolUse", "session_id": "p-1", "cwd": str(project)}
        return json.dumps({**payload, "tool_name": name, "tool_input": {key: file}, **more})

    rule = entry_id("global", "migrations-reversible")
    first = xb_proc("recall", "-", input=tool("Edit", str(target)))
    assert first.code == 0 and schema_errors("recall-output", first.json) == []
    (hit,) = first.json["results"]
    assert (hit["id"], hit["disclosure"]) == (rule, "full")
    assert hit["why"] == {
        "via": "path",
        "glob": "migrations/**/*.py",
        "matched": ["migrations/versions/0042_add_col.py"],
    }
    again = xb_proc("recall", "-", input=tool("Write", str(target))).json["results"]
    assert [(r["id"], r["disclosure"], r["text"]) for r in again] == [
        (rule, "one-liner", "Migrations: write the downgrade.")
    ]
    for name, file, names in (
        ("Read", "db/schema.sql", ["sql-dialect"]),  # relative: from the cwd; memory once
        ("NotebookEdit", "db/schema.sql", []),
        ("MultiEdit", "legacy/old.sql", []),  # taken back by !legacy/**
        ("Edit", str(tmp_path / "elsewhere" / "migrations" / "a.py"), []),  # outside
        ("Bash", str(target), []),  # a tool that names no file
    ):
        found = xb_proc("recall", "-", input=tool(name, file)).json["results"]
        assert [r["name"] for r in found] == names, (name, file)
    # the command line: --path FILE from a folder inside the project, stdin optional
    proc = subprocess.run(
        [sys.executable, "-m", "xbrain", "recall", "--path", "versions/0042_add_col.py"],
        cwd=project / "migrations",
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "XBRAIN_STORE": str(store_dir)},
    )
    assert proc.returncode == 0, proc.stderr
    names = [r["name"] for r in json.loads(proc.stdout)["results"]]
    assert names == ["migrations-reversible"]  # the prompt-only rule keeps its event
    monkeypatch.chdir(project)  # click's path: the project is the caller's cwd
    both = xb("recall", "-", "--path", str(project / "a.sql"), input="can I git push --force?")
    assert [r["name"] for r in both.json["results"]] == ["sql-dialect", "prompt-only"]
    assert schema_errors("recall-output", both.json) == []
    (tmp_path / "other" / ".git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "other")  # the same file, from another project: no route
    assert xb("recall", "-", "--path", str(project / "a.sql"), input="").json["results"] == []
    stats = {e["name"]: e["queries"] for e in xb("telemetry").json["entries"] if "name" in e}
    assert stats["migrations-reversible"] == {"migrations/**/*.py": 3}  # its glob, not text


def test_a_superseded_or_proposed_entry_is_not_routed_by_its_paths(
    xb_proc: Run, tmp_path: Path
) -> None:
    """Merging paths routing with superseding: a routed entry skipped the check that a
    prompt-matched one gets, so the rule a newer one replaced was still shown on edits."""
    old = {"kind": "rule", "name": "mig-v1", "paths": ["migrations/**"], "body": "Old way."}
    new = {
        "kind": "rule",
        "name": "mig-v2",
        "paths": ["migrations/**"],
        "body": "New way.",
        "supersedes": [entry_id("global", "mig-v1")],
    }
    maybe = {"kind": "rule", "name": "mig-maybe", "paths": ["migrations/**"], "status": "proposed"}
    assert xb_proc("entry", "put", "-", input=json.dumps([old, new, maybe])).code == 0
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    edit = {
        "hook_event_name": "PreToolUse",
        "cwd": str(project),
        "tool_name": "Edit",
        "tool_input": {"file_path": str(project / "migrations" / "0001.py")},
    }

    def names(*more: str) -> list[str]:
        found = xb_proc("recall", "-", *more, input=json.dumps(edit))
        assert found.code == 0, found.stderr
        return sorted(r["name"] for r in found.json["results"])

    assert names() == ["mig-v2"]
    assert names("--include-superseded") == ["mig-v1", "mig-v2"]
