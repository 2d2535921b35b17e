"""The git index xbrain keeps stays valid for git itself (issue 11, item 7).

After three 1,000-resource puts ``git fsck --strict`` used to fail with "unordered stage
entries in index", and a plain ``git commit`` then wrote unsorted trees.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import Result, make

pytestmark = [
    pytest.mark.compat,
    pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is not installed"),
]
Run = Callable[..., Result]


def git(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(store), *args], capture_output=True, text=True)


def assert_git_is_happy(store: Path) -> None:
    fsck = git(store, "fsck", "--strict")
    assert fsck.returncode == 0, fsck.stderr
    status = git(store, "status", "--porcelain")
    assert status.returncode == 0 and status.stdout == "", status.stdout


def test_large_batches_keep_the_index_sorted(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    for batch in range(3):
        items = [make(f"big-{batch}-{i}") for i in range(1000)]
        assert xb("put", json_file(items)).code == 0
    assert_git_is_happy(store_dir)
    (store_dir / "notes.txt").write_text("a file committed by git\n")
    assert git(store_dir, "add", "notes.txt").returncode == 0
    env_commit = git(
        store_dir, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "by git"
    )
    assert env_commit.returncode == 0, env_commit.stderr
    assert git(store_dir, "fsck", "--strict").returncode == 0


operations = st.lists(
    st.lists(
        st.tuples(st.sampled_from(["put", "delete"]), st.integers(0, 40)),
        min_size=1,
        max_size=25,
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=8)
@given(batches=operations)
def test_random_batches_leave_git_fsck_and_status_clean(
    xb: Run,
    json_file: Callable[[Any], str],
    tmp_path_factory: pytest.TempPathFactory,
    batches: list[list[tuple[str, int]]],
) -> None:
    store = tmp_path_factory.mktemp("order") / "store"
    assert xb("init", store=store).code == 0
    for version, batch in enumerate(batches, start=1):
        puts = {n for op, n in batch if op == "put"}
        if puts:
            items = [
                make(f"r{n}", updatedAt=f"2030-01-{version:02d}T00:00:00Z", title=f"t{n}-{version}")
                for n in sorted(puts)
            ]
            assert xb("put", json_file(items), store=store).code == 0
        for op, n in batch:
            if op == "delete" and n not in puts:
                rid = make(f"r{n}")
                from xbrain.kinds.model import resource_id

                assert (
                    xb(
                        "delete",
                        resource_id(rid["source"]["provider"], rid["source"]["id"]),
                        store=store,
                    ).code
                    == 0
                )
    assert_git_is_happy(store)


def test_doctor_detects_and_repairs_an_unordered_index(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    from xbrain.git import index as gitindex

    assert xb("put", json_file([make(f"d{i}") for i in range(5)])).code == 0
    index = store_dir / ".git" / "index"
    data = index.read_bytes()
    _, _, spans = gitindex._parse(data)
    body = b"".join(data[s:e] for s, e in reversed(spans))
    gitindex._write(index, [data[:12], body], store_dir / ".git" / "xbrain" / "index-stamp")
    assert git(store_dir, "fsck", "--strict").returncode != 0
    report = xb("doctor")
    assert "index_order" in {p["code"] for p in report.json["problems"]}
    from xbrain.schemas import schema_errors

    assert schema_errors("doctor-output", report.json) == []
    repaired = xb("doctor", "--repair")
    assert "index_order" in {p["code"] for p in repaired.json["repaired"]}
    assert xb("doctor").json["ok"] is True
    assert_git_is_happy(store_dir)


def test_blob_sizes_from_headers_match_loose_packed_and_delta_objects(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """The size check of incoming blobs reads headers only; it must agree with the data."""
    from xbrain.git import GitStore

    text = "line of text\n" * 400
    for version in range(1, 4):  # similar revisions: git repack stores them as deltas
        items = [
            make(f"s{i}", text=text + f"v{version}-{i}", updatedAt=f"2030-01-0{version}T00:00:00Z")
            for i in range(90)
        ]
        assert xb("put", json_file(items)).code == 0
    assert xb("put", json_file([make("loose-one")])).code == 0
    with GitStore(store_dir) as store:
        blobs = {sha for _, sha in store.snapshot().files()}
        loose = {sha: store.blob_size(sha) for sha in blobs}
    assert all(size is not None for size in loose.values())
    assert git(store_dir, "repack", "-adf", "--depth=50", "--window=50").returncode == 0
    with GitStore(store_dir) as store:
        sizes = {sha: store.blob_size(sha) for sha in blobs}
        actual = {sha: len(store.snapshot().blob(sha)) for sha in blobs}
    assert sizes == actual
    verify = git(
        store_dir, "verify-pack", "-v", *map(str, (store_dir / ".git/objects/pack").glob("*.idx"))
    )
    assert " delta" in verify.stdout or "chain length" in verify.stdout  # deltas were exercised
