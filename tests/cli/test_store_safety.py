"""Locking, privacy and the git working tree after every command."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, head, make, sample, snapshot_files

Run = Callable[..., Result]


def test_busy_store_fails_fast_then_waits(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb("put", json_file(sample()))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time, filelock\n"
            f"lock = filelock.FileLock({str(store_dir / '.git' / 'xbrain.lock')!r})\n"
            "lock.acquire()\nprint('held', flush=True)\ntime.sleep(1.5)\nlock.release()\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = snapshot_files(store_dir)
        busy = xb("put", json_file(make("b")))
        assert (busy.code, busy.stderr) == (
            6,
            "Memory store is busy; retry after the other command finishes.\n",
        )
        assert snapshot_files(store_dir) == before
        assert (
            xb(
                "get", "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56"
            ).code
            == 0
        )
        waited = xb("put", json_file(make("b")), "--wait", "30")
        assert waited.code == 0 and waited.json["added"] == 1
    finally:
        holder.wait(timeout=30)
        holder.stdout.close()


def test_everything_is_private(xb: Run, json_file: Callable[[Any], str], store_dir: Path) -> None:
    xb("put", json_file([make(f"r{i}") for i in range(100)]))  # large enough to write a pack
    xb("delete", make("r1")["source"]["id"])
    for path in [store_dir, *store_dir.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"


def test_existing_parent_permissions_untouched(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path
) -> None:
    parent = tmp_path / "shared"
    parent.mkdir()
    os.chmod(parent, 0o755)
    xb("put", json_file(sample()), store=parent / "new" / "nested" / "store")
    assert stat.S_IMODE(parent.stat().st_mode) == 0o755
    for created in (parent / "new", parent / "new" / "nested"):
        assert stat.S_IMODE(created.stat().st_mode) == 0o700
    xb(
        "export-store",
        str(parent / "out" / "deep" / "export.json"),
        store=parent / "new" / "nested" / "store",
    )
    assert stat.S_IMODE((parent / "out").stat().st_mode) == 0o700
    assert stat.S_IMODE((parent / "out" / "deep" / "export.json").stat().st_mode) == 0o600


def test_python_m_xbrain_works(xb_proc: Run, json_file: Callable[[Any], str]) -> None:
    result = xb_proc("put", json_file(sample()))
    assert result.code == 0 and result.stderr == ""
    assert result.json["added"] == 1
    failed = xb_proc("get", "resource_" + "c" * 64)
    assert failed.code == 3 and failed.stdout == "" and failed.stderr == "Resource not found.\n"
    trace = xb_proc("get", "resource_" + "c" * 64, "--traceback")
    assert "Traceback" in trace.stderr


ENDING = """
import atexit, gc, sys
def ended():
    sys.stderr.write(f"frozen at exit: {bool(gc.get_freeze_count())}\\n")
