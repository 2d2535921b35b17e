"""Hypothesis: a tree edited in its serialized bytes is the tree dulwich builds from the
same entries, byte for byte (git's order: a directory sorts as its name and a slash)."""

from __future__ import annotations

import hashlib

from dulwich.objects import ObjectID, Tree
from hypothesis import given
from hypothesis import strategies as st

from xbrain.git.treeedit import edited_tree

FILE, DIR = 0o100644, 0o40000
names = st.sampled_from(
    [b"a", b"a.b", b"a-b", b"a b", b"ab", b"b", b"resource_00.yaml", b"z", b"\xc3\xa9", b"0"]
)
entry = st.tuples(st.sampled_from([FILE, DIR]), st.integers(0, 3))
trees = st.dictionaries(names, entry, max_size=8)
edits = st.dictionaries(names, st.one_of(st.none(), entry), min_size=1, max_size=5)


def _sha(n: int) -> bytes:
    return hashlib.sha1(str(n).encode()).hexdigest().encode()


def _built(entries: dict[bytes, tuple[int, int]]) -> Tree:
    tree = Tree()
    for name, (mode, n) in entries.items():
        tree.add(name, mode, ObjectID(_sha(n)))
    return tree


@given(trees, edits, st.booleans())
def test_edited_bytes_are_the_rebuilt_tree(
    start: dict[bytes, tuple[int, int]], change: dict[bytes, tuple[int, int] | None], read: bool
) -> None:
    """``read``: the tree as read from the store; else as built (entries in the order
    they were added, which need not be git's)."""
    old = (
        Tree.from_raw_string(Tree.type_num, _built(start).as_raw_string())
        if read
        else _built(start)
    )
    assert isinstance(old, Tree)
    model = dict(start)
    for name, value in change.items():
        if value is None:
            model.pop(name, None)
        else:
            model[name] = value
    got = edited_tree(
        old, {n: None if v is None else (v[0], _sha(v[1])) for n, v in change.items()}
    )
    want = _built(model)
    assert got.as_raw_string() == want.as_raw_string()
    assert got.id == want.id
