"""`xbrain recall` and `xbrain search` parsed without click mean what click would parse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings

from tests.conftest import (
    COMMON_UNITS,
    EXAMPLES,
    Result,
    command_lines,
    light_and_click,
    meaningful,
    run_entry,
)
from xbrain.cli.find import search as search_command
from xbrain.cli.recall import recall as recall_command
from xbrain.lightcli import parse_recall
from xbrain.lightsearch import parse_search
from xbrain.userdirs import user_dir

Run = Callable[..., Result]
TOKENS = [
    "-",
    "x",
    "--help",
    "-h",
    "--top-k",
    "--top-k=2",
    "3",
    "2.5",
    "abc",
    "--threshold",
    "0.4",
    "--max-dropoff=0.2",
    "--budget",
    "900",
    "--scoring",
    "absolute",
    "relative",
    "--scoring=bogus",
    "--only",
    "rule",
    "skill",
    "--only=memory",
    "--include-retired",
    "--project",
    "Acme/App",
    "--session",
    "s-1",
    "--path",
    "migrations/v/0042.py",
    "--path=/abs/x.sql",
    "--store",
    "/tmp/somewhere",
    "--wait",
    "--traceback",
    "--unknown",
    "",
]


RECALL_UNITS = [
    *("--top-k 3", "--threshold 0.4", "--budget 900", "--scoring absolute", "--only rule"),
    *("--only skill", "--project Acme/App", "--session s-1", "--include-retired", "-"),
    "--path migrations/v/0042.py",
]


@settings(max_examples=400, deadline=None)
@given(command_lines(RECALL_UNITS + COMMON_UNITS, TOKENS, max_size=7))
def test_the_light_parser_reads_only_what_click_reads_the_same(argv: list[str]) -> None:
    light = parse_recall(argv)
    theirs = light_and_click(light, recall_command, argv)
    if theirs is None:
        return  # click parses it (and says what is wrong), as it always did
    assert theirs.pop("source") == "-"
    expected, mine = meaningful(theirs), meaningful(light)
    expected["only"] = tuple(expected.get("only", ()))
    mine["only"] = tuple(mine.get("only", ()))
    assert mine == expected


def test_the_plain_forms_take_the_light_path() -> None:
    assert parse_recall(["-", "--top-k", "3", "--budget=900", "--only", "rule"]) == {
        "top_k": 3,
        "budget": 900,
        "only": ("rule",),
    }
    for refused in (["--help"], ["--top-k", "x"], ["--wait", "1"], ["a.txt"], ["--top-k"]):
        assert parse_recall(refused) is None


def run(
    argv: list[str], prompt: str, light: bool, store: Path, command: str = "recall"
) -> tuple[int, str, str]:
    """``xbrain COMMAND …`` through the console script's path (light) or click alone."""
    return run_entry([command, *argv, "--store", str(store)], light=light, stdin=prompt)


def test_both_paths_answer_alike(xb: Run, store_dir: Path) -> None:
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    payload = json.dumps({"prompt": "can I git push --force to main?", "cwd": "/tmp"})
    for argv, prompt in (
        (["-"], payload),
        (["-", "--only", "rule", "--top-k=2", "--include-retired"], payload),
        (["-", "--scoring", "absolute", "--threshold", "0.9"], "git push --force"),
        (["-", "--budget", "5"], "x"),  # exit 4, one line
        (["-", "--top-k", "x"], "x"),  # click's usage error
        (["notes.txt"], "x"),
    ):
        light, heavy = run(argv, prompt, True, store_dir), run(argv, prompt, False, store_dir)
        assert light == heavy, argv
    code, out, _ = run(["-"], payload, True, store_dir)
    assert code == 0 and json.loads(out)["results"][0]["name"] == "no-force-push"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG rule is Linux's")
