"""`xbrain put`, `xbrain skill save` and `xbrain --help` without click mean what click
would make of them, print the same and change the store the same."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import given, settings

from tests.conftest import EXAMPLES, clicks_reading, command_lines, meaningful, run_entry
from xbrain.cli import top_help
from xbrain.cli.helptext import source
from xbrain.cli.records import put as put_command
from xbrain.cli.skills import save as save_command
from xbrain.helptext import TOP_HELP
from xbrain.lightwrite import parse_put, parse_skill_save

TOKENS = [
    "-",
    "notes.json",
    "",
    "-x",
    "--",
    "--help",
    "--publish",
    "--publish=1",
    "--expect-revision",
    "--expect-revision=rev_1",
    "rev_2",
    "--store",
    "--store=",
    "/tmp/somewhere",
    "--wait",
    "--wait=1.5",
    "2",
    "-1",
    "nan",
    "inf",
    "--agent",
    "--agent=bot",
    "--traceback",
    "--unknown",
]


def light_form(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """Click's reading of put or save in the light parsers' names."""
    if params is None:
        return None
    found = dict(params)
    if "expect_revision" in found:
        found["expect"] = found.pop("expect_revision")
    found["source"] = found.pop("file", found.get("source"))
    return meaningful(found)


WRITE_UNITS = ["--store /tmp/somewhere", "--wait 1.5", "--wait=2", "--agent bot", "--traceback"]
WRITE_UNITS += ["--publish", "--expect-revision rev_1"]


@pytest.mark.parametrize(
    ("parse", "command"), [(parse_put, put_command), (parse_skill_save, save_command)]
)
@settings(max_examples=400, deadline=None)
@given(argv=command_lines(WRITE_UNITS, TOKENS, max_size=6).map(lambda argv: ["a.json", *argv]))
def test_the_light_write_parsers_read_only_what_click_reads_the_same(
    parse: Callable[[list[str]], dict[str, Any] | None], command: click.Command, argv: list[str]
) -> None:
    light = parse(argv)
    if light is None:
        return  # click parses it (and says what is wrong), as it always did
    theirs = light_form(clicks_reading(command, argv))
    assert theirs is not None, f"light accepted {argv} that click refuses"
    assert meaningful(light) == theirs


def test_the_plain_forms_take_the_light_path() -> None:
    assert parse_put(["r.json", "--store", "/s", "--wait=2", "--agent", "bot"]) == {
        "source": "r.json",
        "store": "/s",
        "wait": 2.0,
        "agent": "bot",
    }
    assert parse_skill_save(["-", "--publish", "--expect-revision", "rev_1"]) == {
        "source": "-",
        "publish": True,
        "expect": "rev_1",
    }
    for refused in (["--help"], ["a", "b"], ["a", "--wait", "-1"], ["a", "--store="], []):
        assert parse_put(refused) is None
        assert parse_skill_save(refused) is None


def run(
    argv: list[str], light: bool, stdin: str = "", columns: str = "100"
) -> tuple[int, str, str]:
    """``xbrain ARGV`` through the console script's path (light) or click alone."""
    return run_entry(argv, light=light, stdin=stdin, env={"COLUMNS": columns})


def masked(result: tuple[int, str, str]) -> tuple[int, str, str]:
    """Commit ids differ between two stores written a second apart; nothing else may."""
    code, out, err = result
    return code, re.sub(r'"commit": "[0-9a-f]{40}"', '"commit": "…"', out), err


def head(store: Path) -> str:
    return (store / ".git" / "refs" / "heads" / "main").read_text() if store.exists() else ""


