"""Skills across devices: remote pull merges two revision chains deterministically."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import Result, merged_tree
from xbrain.core import GitStore, View
from xbrain.errors import XbrainError
from xbrain.kinds.skill import parse_state, state_path
from xbrain.kinds.skillcheck import skill_problems
from xbrain.schemas import schema_errors

Run = Callable[..., Result]


def write_skill(root: Path, body: str, name: str = "runbook") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text(f"---\nname: {name}\ndescription: A runbook.\n---\n{body}\n")
    return root


def test_two_devices_chains_merge_on_pull(xb: Run, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    from xbrain.git import GitStore as Git

    Git.init_bare(remote)
    a, b = tmp_path / "a", tmp_path / "b"
    first = xb("skill", "save", str(write_skill(tmp_path / "s1", "one")), "--publish", store=a)
    xb("remote", "add", "origin", str(remote), store=a)
    assert xb("remote", "push", store=a).code == 0
    assert xb("clone", str(remote), str(b), store=None).code == 0
    left = xb("skill", "save", str(write_skill(tmp_path / "s2", "two on a")), store=a).json
    right = xb(
        "skill", "save", str(write_skill(tmp_path / "s3", "two on b")), "--publish", store=b
    ).json
    assert left["revision_number"] == right["revision_number"] == 2  # a fork
    assert xb("remote", "push", store=a).code == 0
    pulled = xb("remote", "pull", store=b)
    assert pulled.code == 0, pulled.stderr
    log = xb("skill", "log", "runbook", store=b).json["revisions"]
    ids = {r["revision_id"] for r in log}
    assert ids == {first.json["revision_id"], left["revision_id"], right["revision_id"]}
    states = {r["revision_id"]: r["state"] for r in log}
    assert list(states.values()).count("published") == 1
    assert states[right["revision_id"]] == "published"  # the later publication
    assert states[first.json["revision_id"]] == "deprecated"
    assert xb("doctor", store=b).json["ok"] is True
    # the next save continues from the merged head
    third = xb("skill", "save", str(write_skill(tmp_path / "s4", "three")), store=b).json
    assert third["revision_number"] == 3


def test_a_publication_set_aside_by_a_merge_is_reported_and_numbers_stay_handles(
    xb_proc: Run, tmp_path: Path
) -> None:
    """Device A published its revision 2, device B published another revision 2 later:
    the pull says A's publication was set aside, and "revision 2" names neither."""
    remote = tmp_path / "remote.git"
    from xbrain.git import GitStore as Git

    Git.init_bare(remote)
    a, b = tmp_path / "a", tmp_path / "b"
    assert xb_proc("skill", "save", str(write_skill(tmp_path / "s1", "one")), store=a).code == 0
    assert xb_proc("remote", "add", "origin", str(remote), store=a).code == 0
    assert xb_proc("remote", "push", store=a).code == 0
    assert xb_proc("clone", str(remote), str(b), store=None).code == 0
    on_a = xb_proc(
        "skill", "save", str(write_skill(tmp_path / "s2", "two on a")), "--publish", store=a
    ).json
    on_b = xb_proc(
        "skill", "save", str(write_skill(tmp_path / "s3", "two on b")), "--publish", store=b
    ).json
    assert xb_proc("remote", "push", store=a).code == 0
    pulled = xb_proc("remote", "pull", store=b)
    assert pulled.code == 0, pulled.stderr
    assert schema_errors("remote-pull-output", pulled.json) == []
    (item,) = pulled.json["dropped"]
    assert item["id"] == on_a["skill_id"] and item["kept"] == "local"
    assert item["dropped"]["revision"] == on_a["revision_id"]
    assert (item["dropped"]["state"], item["dropped"]["now"]) == ("published", "deprecated")
    assert item["dropped"]["slug"] == "runbook" and len(item["dropped"]["commit"]) == 40
    ambiguous = xb_proc("skill", "recall", "--slug", "runbook", "--revision", "2", store=b)
    assert ambiguous.code == 4
    assert on_a["revision_id"] in ambiguous.stderr and on_b["revision_id"] in ambiguous.stderr
    for verb in (("skill", "publish", "runbook", "2"), ("skill", "diff", "runbook", "1", "2")):
        assert xb_proc(*verb, store=b).code == 4
    by_id = xb_proc(
        "skill", "recall", "--slug", "runbook", "--revision", on_a["revision_id"], store=b
    )
    assert by_id.code == 0 and by_id.json["state"] == "deprecated"


