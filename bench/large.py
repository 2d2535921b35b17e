"""100,000 records (issue 45 item 6): ``python bench/run.py --large``.

A store loaded the way a big one grows: 100,000 manual-page resources put in batches of
1,000 (each batch a fresh ``xbrain put`` process; limits raised with ``xbrain config``),
then 1,000 skills (one commit each, in-process) and 1,000 entries (two commits). Then:
every batch's time (first, median, slowest: ≤ 1.5 s however large the store), fresh
search EN/ZH (≤ 10× ``python -c pass``), the hook and a put through ``xbrain serve``
(≤ 3×, ≤ 5×), ``reindex`` (≤ 30 s), the first search after ``clone`` (≤ 30 s), the peak
RSS of ``xbrain serve`` (lexical, then with semantic recall on through the ``hashing``
provider: every vector loaded, no model), and ``.git`` beside the records it holds,
after the load and the pack upkeep of its writes (target ≤ 2×: what a store carries
without a manual gc; a detached upkeep still merging is waited for) and after ``xbrain
gc``, with the derived data under ``.git/xbrain`` apart.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import corpus
from batch_profile import profile_batch
from batch_profile import table as profile_table
from run import SEARCHES, Row, console, man_resources, newer_item, timed, xbrain

from xbrain.store import Store


def clean_pages(count: int, max_text: int) -> list[dict[str, Any]]:
    """``count`` manual-page resources without a page a write's secret scan refuses."""
    pages = man_resources(count + count // 10 + 100, max_text)
    return [item for item in pages if corpus.storable(item)][:count]


def _tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def git_report(store: Path) -> tuple[int, int, int]:
    """(pack count, bytes of .git without .git/xbrain, bytes of .git/xbrain)."""
    git = store / ".git"
    derived = _tree_bytes(git / "xbrain")
    return len(list((git / "objects" / "pack").glob("*.pack"))), _tree_bytes(git) - derived, derived


def wait_for_upkeep(store: Path) -> None:
    """Until no detached pack merge runs in ``store`` (one holds the upkeep lock until it
    exits; a checkout without detached upkeep has no such lock: nothing to wait for)."""
    try:
        from xbrain.git.upkeeplock import upkeep_lock
    except ImportError:
        return
    with upkeep_lock(store / ".git", wait=True):
        pass


def records_bytes(store: Path) -> int:
    """What the working tree holds: every file but the derived ``index/`` and ``.git``."""
    return sum(
        f.stat().st_size
        for top in store.iterdir()
        if top.name not in (".git", "index")
        for f in ([top] if top.is_file() else top.rglob("*"))
        if f.is_file()
    )


def cpu_ms() -> float:
    """CPU time (user + system) of this process's finished children, in ms: on a
    machine shared with other work, what a batch costs apart from waiting for a core."""
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (used.ru_utime + used.ru_stime) * 1000


def load(store: Path, work: Path, count: int) -> tuple[list[float], list[float], list[str]]:
    """The store loaded in batches of 1,000; the batch times and CPU times (ms), notes."""
    for key, value in (("limits.maxEntries", 1_000_000), ("limits.maxBytes", 4 << 30)):
        run = xbrain("config", key, str(value), "--store", str(store))
        subprocess.run(run, check=True, capture_output=True)
    pages = clean_pages(count, 500)
    batch = work / "large-batch.json"
    times: list[float] = []
    cpu: list[float] = []
    # two batches run with timers around the write's steps: where a batch's time goes in
    # a store a tenth as large and in the full one (bench/batch_profile.py)
    profiled = {count // 10 // 1000 * 1000, count - 1000}
    profiles: dict[str, list[tuple[float, float, dict[str, float]]]] = {}
    for first in range(0, count, 1000):
        batch.write_text(json.dumps(pages[first : first + 1000]))
        if first in profiled:
            wall, used_ms, steps = profile_batch(store, batch)
            profiles[f"into {first:,}"] = [(wall, used_ms, steps)]
            times.append(wall)
            cpu.append(used_ms)
        else:
            started, used = time.perf_counter(), cpu_ms()
            run = xbrain("put", str(batch), "--store", str(store))
            subprocess.run(run, check=True, capture_output=True)
            times.append((time.perf_counter() - started) * 1000)
            cpu.append(cpu_ms() - used)
        print(
            f"  large: {first + 1000:,} resources, batch {times[-1]:.0f} ms (CPU {cpu[-1]:.0f} ms)",
            file=sys.stderr,
        )
    wait_for_upkeep(store)
    api = Store(store)
    extra = min(1000, max(10, count // 100))  # skills, and entries: 1,000 beside 100,000
    started = time.perf_counter()
    seen: set[str] = set()
    skills = 0
    for item in pages:
        slug = re.sub(r"[^a-z0-9]+", "-", str(item["title"]).split(":", 1)[0].lower())[:50]
        slug = slug.strip("-")
        if not slug or slug in seen or not str(item["purpose"]).strip():
            continue
        seen.add(slug)
        description = json.dumps(" ".join(str(item["purpose"]).split())[:1000])
        body = str(item["text"])[:4000]
        text = f"---\nname: {slug}-{skills}\ndescription: {description}\n---\n{body}\n"
        api.skill_save_files({"SKILL.md": text.encode()}, publish=skills % 2 == 0)
        skills += 1
        if skills == extra:
            break
    skill_s = time.perf_counter() - started
    entries: list[dict[str, Any]] = []
    for item in pages[: 3 * 1000]:
        purpose = " ".join(str(item["purpose"]).split())[:400]
        if purpose:
            name = str(item["title"]).split(":", 1)[0]
            entries.append(
                {
                    "kind": "rule" if len(entries) % 2 else "memory",
                    "name": f"{name}-guidance-{len(entries)}",
                    "description": purpose,
                    "queries": [purpose],
                    "body": str(item["text"])[:1500],
                }
            )
        if len(entries) == extra:
            break
    started = time.perf_counter()
    for first in range(0, len(entries), 500):
        api.entry_put(entries[first : first + 500])
    entry_s = time.perf_counter() - started
    tenth = max(1, len(cpu) // 10)
    notes = [
        f"{count:,} resources in batches of 1,000: first {times[0]:.0f} ms, median "
        f"{statistics.median(times):.0f} ms, slowest {max(times):.0f} ms, last {times[-1]:.0f} ms "
        f"(target ≤ 1,500 ms each), {sum(times) / 1000:.0f} s in all; CPU per batch (user + "
        f"system): first tenth {statistics.median(cpu[:tenth]):.0f} ms, last tenth "
        f"{statistics.median(cpu[-tenth:]):.0f} ms, slowest {max(cpu):.0f} ms",
        "CPU ms per batch, every tenth batch (store size before it): "
        + ", ".join(f"{i}k {cpu[i]:.0f}" for i in range(0, len(cpu), tenth)),
        f"{skills:,} skills saved in-process in {skill_s:.0f} s (one commit each); "
        f"{len(entries):,} entries in {entry_s:.0f} s (two commits)",
        "where a batch's time goes (two batches of the load, timed step by step; "
        "bench/batch_profile.py):\n" + profile_table(profiles),
    ]
    return times, cpu, notes


def peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def semantic_serve(store: Path, root: Path, runs: int, limit_s: int = 1800) -> str:
    """The peak RSS of ``xbrain serve`` with semantic recall on, after hooks and searches.
    The provider is ``hashing`` (vectors of words, no model: the packaged model would
    take hours to embed 100,000 resources on two cores), so the figure is the server's
    own memory with every vector loaded, without a model's (the packaged model adds its
    own, the same for any store size)."""
    import shutil
    import tempfile

    started_s = time.perf_counter()
    build = xbrain("reindex", "--semantic", "--provider", "hashing", "--store", str(store))
    try:
        subprocess.run(build, check=True, capture_output=True, timeout=limit_s)
    except subprocess.TimeoutExpired:
        return f"semantic on: reindex --semantic (hashing) not done in {limit_s} s; not measured"
    built_s = time.perf_counter() - started_s
    runtime = Path(tempfile.mkdtemp(prefix="xbs", dir="/tmp"))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XBRAIN_STORE": str(store)}
    started = subprocess.run(
        xbrain("serve", "--detach", "--idle", "1800"), env=env, capture_output=True, check=True
    )
    pid = int(json.loads(started.stdout)["pid"])
    try:
        hook = console("hook", "claude-code")
        for i, (_, query) in enumerate(SEARCHES * max(1, runs)):
            body = {"hook_event_name": "UserPromptSubmit", "session_id": f"sem-{i}"}
            data = json.dumps({**body, "prompt": query}).encode()
            subprocess.run(hook, input=data, env=env, capture_output=True, check=True)
            subprocess.run(console("search", query), env=env, capture_output=True, check=True)
        rss = peak_rss_kb(pid)
    finally:
        subprocess.run(xbrain("serve", "--stop"), env=env, capture_output=True)
        shutil.rmtree(runtime, ignore_errors=True)
    vectors = _tree_bytes(store / ".git" / "xbrain" / "vectors")
    return (
        f"semantic on (hashing provider, no model): reindex --semantic {built_s:.0f} s, "
        f"vectors {vectors / 1e6:.0f} MB; peak RSS of xbrain serve after hooks and searches: "
        f"{rss / 1024:.0f} MB"
    )


def _told(row: Row) -> Row:
    """``row``, also written to stderr at once (a long run that stops keeps its rows)."""
    print(f"  large row: {row[0]}: {statistics.median(row[1]):.0f} ms", file=sys.stderr)
    return row


def large_rows(root: Path, runs: int, count: int = 100_000) -> tuple[list[Row], list[str]]:
    """The 100,000-record table's rows and notes."""
    import shutil
    import tempfile

    store = root / f"large-{count}"
    times, cpu, notes = load(store, root, count)
    for note in notes:
        print(f"  large: {note}", file=sys.stderr)
    label = f"{count // 1000}k"
    tenth = max(1, len(cpu) // 10)
    rows: list[Row] = [
        (f"put batch 1,000, first ({label})", times[:1], "≤ 1,500 ms"),
        (f"put batch 1,000, median ({label})", [statistics.median(times)], "≤ 1,500 ms"),
        (f"put batch 1,000, slowest ({label})", [max(times)], "≤ 1,500 ms"),
        ("  CPU of a batch, first tenth", [statistics.median(cpu[:tenth])], "(user + sys)"),
        ("  CPU of a batch, last tenth", [statistics.median(cpu[-tenth:])], "(user + sys)"),
    ]
    wait_for_upkeep(store)
    packs, objects, derived = git_report(store)
    held = records_bytes(store)
    print(
        f"  large: after the load and its pack upkeep {packs} packs, .git {objects / 1e6:.0f} MB "
        f"({objects / held:.1f}x the records)",
        file=sys.stderr,
    )
    for label_q, query in SEARCHES[:2]:
        cmd = xbrain("search", query, "--store", str(store))
        timed(cmd, 1)  # the first search after the load catches the index up
        rows.append(
            _told(
                (f"search {label_q}, {label} (+skills, entries)", timed(cmd, runs), "≤ 10x floor")
            )
        )
    runtime = Path(tempfile.mkdtemp(prefix="xbl", dir="/tmp"))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XBRAIN_STORE": str(store)}
    started = subprocess.run(
        xbrain("serve", "--detach", "--idle", "1800"), env=env, capture_output=True, check=True
    )
    pid = int(json.loads(started.stdout)["pid"])
    try:

        def payload(i: int, tag: str = "large") -> bytes:  # a new session each: a session
            # is not shown again what it was shown
            body = {"hook_event_name": "UserPromptSubmit", "session_id": f"{tag}-{i}"}
            return json.dumps({**body, "prompt": SEARCHES[0][1]}).encode()

        hook = console("hook", "claude-code")
        answered = lambda proc: bool(proc.stdout)  # noqa: E731
        for k in range(20):  # the server's first answers load the store: until it answers
            warm = payload(k, "warm")
            if answered(subprocess.run(hook, input=warm, env=env, capture_output=True)):
                break
            time.sleep(3)
        try:
            samples = timed(hook, runs, env=env, stdin=payload, ok=answered)
            rows.append(_told((f"hook via serve, {label}", samples, "≤ 3x floor")))
        except SystemExit as exc:  # an empty answer: the hook's budget ran out
            notes.append(f"hook via serve, {label}: a run answered nothing ({exc})"[:300])
        item = root / "large-put.json"
        put = console("put", str(item))
        samples = timed(put, runs, newer_item(item, "2027-05"), env)
        rows.append(_told((f"put 1 via serve, {label}", samples, "≤ 5x floor")))
        rss = peak_rss_kb(pid)
    finally:
        subprocess.run(xbrain("serve", "--stop"), env=env, capture_output=True)
        shutil.rmtree(runtime, ignore_errors=True)
    notes.append(
        f"peak RSS of xbrain serve (lexical, after the hook and puts): {rss / 1024:.0f} MB"
    )
    print(f"  large: {notes[-1]}", file=sys.stderr)
    started_s = time.perf_counter()
    subprocess.run(xbrain("reindex", "--store", str(store)), check=True, capture_output=True)
    reindex = (time.perf_counter() - started_s) * 1000
    rows.append(_told((f"reindex {label} (+skills, entries)", [reindex], "≤ 30 s")))
    copy = root / f"large-clone-{count}"
    started_s = time.perf_counter()
    subprocess.run(xbrain("clone", str(store), str(copy)), check=True, capture_output=True)
    cloned = time.perf_counter() - started_s
    started_s = time.perf_counter()
    first = xbrain("search", SEARCHES[0][1], "--store", str(copy))
    subprocess.run(first, check=True, capture_output=True)
    first_s = (time.perf_counter() - started_s) * 1000
    rows.append(_told((f"first search after clone, {label}", [first_s], "≤ 30 s")))
    print(f"  large: clone {cloned:.1f} s", file=sys.stderr)
    shutil.rmtree(copy, ignore_errors=True)
    started_s = time.perf_counter()
    subprocess.run(xbrain("gc", "--store", str(store)), check=True, capture_output=True)
    gc_s = time.perf_counter() - started_s
    packs_gc, objects_gc, derived_gc = git_report(store)
    print(
        f"  large: gc {gc_s:.0f} s, {packs_gc} pack(s), {objects_gc / 1e6:.0f} MB", file=sys.stderr
    )
    notes.append(semantic_serve(store, root, runs))
    print(f"  large: {notes[-1]}", file=sys.stderr)
    notes += [
        f"clone {cloned:.1f} s",
        f"records in the working tree (all but index/): {held / 1e6:.0f} MB; .git after the "
        f"load and the pack upkeep of its writes (before any gc): {objects / 1e6:.0f} MB in "
        f"{packs} packs ({objects / held:.1f}x the records; target ≤ 2x), after xbrain gc "
        f"({gc_s:.0f} s): {objects_gc / 1e6:.0f} MB in {packs_gc} pack(s) "
        f"({objects_gc / held:.1f}x); derived data under .git/xbrain: "
        f"{derived / 1e6:.0f} MB after the load, {derived_gc / 1e6:.0f} MB after reindex "
        "(search postings, skill index, entry cache, history table: rebuilt from git on "
        "demand, never pushed or cloned)",
    ]
    return rows, notes
