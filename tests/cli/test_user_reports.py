"""What a new user found (issue 12): backups that restore, writes and merges that report."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, make, sample
from xbrain.kinds.model import resource_id
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
ID = resource_id("web", "fictional-dialog-guide")
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is needed")


def _backup_restores(xb: Run, tmp_path: Path, remote: Path) -> None:
    store = tmp_path / "store"
    assert xb("put", str(EXAMPLES / "batch.json"), store=store).code == 0
    assert xb("remote", "add", "origin", str(remote), store=store).code == 0
    assert xb("remote", "push", store=store).code == 0
    verified = xb("remote", "verify", store=store)
    assert verified.code == 0 and verified.json["ok"] is True, verified.stdout + verified.stderr
    restored = xb("clone", str(remote), str(tmp_path / "restored"), store=None)
    assert restored.code == 0, restored.stderr
    assert restored.json["status"]["resources"] == 2


@needs_git
def test_a_backup_into_git_init_bare_restores(xb: Run, tmp_path: Path) -> None:
    """Item 1: HEAD names master there; verify and clone said "is not an xbrain store"."""
    remote = tmp_path / "R.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "master", str(remote)], check=True)
    _backup_restores(xb, tmp_path, remote)


def test_a_backup_into_a_dulwich_bare_repository_restores(xb: Run, tmp_path: Path) -> None:
    from dulwich.repo import Repo

    remote = tmp_path / "D.git"
    Repo.init_bare(str(remote), mkdir=True, default_branch=b"master").close()
    _backup_restores(xb, tmp_path, remote)


@pytest.fixture
def two_devices(xb: Run, tmp_path: Path) -> tuple[Path, Path]:
    from dulwich.repo import Repo

    remote = tmp_path / "shared.git"
    Repo.init_bare(str(remote), mkdir=True, default_branch=b"main").close()
    a, b = tmp_path / "a", tmp_path / "b"
    assert xb("put", str(EXAMPLES / "synthetic-resource.json"), store=a).code == 0
    assert xb("remote", "add", "origin", str(remote), store=a).code == 0
    assert xb("remote", "push", store=a).code == 0
    assert xb("clone", str(remote), str(b), store=None).code == 0
    return a, b


def page(sid: str, url: str, **changes: Any) -> dict[str, Any]:
    """A resource for source id ``sid`` at ``url``."""
    value = sample(**changes)
    value["source"] = {"provider": "web", "id": sid, "url": url}
    return value


def _edit(xb: Run, store: Path, json_file: Callable[[Any], str], title: str, when: str) -> None:
    assert xb("put", json_file(sample(title=title, updatedAt=when)), store=store).code == 0


def test_a_merge_lists_what_it_dropped_and_diff_shows_it(
    xb: Run, json_file: Callable[[Any], str], two_devices: tuple[Path, Path]
) -> None:
    """Item 3: the older side's edit was dropped without a word; diff showed nothing."""
    a, b = two_devices
    _edit(xb, a, json_file, "Edited on A", "2026-10-09T00:00:00Z")  # newer: A's wins
    _edit(xb, b, json_file, "Edited on B", "2026-10-08T00:00:00Z")
    b_head = xb("log", store=b).json["commits"][0]["commit"]
    assert xb("remote", "push", store=b).code == 0
    pulled = xb("remote", "pull", store=a)
    assert pulled.code == 0 and pulled.json["state"] == "merged", pulled.stderr
    assert schema_errors("remote-pull-output", pulled.json) == []
    (entry,) = pulled.json["dropped"]
    assert entry["id"] == ID and entry["kept"] == "local"
    assert entry["dropped"]["updatedAt"] == "2026-10-08T00:00:00.000Z"
    assert entry["dropped"]["commit"] == b_head and entry["dropped"]["deleted"] is False
    assert xb("get", ID, store=a).json["title"] == "Edited on A"
    changes = xb("diff", ID, store=a).json["changes"]
    assert {"field": "title", "before": "Edited on B", "after": "Edited on A"} in changes
    # the other direction: B pulls and the remote's (A's) revision is kept
    assert xb("remote", "push", store=a).code == 0
    back = xb("remote", "pull", store=b)
    assert back.json["state"] == "fast_forward" and back.json["dropped"] == []


def test_put_reports_every_written_id(xb: Run, json_file: Callable[[Any], str]) -> None:
    """Item 5: put did not say which ids it wrote."""
    items = [
        make(n, source={"provider": "web", "id": n, "url": f"https://example.com/{n}"})
        for n in ("one", "two")
    ]
    first = xb("put", json_file(items)).json
    ids = [resource_id("web", "one"), resource_id("web", "two")]
    assert first["results"] == [{"id": i, "status": "added", "possibleConflicts": []} for i in ids]
    again = xb(
        "put",
        json_file([items[1], {**items[0], "title": "New", "updatedAt": "2026-10-09T00:00:00Z"}]),
    ).json
    assert again["results"] == [
        {"id": ids[1], "status": "unchanged", "possibleConflicts": []},
        {"id": ids[0], "status": "updated", "possibleConflicts": []},
    ]
    assert schema_errors("put-output", again) == []


