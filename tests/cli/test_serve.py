"""``xbrain serve``: the warm server recall, search and the hooks ask first."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Result

Run = Callable[..., Result]
pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets only")


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A short private runtime dir (socket paths are limited to ~100 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="xbr"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def cli(
    runtime: Path,
    store: Path,
    *args: str,
    stdin: str = "",
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    given = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XBRAIN_STORE": str(store)}
    return subprocess.run(
        [sys.executable, "-m", "xbrain", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**given, **(env or {})},
        cwd=cwd,
        timeout=60,
    )


def start(
    runtime: Path,
    store: Path,
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[str]:
    given = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XBRAIN_STORE": str(store)}
    server = subprocess.Popen(
        [sys.executable, "-m", "xbrain", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**given, **(env or {})},
        cwd=cwd,
    )
    assert server.stderr is not None
    line = server.stderr.readline()  # "listening on …" once the socket accepts
    assert "listening on" in line, line + server.stderr.read()
    return server


def finished(server: subprocess.Popen[str]) -> dict[str, object]:
    out, _ = server.communicate(timeout=30)
    assert server.returncode == 0
    result: dict[str, object] = json.loads(out)
    return result


def raw(sock: str, request: bytes, *, handshake: bool = True) -> bytes:
    """Send ``request`` to the server at ``sock`` as a client would (the opening line,
    READY, then the rest) or, without ``handshake``, all at once; what comes back."""
    from xbrain.serveclient import MAGIC, READY

    answer = b""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(sock)
        if handshake:
            conn.sendall(MAGIC + b"\n")
            assert conn.recv(1) == READY
        with contextlib.suppress(OSError):  # a server refusing a request may hang up
            conn.sendall(request)
            conn.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            while chunk := conn.recv(1 << 16):
                answer += chunk
    return answer


@pytest.fixture
def stocked(xb: Run, store_dir: Path) -> Path:
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    return store_dir


def test_answers_match_a_fresh_process_and_new_commits_are_seen(
    xb: Run, stocked: Path, runtime: Path
) -> None:
    prompt = "can I git push --force to main?"
    alone = cli(runtime, stocked, "recall", "-", stdin=prompt)
    searched = cli(runtime, stocked, "search", "keyboard dialog", "--brief")
    server = start(runtime, stocked)
    try:
        sock = next((runtime / "xbrain").glob("*.sock"))
        assert sock.stat().st_mode & 0o777 == 0o600
        assert (runtime / "xbrain").stat().st_mode & 0o777 == 0o700
        assert cli(runtime, stocked, "recall", "-", stdin=prompt).stdout == alone.stdout
        assert cli(runtime, stocked, "search", "keyboard dialog", "--brief").stdout == (
            searched.stdout
        )
        hook = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt})
        answered = json.loads(cli(runtime, stocked, "hook", "claude-code", stdin=hook).stdout)
        assert "no-force-push" in answered["hookSpecificOutput"]["additionalContext"]
        rule = {
            "kind": "rule",
            "name": "tabs-rule",
            "queries": ["indent with tabs"],
            "body": "Tabs.",
        }
        assert xb("entry", "put", "-", input=json.dumps(rule)).code == 0  # a new commit
        fresh = cli(runtime, stocked, "recall", "-", stdin="should I indent with tabs")
        assert [r["name"] for r in json.loads(fresh.stdout)["results"]] == ["tabs-rule"]
        bad = cli(runtime, stocked, "recall", "-", "--budget", "5", stdin="x")
        assert bad.returncode == 4 and bad.stderr.count("\n") == 1  # errors come back too
        assert cli(runtime, stocked, "serve").returncode == 5  # one server per store
        stopped = cli(runtime, stocked, "serve", "--stop")
        assert json.loads(stopped.stdout)["stopped"] is True
        summary = finished(server)
    finally:
        server.kill()
        server.communicate()
    # recall, search, hook, recall after the commit, the bad recall, stop: all served
    assert summary["stopped"] == "stop" and summary["served"] == 6
    assert not list((runtime / "xbrain").glob("*.sock"))
    assert json.loads(cli(runtime, stocked, "serve", "--stop").stdout)["stopped"] is False


def test_idle_exit_and_signals(stocked: Path, runtime: Path) -> None:
    started = time.monotonic()
    assert finished(start(runtime, stocked, "--idle", "1"))["stopped"] == "idle"
    assert time.monotonic() - started < 20
    server = start(runtime, stocked)
    server.send_signal(signal.SIGTERM)
    assert finished(server)["stopped"] == "signal"


def test_a_dead_server_is_not_waited_for(stocked: Path, runtime: Path) -> None:
    server = start(runtime, stocked)
    server.kill()  # its socket file stays behind
    server.communicate()
    assert list((runtime / "xbrain").glob("*.sock"))
    started = time.monotonic()
    answered = cli(runtime, stocked, "recall", "-", stdin="git push --force")
    assert answered.returncode == 0 and json.loads(answered.stdout)["results"]
    assert time.monotonic() - started < 20
    again = start(runtime, stocked)  # the stale socket is replaced
    assert json.loads(cli(runtime, stocked, "serve", "--stop").stdout)["stopped"]
    finished(again)


def test_a_stopped_server_is_not_waited_for(stocked: Path, runtime: Path, tmp_path: Path) -> None:
    """A server that is stopped (Ctrl-Z in its terminal, SIGSTOP) still has its socket
    accept connections. Callers must not wait for it: the hook answers within its 5 s,
    recall answers, and a put is made here — not "may have been saved" after 300 s. Once
    the server runs again, the connections it missed change nothing, and it serves."""
    before = commits(stocked)
    server = start(runtime, stocked)
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "git push"}
    item = json.loads((EXAMPLES / "synthetic-resource.json").read_text())
    item["source"] = {**item["source"], "id": "while-stopped"}
    (tmp_path / "new.json").write_text(json.dumps(item))
    try:
        server.send_signal(signal.SIGSTOP)
        hooked = cli(runtime, stocked, "hook", "claude-code", stdin=json.dumps(prompt))
        assert hooked.returncode == 0
        assert "git push" in json.loads(hooked.stdout)["hookSpecificOutput"]["additionalContext"]
        answered = cli(runtime, stocked, "recall", "-", stdin="git push --force")
        assert answered.returncode == 0 and json.loads(answered.stdout)["results"]
        put = cli(runtime, stocked, "put", str(tmp_path / "new.json"))
        assert put.returncode == 0, put.stderr
        assert json.loads(put.stdout)["added"] == 1
        assert len(commits(stocked)) == len(before) + 1
        server.send_signal(signal.SIGCONT)
        again = cli(runtime, stocked, "put", str(tmp_path / "new.json"))
        assert json.loads(again.stdout)["unchanged"] == 1  # served, and nothing redone
    finally:
        server.send_signal(signal.SIGCONT)
        server.send_signal(signal.SIGTERM)
        summary = finished(server)
    assert summary["served"] == 1  # only the put after it ran again
    assert len(commits(stocked)) == len(before) + 1


def test_stop_waits_for_a_server_busy_with_a_request(stocked: Path, runtime: Path) -> None:
    """Other callers work alone when the server does not say READY within half a second;
    ``serve --stop`` is a request only the server can answer, so it waits out the one the
    server is busy with instead of saying no server was stopped."""
    from xbrain.serveclient import MAGIC, READY

    server = start(runtime, stocked)
    sock = str(next((runtime / "xbrain").glob("*.sock")))
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as slow:
            slow.settimeout(30)
            slow.connect(sock)
            slow.sendall(MAGIC + b"\n")
            assert slow.recv(1) == READY  # the server now waits for this request's rest
            stopped = cli(runtime, stocked, "serve", "--stop")
        assert json.loads(stopped.stdout)["stopped"] is True, stopped.stdout
        assert finished(server)["stopped"] == "stop"
    finally:
        server.kill()
        server.communicate()


def in_removed_folder(
    runtime: Path, store: Path, folder: Path, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """``xbrain ARGS`` run from ``folder``, which is removed once the command stands in it."""
    folder.mkdir()
    command = " ".join(shlex.quote(part) for part in [sys.executable, "-m", "xbrain", *args])
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XBRAIN_STORE": str(store)}
    return subprocess.run(
        ["sh", "-c", f'cd "$1" && rmdir "$1" && exec {command}', "sh", str(folder)],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.mark.parametrize("served", [False, True])
def test_a_removed_working_directory_still_gets_answers(
    stocked: Path, runtime: Path, tmp_path: Path, served: bool
) -> None:
    """An agent or shell standing in a folder removed since (a finished worktree) made
    ``os.getcwd()`` fail: recall and every hook prompt said "No such file or directory",
    and through the server a put did too. The folder's name ($PWD) scopes the project."""
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "git push --force to main"}
    item = json.loads((EXAMPLES / "synthetic-resource.json").read_text())
    item["source"] = {**item["source"], "id": "from-a-removed-folder"}
    (tmp_path / "new.json").write_text(json.dumps(item))
    server = start(runtime, stocked) if served else None
    try:
        hooked = in_removed_folder(
            runtime, stocked, tmp_path / "a", "hook", "claude-code", stdin=json.dumps(prompt)
        )
        assert "no-force-push" in hooked.stdout, hooked.stderr
        recalled = in_removed_folder(
            runtime, stocked, tmp_path / "b", "recall", "-", stdin="git push --force"
        )
        assert recalled.returncode == 0, recalled.stderr
        assert json.loads(recalled.stdout)["results"]
        put = in_removed_folder(runtime, stocked, tmp_path / "c", "put", str(tmp_path / "new.json"))
        assert put.returncode == 0, put.stderr
        assert json.loads(put.stdout)["added"] == 1
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            summary = finished(server)
    if server is not None:
        assert summary["served"] == 2  # the hook and the recall; the put ran alone