atexit.register(ended)
sys.argv = ["xbrain", *sys.argv[1:]]
from xbrain.launch import main
main()
"""


@pytest.mark.parametrize(
    ("args", "code"), [(["--help"], 0), (["status"], 0), (["list"], 0), (["get", "x"], 3)]
)
def test_a_command_ends_without_python_walking_what_it_loaded(
    store_dir: Path, args: list[str], code: int
) -> None:
    """At its end the process freezes what it has loaded, so Python's shutdown does not
    walk every object for cycles (about as long as starting Python, once dulwich and
    ruamel.yaml are in): after a light path, a click command and an error alike. What a
    shutdown must do still happens: atexit handlers run and the output is complete."""
    xb_args = [*args, "--store", str(store_dir)] if args != ["--help"] else args
    init = [sys.executable, "-m", "xbrain", "init", "--store", str(store_dir)]
    subprocess.run(init, check=True, capture_output=True)
    proc = subprocess.run(
        [sys.executable, "-c", ENDING, *xb_args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.endswith("frozen at exit: True\n"), proc.stderr
    if code == 0 and args != ["--help"]:
        assert json.loads(proc.stdout)  # the whole document arrived


def test_usage_errors_are_one_line(xb_proc: Run) -> None:
    for args in (["nonsense"], ["put"], ["get", "a", "b"], ["put", "x", "--wait", "-1"]):
        result = xb_proc(*args)
        assert result.code == 2, args
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1 and "--help" in result.stderr, result.stderr


def test_a_store_path_through_a_link_is_made_where_the_link_points(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    """A link to a missing or an empty folder: the store is made there, the link kept
    (the rename onto the link failed with a message naming a temporary directory)."""
    xb("put", json_file(sample()))
    for name in ("dangling", "to-empty"):
        real = tmp_path / f"{name}-real"
        if name == "to-empty":
            real.mkdir()
        link = tmp_path / name
        link.symlink_to(real)
        made = xb("init", store=link)
        assert made.code == 0 and made.json["created"], made.stderr
        assert link.is_symlink() and (real / ".git").is_dir()
        clone_link = tmp_path / f"clone-{name}"
        clone_real = tmp_path / f"clone-{name}-real"
        if name == "to-empty":
            clone_real.mkdir()
        clone_link.symlink_to(clone_real)
        cloned = xb("clone", str(store_dir), str(clone_link), store=None)
        assert cloned.code == 0, cloned.stderr
        assert clone_link.is_symlink() and (clone_real / "xbrain.yaml").is_file()
        assert xb("status", store=clone_link).json["resources"] == 1
    assert not [p for p in tmp_path.iterdir() if ".init-" in p.name or ".clone-" in p.name]


@pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is not installed")
@pytest.mark.parametrize("commits", [False, True])
def test_init_refuses_a_git_repository_that_is_not_a_store(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, commits: bool
) -> None:
    """It answered {"created": false} (exit 0) for a project's repository or an empty
    ``git init``, as for a store; then every write refused the folder."""
    project = tmp_path / "project"
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    if commits:
        (project / "README").write_text("my project\n")
        subprocess.run(["git", "-C", str(project), "add", "README"], check=True)
        user = ["-c", "user.name=Someone", "-c", "user.email=someone@example.invalid"]
        subprocess.run(["git", "-C", str(project), *user, "commit", "-qm", "start"], check=True)
    before = snapshot_files(project)
    refused = xb("init", store=project)
    assert refused.code == 7 and "Not an xbrain store" in refused.stderr, refused.stderr
    assert refused.stdout == ""
    assert snapshot_files(project) == before
    assert xb("put", json_file(sample()), store=project).code == 7


def test_no_store_is_made_inside_another_store(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    """init, a first write and clone refuse a folder in a store's working tree (or its
    .git): the new repository would sit among the outer store's records."""
    xb("put", json_file(sample()))
    before = snapshot_files(store_dir)
    inside = [
        store_dir / "resources" / "nested",
        store_dir / "new" / "deeper",
        store_dir / ".git" / "x",
    ]
    for path in inside:
        for result in (
            xb("init", store=path),
            xb("put", json_file(make("n")), store=path),
            xb("clone", str(store_dir), str(path), store=None),
        ):
            assert result.code == 4, result.stderr
            assert result.stderr == (
                f"{path} is inside the store {store_dir}; choose a folder outside it.\n"
            )
    assert snapshot_files(store_dir) == before
    assert xb("doctor").json["ok"]
    # beside the store, and in folders that only look like one, all is well: no .git, or
    # a git project whose own xbrain.yaml is not a store's marker
    assert xb("init", store=tmp_path / "beside").code == 0
    for name, git_dir in (("plain", False), ("project", True)):
        (tmp_path / name / (".git" if git_dir else "src")).mkdir(parents=True)
        (tmp_path / name / "xbrain.yaml").write_text("format: none\n")
        assert xb("init", store=tmp_path / name / "store").code == 0
    # a FIFO of that name is never opened for a blocking read (the check would hang)
    (tmp_path / "fifo" / ".git").mkdir(parents=True)
    os.mkfifo(tmp_path / "fifo" / "xbrain.yaml")
    assert xb("init", store=tmp_path / "fifo" / "store").code == 0


def test_a_store_path_starting_with_a_tilde_is_in_the_home_folder(tmp_path: Path) -> None:
    """An MCP client's args and a hook's settings pass ``~/…`` with no shell to expand it:
    every door (click, the light search, recall and write paths, the hook, XBRAIN_STORE)
    made a folder named ``~`` in whatever folder the client ran in."""
    home, elsewhere = tmp_path / "home", tmp_path / "cwd"
    home.mkdir(exist_ok=True)
    elsewhere.mkdir()
    env = {**os.environ, "HOME": str(home)}
    example = str(Path(__file__).resolve().parents[2] / "examples" / "batch.json")

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "xbrain", *args],
            capture_output=True,
            text=True,
            cwd=elsewhere,
            env={**env, **extra},
            input="卡片 设计 推文",
        )

    assert run("put", example, "--store", "~/mine").returncode == 0
    assert run("skill", "list", "--store=~/mine").returncode == 0
    found = run("search", "卡片", "--store", "~/mine", XBRAIN_CACHE_DIR="~/cache")
    assert found.returncode == 0 and json.loads(found.stdout)["results"], found.stderr
    assert list((home / "cache").glob("jieba-*.bin"))  # the compiled dictionary went home
    recalled = run("recall", "-", XBRAIN_STORE="~/mine")
    assert json.loads(recalled.stdout)["results"], recalled.stderr
    assert json.loads(run("status", XBRAIN_STORE="~/mine").stdout)["resources"] == 2
    assert run("hook", "claude-code", "--store", "~/mine").returncode == 0
    assert (home / "mine" / ".git").is_dir()
    assert list(elsewhere.iterdir()) == []


