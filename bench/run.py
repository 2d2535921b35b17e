"""xbrain benchmarks: fresh-process latency of the core commands, search, backups and
history, index upkeep per put, and retrieval quality — printed as tables.

Run with ``make bench`` (or ``python bench/run.py [--runs N] [--skip-large]`` after
``python -m compileall xbrain``, as an installed wheel would be). Every CLI case runs as a
new process, the way an agent hook calls xbrain; the MCP rows time warm calls to one
long-lived ``xbrain mcp`` (and its start-up). Each row is the median of N runs, with its
ratio to ``python -c pass`` measured in the same run: for a fresh-process case, a
``python -c pass`` run just before each of its runs (this machine's speed drifts by tens
of percent within minutes, and a floor timed minutes earlier moved ratios as much); for
the others, the floor row at the top. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus
import suite

from xbrain.kinds.model import normalize_resource, resource_id
from xbrain.secretscan import scan_text
from xbrain.store import Store

PY = sys.executable


def resource(i: int, updated: str = "2026-01-01T00:00:00.000Z") -> dict[str, object]:
    return {
        "source": {"provider": "bench", "id": f"item-{i}", "url": f"https://example.com/items/{i}"},
        "title": f"Benchmark resource {i}",
        "text": f"Synthetic body for resource {i}.\nTwo lines: keyboard focus dialog.",
        "summary": "A synthetic record used only to measure xbrain.",
        "purpose": "Measure write and read latency",
        "useWhen": ["benchmarking xbrain"],
        "limitations": ["Synthetic; not real content"],
        "savedReason": None,
        "updatedAt": updated,
    }


def xbrain(*args: str) -> list[str]:
    return [PY, "-m", "xbrain", *args]


def console(*args: str) -> list[str]:
    """The ``xbrain`` console script beside this interpreter (what a hook's settings run:
    no ``runpy``), else ``python -m xbrain``."""
    script = Path(PY).parent / "xbrain"
    return [str(script), *args] if script.is_file() else xbrain(*args)


def newer_item(item: Path, month: str) -> Callable[[int], None]:
    """Before run ``i``: resource 7 with a newer updatedAt, so every run commits an update."""

    def write(i: int) -> None:
        item.write_text(json.dumps(resource(7, f"{month}-01T00:00:{i:02d}.000Z")))

    return write


def new_revision(folder: Path, name: str) -> Callable[[int], None]:
    """Before run ``i``: new content for skill ``name``, so every save is a new revision."""

    def write(i: int) -> None:
        text = f"---\nname: {name}\ndescription: changed {i}\n---\nrevision {i}\n"
        (folder / "SKILL.md").write_text(text)

    return write


class Samples(list[float]):
    """A fresh-process case's times (ms), ``python -c pass`` timed just before each, and
    each run's CPU time (user + system of the command's process, ms)."""

    floors: list[float]
    cpu: list[float]


def floor_once() -> float:
    """One ``python -c pass`` in a new process, in ms: the floor every ratio is taken to."""
    start = time.perf_counter()
    subprocess.run([PY, "-c", "pass"], check=True)
    return (time.perf_counter() - start) * 1000


def timed(
    cmd: list[str],
    runs: int,
    before: Callable[[int], None] | None = None,
    env: dict[str, str] | None = None,
    stdin: Callable[[int], bytes] | None = None,
    ok: Callable[[subprocess.CompletedProcess[bytes]], bool] | None = None,
) -> list[float]:
    """``cmd`` run ``runs`` times, each a new process: ``before(i)`` first (untimed), then
    a floor run, then the command with ``stdin(i)`` as its input; a run that fails (a
    non-zero exit, or ``ok`` says so) stops the benchmark."""
    samples = Samples()
    samples.floors, samples.cpu = [], []
    for i in range(runs):
        if before is not None:
            before(i)
        data = b"" if stdin is None else stdin(i)
        samples.floors.append(floor_once())
        used = os.times()
        start = time.perf_counter()
        proc = subprocess.run(cmd, input=data, capture_output=True, env=env)
        samples.append((time.perf_counter() - start) * 1000)
        done = os.times()
        cpu = done.children_user - used.children_user + done.children_system - used.children_system
        samples.cpu.append(cpu * 1000)
        if proc.returncode != 0 or (ok is not None and not ok(proc)):
            raise SystemExit(f"benchmark command failed: {cmd}\n{proc.stderr.decode()}")
    return samples


def make_store(root: Path, name: str, items: list[dict[str, object]]) -> tuple[Path, float]:
    """A store filled by one import-store commit (limits raised for the large corpora)."""
    source = root / f"{name}.json"
    document = {"version": 1, "resources": items, "tombstones": [], "receipts": {}}
    source.write_text(json.dumps(document))
    store = root / name
    if name.startswith(("search", "upkeep")):
        for key, value in (("limits.maxEntries", 1_000_000), ("limits.maxBytes", 4 << 30)):
            run = xbrain("config", key, str(value), "--store", str(store))
            subprocess.run(run, check=True, capture_output=True)
    start = time.perf_counter()
    # a manual page quotes an example URL with credentials (the basic-auth detector): public
    # text, stored as it is
    run = xbrain("import-store", str(source), "--store", str(store), "--allow-secret", "basic-auth")
    subprocess.run(run, check=True, capture_output=True)
    return store, (time.perf_counter() - start) * 1000


def man_resources(count: int, max_text: int) -> list[dict[str, object]]:
    """``count`` resources of real manual-page text: the Chinese sections, then English
    ones, then copies under new ids until there are enough."""
    base = corpus.resources("zh", None, max_text) + corpus.resources("en", None, max_text)
    out = []
    for i in range(count):
        item = json.loads(json.dumps(base[i % len(base)]))
        if i >= len(base):
            item["source"]["id"] += f"/copy-{i // len(base)}"
        out.append(item)
    return out


SEARCHES = (
    ("English", "list directory contents sorted by time"),
    ("Chinese", "列出目录内容并按时间排序"),
    ("mixed", "ls 命令 显示 隐藏文件"),
)
Row = tuple[str, list[float], str]


def search_rows(root: Path, runs: int, large: bool) -> tuple[list[Row], list[str]]:
    """Fresh-process search on 10,000 (and 100,000) resources of real text."""
    rows: list[Row] = []
    notes: list[str] = []
    sizes = [(10_000, 4000, "≤ 100 / 120 ms")] + ([(100_000, 500, "≤ 150 ms")] if large else [])
    for count, max_text, target in sizes:
        target_s = 3 if count == 10_000 else 30  # issue 14's index build targets
        store, import_ms = make_store(root, f"search-{count}", man_resources(count, max_text))
        started = time.perf_counter()
        subprocess.run(xbrain("reindex", "--store", str(store)), check=True, capture_output=True)
        build = time.perf_counter() - started
        copy = root / f"clone-{count}"
        started = time.perf_counter()
        subprocess.run(xbrain("clone", str(store), str(copy)), check=True, capture_output=True)
        cloned = time.perf_counter() - started
        started = time.perf_counter()
        query = SEARCHES[0][1]
        subprocess.run(
            xbrain("search", query, "--store", str(copy)), check=True, capture_output=True
        )
        first = time.perf_counter() - started
        notes.append(
            f"{count:,} man-page resources (text ≤ {max_text} chars): import-store "
            f"{import_ms / 1000:.1f} s (indexes as it imports), reindex {build:.1f} s "
            f"(target ≤ {target_s} s), clone {cloned:.1f} s, "
            f"first search after the clone {first * 1000:.0f} ms"
        )
        shutil.rmtree(copy, ignore_errors=True)
        rows.append((f"reindex {count:,} (one run)", [build * 1000], f"≤ {target_s} s"))
        rows.append((f"first search after clone {count:,}", [first * 1000], ""))
        for label, query in SEARCHES:
            cmd = xbrain("search", query, "--store", str(store))
            rows.append((f"search {label}, {count:,}", timed(cmd, runs), target))
    return rows, notes


def upkeep_rows(root: Path, runs: int) -> list[Row]:
    """Index upkeep per put: an in-process put (an update) into a 10,000-resource store
    with a current index, and of it the search index's after-commit upkeep, timed around
    the hook itself. (Once a put into a store without an index built the whole index for
    its conflict check, "with an index minus without one" measured that build, not the
    upkeep: a negative difference.)"""
    from xbrain.search import service

    store_dir, _ = make_store(root, "upkeep", man_resources(10_000, 4000))
    subprocess.run(xbrain("reindex", "--store", str(store_dir)), check=True, capture_output=True)
    item = man_resources(1, 4000)[0]  # a Chinese manual section
    store = Store(store_dir, cache_dir=Path(os.environ["XBRAIN_CACHE_DIR"]))
    puts: list[float] = []
    upkeep: list[float] = []
    plain = service.after_commit

    def timed_upkeep(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return plain(*args, **kwargs)
        finally:
            upkeep.append((time.perf_counter() - started) * 1000)

    service.after_commit = timed_upkeep  # (the hook imports it when it runs)
    try:
        for i in range(runs):
            item["updatedAt"] = f"2027-01-01T00:00:{i:02d}.000Z"
            start = time.perf_counter()
            store.put([normalize_resource(item).resource])
            puts.append((time.perf_counter() - start) * 1000)
    finally:
        service.after_commit = plain
    if len(upkeep) != len(puts):
        raise SystemExit(f"the search upkeep ran {len(upkeep)} times in {len(puts)} puts")
    return [
        ("put in-process, index present", puts, ""),
        ("  of which: search index upkeep", upkeep, "≤ 20 ms"),
    ]


# What any write pays before a line of xbrain runs: importing the libraries it is built
# on (git objects and packs, YAML, SQLite, paths, JSON). A baseline for the write rows:
# a put or a skill save cannot be faster than this plus its own modules and work.
LIBRARIES = "import dulwich.repo, dulwich.object_store, ruamel.yaml.cyaml, sqlite3, pathlib, json"


def libraries_row(runs: int) -> Row:
    return ("imports alone (dulwich, ruamel…)", timed([PY, "-c", LIBRARIES], runs), "baseline")


def core_rows(root: Path, small: Path, large: Path, runs: int) -> list[Row]:
    """Start-up, put into 100 and 10,000, get, status, a batch of 1,000 into 10,000."""
    rows: list[Row] = []
    rows.append(("xbrain --help", timed(console("--help"), runs), "≤ 4x floor"))
    rows.append(libraries_row(runs))
    for label, store in (("100", small), ("10,000", large)):
        item = root / f"put-{label}.json"

        cmd = console("put", str(item), "--store", str(store))
        newer = newer_item(item, "2026-02")
        rows.append((f"put 1 into {label} (update)", timed(cmd, runs, newer), "≤ 10x floor"))
    rid = resource_id("bench", "item-7")
    rows.append(("get from 10,000", timed(xbrain("get", rid, "--store", str(large)), runs), ""))
    rows.append(("list 20 of 10,000", timed(console("list", "--store", str(large)), runs), ""))
    rows.append(("status of 10,000", timed(xbrain("status", "--store", str(large)), runs), ""))

    rows += batch_rows(root, large, max(runs, 5))
    return rows


def batch_rows(root: Path, large: Path, runs: int) -> list[Row]:
    """A batch of 1,000 new resources put into 10,000: each run into its own copy of the
    10,000-resource store (limits raised for 11,000), so every run writes the same batch
    into the same store. Wall time, then CPU time.

    The copies are all made before the first run and removed after the last: deleting
    one right before a run (as this row once did) left ext4 tens of thousands of inodes
    freed seconds earlier, which it scans past for each file the put creates (``perf``:
    ``recently_deleted``), tripling the put's system time — the harness's cost, not the
    put's. A detached pack merge a run starts is waited for before the next run."""
    from large import wait_for_upkeep

    template = root / "batch-template"
    shutil.copytree(large, template, symlinks=True)
    limit = xbrain("config", "limits.maxEntries", "1000000", "--store", str(template))
    subprocess.run(limit, check=True, capture_output=True)
    batch = root / "batch.json"
    batch.write_text(json.dumps([resource(100_000 + j) for j in range(1000)]))
    copies = [root / f"batch-store-{i}" for i in range(runs)]
    for copy in copies:
        shutil.copytree(template, copy, symlinks=True)
    os.sync()  # the copies' writes reach the disk now, not during a timed put
    store = root / "batch-store"

    def next_copy(i: int) -> None:  # renamed into place: nothing is deleted
        if i:
            wait_for_upkeep(store)
            store.rename(copies[i - 1])
        copies[i].rename(store)

    samples = timed(xbrain("put", str(batch), "--store", str(store)), runs, next_copy)
    store.rename(copies[-1])
    cpu = Samples(samples.cpu)
    cpu.floors, cpu.cpu = samples.floors, []
    for path in [*copies, template]:
        shutil.rmtree(path, ignore_errors=True)
    return [
        ("put 1,000 new into 10,000", samples, "≤ 1,000 ms"),
        ("  the same, CPU (user+sys)", cpu, ""),
    ]


