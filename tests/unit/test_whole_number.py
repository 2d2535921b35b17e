"""The one range rule every limit, offset, page count and timeout is checked by."""

from __future__ import annotations

import pytest

from xbrain.errors import InvalidInputError
from xbrain.inputs import whole_number


@pytest.mark.parametrize("value", [1, 5, 20])
def test_integers_in_range_pass(value: int) -> None:
    whole_number(value, 1, 20, "limit must be 1–20.")


@pytest.mark.parametrize("value", [0, 21, -1, True, False, 2.0, "3", None])
def test_anything_else_is_refused_with_the_callers_message(value: object) -> None:
    with pytest.raises(InvalidInputError, match=r"^limit must be 1–20\.$"):
        whole_number(value, 1, 20, "limit must be 1–20.")
