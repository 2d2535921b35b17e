"""A remote cannot date a record years ahead: it would win every last-writer-wins merge
after it and sort first. The gate refuses a pulled record whose clock (``updatedAt``,
a tombstone's ``deletedAt``) is more than a day ahead of this machine's; commits are
crafted with the real git binary, as an attacker with push access would."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Result, head, snapshot_files
from tests.security.mallory import GIT_ENV, git

Run = Callable[..., Result]
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is needed")


@pytest.fixture
def backed_up(xb: Run, tmp_path: Path) -> Path:
    remote = tmp_path / "backup.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert xb("put", str(EXAMPLES / "batch.json")).code == 0
    assert xb("remote", "add", "origin", str(remote)).code == 0
    assert xb("remote", "push").code == 0
    return remote


def _push_dated(remote: Path, work: Path, when: str) -> tuple[Path, str]:
    """Clone the backup, re-date one resource (and retitle it), push; the record's
    path and its new title."""
    subprocess.run(
        ["git", "clone", "-q", str(remote), str(work)], check=True, env={**os.environ, **GIT_ENV}
    )
    record = sorted((work / "resources").rglob("*.yaml"))[0]
    text = record.read_text()
    text = re.sub(r"updatedAt: .*", f"updatedAt: '{when}'", text)
    text = re.sub(r"title: .*", "title: Dated by mallory", text)
    record.write_text(text)
    git(work, "commit", "-qam", "innocent")
    git(work, "push", "-q", "origin", "main")
    return record, "Dated by mallory"


def _ahead(**delta: float) -> str:
    moment = datetime.now(timezone.utc) + timedelta(**delta)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def test_a_pulled_record_dated_years_ahead_is_refused(
    xb: Run, backed_up: Path, store_dir: Path, tmp_path: Path
) -> None:
    record, title = _push_dated(backed_up, tmp_path / "work", "2099-01-01T00:00:00.000Z")
    before, files = head(store_dir), snapshot_files(store_dir)
    refused = xb("remote", "pull")
    assert refused.code == 4, refused.stderr
    assert "2099-01-01T00:00:00.000Z (updatedAt)" in refused.stderr
    assert "ahead of this machine's clock" in refused.stderr
    assert refused.stderr.count("\n") == 1 and refused.stdout == ""
    assert head(store_dir) == before
    assert {k: v for k, v in snapshot_files(store_dir).items() if not k.startswith(".git")} == {
        k: v for k, v in files.items() if not k.startswith(".git")
    }
    assert xb("get", record.stem).json["title"] != title


def test_a_merge_with_a_far_future_edit_is_refused_too(
    xb: Run, json_file: Callable[[object], str], backed_up: Path, store_dir: Path, tmp_path: Path
) -> None:
    """Diverged histories: the local edit would lose to the remote's forever."""
    record, _ = _push_dated(backed_up, tmp_path / "work", "2031-06-01T00:00:00.000Z")
    mine = xb("get", record.stem).json
    mine.update(title="Edited here", updatedAt=_ahead(seconds=0))
    assert xb("put", json_file(mine)).code == 0
    before = head(store_dir)
    refused = xb("remote", "pull")
    assert refused.code == 4 and "(updatedAt)" in refused.stderr, refused.stderr
    assert head(store_dir) == before
    assert xb("get", record.stem).json["title"] == "Edited here"


def test_a_pulled_tombstone_dated_ahead_is_refused(
    xb: Run, backed_up: Path, store_dir: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    subprocess.run(
        ["git", "clone", "-q", str(backed_up), str(work)], check=True, env={**os.environ, **GIT_ENV}
    )
    record = sorted((work / "resources").rglob("*.yaml"))[0]
    rid = record.stem
    tomb = work / "tombstones" / rid[9:11] / f"{rid}.yaml"
    tomb.parent.mkdir(parents=True, exist_ok=True)
    tomb.write_text(f"id: {rid}\ndeletedAt: '2099-01-01T00:00:00.000Z'\n")
    git(work, "rm", "-q", str(record.relative_to(work)))
    git(work, "add", "-A")
    git(work, "commit", "-qm", "innocent")
    git(work, "push", "-q", "origin", "main")
    before = head(store_dir)
    refused = xb("remote", "pull")
    assert refused.code == 4 and "(deletedAt)" in refused.stderr, refused.stderr
    assert head(store_dir) == before
    assert xb("get", rid).code == 0


def test_a_clock_a_few_hours_ahead_still_merges(
    xb: Run, backed_up: Path, store_dir: Path, tmp_path: Path
) -> None:
    """The bound is a day: a device whose clock (or a local time typed without its
    offset, read as UTC) is hours ahead still syncs."""
    record, title = _push_dated(backed_up, tmp_path / "work", _ahead(hours=14))
    pulled = xb("remote", "pull")
    assert pulled.code == 0 and pulled.json["state"] == "fast_forward", pulled.stderr
    assert xb("get", record.stem).json["title"] == title


def test_a_clone_restores_a_backup_holding_a_future_record(
    xb: Run, json_file: Callable[[object], str], backed_up: Path, tmp_path: Path
) -> None:
    """A record the user dated ahead with put (the original allows it) is theirs: a clone
    restores the store as it is; there is nothing of this device's for it to beat."""
    rid = sorted(p.stem for p in (tmp_path / "store" / "resources").rglob("*.yaml"))[0]
    later = xb("get", rid).json
    later.update(updatedAt="2099-01-01T00:00:00.000Z")
    assert xb("put", json_file(later)).code == 0
    assert xb("remote", "push").code == 0
    cloned = xb("clone", str(backed_up), str(tmp_path / "copy"), store=None)
    assert cloned.code == 0, cloned.stderr
    got = xb("get", rid, store=tmp_path / "copy").json
    assert got["updatedAt"] == "2099-01-01T00:00:00.000Z"


def test_a_team_pull_refuses_a_record_dated_years_ahead(xb_proc: Run, tmp_path: Path) -> None:
    """A team member with push access cannot date a shared record ahead either."""
    from tests.cli.test_team_share import Member, team_remote

    bare, url = team_remote(xb_proc, tmp_path)
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    rita.ok("init")
    rita.ok("team", "add", "eng", url, store=False)
    head = rita.ok("team", "list", store=False)["teams"][0]["commit"]
    record, title = _push_dated(bare, tmp_path / "work", "2099-01-01T00:00:00.000Z")
    failed = rita("team", "pull", "eng", store=False)
    assert failed.code == 4 and "(updatedAt)" in failed.stderr, failed.stderr
    assert failed.stderr.count("\n") == 1 and "ahead of this machine's clock" in failed.stderr
    assert rita.ok("team", "list", store=False)["teams"][0]["commit"] == head
    assert rita.ok("get", record.stem)["resource"]["title"] != title