def remote_rows(root: Path, store: Path, runs: int) -> tuple[list[Row], list[str]]:
    """Backups of the 10,000-resource store, and log in a store with 10,000 commits."""
    from dulwich.repo import Repo

    from xbrain.git import GitStore

    rows: list[Row] = []
    notes: list[str] = []
    pushes, clones = [], []
    for i in range(min(runs, 3)):
        remote = root / f"backup-{i}.git"
        Repo.init_bare(str(remote), mkdir=True, default_branch=b"main").close()
        subprocess.run(
            xbrain("remote", "remove", "origin", "--store", str(store)), capture_output=True
        )
        subprocess.run(
            xbrain("remote", "add", "origin", str(remote), "--store", str(store)),
            check=True,
            capture_output=True,
        )
        pushes += timed(xbrain("remote", "push", "--store", str(store)), 1)
        clones += timed(xbrain("clone", str(remote), str(root / f"restored-{i}")), 1)
    rows.append(("remote push 10,000 (full)", pushes, ""))
    rows.append(("clone 10,000", clones, ""))
    item = root / "remote-item.json"
    # pull from the backup restored-0 pushes to (backup-0), so each run fast-forwards
    subprocess.run(
        xbrain("remote", "remove", "origin", "--store", str(store)), check=True, capture_output=True
    )
    subprocess.run(
        xbrain("remote", "add", "origin", str(root / "backup-0.git"), "--store", str(store)),
        check=True,
        capture_output=True,
    )

    def newer_on_origin(i: int) -> None:  # one new commit on the remote, then pull it
        item.write_text(json.dumps(resource(8, f"2026-03-01T00:00:{i:02d}.000Z")))
        subprocess.run(
            xbrain("put", str(item), "--store", str(root / "restored-0")),
            check=True,
            capture_output=True,
        )
        subprocess.run(
            xbrain("remote", "push", "--store", str(root / "restored-0")),
            check=True,
            capture_output=True,
        )

    rows.append(
        (
            "remote pull (1 new commit)",
            timed(xbrain("remote", "pull", "--store", str(store)), runs, newer_on_origin),
            "",
        )
    )

    deep = root / "deep-history"
    subprocess.run(xbrain("init", "--store", str(deep)), check=True, capture_output=True)
    started = time.perf_counter()
    with GitStore(deep) as git:
        git._repo.object_store.fsync_object_files = False  # building the fixture only
        parent = git.head()
        for i in range(10_000):
            rid = resource_id("bench", f"deep-{i % 500}")
            path = f"resources/{rid[9:11]}/{rid}.yaml"
            parent = git.commit(
                parent, {path: f"id: {rid}\nrevision: {i}\n".encode()}, f"bench {i}\n", "b <b@b>", i
            )
    notes.append(f"a store with 10,000 commits built in {time.perf_counter() - started:.1f} s")
    rid = resource_id("bench", "deep-7")
    first = timed(xbrain("log", rid, "--store", str(deep)), 1)
    rows.append(("log ID, 10,000 commits (first)", first, ""))
    rows.append(
        (
            "log ID, 10,000 commits",
            timed(xbrain("log", rid, "--store", str(deep)), runs),
            "≤ 300 ms",
        )
    )
    return rows, notes


