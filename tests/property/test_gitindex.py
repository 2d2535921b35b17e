"""Hypothesis: the fast index editor agrees with dulwich's full parser."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from dulwich.index import Index
from hypothesis import given
from hypothesis import strategies as st

from xbrain.git import index as gitindex

NAMES = [
    "xbrain.yaml",
    "index/summary.json",
    *(f"index/catalog/{s}.json" for s in ("00", "0a", "e6", "ff")),
    *(f"resources/{s}/resource_{s}{n}.yaml" for s in ("00", "0a", "e6", "ff") for n in "0123"),
    *(f"tombstones/{s}/resource_{s}{n}.yaml" for s in ("0a", "e6") for n in "01"),
    # skills: new revisions open new directories; "a-b/" sorts before "a/" ('-' < '/')
    *(f"skills/{slug}/skill.yaml" for slug in ("a", "a-b", "b")),
    *(
        f"skills/{slug}/revisions/rev_{r}/{leaf}"
        for slug in ("a", "a-b")
        for r in "12"
        for leaf in ("revision.yaml", "files/SKILL.md", "files/scripts/x.sh")
    ),
]
steps = st.lists(
    st.dictionaries(
        st.sampled_from(NAMES),
        st.one_of(st.none(), st.sampled_from(["1", "2"])),
        min_size=1,
        max_size=5,
    ),
    min_size=1,
    max_size=12,
)
counter = itertools.count()


@given(steps, st.booleans(), st.sampled_from([gitindex.SPLICE_MAX, 2, 0]))
def test_index_edits_match_model(
    tmp_path: Path, batches: list[dict[str, str | None]], git_wrote_first: bool, splice: int
) -> None:
    """Spliced in place (a few changes) or through one full parse (many: here, as few
    as 1 or 3 with the limit lowered), the index is the one the model says."""
    gitindex.SPLICE_MAX, shipped = splice, gitindex.SPLICE_MAX
    try:
        _edits_match_model(tmp_path, batches, git_wrote_first)
    finally:
        gitindex.SPLICE_MAX = shipped


def _edits_match_model(
    tmp_path: Path, batches: list[dict[str, str | None]], git_wrote_first: bool
) -> None:
    root = tmp_path / f"case-{next(counter)}"
    root.mkdir()
    index_path, stamp = root / "index", root / "stamp"
    probe = root / "probe"
    probe.write_bytes(b"x")
    info = os.lstat(probe)
    if git_wrote_first:  # an index xbrain did not write: no stamp, the slow path first
        Index(str(index_path), read=False).write()
    model: dict[str, str] = {}
    for batch in batches:
        changes = {}
        for name, blob in batch.items():
            sha = None if blob is None else blob * 40
            changes[name.encode()] = (
                None if sha is None else gitindex.entry_bytes(name.encode(), info, sha)
            )
            if sha is None:
                model.pop(name, None)
            else:
                model[name] = sha
        assert gitindex.update(index_path, changes, stamp)
        parsed = Index(str(index_path))
        assert {path.decode(): entry.sha.decode() for path, entry in parsed.items()} == model
        assert list(parsed.paths()) == sorted(path.encode() for path in model)
        assert gitindex.read_entries(index_path) == model


@given(steps)
def test_new_entries_at_one_point_stay_in_path_order(
    tmp_path: Path, batches: list[dict[str, str | None]]
) -> None:
    """Entries with different stat data inserted at one point (issue 11, item 7).

    Before the fix the splice sorted new entries by their bytes, which start with stat
    data: a later file could land before an earlier path and git fsck failed.
    """
    root = tmp_path / f"order-{next(counter)}"
    root.mkdir()
    index_path, stamp = root / "index", root / "stamp"
    stats = []
    for n in range(3):  # files whose ctime/size differ, in an order unrelated to names
        probe = root / f"probe{n}"
        probe.write_bytes(b"x" * (3 - n))
        stats.append(os.lstat(probe))
    for step, batch in enumerate(batches):
        changes = {
            name.encode(): None
            if blob is None
            else gitindex.entry_bytes(name.encode(), stats[(step + i) % 3], blob * 40)
            for i, (name, blob) in enumerate(sorted(batch.items(), reverse=True))
        }
        assert gitindex.update(index_path, changes, stamp)
        names = list(gitindex.read_entries(index_path))
        assert names == sorted(names, key=str.encode)
        assert gitindex.in_order(index_path)


def test_a_new_directory_is_spliced_without_the_full_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A skill's new revision adds files under a directory the index has never held: the
    splice finds its place from the enclosing skill's entries, not by parsing them all."""
    index_path, stamp = tmp_path / "index", tmp_path / "stamp"
    probe = tmp_path / "probe"
    probe.write_bytes(b"x")
    info = os.lstat(probe)

    def entries(*names: str) -> dict[bytes, bytes | None]:
        return {n.encode(): gitindex.entry_bytes(n.encode(), info, "1" * 40) for n in names}

    first = ["skills/a/skill.yaml", "skills/a/revisions/rev_1/revision.yaml", "zz.yaml"]
    assert gitindex.update(index_path, entries(*first), stamp)

    def no_full_parse(data: bytes) -> None:
        raise AssertionError("the full parse ran")

    monkeypatch.setattr(gitindex, "_parse", no_full_parse)
    later = ["skills/a/revisions/rev_0/files/SKILL.md", "skills/a/revisions/rev_2/revision.yaml"]
    assert gitindex.update(index_path, entries(*later, "skills/new/skill.yaml"), stamp)
    monkeypatch.undo()
    assert list(gitindex.read_entries(index_path)) == sorted(
        [*first, *later, "skills/new/skill.yaml"], key=str.encode
    )


def test_many_changes_parse_the_index_once_instead_of_searching_it_per_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of many files (a 1,000-resource put) is applied through one parse of the
    index: searching the file once per change grew with the store (0.9 s for 1,000 new
    resources into 10,000)."""
    index_path, stamp = tmp_path / "index", tmp_path / "stamp"
    probe = tmp_path / "probe"
    probe.write_bytes(b"x")
    info = os.lstat(probe)

    def entries(names: list[str]) -> dict[bytes, bytes | None]:
        return {n.encode(): gitindex.entry_bytes(n.encode(), info, "1" * 40) for n in names}

    first = [f"resources/{n:02x}/resource_{n:02x}a.yaml" for n in range(0, 256, 2)]
    assert gitindex.update(index_path, entries(first), stamp)

    def no_search(*args: object) -> None:
        raise AssertionError("the index was searched per change")

    monkeypatch.setattr(gitindex, "_find_entry", no_search)
    many = [f"resources/{n:02x}/resource_{n:02x}b.yaml" for n in range(100)]
    assert gitindex.update(index_path, entries(many), stamp)
    monkeypatch.undo()
    assert list(gitindex.read_entries(index_path)) == sorted([*first, *many], key=str.encode)