@pytest.mark.parametrize("value", [None, "", "   ", "relative/dir", "/abs/dir", "/abs/dir/"])
def test_user_dirs_agree_with_platformdirs(
    value: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import platformdirs

    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME"):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert Path(user_dir("data")) == Path(platformdirs.user_data_dir("xbrain", appauthor=False))
    assert Path(user_dir("cache")) == Path(platformdirs.user_cache_dir("xbrain", appauthor=False))


SEARCH_TOKENS = [
    "-",
    "dialog",
    "",
    "-x",
    "--",
    "--help",
    "--limit",
    "--limit=3",
    "7",
    "x",
    "--brief",
    "--brief=1",
    "--mode",
    "hybrid",
    "--mode=bogus",
    "--domain",
    "web-ui",
    "--feature=focus",
    "--style",
    "--at",
    "main",
    "--provider-config",
    "--store",
    "/tmp/somewhere",
]


SEARCH_UNITS = ["--limit 3", "--brief", "--mode hybrid", "--domain web-ui", "--style x"]


@settings(max_examples=400, deadline=None)
@given(command_lines(SEARCH_UNITS + COMMON_UNITS, SEARCH_TOKENS, max_size=6))
def test_the_light_search_parser_reads_only_what_click_reads_the_same(argv: list[str]) -> None:
    argv = ["dialog", *argv]  # the query; a second one, or none, is among the loose tokens
    light = parse_search(argv)
    theirs = light_and_click(light, search_command, argv)
    if theirs is not None:
        assert meaningful(theirs) == {"limit": 5, **meaningful(light)}


def test_search_through_both_paths_is_the_same(xb: Run, store_dir: Path) -> None:
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    for argv in (
        ["search", "keyboard dialog"],
        ["search", "keyboard dialog", "--brief", "--limit", "2"],
        ["search", "--mode=lexical", "dialog"],
        ["search", "dialog", "--limit", "50"],  # exit 4, one line
        ["search", "dialog", "--limit", "x"],  # click's usage error
        ["search", "-"],
    ):
        light, heavy = (
            run(argv[1:], "focus dialog", True, store_dir, argv[0]),
            run(argv[1:], "focus dialog", False, store_dir, argv[0]),
        )
        assert light == heavy, argv


def test_the_search_plain_forms_take_the_light_path() -> None:
    assert parse_search(["dialog focus", "--brief", "--limit=3", "--mode", "lexical"]) == {
        "query": "dialog focus",
        "brief": True,
        "limit": 3,
        "mode": "lexical",
    }
    for refused in (["--help"], ["q", "--at", "main"], ["q", "--provider-config", "c.json"]):
        assert parse_search(refused) is None


@pytest.mark.parametrize(
    ("argv", "stdin"),
    [
        (["recall", "-"], "git push --force"),
        (["search", "dialog"], ""),
        (["hook", "claude-code"], '{"hook_event_name": "UserPromptSubmit", "prompt": "x y z"}'),
    ],
)
def test_the_hot_commands_never_load_click(
    xb: Run, store_dir: Path, argv: list[str], stdin: str
) -> None:
    """What every prompt pays for: recall, search and the hook start without click."""
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    command = [sys.executable, "-X", "importtime", "-m", "xbrain", *argv, "--store", str(store_dir)]
    for _ in range(2):  # the first may build the derived caches; the second is every prompt
        proc = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr[-300:]
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    assert "click" not in loaded and "dataclasses" not in loaded, argv


def test_output_is_utf8_json_whatever_stdout_encoding_python_was_given(
    xb_proc: Run, tmp_path: Path
) -> None:
    """With ``PYTHONIOENCODING=ascii`` (or any encoding without CJK) every command that
    printed Chinese crashed: a traceback from the light path, "Internal error
    (UnicodeEncodeError)" from click's. JSON between programs is UTF-8 (RFC 8259)."""
    ascii_env = {"PYTHONIOENCODING": "ascii", "COLUMNS": "100"}
    assert xb_proc("put", str(EXAMPLES / "batch.json")).code == 0
    title = "一条虚构的设计推文"
    rid = "resource_b9fd64f7614d707b8c04d4f72a7e57d656097ea1aac5bd09e377372def162b89"
    for args, stdin in (
        (("search", "卡片 留白", "--brief"), None),  # the light path
        (("recall", "-"), "卡片 留白 设计推文"),  # the light path, on stdin
        (("get", rid), None),  # the light read path (the search built the index)
        (("put", str(EXAMPLES / "batch.json")), None),  # the light write path
    ):
        done = xb_proc(*args, input=stdin, env=ascii_env)
        assert done.code == 0, (args, done.stderr)
        json.loads(done.stdout)  # one whole JSON document
        if args[0] != "put":
            assert title in done.stdout, args
    top = xb_proc("--help", store=None, env=ascii_env)  # text for a person: "?" for "—"
    assert top.code == 0 and "Usage: xbrain" in top.stdout and "xbrain ? private" in top.stdout


def test_a_reader_that_closes_the_pipe_first_ends_the_command_quietly(
    xb_proc: Run, store_dir: Path
) -> None:
    """`xbrain search … | head -1` style: before, the light path printed a traceback
    (BrokenPipeError) and click's path "Broken pipe". Now both exit 1 and say nothing."""
    assert xb_proc("put", str(EXAMPLES / "batch.json")).code == 0
    for args in (("search", "dialog"), ("list",)):  # the light path, then click's
        with subprocess.Popen(
            [sys.executable, "-m", "xbrain", *args, "--store", str(store_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            proc.stdout.close()  # gone before a byte is written
            stderr = proc.stderr.read().decode()
            assert (proc.wait(timeout=60), stderr) == (1, ""), args
    prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "dialog focus"})
    with subprocess.Popen(  # the hook never fails, even when its reader is gone
        [sys.executable, "-m", "xbrain", "hook", "claude-code", "--store", str(store_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        proc.stdin.write(prompt.encode())
        proc.stdin.close()
        assert (proc.wait(timeout=60), proc.stderr.read().decode()) == (0, "")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_output_that_cannot_be_written_is_one_line(xb_proc: Run, store_dir: Path) -> None:
    """stdout on a full disk (`> /dev/full`): the light paths (search, recall, the top
    help) and click's help printed a traceback; stdout closed, the top help did too."""
    assert xb_proc("put", str(EXAMPLES / "batch.json")).code == 0
    for args, stdin in (
        (("search", "dialog"), ""),
        (("recall", "-"), "dialog focus"),
        (("--help",), ""),
        (("put", "--help"), ""),
        (("list",), ""),
    ):
        with open("/dev/full", "wb") as full:
            done = subprocess.run(
                [sys.executable, "-m", "xbrain", *args],
                input=stdin.encode(),
                stdout=full,
                stderr=subprocess.PIPE,
                env={**os.environ, "XBRAIN_STORE": str(store_dir), "COLUMNS": "100"},
                timeout=60,
            )
        stderr = done.stderr.decode()
        assert done.returncode == 1 and stderr.startswith("The disk is full"), (args, stderr)
        assert stderr.count("\n") == 1, (args, stderr)
    closed = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "xbrain", "--help"],
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "100"},
        timeout=60,
    )
    assert (closed.returncode, closed.stderr.decode()) == (1, "")


def test_with_stderr_closed_the_exit_code_still_says_why(tmp_path: Path) -> None:
    """`2>&-`: the light paths' error line met sys.stderr None, and the AttributeError
    made every failure exit 1 (a store that is a file is 7, bad input 4)."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    for args, stdin, code in (
        (("search", "dialog", "--store", str(a_file)), "", 7),
        (("recall", "-", "--store", str(a_file)), "dialog", 7),
        (("put", "-", "--store", str(tmp_path / "store")), "{}", 4),
        (("get", "resource_" + "0" * 64, "--store", str(a_file)), "", 7),
    ):
        done = subprocess.run(
            ["sh", "-c", 'exec "$@" 2>&-', "sh", sys.executable, "-m", "xbrain", *args],
            input=stdin.encode(),
            capture_output=True,
            timeout=60,
        )
        assert (done.returncode, done.stdout) == (code, b""), args


def test_with_stdin_closed_a_dash_reads_nothing(store_dir: Path) -> None:
    """`<&-`: Python has no sys.stdin, and `put -` printed an AttributeError traceback,
    `recall -` and `entry put -` "Internal error". Now - reads nothing, as from an
    empty file: refused input (4) or an empty answer."""
    for args, code in (
        (("put", "-"), 4),
        (("skill", "save", "-"), 4),
        (("entry", "put", "-"), 4),
        (("recall", "-"), 0),
        (("search", "-"), 4),
        (("hook", "claude-code"), 0),
    ):
        done = subprocess.run(
            ["sh", "-c", 'exec "$@" <&-', "sh", sys.executable, "-m", "xbrain", *args],
            capture_output=True,
            env={**os.environ, "XBRAIN_STORE": str(store_dir)},
            timeout=60,
        )
        stderr = done.stderr.decode()
        assert done.returncode == code and "Traceback" not in stderr, (args, stderr)
        assert "Internal error" not in stderr and stderr.count("\n") <= 1, (args, stderr)


def test_a_command_started_without_stdout_ends_quietly(xb_proc: Run, store_dir: Path) -> None:
    """Started with stdout closed (`>&-`, a daemon's descriptors), Python has no
    sys.stdout at all: every command printed an AttributeError traceback, the hook too,
    which must never fail. Commands now exit 1 and say nothing; the hook exits 0."""
    assert xb_proc("put", str(EXAMPLES / "batch.json")).code == 0
    prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "dialog focus"})
    for args, stdin, code in (
        (("search", "dialog"), "", 1),
        (("recall", "-"), "dialog focus", 1),
        (("list",), "", 1),
        (("hook", "claude-code"), prompt, 0),
    ):
        done = subprocess.run(
            ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "xbrain", *args],
            input=stdin.encode(),
            capture_output=False,
            stderr=subprocess.PIPE,
            env={**os.environ, "XBRAIN_STORE": str(store_dir)},
            timeout=60,
        )
        assert (done.returncode, done.stderr.decode()) == (code, ""), args
