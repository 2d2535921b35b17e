"""The error root's one rule for a full disk, used by every layer that meets one."""

from __future__ import annotations

import errno

import pytest

from xbrain.errors import describe, no_space


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
