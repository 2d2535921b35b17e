"""A git server is hostile input too: one that never answers, one that advertises refs
without end, a tree of a few objects that names more paths than any walk can visit, and
repositories with missing or truncated objects (issue 42, items 2, 3 and 9).

The servers are threads on 127.0.0.1 only; every loop of theirs is bounded in time and
count. The network commands run as real processes (``xb_proc``) with a 2 s deadline, so
a command that would hang meets the subprocess timeout of the fixture instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, head, snapshot_files

Run = Callable[..., Result]
FAST = {"XBRAIN_NETWORK_TIMEOUT": "2"}
SLOW = {"XBRAIN_NETWORK_TIMEOUT": "60"}  # where a bound, not the deadline, must refuse
SKILL = EXAMPLES / "skills" / "deploy-check"


def pkt(data: bytes) -> bytes:
    return b"%04x" % (len(data) + 4) + data


class Server:
    """A TCP server on 127.0.0.1 that runs ``talk(conn, server)`` for each connection;
    ``sent`` counts the bytes it sent, ``stop`` ends every loop."""

    def __init__(self, talk: Callable[[socket.socket, Server], None]) -> None:
        self.talk = talk
        self.sent = 0
        self.stop = threading.Event()
        self.done = threading.Event()  # a connection has ended
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        for _ in range(3000):  # 10 minutes at most
            if self.stop.is_set():
                return
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.settimeout(60)
            conn.recv(65536)  # the client's request line
            self.talk(conn, self)
        self.done.set()


@contextlib.contextmanager
def serving(talk: Callable[[socket.socket, Server], None]) -> Iterator[Server]:
    server = Server(talk)
    server.thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        server.thread.join(5)
        server.listener.close()


def silent(conn: socket.socket, server: Server) -> None:
    """Accept, read the request, and never answer."""
    server.stop.wait(60)


def flood(line: int) -> Callable[[socket.socket, Server], None]:
    """Advertise refs without end (each pkt-line about ``line`` bytes), stopping at
    256 MiB or when the client hangs up."""

    def talk(conn: socket.socket, server: Server) -> None:
        first = b"0" * 40 + b" HEAD\0multi_ack side-band-64k ofs-delta\n"
        conn.sendall(pkt(first))
        name = b"x" * max(line - 60, 1)
        for number in range(10**7):
            if server.stop.is_set() or server.sent > 256 << 20:
                return
            data = pkt(b"1" * 40 + b" refs/tags/%s%d\n" % (name, number))
            conn.sendall(data)
            server.sent += len(data)

    return talk


def _bomb(path: Path, width: int = 3000, depth: int = 6) -> tuple[Any, bytes]:
    """A repository of a few objects: ``depth`` trees of ``width`` entries each pointing at
    the next (the last at the empty tree), ``width ** depth`` paths; its commit on main."""
    from dulwich.objects import Commit, Tree
    from dulwich.repo import Repo

    repo = Repo.init(str(path), mkdir=True)
    store = repo.object_store
    child = Tree()
    store.add_object(child)
    for _ in range(depth):
        tree = Tree()
        for i in range(width):
            tree.add(b"d%d" % i, 0o040000, child.id)
        store.add_object(tree)
        child = tree
    commit = Commit()
    commit.tree = child.id
    commit.author = commit.committer = b"m <m@example.invalid>"
    commit.commit_time = commit.author_time = 0
    commit.commit_timezone = commit.author_timezone = 0
    commit.message = b"innocent"
    store.add_object(commit)
    repo.refs[b"refs/heads/main"] = commit.id
    repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
    return repo, commit.id


@contextlib.contextmanager
def daemon(repo: Any) -> Iterator[str]:
    """A dulwich git:// server on 127.0.0.1 serving ``repo``; its URL."""
    from dulwich.server import DictBackend, TCPGitServer

    server = TCPGitServer(DictBackend({b"/": repo}), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"git://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def stocked(xb_proc: Run, store_dir: Path) -> Path:
    assert xb_proc("put", str(EXAMPLES / "batch.json")).code == 0
    return store_dir


# -- item 2: a deadline, and a bound on the ref advertisement ---------------------------------


def test_a_server_that_never_answers_is_given_up_at_the_deadline(
    xb_proc: Run, stocked: Path, tmp_path: Path
) -> None:
    """Before, each of these waited forever (here: until the fixture's 120 s timeout)."""
    cache = tmp_path / "cache"
    env = {**FAST, "XBRAIN_CACHE_DIR": str(cache)}
    with serving(silent) as server:
        url = f"git://127.0.0.1:{server.port}/skills"
        fresh = tmp_path / "fresh"
        result = xb_proc("skill", "import", url, store=fresh, env=env)
        assert result.code == 8, result.stderr
        assert "no complete answer within 2 s" in result.stderr
        assert "XBRAIN_NETWORK_TIMEOUT" in result.stderr
        assert not fresh.exists()
        assert list((cache / "import").iterdir()) == []  # its scratch repository is gone

        assert xb_proc("remote", "add", "origin", url).code == 0
        before_head, before = head(stocked), snapshot_files(stocked)
        for args in (("remote", "pull"), ("remote", "verify"), ("remote", "push")):
            result = xb_proc(*args, env=env)
            assert result.code == 8, (args, result.stderr)
            assert "no complete answer within 2 s" in result.stderr, args
        assert head(stocked) == before_head
        assert snapshot_files(stocked) == before
        for scratch in ("incoming", "verify"):
            found = stocked / ".git" / "xbrain" / scratch
            assert not found.exists() or list(found.iterdir()) == []

        clone = tmp_path / "clone"
        result = xb_proc("clone", url, str(clone), store=None, env=env)
        assert result.code == 8 and "no complete answer within 2 s" in result.stderr
        assert not clone.exists()


@pytest.mark.parametrize(
    ("line", "said"),
    [(80, "advertised more than 50,000 refs"), (60_000, "sent more than 8 MiB before its pack")],
)
def test_an_endless_ref_advertisement_is_refused_before_it_grows(
    xb_proc: Run, stocked: Path, tmp_path: Path, line: int, said: str
) -> None:
    """Before, the whole advertisement was read into memory (1 GB and more): here the
    client stops reading a few MiB in, so the server's sending ends there too."""
    with serving(flood(line)) as server:
        url = f"git://127.0.0.1:{server.port}/skills"
        fresh = tmp_path / "fresh"
        result = xb_proc("skill", "import", url, store=fresh, env=SLOW)
        assert result.code == 4, result.stderr
        assert said in result.stderr
        assert not fresh.exists()
        assert server.done.wait(30)
        assert server.sent < 32 << 20  # bounded: the limit and what the sockets buffer

        server.sent = 0
        server.done.clear()
        assert xb_proc("remote", "add", "origin", url).code == 0
        before_head, before = head(stocked), snapshot_files(stocked)
        result = xb_proc("remote", "pull", env=SLOW)
        assert result.code == 4 and said in result.stderr, result.stderr
        assert head(stocked) == before_head and snapshot_files(stocked) == before
        assert server.done.wait(30)
        assert server.sent < 32 << 20


def trickle(conn: socket.socket, server: Server) -> None:
    """One ref line every 0.2 s for a minute: every read finishes, the whole never does."""
    conn.sendall(pkt(b"0" * 40 + b" HEAD\0multi_ack side-band-64k ofs-delta\n"))
    for number in range(300):
        if server.stop.wait(0.2):
            return
        data = pkt(b"1" * 40 + b" refs/tags/t%d\n" % number)
        conn.sendall(data)
        server.sent += len(data)


def test_a_server_that_trickles_is_given_up_at_the_deadline_too(
    xb_proc: Run, tmp_path: Path
) -> None:
    """No single read waits long, so no socket timeout fires: the deadline is checked at
    every line. Before, the import lasted as long as the server went on (here a minute)."""
    with serving(trickle) as server:
        url = f"git://127.0.0.1:{server.port}/skills"
        fresh = tmp_path / "fresh"
        result = xb_proc("skill", "import", url, store=fresh, env=FAST)
        assert result.code == 8, result.stderr
        assert "no complete answer within 2 s" in result.stderr
        assert not fresh.exists()
        assert server.done.wait(30)
        assert server.sent < 100 * 60  # it stopped listening long before the minute


def http_flood(conn: socket.socket, server: Server) -> None:
    """An http(s) server's ref advertisement without end (stops at 256 MiB)."""
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\n\r\n"
    )
    conn.sendall(pkt(b"# service=git-upload-pack\n") + b"0000")
    conn.sendall(pkt(b"0" * 40 + b" HEAD\0multi_ack side-band-64k ofs-delta\n"))
    for number in range(10**7):
        if server.stop.is_set() or server.sent > 256 << 20:
            return
        data = pkt(b"1" * 40 + b" refs/tags/%s%d\n" % (b"t" * 2000, number))
        conn.sendall(data)
        server.sent += len(data)