def test_search_brief_keeps_output_small(xb: Run, json_file: Callable[[Any], str]) -> None:
    """Item 6: a 42 KB note gave 47 KB of search output."""
    long_text = (
        ("Filler paragraph about nothing much. " * 1100)
        + "The needle sentence mentions zeppelins. "
        + ("More filler. " * 200)
    )
    assert (
        xb("put", json_file(make("long", title="A long note", text=long_text[:49_000]))).code == 0
    )
    full = xb("search", "zeppelins")
    short = xb("search", "zeppelins", "--brief")
    assert full.code == short.code == 0
    assert len(full.stdout) > 40_000 and len(short.stdout) < 2_500
    (result,) = short.json["results"]
    assert "zeppelins" in result["brief"]["snippet"] and len(result["brief"]["snippet"]) <= 300
    assert result["citation"] == full.json["results"][0]["citation"]
    assert schema_errors("search-output", short.json) == []


def test_status_names_the_store_and_whether_it_exists(xb: Run, store_dir: Path) -> None:
    """Item 8: status of a mistyped --store looked like an empty store."""
    missing = xb("status").json
    assert missing["store"] == str(store_dir) and missing["exists"] is False
    assert not store_dir.exists()
    xb("init")
    found = xb("status").json
    assert found["exists"] is True and schema_errors("status-output", found) == []


def test_get_of_a_deleted_resource_says_how_to_restore_it(xb: Run) -> None:
    xb("put", str(EXAMPLES / "synthetic-resource.json"))
    deleted = xb("delete", ID).json["commit"]
    result = xb("get", ID)
    assert result.code == 3
    assert "deleted at" in result.stderr and deleted[:12] in result.stderr
    command = result.stderr.split("bring it back with ")[1].strip().rstrip(".")
    assert command == f"xbrain restore {ID} --at {deleted[:12]}~1"
    restored = xb(*command.split()[1:])
    assert restored.code == 0 and restored.json["restored"] is True
    assert xb("get", ID).code == 0


def test_stale_error_names_the_restore_command(xb: Run, json_file: Callable[[Any], str]) -> None:
    xb("put", json_file(sample(updatedAt="2026-10-07T00:00:00Z")))
    stale = xb("put", json_file(sample(title="Old", updatedAt="2026-10-01T00:00:00Z")))
    assert stale.code == 5 and f"xbrain restore {ID} --at REV" in stale.stderr


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"updatedAt": None}, "Missing updatedAt"),
        (
            {"useWhen": None, "usewhen": ["x"]},
            "Missing useWhen; every resource needs it. (unknown field usewhen — did you mean useWhen?)",
        ),
        ({"title": None}, "Missing title"),
    ],
)
def test_missing_fields_are_named_as_missing(
    xb: Run, json_file: Callable[[Any], str], change: dict[str, Any], message: str
) -> None:
    """Item 8: a missing updatedAt said "Invalid updatedAt"; usewhen went unnamed."""
    value = sample()
    for key, new in change.items():
        if new is None:
            del value[key]
        else:
            value[key] = new
    result = xb("put", json_file(value))
    assert result.code == 4 and result.stderr.startswith(message), result.stderr


def test_adopt_rejections_are_one_line_on_stderr(xb: Run, store_dir: Path) -> None:
    xb("put", str(EXAMPLES / "synthetic-resource.json"))
    record = next((store_dir / "resources").rglob("*.yaml"))
    record.write_text(record.read_text().replace("https://example.com", "http://example.com"))
    result = xb("adopt")
    assert result.code == 1 and result.json["rejected"]
    assert len(result.stderr.strip().splitlines()) == 1 and "rejected" in result.stderr


def test_identity_name_alone_is_used(xb: Run, store_dir: Path) -> None:
    """Item 9: identity.name alone silently did nothing."""
    out = xb("config", "identity.name", "Ada Lovelace").json
    assert out["identity"] == "Ada Lovelace <xbrain@localhost>"
    xb("put", str(EXAMPLES / "synthetic-resource.json"))
    assert (
        xb("log", "--limit", "1").json["commits"][0]["author"] == "Ada Lovelace <xbrain@localhost>"
    )
    assert (
        xb("config", "identity.email", "ada@example.org").json["identity"]
        == "Ada Lovelace <ada@example.org>"
    )