def test_expect_revision_takes_a_number(xb_proc: Run, tmp_path: Path, store_dir: Path) -> None:
    """--expect-revision 2 with revision 2 at the head was refused (exit 5)."""
    for body in ("one", "two"):
        assert xb_proc("skill", "save", str(write_skill(tmp_path / body, body))).code == 0
    stale = xb_proc(
        "skill", "save", str(write_skill(tmp_path / "x", "x")), "--expect-revision", "1"
    )
    assert stale.code == 5
    moved = xb_proc(
        "skill", "save", str(write_skill(tmp_path / "y", "y")), "--expect-revision", "2"
    )
    assert moved.code == 0, moved.stderr
    assert moved.json["revision_number"] == 3
    unknown = xb_proc(
        "skill", "save", str(write_skill(tmp_path / "z", "z")), "--expect-revision", "9"
    )
    assert unknown.code == 5


def test_two_devices_publishing_different_revisions_keep_the_later_publication(
    xb: Run, tmp_path: Path
) -> None:
    """SPEC §12: one published revision after a pull; the later publication wins, on
    whichever device the pull runs."""
    from xbrain.git import GitStore as Git

    remote = tmp_path / "remote.git"
    Git.init_bare(remote)
    a, b = tmp_path / "a", tmp_path / "b"
    assert xb("skill", "save", str(write_skill(tmp_path / "s1", "one")), store=a).code == 0
    xb("remote", "add", "origin", str(remote), store=a)
    assert xb("remote", "push", store=a).code == 0
    assert xb("clone", str(remote), str(b), store=None).code == 0
    earlier = xb(
        "skill", "save", str(write_skill(tmp_path / "s2", "two on a")), "--publish", store=a
    ).json
    assert xb("remote", "push", store=a).code == 0
    later = xb(
        "skill", "save", str(write_skill(tmp_path / "s3", "two on b")), "--publish", store=b
    ).json
    assert earlier["state"] == later["state"] == "published"
    assert xb("remote", "pull", store=b).code == 0
    assert xb("remote", "push", store=b).code == 0
    assert xb("remote", "pull", store=a).code == 0
    for store in (a, b):
        log = xb("skill", "log", "runbook", store=store).json["revisions"]
        states = {r["revision_id"]: r["state"] for r in log}
        assert states[later["revision_id"]] == "published", (store, states)
        assert states[earlier["revision_id"]] == "deprecated", (store, states)
        assert xb("doctor", store=store).json["ok"] is True


def test_the_same_revision_saved_on_two_devices_merges_to_one_consistent_revision(
    xb: Run, tmp_path: Path
) -> None:
    """Equal content on the same parent is the same revision id, saved at two times: the
    pull keeps one revision whose skill.yaml and revision.yaml agree (the later one)."""
    from xbrain.git import GitStore as Git

    remote = tmp_path / "remote.git"
    Git.init_bare(remote)
    a, b = tmp_path / "a", tmp_path / "b"
    assert xb("skill", "save", str(write_skill(tmp_path / "s1", "one")), store=a).code == 0
    xb("remote", "add", "origin", str(remote), store=a)
    assert xb("remote", "push", store=a).code == 0
    assert xb("clone", str(remote), str(b), store=None).code == 0
    on_a = xb("skill", "save", str(write_skill(tmp_path / "s2", "two")), store=a).json
    assert xb("remote", "push", store=a).code == 0
    on_b = xb("skill", "save", str(write_skill(tmp_path / "s3", "two")), store=b).json
    assert on_a["revision_id"] == on_b["revision_id"]
    assert xb("remote", "pull", store=b).code == 0
    log = xb("skill", "log", "runbook", store=b).json["revisions"]
    assert [r["revision_number"] for r in log] == [2, 1]
    report = xb("doctor", store=b)
    assert report.json["problems"] == [], report.stdout


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["save", "save", "publish", "deprecate", "archive", "unarchive"]),
        st.integers(0, 3),
    ),
    max_size=5,
)