def test_over_http_the_same_deadline_and_bound_hold(xb_proc: Run, tmp_path: Path) -> None:
    """Before, an http server that never answered held the import until it hung up, and
    one that flooded refs was read whole."""
    fresh = tmp_path / "fresh"
    with serving(silent) as server:
        url = f"http://127.0.0.1:{server.port}/skills"
        result = xb_proc("skill", "import", url, store=fresh, env=FAST)
        assert result.code == 8, result.stderr
        assert "no complete answer within 2 s" in result.stderr
    with serving(http_flood) as server:
        url = f"http://127.0.0.1:{server.port}/skills"
        result = xb_proc("skill", "import", url, store=fresh, env=SLOW)
        assert result.code == 4, result.stderr
        assert "sent more than 8 MiB before its pack" in result.stderr
        assert server.done.wait(30)
        assert server.sent < 32 << 20
    assert not fresh.exists()


def test_a_bad_deadline_setting_is_a_usage_error(xb_proc: Run, tmp_path: Path) -> None:
    for value in ("soon", "0", "-1", "nan", "1e9"):
        fresh = tmp_path / "fresh"
        result = xb_proc(
            "skill", "import", "git://127.0.0.1:9/x", store=fresh,
            env={"XBRAIN_NETWORK_TIMEOUT": value},
        )  # fmt: skip
        assert result.code == 2, (value, result.stderr)
        assert "XBRAIN_NETWORK_TIMEOUT must be a number of seconds" in result.stderr
        assert not fresh.exists()


