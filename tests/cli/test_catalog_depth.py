"""Catalog and URL-index shards by more hex digits in a big store (issue 45 item 4).

A batch into a grown store rewrites small shard files, not every two-digit shard grown
large. Each two-digit prefix moves at its own record count (``layout.depth_for``), so no
write moves them all at once; the depths follow the record count alone, so writes,
merges and ``doctor`` agree, and a store written at other depths still reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, make, snapshot_files
from xbrain.core import layout

Run = Callable[..., Result]


def _put(xb: Run, json_file: Callable[[Any], str], first: int, count: int) -> None:
    items = [make(f"depth-{i}") for i in range(first, first + count)]
    assert xb("put", json_file(items)).code == 0


def _committed(store: Path) -> dict[str, bytes]:
    from xbrain.git import GitStore

    with GitStore(store) as git:
        snap = git.snapshot()
        return {path: snap.blob(blob) for path, blob in snap.files("index")}


def _limits(xb: Run) -> None:
    assert xb("config", "limits.maxEntries", "100000").code == 0


@pytest.fixture
def small_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout, "SPLIT_AT", 16, raising=False)


def test_a_store_past_the_split_shards_by_three_digits_and_doctor_agrees(
    xb: Run, json_file: Callable[[Any], str], small_split: None
) -> None:
    _put(xb, json_file, 0, 40)
    files = _committed(Path(xb("status").json["store"]))
    catalog = [p for p in files if p.startswith("index/catalog/")]
    urls = [p for p in files if p.startswith("index/urls/")]
    assert catalog and all(len(p.split("/")) == 4 for p in catalog), catalog
    assert urls and all(len(p.split("/")) == 4 for p in urls), urls
    entries: dict[str, Any] = {}
    for path in catalog:
        entries.update(json.loads(files[path]))
    assert len(entries) == 40
    assert xb("doctor").json["problems"] == []
    assert xb("list", "--limit", "100").json["total"] == 40
    for rid in list(entries)[:5]:
        assert xb("get", rid).code == 0
    # the same URL saved again is found through the three-digit URL index
    again = make("depth-3")
    again["source"]["id"] = "depth-3-again"
    result = xb("put", json_file([again]))
    assert result.code == 0, result.stderr


def test_a_batch_into_a_big_store_rewrites_a_bounded_part_of_the_catalog(
    xb: Run, json_file: Callable[[Any], str], small_split: None
) -> None:
    _limits(xb)
    _put(xb, json_file, 0, 1000)
    _put(xb, json_file, 1000, 1000)
    store = Path(xb("status").json["store"])
    before = _committed(store)
    _put(xb, json_file, 5000, 20)
    after = _committed(store)
    changed = [p for p in after if p.startswith("index/catalog/") and after[p] != before.get(p)]
    rewritten = sum(len(json.loads(after[p])) for p in changed)
    # 20 new records: about 20 small shards of a store of 2,020; at two digits every
    # changed shard holds about 8 (160 entries rewritten)
    assert rewritten <= 60, (len(changed), rewritten)
    assert xb("doctor").json["problems"] == []


def test_a_store_written_at_two_digits_reads_and_its_next_write_moves_it(
    xb: Run, json_file: Callable[[Any], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _put(xb, json_file, 0, 40)  # SPLIT_AT as shipped: two digits
    store = Path(xb("status").json["store"])
    flat = _committed(store)
    assert all(len(p.split("/")) == 3 for p in flat if p.startswith("index/catalog/"))
    monkeypatch.setattr(layout, "SPLIT_AT", 16, raising=False)
    ids = [rid for p, data in flat.items() if "catalog/" in p for rid in json.loads(data)]
    assert xb("get", ids[0]).code == 0
    assert xb("status").json["resources"] == 40
    _put(xb, json_file, 100, 1)
    moved = _committed(store)
    catalog = [p for p in moved if p.startswith("index/catalog/")]
    assert all(len(p.split("/")) == 4 for p in catalog), catalog
    assert xb("doctor").json["problems"] == []
    on_disk = [k for k in snapshot_files(store) if k.startswith("index/catalog/")]
    assert sorted(on_disk) == sorted(catalog)  # the two-digit files left the working tree


def test_two_big_stores_merge_into_three_digit_shards_doctor_accepts(
    xb: Run, json_file: Callable[[Any], str], small_split: None, tmp_path: Path
) -> None:
    from dulwich.repo import Repo

    a, b, remote = tmp_path / "a", tmp_path / "b", tmp_path / "backup.git"
    Repo.init_bare(str(remote), mkdir=True, default_branch=b"main").close()
    items = [make(f"merge-{i}") for i in range(30)]
    assert xb("put", json_file(items), store=a).code == 0
    assert xb("remote", "add", "origin", str(remote), store=a).code == 0
    assert xb("remote", "push", store=a).code == 0
    assert xb("clone", str(remote), str(b), store=None).code == 0
    assert xb("put", json_file([make(f"on-a-{i}") for i in range(3)]), store=a).code == 0
    assert xb("put", json_file([make(f"on-b-{i}") for i in range(3)]), store=b).code == 0
    assert xb("remote", "push", store=a).code == 0
    assert xb("remote", "pull", store=b).json["state"] == "merged"
    assert xb("remote", "push", store=b).code == 0
    assert xb("remote", "pull", store=a).json["state"] == "fast_forward"
    for store in (a, b):
        report = xb("doctor", store=store).json
        assert report["ok"] is True, report["problems"]
        assert xb("list", "--limit", "100", store=store).json["total"] == 36
    assert _committed(a) == _committed(b)
    catalog = [p for p in _committed(b) if p.startswith("index/catalog/")]
    assert all(len(p.split("/")) == 4 for p in catalog), catalog


def test_past_sixteen_times_the_split_shards_by_four_digits(
    xb: Run, json_file: Callable[[Any], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(layout, "SPLIT_AT", 2, raising=False)  # 4 digits past 32–48 records
    _put(xb, json_file, 0, 50)
    files = _committed(Path(xb("status").json["store"]))
    shards = [p for p in files if p.startswith(("index/catalog/", "index/urls/"))]
    assert shards and all(len(p.rsplit("/", 1)[1]) == len("ab.json") for p in shards), shards
    assert all(len(p.split("/")) == 4 for p in shards), shards
    assert xb("doctor").json["problems"] == []
    _put(xb, json_file, 50, 5)
    assert xb("doctor").json["problems"] == []
    assert xb("list", "--limit", "100").json["total"] == 55


def _placed(store: Path, xb: Run) -> tuple[bool, bool]:
    """Whether the committed catalog and URL prefixes sit where the counts put them."""
    from xbrain.core.shards import Placement
    from xbrain.git import GitStore

    status = xb("status", store=store).json
    count = status["resources"]
    with GitStore(store) as git:
        snap = git.snapshot()
        records = sum(
            v for k, v in json.loads(snap.read("index/summary.json")).items() if k != "bytes"
        )
        catalog = Placement(snap.listdir, "index/catalog").settled(records)
        urls = Placement(snap.listdir, "index/urls").settled(count)
    return catalog, urls


@pytest.fixture
def spread_split(monkeypatch: pytest.MonkeyPatch) -> None:
    # prefix 00 moves to three digits past 256 records, ff past 511
    monkeypatch.setattr(layout, "SPLIT_AT", 256, raising=False)


def test_prefixes_move_one_by_one_as_the_store_grows(
    xb: Run, json_file: Callable[[Any], str], spread_split: None
) -> None:
    _limits(xb)
    _put(xb, json_file, 0, 240)
    store = Path(xb("status").json["store"])
    assert _placed(store, xb) == (True, True)
    widest = 0
    for first in range(240, 520, 40):
        before = _committed(store)
        count = xb("status").json["resources"]
        _put(xb, json_file, first, 40)
        assert _placed(store, xb) == (True, True), first
        after = _committed(store)
        changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
        depths = {len(p.split("/")) for p in after if p.startswith("index/catalog/")}
        widest = max(widest, len(depths))
        moved = {
            f"{at:02x}"
            for at in range(256)
            if layout.depth_for(count, f"{at:02x}") != layout.depth_for(count + 40, f"{at:02x}")
        }
        landed = {p for p in changed if p.startswith("index/catalog/") and p in after}
        landed = {
            p for p in landed if set(json.loads(after[p])) - set(json.loads(before.get(p, b"{}")))
        }
        others = {
            p
            for p in changed
            if p.startswith("index/catalog/")
            and p not in landed
            and p.split("/")[2][:2] not in moved
        }
        # what changed: the files the 40 new records land in, and the prefixes whose
        # thresholds the count passed (40 of 256 here), never every shard
        assert 0 < len(moved) <= 41 and not others, (moved, others)
    assert widest == 2  # files of two and of three digits side by side on the way
    assert xb("doctor").json["problems"] == []
    listed = xb("list", "--limit", "1000").json
    assert listed["total"] == 520
    for item in listed["results"][::37]:
        assert xb("get", item["id"]).json["id"] == item["id"]
    again = make("depth-7")
    again["source"]["id"] = "depth-7-again"
    warned = xb("put", json_file([again])).json
    assert warned["results"][0]["sameUrlAs"], warned


def test_a_pull_across_moved_prefixes_fast_forwards_without_re_deriving(
    xb: Run,
    json_file: Callable[[Any], str],
    spread_split: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dulwich.repo import Repo

    from xbrain.remote import merge

    a, b, remote = tmp_path / "a", tmp_path / "b", tmp_path / "backup.git"
    Repo.init_bare(str(remote), mkdir=True, default_branch=b"main").close()
    for store in (a,):
        assert xb("config", "limits.maxEntries", "100000", store=store).code == 0
    assert xb("put", json_file([make(f"ff-{i}") for i in range(100)]), store=a).code == 0
    assert xb("remote", "add", "origin", str(remote), store=a).code == 0
    assert xb("remote", "push", store=a).code == 0
    assert xb("clone", str(remote), str(b), store=None).code == 0
    assert xb("put", json_file([make(f"ff-{i}") for i in range(100, 300)]), store=a).code == 0
    assert xb("remote", "push", store=a).code == 0
    seen: list[bool] = []
    real = merge.derived_in_step

    def spy(*args: Any) -> bool:
        seen.append(real(*args))
        return seen[-1]

    monkeypatch.setattr(merge, "derived_in_step", spy)
    assert xb("remote", "pull", store=b).json["state"] == "fast_forward"
    assert seen == [True]  # the moved prefixes were recognised as in step
    assert _committed(a) == _committed(b)
    assert xb("doctor", store=b).json["problems"] == []
    assert _placed(b, xb) == (True, True)


def test_a_purge_that_lowers_the_count_moves_prefixes_back(
    xb: Run, json_file: Callable[[Any], str], small_split: None
) -> None:
    # 16 + p // 16 records: 24 → 20 moves the prefixes whose thresholds are 20..23
    _limits(xb)
    results = xb("put", json_file([make(f"purge-{i}") for i in range(24)])).json["results"]
    ids = [item["id"] for item in results]
    before = _committed(Path(xb("status").json["store"]))
    assert xb("purge", *ids[:4], "--yes").code == 0
    store = Path(xb("status").json["store"])
    after = _committed(store)
    assert xb("doctor").json["problems"] == []
    assert _placed(store, xb) == (True, True)
    two = [p for p in after if p.startswith("index/catalog/") and p.count("/") == 2]
    assert two and not set(two) <= set(before)  # some prefix went back to two digits
    for rid in ids[4:]:
        assert xb("get", rid).json["id"] == rid