def test_paths_that_are_not_ours_are_refused(stocked: Path, runtime: Path) -> None:
    folder = runtime / "xbrain"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # readable by others: not a private directory
    refused = cli(runtime, stocked, "serve")
    assert refused.returncode == 5 and "0700" in refused.stderr
    folder.chmod(0o700)
    server = start(runtime, stocked)
    sock = next(folder.glob("*.sock"))
    server.send_signal(signal.SIGTERM)
    finished(server)
    sock.write_text("not a socket")
    refused = cli(runtime, stocked, "serve")
    assert refused.returncode == 5 and "not a socket" in refused.stderr
    sock.unlink()
    sock.symlink_to(runtime / "elsewhere.sock")
    assert cli(runtime, stocked, "serve").returncode == 5  # a link is never followed
    answered = cli(runtime, stocked, "recall", "-", stdin="git push --force")
    assert answered.returncode == 0 and json.loads(answered.stdout)["results"]


def test_detach_returns_at_once(stocked: Path, runtime: Path) -> None:
    detached = cli(runtime, stocked, "serve", "--detach", "--idle", "60")
    assert detached.returncode == 0, detached.stderr
    info = json.loads(detached.stdout)
    assert info["detached"] is True and info["pid"] > 0
    try:
        again = cli(runtime, stocked, "serve", "--detach")
        assert again.returncode == 5 and "already runs" in again.stderr
        assert again.stderr.count("\n") == 1
        assert json.loads(cli(runtime, stocked, "serve", "--stop").stdout)["stopped"] is True
        for _ in range(200):
            try:
                os.kill(info["pid"], 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the detached server did not stop")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(info["pid"], signal.SIGKILL)


def test_garbage_and_other_stores_get_nothing(stocked: Path, runtime: Path, tmp_path: Path) -> None:
    server = start(runtime, stocked)
    try:
        sock = str(next((runtime / "xbrain").glob("*.sock")))
        real = os.path.realpath(stocked)
        provider = json.dumps({"query": "x", "provider": "/tmp/evil.json", "at": "main~1"})
        for request in (b"", b"GET / HTTP/1.0\r\n\r\n", b"\xff" * 100):
            assert raw(sock, request, handshake=False) == b""
        # a client of the earlier protocol (no handshake) is told to do the work itself
        old = f"XB2\nrecall\n{real}\n\ngit push --force".encode()
        assert raw(sock, old, handshake=False) == b"99\nAnother xbrain serve protocol.\n"
        for request, answer in (
            (b"", b""),  # READY, then nothing: a client that gave up
            (b"recall\n/elsewhere\n\n", b"4\nThis server serves another store.\n"),
            (f"search\n{real}\nargs={provider}\n\n".encode(), b"4\nNot a search.\n"),
            (f"search\n{real}\nargs=[1, 2]\n\n".encode(), b"4\nNot a search.\n"),
        ):
            assert raw(sock, request) == answer
        answered = cli(runtime, stocked, "recall", "-", stdin="git push --force")
        assert json.loads(answered.stdout)["results"]  # still serving
    finally:
        server.send_signal(signal.SIGTERM)
        summary = finished(server)
    assert summary["served"] == 4  # the other store's, the two bad searches, the recall


def commits(store: Path) -> list[str]:
    """Each commit's message (subject, body and trailers), newest first."""
    from dulwich.repo import Repo

    with Repo(str(store)) as repo:
        return [entry.commit.message.decode() for entry in repo.get_walker()]


def test_writes_through_the_server_are_the_ones_a_fresh_process_makes(
    runtime: Path, tmp_path: Path
) -> None:
    """put and skill save ask the server first: same output, exit code and commits as
    the command alone, relative paths read from the caller's directory, the caller's
    $XBRAIN_AGENT recorded."""
    work = tmp_path / "work"
    (work / "my-skill").mkdir(parents=True)
    (work / "my-skill" / "SKILL.md").write_text(
        "---\nname: my-skill\ndescription: Check a dialog.\n---\nTab through it.\n"
    )
    shutil.copy(EXAMPLES / "synthetic-resource.json", work / "r.json")
    (work / "bad.json").write_text("[]")
    stores = {served: tmp_path / ("served" if served else "alone") for served in (True, False)}
    for store in stores.values():
        assert cli(runtime, store, "init").returncode == 0
    server = start(runtime, stores[True])
    agent = {"XBRAIN_AGENT": "test-agent"}
    revised = "---\nname: my-skill\ndescription: Check a dialog.\n---\nTab, then Esc.\n"
    steps: list[tuple[list[str], str]] = [
        (["put", "r.json"], ""),
        (["put", "r.json"], ""),  # unchanged: no commit
        (["put", "-"], (work / "r.json").read_text()),
        (["put", "bad.json"], ""),  # exit 4
        (["put", "-"], " " * ((10 << 20) + 10)),  # over the 10 MiB bound: exit 4, the same line
        (["put", "missing.json"], ""),  # the relative name, as typed
        (["skill", "save", "my-skill"], ""),
        (["skill", "save", "-", "--expect-revision", "rev_0"], revised),  # exit 5
        (["skill", "save", "-", "--publish"], revised),
    ]
    try:
        for argv, stdin in steps:
            answers = [
                cli(runtime, store, *argv, stdin=stdin, cwd=work, env=agent)
                for store in stores.values()
            ]
            masked = [
                (a.returncode, re.sub(r'"commit": "[0-9a-f]{40}"', "", a.stdout), a.stderr)
                for a in answers
            ]
            assert masked[0] == masked[1], argv
        stopped = cli(runtime, stores[True], "serve", "--stop")
        assert json.loads(stopped.stdout)["stopped"] is True
        summary = finished(server)
    finally:
        server.kill()
        server.communicate()
    assert summary["served"] == len(steps) + 1  # every write, then the stop
    served, alone = (commits(store) for store in stores.values())
    assert served == alone and len(served) == 4  # init, a put, two skill revisions
    assert all("Xbrain-Agent: test-agent" in message for message in served[:-1])


def fake_server(runtime: Path, store: Path, answer: bytes) -> tuple[threading.Thread, list[bytes]]:
    """A socket where ``store``'s server would be that reads one request and answers
    ``answer`` (b"": hangs up without a word)."""
    from xbrain.serveclient import socket_path

    env_before = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    try:
        path = Path(socket_path(store))
    finally:
        if env_before is None:
            del os.environ["XDG_RUNTIME_DIR"]
        else:
            os.environ["XDG_RUNTIME_DIR"] = env_before
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old)
    listener.listen(1)
    received: list[bytes] = []

    def run() -> None:
        from xbrain.serveclient import READY

        with listener:
            conn, _ = listener.accept()
            with conn:
                data = conn.recv(4)  # the opening line, then READY as a server says it
                conn.sendall(READY)
                while chunk := conn.recv(1 << 16):
                    data += chunk
                received.append(data)
                conn.sendall(answer)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, received


