"""``xbrain hook claude-code``: Claude Code's hooks answered by xbrain in one process.

Claude Code runs a hook command for every prompt and every tool call, so this is the
product's hottest path; it is one process (no script in front that starts another) and,
like ``xbrain recall``, it loads without click. It reads the hook payload on stdin and
answers for its ``hook_event_name``:

* ``UserPromptSubmit`` — ``recall`` for the prompt: the user's rules and memories that
  match, skills as pointers, resources with the URL to cite, at most
  ``XBRAIN_HOOK_LIMIT`` (3) of each within ``XBRAIN_HOOK_BUDGET`` characters (4,000),
  as ``hookSpecificOutput.additionalContext``;
* ``PreToolUse`` — the ``tool-guidance`` entries that match the tool and its input, and
  for a tool that names a file (``Edit``, ``Write``, ``MultiEdit``, ``Read``,
  ``NotebookEdit``) the entries whose ``paths`` globs match it, as context (never a
  permission decision);
* ``Stop`` — the agent's last message (the end of the transcript) against the
  ``stop-rule`` entries: a match answers ``{"decision": "block", "reason": …}``, at most
  once in a row (``stop_hook_active``); else, with ``review.sessionLearning on``, once
  per session with corrections, a request to propose what it learned (for review);
* ``PostToolUse``, ``PostToolUseFailure`` — the tool's name and outcome (success or
  error, never its input or output) in the session's trace (``recall.traces``), no
  answer;
* ``SessionStart`` — a one-paragraph reminder of how to use xbrain.

It never fails what it hooks: bad input, a missing, busy or broken store, or an answer
slower than ``XBRAIN_HOOK_TIMEOUT`` seconds (5) mean no output and exit 0, with one line
(never prompt text) in the cache dir's ``hook.log``. A timeout while the recall indexes
are behind starts their build in a detached process (``recall.warm``).
"""

from __future__ import annotations

import os
import time

from .hooktext import FILE_HEADER, HEADER, REMINDER, REMINDER_AUTO, TOOL_HEADER, headed
from .hooktext import block as _block
from .lightcli import (
    cache_dir,
    default_store_path,
    layered_recall,
    stdin_stream,
    store_location,
    write_stdout,
)

TYPE_CHECKING = False  # on every prompt's path: neither typing nor pathlib at import
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

__all__ = ["REMINDER", "REMINDER_AUTO", "claude_code", "respond", "run_hook", "tuned"]

# what the file an Edit, Write, MultiEdit, Read or NotebookEdit names may route to
ROUTED_KINDS = ("rule", "memory", "workflow", "tool-guidance", "session-learning")
LOG_LIMIT = 64 * 1024


class _Timeout(Exception):
    pass


def run_hook(args: list[str]) -> int | None:
    """Run ``xbrain hook ARGS`` if they are ``claude-code [--store DIR]``: always exit 0.
    None for anything else (``--help``, another agent), which click then answers."""
    if not args or args[0] != "claude-code":
        return None
    store: str | None = None
    rest = args[1:]
    if len(rest) == 1 and rest[0].startswith("--store="):
        store = rest[0].split("=", 1)[1]
    elif len(rest) == 2 and rest[0] == "--store":
        store = rest[1]
    elif rest:
        return None
    return claude_code(store_location(store) if store else default_store_path())


def claude_code(store: str | os.PathLike[str]) -> int:
    """Answer the Claude Code hook payload on stdin for ``store``; exit 0 whatever happens.
    A timeout while the recall indexes are behind ``main`` starts their build in a
    detached process (``recall.warm``), so the next prompts answer in time."""
    try:
        output = _answer_in_time(store, stdin_stream().read(1 << 20))
    except _Timeout as exc:
        _note(_Timeout(f"{exc}{_warm(store)}"))
        # the work may still be waiting in C; nothing was printed, so leave it there
        # rather than wait for it at the interpreter's exit
        os._exit(0)
    except BaseException as exc:
        _note(exc)
        return 0
    if output:  # JSON for the agent: UTF-8 whatever stdout's text encoding
        write_stdout(output.encode("utf-8"))  # an agent that stopped reading: still 0
    return 0


def _warm(store: str | os.PathLike[str]) -> str:
    """Start the background index build if one is needed: what the log line adds."""
    try:
        from pathlib import Path

        from .recall.warm import start

        started = start(Path(store))
    except Exception:  # the hook never fails: no build is no worse than before
        return ""
    return "; building the recall indexes in the background" if started else ""


class _ServedError(Exception):
    """The server's one-line error for this hook."""


TUNING = ("XBRAIN_HOOK_LIMIT", "XBRAIN_HOOK_BUDGET")


