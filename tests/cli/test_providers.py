"""Provider configs, sync, status and search with file and command providers."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, ROOT, Result, head, make, sample
from xbrain.codec import digest
from xbrain.errors import InvalidInputError
from xbrain.kinds.model import normalize_resource, resource_id
from xbrain.providers.config import load_provider_config

Run = Callable[..., Result]
ADAPTER = ROOT / "examples" / "mock_adapter.py"


def config(tmp_path: Path, name: str, value: dict[str, Any]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(value))
    return str(path)


def command_config(tmp_path: Path, data: Path, **extra: Any) -> str:
    value = {
        "kind": "command",
        "scope": "personal",
        "namespace": "tests",
        "command": [sys.executable, str(ADAPTER), "--data", str(data)],
        **extra,
    }
    return config(tmp_path, "command", value)


def remote(data: Path, namespace: str = "tests") -> dict[str, Any]:
    if not data.exists():
        return {}
    stored: dict[str, Any] = json.loads(data.read_text()).get(namespace, {})
    return stored


def receipts(store: Path) -> dict[str, dict[str, str]]:
    return {p.stem: json.loads(p.read_text()) for p in (store / "receipts").glob("*.json")}


# -- configs -------------------------------------------------------------------------------


def test_key_vectors(tmp_path: Path) -> None:
    file_cfg = load_provider_config(
        Path(
            config(tmp_path, "f", {"kind": "file", "path": "/tmp/target.json", "scope": "personal"})
        ),
        tmp_path / "store",
    )
    assert file_cfg.key == "3776e3dc20be87ff83ea82294e08f47112347963835ca704a5f857030a30278a"
    command_cfg = load_provider_config(
        Path(
            config(
                tmp_path,
                "c",
                {
                    "kind": "command",
                    "command": ["/usr/bin/node", "/opt/adapter.mjs"],
                    "namespace": "fixture",
                    "scope": "personal",
                    "extra": 1,
                },
            )
        ),
        tmp_path / "store",
    )
    assert command_cfg.key == "27f5f54dafb6cd26ee214d31dfae46bbe94f778f1f59dbdf1de6b58ee8463821"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            {"kind": "file", "path": "/tmp/x.json"},
            "Provider config must explicitly select scope: personal. Shared memory is not supported.",
        ),
        (
            {"kind": "file", "path": "/tmp/x.json", "scope": "shared"},
            "Provider config must explicitly select scope: personal. Shared memory is not supported.",
        ),
        (
            [],
            "Provider config must explicitly select scope: personal. Shared memory is not supported.",
        ),
        (
            {"kind": "file", "path": "relative.json", "scope": "personal"},
            "File provider requires an absolute path.",
        ),
        (
            {"kind": "command", "command": ["node"], "namespace": "n", "scope": "personal"},
            "Expected file provider or an absolute trusted command, personal scope and namespace.",
        ),
        (
            {"kind": "command", "command": ["/bin/a"] * 11, "namespace": "n", "scope": "personal"},
            "Expected file provider or an absolute trusted command, personal scope and namespace.",
        ),
        (
            {
                "kind": "command",
                "command": ["/bin/a"],
                "namespace": "bad space",
                "scope": "personal",
            },
            "Expected file provider or an absolute trusted command, personal scope and namespace.",
        ),
        (
            {"kind": "other", "scope": "personal"},
            "Expected file provider or an absolute trusted command, personal scope and namespace.",
        ),
    ],
)
def test_config_errors(tmp_path: Path, value: Any, message: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        load_provider_config(Path(config(tmp_path, "bad", value)), tmp_path / "store")
    assert info.value.message == message


@pytest.mark.parametrize(
    "value",
    [
        {
            "kind": "command",
            "command": ["/bin/a", "--token=abc"],
            "namespace": "n",
            "scope": "personal",
        },
        {
            "kind": "command",
            "command": ["/bin/a", "API_KEY=abc"],
            "namespace": "n",
            "scope": "personal",
        },
        {
            "kind": "command",
            "command": ["/bin/a", "https://api.example.com/?access_token=x"],
            "namespace": "n",
            "scope": "personal",
        },
        {
            "kind": "command",
            "command": ["/bin/a", "https://me:pw@api.example.com/"],
            "namespace": "n",
            "scope": "personal",
        },
        {"kind": "file", "path": "/tmp/x.json", "scope": "personal", "password": "hunter2"},
    ],
)
def test_secret_looking_configs_rejected(tmp_path: Path, value: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError) as info:
        load_provider_config(Path(config(tmp_path, "secret", value)), tmp_path / "store")
    assert "hunter2" not in info.value.message and "abc" not in info.value.message


def test_config_size_json_and_differ_rule(xb: Run, tmp_path: Path, store_dir: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"scope": "personal", "pad": "x" * 16_000}))
    assert xb("status", "--provider-config", str(big)).stderr == "Provider config exceeds 16 KiB.\n"
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert xb("status", "--provider-config", str(bad)).stderr == "Invalid provider config JSON.\n"
    same = config(tmp_path, "same", {"kind": "file", "path": str(store_dir), "scope": "personal"})
    result = xb("sync", "--all", "--provider-config", same)
    assert (result.code, result.stderr) == (
        4,
        "Provider path must differ from the local resource store.\n",
    )


def test_sync_requires_an_explicit_provider_and_selection(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    xb("put", json_file(sample()))
    before = head(store_dir)
    none = xb("sync", "--all")
    assert none.code == 2
    assert (
        none.stderr
        == "Memory provider not configured; resources remain local and unsynced. Select a personal provider explicitly.\n"
    )
    cfg = command_config(tmp_path, tmp_path / "remote.json")
    both = xb(
        "sync",
        "--all",
        "--id",
        resource_id("web", "fictional-dialog-guide"),
        "--provider-config",
        cfg,
    )
    assert (both.code, both.stderr) == (2, "Select exactly one of --id RESOURCE_ID or --all.\n")
    missing = xb("sync", "--id", "resource_" + "d" * 64, "--provider-config", cfg)
    assert (missing.code, missing.stderr) == (3, "Resource not found.\n")
    assert head(store_dir) == before
    assert not (tmp_path / "remote.json").exists()  # no adapter process ran


# -- round trips ---------------------------------------------------------------------------


def round_trip(
    xb: Run, json_file: Callable[[Any], str], cfg: str, store_dir: Path
) -> list[dict[str, Any]]:
    outputs = []
    xb("put", str(EXAMPLES / "batch.json"))
    xb("put", json_file(sample()))
    assert xb("status", "--provider-config", cfg).json["pending"] == 3
    outputs.append(xb("sync", "--all", "--provider-config", cfg).json)
    assert xb("status", "--provider-config", cfg).json["remoteSync"] == "last_sync_confirmed"
    xb("put", json_file(sample(title="Updated title", updatedAt="2026-12-01T00:00:00Z")))
    assert xb("status", "--provider-config", cfg).json["pending"] == 1
    outputs.append(xb("sync", "--all", "--provider-config", cfg).json)
    rid = resource_id("web", "fictional-dialog-guide")
    xb("delete", rid)
    outputs.append(xb("sync", "--id", rid, "--provider-config", cfg).json)
    outputs.append(xb("sync", "--all", "--provider-config", cfg).json)
    assert xb("status", "--provider-config", cfg).json["pending"] == 0
    return outputs


def test_command_provider_round_trip(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    data = tmp_path / "remote.json"
    cfg = command_config(tmp_path, data)
    first, update, delete, again = round_trip(xb, json_file, cfg, store_dir)
    assert (first["confirmed"], first["remoteSync"], first["provider"]) == (
        3,
        "confirmed_for_selection",
        "command",
    )
    assert (update["confirmed"], update["unchanged"]) == (1, 2)
    assert delete["confirmed"] == 1
    assert again["confirmed"] == 0 and again["unchanged"] == 3
    stored = remote(data)
    rid = resource_id("web", "fictional-dialog-guide")
    assert rid not in stored and len(stored) == 2
    key = load_provider_config(Path(cfg), store_dir).key
    xb("export-store", str(tmp_path / "export.json"))
    (tombstone,) = json.loads((tmp_path / "export.json").read_text())["tombstones"]
    assert receipts(store_dir)[key][rid] == digest(tombstone)  # a deletion's revision


def test_file_provider_round_trip_json_target(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    target = tmp_path / "remote" / "resource-memory.json"
    cfg = config(tmp_path, "file", {"kind": "file", "path": str(target), "scope": "personal"})
    round_trip(xb, json_file, cfg, store_dir)
    document = json.loads(target.read_text())
    assert document["version"] == 1 and len(document["resources"]) == 2
    assert document["tombstones"] == []  # a provider delete leaves no tombstone in the target
    assert target.stat().st_mode & 0o777 == 0o600


def test_file_provider_round_trip_store_target(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    target = tmp_path / "other-store"
    cfg = config(tmp_path, "file", {"kind": "file", "path": str(target), "scope": "personal"})
    round_trip(xb, json_file, cfg, store_dir)
    assert xb("status", store=target).json["resources"] == 2
    assert xb("get", resource_id("web", "fictional-dialog-guide"), store=target).code == 3


def test_file_provider_refuses_newer_copy(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    target = tmp_path / "remote.json"
    cfg = config(tmp_path, "file", {"kind": "file", "path": str(target), "scope": "personal"})
    other = tmp_path / "other"
    xb("put", json_file(sample(updatedAt="2030-01-01T00:00:00Z")), store=other)
    xb("sync", "--all", "--provider-config", cfg, store=other)
    xb("put", json_file(sample()))
    result = xb("sync", "--all", "--provider-config", cfg)
    assert result.code == 1
    assert result.json["failures"] == [
        {
            "id": resource_id("web", "fictional-dialog-guide"),
            "error": "Provider has a newer or conflicting resource.",
        }
    ]
    assert result.json["remoteSync"] == "incomplete"


@pytest.mark.parametrize("kind", ["command", "json", "store"])
def test_remote_search_from_an_empty_store(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, kind: str
) -> None:
    if kind == "command":
        cfg = command_config(tmp_path, tmp_path / "remote.json")
    else:
        path = tmp_path / ("remote.json" if kind == "json" else "remote-store")
        cfg = config(tmp_path, "file", {"kind": "file", "path": str(path), "scope": "personal"})
    first = tmp_path / "first"
    xb("put", str(EXAMPLES / "synthetic-resource.json"), store=first)
    xb("sync", "--all", "--provider-config", cfg, store=first)
    empty = tmp_path / "second"
    result = xb("search", "keyboard dialog", "--provider-config", cfg, store=empty)
    assert result.code == 0, result.stderr
    assert result.json["provider"] == ("command" if kind == "command" else "file")
    assert [r["resource"]["title"] for r in result.json["results"]] == [
        "Fictional accessible dialog guide"
    ]
    assert not empty.exists()  # a search never creates a store


def test_search_merge_local_wins_and_tombstones_hide(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path
) -> None:
    cfg = command_config(tmp_path, tmp_path / "remote.json")
    other = tmp_path / "other"
    xb(
        "put",
        json_file(
            [
                make("shared", title="Remote keyboard copy"),
                make("remote-only", title="Remote keyboard guide"),
                make("gone", title="Deleted keyboard note"),
            ]
        ),
        store=other,
    )
    xb("sync", "--all", "--provider-config", cfg, store=other)
    xb(
        "put",
        json_file(make("shared", title="Local keyboard copy", updatedAt="2027-01-01T00:00:00Z")),
    )
    xb("put", json_file(make("gone", title="Deleted keyboard note")))
    xb("delete", resource_id("web", "gone"))
    found = xb("search", "keyboard", "--limit", "10", "--provider-config", cfg).json["results"]
    titles = sorted(r["resource"]["title"] for r in found)
    assert titles == ["Local keyboard copy", "Remote keyboard guide"]


def test_provider_search_failure_fails_the_command(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path
) -> None:
    xb("put", json_file(sample()))
    broken = config(
        tmp_path,
        "broken",
        {
            "kind": "command",
            "scope": "personal",
            "namespace": "n",
            "command": ["/nonexistent/adapter"],
        },
    )
    result = xb("search", "keyboard", "--provider-config", broken)
    assert (result.code, result.stderr, result.stdout) == (
        8,
        "Memory adapter could not start.\n",
        "",
    )


def test_partial_failure_then_retry(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    script = tmp_path / "flaky.py"
    marker = tmp_path / "fail-ids.txt"
    script.write_text(
        "import json, subprocess, sys\n"
        f"line = sys.stdin.readline(); request = json.loads(line)\n"
        f"if request['id'] in open({str(marker)!r}).read().split():\n"
        "    sys.exit(3)\n"
        f"result = subprocess.run([sys.executable, {str(ADAPTER)!r}, '--data', {str(tmp_path / 'remote.json')!r}], input=line, capture_output=True, text=True)\n"
        "sys.stdout.write(result.stdout)\n"
    )
    cfg = config(
        tmp_path,
        "flaky",
        {
            "kind": "command",
            "scope": "personal",
            "namespace": "tests",
            "command": [sys.executable, str(script)],
        },
    )
    xb("put", json_file([make(f"p{i}") for i in range(5)]))
    bad = resource_id("web", "p2")
    marker.write_text(bad)
    first = xb("sync", "--all", "--provider-config", cfg)
    assert first.code == 1
    assert (first.json["confirmed"], first.json["remoteSync"]) == (4, "incomplete")
    assert first.json["failures"] == [
        {"id": bad, "error": "Memory adapter failed; sync not confirmed."}
    ]
    key = load_provider_config(Path(cfg), store_dir).key
    assert bad not in receipts(store_dir)[key]
    marker.write_text("")
    retry = xb("sync", "--all", "--provider-config", cfg)
    assert (retry.code, retry.json["confirmed"], retry.json["unchanged"]) == (0, 1, 4)
    assert set(remote(tmp_path / "remote.json")) == {resource_id("web", f"p{i}") for i in range(5)}


def test_legacy_url_resent_once(xb: Run, tmp_path: Path, store_dir: Path) -> None:
    cfg = command_config(tmp_path, tmp_path / "remote.json")
    key = load_provider_config(Path(cfg), store_dir).key
    legacy_url = "https://twitter.com/someone/status/123456789"
    legacy = sample(source={"provider": "x", "id": "123456789", "url": legacy_url})
    legacy["id"] = resource_id("x", "123456789")
    as_synced_before = normalize_resource(legacy).resource
    as_synced_before["source"]["url"] = legacy_url  # what the original stored and sent
    old_revision = digest(as_synced_before)
    document = {
        "version": 1,
        "resources": [legacy],
        "tombstones": [],
        "receipts": {key: {legacy["id"]: old_revision}},
    }
    source = tmp_path / "legacy.json"
    source.write_text(json.dumps(document))
    assert xb("import-store", str(source)).code == 0
    first = xb("sync", "--all", "--provider-config", cfg).json
    assert first["confirmed"] == 1  # canonical URL: a new revision, sent once
    sent = remote(tmp_path / "remote.json")[legacy["id"]]["resource"]
    assert sent["source"]["url"] == "https://x.com/i/web/status/123456789"
    assert xb("sync", "--all", "--provider-config", cfg).json["unchanged"] == 1


def test_pending_distillation_blocks_sync(xb: Run, tmp_path: Path) -> None:
    assert xb("import-store", str(EXAMPLES / "original-store.json")).code == 0
    cfg = command_config(tmp_path, tmp_path / "remote.json")
    result = xb("sync", "--all", "--provider-config", cfg)
    assert result.code == 1
    assert (result.json["skippedPending"], result.json["remoteSync"]) == (
        1,
        "blocked_pending_distillation",
    )
    assert result.json["confirmed"] == 1  # the tombstone is never blocked


def test_sync_commit_messages_carry_no_content(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    from xbrain.git import GitStore

    xb("put", json_file(sample(title="Very private title")))
    cfg = command_config(tmp_path, tmp_path / "remote.json")
    xb("sync", "--all", "--provider-config", cfg)
    with GitStore(store_dir) as git:
        commit = git.head()
        assert commit is not None
        message = git.commit_info(commit).message
    assert message.startswith("sync: command provider ")
    assert "private" not in message.lower() and "example.com" not in message
    assert "Xbrain-Command: sync" in message