def test_a_write_the_server_dropped_is_not_redone(runtime: Path, tmp_path: Path) -> None:
    """Once a write reached a server, a missing answer is an error (it may have been
    committed) — never a second attempt; an operation the server does not know (99) is
    done by the command itself."""
    store = tmp_path / "store"
    assert cli(runtime, store, "init").returncode == 0
    before = commits(store)
    thread, received = fake_server(runtime, store, b"")
    dropped = cli(runtime, store, "put", str(EXAMPLES / "synthetic-resource.json"))
    thread.join(10)
    assert dropped.returncode == 1 and "may have been saved" in dropped.stderr
    assert received and received[0].startswith(b"XB3\nput\n")
    assert commits(store) == before
    thread, received = fake_server(runtime, store, b"99\nUnknown request 'put'.\n")
    done = cli(runtime, store, "put", str(EXAMPLES / "synthetic-resource.json"))
    thread.join(10)
    assert done.returncode == 0 and json.loads(done.stdout)["added"] == 1 and received
    assert len(commits(store)) == len(before) + 1


def test_a_server_started_with_a_relative_store_writes_to_it(runtime: Path, tmp_path: Path) -> None:
    """The server runs a write in the caller's directory; its own store and cache paths,
    given relative to where it started, still name its store and cache there."""
    store, work = tmp_path / "store", tmp_path / "elsewhere"
    work.mkdir()
    assert cli(runtime, store, "init").returncode == 0
    assert cli(runtime, store, "search", "dialog").returncode == 0  # an index to keep current
    server = start(runtime, Path("store"), cwd=tmp_path, env={"XBRAIN_CACHE_DIR": "cache"})
    try:
        chinese = json.loads((EXAMPLES / "synthetic-resource.json").read_text())
        chinese["text"] += "\n键盘焦点在对话框里循环。"  # the index upkeep segments it
        (work / "r.json").write_text(json.dumps(chinese, ensure_ascii=False))
        put = cli(runtime, store, "put", "r.json", cwd=work)
        assert put.returncode == 0 and json.loads(put.stdout)["added"] == 1, put.stderr
        assert not (work / "store").exists() and not (work / "cache").exists()
        assert (tmp_path / "cache").is_dir()
        assert len(commits(store)) == 2
        waiting = cli(runtime, store, "put", "r.json", "--wait", "5", cwd=work)  # not served:
        assert json.loads(waiting.stdout)["unchanged"] == 1  # it may wait, the server may not
    finally:
        server.send_signal(signal.SIGTERM)
        summary = finished(server)
    assert summary["served"] == 1


