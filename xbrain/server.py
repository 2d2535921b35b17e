"""``xbrain serve``: one long-lived process per store that keeps recall warm.

It holds what a fresh process pays for on every prompt — the interpreter and modules,
the tokenizer's dictionaries, the embedding model and its vectors — and answers
``recall``, ``hook``, ``search`` and ``skill recall`` (Level 0) requests, and the
writes ``put`` and ``skill save`` (run in the client's directory), on a private Unix socket (see
:mod:`xbrain.serveclient` for where it lives and how it is asked). Connections are taken
in all at once, so an idle or slow one holds nobody up (:mod:`xbrain.serveloop`);
requests are served one at a time with the same functions a fresh process runs, so an
answer is the one the CLI would give: each request reads ``main`` afresh, and every
derived index checks the commit it reflects, so a new commit is noticed by the next
request and a stale answer is never served. It exits after ``idle`` seconds without a
request, on ``serve --stop``, or on SIGTERM/SIGINT, and removes its socket. It refuses a
socket directory or a socket that is not the user's own, and answers only the user's own
processes. With semantic recall on, a failing embeddings endpoint does not stop it: each
request answers lexically and says so, as a fresh process does.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import time
from pathlib import Path
from typing import Any

from .errors import ConflictError, InvalidInputError, describe
from .maththreads import ONE_THREAD, one_thread_math
from .serveclient import ANSWER_TIMEOUT, NOT_SERVED, ask, owned, socket_path
from .serveloop import Client, Clients

__all__ = ["ONE_THREAD", "one_thread_math", "serve", "stop"]

SEARCH_FIELDS = {"query", "limit", "domain", "feature", "style", "mode", "brief"}
RELEASE_AFTER = 60.0  # seconds without a request after which the kept repository is closed


def serve(store: Path, cache_dir: Path, idle: float, ready: Any = None) -> dict[str, Any]:
    """Serve ``store`` until idle for ``idle`` seconds or stopped; what it did.
    ``ready(info)`` is called once the socket listens."""
    if not idle > 0:
        raise InvalidInputError("--idle must be a positive number of seconds.")
    if not (store / ".git").is_dir():
        raise InvalidInputError(f"No store at {store}; the first write creates it.")
    path = Path(socket_path(store))
    if os.path.lexists(path) and owned(path, stat.S_IFSOCK) and ask_alive(path):
        raise ConflictError(f"A server already runs for this store ({path}).")
    # warm before listening: a fresh process that finds no socket answers on its own at
    # once (lexically, while semantic recall warms up here: ``autoserve``) instead of
    # waiting out READY_TIMEOUT on a socket that cannot answer yet
    warm = _warm(store)
    listener = _listen(path)
    stopping: list[str] = []

    def finish(signum: int, frame: object) -> None:
        stopping.append("signal")

    previous = {sig: signal.signal(sig, finish) for sig in (signal.SIGTERM, signal.SIGINT)}
    started = time.monotonic()
    clients = Clients(listener)
    try:
        info = {"socket": str(path), "pid": os.getpid(), "store": str(store), **warm}
        if ready is not None:
            ready(info)
        last = kept = time.monotonic()
        while not stopping:
            if time.monotonic() - last > idle and not clients.open:
                stopping.append("idle")
                break
            if time.monotonic() - kept > RELEASE_AFTER:  # no pack a merge removed stays
                kept = float("inf")  # mapped while nothing is asked
                _release()
            if clients.step():  # a connection came, went or moved on
                last = time.monotonic()
            client = clients.next_request()
            if client is None:  # what a request asked for, done while none waits
                begun = time.monotonic()
                if _idle():
                    clients.postpone(time.monotonic() - begun)
            if client is not None:
                begun = time.monotonic()
                clients.answer(client, _handle(client, store, cache_dir, stopping))
                last = kept = time.monotonic()
                clients.postpone(last - begun)  # the time spent here was nobody's to use
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        clients.close()
        _release()
        with contextlib.suppress(OSError):
            if owned(path, stat.S_IFSOCK):
                path.unlink()
    return {
        "served": clients.served,
        "seconds": round(time.monotonic() - started, 1),
        "stopped": stopping[0] if stopping else "idle",
        "socket": str(path),
    }


def stop(store: Path) -> dict[str, Any]:
    """Ask the store's server to stop; whether one was running."""
    answered, _, _ = ask(store, "stop", [], patience=ANSWER_TIMEOUT)  # may be busy
    return {"stopped": answered, "socket": socket_path(store)}


def _listen(path: Path) -> socket.socket:
    """A listening socket at ``path``, in a private directory; refuses what is not ours."""
    folder = path.parent
    old = os.umask(0o077)
    try:
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700, parents=False)
    except FileNotFoundError:
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
    finally:
        os.umask(old)
    if not owned(folder, stat.S_IFDIR):
        raise ConflictError(
            f"Refusing {folder}: not a private (0700) directory of this user; remove it or set "
            "XDG_RUNTIME_DIR."
        )
    if os.path.lexists(path):
        if not owned(path, stat.S_IFSOCK):
            raise ConflictError(f"Refusing {path}: not a socket of this user; remove it.")
        if ask_alive(path):
            raise ConflictError(f"A server already runs for this store ({path}).")
        path.unlink()  # a server that died without cleaning up
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the socket is created 0600
    try:
        listener.bind(str(path))
    finally:
        os.umask(old)
    listener.listen(64)
    return listener


