"""Skill archives: read in memory, every hostile member refused with one clear error."""

from __future__ import annotations

import io
import stat
import struct
import unicodedata
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.errors import InvalidInputError
from xbrain.kinds.skillformat import SKILL_MD, manifest
from xbrain.kinds.skillzip import MAX_ARCHIVE_BYTES, read_skill_zip

SKILL = b"---\nname: zip-skill\ndescription: A skill from a ZIP.\n---\nDo the thing.\n"


def archive(
    members: list[tuple[str, bytes]],
    *,
    modes: dict[str, int] | None = None,
    compression: int = zipfile.ZIP_DEFLATED,
) -> bytes:
    """A ZIP of ``members`` (a repeated name too), with Unix ``modes`` where given."""
    out = io.BytesIO()
    written: set[str] = set()
    with zipfile.ZipFile(out, "w", compression) as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = compression
            mode = (modes or {}).get(name)
            if mode is not None:
                info.create_system = 3
                info.external_attr = mode << 16
            if name in written:  # zipfile warns, and writes it anyway
                with pytest.warns(UserWarning, match="Duplicate name"):
                    zf.writestr(info, data)
            else:
                zf.writestr(info, data)
            written.add(name)
    return out.getvalue()


def test_a_plain_archive_and_a_wrapped_one_give_the_same_files() -> None:
    plain = read_skill_zip(archive([(SKILL_MD, SKILL), ("references/api.md", b"api")]))
    wrapped = read_skill_zip(
        archive(
            [
                ("zip-skill/", b""),
                ("zip-skill/SKILL.md", SKILL),
                ("zip-skill/references/api.md", b"api"),
            ]
        )
    )
    assert plain.files == wrapped.files == {SKILL_MD: SKILL, "references/api.md": b"api"}
    assert manifest(plain.files)  # a valid skill


def test_macos_junk_is_skipped_and_reported() -> None:
    found = read_skill_zip(
        archive(
            [
                ("s/SKILL.md", SKILL),
                ("s/.DS_Store", b"\0\0"),
                ("__MACOSX/s/._SKILL.md", b"junk"),
            ]
        )
    )
    assert found.files == {SKILL_MD: SKILL}
    assert set(found.skipped) == {"s/.DS_Store", "__MACOSX/s/._SKILL.md"}


@pytest.mark.parametrize(
    "name",
    ["../x", "a/../../x", "/x", "C:\\x", "C:/x", ".GIT/x", ".git/config", "git~1/x", "a\\b"],
)
def test_escaping_and_git_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidInputError, match="Component path"):
        read_skill_zip(archive([(SKILL_MD, SKILL), (name, b"x")]))


def test_a_symlink_member_is_refused() -> None:
    data = archive(
        [(SKILL_MD, SKILL), ("link", b"/etc/passwd")], modes={"link": stat.S_IFLNK | 0o777}
    )
    with pytest.raises(InvalidInputError, match="symbolic link"):
        read_skill_zip(data)


def test_a_fifo_member_is_refused() -> None:
    data = archive([(SKILL_MD, SKILL), ("pipe", b"")], modes={"pipe": stat.S_IFIFO | 0o644})
    with pytest.raises(InvalidInputError, match="not a regular file"):
        read_skill_zip(data)


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="repeats"):
        read_skill_zip(archive([(SKILL_MD, SKILL), ("a.md", b"1"), ("a.md", b"2")]))


def test_names_equal_after_nfc_or_case_are_refused() -> None:
    nfd = unicodedata.normalize("NFD", "café.md")
    with pytest.raises(InvalidInputError, match="repeats"):
        read_skill_zip(archive([(SKILL_MD, SKILL), ("café.md", b"1"), (nfd, b"2")]))
    with pytest.raises(InvalidInputError, match="repeats"):
        read_skill_zip(archive([(SKILL_MD, SKILL), ("Notes.md", b"1"), ("NOTES.md", b"2")]))


def test_an_encrypted_member_is_named_as_encrypted_before_any_read() -> None:
    """The flag is read first, so the message says why (zipfile's own refusal to read an
    encrypted member would only say it cannot be read)."""
    data = bytearray(archive([(SKILL_MD, b"---\nname: a\ndescription: b\n---\n"), ("s.md", b"s")]))
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (start := data.find(signature, start)) != -1:
            data[start + flag_at] |= 0x1
            start += 4
    with pytest.raises(InvalidInputError, match="is encrypted"):
        read_skill_zip(bytes(data))


