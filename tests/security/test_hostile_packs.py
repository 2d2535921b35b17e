"""Packs from outside are hostile: a pack a user's ``git`` (or anyone) put in the store
is read by the merge of ``xbrain gc`` through the one bounded entry parser
(``packcheck.entry_base``), and inflated never past its declared size. A crafted
entry (a header cut short, a size that runs on, an inflate bomb, a delta whose base
is outside the pack or itself, a ref delta to a missing object) is corruption: exit 7,
one line, nothing written, the store as it was.

Each pack here comes with an index whose CRCs match its entries, so the merge's CRC
check passes and the entries themselves are what is refused.
"""

from __future__ import annotations

import hashlib
import os
import resource
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from dulwich.pack import write_pack_index

from tests.conftest import Result, make
from xbrain.store import Store

BLOB, TREE, OFS_DELTA, REF_DELTA = 3, 2, 6, 7


def size_header(kind: int, size: int) -> bytes:
    out = bytearray()
    byte = (kind << 4) | (size & 15)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte, size = size & 0x7F, size >> 7
    out.append(byte)
    return bytes(out)


def whole(kind: int, raw: bytes) -> bytes:
    return size_header(kind, len(raw)) + zlib.compress(raw)


def git_id(kind: int, raw: bytes) -> bytes:
    name = {BLOB: b"blob", TREE: b"tree"}[kind]
    return hashlib.sha1(name + b" %d\0" % len(raw) + raw).digest()


def plant(store: Path, entries: list[tuple[bytes, bytes]]) -> Path:
    """A pack of ``entries`` (binary id, entry bytes) with a matching index, put in
    ``store``'s pack directory as git names them."""
    data = bytearray(b"PACK" + struct.pack(">II", 2, len(entries)))
    rows = []
    for sha, entry in entries:
        rows.append((sha, len(data), zlib.crc32(entry)))
        data += entry
    checksum = hashlib.sha1(data).digest()
    data += checksum
    pack_dir = store / ".git" / "objects" / "pack"
    name = "pack-" + checksum.hex()
    (pack_dir / f"{name}.pack").write_bytes(bytes(data))
    with open(pack_dir / f"{name}.idx", "wb") as handle:
        write_pack_index(handle, sorted(rows), checksum, version=2)
    return pack_dir / f"{name}.pack"


def files(store: Path) -> list[tuple[str, int]]:
    objects = store / ".git" / "objects"
    return sorted(
        (str(path.relative_to(objects)), path.stat().st_size)
        for path in objects.rglob("*")
        if path.is_file()
    )


@pytest.fixture
def stored(store_dir: Path) -> str:
    """A store with a pack and a loose write (so gc has something to merge); the id of
    a record in it."""
    store = Store(store_dir)
    store.put([make(f"r{i}") for i in range(70)])
    return str(store.put([make("loose")])["results"][0]["id"])


def refused(xb_proc: Callable[..., Result], store_dir: Path, record: str) -> None:
    """``xbrain gc`` refuses the planted pack as damage and changes nothing."""
    before = files(store_dir)
    head = (store_dir / ".git" / "refs" / "heads" / "main").read_bytes()
    result = xb_proc("gc")
    assert result.code == 7, result.stderr
    assert "damaged" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr
    assert files(store_dir) == before
    assert (store_dir / ".git" / "refs" / "heads" / "main").read_bytes() == head
    assert xb_proc("get", record).code == 0


BLOB_RAW = b"a blob planted beside the store's own objects\n"


def test_a_header_cut_short_is_refused(
    xb_proc: Callable[..., Result], store_dir: Path, stored: str
) -> None:
    # the last entry's size bytes run into the pack's checksum
    plant(
        store_dir,
        [(git_id(BLOB, BLOB_RAW), whole(BLOB, BLOB_RAW)), (b"\x01" * 20, b"\xb0\x80\x80")],
    )
    refused(xb_proc, store_dir, stored)


def test_a_size_that_runs_on_is_refused(
    xb_proc: Callable[..., Result], store_dir: Path, stored: str
) -> None:
    entry = b"\xb0" + b"\xff" * 12 + b"\x01" + zlib.compress(BLOB_RAW)  # a size past 2**64
    plant(store_dir, [(git_id(BLOB, BLOB_RAW), entry)])
    refused(xb_proc, store_dir, stored)


def test_an_inflate_bomb_is_refused_without_inflating_it(
    store_dir: Path, stored: str, xb_proc: Callable[..., Result]
) -> None:
    """A tree declaring 40 bytes whose stream makes 2 GiB: the merge inflates trees,
    and inflates this one no further than 41 bytes (run under a 1 GiB address-space
    limit, which inflating it whole would break)."""
    packer = zlib.compressobj(1)
    chunk = bytes(1 << 20)
    bomb = b"".join(packer.compress(chunk) for _ in range(2048)) + packer.flush()
    plant(store_dir, [(b"\x02" * 20, size_header(TREE, 40) + bomb)])
    before = files(store_dir)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    proc = subprocess.run(
        [sys.executable, "-m", "xbrain", "gc", "--store", str(store_dir)],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        env=dict(os.environ),
        timeout=120,
    )
    assert proc.returncode == 7, proc.stderr
    assert "damaged" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert files(store_dir) == before
    assert xb_proc("get", stored).code == 0


def test_a_delta_whose_base_is_outside_the_pack_is_refused(
    xb_proc: Callable[..., Result], store_dir: Path, stored: str
) -> None:
    delta = zlib.compress(b"\x05\x05\x90\x05")  # copy five bytes of the base
    entry = size_header(OFS_DELTA, 4) + b"\x7f" + delta  # 127 bytes back: before the pack
    plant(store_dir, [(b"\x03" * 20, entry)])
    refused(xb_proc, store_dir, stored)


def test_a_delta_that_is_its_own_base_is_refused(
    xb_proc: Callable[..., Result], store_dir: Path, stored: str
) -> None:
    delta = zlib.compress(b"\x05\x05\x90\x05")
    blob = (git_id(BLOB, BLOB_RAW), whole(BLOB, BLOB_RAW))
    plant(store_dir, [blob, (b"\x04" * 20, size_header(OFS_DELTA, 4) + b"\x00" + delta)])
    refused(xb_proc, store_dir, stored)


def test_a_ref_delta_that_names_itself_is_refused(
    xb_proc: Callable[..., Result], store_dir: Path, stored: str
) -> None:
    delta = zlib.compress(b"\x05\x05\x90\x05")
    plant(store_dir, [(b"\x05" * 20, size_header(REF_DELTA, 4) + b"\x05" * 20 + delta)])
    refused(xb_proc, store_dir, stored)


def test_a_ref_delta_to_a_missing_object_is_refused(
    xb_proc: Callable[..., Result], store_dir: Path, stored: str
) -> None:
    delta = zlib.compress(b"\x05\x05\x90\x05")
    plant(store_dir, [(b"\x06" * 20, size_header(REF_DELTA, 4) + b"\x07" * 20 + delta)])
    refused(xb_proc, store_dir, stored)