def ask_alive(path: Path) -> bool:
    """Whether something accepts connections on ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def _warm(store: Path) -> dict[str, Any]:
    """Load what every request needs once: the modules, the tokenizer's dictionaries,
    and — when semantic recall is on here — the model and its vectors."""
    one_thread_math()  # before numpy loads
    from .core import keep_repositories, keep_trees
    from .lightcli import cache_dir
    from .recall import telemetry
    from .search import entrycache, kept
    from .search.tokenize import Tokenizer, keep_warm
    from .semantic.hybrid import failed_provider, provider_for, resolve_mode

    keep_warm()
    keep_trees()  # the git trees a write reads, across requests (a tree's id is its content)
    keep_repositories()  # the store's repository (its packs' indexes), across requests
    entrycache.keep_warm()
    kept.keep_warm()  # the indexes' connections and page caches, across requests
    telemetry.keep_open()
    tokenizer = Tokenizer(cache_dir())
    try:
        tokenizer.words("warm 预热")
    finally:
        tokenizer.close()
    control = store / ".git"
    mode = resolve_mode(control, None)
    if mode == "lexical":
        return {"mode": mode}
    try:
        provider = provider_for(control)
        provider.embed(["warm"])
    except failed_provider() as exc:  # each request tries again (and answers lexically)
        return {"mode": mode, "warning": exc.message}
    return {"mode": mode, "model": provider.model_id}


def _idle() -> bool:
    from .search import kept

    return kept.idle()


def _release() -> None:
    from .core import release_repositories

    release_repositories()


def _handle(client: Client, store: Path, cache_dir: Path, stopping: list[str]) -> bytes | None:
    """The answer to one complete request (None: it was none)."""
    header, _, body = client.data().partition(b"\n\n")
    lines = header.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 2:
        return None
    fields: dict[str, list[str]] = {}
    for line in lines[2:]:
        key, _, value = line.partition("=")
        fields.setdefault(key, []).append(value)
    code, out = _answer(lines[0], lines[1], fields, body, store, cache_dir, stopping)
    return f"{code}\n".encode() + out


def _answer(
    op: str,
    asked_store: str,
    fields: dict[str, list[str]],
    body: bytes,
    store: Path,
    cache_dir: Path,
    stopping: list[str],
) -> tuple[int, bytes]:
    """(exit code, what the command prints) for one request."""
    if asked_store != os.path.realpath(store):
        return 4, b"This server serves another store.\n"
    cwd = fields["cwd"][0] if fields.get("cwd") else None
    try:
        if op == "ping":
            return 0, str(os.getpid()).encode()
        if op == "stop":
            stopping.append("stop")
            return 0, b""
        if op == "recall":
            from .codec import json_document
            from .lightcli import answer, parse_recall

            found = parse_recall(fields.get("argv", []))
            if found is None:
                return 2, b"Use the command line for this recall.\n"
            found.pop("store", None)
            record = fields.get("record") != ["0"]  # 0: a look (xbrain ui), not a recall
            found = answer(store, body, cwd=cwd, record=record, **found)
            return 0, json_document(found).encode()
        if op == "hook":
            from .codec import marked_json
            from .hookcli import respond

            env = dict(item.partition("=")[::2] for item in fields.get("env", []))
            said = respond(store, body, env, cwd, mode=None)
            return 0, b"" if said is None else marked_json(said).encode()
        if op == "search":
            from .codec import json_document
            from .lightsearch import search_document

            try:
                args = json.loads((fields.get("args") or ["{}"])[0])
            except (ValueError, RecursionError):  # a hand-made request's JSON
                return 4, b"Not a search.\n"
            if (
                not isinstance(args, dict)
                or not isinstance(args.get("query"), str)
                or not set(args) <= SEARCH_FIELDS  # never --at or a provider: only these
            ):
                return 4, b"Not a search.\n"
            query = args.pop("query")
            return 0, json_document(search_document(store, query, **args)).encode()
        if op == "skill-recall":
            from .codec import json_document
            from .retrieval.skillrecall import recall as level0

            query, limit = fields.get("query", [""])[0], fields.get("limit", ["5"])[0]
            if not limit.isdigit() or len(limit) > 3:
                return 4, b"The limit must be 1-50.\n"
            found = level0(store, cache_dir, query, int(limit))
            return 0, json_document(found).encode()
        if op in ("put", "skill-save"):
            from .lightwrite import served_write

            agent = fields["agent"][0] if fields.get("agent") else None
            return served_write(op, fields.get("argv", []), body, store, cwd, agent)
    except Exception as exc:
        message, code = describe(exc)
        return code, f"{message}\n".encode("utf-8", "surrogateescape")
    return NOT_SERVED, f"Unknown request {op!r}.\n".encode()
