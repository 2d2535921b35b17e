"""What a team layer costs a prompt (issue 47): ``xbrain recall`` in a fresh process and
through ``xbrain serve``, on a personal store alone and beside a team store of 10,000
resources and 1,000 published skills (manual-page text, as ``bench/run.py`` builds).

Targets: a fresh recall with the team layer ≤ 1.5x the same recall without it; through
``xbrain serve`` ≤ 1.2x (beside it, the server's own CPU time per recall, and its
resident memory after them, alone / with the team). Run with ``python
bench/team_layers.py [--runs N] [--resources N] [--skills N] [--history N]`` (``make
bench`` runs it). Nothing here is asserted.

A second table: ``xbrain team pull`` of one new commit on a team whose history has
``--history`` commits (2,000; a reviewer's and a non-reviewer's in turn, each adding one
resource, written with real ``git fast-import``), beside ``xbrain team add`` of it (the
first audit of the whole history) and ``python -c pass`` in the same run. ``--history 0``
leaves it out; ``--history-only`` leaves the recall table out.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import console, man_resources, timed, xbrain

from xbrain.errors import InvalidInputError
from xbrain.store import Store

PROMPTS = (
    ("English", "list directory contents sorted by time"),
    ("Chinese", "列出目录内容并按时间排序"),
)


def make_store(root: Path, name: str, items: list[dict[str, object]]) -> Path:
    """A store of ``items`` in one import-store commit (limits raised; manual pages may
    quote a URL with a user name, which the secret scan would stop)."""
    source = root / f"{name}.json"
    document = {"version": 1, "resources": items, "tombstones": [], "receipts": {}}
    source.write_text(json.dumps(document))
    store = root / name
    for key, value in (("limits.maxEntries", 1_000_000), ("limits.maxBytes", 4 << 30)):
        config = xbrain("config", key, str(value), "--store", str(store))
        subprocess.run(config, check=True, capture_output=True)
    allowed = [arg for detector in ("basic-auth",) for arg in ("--allow-secret", detector)]
    run = xbrain("import-store", str(source), "--store", str(store), *allowed)
    subprocess.run(run, check=True, capture_output=True)
    return store


def team_store(root: Path, resources: int, skills: int) -> tuple[Path, float]:
    """``teams/bench``: a team store of manual pages and published skills (seconds)."""
    started = time.perf_counter()
    pages = man_resources(resources, 4000)
    store = make_store(root, "team", pages)
    teams = root / "teams"
    teams.mkdir()
    target = teams / "bench"
    shutil.move(str(store), target)
    bench = Store(target)
    bench.set_telemetry(False)  # as xbrain team add leaves a team's clone
    seen: set[str] = set()
    for item in pages:
        if len(seen) >= skills:
            break
        command = str(item["title"]).split(":", 1)[0]
        slug = re.sub(r"[^a-z0-9]+", "-", command.lower())[:50].strip("-")
        description = " ".join(str(item["purpose"]).split())[:1000]
        if not slug or slug in seen or not description:
            continue
        name = f"team-{slug}"
        skill_md = f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n"
        skill_md += str(item["text"])[:4000] + "\n"
        try:
            bench.skill_save_files({"SKILL.md": skill_md.encode()}, publish=True)
        except InvalidInputError:  # a page quoting a URL with credentials: the scan says no
            continue
        seen.add(slug)
    subprocess.run(xbrain("reindex", "--store", str(target)), check=True, capture_output=True)
    return teams, time.perf_counter() - started


def personal_store(root: Path) -> Path:
    """A personal store of 1,000 manual pages and the memex example's entries."""
    store = make_store(root, "personal", man_resources(1000, 4000))
    examples = Path(__file__).resolve().parent.parent / "examples" / "memex"
    subprocess.run(
        xbrain("entry", "import", str(examples), "--store", str(store)),
        check=True,
        capture_output=True,
    )
    return store


def server_seconds(pid: int) -> float:
    """The CPU time the process ``pid`` has run (Linux: its scheduler's count), else 0."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def resident_mb(pid: int) -> float:
    """The resident memory of the process ``pid`` in MB (Linux), else 0."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Served(list[float]):
    """Served recalls' wall times (ms), with the server's CPU time of each (ms) and its
    resident memory after them (MB)."""

    cpu: list[float]
    rss: float