def test_a_request_over_the_bound_is_refused_whole(stocked: Path, runtime: Path) -> None:
    """A request longer than the protocol's bound gets no answer and changes nothing: the
    server never runs what it would have had to cut short."""
    from xbrain.serveclient import MAX_MESSAGE

    before = commits(stocked)
    server = start(runtime, stocked)
    try:
        sock = str(next((runtime / "xbrain").glob("*.sock")))
        real = os.path.realpath(stocked)
        skill = b"---\nname: padded\ndescription: Padded.\n---\nBody.\n"
        header = f"skill-save\n{real}\ncwd={stocked}\nargv=-\n\n".encode()
        assert raw(sock, header + skill + b" " * MAX_MESSAGE) == b""
        answered = cli(runtime, stocked, "recall", "-", stdin="git push --force")
        assert json.loads(answered.stdout)["results"]  # still serving
    finally:
        server.send_signal(signal.SIGTERM)
        summary = finished(server)
    assert summary["served"] == 1  # the recall only
    assert commits(stocked) == before


def test_a_runtime_dir_too_long_for_a_socket_falls_back_to_tmp(
    stocked: Path, runtime: Path
) -> None:
    """A Unix socket's path holds some 100 bytes: under a longer $XDG_RUNTIME_DIR the
    server and its clients agree on /tmp/xbrain-UID instead of failing to bind."""
    from xbrain.serveclient import MAX_SOCKET_PATH

    deep = runtime / ("d" * 90)
    deep.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(deep)}
    server = start(runtime, stocked, env=env)
    try:
        answered = cli(runtime, stocked, "recall", "-", stdin="git push --force", env=env)
        assert answered.returncode == 0 and json.loads(answered.stdout)["results"]
        stopped = json.loads(cli(runtime, stocked, "serve", "--stop", env=env).stdout)
        assert stopped["stopped"] is True
        assert stopped["socket"].startswith(f"/tmp/xbrain-{os.getuid()}/")
        assert len(stopped["socket"].encode()) <= MAX_SOCKET_PATH
        summary = finished(server)
    finally:
        server.kill()
        server.communicate()
    assert summary["served"] == 2  # the recall and the stop
    assert not (deep / "xbrain").exists()


