"""A bundle to restore from (``xbrain clone FILE DIR``) is input from outside: damaged,
incremental, oversized or hostile bundles are refused in one line, and nothing is left
where the store would have been."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Result
from tests.security.mallory import git

Run = Callable[..., Result]
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is needed")


@pytest.fixture
def backup(xb: Run, store_dir: Path, tmp_path: Path) -> Path:
    """A good bundle of a store with two commits."""
    assert xb("put", str(EXAMPLES / "batch.json")).code == 0
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    bundle = tmp_path / "good.bundle"
    assert xb("backup", "create", str(bundle)).code == 0
    return bundle


def refused(xb: Run, bundle: Path, tmp_path: Path, codes: tuple[int, ...] = (4,)) -> str:
    """Clone ``bundle``: refused with one line, no store and no scratch left behind."""
    target = tmp_path / "parent" / "restored"
    result = xb("clone", str(bundle), str(target), store=None)
    assert result.code in codes, (result.code, result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.strip()
    assert not target.exists() and not (tmp_path / "parent").exists()
    return result.stderr


def test_a_truncated_bundle_is_refused(xb: Run, backup: Path, tmp_path: Path) -> None:
    data = backup.read_bytes()
    for cut in (len(data) // 2, len(data) - 10, data.index(b"\n\n") + 2):
        damaged = tmp_path / f"cut-{cut}.bundle"
        damaged.write_bytes(data[:cut])
        message = refused(xb, damaged, tmp_path)
        assert message.startswith(f"The bundle {damaged} ")
        assert any(word in message for word in ("truncated", "damaged", "cut short"))


def test_a_bundle_with_a_flipped_byte_is_refused(xb: Run, backup: Path, tmp_path: Path) -> None:
    data = bytearray(backup.read_bytes())
    pack = data.index(b"PACK")
    for where in (pack + 40, len(data) - 30, len(data) - 1):
        damaged = tmp_path / f"flip-{where}.bundle"
        flipped = bytearray(data)
        flipped[where] ^= 0xFF
        damaged.write_bytes(bytes(flipped))
        assert refused(xb, damaged, tmp_path).startswith(f"The bundle {damaged} ")


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b'{"version": 1}\n',
        b"# v2 git bundle\n",
        b"# v2 git bundle\n" + b"a" * 100_000,  # a header line that never ends
        b"# v2 git bundle\n" + b"0" * 40 + b" refs/heads/main\n\n",  # no pack
        b"# v2 git bundle\n" + b"0" * 40 + b" refs/heads/other\n\nPACK",
        b"# v3 git bundle\n@filter=blob:none\n" + b"0" * 40 + b" refs/heads/main\n\nPACK",
        b"# v2 git bundle\n" + (b"0" * 40 + b" refs/tags/t\n") * 2000 + b"\n",
    ],
    ids=["empty", "json", "header", "endless-line", "no-pack", "no-main", "filter", "refs"],
)
def test_what_is_not_a_complete_bundle_of_main_is_refused(
    xb: Run, tmp_path: Path, content: bytes
) -> None:
    bundle = tmp_path / "x.bundle"
    bundle.write_bytes(content)
    assert refused(xb, bundle, tmp_path).startswith(f"The bundle {bundle} ")


def test_an_incremental_bundle_is_refused(
    xb: Run, backup: Path, store_dir: Path, tmp_path: Path
) -> None:
    incremental = tmp_path / "inc.bundle"
    git(store_dir, "bundle", "create", str(incremental), "main~1..main")
    assert "incremental" in refused(xb, incremental, tmp_path)


def test_a_bundle_over_the_size_bound_is_refused_unread(
    xb: Run, backup: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from xbrain.remote import backup as backup_module

    monkeypatch.setattr(backup_module, "MAX_BUNDLE", backup.stat().st_size - 1)
    assert "larger than" in refused(xb, backup, tmp_path)


@pytest.mark.parametrize(
    "extra",
    [
        ("100644", "evil.sh", "echo pwned\n"),  # no place in a store's layout
        ("120000", "resources", "/etc"),  # a link where records live
        ("100755", "xbrain-run", "#!/bin/sh\n"),
    ],
    ids=["stray-file", "symlink", "executable"],
)
def test_a_bundle_of_a_hostile_tree_meets_the_clone_gate(
    xb: Run, backup: Path, store_dir: Path, tmp_path: Path, extra: tuple[str, str, str]
) -> None:
    """A bundle git made of a store with a hostile commit on top: the same gate as any
    clone refuses it, and nothing is written."""
    mode, name, text = extra
    sha = git(store_dir, "hash-object", "-w", "--stdin", input=text)
    listing = [
        line for line in git(store_dir, "ls-tree", "main").splitlines() if not line.endswith(name)
    ]
    entries = "".join(line + "\n" for line in listing) + f"{mode} blob {sha}\t{name}\n"
    tree = git(store_dir, "mktree", input=entries)
    commit = git(store_dir, "commit-tree", tree, "-p", "main", "-m", "innocent")
    git(store_dir, "update-ref", "refs/heads/main", commit)
    hostile = tmp_path / "hostile.bundle"
    git(store_dir, "bundle", "create", str(hostile), "main")
    assert "Refused" in refused(xb, hostile, tmp_path)