def hook_rows(store: Path, runs: int, size: str = "10,000") -> list[Row]:
    """The Claude Code hook on each prompt, a new process each time: ``xbrain hook
    claude-code`` as settings.json runs it (the console script), and (English only)
    through the older script in hooks/, which starts that command."""
    script = Path(__file__).resolve().parent.parent / "hooks" / "claude_recall.py"
    env = {**os.environ, "XBRAIN_STORE": str(store), "XBRAIN_BIN": ""}
    rows: list[Row] = []
    cases = [(label, query, console("hook", "claude-code"), "") for label, query in SEARCHES]
    cases.append(("English", SEARCHES[0][1], [PY, str(script)], " (script)"))
    for label, query, command, how in cases:

        def payload(i: int, label: str = label, how: str = how, query: str = query) -> bytes:
            # a new session each time, so nothing is de-duplicated away
            body = {"hook_event_name": "UserPromptSubmit", "session_id": f"bench-{label}{how}-{i}"}
            return json.dumps({**body, "prompt": query}).encode()

        samples = timed(command, runs, env=env, stdin=payload, ok=lambda proc: not proc.stderr)
        rows.append((f"hook {label}{how}, {size}", samples, "" if how else "≤ 9x floor"))
    return rows


def mcp_rows(store: Path, large: Path, runs: int) -> list[Row]:
    """``xbrain mcp``: session start-up, then warm tool calls in one long-lived server.

    ``store`` holds 10,000 man-page resources (as the search rows); ``large`` the 10,000
    synthetic ones (as the core rows), so each row has a fresh-process CLI twin above.
    """
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    def params(at: Path) -> StdioServerParameters:
        return StdioServerParameters(
            command=PY,
            args=["-m", "xbrain", "mcp", "--writes-in-force", "--store", str(at)],
            env=dict(os.environ),
        )

    starts: list[float] = []
    calls: dict[str, list[float]] = {}

    async def call(client: Client, label: str, name: str, arguments: dict[str, object]) -> None:
        start = time.perf_counter()
        result = await client.call_tool(name, arguments)
        calls.setdefault(label, []).append((time.perf_counter() - start) * 1000)
        if result.is_error:
            raise SystemExit(f"MCP benchmark call failed: {name}: {result.content}")

    async def run() -> None:
        for _ in range(runs):
            start = time.perf_counter()
            async with Client(params(store)) as client:
                await client.list_tools()
                starts.append((time.perf_counter() - start) * 1000)
        async with Client(params(store)) as client:
            for label, query in SEARCHES:
                await call(client, "", "search", {"query": query})  # first call: warm-up
                for _ in range(runs):
                    await call(client, f"MCP search {label}, 10,000", "search", {"query": query})
        async with Client(params(large)) as client:
            rid = resource_id("bench", "item-7")
            for i in range(runs):
                await call(client, "MCP get from 10,000", "get", {"id": rid})
                item = resource(7, f"2026-04-01T00:00:{i:02d}.000Z")
                await call(client, "MCP put 1 into 10,000 (update)", "put", {"resources": [item]})

    anyio.run(run)
    calls.pop("")
    return [("MCP start + list tools", starts, "")] + [
        (label, samples, "") for label, samples in calls.items()
    ]


