"""Hypothesis: a split index edited batch after batch (entries replaced, deleted, added,
the base written again past the changes' bound) reads back as the model says, through
xbrain's reader and through git's own (``git ls-files --stage``)."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.git import index as gitindex
from xbrain.git import splitindex

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")

NAMES = [f"d{d}/f{n}" for d in range(4) for n in range(6)] + ["a", "z/y/x"]
steps = st.lists(
    st.dictionaries(
        st.sampled_from(NAMES), st.one_of(st.none(), st.sampled_from("123")), min_size=1, max_size=8
    ),
    min_size=1,
    max_size=10,
)
counter = itertools.count()


@settings(max_examples=40, deadline=None)
@given(steps, st.integers(1, 16))
def test_split_edits_match_model(
    tmp_path: Path, batches: list[dict[str, str | None]], resplit: int
) -> None:
    root = tmp_path / f"case-{next(counter)}"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    git_dir = root / ".git"
    (git_dir / "xbrain").mkdir()
    index_path, stamp = git_dir / "index", git_dir / "xbrain" / "index-stamp"
    info = os.lstat(root)
    shipped = splitindex.SPLIT_MIN, splitindex._RESPLIT
    splitindex.SPLIT_MIN, splitindex._RESPLIT = 4, resplit
    try:
        model = {name: "0" * 40 for name in NAMES[:6]}  # a start past SPLIT_MIN
        first = {n.encode(): gitindex.entry_bytes(n.encode(), info, b) for n, b in model.items()}
        assert gitindex.update(index_path, first, stamp)
        for batch in batches:
            changes = {}
            for name, blob in batch.items():
                sha = None if blob is None else blob * 40
                entry = None if sha is None else gitindex.entry_bytes(name.encode(), info, sha)
                changes[name.encode()] = entry
                if sha is None:
                    model.pop(name, None)
                else:
                    model[name] = sha
            assert gitindex.update(index_path, changes, stamp)
            splitindex._bases.clear()  # read as a fresh process does, every other time
            assert gitindex.read_entries(index_path) == model
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "--stage"], capture_output=True, text=True
        )
        assert listed.returncode == 0, listed.stderr
        got = {line.split("\t")[1]: line.split()[1] for line in listed.stdout.splitlines()}
        assert got == model
        assert gitindex.in_order(index_path)
    finally:
        splitindex.SPLIT_MIN, splitindex._RESPLIT = shipped
