"""The error root's rules: a full disk, text no encoding here can hold."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest

from xbrain.errors import describe, no_space

XBRAIN = [sys.executable, "-m", "xbrain"]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_or_quota_is_named_so(code: int) -> None:
    exc = OSError(code, "No space left on device", "/store/.git/index.lock")
    assert no_space(exc)
    message, exit_code = describe(exc)
    assert message.startswith("The disk is full (") and exit_code == 1


@pytest.mark.parametrize(
    "exc", [OSError(errno.EACCES, "Permission denied"), ValueError("no"), OSError("plain")]
)
def test_other_errors_are_not_a_full_disk(exc: BaseException) -> None:
    assert not no_space(exc)
    assert not describe(exc)[0].startswith("The disk is full")


def test_text_no_utf8_can_hold_is_named_so_not_blamed_on_the_locale() -> None:
    """Bytes that are no UTF-8 (a Latin-1 argument) reach Python as lone surrogates; under
    a UTF-8 locale the advice to switch to one was wrong."""
    bad = "caf\udce9".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
    with pytest.raises(UnicodeEncodeError) as raised:
        bad.encode("utf-8")
    assert describe(raised.value) == (
        "Text that is not valid UTF-8 (an argument or a file name?); give it in UTF-8.",
        1,
    )
    with pytest.raises(UnicodeEncodeError) as ascii_raised:
        "部署".encode("ascii")
    assert describe(ascii_raised.value)[0].endswith("e.g. LANG=C.UTF-8.")


def test_an_argument_that_is_not_utf8(tmp_path: Path) -> None:
    """Through the CLI, on both the light path and click's: one line, exit 1."""
    store = str(tmp_path / "store")
    example = str(Path(__file__).parents[2] / "examples" / "synthetic-resource.json")
    for setup in (["put", example], ["search", "dialog"]):  # a resource, and its index
        assert (
            subprocess.run([*XBRAIN, *setup, "--store", store], capture_output=True).returncode == 0
        )
    for argv in (
        ["list", "--provider", b"\xff"],
        ["--store", store, "list", "--provider", b"\xff"],
    ):
        done = subprocess.run([*XBRAIN, *argv, "--store", store], capture_output=True)
        assert done.returncode == 1
        assert (
            done.stderr
            == b"Text that is not valid UTF-8 (an argument or a file name?); give it in UTF-8.\n"
        )


def test_dulwichs_assertion_on_a_damaged_pack_is_corruption_exit_7() -> None:
    # an assertion dulwich raises reading a pack that no caller mapped: one line, exit 7
    from dulwich.pack import read_pack_header_at

    with pytest.raises(AssertionError) as raised:
        read_pack_header_at(b"XACK" + bytes(8))
    message, code = describe(raised.value)
    assert code == 7 and "damaged" in message and "doctor" in message


def test_an_assertion_outside_dulwich_stays_an_internal_error() -> None:
    try:
        raise AssertionError("ours")
    except AssertionError as exc:
        assert describe(exc)[1] == 1
