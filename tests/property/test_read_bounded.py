"""``inputs.read_file`` returns a regular file's bytes exactly when they fit the bound, and
refuses it otherwise, whatever the sizes (it reads what fstat saw, not the bound)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.errors import InvalidInputError, NotFoundError
from xbrain.inputs import read_file

SIZES = st.one_of(st.integers(0, 300), st.integers(60_000, 200_000))


@settings(max_examples=60, deadline=None)
@given(size=SIZES, slack=st.integers(-3, 3), byte=st.integers(0, 255))
def test_a_file_is_read_whole_when_it_fits_and_refused_when_not(
    tmp_path_factory: pytest.TempPathFactory, size: int, slack: int, byte: int
) -> None:
    path = tmp_path_factory.mktemp("read") / "file"
    data = bytes([byte]) * size + b"end"[: min(3, size)]
    path.write_bytes(data)
    limit = max(0, len(data) + slack)
    if len(data) <= limit:
        assert read_file(path, limit, "too big") == data
        assert read_file(path, limit, "too big", follow=False) == data
    else:
        with pytest.raises(InvalidInputError, match="too big"):
            read_file(path, limit, "too big")


def test_what_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        read_file(tmp_path / "missing", 10, "too big")
    with pytest.raises(InvalidInputError, match="Not a regular file"):
        read_file(tmp_path, 10, "too big")
    target = tmp_path / "target"
    target.write_bytes(b"abc")
    (tmp_path / "link").symlink_to(target)
    assert read_file(tmp_path / "link", 10, "too big") == b"abc"
    with pytest.raises(InvalidInputError, match="Cannot read"):
        read_file(tmp_path / "link", 10, "too big", follow=False)
