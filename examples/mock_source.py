#!/usr/bin/env python3
"""A mock xstash.source.v1 adapter: serves a JSON list of items in cursor pages.

xbrain runs it once per page with one JSON request line on stdin:

  {"operation":"fetch","provider":P,"account":A,"cursor":C,"checkpoint":K,"limit":100,
   "protocol":"xstash.source.v1"}

and expects one JSON document on stdout:

  {"protocol":"xstash.source.v1","ok":true,"provider":P,"account":A,"items":[...],
   "nextCursor":null|"…","checkpoint":null|"…","coverage":"full"|"partial"}

Items are {id, url, title, text, updatedAt|null}. This mock pages ``--items FILE`` by
``--page-size``; its cursor is "offset:N"; the final page confirms the checkpoint
"seen:<count>", and a request carrying that checkpoint gets only items added since.
Refusals are {"protocol","ok":false,"code"} with a code such as access_denied.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PROTOCOL = "xstash.source.v1"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", required=True, type=Path)
    parser.add_argument("--page-size", type=int, default=2)
    args = parser.parse_args()
    request = json.loads(sys.stdin.readline())
    items = json.loads(args.items.read_text(encoding="utf-8"))
    if request.get("protocol") != PROTOCOL or request.get("operation") != "fetch":
        print(json.dumps({"protocol": PROTOCOL, "ok": False, "code": "unavailable"}))
        return 0
    start = 0
    if request.get("checkpoint"):
        start = int(str(request["checkpoint"]).split(":")[1])
    if request.get("cursor"):
        start = int(str(request["cursor"]).split(":")[1])
    page = items[start : start + args.page_size]
    end = start + len(page)
    more = end < len(items)
    reply = {
        "protocol": PROTOCOL,
        "ok": True,
        "provider": request["provider"],
        "account": request["account"],
        "items": page,
        "nextCursor": f"offset:{end}" if more else None,
        "checkpoint": None if more else f"seen:{end}",
        "coverage": "full",
    }
    print(json.dumps(reply, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
