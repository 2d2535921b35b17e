"""Where the time of one fresh-process `put` goes.

Each run is a new Python process that imports what a put imports, step by step, then
puts one newer version of a resource into a 10,000-resource store, with timers around
the core's steps (transaction, commit, working tree, the after-commit hooks). Beside it,
in the same loop: ``python -c pass`` (the floor), a process that only imports dulwich's
object, object-store and repository modules, and the least a put written through dulwich
can cost: a process that, with dulwich alone, commits one changed file into a copy of the
store (read the head, the changed blob and trees, write them, the commit, move ``main``:
no checks, YAML, fsyncs, working tree or index), also with the imports of xbrain's other
libraries for a write (ruamel.yaml's C loader, sqlite3, json, and the C modules a put
loads besides: PyStemmer, unicodedata, _socket, contextvars; then a put loads no module
outside xbrain that this process does not). Printed: the median of
each step over the runs, in ms and as a share of the floor.

Then the two writes the team judges against that bare commit (≤ 1.6× it, measured in
the same loop): the ``xbrain`` console script's ``put FILE`` (an update of another
resource) and ``skill save DIR`` (a new revision of one skill), each a whole process.

Run ``python bench/put_timeline.py [--runs 9] [--store PATH]`` (without ``--store``, a
throwaway store of 10,000 resources is imported first, about 10 s).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import PY, console, floor_once, make_store, new_revision, resource
from suite import table

# The child: timestamps after each import and around the core's steps, one line each.
CHILD = """
import gc
gc.disable()  # as xbrain.launch.main runs a put
import time, sys, json
T0 = time.perf_counter()
marks = []
def mark(name):
    marks.append((name, time.perf_counter()))
import importlib
for name in ("dulwich.objects", "dulwich.object_store", "dulwich.repo", "xbrain.git",
             "xbrain.core", "xbrain.kinds", "xbrain.store"):
    importlib.import_module(name)
    mark("import " + name)
from xbrain.git import GitStore
from xbrain.core.base import Core
def around(cls, name, label):
    plain = getattr(cls, name)
    def timed(*args, **kwargs):
        result = plain(*args, **kwargs)
        mark(label)
        return result
    setattr(cls, name, timed)
around(GitStore, "check_worktree_paths", "the record and its checks")
around(GitStore, "commit", "commit (objects, ref, fsyncs)")
around(GitStore, "refresh_worktree", "working tree and git index")
begin = Core.begin
def begun(git, command):
    result = begin(git, command)
    mark("open the transaction (config, first YAML)")
    return result
Core.begin = staticmethod(begun)
from xbrain.store import Store
store = Store(sys.argv[1])
store.core.after_commit = [
    (lambda hook: lambda *args: (hook(*args), mark("after-commit hooks (search index)")))(h)
    for h in store.core.after_commit
]
item = json.loads(sys.argv[2])
mark("open the store, read the input")
store.put([item])
mark("rest of the put")
previous = T0
for name, at in marks:
    print(json.dumps([name, (at - previous) * 1000]))
    previous = at
print(json.dumps(["total in the process", (previous - T0) * 1000]))
import os
gc.freeze()  # as xbrain.launch.main ends a command
sys.stdout.flush()
os._exit(0)  # as a put's process ends (xbrain.launch: once its files are closed)
"""

# The least a commit of one changed file through dulwich costs: no xbrain at all.
BARE = """
import sys, time
if sys.argv[3] == "libraries":
    import json, sqlite3, ruamel.yaml.cyaml, Stemmer, unicodedata, _socket, contextvars
from dulwich.objects import Blob, Commit
from dulwich.repo import Repo
repo = Repo(sys.argv[1])
store = repo.object_store
head = repo.refs[b"refs/heads/main"]
names = sys.argv[2].encode().split(b"/")
trees = [store[store[head].tree]]
for name in names[:-1]:
    trees.append(store[trees[-1][name][1]])
note = b"# " + sys.argv[4].encode() + b"\\n"  # a YAML comment: the record still reads
blob = Blob.from_string(store[trees[-1][names[-1]][1]].data + note)
store.add_object(blob)
sha = blob.id
for tree, name in zip(reversed(trees), reversed(names)):
    tree[name] = (tree[name][0], sha)
    store.add_object(tree)
    sha = tree.id