def test_a_store_path_that_is_not_utf8_is_served_and_answered(
    runtime: Path, tmp_path: Path
) -> None:
    """Its socket name was computed from the path's text and crashed every search,
    recall and put ("Internal error (UnicodeEncodeError)")."""
    store = Path(os.fsdecode(os.fsencode(tmp_path) + b"/st\xff\xfeore"))
    batch = str(EXAMPLES / "batch.json")
    assert cli(runtime, store, "put", batch).returncode == 0
    alone = cli(runtime, store, "search", "卡片")
    assert alone.returncode == 0 and json.loads(alone.stdout)["results"]
    server = start(runtime, store)
    try:
        served = cli(runtime, store, "search", "卡片")
        assert served.returncode == 0 and served.stdout == alone.stdout
        missing = cli(runtime, store, "get", "resource_" + "0" * 64)
        assert missing.returncode == 3 and missing.stderr == "Resource not found.\n"
        assert json.loads(cli(runtime, store, "serve", "--stop").stdout)["stopped"] is True
        summary = finished(server)
    finally:
        server.kill()
        server.communicate()
    assert summary["served"] == 2  # the search and the stop (get is not served)


def test_an_idle_connection_holds_nobody_up(stocked: Path, runtime: Path) -> None:
    """Issue 42, item 8: a connection that sent nothing (or its opening line, then
    nothing) held the server for 5 s, while callers wait half a second for READY and
    then work alone. Now connections are taken in all at once: the recall is served."""
    from xbrain.serveclient import MAGIC, READY

    server = start(runtime, stocked)
    sock = str(next((runtime / "xbrain").glob("*.sock")))
    assert os.stat(sock).st_mode & 0o777 == 0o600
    idle = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(3)]
    try:
        idle[0].settimeout(30)
        idle[0].connect(sock)
        idle[0].sendall(MAGIC + b"\n")
        assert idle[0].recv(1) == READY  # told to send its request; it never does
        for conn in idle[1:]:
            conn.connect(sock)  # says nothing at all
        answered = cli(runtime, stocked, "recall", "-", stdin="git push --force")
        assert answered.returncode == 0 and json.loads(answered.stdout)["results"]
        stopped = cli(runtime, stocked, "serve", "--stop")
        assert json.loads(stopped.stdout)["stopped"] is True
        summary = finished(server)
    finally:
        for conn in idle:
            conn.close()
        server.kill()
        server.communicate()
    assert summary["served"] == 2  # the recall and the stop: neither worked alone