def skill_rows(root: Path, store: Path, runs: int) -> tuple[list[Row], list[str]]:
    """Skill recall in a fresh process on a store of 10,000 resources and 1,000 skills
    (built from the same manual pages: name, one-line description, a section as body;
    half published, half drafts, as ``skill save`` makes them: every one offered), beside
    a resource search on the same store (the baseline of the same run)."""
    from skill_build import save_skills

    started = time.perf_counter()
    names = save_skills(Store(store), 1000)
    saved = time.perf_counter() - started
    subprocess.run(xbrain("reindex", "--store", str(store)), check=True, capture_output=True)
    first = names[0]
    recall = ("skill", "recall")
    rows: list[Row] = [
        (
            "search English (baseline)",
            timed(xbrain("search", SEARCHES[0][1], "--store", str(store)), runs),
            "",
        ),
        (
            "skill recall EN, 10k+1k",
            timed(xbrain(*recall, SEARCHES[0][1], "--store", str(store)), runs),
            "fast",
        ),
        (
            "skill recall ZH, 10k+1k",
            timed(xbrain(*recall, SEARCHES[1][1], "--store", str(store)), runs),
            "fast",
        ),
        (
            "skill recall --slug (L1)",
            timed(xbrain(*recall, "--slug", first, "--store", str(store)), runs),
            "",
        ),
    ]
    extra = root / "extra-skill"
    extra.mkdir(exist_ok=True)

    edit = new_revision(extra, first)

    def saved_before(i: int) -> None:  # a save just before: recall catches up one skill
        edit(runs + i)
        save = xbrain("skill", "save", str(extra), "--store", str(store))
        subprocess.run(save, check=True, capture_output=True)

    save = console("skill", "save", str(extra), "--store", str(store))
    rows.append(libraries_row(runs))
    rows.append(("skill save (new revision)", timed(save, runs, edit), "≤ 10x floor"))
    after = xbrain(*recall, SEARCHES[0][1], "--store", str(store))
    rows.append(("skill recall after a save", timed(after, runs, saved_before), ""))
    from skill_build import skill_build_rows

    rows += skill_build_rows(store, runs)
    notes = [f"1,000 skills saved in-process in {saved:.1f} s (one commit each)"]
    return rows, notes