def test_a_member_whose_declared_size_lies_is_refused() -> None:
    data = bytearray(archive([(SKILL_MD, SKILL), ("a.md", b"x" * 1000)], compression=0))
    # the central directory entry of a.md: shrink its declared uncompressed size
    where = data.rfind(b"PK\x01\x02")
    assert data[where + 46 : where + 50] == b"a.md"
    struct.pack_into("<I", data, where + 24, 10)
    with pytest.raises(InvalidInputError, match=r"a\.md"):
        read_skill_zip(bytes(data))


def test_a_member_whose_crc_is_wrong_is_refused() -> None:
    data = bytearray(archive([(SKILL_MD, SKILL), ("a.md", b"hello")], compression=0))
    where = data.find(b"hello")
    data[where : where + 5] = b"jello"
    with pytest.raises(InvalidInputError, match="cannot be read"):
        read_skill_zip(bytes(data))


def test_a_compression_bomb_is_refused_before_it_is_read() -> None:
    with pytest.raises(InvalidInputError, match="100:1"):
        read_skill_zip(archive([(SKILL_MD, SKILL), ("zeros.bin", b"\0" * 100_000)]))


def test_members_over_the_limits_are_refused() -> None:
    big = bytes(range(256)) * 600  # 150 KiB, barely compressible
    with pytest.raises(InvalidInputError, match="128 KiB"):
        read_skill_zip(archive([(SKILL_MD, SKILL), ("big.bin", big)]))
    with pytest.raises(InvalidInputError, match="64 KiB"):
        read_skill_zip(archive([(SKILL_MD, SKILL + bytes(range(256)) * 300)]))
    with pytest.raises(InvalidInputError, match="8 MiB"):
        read_skill_zip(b"PK" + b"\0" * MAX_ARCHIVE_BYTES)


def test_too_many_files_are_refused_before_reading() -> None:
    members = [(SKILL_MD, SKILL)] + [(f"c{i}.md", b".") for i in range(52)]
    with pytest.raises(InvalidInputError, match="at most 50 components"):
        read_skill_zip(archive(members))


def test_an_encrypted_member_is_refused() -> None:
    data = bytearray(archive([(SKILL_MD, SKILL), ("secret.md", b"s")], compression=0))
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (start := data.find(signature, start)) != -1:
            data[start + flag_at] |= 0x1  # the "encrypted" bit of every header
            start += 4
    with pytest.raises(InvalidInputError, match="encrypted"):
        read_skill_zip(bytes(data))


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([("README.md", b"no skill")], "no SKILL.md"),
        ([("a/SKILL.md", SKILL), ("b/SKILL.md", SKILL)], "holds 2"),
        ([(SKILL_MD, SKILL), ("examples/SKILL.md", SKILL)], "holds 2"),
        ([], "no SKILL.md"),
    ],
)
def test_zero_or_two_skill_md_are_refused(members: list[tuple[str, bytes]], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        read_skill_zip(archive(members))


@pytest.mark.parametrize("data", [b"", b"not a zip", b"PK\x03\x04" + b"\0" * 40])
def test_what_is_not_a_zip_is_refused(data: bytes) -> None:
    with pytest.raises(InvalidInputError, match="Not a ZIP"):
        read_skill_zip(data)


VALID = archive([(SKILL_MD, SKILL), ("references/api.md", b"api " * 50), ("a/b/c.txt", b"c")])


@settings(max_examples=300)
@given(st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), max_size=6))
def test_a_damaged_archive_is_refused_cleanly_or_read_whole(flips: list[tuple[int, int]]) -> None:
    """Any bytes of a valid archive changed: one InvalidInputError, or files that pass
    every rule, never another exception."""
    data = bytearray(VALID)
    for at, value in flips:
        data[at] = value
    try:
        found = read_skill_zip(bytes(data))
    except InvalidInputError as exc:
        assert "\n" not in str(exc)
        return
    assert manifest(found.files)