def _served_or_local(store: str | os.PathLike[str], data: bytes) -> str:
    """What to print: the answer of a running ``xbrain serve`` for this store, else of
    ``respond`` here ("" for nothing)."""
    from .serveclient import ask
    from .workdir import working_directory

    fields = [("cwd", working_directory())]
    fields += [("env", f"{name}={os.environ[name]}") for name in TUNING if name in os.environ]
    served, code, body = ask(store, "hook", fields, data)
    if served:
        if code:
            raise _ServedError(body.decode("utf-8", "replace").strip())
        return body.decode("utf-8", "replace")
    from pathlib import Path

    from .autoserve import warming
    from .codec import marked_json  # what can hide text from the user, marked visibly

    warming(store, "lexical")  # with semantic recall on: a server for the next prompts
    said = respond(Path(store), data)
    return "" if said is None else marked_json(said)


def tuned(
    env: Mapping[str, str],
    name: str,
    default: float,
    low: float,
    high: float,
    *,
    positive: bool = False,
) -> float:
    """A tuning variable's value, held to ``[low, high]``; the default, and one line in
    the hook log, when it is not a (``positive``) number — a typo in a setting must not
    turn every prompt's recall off."""
    text = env.get(name)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value != value or value in (float("inf"), float("-inf")) or (positive and value <= 0):
        from .errors import InvalidInputError

        what = "a positive number" if positive else "a number"
        _note(InvalidInputError(f"{name} must be {what}; using {default:g}."))
        return default
    return min(max(value, low), high)


def _answer_in_time(store: str | os.PathLike[str], data: bytes) -> str:
    """The answer within ``XBRAIN_HOOK_TIMEOUT`` seconds, else ``_Timeout``.

    The work runs in a second thread while this one waits for it, up to the timeout. A
    signal (the timer this used before) is only handled between Python steps, so it
    could not cut short a wait inside C: SQLite waiting for the lock of an index a
    ``reindex`` is rebuilding held the prompt for as long as the build (up to 30 s)."""
    timeout = tuned(os.environ, "XBRAIN_HOOK_TIMEOUT", 5, 1e-6, 600, positive=True)
    import _thread  # the C module: no `threading` on every prompt's path

    finished = _thread.allocate_lock()
    finished.acquire()
    outcome: list[Any] = []

    def work() -> None:
        try:
            outcome.append(_served_or_local(store, data))
        except BaseException as exc:
            outcome.append(exc)
        finally:
            finished.release()

    _thread.start_new_thread(work, ())
    if not finished.acquire(timeout=timeout):
        raise _Timeout(f"no answer within {timeout:g} s (XBRAIN_HOOK_TIMEOUT)")
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return str(result)


def respond(
    store: Path,
    data: bytes,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    mode: str | None = "lexical",
) -> dict[str, Any] | None:
    """What Claude Code is answered for the hook payload ``data`` (None: nothing);
    ``env``: the hook's tuning variables (default: this process's environment); ``cwd``:
    the working directory when the payload names none; ``mode``: the retrieval mode —
    lexical in a fresh process (loading a model would cost every prompt a second), the
    store's default (hybrid when semantic recall is on) in ``xbrain serve``."""
    import json

    try:
        payload = json.loads(data or b"{}")
    except (ValueError, RecursionError):  # not JSON, or nested deeper than it can be read
        from .errors import InvalidInputError

        raise InvalidInputError("The hook payload on stdin is not a JSON object.") from None
    if not isinstance(payload, dict):
        return None
    if cwd is not None and not isinstance(payload.get("cwd"), str):
        payload["cwd"] = cwd
    env = dict(os.environ) if env is None else env
    event = payload.get("hook_event_name")
    if event == "SessionStart":
        return _context("SessionStart", REMINDER_AUTO if _session_sync(store) else REMINDER)
    from .inputs import no_store

    missing = no_store(str(store))
    if missing and not _teams():  # one line in hook.log: a hook pointed at no store
        from .errors import NotFoundError  # was silent on every prompt

        raise NotFoundError(missing)
    # no store of the member's own but a team: the team layers answer, nothing is written
    if event == "Stop" or event == "SubagentStop":
        return _stop(store, payload, mode, learn=not missing)
    if event == "PostToolUse" or event == "PostToolUseFailure":
        if not missing:
            _trace(store, payload)
        return None
    if event == "PreToolUse" or (event is None and "tool_name" in payload):
        return _tool_guidance(store, payload, mode)
    return _prompt(store, payload, env, mode)


