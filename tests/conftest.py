"""Shared fixtures: an isolated environment, a fresh store, and CLI runners.

Every test runs with HOME/XDG pointed at its tmp_path and GIT_*/XBRAIN_* scrubbed, so
nothing reads the developer's config or writes outside the test's directory.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

settings.register_profile(
    "xbrain",
    derandomize=True,
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("xbrain")


@pytest.fixture(scope="session")
def segment_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One compiled Chinese dictionary for the whole run (compiling takes about a second)."""
    return tmp_path_factory.mktemp("xbrain-cache")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, segment_cache: Path) -> None:
    for name in list(os.environ):
        if name.startswith(("GIT_", "XBRAIN_")):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (
        ("XDG_DATA_HOME", "data"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("XBRAIN_CACHE_DIR", str(segment_cache))
    # no background ``xbrain serve`` started by a fresh process with semantic recall on
    # (autoserve): the tests of that unset it, and stop the server they started
    monkeypatch.setenv("XBRAIN_SERVE_AUTO", "off")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Someone Else")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "someone@example.invalid")


def share_compiled_dictionary(cache: Path) -> Path:
    """``cache``, a test's own ``XBRAIN_CACHE_DIR``, given the run's compiled Chinese
    dictionary (hard links: compiling it costs about a second of each process that
    finds none). For tests that read what a command writes there, not how it compiles."""
    from xbrain.search.segment import Segmenter

    shared = Path(os.environ["XBRAIN_CACHE_DIR"])
    if not any(shared.glob("jieba-*.bin")):
        Segmenter(shared).close()
    cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    for made in shared.glob("jieba-*"):
        if made.suffix in (".bin", ".ref") and not (cache / made.name).exists():
            os.link(made, cache / made.name)
    return cache


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    return tmp_path / "store"


def sample(**changes: Any) -> dict[str, Any]:
    """The original's synthetic resource, with top-level overrides."""
    data: dict[str, Any] = json.loads((EXAMPLES / "synthetic-resource.json").read_text())
    data = copy.deepcopy(data)
    data.update(changes)
    return data


def make(source_id: str, **changes: Any) -> dict[str, Any]:
    """A distinct valid resource (its own source id and page URL)."""
    data = sample(**changes)
    data["source"] = {
        **data["source"],
        "id": source_id,
        "url": f"{data['source']['url']}/{source_id}",
    }
    return data


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


@pytest.fixture
def xb(store_dir: Path, tmp_path: Path) -> Callable[..., Result]:
    """Run the CLI in-process (click's CliRunner) against the test store."""
    from xbrain.cli import cli

    def run(*args: str, input: Any = None, store: Path | None = store_dir) -> Result:
        argv = [*args]
        if store is not None:
            argv += ["--store", str(store)]
        if isinstance(input, (dict, list)):
            input = json.dumps(input)
        runner = CliRunner()
        result = runner.invoke(cli, argv, input=input, catch_exceptions=False)
        return Result(result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def xb_proc(store_dir: Path) -> Callable[..., Result]:
    """Run the real CLI as a subprocess (python -m xbrain)."""

    def run(
        *args: str,
        input: Any = None,
        store: Path | None = store_dir,
        env: dict[str, str] | None = None,
    ) -> Result:
        argv = [sys.executable, "-m", "xbrain", *args]
        if store is not None:
            argv += ["--store", str(store)]
        if isinstance(input, (dict, list)):
            input = json.dumps(input)
        proc = subprocess.run(
            argv,
            input=input,
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            timeout=120,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False))
    return path


def head(store: Path) -> str | None:
    ref = store / ".git" / "refs" / "heads" / "main"
    return ref.read_text().strip() if ref.exists() else None


def snapshot_files(store: Path) -> dict[str, bytes]:
    """Every file under the store except lock files (for 'nothing changed' checks)."""
    out = {}
    for path in sorted(store.rglob("*")):
        if path.is_file() and not path.name.endswith(".lock"):
            out[str(path.relative_to(store))] = path.read_bytes()
    return out


@pytest.fixture
def json_file(tmp_path: Path) -> Callable[[Any], str]:
    counter = iter(range(10**6))

    def write(value: Any) -> str:
        return str(write_json(tmp_path / f"input-{next(counter)}.json", value))

    return write


def merged_tree(ours: Path, theirs: Path) -> dict[str, bytes]:
    """Every file of ``ours`` after merging ``theirs`` into it (remote.merge.merge_files)."""
    from xbrain.core import GitStore, View
    from xbrain.remote.merge import merge_files

    with GitStore(ours) as og, GitStore(theirs) as tg:
        ov, tv = View(og.snapshot()), View(tg.snapshot())
        files = {p: ov.read(p) for p, _ in ov.snap.files()}
        for path, data in merge_files(ov, tv).items():
            if data is None:
                files.pop(path, None)
            else:
                files[path] = data
    return {p: d for p, d in files.items() if d is not None}


def run_entry(
    argv: list[str], *, light: bool, stdin: str = "", env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """``xbrain ARGV`` in a new process through the console script's path (``light``:
    ``xbrain.launch``, which tries the paths without click first) or click alone;
    (exit code, stdout, stderr). $XBRAIN_STORE points nowhere unless ``env`` says."""
    code = (
        "import sys; sys.argv = ['xbrain', *sys.argv[1:]]; "
        + ("from xbrain.launch import main" if light else "from xbrain.cli import main")
        + "; main()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "XBRAIN_STORE": "/nonexistent", **(env or {})},
        timeout=120,
    )
    return proc.returncode, proc.stdout, proc.stderr


def clicks_reading(command: Any, argv: list[str]) -> dict[str, Any] | None:
    """What click's own ``command`` makes of ``argv`` (None: it refuses them): its
    parameters, plus the common options click keeps aside in ``Settings`` (the store as a
    string, wait, agent, traceback). The light parsers' tests compare against this."""
    import click

    from xbrain.cli.base import Settings

    try:
        ctx = command.make_context(command.name or "", list(argv), obj=Settings())
    except (click.exceptions.Exit, click.ClickException):
        return None
    given: Settings = ctx.obj
    return {
        **ctx.params,
        "store": None if given.store is None else str(given.store),
        "wait": given.wait,
        "agent": given.agent,
        "traceback": given.traceback,
    }


def command_lines(units: list[str], loose: list[str], max_size: int = 5) -> Any:
    """A Hypothesis strategy of command lines. Half are made of ``units`` alone — each a
    whole option with its value (``"--top-k 3"``) or an argument — so that well-formed
    lines, which a light parser takes, come up often; the other half mix in ``loose``
    tokens (an option without its value, a bad value, ``--help``), which break them."""
    from hypothesis import strategies as st

    def flat(drawn: list[str]) -> list[str]:
        return [token for unit in drawn for token in (unit.split(" ") if unit else [""])]

    well_formed = st.lists(st.sampled_from(units), max_size=max_size)
    mixed = st.lists(st.sampled_from(units + loose), max_size=max_size)
    return st.one_of(well_formed, mixed).map(flat)


# the common options every command takes, which no light path reads but --store
COMMON_UNITS = ["--store /tmp/somewhere", "--wait 1", "--agent me", "--traceback"]


def light_and_click(light: dict[str, Any] | None, command: Any, argv: list[str]) -> Any:
    """Where a light parser took ``argv`` (``light`` not None): click's reading of it
    (which must accept it) without the common options no light path takes — ``--wait``,
    ``--agent``, ``--traceback`` (asserted absent) — and with the store as a path string.
    None when the light parser left ``argv`` to click."""
    if light is None:
        return None
    theirs = clicks_reading(command, argv)
    assert theirs is not None, f"light accepted {argv} that click refuses"
    for aside in ("wait", "agent", "traceback"):
        assert not theirs.pop(aside), (aside, argv)
    return theirs


def meaningful(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters that were given: None, False and () (a repeatable option not
    given) left out."""
    return {key: value for key, value in params.items() if value not in (None, False, ())}
