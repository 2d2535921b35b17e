"""Byte for byte, the answers of ``xbrain recall`` and ``xbrain search`` over a personal
store beside a team layer (issue 47): fresh and through ``xbrain serve``, with and without
the team, English and Chinese prompts. Run it once per tree and compare the files:

    python bench/team_same.py --root DIR --out before.json   # PYTHONPATH=<base tree>
    python bench/team_same.py --root DIR --out after.json    # this tree
    python bench/team_same.py --compare before.json after.json

``DIR`` holds ``personal`` and ``teams`` (``--build``: made there first, as
``bench/team_layers.py`` makes them). The prompts are drawn (seeded) from the team's own
text, so they reach it: every command's stdout is kept as it was printed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import PY, console, xbrain

CJK = re.compile(r"[\u4e00-\u9fff]{2,}")


def prompts(root: Path, count: int) -> list[str]:
    """``count`` prompts, half English (a few words of a page's purpose or text), half
    Chinese (runs of a page's Chinese text), and the two of the benchmark."""
    pages = json.loads((root / "team.json").read_text())["resources"]
    chance = random.Random(47)
    english: list[str] = []
    chinese: list[str] = []
    for page in pages:
        text = f"{page.get('purpose', '')} {page.get('text', '')}"
        english += [w for w in re.findall(r"[a-z]{3,}", text.lower())[:40]]
        chinese += CJK.findall(text)[:20]
    found = ["list directory contents sorted by time", "列出目录内容并按时间排序"]
    for n in range(count - 2):
        if n % 2 or not chinese:
            found.append(" ".join(chance.sample(english, chance.randint(1, 7))))
        else:
            found.append("".join(chance.sample(chinese, chance.randint(1, 3)))[:40])
    return found


def commands(prompt: str) -> list[tuple[list[str], bytes]]:
    return [(["recall", "-"], prompt.encode()), (["search", prompt, "--limit", "10"], b"")]


def answers(root: Path, asked: list[str], teams: Path, served: bool) -> list[str]:
    """Every prompt's stdout of each command, fresh or through a server."""
    env = {
        **os.environ,
        "XBRAIN_STORE": str(root / "personal"),
        "XBRAIN_TEAMS_DIR": str(teams),
        "XBRAIN_CACHE_DIR": str(root / "cache"),
    }
    runtime = Path(tempfile.mkdtemp(prefix="xbr", dir="/tmp"))
    env["XDG_RUNTIME_DIR"] = str(runtime)
    pid = None
    if served:
        started = subprocess.run(
            xbrain("serve", "--detach", "--idle", "600"), env=env, capture_output=True, check=True
        )
        pid = json.loads(started.stdout)["pid"]
    out: list[str] = []
    try:
        for n, prompt in enumerate(asked):
            for args, data in commands(prompt):
                run = console(*args) if served else xbrain(*args)
                done = subprocess.run(run, input=data, env=env, capture_output=True)
                out.append(f"{done.returncode} {done.stdout.decode()}")
            if served and n == 0:
                time.sleep(2)  # the team's postings are read while no request waits
    finally:
        if served:
            subprocess.run(xbrain("serve", "--stop"), env=env, capture_output=True)
            with contextlib.suppress(ProcessLookupError, TypeError):
                os.kill(pid, 9)  # type: ignore[arg-type]
        shutil.rmtree(runtime, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--prompts", type=int, default=300)
    parser.add_argument("--build", action="store_true")
    parser.add_argument("--compare", nargs=2, type=Path)
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(path.read_text()) for path in args.compare)
        for case in before:
            differ = [
                i for i, (a, b) in enumerate(zip(before[case], after[case], strict=True)) if a != b
            ]
            size = len(before[case])
            print(f"{case}: {size - len(differ)} of {size} answers the same; differ: {differ[:10]}")
        return
    if args.build:
        from team_layers import personal_store, team_store

        os.environ["XBRAIN_CACHE_DIR"] = str(args.root / "cache")
        personal_store(args.root)
        team_store(args.root, 10_000, 1_000)
    asked = prompts(args.root, args.prompts)
    found = {}
    for label, teams in (("alone", args.root / "no-teams"), ("team", args.root / "teams")):
        for served in (False, True):
            found[f"{label} {'served' if served else 'fresh'}"] = answers(
                args.root, asked, teams, served
            )
    args.out.write_text(json.dumps(found))
    print(f"{len(asked)} prompts, {sum(len(v) for v in found.values())} answers: {PY}")


if __name__ == "__main__":
    main()
