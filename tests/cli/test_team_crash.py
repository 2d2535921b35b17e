"""Team memory under concurrency and crashes (issue 47): two members sharing at once never
lose a proposal; a share killed at any point is completed by the next one, and the next
sync pushes it, with nothing twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.cli.test_team_share import Member, records, team_remote, tree
from tests.conftest import Result, make

Run = Callable[..., Result]


def own_resources(member: Member, tmp_path: Path, name: str, count: int) -> list[str]:
    batch = [make(f"{name}-{n}", title=f"{name} shared note {n}") for n in range(count)]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(batch))
    return [r["id"] for r in member.ok("put", str(path))["results"]]


def share_process(member: Member, rid: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "xbrain", "share", rid, "--team", "eng"]
    argv += ["--store", str(member.store)]
    return subprocess.Popen(
        argv,
        env={**os.environ, **member.env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_concurrent_shares_from_two_members_never_lose_a_proposal(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    bob = Member(xb_proc, tmp_path / "bob", "bob")
    mine = {
        "ann": own_resources(ann, tmp_path, "ann", 3),
        "bob": own_resources(bob, tmp_path, "bob", 3),
    }
    for member in (ann, bob):
        member.ok("team", "add", "eng", url, store=False)
    running = [
        share_process(member, rid)
        for pair in zip(mine["ann"], mine["bob"], strict=True)
        for member, rid in zip((ann, bob), pair, strict=True)
    ]
    for proc in running:  # each share of one member waits for its own store's lock
        _, err = proc.communicate(timeout=300)
        assert proc.returncode in (0, 5, 6, 8), err
    for member, ids in ((ann, mine["ann"]), (bob, mine["bob"])):
        for rid in ids:  # what a busy or refused share left undone, done again
            member("share", rid, "--team", "eng")
        assert member("team", "sync", "eng", store=False).code == 0
    shared = set(mine["ann"]) | set(mine["bob"])
    paths = tree(bare)
    assert shared <= records(paths, "resources")
    assert records(paths, "proposals") == shared


def test_a_share_killed_at_any_point_is_completed_once(xb_proc: Run, tmp_path: Path) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    ids = own_resources(ann, tmp_path, "ann", 4)
    ann.ok("team", "add", "eng", url, store=False)
    for n, rid in enumerate(ids):
        proc = share_process(ann, rid)
        time.sleep(0.4 + 0.5 * n)  # somewhere in its work: the invariants hold wherever
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        done = ann("share", rid, "--team", "eng")  # the next share completes it
        assert done.code == 0, done.stderr
        assert ann("team", "sync", "eng", store=False).code == 0
        paths = tree(bare)
        assert rid in records(paths, "resources")
        assert sum(p.endswith(f"/{rid}.yaml") for p in paths) == 2  # record and proposal
    assert records(tree(bare), "proposals") == set(ids)
    team = tmp_path / "ann" / "data" / "xbrain" / "teams" / "eng"
    checked = xb_proc("doctor", store=team, env=ann.env)
    assert checked.code == 0, checked.stdout
    listed = ann.ok("team", "review", "eng", store=False)["proposals"]
    assert sorted(p["id"] for p in listed) == sorted(ids)
