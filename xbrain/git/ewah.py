"""git's EWAH-compressed bitmaps (``ewah/ewah_io.c``), as a split index's ``link``
extension holds them: a bit count, a word count, that many 64-bit words (big-endian),
the position of the last run-length word. A run-length word's bit 0 is the bit of its
run of clean words, bits 1-32 their count, bits 33-63 the literal words that follow."""

from __future__ import annotations

import struct

__all__ = ["bits", "encoded"]

_WORD = struct.Struct(">Q")


def bits(data: bytes, offset: int, limit: int) -> tuple[list[int], int]:
    """The set bits of the EWAH bitmap at ``offset``, and the offset past it; a run of set
    bits reaching ``limit`` (the entries the bits stand for) is damage (``ValueError``),
    refused before it is expanded (a flipped count would ask for billions of them)."""
    _, words = struct.unpack_from(">LL", data, offset)
    offset += 8
    if offset + 8 * words + 4 > len(data):
        raise ValueError("EWAH bitmap past the end of the link extension")
    found: list[int] = []
    pos, at, end = 0, offset, offset + 8 * words
    while at < end:
        (rlw,) = _WORD.unpack_from(data, at)
        at += 8
        run, literals = ((rlw >> 1) & 0xFFFFFFFF) * 64, rlw >> 33
        if rlw & 1:
            if pos + run > limit:
                raise ValueError("EWAH bitmap sets bits past the entries it stands for")
            found.extend(range(pos, pos + run))
        pos += run
        for _ in range(literals):
            if at >= end:
                raise ValueError("EWAH bitmap literal words past its end")
            (word,) = _WORD.unpack_from(data, at)
            at += 8
            while word:
                low = word & -word
                found.append(pos + low.bit_length() - 1)
                word ^= low
            pos += 64
    return found, end + 4


def encoded(bits: list[int]) -> bytes:
    """``bits`` (sorted, distinct) as git's EWAH bitmap: runs of clean zero words, each
    followed by its literal words."""
    words: dict[int, int] = {}
    for bit in bits:
        words[bit // 64] = words.get(bit // 64, 0) | (1 << (bit % 64))
    out: list[int] = []
    last_rlw, cursor, keys = 0, 0, sorted(words)
    i = 0
    while i < len(keys):
        j = i
        while j + 1 < len(keys) and keys[j + 1] == keys[j] + 1:
            j += 1
        last_rlw = len(out)
        out.append(((keys[i] - cursor) << 1) | ((j - i + 1) << 33))
        out.extend(words[k] for k in keys[i : j + 1])
        cursor, i = keys[j] + 1, j + 1
    if not out:
        out.append(0)
    size = bits[-1] + 1 if bits else 0
    body = b"".join(_WORD.pack(word) for word in out)
    return struct.pack(">LL", size, len(out)) + body + struct.pack(">L", last_rlw)
