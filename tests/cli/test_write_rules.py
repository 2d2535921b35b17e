"""put / get / delete / restore through the CLI: the original's write rules (§3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, head, make, sample, snapshot_files

Run = Callable[..., Result]
ID = "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56"


def put(xb: Run, json_file: Callable[[Any], str], value: Any) -> Result:
    return xb("put", json_file(value))


def test_added_unchanged_updated(xb: Run, json_file: Callable[[Any], str], store_dir: Path) -> None:
    first = put(xb, json_file, sample())
    assert first.code == 0, first.stderr
    assert first.json["added"] == 1 and first.json["total"] == 1
    assert first.json["results"] == [{"id": ID, "status": "added", "possibleConflicts": []}]
    assert first.json["remoteSync"] == "not_attempted"
    assert first.json["commit"] == head(store_dir)
    before = head(store_dir)

    again = put(xb, json_file, sample())
    assert again.json == {
        "added": 0,
        "updated": 0,
        "unchanged": 1,
        "total": 1,
        "remoteSync": "not_attempted",
        "results": [{"id": ID, "status": "unchanged", "possibleConflicts": []}],
        "droppedFields": 0,
        "commit": None,
    }
    assert head(store_dir) == before  # no commit when nothing changed

    newer = put(xb, json_file, sample(title="New title", updatedAt="2026-10-08T00:00:00Z"))
    assert newer.json["updated"] == 1
    assert newer.json["results"] == [{"id": ID, "status": "updated", "possibleConflicts": []}]
    assert xb("get", ID).json["title"] == "New title"


def test_get_prints_the_normalized_resource(xb: Run, json_file: Callable[[Any], str]) -> None:
    put(xb, json_file, sample())
    result = xb("get", ID)
    assert result.code == 0 and result.stderr == ""
    assert result.json["id"] == ID
    assert result.json["updatedAt"] == "2026-10-07T00:00:00.000Z"
    assert result.stdout.endswith("}\n") and result.stdout.startswith("{\n  ")


def assert_rejected(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path, value: Any, code: int, message: str
) -> None:
    before = snapshot_files(store_dir)
    result = put(xb, json_file, value)
    assert result.code == code
    assert result.stdout == ""
    assert result.stderr == message + "\n"
    assert snapshot_files(store_dir) == before


def test_stale_and_conflicting_edits_change_nothing(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    put(xb, json_file, sample(updatedAt="2026-10-07T00:00:00Z"))
    stale = (
        "Stale resource; use a newer updatedAt to update or explicitly restore it "
        f"(xbrain restore {ID} --at REV)."
    )
    assert_rejected(
        xb, json_file, store_dir, sample(title="Old", updatedAt="2026-10-06T00:00:00Z"), 5, stale
    )
    assert_rejected(
        xb,
        json_file,
        store_dir,
        sample(title="Same time"),
        5,
        "Conflicting resource revision; use a newer updatedAt.",
    )


def test_batch_is_all_or_nothing(xb: Run, json_file: Callable[[Any], str], store_dir: Path) -> None:
    put(xb, json_file, sample())
    batch = [make("new-one"), sample(title="stale", updatedAt="2020-01-01T00:00:00Z")]
    assert_rejected(
        xb,
        json_file,
        store_dir,
        batch,
        5,
        "Stale resource; use a newer updatedAt to update or explicitly restore it "
        f"(xbrain restore {ID} --at REV). (resource 2 of 2)",
    )
    assert xb("get", make("new-one")["source"]["id"]).code == 3


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "Supply 1–1,000 resources per batch."),
        (
            [sample(), sample()],
            "Duplicate source IDs in batch. (resources 1 and 2 of 2: the same provider and id)",
        ),
        (
            [make("ok"), sample(title=5)],
            "Invalid title; expected a string of at most 500 characters. (resource 2 of 2)",
        ),
    ],
)
def test_batch_validation(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path, value: Any, message: str
) -> None:
    put(xb, json_file, make("seed"))
    assert_rejected(xb, json_file, store_dir, value, 4, message)


def test_batch_limit_1000(xb: Run, json_file: Callable[[Any], str], store_dir: Path) -> None:
    put(xb, json_file, make("seed"))
    assert_rejected(
        xb,
        json_file,
        store_dir,
        [make(f"r{i}") for i in range(1001)],
        4,
        "Supply 1–1,000 resources per batch.",
    )


def test_bad_json_and_missing_file(xb: Run, tmp_path: Path, store_dir: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = xb("put", str(bad))
    assert (result.code, result.stderr) == (4, "Invalid resource JSON.\n")
    assert not store_dir.exists()  # a failed first write creates nothing
    missing = xb("put", str(tmp_path / "missing.json"))
    assert missing.code == 3 and missing.stdout == ""


def test_input_size_limit(xb: Run, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (10 * 1024 * 1024 + 1))
    assert xb("put", str(big)).stderr == "Input exceeds 10 MiB.\n"


def test_put_from_stdin(xb: Run) -> None:
    result = xb("put", "-", input=sample())
    assert result.code == 0 and result.json["added"] == 1


def test_dropped_fields_reported(xb: Run, json_file: Callable[[Any], str]) -> None:
    result = put(xb, json_file, sample(usewhen=["typo"]))
    assert result.json["droppedFields"] == 1
    assert result.json["droppedFieldNames"] == ["usewhen"]
    assert "usewhen" not in xb("get", ID).json


def test_delete_and_restore(xb: Run, json_file: Callable[[Any], str], store_dir: Path) -> None:
    put(xb, json_file, sample())
    deleted = xb("delete", ID)
    assert deleted.json["deleted"] is True
    assert deleted.json["remoteSync"] == "pending_explicit_sync"
    assert xb("get", ID).code == 3
    tombstone = (store_dir / "tombstones" / "e6" / f"{ID}.yaml").read_text()
    assert "deletedAt" in tombstone
    assert not (store_dir / "resources" / "e6" / f"{ID}.yaml").exists()

    before = head(store_dir)
    again = xb("delete", ID)
    assert again.json == {"deleted": False, "remoteSync": "not_attempted", "commit": None}
    assert head(store_dir) == before

    stale = put(xb, json_file, sample(updatedAt="2026-10-07T00:00:00Z"))
    assert stale.code == 5
    restored = put(xb, json_file, sample(updatedAt="2099-01-01T00:00:00Z"))
    assert restored.json["added"] == 1
    assert xb("get", ID).code == 0
    assert not (store_dir / "tombstones" / "e6" / f"{ID}.yaml").exists()
    status = xb("status").json
    assert (status["resources"], status["tombstones"]) == (1, 0)


def test_deleted_at_is_after_updated_at(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    put(xb, json_file, sample(updatedAt="2999-01-01T00:00:00Z"))
    xb("delete", ID)
    tombstone = (store_dir / "tombstones" / "e6" / f"{ID}.yaml").read_text()
    assert "2999-01-01T00:00:00.001Z" in tombstone


def test_restore_needs_updated_at_newer_than_deleted_at_not_equal(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """SPEC §4: a put whose updatedAt equals the tombstone's deletedAt is stale (exit 5,
    nothing changed); one millisecond later restores the resource."""
    put(xb, json_file, sample(updatedAt="2999-01-01T00:00:00Z"))
    xb("delete", ID)
    tombstone = store_dir / "tombstones" / "e6" / f"{ID}.yaml"
    assert "deletedAt: '2999-01-01T00:00:00.001Z'" in tombstone.read_text()
    before, files = head(store_dir), snapshot_files(store_dir)
    same = put(xb, json_file, sample(updatedAt="2999-01-01T00:00:00.001Z"))
    assert same.code == 5, same.stdout
    assert "Stale resource; use a newer updatedAt" in same.stderr
    assert head(store_dir) == before and snapshot_files(store_dir) == files
    assert xb("get", ID).code == 3
    newer = put(xb, json_file, sample(updatedAt="2999-01-01T00:00:00.002Z"))
    assert newer.code == 0 and newer.json["added"] == 1, newer.stderr
    assert xb("get", ID).json["updatedAt"] == "2999-01-01T00:00:00.002Z"
    assert not tombstone.exists()


def test_delete_of_unknown_or_malformed_id(xb: Run, store_dir: Path) -> None:
    assert xb("delete", "resource_" + "a" * 64).json["deleted"] is False
    assert not store_dir.exists()
    bad = xb("delete", "nope")
    assert bad.code == 4


def test_get_missing(xb: Run, json_file: Callable[[Any], str]) -> None:
    assert xb("get", ID).code == 3
    put(xb, json_file, make("other"))
    result = xb("get", ID)
    assert (result.code, result.stderr, result.stdout) == (3, "Resource not found.\n", "")


def test_status_without_provider(xb: Run, json_file: Callable[[Any], str]) -> None:
    empty = xb("status").json
    assert empty["resources"] == 0 and empty["remoteSync"] == "not_configured"
    put(xb, json_file, [make("a"), make("b")])
    xb("delete", make("a")["source"]["id"])  # not an id: rejected
    status = xb("status").json
    assert {
        k: status[k]
        for k in (
            "resources",
            "tombstones",
            "pendingDistillation",
            "resumableSources",
            "provider",
            "pending",
            "remoteSync",
        )
    } == {
        "resources": 2,
        "tombstones": 0,
        "pendingDistillation": 0,
        "resumableSources": 0,
        "provider": None,
        "pending": 2,
        "remoteSync": "not_configured",
    }


def test_store_option_before_and_after_and_env(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two, three = tmp_path / "one", tmp_path / "two", tmp_path / "three"
    assert xb("--store", str(one), "put", json_file(sample()), store=None).code == 0
    assert xb("put", json_file(sample()), "--store", str(two), store=None).code == 0
    monkeypatch.setenv("XBRAIN_STORE", str(three))
    assert xb("put", json_file(sample()), store=None).code == 0
    for path in (one, two, three):
        assert (path / "resources" / "e6" / f"{ID}.yaml").exists()


def test_default_store_under_user_data_dir(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path
) -> None:
    assert xb("put", json_file(sample()), store=None).code == 0
    assert (tmp_path / "home" / "data" / "xbrain" / "store" / "xbrain.yaml").exists()


def test_agent_trailer_and_identity(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from xbrain.git import GitStore

    assert xb("put", json_file(sample()), "--agent", "claude-code").code == 0
    monkeypatch.setenv("XBRAIN_AGENT", "codex")
    xb("delete", ID)
    with GitStore(store_dir) as git:
        commit = git.head()
        assert commit is not None
        info = git.commit_info(commit)
        parent = git.commit_info(info.parents[0])
    assert info.message.startswith(f"delete: delete {ID}")
    assert "Xbrain-Command: delete\nXbrain-Agent: codex\n" in info.message
    assert parent.message.startswith(f'put: add {ID} "Fictional accessible dialog guide"')
    assert "Xbrain-Agent: claude-code" in parent.message
    assert info.author == "xbrain <xbrain@localhost>"  # never the GIT_AUTHOR_* of the env


def test_bad_agent_name(xb: Run, json_file: Callable[[Any], str]) -> None:
    assert xb("put", json_file(sample()), "--agent", "a\nXbrain-Command: forged").code == 4


def test_examples_put_and_round_trip(xb: Run) -> None:
    result = xb("put", str(EXAMPLES / "batch.json"))
    assert result.json["added"] == 2
    x_id = "resource_b9fd64f7614d707b8c04d4f72a7e57d656097ea1aac5bd09e377372def162b89"
    assert xb("get", x_id).json["source"]["url"] == "https://x.com/i/web/status/123456789"
    assert xb("put", str(EXAMPLES / "batch.json")).json["unchanged"] == 2


def test_not_a_store(xb: Run, json_file: Callable[[Any], str], tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    result = xb("put", json_file(sample()), store=other)
    assert result.code == 7
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]
    assert xb("get", ID, store=other).code == 7


def test_help_and_version(xb: Run) -> None:
    top = xb("--help", store=None)
    assert top.code == 0 and "put" in top.stdout and "Exit codes" in top.stdout
    assert "private content" in xb("get", "--help", store=None).stdout
    assert xb("--version", store=None).stdout.startswith("xbrain, version")
    assert xb("nonsense", store=None).code == 2


def test_a_batch_s_error_names_the_resource_after_the_original_words(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """One bad resource among many: the error keeps the original's words and says which
    resource of the batch it is about (a secret is found inside the write's lock); a
    single resource's error is the original's alone."""
    key = "AKIA" + "QX7Z" * 4
    put(xb, json_file, make("seed"))
    before = snapshot_files(store_dir)
    batch = [make(f"fine-{i}") for i in range(4)] + [make("leaky", text=f"the key {key}")]
    result = put(xb, json_file, batch)
    assert result.code == 4 and result.stdout == ""
    assert result.stderr.startswith('Field "text" looks like it holds a secret (aws)')
    assert result.stderr.endswith(" (resource 5 of 5)\n"), result.stderr
    assert snapshot_files(store_dir) == before
    alone = put(xb, json_file, make("leaky", text=f"the key {key}"))
    assert alone.code == 4 and "(resource" not in alone.stderr
    late = put(xb, json_file, [make("ok"), make("bad", updatedAt="yesterday")])
    assert late.code == 4 and late.stderr.endswith(" (resource 2 of 2)\n"), late.stderr
