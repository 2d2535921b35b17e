"""The deltas pack upkeep writes rebuild every object exactly (issue 45)."""

from __future__ import annotations

from dulwich.objects import Blob, Tree
from dulwich.pack import apply_delta
from hypothesis import given
from hypothesis import strategies as st

from xbrain.git import delta as deltas

LINES = st.lists(
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"") + b"\n") | st.binary(max_size=300),
    max_size=60,
)


@given(LINES, LINES, st.integers(0, 2000))
def test_a_line_delta_rebuilds_the_target(base: list[bytes], target: list[bytes], pad: int) -> None:
    old = b"x" * pad + b"".join(base)  # offsets past one byte's reach too
    new = b"".join(target) + b"".join(base[: len(base) // 2])
    delta = deltas.line_delta(old, new, Blob.type_num)
    assert b"".join(apply_delta(old, delta)) == new


@given(st.lists(st.binary(min_size=1, max_size=30).filter(lambda b: b"\0" not in b), max_size=40))
def test_a_tree_delta_rebuilds_the_tree(names: list[bytes]) -> None:
    old, new = Tree(), Tree()
    for i, name in enumerate(dict.fromkeys(names)):
        sha = bytes([i % 256]) * 20
        old.add(name, 0o100644, sha.hex().encode())
        if i % 3:
            new.add(name, 0o100644, sha.hex().encode())
        else:
            new.add(name + b"2", 0o040000, (b"\x01" * 20).hex().encode())
    base, target = old.as_raw_string(), new.as_raw_string()
    delta = deltas.checked_delta(base, target, Tree.type_num)
    assert b"".join(apply_delta(base, delta)) == target