def test_bad_json_in_a_hand_made_search_is_answered(stocked: Path, runtime: Path) -> None:
    """Issue 42, item 9: a search request whose args are not JSON got an internal
    error; it is "Not a search." (exit 4), and the server goes on serving."""
    server = start(runtime, stocked)
    try:
        sock = str(next((runtime / "xbrain").glob("*.sock")))
        real = os.path.realpath(stocked)
        for args in ("{not json", "[" * 100_000, '{"query": "x"'):
            request = f"search\n{real}\nargs={args}\n\n".encode()
            assert raw(sock, request) == b"4\nNot a search.\n", args[:20]
        answered = cli(runtime, stocked, "search", "keyboard dialog", "--brief")
        assert answered.returncode == 0 and json.loads(answered.stdout)["results"]
    finally:
        server.send_signal(signal.SIGTERM)
        summary = finished(server)
    assert summary["served"] == 4  # three refused searches, then a real one


def test_a_failing_endpoint_is_answered_lexically_through_the_server_too(
    xb: Run, stocked: Path, runtime: Path, tmp_path: Path
) -> None:
    """Issue 42, item 5: with semantic recall on and the embeddings endpoint failing
    (HTTP 401), the served hook answered nothing and the served recall exited 8, where a
    fresh process answers lexically. The server answers what a fresh process answers —
    the lexical answer, and a warning saying why — starts even when the endpoint fails
    as it warms up, and answers hybrid again once the endpoint works."""
    pytest.importorskip("numpy", reason="the semantic extra is not installed")
    from tests.security.test_hostile_endpoint import Stub

    elsewhere = tmp_path / "no-server"  # a runtime dir with no server: fresh processes
    elsewhere.mkdir(mode=0o700)
    prompt = "keyboard focus in a React dialog"
    hook = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt})
    with Stub() as endpoint:
        url = ["--url", endpoint.url, "--model", "m"]
        assert xb("reindex", "--semantic", "--provider", "openai", *url).code == 0
        endpoint.answer = lambda texts, number: (401, b'{"error": "bad key"}')
        alone = [
            cli(elsewhere, stocked, "recall", "-", stdin=prompt),
            cli(elsewhere, stocked, "search", prompt),
            cli(elsewhere, stocked, "hook", "claude-code", stdin=hook),
        ]
        assert [a.returncode for a in alone] == [0, 0, 0] and alone[2].stdout
        assert "HTTP 401; answered lexically." in json.loads(alone[0].stdout)["warning"]
        server = start(runtime, stocked)
        try:
            assert server.stderr is not None
            warned = server.stderr.readline()
            assert warned == "xbrain serve: semantic recall: " + (
                "The embeddings endpoint answered HTTP 401.\n"
            )
            served = [
                cli(runtime, stocked, "recall", "-", stdin=prompt),
                cli(runtime, stocked, "search", prompt),
                cli(runtime, stocked, "hook", "claude-code", stdin=hook),
            ]
            for one, other in zip(alone, served, strict=True):
                assert (other.returncode, other.stdout, other.stderr) == (
                    one.returncode,
                    one.stdout,
                    one.stderr,
                )
            endpoint.answer = Stub.vectors
            again = cli(runtime, stocked, "recall", "-", stdin=prompt)
            assert "warning" not in json.loads(again.stdout)
            assert any(r.get("foundBy") for r in json.loads(again.stdout)["results"])
            stopped = cli(runtime, stocked, "serve", "--stop")
            assert json.loads(stopped.stdout)["stopped"] is True
            summary = finished(server)
        finally:
            server.kill()
            server.communicate()
    assert summary["served"] == 5  # all of them through the server


