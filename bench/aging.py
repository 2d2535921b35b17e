"""A year of use, simulated (issue 45 item 5): an aged store against a fresh one.

The aged store receives, in one seeded random mix, 5,000 single puts (a third of them
updates of a resource put before), 200 batches of 30, 500 skill saves (100 skills, five
revisions each, every other one published), 2,000 entry puts (one entry each, a quarter
of them updates) and 300 deletes, each its own commit through the public API in one
long-lived process (as ``xbrain serve`` or an MCP server writes; the after-commit
upkeep and pack upkeep run after each, as in any write). The fresh store then gets the
same final records in a few commits: the live resources in batches of 1,000, the
deletions in one, the entries in batches of 500, and each skill's last revision once.

Then, for each store, alternating aged / fresh within every run so that both see the
same machine: a fresh-process ``put`` (an update), ``search``, ``recall``, ``skill save``
(a new revision) and the Claude Code hook; then the hook, ``put`` and ``skill save``
through ``xbrain serve``. Each figure is the median of N runs, as a ratio to ``python -c
pass`` timed just before each run and to the fresh store's (target: aged ≤ 1.2× fresh);
beside them, the pack count and the size of ``.git`` (objects, and the derived data
under ``.git/xbrain`` apart).

Run ``python bench/aging.py [--runs 7] [--scale 1.0]`` (``--scale 0.1``: a tenth of
every count, for a quick look). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
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
from large import clean_pages, cpu_ms, git_report, records_bytes, wait_for_upkeep
from run import console, floor_once, xbrain

from xbrain.kinds.model import resource_id
from xbrain.store import Store

PROMPT = "list directory contents sorted by time"


def when(second: int) -> str:
    """A timestamp ``second`` seconds into 2026 (each write's is newer than the last)."""
    import datetime

    at = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(seconds=second)
    return at.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def entry(i: int, page: dict[str, Any], version: int) -> dict[str, Any]:
    name = str(page["title"]).split(":", 1)[0]
    purpose = " ".join(str(page["purpose"]).split())[:400] or name
    return {
        "kind": "rule" if i % 2 else "memory",
        "name": f"{name}-guidance-{i}",
        "description": purpose,
        "queries": [purpose],
        "keywords": [name],
        "body": f"{str(page['text'])[:1200]}\n(version {version})",
        "oneLiner": f"See {name}.",
    }


def skill_md(i: int, page: dict[str, Any], version: int) -> bytes:
    name = f"skill-{i}"
    description = " ".join(str(page["purpose"]).split())[:300] or name
    body = f"{str(page['text'])[:2000]}\n\nrevision {version}\n"
    return f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n{body}".encode()


def raise_limits(store: Path) -> None:
    for key, value in (("limits.maxEntries", 1_000_000), ("limits.maxBytes", 4 << 30)):
        subprocess.run(
            xbrain("config", key, str(value), "--store", str(store)),
            check=True,
            capture_output=True,
        )


def age(store: Path, scale: float, seed: int) -> dict[str, Any]:
    """The year of writes; what the store holds at the end (for the fresh twin)."""
    n = lambda count: max(1, round(count * scale))  # noqa: E731
    pages = clean_pages(n(5000) + n(200) * 30, 2000)
    rng = random.Random(seed)
    ops: list[str] = (
        ["single"] * n(5000)
        + ["batch"] * n(200)
        + ["skill"] * n(500)
        + ["entry"] * n(2000)
        + ["delete"] * n(300)
    )
    rng.shuffle(ops)
    raise_limits(store)
    api = Store(store)
    live: dict[str, dict[str, Any]] = {}  # resource id → input item
    deleted: set[str] = set()
    entries: dict[int, dict[str, Any]] = {}
    skills: dict[int, list[tuple[bytes, bool]]] = {}  # every revision, in order
    skill_versions: dict[int, int] = {}
    next_page, stamp = 0, 0
    started = time.perf_counter()

    def new_item() -> dict[str, Any]:
        nonlocal next_page, stamp
        item = json.loads(json.dumps(pages[next_page % len(pages)]))
        item["source"]["id"] += f"/aged-{next_page}"
        item["source"]["url"] += f"#aged-{next_page}"
        next_page += 1
        stamp += 1
        item["updatedAt"] = when(stamp)
        return item

    def rid_of(item: dict[str, Any]) -> str:
        return resource_id(item["source"]["provider"], item["source"]["id"])

    for k, op in enumerate(ops):
        if op == "single":
            if live and rng.random() < 1 / 3:  # an update of a resource put before
                rid = rng.choice(sorted(live))
                item = live[rid]
                item["summary"] = f"Revised {k}: {item['summary']}"[:400]
                stamp += 1
                item["updatedAt"] = when(stamp)
            else:
                item = new_item()
            api.put([item])
            live[rid_of(item)] = item
        elif op == "batch":
            items = [new_item() for _ in range(30)]
            api.put(items)
            live.update((rid_of(item), item) for item in items)
        elif op == "delete" and live:
            rid = rng.choice(sorted(live))
            api.delete(rid)
            del live[rid]
            deleted.add(rid)
        elif op == "skill":
            i = rng.randrange(max(1, n(100)))
            version = skill_versions.get(i, 0) + 1
            skill_versions[i] = version
            data = skill_md(i, pages[i], version)
            api.skill_save_files({"SKILL.md": data}, publish=version % 2 == 0)
            skills.setdefault(i, []).append((data, version % 2 == 0))
        elif op == "entry":
            update = entries and rng.random() < 0.25
            i = rng.choice(sorted(entries)) if update else len(entries)
            value = entry(i, pages[i % len(pages)], k)
            api.entry_put([value])
            entries[i] = value
        if k % 500 == 0:
            print(
                f"  aging: {k:,}/{len(ops):,} writes, {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
            )
    return {
        "seconds": time.perf_counter() - started,
        "writes": len(ops),
        "live": live,
        "deleted": deleted,
        "entries": entries,
        "skills": skills,
    }


def load_fresh(store: Path, held: dict[str, Any]) -> float:
    """The same final records in a few commits: live resources and tombstones imported
    in one, entries in batches of 500, each skill's revisions saved in order (so the
    skill holds the same revisions: a save's cost grows with them)."""
    raise_limits(store)
    started = time.perf_counter()
    document = {
        "version": 1,
        "resources": list(held["live"].values()),
        "tombstones": [
            {"id": rid, "deletedAt": "2026-07-01T00:00:00.000Z"} for rid in sorted(held["deleted"])
        ],
        "receipts": {},
    }
    source = store.with_name(store.name + "-import.json")
    source.write_text(json.dumps(document))
    run = xbrain("import-store", str(source), "--store", str(store))
    subprocess.run(run, check=True, capture_output=True)
    api = Store(store)
    values = list(held["entries"].values())
    for first in range(0, len(values), 500):
        api.entry_put(values[first : first + 500])
    for revisions in held["skills"].values():
        for data, published in revisions:
            api.skill_save_files({"SKILL.md": data}, publish=published)
    return time.perf_counter() - started


class Case:
    """One fresh-process command against one store: ``before(i)`` (untimed), its input."""

    def __init__(
        self,
        cmd: list[str],
        before: Callable[[int], None] | None = None,
        stdin: Callable[[int], bytes] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.cmd, self.before, self.stdin, self.env = cmd, before, stdin, env

    def run(self, i: int) -> tuple[float, float, float]:
        """(ms of the command, ms of ``python -c pass`` just before it, CPU ms of the
        command's process: on a shared machine, its cost apart from waiting for a core)."""
        if self.before is not None:
            self.before(i)
        data = b"" if self.stdin is None else self.stdin(i)
        floor = floor_once()
        used = cpu_ms()
        start = time.perf_counter()
        proc = subprocess.run(self.cmd, input=data, capture_output=True, env=self.env)
        took = (time.perf_counter() - start) * 1000
        cpu = cpu_ms() - used
        if proc.returncode != 0 or (self.env is not None and proc.stderr.strip()):
            raise SystemExit(f"benchmark command failed: {self.cmd}\n{proc.stderr.decode()}")
        return took, floor, cpu


def cases(
    store: Path, work: Path, item: dict[str, Any], tag: str, env: dict[str, str]
) -> dict[str, Case]:
    """The measured commands on ``store``; ``env`` is that of its ``xbrain serve``."""
    put_file = work / f"put-{tag}.json"
    skill_dir = work / f"skill-{tag}"
    skill_dir.mkdir(exist_ok=True)

    def newer(month: str) -> Callable[[int], None]:
        def write(i: int) -> None:
            stamp = f"{month}-01T00:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
            put_file.write_text(json.dumps({**item, "updatedAt": stamp}))

        return write

    def revision(prefix: str) -> Callable[[int], None]:
        def write(i: int) -> None:
            text = f"---\nname: skill-0\ndescription: aging bench skill\n---\n{prefix} {i}\n"
            (skill_dir / "SKILL.md").write_text(text)

        return write

    def payload(prefix: str) -> Callable[[int], bytes]:
        def body(i: int) -> bytes:
            start = {"hook_event_name": "UserPromptSubmit", "session_id": f"{prefix}-{tag}-{i}"}
            return json.dumps({**start, "prompt": PROMPT}).encode()

        return body

    fresh_env = {**os.environ, "XBRAIN_STORE": str(store), "XBRAIN_BIN": ""}
    fresh_env.pop("XDG_RUNTIME_DIR", None)
    fresh_env["XDG_RUNTIME_DIR"] = str(work / f"no-serve-{tag}")  # no server answers here
    at = ("--store", str(store))
    return {
        "put 1 (update)": Case(console("put", str(put_file), *at), newer("2027-02")),
        "search English": Case(xbrain("search", PROMPT, *at)),
        "recall English": Case(xbrain("recall", "-", *at), stdin=lambda i: PROMPT.encode()),
        "skill save (new revision)": Case(
            console("skill", "save", str(skill_dir), *at), revision("fresh")
        ),
        "hook English": Case(console("hook", "claude-code"), stdin=payload("h"), env=fresh_env),
        "hook via serve": Case(console("hook", "claude-code"), stdin=payload("s"), env=env),
        "put 1 via serve": Case(console("put", str(put_file)), newer("2027-03"), env=env),
        "skill save via serve": Case(
            console("skill", "save", str(skill_dir)), revision("served"), env=env
        ),
    }


def serve(store: Path, work: Path, tag: str) -> tuple[dict[str, str], int]:
    runtime = Path(tempfile.mkdtemp(prefix=f"xba{tag}", dir="/tmp"))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XBRAIN_STORE": str(store)}
    started = subprocess.run(
        xbrain("serve", "--detach", "--idle", "1800"), env=env, capture_output=True, check=True
    )
    return env, int(json.loads(started.stdout)["pid"])


def stop(env: dict[str, str], pid: int) -> None:
    subprocess.run(xbrain("serve", "--stop"), env=env, capture_output=True)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 9)
    shutil.rmtree(env["XDG_RUNTIME_DIR"], ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7, help="runs per case (median reported)")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of every count")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument(
        "--keep", type=Path, help="build the stores in this (new) folder and keep them (to profile)"
    )
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.keep is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="xbrain-aging-")))
        else:
            args.keep.mkdir(parents=True)
            root = args.keep.resolve()
        os.environ["XBRAIN_CACHE_DIR"] = str(root / "cache")
        aged, fresh = root / "aged", root / "fresh"
        held = age(aged, args.scale, args.seed)
        print(f"  aged: {held['writes']:,} writes in {held['seconds']:.0f} s", file=sys.stderr)
        loaded = load_fresh(fresh, held)
        for path in (aged, fresh):  # a detached pack merge never runs beside a measure
            wait_for_upkeep(path)
        item = next(iter(held["live"].values()))
        stores = {"aged": aged, "fresh": fresh}
        servers = {tag: serve(path, root, tag) for tag, path in stores.items()}
        try:
            by_store = {
                tag: cases(path, root, item, tag, servers[tag][0]) for tag, path in stores.items()
            }
            results: dict[str, dict[str, list[tuple[float, float, float]]]] = {}
            for label in by_store["aged"]:
                for tag in stores:  # one untimed warm-up each (indexes caught up)
                    by_store[tag][label].run(0)
                for i in range(args.runs):
                    for tag in stores:
                        sample = by_store[tag][label].run(i + 1)
                        results.setdefault(label, {}).setdefault(tag, []).append(sample)
        finally:
            for env, pid in servers.values():
                stop(env, pid)
        sizes = {tag: (*git_report(path), records_bytes(path)) for tag, path in stores.items()}

    print(
        f"xbrain aging bench: median of {args.runs} fresh-process runs (aged and fresh "
        f"alternating), python {sys.version.split()[0]}, {os.cpu_count()} cores, "
        f"scale {args.scale}"
    )
    print(
        f"aged store: {held['writes']:,} writes in {held['seconds']:.0f} s "
        f"({len(held['live']):,} live resources, {len(held['deleted']):,} deleted, "
        f"{len(held['entries']):,} entries, {len(held['skills']):,} skills); "
        f"fresh store: the same records loaded in {loaded:.0f} s"
    )
    for tag in stores:
        packs, objects, derived, held_bytes = sizes[tag]
        print(
            f"{tag}: {packs} packs, .git {objects / 1e6:.1f} MB without .git/xbrain, "
            f"{objects / held_bytes:.1f}x the {held_bytes / 1e6:.1f} MB of records "
            f"(target about 2x; derived data: {derived / 1e6:.1f} MB)"
        )
    print()
    header = ("case", "aged ms", "fresh ms", "aged x floor", "fresh x floor", "aged/fresh")
    print(
        "| {:<26} | {:>8} | {:>8} | {:>12} | {:>13} | {:>10} | {:>14} |".format(
            *header, "CPU aged/fresh"
        )
    )
    print(f"|{'-' * 28}|{'-' * 10}|{'-' * 10}|{'-' * 14}|{'-' * 15}|{'-' * 12}|{'-' * 16}|")
    for label, per in results.items():
        picks = [(tag, k) for k in range(3) for tag in ("aged", "fresh")]
        a, f, af, ff, ac, fc = (statistics.median(s[k] for s in per[tag]) for tag, k in picks)
        mark = "" if a <= 1.2 * f else " !"
        print(
            f"| {label:<26} | {a:8.1f} | {f:8.1f} | {a / af:12.1f} | {f / ff:13.1f} "
            f"| {a / f:8.2f}{mark:<2} | {ac / max(fc, 0.1):14.2f} |"
        )
    print(
        "\ntarget: aged/fresh ≤ 1.2 (! marks a figure above it); CPU: user + system time of "
        "the command's own process (through serve: the client's only), the same ratio apart "
        "from waiting for a core on a shared machine"
    )


if __name__ == "__main__":
    main()
