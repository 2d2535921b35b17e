#!/usr/bin/env python3
"""Claude Code hooks through a script: hands the payload to ``xbrain hook claude-code``.

``xbrain hook claude-code`` answers every Claude Code hook event itself (recall for a
prompt, tool guidance before a tool, stop-rules at a stop, a reminder at session start)
and is what settings.json should run (hooks/README.md). This script, and the three
beside it that call it, keep older settings working: they start that command, hand it
the payload on stdin, and pass its answer on. It never fails what it hooks: a missing
CLI, a failure, output that is not a hook answer or no answer within
``XBRAIN_HOOK_TIMEOUT`` seconds (5) mean no output and exit 0, with one line in the
cache dir's ``hook.log`` when the CLI cannot be found or started.

The command is started first and the payload sent once read, so the CLI's start-up
overlaps this script's own; only light modules are imported.
"""

from __future__ import annotations

import os
import select
import sys
import time


def cache_dir() -> str:
    """xbrain's cache dir, as the CLI picks it on Linux: $XBRAIN_CACHE_DIR, else XDG."""
    explicit = os.environ.get("XBRAIN_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME", "")  # used only when absolute
    return os.path.join(base if os.path.isabs(base) else os.path.expanduser("~/.cache"), "xbrain")


def xbrain_command() -> list[str]:
    explicit = os.environ.get("XBRAIN_BIN")
    if explicit:
        return [explicit]
    for folder in os.get_exec_path():
        found = os.path.join(folder, "xbrain")
        if os.path.isfile(found) and os.access(found, os.X_OK):
            return [found]
    return [sys.executable, "-m", "xbrain"]


LOG_LIMIT = 64 * 1024
MAX_ANSWER = 1 << 20  # more than any hook answer: a flood is cut off


def note(line: str) -> None:
    """One line in the hook's own log (the prompt never sees it); kept under 64 KiB."""
    try:
        path = os.path.join(cache_dir(), "hook.log")
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if os.path.exists(path) and os.path.getsize(path) > LOG_LIMIT:
            os.replace(path, path + ".1")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a") as handle:
            handle.write(time.strftime("%Y-%m-%dT%H:%M:%SZ ", time.gmtime()) + line + "\n")
    except OSError:
        pass


def cli_missing(argv: list[str]) -> str | None:
    """Why the CLI cannot run, when that is knowable without running it."""
    if os.environ.get("XBRAIN_BIN"):
        binary = argv[0]
        if os.sep in binary and not os.access(binary, os.X_OK):
            return f"XBRAIN_BIN={binary} is not an executable file"
        return None
    if argv[0] == sys.executable:
        import importlib.util

        if importlib.util.find_spec("xbrain") is None:
            return (
                "xbrain is not on the PATH this hook runs with; set XBRAIN_BIN to the "
                "absolute path of the xbrain command (see hooks/README.md)"
            )
    return None


class Search:
    """The CLI (``xbrain recall -``) started at once; its input is sent when it is known."""

    def __init__(self, argv: list[str]) -> None:
        self.process = None
        if not hasattr(os, "posix_spawnp"):  # Windows
            import subprocess

            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
            return
        child_in, self.stdin = os.pipe()
        self.stdout, child_out = os.pipe()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            self.pid = os.posix_spawnp(
                argv[0],
                argv,
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, child_in, 0),
                    (os.POSIX_SPAWN_DUP2, child_out, 1),
                    (os.POSIX_SPAWN_DUP2, null, 2),
                ],
            )
        except OSError:
            os.close(self.stdin)
            os.close(self.stdout)
            raise
        finally:
            for fd in (child_in, child_out, null):
                os.close(fd)

    def answer(self, data: bytes, timeout: float) -> bytes | None:
        """Send ``data``; the child's stdout if it exits 0 within ``timeout`` seconds, else
        None. Writing and reading interleave, so a large payload never blocks on a full
        pipe while the child is busy (or hung)."""
        if self.process is not None:
            import subprocess

            try:
                out, _ = self.process.communicate(data, timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.communicate()
                return None
            return out if self.process.returncode == 0 else None
        deadline = time.monotonic() + timeout
        chunks: list[bytes] = []
        pending = memoryview(data)
        os.set_blocking(self.stdin, False)
        writing = True
        try:
            while True:
                if writing and not pending:
                    os.close(self.stdin)
                    writing = False
                left = deadline - time.monotonic()
                wants = [self.stdin] if writing else []
                readable, writable, _ = select.select([self.stdout], wants, [], max(0, left))
                if left <= 0 or not (readable or writable):
                    self.cancel()
                    return None
                if writable:
                    pending = pending[os.write(self.stdin, pending[: 1 << 16]) :]
                if readable:
                    chunk = os.read(self.stdout, 1 << 16)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    if sum(map(len, chunks)) > MAX_ANSWER:
                        self.cancel()
                        return None
        except OSError:  # the child closed its end early: it failed
            self.cancel()
            return None
        finally:
            if writing:
                os.close(self.stdin)
            os.close(self.stdout)
        status = os.waitpid(self.pid, 0)[1]
        return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None

    def cancel(self) -> None:
        """Stop the search (killed and reaped)."""
        if self.process is not None:
            self.process.kill()
            self.process.communicate()
            return
        try:
            os.kill(self.pid, 9)  # SIGKILL
            os.waitpid(self.pid, 0)
        except OSError:  # already gone
            pass


def relay() -> int:
    """Hand the hook payload on stdin to ``xbrain hook claude-code`` and pass on its
    answer when it is one; exit 0 whatever happens (a hook never fails what it hooks)."""
    child = None
    try:
        timeout = float(os.environ.get("XBRAIN_HOOK_TIMEOUT", "5"))
        argv = [*xbrain_command(), "hook", "claude-code"]
        missing = cli_missing(argv)
        if missing is not None:
            note(missing)
            return 0
        try:
            child = Search(argv)
        except OSError as exc:
            note(f"cannot start {argv[0]}: {exc.strerror}; set XBRAIN_BIN (hooks/README.md)")
            return 0
        data = sys.stdin.buffer.read(1 << 20)
        found, child = child.answer(data, timeout + 1), None  # its own limit comes first
        if not found:
            return 0
        import json

        answer = json.loads(found)
        if isinstance(answer, dict) and (
            isinstance(answer.get("hookSpecificOutput"), dict) or answer.get("decision") == "block"
        ):
            sys.stdout.write(json.dumps(answer, ensure_ascii=False))
    except Exception:  # never fail what is hooked
        return 0
    finally:
        if child is not None:  # failed midway: stop it
            child.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(relay())