def test_a_full_disk_says_what_was_committed_and_keeps_no_partial_copy(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills up after a commit, while the working tree is written: that write
    says it is committed; the next one, which must first finish the working tree, said
    so too although it wrote nothing; and doctor --repair left an empty "rescued" copy
    of each file it could not copy whole."""
    import errno

    from xbrain.git import wtfiles

    assert xb("put", json_file(make("a"))).code == 0

    def full(path: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    def full_copy(self: Path, data: bytes) -> int:
        with self.open("wb") as handle:  # created, then nothing fits
            handle.write(data[:0])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(wtfiles, "write_new", full)
    before = head(store_dir)
    first = xb("put", json_file(make("b")))
    assert first.code == 1 and "the change is committed" in first.stderr, first.stderr
    committed = head(store_dir)
    assert committed != before
    second = xb("put", json_file(make("c")))
    assert second.code == 1 and "nothing new was written" in second.stderr, second.stderr
    assert "is committed" not in second.stderr and head(store_dir) == committed
    monkeypatch.setattr(Path, "write_bytes", full_copy)
    repair = xb("doctor", "--repair")
    assert repair.code == 1 and repair.stderr.startswith("The disk is full"), repair.stderr
    assert not (store_dir / ".git" / "xbrain" / "rescued").exists()
    monkeypatch.undo()
    assert xb("put", json_file(make("c"))).code == 0
    report = xb("doctor").json
    assert report["problems"] == [] and xb("status").json["resources"] == 3


FULL_GIT_FILES = """
import errno, io, os, sys, types
import dulwich.file

class Full(io.FileIO):  # every write: the disk is full
    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

def fdopen(fd, mode="r", *args, **kwargs):
    if "w" in mode:
        return io.BufferedWriter(Full(fd, "w"))
    return os.fdopen(fd, mode, *args, **kwargs)

dulwich.file.os = types.SimpleNamespace(**{n: getattr(os, n) for n in dir(os)})
dulwich.file.os.fdopen = fdopen
from xbrain.launch import main
main()
"""


def test_a_full_disk_under_git_is_one_line_not_a_traceback(
    json_file: Callable[[Any], str], store_dir: Path, tmp_path: Path
) -> None:
    """dulwich's lock file, whose flush failed, fails again when collected: Python printed
    "Exception ignored in … _GitFile.__del__" and a traceback under the one line."""
    script = tmp_path / "full.py"
    script.write_text(FULL_GIT_FILES)
    put = [sys.executable, str(script), "put", json_file(sample()), "--store", str(store_dir)]
    init = [sys.executable, "-m", "xbrain", "init", "--store", str(store_dir)]
    subprocess.run(init, check=True, capture_output=True)
    before = head(store_dir)
    result = subprocess.run(put, capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr == "The disk is full (no space left on device); nothing was committed.\n"
    assert head(store_dir) == before


def test_a_git_commands_index_lock_is_never_taken_for_a_killed_writes(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """A write that found ``index.lock`` held (a git command in the store) keeps its
    pending marker; so did one refused by a held ``main.lock``. The next write then took
    any ``index.lock`` newer than the marker for a killed xbrain write's and deleted it —
    a live git command's lock."""
    assert xb("put", json_file(make("a"))).code == 0
    marker = store_dir / ".git" / "xbrain" / "worktree-pending.json"
    main_lock = store_dir / ".git" / "refs" / "heads" / "main.lock"
    main_lock.write_text("")
    assert xb("put", json_file(make("b"))).code == 6
    main_lock.unlink()
    assert not marker.exists()  # main did not move: nothing is pending
    index_lock = store_dir / ".git" / "index.lock"
    for n, source in enumerate(("c", "d", "e")):
        index_lock.write_text("")  # a git command takes the index (again)
        later = time.time() + n + 1
        os.utime(index_lock, (later, later))
        assert xb("put", json_file(make(source))).code == 0
        assert index_lock.exists(), source
        assert marker.exists()  # the index is still to be written
    report = xb("doctor").json["problems"]
    pending = [p["message"] for p in report if p["code"] == "worktree_pending"]
    assert pending and "xbrain doctor --repair" in pending[0], report  # what to do
    index_lock.unlink()
    assert xb("put", json_file(make("f"))).code == 0
    assert not marker.exists() and xb("doctor").json["problems"] == []
