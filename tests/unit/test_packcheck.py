"""The check of a foreign pack's declared sizes, before dulwich inflates anything."""

from __future__ import annotations

import hashlib
import io
import mmap
import tempfile
import zlib

import pytest
from dulwich.object_format import DEFAULT_OBJECT_FORMAT
from dulwich.objects import Blob
from dulwich.pack import write_pack_objects
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.errors import InvalidInputError
from xbrain.git.packcheck import PackBound, check_pack, packed_size

FORMAT = DEFAULT_OBJECT_FORMAT
LOOSE = PackBound(max_wire=1 << 30, max_objects=1000, max_object=1 << 20, max_total=4 << 20)


def dulwich_pack(texts: list[bytes], deltify: bool = False) -> bytes:
    out = io.BytesIO()
    objects = [(Blob.from_string(t), None) for t in texts]
    write_pack_objects(out.write, objects, deltify=deltify, object_format=DEFAULT_OBJECT_FORMAT)
    return out.getvalue()


def header(kind: int, size: int) -> bytes:
    """A pack object's type-and-size header (four bits of size, then seven a byte)."""
    first = (kind << 4) | (size & 15)
    size >>= 4
    out = bytearray()
    while size:
        out.append(first | 0x80)
        first, size = size & 0x7F, size >> 7
    out.append(first)
    return bytes(out)


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def handmade(*objects: bytes) -> bytes:
    body = b"PACK" + (2).to_bytes(4, "big") + len(objects).to_bytes(4, "big") + b"".join(objects)
    return body + hashlib.sha1(body).digest()


@given(st.lists(st.binary(max_size=3000), min_size=1, max_size=8), st.booleans())
def test_every_pack_dulwich_writes_within_bounds_passes(texts: list[bytes], deltify: bool) -> None:
    check_pack(dulwich_pack(texts, deltify), LOOSE, "The repository")


def test_a_deltified_pack_of_similar_files_passes() -> None:
    base = bytes(range(256)) * 40
    pack = dulwich_pack([base, base + b"tail", b"head" + base], deltify=True)
    check_pack(pack, LOOSE, "The repository")


def test_an_object_declared_huge_is_refused_before_it_is_inflated() -> None:
    # a gigabyte declared, and no zlib stream at all: only the header was read
    pack = handmade(header(3, 1 << 30) + b"\xff" * 16)
    with pytest.raises(InvalidInputError, match="holds an object of 1,073,741,824 bytes"):
        check_pack(pack, LOOSE, "The repository")


def test_a_large_object_within_bounds_is_walked_in_small_pieces() -> None:
    import tracemalloc

    pack = dulwich_pack([bytes(40 << 20)])  # ≈ 40 KB compressed
    tracemalloc.start()
    try:
        check_pack(pack, LOOSE._replace(max_object=64 << 20, max_total=64 << 20), "x")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20  # never the object whole: a piece of at most 1 MiB at a time


def test_a_delta_that_builds_a_huge_object_is_refused() -> None:
    delta = varint(10) + varint(1 << 30) + b"\x0a" + b"0123456789"
    pack = handmade(header(7, len(delta)) + b"\x11" * 20 + zlib.compress(delta))
    with pytest.raises(InvalidInputError, match="holds an object of 1,073,741,824 bytes"):
        check_pack(pack, LOOSE, "The repository")


def test_an_object_larger_or_smaller_than_its_header_is_refused() -> None:
    big = handmade(header(3, 10) + zlib.compress(b"x" * 5000))
    with pytest.raises(InvalidInputError, match="larger than its header"):
        check_pack(big, LOOSE, "The repository")
    small = handmade(header(3, 5000) + zlib.compress(b"x" * 10))
    with pytest.raises(InvalidInputError, match="smaller than its header"):
        check_pack(small, LOOSE, "The repository")


def test_totals_and_counts_are_bounded() -> None:
    pack = dulwich_pack([b"a" * 1000, b"b" * 1000, b"c" * 1000])
    tight = LOOSE._replace(max_total=2500)
    with pytest.raises(InvalidInputError, match="more than 2,500 bytes of objects, the limit"):
        check_pack(pack, tight, "The repository")
    with pytest.raises(InvalidInputError, match="3 objects; the limit is 2"):
        check_pack(pack, LOOSE._replace(max_objects=2), "The repository")
    check_pack(pack, LOOSE._replace(max_total=3000, max_objects=3), "The repository")


@pytest.mark.parametrize(
    "data",
    [b"", b"PACK", b"JUNK" + bytes(40), b"PACK\0\0\0\x09" + bytes(40)],
)
def test_what_is_not_a_pack_is_refused(data: bytes) -> None:
    with pytest.raises(InvalidInputError, match="malformed pack"):
        check_pack(data, LOOSE, "The repository")


@given(st.data())
def test_a_damaged_pack_is_refused_cleanly_or_passes(data: st.DataObject) -> None:
    pack = bytearray(dulwich_pack([b"alpha " * 50, b"beta " * 70, b"gamma"], deltify=True))
    cut = data.draw(st.integers(0, len(pack)))
    flips = data.draw(st.lists(st.tuples(st.integers(0, len(pack) - 1), st.integers(1, 255))))
    for at, bits in flips:
        pack[at] ^= bits
    try:
        check_pack(bytes(pack[:cut]), LOOSE, "The repository")
    except InvalidInputError as refused:
        assert str(refused).startswith("The repository")


@settings(max_examples=20)
@given(st.lists(st.binary(min_size=1, max_size=4000), min_size=1, max_size=6))
def test_packed_size_reads_every_entrys_size_without_inflating_it(
    tmp_path_factory: pytest.TempPathFactory, texts: list[bytes]
) -> None:
    from dulwich.pack import Pack, write_pack

    base = bytes(range(256)) * 20  # similar texts, so some entries are deltas
    blobs = [Blob.from_string(base + t) for t in texts] + [Blob.from_string(t) for t in texts]
    stem = tmp_path_factory.mktemp("pack") / "pack"
    write_pack(str(stem), [(b, None) for b in blobs], deltify=True, object_format=FORMAT)
    data = (stem.parent / "pack.pack").read_bytes()
    with Pack(str(stem), object_format=FORMAT) as pack:
        for blob in blobs:
            offset = pack.index.object_offset(blob.id)
            assert packed_size(data[offset : offset + 128]) == len(blob.data)


def test_a_truncated_pack_in_a_map_is_refused_and_the_map_still_closes() -> None:
    """How a fetch checks what it received: through a read-only map of its spool file.
    Before, the refusal's traceback kept slices of the map alive and closing it raised
    ``BufferError: cannot close exported pointers exist`` in place of the refusal."""
    whole = dulwich_pack([bytes(range(256)) * 40, b"second file\n" * 300])
    for cut in (len(whole) // 5, len(whole) // 2, len(whole) - 25):
        with tempfile.TemporaryFile() as spool:
            spool.write(whole[:cut])
            spool.flush()
            with (
                pytest.raises(InvalidInputError, match="sent a truncated pack"),
                mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ) as mapped,
            ):
                check_pack(mapped, LOOSE, "The repository")
