#!/usr/bin/env python3
"""A mock xstash.memory.v1 command adapter: a reviewed template for real adapters.

xbrain starts it once per operation, writes one JSON request line to stdin and reads one
JSON document from stdout. This mock keeps its "remote" in a local JSON file
(``--data PATH``), keyed by (namespace, id), so every operation is idempotent:

  upsert  {"protocol","namespace","operation":"upsert","id","revision","resource"}
  delete  {"protocol","namespace","operation":"delete","id","revision"}
  search  {"protocol","namespace","operation":"search","query","limit"}

It acknowledges a mutation only after the data is safely written, echoing the exact id
and revision; it answers a search with at most ``limit`` (≤ 50) resources. Anything
unexpected gets ``{"protocol": ..., "ok": false, "code": ...}`` and exit status 0, or a
non-zero exit: either way xbrain confirms nothing. Diagnostics go to stderr, which
xbrain drains and never shows. Credentials, if a real adapter needs them, come from its
own keychain or environment — never from the xbrain config.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

PROTOCOL = "xstash.memory.v1"


def load(path: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return data


def save(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, ensure_ascii=False, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)  # the acknowledgement below is sent only after this


def matches(resource: dict[str, Any], query: str) -> bool:
    haystack = " ".join(
        [
            resource["title"],
            resource["purpose"],
            resource["summary"],
            resource["text"],
            *resource["useWhen"],
        ]
    ).lower()
    words = [word for word in query.lower().split() if word]
    return bool(words) and all(word in haystack for word in words)


def handle(request: dict[str, Any], path: Path) -> dict[str, Any]:
    if request.get("protocol") != PROTOCOL or not isinstance(request.get("namespace"), str):
        return {"protocol": PROTOCOL, "ok": False, "code": "invalid_request"}
    data = load(path)
    space = data.setdefault(request["namespace"], {})
    operation = request.get("operation")
    if operation in ("upsert", "delete"):
        if operation == "upsert":
            space[request["id"]] = {
                "revision": request["revision"],
                "resource": request["resource"],
            }
        else:
            space.pop(request["id"], None)
        save(path, data)
        # the confirmation echoes exactly the id and revision it stored
        return {
            "protocol": PROTOCOL,
            "ok": True,
            "id": request["id"],
            "revision": request["revision"],
        }
    if operation == "search":
        limit = max(1, min(50, int(request.get("limit", 5))))
        found = [
            entry["resource"]
            for entry in space.values()
            if matches(entry["resource"], request.get("query", ""))
        ]
        return {"protocol": PROTOCOL, "ok": True, "resources": found[:limit]}
    return {"protocol": PROTOCOL, "ok": False, "code": "unsupported_operation"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, type=Path, help="the mock remote's JSON file")
    args = parser.parse_args()
    try:
        request = json.loads(sys.stdin.readline())
    except ValueError:
        print("request is not JSON", file=sys.stderr)
        return 2
    reply = handle(request, args.data)
    sys.stdout.write(json.dumps(reply, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
