"""Inputs are bounded, only regular files are read, and every failure has its exit code.

Issue 11, items 12 (unbounded reads), 14 (the adapter deadline), 16 (exit codes).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_adapter_faults import adapter_config
from tests.conftest import EXAMPLES, Result, make, snapshot_files, write_json
from xbrain.kinds.model import resource_id

Run = Callable[..., Result]


def _commands(target: str) -> list[tuple[str, ...]]:
    return [
        ("put", target),
        ("analyze", target),
        ("distill", target),
        ("capture", "--bookmarks", target),
        ("import-store", target),
        ("status", "--provider-config", target),
        ("pull", "--source-config", target),
    ]


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_special_files_are_refused_before_reading(
    xb_proc: Run, tmp_path: Path, store_dir: Path, special: str
) -> None:
    """put /dev/zero used to grow to 5.6 GB in 8 s; a FIFO blocked forever."""
    xb_proc("put", str(EXAMPLES / "batch.json"))
    target = special
    if special == "fifo":
        target = str(tmp_path / "pipe")
        os.mkfifo(target)
    before = snapshot_files(store_dir)
    for args in _commands(target):
        started = time.monotonic()
        result = xb_proc(*args)
        assert result.code == 4, (args, result.stderr)
        assert "Not a regular file" in result.stderr, (args, result.stderr)
        assert time.monotonic() - started < 20
    assert snapshot_files(store_dir) == before


def test_oversized_files_are_cut_at_the_limit(xb: Run, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(11 * 1024 * 1024)  # sparse: 11 MiB of zeros
    assert xb("put", str(big)).stderr.strip() == "Input exceeds 10 MiB."
    assert (
        xb("status", "--provider-config", str(big)).stderr.strip()
        == "Provider config exceeds 16 KiB."
    )


DEEP = "[" * 100_000 + "]" * 100_000
MEDIUM = "[" * 500 + "]" * 500  # parses, but is deeper than anything xbrain reads


@pytest.mark.parametrize("payload", [DEEP, MEDIUM, '{"a":' * 3000 + "1" + "}" * 3000])
def test_deep_json_is_invalid_input_not_an_internal_error(
    xb: Run, tmp_path: Path, payload: str
) -> None:
    """RecursionError used to surface as Internal error (exit 1)."""
    path = tmp_path / "deep.json"
    path.write_text(payload)
    for args in (
        ("put", str(path)),
        ("analyze", str(path)),
        ("distill", str(path)),
        ("capture", "--bookmarks", str(path)),
        ("import-store", str(path)),
        ("status", "--provider-config", str(path)),
        ("pull", "--source-config", str(path)),
    ):
        result = xb(*args)
        assert result.code == 4, (args, result.stderr)
        assert "Internal error" not in result.stderr
    assert xb("put", "-", input=payload).code == 4


def test_a_deep_prompt_is_text_to_recall_not_an_internal_error(xb: Run) -> None:
    """recall reads a JSON hook payload from stdin when it sees one; one nested deeper
    than the parser goes was an internal error (exit 1). It is prompt text now."""
    xb("put", str(EXAMPLES / "batch.json"))
    for body in (DEEP, '{"prompt": "dialog", "x": ' + DEEP + "}"):
        result = xb("recall", "-", input=body)
        assert result.code == 0, result.stderr
        assert result.json["results"] == []
        searched = xb("search", "-", input=body)
        assert searched.code == 4 and "Internal error" not in searched.stderr


DEEP_YAML = "[" * 30_000 + "]" * 30_000  # ruamel's C composer crashed the process on it


@pytest.mark.parametrize(
    ("command", "name", "text"),
    [
        (("entry", "put"), "deep.yaml", f"kind: rule\nname: x\ndescription: {DEEP_YAML}\n"),
        (("entry", "put"), "deep.md", f"---\nkind: rule\nname: x\nkeywords: {DEEP_YAML}\n---\nb\n"),
        (("entry", "put"), "blocks.yaml", "- " * 30_000 + "x\n"),  # block sequences
        (("skill", "save"), "SKILL.md", f"---\nname: deep\ndescription: {DEEP_YAML}\n---\nb\n"),
    ],
)
def test_deep_yaml_is_invalid_input_not_a_crash(
    xb_proc: Run, tmp_path: Path, store_dir: Path, command: tuple[str, ...], name: str, text: str
) -> None:
    """A real process (a crash there is a signal, not a failed assertion in pytest)."""
    folder = tmp_path / "deep"
    folder.mkdir()
    (folder / name).write_text(text)
    target = folder if name == "SKILL.md" else folder / name
    result = xb_proc(*command, str(target))
    assert result.code == 4, (result.code, result.stderr[-300:])
    assert result.stderr.strip().endswith("nested deeper than 200 levels")
    assert not store_dir.exists()


def test_brackets_and_dashes_in_text_are_not_nesting(
    xb: Run, json_file: Callable[[Any], str]
) -> None:
    """Text full of what nests in YAML (the depth walk looks at events, not characters)
    round-trips; the walk runs on it, as the count of such tokens is over the limit."""
    text = "[" * 1000 + "\n" + "- - - - item\n" * 300 + "{? x}" * 100
    item = make("brackety", text=text, summary="[" * 500, purpose="- " * 400)
    assert xb("put", json_file(item)).code == 0
    stored = xb("get", resource_id("web", item["source"]["id"])).json
    assert (stored["text"], stored["summary"]) == (text, "[" * 500)


def test_deep_adapter_output_is_a_provider_failure(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path
) -> None:
    body = "import sys\nsys.stdin.readline()\nsys.stdout.write('[' * 100000 + ']' * 100000)\n"
    config = adapter_config(tmp_path, body)
    xb("put", json_file(make("deep")))
    result = xb("sync", "--all", "--provider-config", config)
    assert result.code in (1, 8) and "Internal error" not in result.stderr
    assert result.json["confirmed"] == 0 and result.json["failures"], result.stdout


def test_capture_with_a_non_list_media_field(xb: Run, tmp_path: Path) -> None:
    library = json.loads((EXAMPLES / "bookmarks.json").read_text())
    library["bookmarks"][0]["media"] = 5
    result = xb("capture", "--bookmarks", str(write_json(tmp_path / "b.json", library)))
    assert result.code == 0, result.stderr


@pytest.mark.parametrize(
    "body",
    [
        "import time\ntime.sleep(60)\n",  # never reads stdin, never exits
        "import os, time\nos.close(1)\ntime.sleep(60)\n",  # closes stdout, never exits
    ],
)
def test_adapter_deadline_covers_requests_over_64_kib(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, body: str
) -> None:
    """Item 14: a 64 KiB+ request was written before the deadline loop; the lock was held 40 s."""
    put = xb("put", json_file(make("big", text="字" * 40_000, summary="词" * 9_000)))
    assert put.code == 0, put.stderr  # the sync request is ~150 KB of UTF-8
    config = adapter_config(tmp_path, body)  # timeoutMs 1000
    started = time.monotonic()
    result = xb("sync", "--all", "--provider-config", config)
    elapsed = time.monotonic() - started
    assert result.code != 0
    assert elapsed < 10, elapsed  # the 1 s deadline (plus start-up), not the adapter's 60 s
    assert xb("status").code == 0  # the store lock was released


def test_store_option_naming_a_file_is_not_a_store(xb: Run, tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("x")
    for args in (("status",), ("put", str(EXAMPLES / "batch.json")), ("search", "x")):
        result = xb(*args, store=file)
        assert result.code == 7, (args, result.stderr)


@pytest.mark.parametrize(
    ("url", "added", "pushed"),
    [
        ("http://127.0.0.1:9/r.git", 0, 8),  # nothing listens: a remote failure
        ("gopher://h/r.git", 0, 8),  # a scheme dulwich does not speak
        ("ssh://[::1/x", 4, 3),  # unparsable: refused at add, so there is no remote
    ],
)
def test_push_to_an_unreachable_or_strange_remote_is_exit_8(
    xb: Run, url: str, added: int, pushed: int
) -> None:
    xb("put", str(EXAMPLES / "batch.json"))
    assert xb("remote", "add", "odd", url).code == added
    result = xb("remote", "push", "odd")
    assert result.code == pushed, result.stderr
    assert "Internal error" not in result.stderr


def test_a_corrupt_segmentation_cache_is_rebuilt(xb_proc: Run, tmp_path: Path) -> None:
    cache = tmp_path / "segcache"
    env = {"XBRAIN_CACHE_DIR": str(cache)}
    xb_proc("put", "-", input=make("zh", title="中文对话框的可访问性指南"), env=env)
    first = xb_proc("search", "对话框", env=env)
    assert first.code == 0 and first.json["results"]
    for path in cache.rglob("*"):
        if path.is_file():
            path.write_bytes(b"\x00garbage" * 10)
    again = xb_proc("search", "对话框", env=env)
    assert again.code == 0 and again.json["results"] == first.json["results"], again.stderr
    assert xb_proc("search", "对话框", env=env).code == 0


def test_sigint_while_xbrain_loads_is_one_line() -> None:
    """A Ctrl-C while Python imported the CLI showed a traceback (deterministic: the
    interrupt is raised by the import itself)."""
    code = (
        "import builtins, xbrain.launch as launch\n"
        "real = builtins.__import__\n"
        "def interrupting(name, *args, **kwargs):\n"
        "    if name == 'cli':\n"
        "        raise KeyboardInterrupt\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = interrupting\n"
        "launch.main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == 130 and proc.stderr == b"Interrupted.\n", proc.stderr


def test_sigint_while_running_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "xbrain", "search", "-", "--store", str(tmp_path / "s")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # as at a terminal: a shell's background job would hand down an ignored SIGINT
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(1.5)  # loaded, and waiting for the query on stdin
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err == b"Interrupted.\n", err


def test_a_directory_given_as_a_file_is_refused_in_its_words(
    xb_proc: Run, tmp_path: Path, store_dir: Path
) -> None:
    """The bounded reader opened the directory and then failed in fdopen: "Is a
    directory: 3", exit 1. A session's state file that is a directory failed recall
    the same way."""
    xb_proc("put", str(EXAMPLES / "batch.json"))
    before = snapshot_files(store_dir)
    for args in (
        ("put", str(tmp_path)),
        ("analyze", str(tmp_path)),
        ("entry", "put", str(tmp_path)),
    ):
        result = xb_proc(*args)
        assert result.code == 4 and result.stderr == f"Not a regular file: {tmp_path}\n", args
    assert snapshot_files(store_dir) == before
    (store_dir / ".git" / "xbrain" / "sessions" / "odd.json").mkdir(parents=True)
    recalled = xb_proc("recall", "-", "--session", "odd", input="git push --force")
    assert recalled.code == 0 and recalled.stderr == ""
