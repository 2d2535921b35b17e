"""Filling a recall's budget, and what a session has seen (graduated disclosure).

Greedy in rank order: each candidate's full text if it fits, else its one-liner, else it
is skipped and the next is tried; nothing is ever cut. What the session saw already is
shown shorter (a rule's one-liner, unless the rule changed since) or not at all (a
memory, a skill pointer, a resource: once per session).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ONCE", "fill_budget"]

ONCE = ("memory",)  # kinds shown once per session; the others fall back to a one-liner


def fill_budget(
    candidates: list[dict[str, Any]], shown: dict[str, str], budget: int, cap: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """Greedy: each candidate's text if it fits, else its one-liner, else skipped (and the
    next is tried); what this session saw already is shown shorter or not at all.
    ``shown`` is updated with what was shown; ``cap`` bounds how many skills and how many
    resources are shown (entries come already chosen)."""
    results, skipped, used = [], [], 0
    taken: dict[str, int] = {}
    for item in candidates:
        if (
            cap is not None
            and item["kind"] in ("skill", "resource")
            and taken.get(item["kind"], 0) >= cap
        ):
            continue
        full = "pointer" if item.get("pointer") else "full"
        if item["kind"] == "resource":
            full = "candidate"
        seen = shown.get(item["id"])
        once = item["kind"] in ONCE or full != "full"
        if seen is not None and (once or (seen == item["revision"] and not item["short"])):
            skipped.append({"id": item["id"], "reason": "shown this session"})
            continue
        choices = [] if seen == item["revision"] else [(full, item["full"])]
        if item["short"]:
            choices.append(("one-liner", item["short"]))
        for disclosure, text in choices:
            if used + len(text) <= budget:
                used += len(text)
                result = {key: item[key] for key in ("id", "kind", "name")}
                result.update(
                    disclosure=disclosure, text=text, score=item["score"], why=item["why"]
                )
                if item.get("trust") == "untrusted":
                    result["trust"] = "untrusted"
                if "foundBy" in item:  # semantic or hybrid: the legs that found it
                    result["foundBy"] = item["foundBy"]
                results.append(result)
                shown[item["id"]] = item["revision"]
                taken[item["kind"]] = taken.get(item["kind"], 0) + 1
                break
        else:
            skipped.append({"id": item["id"], "reason": "budget"})
    return results, skipped, used