commit = Commit()
commit.tree, commit.parents = sha, [head]
commit.author = commit.committer = b"bench <bench@example.com>"
commit.author_time = commit.commit_time = int(time.time())
commit.author_timezone = commit.commit_timezone = 0
commit.message = b"bench: one changed file"
store.add_object(commit)
assert repo.refs.set_if_equals(b"refs/heads/main", head, commit.id)
import gc
gc.freeze()  # as xbrain.launch.main ends a command
"""


def once(cmd: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"a run failed:\n{proc.stderr}")
    return (time.perf_counter() - start) * 1000, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--store", type=Path, help="a store holding resource 7 of bench/run.py, updated before now"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xbrain-put-timeline-") as tmp:
        store = args.store
        if store is None:
            store, _ = make_store(Path(tmp), "store-10k", [resource(i) for i in range(10_000)])
        bare = Path(tmp) / "bare-copy"
        shutil.copytree(store, bare)
        changed = next((bare / "resources").rglob("*.yaml")).relative_to(bare).as_posix()
        floor, dulwich, whole = [], [], []
        commits: dict[str, list[float]] = {"dulwich": [], "libraries": []}
        steps: dict[str, list[float]] = {}
        stamp = int(time.time())
        writes: dict[str, list[float]] = {"put": [], "skill save": []}
        item_file, skill = Path(tmp) / "put.json", Path(tmp) / "bench-skill"
        skill.mkdir()
        edit = new_revision(skill, "bench-skill")
        edit(-1)
        once(console("skill", "save", str(skill), "--store", str(store)))  # its first save
        for i in range(args.runs):
            floor.append(floor_once())
            imports = "import dulwich.objects, dulwich.object_store, dulwich.repo"
            dulwich.append(once([PY, "-c", imports])[0])
            for how, samples in commits.items():
                samples.append(once([PY, "-c", BARE, str(bare), changed, how, f"{how}{i}"])[0])
            moment = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(stamp + i + 1))
            item = json.dumps(resource(7, moment))
            elapsed, out = once([PY, "-c", CHILD, str(store), item])
            whole.append(elapsed)
            item_file.write_text(json.dumps(resource(8, moment)))
            put = console("put", str(item_file), "--store", str(store))
            writes["put"].append(once(put)[0])
            edit(i)
            save = console("skill", "save", str(skill), "--store", str(store))
            writes["skill save"].append(once(save)[0])
            seen: list[str] = []
            for line in out.splitlines():
                name, ms = json.loads(line)
                seen.append(name)
                count = seen.count(name)
                steps.setdefault(name if count == 1 else f"{name} ({count})", []).append(ms)
    base = statistics.median(floor)
    rows = [
        ("python -c pass (floor)", base),
        ("import dulwich alone (a process)", statistics.median(dulwich)),
        (
            "one file committed with dulwich alone (a process)",
            statistics.median(commits["dulwich"]),
        ),
        (
            "  the same, with the libraries a put loads (ruamel.yaml, sqlite3, json, …)",
            statistics.median(commits["libraries"]),
        ),
        ("put, the whole process", statistics.median(whole)),
    ]
    rows += [(f"  {name}", statistics.median(ms)) for name, ms in steps.items()]
    outside = statistics.median(whole) - statistics.median(steps["total in the process"])
    rows.append(("  Python's start and shutdown (the difference)", outside))
    bare = statistics.median(commits["libraries"])
    rows += [
        (f"xbrain {name} (the console script, a process)", statistics.median(ms))
        for name, ms in writes.items()
    ]
    print(f"one fresh put into a 10,000-resource store, median of {args.runs} runs\n")
    shown = [(name, f"{ms:.1f}", f"{ms / base:.2f}") for name, ms in rows]
    print(table(shown, ("step", "ms", "x floor")))
    print("\nagainst the bare dulwich commit with the libraries (the team's bar: ≤ 1.6x)\n")
    judged = [("put, the whole process (in-process steps above)", statistics.median(whole))]
    judged += [(f"xbrain {name}", statistics.median(ms)) for name, ms in writes.items()]
    print(
        table([(n, f"{ms:.1f}", f"{ms / bare:.2f}") for n, ms in judged], ("write", "ms", "x bare"))
    )


if __name__ == "__main__":
    main()