def test_writes_through_both_paths_are_the_same(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text("---\nname: demo-skill\ndescription: A demo.\n---\nDo it.\n")
    bad = tmp_path / "bad.json"
    bad.write_text('{"title": 1}')
    resource = str(EXAMPLES / "synthetic-resource.json")
    stores = {light: tmp_path / ("light" if light else "click") for light in (True, False)}
    steps: list[tuple[list[str], str]] = [
        (["put", resource], ""),  # creates the store, one commit
        (["put", resource], ""),  # unchanged: no commit
        (["put", "-"], Path(resource).read_text()),
        (["put", str(bad)], ""),  # exit 4, one line
        (["put", str(tmp_path / "missing.json")], ""),
        (["put", resource, "--wait", "x"], ""),  # click's usage error
        (["skill", "save", str(skill)], ""),
        (["skill", "save", str(skill), "--expect-revision", "rev_0"], ""),  # exit 5
        (["skill", "save", str(skill), "--publish"], ""),
        (["skill", "save", "-"], skill.read_text().replace("Do it.", "Do it twice.")),
        (["skill", "save", str(tmp_path / "nothing-here")], ""),
    ]
    for argv, stdin in steps:
        results = {}
        for light, store in stores.items():
            before = head(store)
            result = run([*argv, "--store", str(store)], light, stdin)
            results[light] = (*masked(result), head(store) != before)
        assert results[True] == results[False], argv
    assert run(["skill", "save", str(skill), "--store", str(stores[True])], True)[0] == 0


def test_the_help_text_is_clicks() -> None:
    assert top_help() == TOP_HELP, "xbrain --help changed: run make helptext"
    assert source() == (Path(__file__).parents[2] / "xbrain" / "helptext.py").read_text()
    for columns in ("80", "200"):
        assert run(["--help"], True, columns=columns) == run(["--help"], False, columns=columns)
    narrow = run(["--help"], True, columns="60")
    assert narrow == run(["--help"], False, columns="60") and narrow[1] != TOP_HELP
    assert run(["-h"], True)[1] == TOP_HELP
    assert run(["--help", "put"], True) == run(["--help", "put"], False)


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["put", str(EXAMPLES / "synthetic-resource.json")], ["skill", "save", "-"]],
)
def test_help_and_the_writes_never_load_click(tmp_path: Path, argv: list[str]) -> None:
    """Nor multiprocessing: only a whole-store index build uses its helper process, not
    the upkeep of the indexes a write finds (built here by a first put and search)."""
    stdin = "---\nname: demo-skill\ndescription: A demo.\n---\nDo it.\n"
    command = [sys.executable, "-X", "importtime", "-m", "xbrain", *argv]
    if argv != ["--help"]:
        store = ["--store", str(tmp_path / "store")]
        run_entry(["put", str(EXAMPLES / "synthetic-resource.json"), *store], light=True)
        run_entry(["search", "synthetic", *store], light=True)
        assert (tmp_path / "store" / ".git" / "xbrain" / "search.sqlite").exists()
        command += store
    proc = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-300:]
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    assert "click" not in loaded, argv
    assert "multiprocessing" not in loaded, argv


@pytest.mark.parametrize("asked", ["--traceback", "XBRAIN_TRACEBACK=yes"])
def test_tracebacks_are_shown_on_both_paths_when_asked(tmp_path: Path, asked: str) -> None:
    """--traceback or $XBRAIN_TRACEBACK: the light paths show the traceback too, then the
    same one-line error and exit code as click's path."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"title": 1}')
    flag, env = ([asked], {}) if asked.startswith("--") else ([], dict([asked.split("=")]))
    for argv in (["put", str(bad)], ["search", "x", "--limit", "50"]):
        full = [*argv, *flag, "--store", str(tmp_path / "store")]
        answers = [
            run_entry(full, light=light, env={"COLUMNS": "100", **env}) for light in (True, False)
        ]
        for light, (_, _, err) in zip((True, False), answers, strict=True):
            assert "Traceback (most recent call last)" in err, (argv, light)
        (code_light, _, err_light), (code_click, _, err_click) = answers
        assert code_light == code_click == 4
        assert err_light.splitlines()[-1] == err_click.splitlines()[-1]
        quiet = run_entry([*argv, "--store", str(tmp_path / "store")], light=True)
        assert "Traceback" not in quiet[2] and quiet[2].count("\n") == 1


def test_the_stdin_a_client_sends_is_one_byte_over_the_larger_input_limit() -> None:
    """A served write reads stdin to this bound, so the server's own reader sees an
    oversized input as oversized; it must follow the limits it stands for."""
    from xbrain.inputs import MAX_INPUT
    from xbrain.kinds.skillzip import MAX_ARCHIVE_BYTES
    from xbrain.lightwrite import STDIN_BOUND

    assert max(MAX_INPUT, MAX_ARCHIVE_BYTES) + 1 == STDIN_BOUND


def test_a_served_batch_leaves_the_servers_cycle_collector_as_it_was(tmp_path: Path) -> None:
    """A fresh batch's process tunes the collector it turns on (``lightwrite.write``); a
    server's write finds it on and leaves it alone: nothing the server holds is frozen
    for good, and its thresholds stay (a batch put through ``xbrain serve``)."""
    import gc
    import json

    from tests.conftest import make
    from xbrain.lightwrite import served_write

    store = tmp_path / "store"
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([make("one"), make("two")]))
    frozen, thresholds = gc.get_freeze_count(), gc.get_threshold()
    assert gc.isenabled()
    code, out = served_write("put", [str(batch)], b"", store, str(tmp_path), None)
    assert code == 0 and json.loads(out)["added"] == 2, out
    assert (gc.get_freeze_count(), gc.get_threshold()) == (frozen, thresholds)
    assert gc.isenabled()
