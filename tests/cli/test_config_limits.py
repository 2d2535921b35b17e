"""config (identity, limits) and limit enforcement before anything is written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, head, make, sample, snapshot_files
from xbrain.kinds.model import resource_id

Run = Callable[..., Result]


def test_config_identity_becomes_the_author(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    from xbrain.git import GitStore

    shown = xb("config").json
    assert shown["identity"] == "xbrain <xbrain@localhost>"
    assert shown["limits"] == {"maxEntries": 10000, "maxBytes": 20 * 1024 * 1024}
    assert xb("config", "identity.name", "Ada Lovelace").code == 0
    result = xb("config", "identity.email", "ada@example.org")
    assert result.json["identity"] == "Ada Lovelace <ada@example.org>"
    xb("put", json_file(sample()))
    with GitStore(store_dir) as git:
        commit = git.head()
        assert commit is not None
        assert git.commit_info(commit).author == "Ada Lovelace <ada@example.org>"
    assert "identity:" in (store_dir / "xbrain.yaml").read_text()


@pytest.mark.parametrize(
    ("key", "value", "code"),
    [
        ("identity.name", "Eve <evil@x>", 4),
        ("identity.name", "two\nlines", 4),
        ("limits.maxEntries", "5", 4),
        ("limits.maxBytes", "lots", 4),
        ("limits.maxEntries", "10000001", 4),
        ("limits.maxBytes", str((1 << 40) + 1), 4),
        ("user.name", "x", 4),
    ],
)
def test_config_rejects_bad_values(
    xb: Run, store_dir: Path, key: str, value: str, code: int
) -> None:
    xb("init")
    before = head(store_dir)
    assert xb("config", key, value).code == code
    assert head(store_dir) == before


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("limits.maxEntries", "5", "limits can only be raised (at least 10000)"),
        ("limits.maxBytes", "1024", "limits can only be raised (at least"),
        ("recall.topK", "21", "use an integer from 1 to 20"),
        ("recall.topK", "0", "use an integer from 1 to 20"),
        ("recall.threshold", "2.5", "use a number from 0.0 to 2.0"),
        ("recall.budget", "200001", "use an integer from 100 to 200000"),
    ],
)
def test_config_refusals_name_the_rule_broken(
    xb: Run, store_dir: Path, key: str, value: str, message: str
) -> None:
    xb("init")
    before = head(store_dir)
    refused = xb("config", key, value)
    assert refused.code == 4 and message in refused.stderr, refused.stderr
    assert head(store_dir) == before


def test_config_key_without_value_is_usage_error(xb: Run) -> None:
    assert xb("config", "identity.name").code == 2


def test_byte_limit_enforced_before_writing(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    body = "x" * 40_000
    for batch in range(2):
        items = [make(f"big-{batch}-{i}", text=body) for i in range(200)]
        assert xb("put", json_file(items)).code == 0
    before = snapshot_files(store_dir)
    third = xb("put", json_file([make(f"big-2-{i}", text=body) for i in range(200)]))
    assert (third.code, third.stderr) == (4, "Memory store exceeds 20 MiB.\n")
    assert snapshot_files(store_dir) == before
    assert xb("config", "limits.maxBytes", str(64 * 1024 * 1024)).code == 0
    assert xb("put", json_file([make(f"big-2-{i}", text=body) for i in range(200)])).code == 0


@pytest.mark.slow
def test_entry_limit_enforced(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    items = [make(f"e{i}") for i in range(9_999)]
    for item in items:
        item["id"] = resource_id("web", item["source"]["id"])
    source = tmp_path / "full.json"
    source.write_text(
        json.dumps({"version": 1, "resources": items, "tombstones": [], "receipts": {}})
    )
    assert xb("import-store", str(source)).code == 0
    assert xb("put", json_file(make("last-one"))).json["total"] == 10_000
    before = head(store_dir)
    over = xb("put", json_file(make("one-too-many")))
    assert (over.code, over.stderr) == (4, "Memory store exceeds 10,000 entries.\n")
    assert head(store_dir) == before
    # a delete turns a resource into a tombstone: still 10,000 entries, still allowed
    assert xb("delete", items[0]["id"]).json["deleted"] is True
    # the limit is on resources + tombstones (SPEC §2): a rule is not one of them
    rule = {"kind": "rule", "name": "tabs-rule", "queries": ["indent with tabs"], "body": "Tabs."}
    added = xb("entry", "put", "-", input=json.dumps(rule))
    assert (added.code, added.json["added"]) == (0, 1), added.stderr
    assert xb("put", json_file(make("still-one-too-many"))).stderr == over.stderr


def test_a_limit_no_clone_accepts_is_refused_and_doctor_names_one_already_set(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """config took any number (99999999999999999999): the store kept working, but its
    backup could not be restored — clone checks xbrain.yaml against the schema, whose
    maximum is 10,000,000 — and doctor said nothing."""
    import subprocess

    xb("init")
    refused = xb("config", "limits.maxEntries", "99999999999999999999")
    assert refused.code == 4 and "greater than the maximum of 10000000" in refused.stderr
    marker = store_dir / "xbrain.yaml"  # as an older xbrain wrote it
    marker.write_text(marker.read_text() + "limits:\n  maxEntries: 99999999999999999999\n")
    git = ["git", "-C", str(store_dir), "-c", "user.name=u", "-c", "user.email=u@x"]
    subprocess.run([*git, "commit", "-qam", "an older config"], check=True)
    assert xb("status").code == 0  # the store itself still works
    (found,) = [p for p in xb("doctor").json["problems"] if p["path"] == "xbrain.yaml"]
    assert found["code"] == "invalid_state" and "a clone or pull" in found["message"]
    assert xb("clone", str(store_dir), str(tmp_path / "copy")).code == 4
    assert xb("config", "limits.maxEntries", "10000000").code == 0
    left = [p for p in xb("doctor").json["problems"] if p["code"] != "permissions"]
    assert left == []  # (git's own commit above left a file or two readable by others)
    assert xb("clone", str(store_dir), str(tmp_path / "copy")).code == 0