def test_a_killed_import_leaves_nothing_the_next_run_does_not_remove(
    xb_proc: Run, tmp_path: Path
) -> None:
    """Before, a killed import left /tmp/xbrain-import-* behind for good; now its scratch
    repository is ``<pid>-…`` under the cache's ``import/``, removed by the next import."""
    cache = tmp_path / "cache"
    scratch = cache / "import"
    env = {**os.environ, "XBRAIN_CACHE_DIR": str(cache), "XBRAIN_NETWORK_TIMEOUT": "60"}
    with serving(silent) as server:
        url = f"git://127.0.0.1:{server.port}/skills"
        argv = [sys.executable, "-m", "xbrain", "skill", "import", url]
        proc = subprocess.Popen(
            [*argv, "--store", str(tmp_path / "s1")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(600):  # until its scratch repository exists (60 s at most)
                if scratch.is_dir() and list(scratch.iterdir()):
                    break
                time.sleep(0.1)
            left = list(scratch.iterdir())
            assert [p.name.split("-")[0] for p in left] == [str(proc.pid)]
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        assert left[0].exists()  # what the killed process left
        result = xb_proc(
            "skill", "import", url, store=tmp_path / "s2",
            env={"XBRAIN_CACHE_DIR": str(cache), **FAST},
        )  # fmt: skip
        assert result.code == 8
    assert list(scratch.iterdir()) == []
    assert not (tmp_path / "s1").exists() and not (tmp_path / "s2").exists()


# -- item 3: a tree that names more paths than any walk can visit --------------------------------


def test_a_tree_bomb_is_refused_by_skill_import_over_file_and_git(
    xb_proc: Run, tmp_path: Path
) -> None:
    """Six trees of 3,000 entries, each pointing at the next: 3000^6 paths in ~150 KB.
    Before, the import walked them all (never finished)."""
    repo, _ = _bomb(tmp_path / "bomb")
    objects = sum(f.stat().st_size for f in (tmp_path / "bomb" / ".git").rglob("*") if f.is_file())
    assert objects < 512 << 10
    with daemon(repo) as url:
        for source in (f"file://{tmp_path / 'bomb'}", url):
            fresh = tmp_path / "fresh"
            result = xb_proc("skill", "import", source, store=fresh, env=SLOW)
            assert result.code == 4, (source, result.stderr)
            assert "too big to import: more than 408 folders or 816 entries" in result.stderr
            assert not fresh.exists()
    repo.close()


def test_a_tree_bomb_is_refused_by_pull_clone_and_verify(
    xb_proc: Run, stocked: Path, tmp_path: Path
) -> None:
    """The intake gate checks the layout leaf by leaf, and the bomb has no leaf until the
    bottom: the layout alone never stops it. The walk is held to 100 trees and entries
    per record the store may hold (1,000,000 at the default 10,000)."""
    remote = tmp_path / "bomb"
    repo, _ = _bomb(remote)
    repo.close()
    clone = tmp_path / "clone"
    result = xb_proc("clone", str(remote), str(clone), store=None, env=FAST)
    assert result.code == 4, result.stderr
    assert "more than 1,000,000 folders and entries" in result.stderr
    assert not clone.exists()

    assert xb_proc("remote", "add", "origin", str(remote)).code == 0
    before_head, before = head(stocked), snapshot_files(stocked)
    result = xb_proc("remote", "pull", env=FAST)
    assert result.code == 4, result.stderr
    assert "Refused remote origin: its tree has more than 1,000,000" in result.stderr
    result = xb_proc("remote", "verify", env=FAST)
    assert result.code == 7
    assert "more than 1,000,000 folders and entries" in result.stdout
    assert head(stocked) == before_head and snapshot_files(stocked) == before


def test_the_walk_bound_follows_the_limit_raised_on_this_device(
    xb_proc: Run, stocked: Path, tmp_path: Path
) -> None:
    remote = tmp_path / "bomb"
    _bomb(remote)[0].close()
    assert xb_proc("remote", "add", "origin", str(remote)).code == 0
    assert xb_proc("config", "limits.maxEntries", "20000").code == 0
    result = xb_proc("remote", "pull", env=FAST)
    assert result.code == 4 and "more than 2,000,000 folders and entries" in result.stderr


# -- item 9: missing and truncated objects are damage, said as such -------------------------------


def _git(*args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(
        ["git", *args], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is needed")


@needs_git
def test_a_missing_blob_in_a_local_repository_is_its_damage_not_an_internal_error(
    xb_proc: Run, tmp_path: Path
) -> None:
    """Before: ``Internal error (KeyError)``, exit 1."""
    repo = tmp_path / "src"
    shutil.copytree(SKILL, repo / "deploy-check")
    _git("init", "-q", str(repo))
    _git("-C", str(repo), "add", "-A")
    _git("-C", str(repo), "commit", "-qm", "skill")
    sha = _git("-C", str(repo), "rev-parse", "HEAD:deploy-check/SKILL.md")
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    fresh = tmp_path / "fresh"
    for source in (str(repo), f"file://{repo}"):
        result = xb_proc("skill", "import", source, "--path", "deploy-check", store=fresh)
        assert result.code == 8, result.stderr
        assert f"The repository at {repo} is damaged" in result.stderr
        assert "Internal error" not in result.stderr
        assert not fresh.exists()


@needs_git
def test_a_store_missing_a_blob_cannot_push_and_says_it_is_corrupt(
    xb_proc: Run, stocked: Path, tmp_path: Path
) -> None:
    """Before: exit 8, ``Could not push to origin: b'<sha>'`` (the store's damage said as
    the remote's)."""
    backup = tmp_path / "backup.git"
    _git("init", "-q", "--bare", str(backup))
    assert xb_proc("remote", "add", "origin", str(backup)).code == 0
    sha = _git("-C", str(stocked), "rev-parse", "HEAD:xbrain.yaml")
    (stocked / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    result = xb_proc("remote", "push")
    assert result.code == 7, result.stderr
    assert "An object of the store is missing or damaged" in result.stderr
    assert _git("-C", str(backup), "for-each-ref") == ""  # nothing pushed


@needs_git
@pytest.mark.parametrize("damage", ["missing blob", "truncated pack"])
def test_a_damaged_backup_is_said_to_be_damaged(
    xb_proc: Run, stocked: Path, tmp_path: Path, damage: str
) -> None:
    """Before: ``cannot close exported pointers exist`` (dulwich's words) for a truncated
    pack, and a missing object said as a bare object id."""
    backup = tmp_path / "backup.git"
    _git("init", "-q", "--bare", str(backup))
    assert xb_proc("remote", "add", "origin", str(backup)).code == 0
    assert xb_proc("remote", "push").code == 0
    if damage == "missing blob":
        loosen(backup)
        sha = _git("-C", str(backup), "rev-parse", "main:xbrain.yaml")
        (backup / "objects" / sha[:2] / sha[2:]).unlink()
    else:
        (pack,) = (backup / "objects" / "pack").glob("*.pack")
        pack.chmod(0o600)
        with open(pack, "r+b") as handle:
            handle.truncate(pack.stat().st_size * 2 // 3)
    before_head, before = head(stocked), snapshot_files(stocked)
    for _ in range(3):
        result = xb_proc("remote", "verify")
        assert result.code == 8, result.stderr
        assert f"Could not fetch from {backup}: its repository is damaged" in result.stderr
    clone = tmp_path / "clone"
    result = xb_proc("clone", str(backup), str(clone), store=None)
    assert result.code == 8 and "its repository is damaged" in result.stderr, result.stderr
    assert not clone.exists()
    assert head(stocked) == before_head and snapshot_files(stocked) == before


def test_an_object_missing_from_an_incoming_commit_is_the_remotes_damage(
    tmp_path: Path,
) -> None:
    """A commit that names a blob it did not bring: before, CorruptStoreError (exit 7,
    'run xbrain doctor', as if the store were damaged); now the remote's damage, exit 8."""
    from dulwich.objects import Commit, Tree

    from xbrain.errors import ProviderError
    from xbrain.git import GitStore
    from xbrain.remote.intake import check_commit

    path = tmp_path / "incoming"
    path.mkdir()
    GitStore.init_private(path)
    with GitStore(path) as git:
        repo = git._repo  # the test builds the hostile commit with dulwich itself
        tree = Tree()
        tree.add(b"xbrain.yaml", 0o100644, b"1" * 40)  # a blob that is not there
        repo.object_store.add_object(tree)
        commit = Commit()
        commit.tree = tree.id
        commit.author = commit.committer = b"m <m@example.invalid>"
        commit.commit_time = commit.author_time = 0
        commit.commit_timezone = commit.author_timezone = 0
        commit.message = b"innocent"
        repo.object_store.add_object(commit)
        with pytest.raises(ProviderError) as caught:
            check_commit(git, None, commit.id.decode(), "remote origin")  # type: ignore[arg-type]
    assert caught.value.exit_code == 8
    assert "Refused remote origin: a git object it should have sent is missing" in str(caught.value)


def loosen(backup: Path) -> None:
    """Turn the backup's one pack into loose objects (so that one can be removed)."""
    (pack,) = (backup / "objects" / "pack").glob("*.pack")
    data = pack.read_bytes()
    pack.with_suffix(".idx").unlink()
    pack.unlink()
    subprocess.run(["git", "-C", str(backup), "unpack-objects", "-q"], input=data, check=True)
