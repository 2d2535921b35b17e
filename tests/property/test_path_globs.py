"""An entry's ``paths`` globs (routing by the file a tool names) read as ``.gitignore``
reads them: pathspec's gitwildmatch is the oracle; and a file is taken relative to its
project's root, never outside it."""

from __future__ import annotations

import warnings
from pathlib import Path

import pathspec
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from xbrain.recall.pathroute import matching_glob, relative_file

SEGMENTS = ["a", "b", "*", "**", "?", "a*", "*b", "[ab]", "[!a]", "[a-c]", ".a", "a?b", "x["]
NAMES = ["a", "b", "ab", "ba", ".a", "aab", "c", "x[", "b-"]


@st.composite
def globs(draw: st.DrawFn) -> str:
    glob = "/".join(draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4)))
    if draw(st.booleans()):
        glob = "/" + glob
    if draw(st.booleans()):
        glob += "/"
    return ("!" if draw(st.booleans()) else "") + glob


paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map("/".join)


@settings(max_examples=500)
@given(st.lists(globs(), min_size=1, max_size=3), paths)
def test_globs_match_as_gitignore_reads_them(patterns: list[str], path: str) -> None:
    try:
        with warnings.catch_warnings():
            # pathspec 1.x deprecates the name of the wildmatch reading (in favour of one
            # that does not treat a matched folder's files as matched): it is the one git
            # documents for .gitignore, and the one the globs follow
            warnings.simplefilter("ignore", DeprecationWarning)
            spec = pathspec.PathSpec.from_lines("gitwildmatch", patterns)
    except Exception:  # a pattern the oracle itself refuses
        assume(False)
    assert (matching_glob(patterns, path) is not None) == spec.match_file(path)


@pytest.mark.parametrize(
    ("patterns", "path", "matched"),
    [
        (["migrations/**/*.py"], "migrations/versions/0042_add_col.py", "migrations/**/*.py"),
        (["migrations/**/*.py"], "migrations/env.py", "migrations/**/*.py"),
        (["migrations/**/*.py"], "app/migrations/env.py", None),  # a / anchors it
        (["migrations/**/*.py"], "Migrations/env.py", None),  # letter case counts, as in git
        (["*.sql"], "db/schema/tables.sql", "*.sql"),  # no /: any depth
        (["*.sql", "!legacy/**"], "legacy/old.sql", None),  # the last that matches decides
        (["docs/"], "docs/guide/intro.md", "docs/"),  # a folder: every file in it
        (["src/*.ts"], "src/deep/x.ts", None),  # * stays within one folder
        (["[z-a]", "x["], "x[", None),  # a class that runs backwards or never closes
    ],
)
def test_examples(patterns: list[str], path: str, matched: str | None) -> None:
    assert matching_glob(patterns, path) == matched


def test_a_file_is_taken_from_the_project_root(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "app").mkdir()
    app = str(root / "app")
    assert relative_file(str(root / "app" / "x.py"), app) == "app/x.py"
    assert relative_file("sub/../y.py", app) == "app/y.py"  # relative: from the cwd
    assert relative_file("../../elsewhere/z.py", app) is None  # outside the root
    assert relative_file(str(tmp_path / "proj2" / "a.py"), app) is None  # a sibling's prefix
    assert relative_file("/etc/passwd", app) is None
    assert relative_file("a\0b", app) is None and relative_file("x" * 5000, app) is None
    assert relative_file("a.py", "relative/cwd") is None
    plain = tmp_path / "no-git"
    plain.mkdir()
    assert relative_file("a/b.sql", str(plain)) == "a/b.sql"  # no repository: the cwd