def serve_samples(store: Path, env: dict[str, str], runs: int, prompt: str) -> Served:
    """``xbrain recall -`` answered by a running ``xbrain serve`` started with ``env``.
    Two recalls first, a second apart: a team layer's postings are read into memory
    once no request waits after the first (``search/inmemory.py``)."""
    runtime = Path(tempfile.mkdtemp(prefix="xbr", dir="/tmp"))
    env = {**env, "XDG_RUNTIME_DIR": str(runtime), "XBRAIN_STORE": str(store)}
    started = subprocess.run(
        xbrain("serve", "--detach", "--idle", "600"), env=env, capture_output=True, check=True
    )
    pid = json.loads(started.stdout)["pid"]
    try:
        command = console("recall", "-")
        for _ in range(2):  # warm
            subprocess.run(command, input=prompt.encode(), env=env, capture_output=True)
            time.sleep(1)
        marks: list[float] = []
        found = Served(
            timed(
                command,
                runs,
                before=lambda _: marks.append(server_seconds(pid)),
                env=env,
                stdin=lambda _: prompt.encode(),
            )
        )
        marks.append(server_seconds(pid))
        found.cpu = [(b - a) * 1000 for a, b in itertools.pairwise(marks)]
        found.rss = resident_mb(pid)
        return found
    finally:
        subprocess.run(xbrain("serve", "--stop"), env=env, capture_output=True)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
        shutil.rmtree(runtime, ignore_errors=True)


def team_results(command: list[str], env: dict[str, str], prompt: str) -> str:
    """How many of the recall's results come from the team, of how many: the team's
    records must really be reachable by the prompt, or its cost is not measured."""
    done = subprocess.run(command, input=prompt.encode(), env=env, capture_output=True)
    results = json.loads(done.stdout)["results"]
    team = [r for r in results if str(r.get("layer", "")).startswith("team:")]
    return f"{len(team)} of {len(results)} results"


PEOPLE = ("Rita <rita@example.org>", "Bob <bob@example.org>")  # a reviewer; not one


class History:
    """A bare team repository of ``commits`` commits (written with ``git fast-import``,
    then made whole by one ``xbrain`` commit: the catalog the imported commits left
    behind), and a member's store that adds one more with ``put`` and ``remote push``."""

    def __init__(self, root: Path, commits: int, extra: int) -> None:
        self.root, self.bare, self.moment = root, root / "history.git", 1_700_000_000
        source = make_store(root, "history-source", man_resources(commits + extra, 600))
        self.files = sorted(source.glob("resources/*/*.yaml"))
        self.items = json.loads((root / "history-source.json").read_text())["resources"]
        maker = root / "history-maker"
        for key, value in (
            ("identity.name", "Rita"),
            ("identity.email", "rita@example.org"),
            ("team.reviewers", PEOPLE[0]),
        ):
            self.run("config", key, value, "--store", str(maker))
        subprocess.run(["git", "init", "-q", "--bare", str(self.bare)], check=True)
        git = ["git", "--git-dir", str(maker / ".git"), "push", "-q", str(self.bare)]
        subprocess.run([*git, "main:refs/heads/main"], check=True)
        self.next = 0
        self.fast_import(commits)
        self.member = root / "history-member"
        self.run("clone", str(self.bare), str(self.member))  # re-derives the catalog
        self.run("remote", "push", "--store", str(self.member))

    def run(self, *args: str) -> None:
        subprocess.run(xbrain(*args), check=True, capture_output=True)

    def fast_import(self, count: int) -> None:
        """``count`` more commits on ``main``, each adding one resource file."""
        stream = bytearray()
        for n in range(count):
            path = self.files[self.next]
            who = PEOPLE[self.next % 2]
            self.next, self.moment = self.next + 1, self.moment + 60
            message = f"put {path.stem[:20]}".encode()
            data = path.read_bytes()
            stream += f"commit refs/heads/main\nauthor {who} {self.moment} +0000\n".encode()
            stream += f"committer {who} {self.moment} +0000\n".encode()
            stream += b"data %d\n%s\n" % (len(message), message)
            if n == 0:
                stream += b"from refs/heads/main^0\n"
            rel = path.relative_to(path.parents[2]).as_posix()
            stream += f"M 100644 inline {rel}\ndata {len(data)}\n".encode() + data + b"\n"
        command = ["git", "--git-dir", str(self.bare), "fast-import", "--quiet"]
        subprocess.run(command, input=bytes(stream), check=True)

    def add(self, _: int = 0) -> None:
        """One more commit, as a member makes it: a put, pushed."""
        item = self.root / "history-next.json"
        fresh = json.loads(json.dumps(self.items[self.next % len(self.items)]))
        fresh["source"]["id"] += f"/history-run-{self.next}"  # a new resource each time
        item.write_text(json.dumps(fresh))
        self.next += 1
        self.run("put", str(item), "--store", str(self.member))
        self.run("remote", "push", "--store", str(self.member))


