"""A record kind registered from outside the core round-trips through it untouched.

The throwaway "widget" kind lives only in this test: a write through the core's public
transaction commits it with a catalog line and a summary count, the working tree and
``git`` see it, doctor validates it (and catches a damaged one), a hostile-remote check
accepts its paths, and nothing in ``xbrain/core`` knows the word "widget".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from xbrain import doctor, kinds  # noqa: F401  (the built-in kinds register)
from xbrain.codec import canonical_json, dump_yaml, load_yaml
from xbrain.core import Core
from xbrain.core.registry import RecordKind, classify, content_problem, register, unregister
from xbrain.errors import InvalidInputError
from xbrain.remote.intake import check_commit

ROOT = Path(__file__).resolve().parents[2]
WID = "widget_" + "ab" * 32


def parse_widget(data: bytes) -> dict[str, Any]:
    raw = load_yaml(data)
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        raise InvalidInputError("A widget needs a name.")
    if not isinstance(raw.get("id"), str) or not raw["id"].startswith("widget_"):
        raise InvalidInputError("A widget needs its id.")
    return {"id": raw["id"], "name": raw["name"], "updatedAt": str(raw.get("updatedAt", ""))}


WIDGET = RecordKind(
    name="widget",
    directory="widgets",
    id_prefix="widget_",
    max_bytes=4096,
    parse=parse_widget,
    serialize=dump_yaml,
    catalog_fields=lambda record: {"updatedAt": record["updatedAt"]},
    summary_key="widgets",
)


@pytest.fixture
def widget_kind() -> Iterator[RecordKind]:
    register(WIDGET)
    try:
        yield WIDGET
    finally:
        unregister("widget")


def widget(name: str = "gear") -> dict[str, Any]:
    return {"id": WID, "name": name, "updatedAt": "2026-01-01T00:00:00.000Z"}


def test_a_new_kind_commits_catalogs_and_passes_doctor(
    widget_kind: RecordKind, tmp_path: Path
) -> None:
    core = Core(tmp_path / "store")
    with core.transaction("put") as txn:
        txn.put_record("widget", widget())
        txn.actions.append(("add", WID, "gear"))
    assert txn.commit_id is not None
    path = widget_kind.path(WID)
    assert path == f"widgets/ab/{WID}.yaml"
    assert (core.path / path).read_bytes() == dump_yaml(widget())
    with core.reading() as view:
        assert view is not None
        assert view.record("widget", WID) == widget()
        assert view.entry(WID)["path"] == path
        size = len(canonical_json(widget()).encode())
        assert view.summary() == {"resources": 0, "tombstones": 0, "widgets": 1, "bytes": size}
    report = doctor.run(core)
    assert report["ok"], report["problems"]
    assert report["checked"]["widgets"] == 1
    assert classify(path) == "widget"
    assert content_problem("widget", path, dump_yaml(widget())) is None


def test_the_kind_is_committed_like_any_record(widget_kind: RecordKind, tmp_path: Path) -> None:
    core = Core(tmp_path / "store")
    with core.transaction("put") as txn:
        txn.put_record("widget", widget())
    with core.transaction("put") as txn:
        txn.put_record("widget", widget("cog"))
    with core.transaction("put") as again:  # identical: no commit
        again.put_record("widget", widget("cog"))
    assert again.commit_id is None
    with core.git() as git:  # the commits that changed the widget: two, the third was a no-op
        head = git.head()
        assert head is not None
        changed, commit = 0, head
        while True:
            parents = git.commit_info(commit).parents
            before = git.snapshot(parents[0]).blob_id(WIDGET.path(WID)) if parents else None
            changed += git.snapshot(commit).blob_id(WIDGET.path(WID)) != before
            if not parents:
                break
            commit = parents[0]
    assert changed == 2
    with core.transaction("delete") as txn:
        txn.remove_record("widget", WID)
    with core.reading() as view:
        assert view is not None and view.record("widget", WID) is None
        assert "widgets" not in view.summary()  # gone with its last record
    assert doctor.run(core)["ok"]


def test_doctor_reports_a_hand_damaged_record_of_the_new_kind(
    widget_kind: RecordKind, tmp_path: Path
) -> None:
    core = Core(tmp_path / "store")
    with core.transaction("put") as txn:
        txn.put_record("widget", widget())
    with core.session() as git:  # a commit made outside the kind's rules
        head = git.head()
        bad = {widget_kind.path(WID): b"name: ''\n"}
        git.commit(head, bad, "edit", "x <x@y>", 0)
    codes = {p["code"] for p in doctor.run(core)["problems"]}
    assert "invalid_record" in codes


def test_an_incoming_commit_with_the_new_kind_passes_the_hostile_tree_check(
    widget_kind: RecordKind, tmp_path: Path
) -> None:
    core = Core(tmp_path / "store")
    with core.transaction("put") as txn:
        txn.put_record("widget", widget())
    with core.git() as git:
        head = git.head()
        assert head is not None
        assert f"widgets/ab/{WID}.yaml" in check_commit(git, None, head, "test")
    unregister("widget")
    with core.git() as git, pytest.raises(InvalidInputError, match="layout"):
        check_commit(git, None, head, "test")  # unknown kind: no place in a store
    register(WIDGET)


def test_the_core_names_no_kind_and_no_feature() -> None:
    core = ROOT / "xbrain" / "core"
    words = ("widget", "resource_", "tombstones/", "resources/", "remote", " sync", "provider")
    for path in core.glob("*.py"):
        text = path.read_text()
        for word in words:
            assert word not in text, (path.name, word)


def test_a_store_written_before_a_kind_existed_stays_valid(tmp_path: Path) -> None:
    """Registering a new kind changes neither an existing summary nor doctor's verdict,
    and the store's next write keeps the summary free of the new kind's key."""
    from tests.conftest import make
    from xbrain.resources import put

    core = Core(tmp_path / "store")
    put(core, [make("before")])
    with core.reading() as view:
        assert view is not None
        before = view.read("index/summary.json")
    assert before is not None and b"widgets" not in before
    register(WIDGET)
    try:
        assert doctor.run(core)["ok"]
        put(core, [make("after")])
        with core.reading() as view:
            assert view is not None
            summary = json.loads(view.read("index/summary.json") or b"{}")
        assert set(summary) == {"resources", "tombstones", "bytes"}
        assert summary["resources"] == 2
        assert doctor.run(core)["ok"]
    finally:
        unregister("widget")
