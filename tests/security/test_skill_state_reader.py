"""A skill's ``skill.yaml`` and ``revision.yaml`` are read without the YAML parser when
they are in the plain form xbrain writes (``kinds/plainyaml``): a hostile file close to
that form — a pulled tree, a hand edit — is refused or read exactly as the parser reads
it, never more leniently."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result
from xbrain.codec import dump_yaml
from xbrain.errors import XbrainError
from xbrain.kinds import plainyaml
from xbrain.kinds import skill as kind
from xbrain.store import Store

Run = Callable[..., Result]
REV = "rev_" + "0e" * 16
STATE = {
    "id": "skill_e36c7afe6e6c4b782d47367d1e488ec629f3b3dca2846dda49eb763c7ae1af78",
    "slug": "ab-0",
    "status": "archived",
    "status_changed": "2026-12-05T05:31:00.446Z",
    "head": REV,
    "revisions": [
        {
            "id": REV,
            "number": 1,
            "parent": None,
            "created": "2026-12-05T05:31:00.446Z",
            "state": "published",
            "state_changed": "2026-12-05T05:31:00.446Z",
        }
    ],
}
CANONICAL = dump_yaml(STATE).decode()
HOSTILE = {
    "a duplicate key (the parser refuses it)": CANONICAL + "status: active\n",
    "a duplicate key in a revision": CANONICAL + "  state: draft\n",
    "a tag": CANONICAL.replace("status: archived", "status: !!str active"),
    "an anchor and an alias": CANONICAL.replace("head: rev", "head: &h rev") + "x: *h\n",
    "a comment": CANONICAL.replace("status: archived", "status: archived # active"),
    "a number in another base": CANONICAL.replace("number: 1", "number: 0x1"),
    "a number with a leading zero": CANONICAL.replace("number: 1", "number: 01"),
    "a boolean for a number": CANONICAL.replace("number: 1", "number: true"),
    "a date for text": CANONICAL.replace("'2026-12-05T05:31:00.446Z'", "2026-12-05", 1),
    "a float for text": CANONICAL.replace("slug: ab-0", "slug: 1e5"),
    "null for a state": CANONICAL.replace("state: published", "state: ~"),
    "a key read as a boolean": CANONICAL + "true: x\n",
    "a tab": CANONICAL.replace("status: archived", "status:\tactive"),
    "a carriage return": CANONICAL.replace("\n", "\r\n"),
    "a byte-order mark": "\ufeff" + CANONICAL,
    "a look-alike letter": CANONICAL.replace("status: archived", "status: аctive"),
    "a second document": CANONICAL + "---\nstatus: active\n",
    "a flow mapping": CANONICAL.replace("status: archived", "status: {a: b}"),
    "a block scalar": CANONICAL.replace("status: archived", "status: |\n  active"),
    "text over two lines": CANONICAL.replace("status: archived", "status: 'act\n  ive'"),
    "deeper indentation": CANONICAL.replace("  number: 1", "    number: 1"),
    "an indented sequence": CANONICAL.replace("- id:", "  - id:").replace("\n  n", "\n    n"),
    "no final newline": CANONICAL.rstrip("\n"),
    "a trailing space": CANONICAL.replace("status: archived", "status: archived "),
    "a quote left open": CANONICAL.replace("status: archived", "status: 'archived"),
    "nested too deep": CANONICAL + "x:\n" + "".join(f"{'  ' * i}k:\n" for i in range(1, 60)),
}


def outcome(data: bytes) -> tuple[str, Any]:
    try:
        return "read", repr(kind.parse_state(data))
    except XbrainError as exc:
        return "refused", exc.message


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_state_is_read_as_the_parser_reads_it(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = HOSTILE[name].encode()
    assert plainyaml.load(data) is None or name == "a boolean for a number"
    fast = outcome(data)
    monkeypatch.setattr(plainyaml, "load", lambda data: None)  # the parser alone, as before
    assert fast == outcome(data)


def test_the_canonical_state_is_read_without_the_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    import xbrain.codec

    def refused(data: bytes) -> Any:
        raise AssertionError("parsed with load_yaml")

    monkeypatch.setattr(xbrain.codec, "load_yaml", refused)
    monkeypatch.setattr(kind, "load_yaml", refused)
    assert kind.parse_state(CANONICAL.encode()) == STATE
    assert outcome(HOSTILE["a boolean for a number"].encode())[0] == "refused"


def test_a_pulled_state_with_a_duplicate_status_is_refused_not_indexed(
    xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    """A naive line reader would take the second ``status`` (active) and offer an
    archived skill: the parser refuses the file, and so does the index build."""
    folder = tmp_path / "skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: ab-0\ndescription: Rotate keys.\n---\nRotate.\n")
    assert xb("skill", "save", str(folder), "--publish").code == 0
    assert xb("skill", "archive", "ab-0").code == 0
    store = Store(store_dir)
    path = kind.state_path("ab-0")
    with store.core.reading() as view:
        assert view is not None
        data = view.read(path)
    assert data is not None and b"status: archived\n" in data
    with store.core.transaction("test") as txn:  # what a pulled tree could hold
        txn.write(path, data + b"status: active\n")
    for args in (("reindex",), ("skill", "recall", "rotate keys")):
        result = xb(*args)
        assert (result.code, result.stdout) == (7, "")
        assert f"{path} is invalid: skill.yaml is not valid YAML" in result.stderr