def history_rows(root: Path, commits: int, runs: int) -> list[tuple[str, float, float]]:
    """(case, median ms, median floor ms): ``team add`` of a team of ``commits`` commits,
    then ``team pull`` of one new commit each run."""
    history = History(root, commits, runs + 2)
    env = {**os.environ, "XBRAIN_TEAMS_DIR": str(root / "history-teams")}
    add = xbrain("team", "add", "hist", str(history.bare))
    added = timed(add, 1, env=env)
    pull = xbrain("team", "pull", "hist")
    pulled = timed(pull, runs, before=history.add, env=env)
    return [
        (f"team add ({commits:,} commits)", added[0], added.floors[0]),
        ("team pull (1 new commit)", statistics.median(pulled), statistics.median(pulled.floors)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--resources", type=int, default=10_000)
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--history", type=int, default=2000)
    parser.add_argument("--history-only", action="store_true")
    args = parser.parse_args()
    if args.history:
        with tempfile.TemporaryDirectory(prefix="xbrain-team-history-") as tmp:
            found = history_rows(Path(tmp), args.history, args.runs)
        print(f"team history audit: median of {args.runs} runs (team add: one run)")
        print()
        print(f"| {'case':<28} | {'ms':>9} | {'floor ms':>9} | {'ratio':>6} |")
        print(f"|{'-' * 30}|{'-' * 11}|{'-' * 11}|{'-' * 8}|")
        for name, ms, floor in found:
            print(f"| {name:<28} | {ms:9.1f} | {floor:9.1f} | {ms / floor:6.1f} |")
        print()
    if args.history_only:
        return
    rows: list[tuple[str, float, float, str]] = []
    reached: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="xbrain-team-bench-") as tmp:
        root = Path(tmp)
        os.environ["XBRAIN_CACHE_DIR"] = str(root / "cache")
        personal = personal_store(root)
        teams, built = team_store(root, args.resources, args.skills)
        alone = {**os.environ, "XBRAIN_TEAMS_DIR": str(root / "no-teams")}
        layered = {**os.environ, "XBRAIN_TEAMS_DIR": str(teams)}
        for label, prompt in PROMPTS:
            command = xbrain("recall", "-", "--store", str(personal))
            for env in (alone, layered):  # the first recall catches the indexes up
                subprocess.run(command, input=prompt.encode(), env=env, capture_output=True)
            reached[label] = team_results(command, layered, prompt)
            without = timed(command, args.runs, env=alone, stdin=lambda _, p=prompt: p.encode())
            with_team = timed(command, args.runs, env=layered, stdin=lambda _, p=prompt: p.encode())
            rows.append(
                (
                    f"recall {label}",
                    statistics.median(without),
                    statistics.median(with_team),
                    "≤ 1.5x",
                )
            )
            served = serve_samples(personal, alone, args.runs, prompt)
            served_team = serve_samples(personal, layered, args.runs, prompt)
            rows.append(
                (
                    f"recall {label} via serve",
                    statistics.median(served),
                    statistics.median(served_team),
                    "≤ 1.2x",
                )
            )
            rows.append(
                (
                    f"  server CPU ms ({served.rss:.0f}/{served_team.rss:.0f} MB)",
                    statistics.median(served.cpu),
                    statistics.median(served_team.cpu),
                    "",
                )
            )
    print(
        f"team layer cost: median of {args.runs} runs; a team of {args.resources:,} "
        f"resources and {args.skills:,} skills built in {built:.0f} s; personal store: "
        "1,000 resources and the memex entries; what the team adds to each answer: "
        + "; ".join(f"{label} {shown}" for label, shown in reached.items())
    )
    print()
    print(f"| {'case':<28} | {'alone ms':>9} | {'+team ms':>9} | {'ratio':>6} | target |")
    print(f"|{'-' * 30}|{'-' * 11}|{'-' * 11}|{'-' * 8}|{'-' * 8}|")
    for name, alone_ms, team_ms, target in rows:
        print(
            f"| {name:<28} | {alone_ms:9.1f} | {team_ms:9.1f} | {team_ms / alone_ms:6.2f} "
            f"| {target:<6} |"
        )


if __name__ == "__main__":
    main()