def _apply(store: Any, root: Path, actions: list[tuple[str, int]], tag: str) -> None:
    for step, (verb, n) in enumerate(actions):
        try:
            if verb == "save":
                folder = write_skill(root / f"{tag}{step}", f"body {n} {tag if n % 2 else ''}")
                store.skill_save(folder)
            elif verb in ("publish", "deprecate"):
                store.skill_lifecycle(verb, "runbook", str(n + 1))
            else:
                store.skill_lifecycle(verb, "runbook")
        except XbrainError:
            pass  # e.g. a revision number that does not exist yet


@settings(max_examples=20)
@given(ACTIONS, ACTIONS)
def test_merging_chains_is_symmetric_and_consistent(
    tmp_path_factory: pytest.TempPathFactory,
    left: list[tuple[str, int]],
    right: list[tuple[str, int]],
) -> None:
    from xbrain.store import Store

    root = tmp_path_factory.mktemp("skills-merge")
    ticks = itertools.count()

    def clock() -> str:  # both devices share one clock: ties and orders both happen
        n = next(ticks) // 2
        return f"2026-01-01T00:00:{n // 1000:02d}.{n % 1000:03d}Z"

    Store(root / "base", clock=clock).skill_save(write_skill(root / "b0", "base"))
    stores = []
    for name, actions in (("left", left), ("right", right)):
        shutil.copytree(root / "base", root / name, symlinks=True)
        _apply(Store(root / name, clock=clock), root, actions, name)
        stores.append(root / name)
    one, other = merged_tree(stores[0], stores[1]), merged_tree(stores[1], stores[0])
    assert one == other
    state = parse_state(one[state_path("runbook")])  # a valid state: one published at most
    listed = {e["id"] for e in state["revisions"]}
    on_disk = {p.split("/")[3] for p in one if p.startswith("skills/runbook/revisions/")}
    assert listed == on_disk
    # the merged tree passes doctor's skill checks (hashes, chain links)
    with GitStore(stores[0]) as git:
        parent = git.head()
        assert parent is not None
        changes = {p: d for p, d in one.items() if View(git.snapshot()).read(p) != d}
        if changes:
            commit = git.commit(parent, changes, "merge\n", "t <t@example.invalid>", 0)
            view = View(git.snapshot(commit))
        else:
            view = View(git.snapshot())
        assert skill_problems(view) == []


def test_a_pull_lists_the_revisions_publications_and_entries_it_brought(
    xb_proc: Run, tmp_path: Path
) -> None:
    """A hostile trial: a valid new published revision and a rule pushed to the backup
    arrived with a bare fast_forward. They are not refused (another device does exactly
    this), but the pull now says what came."""
    remote = tmp_path / "remote.git"
    from xbrain.git import GitStore as Git

    Git.init_bare(remote)
    a, b = tmp_path / "a", tmp_path / "b"
    assert (
        xb_proc(
            "skill", "save", str(write_skill(tmp_path / "s1", "one")), "--publish", store=a
        ).code
        == 0
    )
    assert xb_proc("remote", "add", "origin", str(remote), store=a).code == 0
    assert xb_proc("remote", "push", store=a).code == 0
    assert xb_proc("clone", str(remote), str(b), store=None).code == 0
    new = xb_proc(
        "skill", "save", str(write_skill(tmp_path / "s2", "curl | sh")), "--publish", store=b
    ).json
    rule = {"kind": "rule", "name": "house-style", "description": "Run the setup first."}
    assert xb_proc("entry", "put", "-", input=json.dumps(rule), store=b).code == 0
    assert xb_proc("remote", "push", store=b).code == 0
    pulled = xb_proc("remote", "pull", store=a)
    assert pulled.code == 0, pulled.stderr
    assert schema_errors("remote-pull-output", pulled.json) == []
    got = pulled.json["received"]
    assert got["revisions"] == [
        {"slug": "runbook", "revision": new["revision_id"], "state": "published"}
    ]
    assert got["published"] == [{"slug": "runbook", "revision": new["revision_id"]}]
    assert [(e["name"], e["kind"], e["trust"]) for e in got["entries"]] == [
        ("house-style", "rule", "trusted")
    ]
    assert got["resources"] == 0
