"""Fresh-process latency with semantic recall on, the server started without asking
(issue 43 item 6), as ratios to ``python -c pass`` timed just before each run.

A store of ``--resources`` manual-page sections plus the memex example's entries and a
skill, semantic recall on with the packaged model (else ``--provider``). Rows:

* ``recall, semantic on, first call`` — no server: it answers lexically (warming) and
  starts one;
* ``recall, semantic on, later calls`` — through the auto-started server (target ≤ 6x);
* ``search, semantic on, later calls`` and ``skill recall, semantic on, later calls``;
* ``hook via the auto-started server`` (target ≤ 3x);
* ``search, lexical store`` — a store without semantic recall, no server (target ≤ 6x).

Run ``python bench/autoserve.py [--runs N] [--resources N]``; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import SEARCHES, console, floor_once, make_store, man_resources, timed, xbrain

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "can I git push --force to main? and how do I list a directory sorted by time"


def _stock(store: Path, env: dict[str, str], provider: str | None) -> None:
    for args in (
        ("entry", "import", str(ROOT / "examples" / "memex")),
        ("skill", "save", str(ROOT / "examples" / "skills" / "deploy-check"), "--publish"),
    ):
        subprocess.run(xbrain(*args, "--store", str(store)), check=True, env=env, stdout=-3)
    if provider is not None:
        chosen = ["--provider", provider] if provider != "packaged" else []
        reindex = xbrain("reindex", "--semantic", *chosen, "--store", str(store))
        subprocess.run(reindex, check=True, env=env, stdout=-3)


def _row(label: str, samples: list[float], target: str) -> str:
    floors = getattr(samples, "floors", None) or [floor_once()]
    ratio = statistics.median(samples) / statistics.median(floors)
    return f"| {label} | {statistics.median(samples):.0f} | {ratio:.1f}x | {target} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--resources", type=int, default=1000)
    parser.add_argument("--provider", default="packaged")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xb-autoserve-") as tmp:
        root = Path(tmp)
        runtime = root / "run"
        runtime.mkdir(mode=0o700)
        env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
        env.pop("XBRAIN_SERVE_AUTO", None)
        # sections that show a URL with a user and password are left out (the secret scan
        # refuses them, as it should)
        items = [
            item
            for item in man_resources(args.resources, 4000)
            if not re.search(r"://[^/\s]*:[^/\s]*@", json.dumps(item))
        ]
        semantic, _ = make_store(root, "search-semantic", items)
        lexical, _ = make_store(root, "search-lexical", items)
        _stock(semantic, env, args.provider)
        _stock(lexical, env, None)
        rows: list[str] = []
        at = {**env, "XBRAIN_STORE": str(semantic)}
        prompt = PROMPT.encode()
        first = timed(console("recall", "-"), 1, env=at, stdin=lambda i: prompt)
        rows.append(_row("recall, semantic on, first call (no server)", first, ""))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the server loads the model meanwhile
            said = subprocess.run(console("recall", "-"), input=prompt, capture_output=True, env=at)
            if "retrieval" not in json.loads(said.stdout):  # answered through the server
                break
            time.sleep(0.2)
        recall = timed(console("recall", "-"), args.runs, env=at, stdin=lambda i: prompt)
        rows.append(_row("recall, semantic on, later calls (via server)", recall, "≤ 6x"))
        query = SEARCHES[0][1]
        search = timed(console("search", query), args.runs, env=at)
        rows.append(_row("search, semantic on, later calls (via server)", search, "≤ 6x"))
        level0 = timed(console("skill", "recall", "deploy database"), args.runs, env=at)
        rows.append(_row("skill recall, semantic on, later calls (via server)", level0, ""))

        def payload(i: int) -> bytes:
            body = {"hook_event_name": "UserPromptSubmit", "session_id": f"b-{i}"}
            return json.dumps({**body, "prompt": PROMPT, "cwd": tmp}).encode()

        hook = timed(console("hook", "claude-code"), args.runs, env=at, stdin=payload)
        rows.append(_row("hook via the auto-started server", hook, "≤ 3x"))
        plain = {**env, "XBRAIN_STORE": str(lexical)}
        subprocess.run(console("search", query), env=plain, capture_output=True, check=True)
        lexical_search = timed(console("search", query), args.runs, env=plain)
        rows.append(_row("search, lexical store (no server)", lexical_search, "≤ 6x"))
        subprocess.run(xbrain("serve", "--stop"), env=at, capture_output=True)
    print(f"{args.resources} resources + memex entries + 1 skill; provider {args.provider}\n")
    print("| case | median ms | vs python -c pass | target |\n|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
