"""A skill's state and revision records: what a save writes reads back as it was, and a
save reads the skill.yaml it wrote from what it wrote, not by parsing it again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.codec import load_yaml
from xbrain.errors import InvalidInputError
from xbrain.kinds import plainyaml
from xbrain.kinds import skill as kind
from xbrain.kinds.skillformat import skill_id
from xbrain.store import Store

# Text as records hold it, and text YAML could read as something else if written bare.
TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["null", "~", "true", "no", "123", "0x1F", "1e3", "2026-12-03", "- x"]),
    st.sampled_from(["2026-12-03T02:00:00.000Z", "a: b", "#c", "'q'", '"q"', "多行\n文本"]),
)
ENTRY = st.fixed_dictionaries(
    {
        "id": TEXT,
        "number": st.integers(1, 10**6),
        "parent": st.none() | TEXT,
        "created": TEXT,
        "state": st.sampled_from(kind.STATES),
        "state_changed": TEXT,
    }
)
STATE = st.fixed_dictionaries(
    {
        "id": TEXT,
        "slug": TEXT,
        "status": st.sampled_from(kind.STATUSES),
        "status_changed": TEXT,
        "head": TEXT,
        "revisions": st.lists(ENTRY, min_size=1, max_size=5),
    }
)
FILE = st.fixed_dictionaries(
    {"path": TEXT, "type": TEXT, "sha256": TEXT, "bytes": st.integers(0, 1 << 20)}
)
REVISION = st.fixed_dictionaries(
    {
        "id": TEXT,
        "skill_id": TEXT,
        "slug": TEXT,
        "parent": st.none() | TEXT,
        "number": st.integers(1, 10**6),
        "created": TEXT,
        "source": st.fixed_dictionaries({"type": TEXT}, optional={"url": TEXT, "commit": TEXT}),
        "canonical_hash": TEXT,
        "files": st.lists(FILE, min_size=1, max_size=4),
    }
)


@settings(max_examples=150, deadline=None)
@given(record=st.one_of(STATE, REVISION))
def test_what_serialize_writes_parses_back_to_the_same_value(record: dict[str, Any]) -> None:
    """The property the save relies on when it hands back what it serialized instead of
    parsing the bytes again: parsing them gives an equal value, types included."""
    data = kind.serialize(record)
    parsed = load_yaml(data)
    assert parsed == record
    assert [type(v) for v in parsed.values()] == [type(v) for v in record.values()]


def _save(store: Store, description: str) -> dict[str, Any]:
    skill_md = f"---\nname: parse-once\ndescription: {description}\n---\nSteps.\n"
    return store.skill_save_files({"SKILL.md": skill_md.encode()}, publish=True)


def test_a_save_parses_the_skill_yaml_it_wrote_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the skill index present, a save used to parse the new skill.yaml a second
    time to index it; now the index gets the value the save wrote, checked as a parse's."""
    store = Store(tmp_path / "store")
    for n in range(3):
        _save(store, f"Revision {n}.")
    assert store.skill_recall("revision")["count"] == 1  # builds the skill index
    parsed: list[bytes] = []
    plain = kind.load_yaml

    def counted(data: bytes) -> Any:
        parsed.append(data)
        return plain(data)

    monkeypatch.setattr(kind, "load_yaml", counted)
    fast = plainyaml.load  # the files xbrain wrote are read without the parser: parses too

    def read(data: bytes) -> Any:
        value = fast(data)
        if value is not None:
            parsed.append(data)
        return value

    monkeypatch.setattr(plainyaml, "load", read)
    saved = _save(store, "Revision 3, the one indexed.")
    assert saved["revision_number"] == 4
    states = [data for data in parsed if b"revisions:" in data]
    assert len(states) == 1  # the transaction's read of the old state, nothing more
    # nor the new revision.yaml, nor anything naming the new revision: both came back
    assert not [data for data in parsed if saved["revision_id"].encode() in data]
    monkeypatch.undo()
    found = store.skill_recall("indexed")["results"]
    assert [hit["revision_id"] for hit in found] == [saved["revision_id"]]
    assert store.skill_show("parse-once")["revision_id"] == saved["revision_id"]


def test_a_record_changed_after_it_was_serialized_is_not_handed_back() -> None:
    """What is handed back is a copy taken when the bytes were made: changing the value
    afterwards cannot change what those bytes read as."""
    state = {
        "id": skill_id("copy-check"),
        "slug": "copy-check",
        "status": "active",
        "status_changed": "2026-12-03T00:00:00.000Z",
        "head": "rev_" + "0" * 32,
        "revisions": [
            {
                "id": "rev_" + "0" * 32,
                "number": 1,
                "parent": None,
                "created": "2026-12-03T00:00:00.000Z",
                "state": "draft",
                "state_changed": "2026-12-03T00:00:00.000Z",
            }
        ],
    }
    data = kind.serialize(state)
    state["revisions"][0]["state"] = "published"
    state["head"] = "changed"
    read = kind.parse_state(data)
    assert read["head"] == "rev_" + "0" * 32
    assert read["revisions"][0]["state"] == "draft"
    assert read == load_yaml(data)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("slug", 7), "skill.yaml.slug has the wrong type"),
        (("slug", True), "skill.yaml.slug has the wrong type"),
        (("head", None), "skill.yaml.head has the wrong type"),
        (("status", "gone"), "skill.yaml.status is not one of active, archived"),
        (("revisions", []), "skill.yaml.revisions is not a non-empty list"),
        (("number", True), "skill.yaml.revisions[].number has the wrong type"),
        (("number", "1"), "skill.yaml.revisions[].number has the wrong type"),
        (("parent", 3), "skill.yaml.revisions[].parent has the wrong type"),
        (("created", None), "skill.yaml.revisions[] has no created"),
    ],
)
def test_a_state_of_the_wrong_shape_says_where(change: tuple[str, Any], message: str) -> None:
    """Every leaf is checked, a boolean is never a number, and the error names the place
    (the check words a place only once a value is wrong)."""
    slug = "ab-0"
    entry = {
        "id": "rev_" + "0" * 32,
        "number": 1,
        "parent": None,
        "created": "2026-12-05T00:00:00.000Z",
        "state": "draft",
        "state_changed": "2026-12-05T00:00:00.000Z",
    }
    state: dict[str, Any] = {
        "id": skill_id(slug),
        "slug": slug,
        "status": "active",
        "status_changed": "2026-12-05T00:00:00.000Z",
        "head": entry["id"],
        "revisions": [entry],
    }
    assert kind.parse_state(kind.serialize(state)) == state
    key, value = change
    target = entry if key in entry and key != "id" else state
    if value is None and key == "created":
        del target[key]
    else:
        target[key] = value
    with pytest.raises(InvalidInputError) as caught:
        kind.parse_state(kind.serialize(state))
    assert caught.value.message == message
