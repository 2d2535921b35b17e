"""Hostile input to the resources' supersede, validity and review: bad dates, unknown
ids, a resource superseding itself, supersede cycles — one line on stderr, exit 4 (3 for
what is not there), nothing changed — and sidecars arriving from a remote: one that
names a missing resource is inert, a malformed one is refused before ``main`` moves."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, head, make, snapshot_files
from tests.security.mallory import git
from tests.security.test_hostile_remote import _nested, hostile_push

Run = Callable[..., Result]
MISSING = "resource_" + "ab" * 32


def refused(run: Run, store: Path, code: int, *args: str, input: Any = None) -> None:
    before = snapshot_files(store)
    result = run(*args, input=input)
    assert result.code == code, (result.code, result.stderr)
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert snapshot_files(store) == before


def two(xb: Run) -> tuple[str, str]:
    result = xb("put", "-", input=[make("a"), make("b")])
    assert result.code == 0, result.stderr
    first, second = (r["id"] for r in result.json["results"])
    return first, second


@pytest.mark.parametrize(
    "extra",
    [
        {"validFrom": "2024-13-01"},
        {"validUntil": "soon"},
        {"validFrom": "2024-02-01", "validUntil": "2024-01-01"},
        {"validFrom": "2024-01-01", "validUntil": "2024-01-01"},
        {"supersedes": ["resource_nothex"]},
        {"supersedes": ["../../etc/passwd"]},
        {"supersedes": {"a": 1}},
        {"supersedes": ["resource_" + f"{n:064x}" for n in range(51)]},
    ],
)
def test_bad_fact_fields_change_nothing(xb: Run, store_dir: Path, extra: dict[str, Any]) -> None:
    two(xb)
    refused(xb, store_dir, 4, "put", "-", input={**make("c"), **extra})


@pytest.mark.parametrize(
    "options",
    [
        ("--valid-from", "yesterday"),
        ("--valid-until", "2024-02-30"),
        ("--supersedes", "entry_" + "0" * 64),
    ],
)
def test_bad_put_options_change_nothing(xb: Run, store_dir: Path, options: tuple[str, ...]) -> None:
    two(xb)
    refused(xb, store_dir, 4, "put", "-", *options, input=make("c"))


def test_unknown_ids_self_and_cycles_are_refused(xb_proc: Run, store_dir: Path) -> None:
    a, b = two(xb_proc)
    refused(xb_proc, store_dir, 3, "put", "-", "--supersedes", MISSING, input=make("c"))
    refused(xb_proc, store_dir, 3, "supersede", MISSING, a)
    refused(xb_proc, store_dir, 3, "supersede", a, MISSING)
    refused(xb_proc, store_dir, 4, "supersede", a, a)
    refused(xb_proc, store_dir, 4, "supersede", "../../x", a)
    refused(xb_proc, store_dir, 4, "supersede", a, "entry_" + "0" * 64)  # two kinds
    refused(xb_proc, store_dir, 4, "put", "-", "--supersedes", a, input=make("a"))  # itself
    assert xb_proc("supersede", a, b).code == 0
    refused(xb_proc, store_dir, 4, "supersede", b, a)  # a cycle: each would hide the other
    c = xb_proc("put", "-", "--supersedes", b, input=make("c")).json["results"][0]["id"]
    refused(xb_proc, store_dir, 4, "supersede", c, a)  # a longer cycle: a → b → c → a
    newer = make("a", title="x", updatedAt="2027-01-01T00:00:00Z")
    refused(xb_proc, store_dir, 4, "put", "-", "--supersedes", c, input=newer)


def test_bad_review_commands_change_nothing(xb: Run, store_dir: Path) -> None:
    a, _ = two(xb)
    refused(xb, store_dir, 4, "review", "accept", a)  # in force, not proposed
    refused(xb, store_dir, 3, "review", "accept", MISSING)
    refused(xb, store_dir, 4, "review", "reject", a, "--reason", "no")
    assert xb("config", "review.agentWrites", "proposed").code == 0
    new = xb("put", "-", "--agent", "x", input=make("c")).json["results"][0]["id"]
    refused(xb, store_dir, 4, "review", "reject", new, "--reason", "line\nbreak")
    refused(xb, store_dir, 4, "review", "accept", new, a)  # all or none


@pytest.fixture
def pushed(xb: Run, tmp_path: Path, store_dir: Path) -> tuple[Path, str, str]:
    if shutil.which("git") is None:
        pytest.skip("the git binary is needed")
    remote = tmp_path / "backup.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    a, b = two(xb)
    assert xb("remote", "add", "origin", str(remote)).code == 0
    assert xb("remote", "push").code == 0
    return remote, a, b


def _sidecar(rid: str) -> str:
    return f"resource-facts/{rid[9:11]}/{rid}.yaml"


def test_a_sidecar_from_a_remote_naming_a_missing_resource_is_inert(
    xb: Run, pushed: tuple[Path, str, str]
) -> None:
    remote, a, b = pushed
    text = f"supersedes: [{a}]\nstatus: proposed\nupdatedAt: '2026-01-01T00:00:00.000Z'\n"
    hostile_push(remote, [_nested(remote, _sidecar(MISSING), text)])
    pulled = xb("remote", "pull")
    assert pulled.code == 0, pulled.stderr
    assert xb("search", "Fictional dialog", "--mode", "lexical").json["results"]
    found = {
        r["citation"]["id"] for r in xb("search", "dialog", "--mode", "lexical").json["results"]
    }
    assert a in found and b in found  # a missing resource supersedes nothing
    assert xb("review").json["count"] == 0  # and proposes nothing
    assert xb("get", MISSING).code == 3
    assert xb("review", "accept", MISSING).code == 3
    assert "supersededBy" not in xb("log", a).json
    assert xb("doctor").json["ok"] is True


@pytest.mark.parametrize(
    "text",
    [
        "supersedes: [../../etc]\nupdatedAt: '2026-01-01T00:00:00.000Z'\n",
        "status: accepted\nupdatedAt: '2026-01-01T00:00:00.000Z'\n",
        "evil: 1\nupdatedAt: '2026-01-01T00:00:00.000Z'\n",
        "supersedes: [resource_x]\n",
        "[1, 2",
    ],
)
def test_a_malformed_sidecar_from_a_remote_is_refused_before_main_moves(
    xb: Run, store_dir: Path, pushed: tuple[Path, str, str], text: str
) -> None:
    remote, a, _ = pushed
    hostile_push(remote, [_nested(remote, _sidecar(a), text)])
    before = head(store_dir)
    result = xb("remote", "pull")
    assert result.code != 0 and result.stdout == ""
    assert head(store_dir) == before
    assert xb("doctor").json["ok"] is True
    assert git(remote, "rev-parse", "main") != before


@pytest.mark.parametrize(
    ("args", "extra", "said"),
    [
        (("--supersedes", "notanid"), {}, '"notanid" is not a resource id'),
        (("--supersedes", "entry_" + "0" * 64), {}, "is an entry id"),
        ((), {"supersedes": [123]}, "123 is not a resource id"),
        ((), {"supersedes": ["x\u202e\n" * 40]}, "is not a resource id"),
        ((), {"supersedes": MISSING}, "must be a list of resource ids"),
        ((), {"supersedes": ["resource_" + f"{n:064x}" for n in range(51)]}, "at most 50"),
    ],
)
def test_a_bad_supersedes_says_what_is_wrong(
    xb: Run, store_dir: Path, args: tuple[str, ...], extra: dict[str, Any], said: str
) -> None:
    two(xb)
    before = snapshot_files(store_dir)
    result = xb("put", "-", *args, input={**make("c"), **extra})
    assert result.code == 4 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and said in result.stderr
    assert len(result.stderr) < 300
    assert snapshot_files(store_dir) == before


def test_review_of_a_bad_id_names_both_kinds(xb: Run, store_dir: Path) -> None:
    a, _ = two(xb)
    for verb in (("accept",), ("reject", "--reason", "no")):
        refused(xb, store_dir, 4, "review", verb[0], a, "garbage", *verb[1:])
        result = xb("review", verb[0], a, "garbage", *verb[1:])
        assert "expected entry_ or resource_" in result.stderr and "garbage" in result.stderr
