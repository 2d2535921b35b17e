"""A merged pack's delta chains stay within ``MAX_CHAIN`` whatever order the merged
pack's entries come in (review finding): a pack whose deltas arrive newest-first, each
naming a base written after it, used to be copied with every chain counted 1, so
``xbrain gc`` landed a chain of 60. Checked with git's own ``verify-pack`` histogram
and ``fsck --strict``."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result, make
from tests.security.test_hostile_packs import BLOB, REF_DELTA, git_id, size_header, whole
from xbrain.git.delta import line_delta
from xbrain.git.repack import MAX_CHAIN
from xbrain.store import Store

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git binary")

VERSIONS = 61  # a chain of 60 deltas, past MAX_CHAIN


def chains(pack: Path) -> dict[int, int]:
    """``git verify-pack -v``'s chain length histogram: length, objects."""
    out = subprocess.run(
        ["git", "verify-pack", "-v", str(pack.with_suffix(".idx"))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {
        int(length): int(count)
        for length, count in re.findall(r"chain length = (\d+): (\d+) objects?", out)
    }


def test_gc_bounds_a_chain_whose_deltas_arrive_newest_first(
    xb_proc: Callable[..., Result], store_dir: Path
) -> None:
    store = Store(store_dir)
    store.put([make(f"r{i}") for i in range(70)])
    store.put([make("loose")])
    lines = [
        b"line %d of a planted text that changes a little each version\n" % i for i in range(40)
    ]
    versions = []
    for v in range(VERSIONS):
        lines[v % 40] = b"version %d changed this line\n" % v
        versions.append(b"".join(lines))
    entries = [(git_id(BLOB, versions[0]), whole(BLOB, versions[0]))]
    for v in range(1, VERSIONS):  # each version a delta against the one before
        delta = line_delta(versions[v - 1], versions[v])
        head = size_header(REF_DELTA, len(delta)) + git_id(BLOB, versions[v - 1])
        entries.append((git_id(BLOB, versions[v]), head + zlib.compress(delta)))
    entries.reverse()  # the newest first: every delta before its base
    body = b"PACK" + (2).to_bytes(4, "big") + len(entries).to_bytes(4, "big")
    body += b"".join(entry for _, entry in entries)
    body += hashlib.sha1(body).digest()
    pack_dir = store_dir / ".git" / "objects" / "pack"
    name = subprocess.run(  # git indexes it (so accepts it) as a pack of its own
        ["git", "-C", str(store_dir), "index-pack", "--strict", "--stdin", "--keep"],
        input=body,
        capture_output=True,
        check=True,
    ).stdout.split()[-1]
    (pack_dir / f"pack-{name.decode()}.keep").unlink()
    assert max(chains(pack_dir / f"pack-{name.decode()}.pack")) == VERSIONS - 1

    result = xb_proc("gc")
    assert result.code == 0, result.stderr
    packs = sorted(pack_dir.glob("*.pack"))
    assert len(packs) == 1
    histogram = chains(packs[0])
    assert histogram and max(histogram) <= MAX_CHAIN, histogram
    subprocess.run(
        ["git", "-C", str(store_dir), "fsck", "--strict", "--no-progress", "--full"],
        capture_output=True,
        check=True,
    )
    for version in versions:  # every version reads back exactly
        shown = subprocess.run(
            ["git", "-C", str(store_dir), "cat-file", "blob", git_id(BLOB, version).hex()],
            capture_output=True,
            check=True,
        ).stdout
        assert shown == version
