"""A damaged pack is never merged into a new one (issue 45): a merge copies each
entry's compressed bytes as they are, so it first checks each one against the CRC its
index keeps, and a mismatch stops the merge before anything is written or removed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import Result, make
from xbrain.store import Store


def test_gc_refuses_a_pack_whose_entry_does_not_match_its_index(
    xb_proc: Callable[..., Result], store_dir: Path
) -> None:
    store = Store(store_dir)
    store.put([make(f"r{i}") for i in range(70)])  # a pack
    store.put([make("loose")])  # and loose objects: gc merges them all
    pack_dir = store_dir / ".git" / "objects" / "pack"
    packs = sorted(pack_dir.glob("*.pack"))
    assert len(packs) == 1
    damaged = packs[0]
    data = bytearray(damaged.read_bytes())
    middle = len(data) // 2
    data[middle] ^= 0x01  # one bit inside an entry's compressed bytes
    damaged.chmod(0o600)
    damaged.write_bytes(bytes(data))
    before = sorted((p.name, p.stat().st_size) for p in pack_dir.iterdir())
    result = xb_proc("gc")
    assert result.code == 7, result.stderr
    assert "damaged" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert sorted((p.name, p.stat().st_size) for p in pack_dir.iterdir()) == before
