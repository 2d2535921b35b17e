"""Hostile input to the supersede, validity and review fields and commands: one line on
stderr, exit 4 (3 for what is not there), nothing changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, snapshot_files
from xbrain.kinds.entry import entry_id

Run = Callable[..., Result]
RID = entry_id("global", "db port")
BASE = {"kind": "memory", "name": "db port", "body": "5432."}


def refused(run: Run, store: Path, code: int, *args: str, input: Any = None) -> None:
    before = snapshot_files(store)
    result = run(*args, input=input)
    assert result.code == code, (result.code, result.stderr)
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert snapshot_files(store) == before


@pytest.mark.parametrize(
    "extra",
    [
        {"supersedes": ["entry_nothex"]},
        {"supersedes": [RID]},  # itself
        {"supersedes": [entry_id("global", str(n)) for n in range(51)]},
        {"supersedes": {"a": 1}},
        {"validFrom": "2024-13-01"},
        {"validUntil": "soon"},
        {"validFrom": "2024-02-01", "validUntil": "2024-01-01"},
        {"validFrom": "2024-01-01", "validUntil": "2024-01-01"},
        {"proposedBy": {"agent": "a\nb"}},
        {"proposedBy": {"who": "x"}},
        {"proposedBy": "claude"},
        {"status": "accepted"},
    ],
)
def test_bad_fact_fields_change_nothing(xb: Run, store_dir: Path, extra: dict[str, Any]) -> None:
    assert xb("entry", "put", "-", input={**BASE, "name": "other"}).code == 0
    refused(xb, store_dir, 4, "entry", "put", "-", input={**BASE, **extra})


def test_bad_supersede_and_review_commands_change_nothing(xb: Run, store_dir: Path) -> None:
    assert xb("entry", "put", "-", input=BASE).code == 0
    other = entry_id("global", "elsewhere")
    refused(xb, store_dir, 4, "entry", "supersede", RID, RID)
    refused(xb, store_dir, 4, "entry", "supersede", "../../etc", RID)
    refused(xb, store_dir, 3, "entry", "supersede", other, RID)
    third = entry_id("global", "third")
    assert xb("entry", "put", "-", input={**BASE, "name": "third"}).code == 0
    assert xb("entry", "supersede", RID, third).code == 0
    refused(xb, store_dir, 4, "entry", "supersede", third, RID)  # a cycle: both would hide
    refused(xb, store_dir, 4, "review", "accept", RID)  # active, not proposed
    refused(xb, store_dir, 3, "review", "accept", other)
    refused(xb, store_dir, 4, "review", "accept", "entry_../x")
    assert xb("entry", "put", "-", input={**BASE, "name": "p", "status": "proposed"}).code == 0
    proposed = entry_id("global", "p")
    refused(xb, store_dir, 4, "review", "reject", proposed, "--reason", "two\nlines")
    refused(xb, store_dir, 4, "review", "reject", proposed, "--reason", " ")
    refused(xb, store_dir, 4, "review", "reject", proposed, "--reason", "x" * 1025)
    # one bad id among good ones: none of them is decided
    refused(xb, store_dir, 4, "review", "accept", proposed, RID)
    refused(xb, store_dir, 4, "config", "review.agentWrites", "sometimes")


def test_a_hand_written_tombstone_reason_is_checked(xb: Run, store_dir: Path) -> None:
    """A tombstone's reason is bounded text on one line, like any stored field."""
    from xbrain.kinds.entry import TOMBSTONES

    good = TOMBSTONES.parse(b"id: " + RID.encode() + b"\ndeletedAt: '2024-01-01T00:00:00.000Z'\n")
    assert set(good) == {"id", "deletedAt"}
    for bad in (b"reason: 1\n", b"reason: '" + b"x" * 1025 + b"'\n", b"other: x\n"):
        data = b"id: " + RID.encode() + b"\ndeletedAt: '2024-01-01T00:00:00.000Z'\n" + bad
        with pytest.raises(Exception, match=r"(?i)tombstone|reason|text|characters"):
            TOMBSTONES.parse(data)