def _prompt(
    store: Path, payload: dict[str, Any], env: dict[str, str], mode: str | None
) -> dict[str, Any] | None:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    limit = int(tuned(env, "XBRAIN_HOOK_LIMIT", 3, 1, 20))
    budget = int(tuned(env, "XBRAIN_HOOK_BUDGET", 4000, 400, 200_000))
    inner = max(100, budget - len(HEADER) - 100 * limit)  # room for the header, prefixes
    results = _recall(store, payload, prompt.strip()[:8000], top_k=limit, budget=inner, mode=mode)
    header = text = headed(HEADER, results)
    for result in results:
        item = _block(result)
        if len(text) + 1 + len(item) <= budget:
            text += "\n" + item
    return None if text == header else _context("UserPromptSubmit", text)


def _tool_guidance(store: Path, payload: dict[str, Any], mode: str | None) -> dict[str, Any] | None:
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool:
        return None
    import json

    given = json.dumps(payload.get("tool_input") or {}, ensure_ascii=False)[:4000]
    asked = {**payload, "hook_event_name": "PreToolUse"}
    prompt = f"{tool} {given}"
    results = _recall(
        store,
        asked,
        prompt,
        only=("tool-guidance",),
        path_kinds=ROUTED_KINDS,  # a file it names: the entries whose paths match it too
        budget=2000,
        mode=mode,
    )
    lines = [_block(result) for result in results]
    routed = any(result["why"].get("via") == "path" for result in results)
    header = headed(FILE_HEADER if routed else TOOL_HEADER, results)
    return _context("PreToolUse", "\n".join([header, *lines])) if lines else None


def _trace(store: Path, payload: dict[str, Any]) -> None:
    """Record the tool call in the session's trace (its name and outcome only); no
    answer."""
    from .recall.prompt import payload_request
    from .recall.traces import outcome, record_call

    session = payload_request(payload, "").session
    record_call(store / ".git", session, payload.get("tool_name"), outcome(payload))


def _teams() -> bool:
    """Whether a team layer is there to answer (``xbrain team add``)."""
    from .lightcli import teams_dir
    from .team.place import team_layers

    return bool(team_layers(teams_dir()))


def _stop(
    store: Path, payload: dict[str, Any], mode: str | None, *, learn: bool = True
) -> dict[str, Any] | None:
    if payload.get("stop_hook_active"):
        return None  # this stop was already held once: let it end
    transcript = payload.get("transcript_path")
    text = _last_message(transcript)[-8000:] if isinstance(transcript, str) else ""
    if not text.strip():
        return None
    asked = {**payload, "hook_event_name": "Stop"}
    results = _recall(store, asked, text, only=("stop-rule",), budget=4000, mode=mode)
    if not results:
        from .recall.learning import ask  # review.sessionLearning: once per session

        learning = ask(store, payload) if learn and event_is_stop(payload) else None
        return None if learning is None else {"decision": "block", "reason": learning}
    reason = "\n\n".join(f"{r['name']}: {r['text']}" for r in results)
    return {"decision": "block", "reason": reason}


def _session_sync(store: Path) -> bool:
    """``sync.auto``: a background pull of the store's origin and every team (never
    waited for: offline is normal); whether it is on."""
    from .lightcli import teams_dir
    from .team.autosync import enabled, start

    if not enabled(store):
        return False
    start(store, teams_dir(), "pull")
    return True


def event_is_stop(payload: dict[str, Any]) -> bool:
    """The main agent's Stop (a subagent's stop is not the session's end)."""
    return payload.get("hook_event_name") == "Stop"


def _recall(
    store: Path, payload: dict[str, Any], prompt: str, **options: Any
) -> list[dict[str, Any]]:
    from .recall.route import Options, payload_request

    request = payload_request(payload, prompt)
    found = layered_recall(store, request, Options.of(**options))
    return list(found["results"])


def _context(event: str, text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _last_message(path: str) -> str:
    """The text of the last assistant message in a Claude Code transcript."""
    from .transcript import messages

    said = messages(path, "assistant")
    return said[-1] if said else ""


def _note(exc: BaseException) -> None:
    """Why a hook said nothing, as one line in ``hook.log`` (kept under 64 KiB; the
    message is xbrain's one-line error, which never quotes the prompt)."""
    from .errors import describe

    served = isinstance(exc, (_Timeout, _ServedError))
    message = str(exc) if served else describe(exc)[0]
    try:
        path = cache_dir() / "hook.log"
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_LIMIT:
            os.replace(path, str(path) + ".1")
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o600)
        # UTF-8 whatever the locale: a store path or message in Chinese under a C or
        # Latin-1 locale was a UnicodeEncodeError, which made the hook itself fail
        with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as handle:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ ", time.gmtime())
            handle.write(f"{stamp}xbrain hook claude-code: {message}\n")
    except OSError:
        pass