def recall_rows(root: Path, store: Path, runs: int) -> tuple[list[Row], list[str]]:
    """``xbrain recall`` in a fresh process on the skills store plus 1,000 entries (rules
    whose queries are manual-page descriptions), beside a search in the same run."""
    pages = man_resources(10_000, 4000)
    entries: list[dict[str, object]] = []
    seen: set[str] = set()
    for item in pages:
        name = str(item["title"]).split(":", 1)[0]
        purpose = " ".join(str(item["purpose"]).split())[:400]
        if name in seen or not purpose:
            continue
        seen.add(name)
        if scan_text(str(item["text"])[:1500]):  # an example credential in a man page
            continue
        entries.append(
            {
                "kind": "rule" if len(entries) % 2 else "memory",
                "name": f"{name}-guidance",
                "description": purpose,
                "queries": [purpose],
                "keywords": [name],
                "body": str(item["text"])[:1500],
                "oneLiner": f"See {name}.",
            }
        )
        if len(entries) == 1000:
            break
    started = time.perf_counter()
    for first in range(0, len(entries), 500):
        Store(store).entry_put(entries[first : first + 500])
    saved = time.perf_counter() - started
    prompts = (
        ("English", "list directory contents sorted by time"),
        ("Chinese", "列出目录内容并按时间排序"),
        ("off-topic", "ok thanks"),
    )
    rows: list[Row] = [
        (
            "search English (baseline)",
            timed(xbrain("search", prompts[0][1], "--store", str(store)), runs),
            "",
        )
    ]
    for label, prompt in prompts:

        def asked(_: int, prompt: str = prompt) -> bytes:
            return prompt.encode()

        samples = timed(xbrain("recall", "-", "--store", str(store)), runs, stdin=asked)
        rows.append((f"recall {label}, 10k+1k+1k", samples, "≤ 9x floor"))
    rows += hook_rows(store, runs, "10k+1k+1k")
    rows += serve_rows(root, store, runs, prompts[0][1])
    notes = [f"1,000 entries put in-process in {saved:.1f} s (two commits)"]
    return rows, notes