def test_the_same_page_under_several_ids_is_reported(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """Item 4: three source ids for one URL made three resources without a word."""
    url = "https://git-scm.com/docs/git-worktree"
    spellings = ["git-scm.com/docs/git-worktree", url, "git-worktree"]
    ids = [resource_id("web", sid) for sid in spellings]
    first = xb("put", json_file(page(spellings[0], url))).json
    assert "sameUrlAs" not in first["results"][0]
    second = xb(
        "put",
        json_file(page(spellings[1], url + "/#usage")),
    ).json
    assert second["results"][0]["sameUrlAs"] == [ids[0]]
    third = xb("put", json_file(page(spellings[2], url))).json
    assert third["results"][0]["sameUrlAs"] == sorted(ids[:2])
    assert schema_errors("put-output", third) == []
    # deleting one takes it out of the index
    assert xb("delete", ids[0]).code == 0
    again = xb(
        "put",
        json_file(page(spellings[2], url, title="Worktrees", updatedAt="2026-10-09T00:00:00Z")),
    ).json
    assert again["results"][0]["sameUrlAs"] == [ids[1]]
    assert xb("doctor").json["ok"] is True
    # search keeps the best of them and lists the others under it
    found = xb("search", "Worktrees fictional dialog").json["results"]
    urls = [r["citation"]["url"] for r in found]
    assert len(urls) == len(set(urls)) == 1, urls
    assert [s["id"] for s in found[0]["sameUrl"]] == [ids[1]] or found[0]["citation"]["id"] == ids[
        1
    ]
    assert (
        schema_errors(
            "search-output",
            {"mode": "lexical_candidates", "provider": None, "results": found, "guidance": ""},
        )
        == []
    )


def test_a_store_from_before_the_url_index_gets_it_on_its_next_write(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    url = "https://example.com/same"
    assert xb("put", json_file(page("a", url))).code == 0
    subprocess.run(["git", "-C", str(store_dir), "rm", "-rq", "index/urls"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(store_dir),
            "-c",
            "user.name=u",
            "-c",
            "user.email=u@x",
            "commit",
            "-qm",
            "older xbrain",
        ],
        check=True,
    )
    # no URL index at all is an older store, not damage (its next write builds it)
    assert {p["code"] for p in xb("doctor").json["problems"]} <= {"permissions"}
    assert not (store_dir / "index" / "urls").exists()
    result = xb("put", json_file(page("b", url))).json
    assert result["results"][0]["sameUrlAs"] == [resource_id("web", "a")]
    problems = xb("doctor").json["problems"]
    assert [p for p in problems if p["code"] != "permissions"] == []  # (git's own files)
    assert len(list((store_dir / "index" / "urls").glob("*.json"))) == 1


ODD = "x\udcffy"  # what Python makes of the bytes x, 0xff, y given on a command line


@pytest.mark.parametrize(
    "args",
    [
        ["skill", "log", ODD],
        ["skill", "recall", "--slug", ODD],
        ["skill", "diff", ODD, "1", "2"],
        ["skill", "publish", ODD, "1"],
        ["skill", "export", ODD, "out.zip"],
        ["config", "identity.name", ODD],
        ["config", "projects./tmp", ODD],
        ["show", resource_id("web", "fictional-dialog-guide"), "--at", ODD],
        ["entry", "get", ODD],
    ],
)
def test_an_argument_that_is_not_utf8_gets_an_answer_not_a_crash(
    xb: Run, store_dir: Path, tmp_path: Path, args: list[str]
) -> None:
    """Each crashed with "Internal error (UnicodeEncodeError)": a skill slug became a
    tree path, a setting went to the YAML emitter."""
    import os
    import sys

    xb("put", str(EXAMPLES / "synthetic-resource.json"))
    run = [sys.executable, "-m", "xbrain", *args, "--store", str(store_dir)]
    done = subprocess.run(run, capture_output=True, cwd=tmp_path, env=dict(os.environ))
    assert done.returncode in (3, 4), done.stderr
    assert b"Internal error" not in done.stderr and done.stderr.count(b"\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["skill", "log", "a" * 100_000],
        ["log", "--limit", "a" * 100_000],
        ["put", "/tmp/" + "a" * 100_000],
    ],
)
def test_a_huge_argument_is_not_printed_back_whole(
    xb_proc: Callable[..., Result], args: list[str]
) -> None:
    """Error lines quoted the argument back: 100 KB of stderr for a 100 KB argument."""
    refused = xb_proc(*args)
    assert refused.code in (2, 3, 4), refused.stderr
    assert refused.stderr.count("\n") == 1 and len(refused.stderr) < 600
    assert "a" * 150 in refused.stderr and "a…" in refused.stderr  # cut, not dropped


def test_no_help_text_cites_the_spec_users_do_not_have(xb: Run, xb_proc: Run) -> None:
    """Help texts said "SPEC §12" and "SPEC §13"; users have no SPEC."""
    from xbrain.cli import COMMANDS

    for args in ([], ["skill"], ["entry"]):  # the ones that cited it, as a user runs them
        shown = xb_proc(*args, "--help", store=None)
        assert shown.code == 0 and "SPEC" not in shown.stdout, args
    for name in COMMANDS:  # and every command's own help
        shown = xb(name, "--help", store=None)
        assert shown.code == 0 and "SPEC" not in shown.stdout, name