def test_a_slow_endpoint_is_not_waited_for_on_every_prompt(
    xb: Run, stocked: Path, runtime: Path, tmp_path: Path
) -> None:
    """Issue 42, items 4 and 5: once the endpoint has not answered within its timeout,
    the server answers by default lexically at once for a minute instead of asking it
    again — each prompt would wait out the whole timeout, past the hook's own, to be
    answered lexically in the end. A mode asked for still asks (and fails)."""
    pytest.importorskip("numpy", reason="the semantic extra is not installed")
    from tests.security.test_hostile_endpoint import Stub

    elsewhere = tmp_path / "no-server"
    elsewhere.mkdir(mode=0o700)
    prompt = "keyboard focus in a React dialog"
    hook = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt})
    with Stub() as endpoint:
        switch = ["--url", endpoint.url, "--model", "m", "--timeout", "2"]
        assert xb("reindex", "--semantic", "--provider", "openai", *switch).code == 0
        server = start(runtime, stocked)
        try:
            endpoint.trickle = True
            first = json.loads(cli(runtime, stocked, "recall", "-", stdin=prompt).stdout)
            assert first["retrieval"] == "lexical" and first["results"]
            assert first["warning"].endswith(
                "within 2 s (reindex --semantic --timeout sets it); answered lexically."
            )
            asked = endpoint.requests
            again = json.loads(cli(runtime, stocked, "recall", "-", stdin=prompt).stdout)
            assert again["results"] == first["results"]
            assert again["warning"].endswith("; answered lexically, asked again after 60 s.")
            hooked = cli(runtime, stocked, "hook", "claude-code", stdin=hook)
            alone = cli(elsewhere, stocked, "hook", "claude-code", stdin=hook)
            assert hooked.stdout and hooked.stdout == alone.stdout
            assert endpoint.requests == asked  # not asked again
            hybrid = cli(runtime, stocked, "search", prompt, "--mode", "hybrid")
            assert hybrid.returncode == 8 and "within 2 s" in hybrid.stderr
            assert endpoint.requests == asked + 1
            stopped = cli(runtime, stocked, "serve", "--stop")
            assert json.loads(stopped.stdout)["stopped"] is True
            summary = finished(server)
        finally:
            server.kill()
            server.communicate()
    assert summary["served"] == 5  # two recalls, the hook, the search, the stop