def serve_rows(root: Path, store: Path, runs: int, prompt: str) -> list[Row]:
    """The same hook, recall and search while ``xbrain serve`` keeps the store warm, and
    the writes agents make (put, skill save), which ask the server first too."""
    runtime = Path(tempfile.mkdtemp(prefix="xbr", dir="/tmp"))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XBRAIN_STORE": str(store)}
    started = subprocess.run(
        xbrain("serve", "--detach", "--idle", "600"), env=env, capture_output=True, check=True
    )
    pid = json.loads(started.stdout)["pid"]
    rows: list[Row] = []
    try:
        cases = (
            ("hook English via serve", console("hook", "claude-code"), "payload"),
            ("recall English via serve", console("recall", "-"), "prompt"),
            ("search English via serve", console("search", SEARCHES[0][1]), None),
        )
        for label, command, given in cases:

            def body(i: int, given: str | None = given) -> bytes:
                if given == "payload":
                    start = {"hook_event_name": "UserPromptSubmit", "session_id": f"sv-{i}"}
                    return json.dumps({**start, "prompt": prompt}).encode()
                return prompt.encode() if given == "prompt" else b""

            answered = lambda proc: bool(proc.stdout)  # noqa: E731
            samples = timed(command, runs, env=env, stdin=body, ok=answered)
            rows.append((label, samples, "≤ 3x floor" if "hook" in label else ""))
        item = root / "put-serve.json"
        put, newer = console("put", str(item)), newer_item(item, "2026-03")
        rows.append(("put 1 via serve (update)", timed(put, runs, newer, env), "≤ 10x floor"))
        skill = root / "serve-skill"
        skill.mkdir(exist_ok=True)
        save, edit = console("skill", "save", str(skill)), new_revision(skill, "serve-skill")
        rows.append(("skill save via serve", timed(save, runs, edit, env), "≤ 10x floor"))
    finally:
        subprocess.run(xbrain("serve", "--stop"), env=env, capture_output=True)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
        shutil.rmtree(runtime, ignore_errors=True)
    return rows


def compiled() -> None:
    """Every fresh process of the bench reads compiled modules, as an installed package
    does: xbrain's byte code is written once here, and a ``PYTHONDONTWRITEBYTECODE`` in the
    caller's environment (which would make every process compile ~160 modules again, ≈ 60
    ms) is dropped for the processes the bench starts."""
    import compileall

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "xbrain"), quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7, help="runs per case (median reported)")
    parser.add_argument("--skip-large", action="store_true", help="skip the 100,000-resource store")
    parser.add_argument(
        "--large",
        action="store_true",
        help="only the 100,000-record table (bench/large.py: batches, serve, reindex, clone, "
        ".git size)",
    )
    parser.add_argument(
        "--large-count", type=int, default=100_000, help="resources --large loads (default 100,000)"
    )
    parser.add_argument(
        "--queries", type=int, default=400, help="queries per corpus, language and construction"
    )
    parser.add_argument(
        "--sections",
        default="core,search,upkeep,remote,agents,skills,recall,quality",
        help="comma-separated subset of: core, search, upkeep, remote, agents, skills, recall, "
        "quality",
    )
    args = parser.parse_args()
    compiled()
    sections = set(args.sections.split(","))
    runs = args.runs
    rows: list[tuple[str, list[float], str]] = []
    with tempfile.TemporaryDirectory(prefix="xbrain-bench-") as tmp:
        root = Path(tmp)
        os.environ["XBRAIN_CACHE_DIR"] = str(root / "cache")
        if args.large:
            import large

            floors = [floor_once() for _ in range(runs)]
            found, notes = large.large_rows(root, runs, args.large_count)
            print_table(runs, [("python -c pass (floor)", floors, ""), *found], notes)
            return
        small, _ = make_store(root, "store-100", [resource(i) for i in range(100)])
        large, import_ms = make_store(root, "store-10k", [resource(i) for i in range(10_000)])

        floors = [floor_once() for _ in range(runs)]  # the row other ratios fall back on
        rows.append(("python -c pass (floor)", floors, ""))
        notes: list[str] = []
        quality: list[tuple[str, ...]] = []
        if "core" in sections:
            rows += core_rows(root, small, large, runs)
        if "search" in sections:
            found, search_notes = search_rows(root, runs, not args.skip_large)
            rows += found
            notes += search_notes
        if "upkeep" in sections:
            rows += upkeep_rows(root, runs)
        if "remote" in sections:
            found, remote_notes = remote_rows(root, large, runs)
            rows += found
            notes += remote_notes
        if "agents" in sections:
            man = root / "search-10000"
            if not man.exists():
                man, _ = make_store(root, "search-10000", man_resources(10_000, 4000))
                subprocess.run(
                    xbrain("reindex", "--store", str(man)), check=True, capture_output=True
                )
            rows += hook_rows(man, runs) + mcp_rows(man, large, runs)
        if "skills" in sections:
            man = root / "search-10000"
            if not man.exists():
                man, _ = make_store(root, "search-10000", man_resources(10_000, 4000))
            found, skill_notes = skill_rows(root, man, runs)
            rows += found
            notes += skill_notes
            if "recall" in sections:
                found, recall_notes = recall_rows(root, man, runs)
                rows += found
                notes += recall_notes
        if "quality" in sections:
            quality = suite.run_all(args.queries, root / "cache")

    notes.insert(0, f"a 10,000-resource store imported in {import_ms:,.0f} ms (one commit)")
    print_table(runs, rows, notes)

    if not quality:
        return
    print(
        "\nRetrieval quality (bench/suite.py: three corpora x two languages x three query "
        "constructions; choose on dev, never on test)\n"
    )
    print(suite.table(quality))
    print(f"\n{suite.verdict(quality)} (how likely that is by chance: bench/criterion.py)")


def print_table(runs: int, rows: list[Row], notes: list[str]) -> None:
    """The rows as a table (the first row is the floor), after the setup notes."""
    floor = statistics.median(rows[0][1])
    print(
        f"xbrain benchmarks: median of {runs} fresh-process runs, python {sys.version.split()[0]}, "
        f"{os.cpu_count()} cores"
    )
    for note in notes:
        print(f"setup: {note}")
    print()
    header = ("case", "median ms", "min", "max", "x floor", "target")
    print("| {:<32} | {:>9} | {:>7} | {:>7} | {:>7} | {:<14} |".format(*header))
    print(f"|{'-' * 34}|{'-' * 11}|{'-' * 9}|{'-' * 9}|{'-' * 9}|{'-' * 16}|")
    for name, samples, target in rows:
        median = statistics.median(samples)
        here = statistics.median(samples.floors) if isinstance(samples, Samples) else floor
        print(
            f"| {name:<32} | {median:9.1f} | {min(samples):7.1f} | {max(samples):7.1f} "
            f"| {median / here:7.1f} | {target:<14} |"
        )


if __name__ == "__main__":
    main()
