"""Facts that change and the review queue (issue 46): supersede, possible conflicts,
proposals and their review.

* ``supersede OLD NEW`` adds OLD to NEW's ``supersedes`` (the link lives in the newer
  entry only, so two devices that each supersede something never touch the same
  record) and, when NEW has no ``validFrom``, starts it now: ``recall --as-of`` an
  earlier date still answers with OLD.
* ``possibleConflicts``: the active entries of the same scope and kind whose name (and
  description, one-liner) share most of their words with a written entry — reported,
  never changed.
* A proposal is an entry with ``status: proposed`` (and ``proposedBy``): never recalled;
  ``accept`` makes it active, ``reject`` leaves a tombstone with the reason, ``edit``
  replaces it with the edited text and accepts it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from ..core import Core
from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..kinds import entry as kind
from ..text import SIMILAR, likeliest_conflicts, shared_words, word_set
from ..timestamps import later_of

__all__ = [
    "accept",
    "conflicts",
    "edit",
    "everything",
    "pending",
    "proposal",
    "reject",
    "supersede",
    "superseded_by",
]


def _check(rid: str) -> None:
    if not kind.is_id(rid):
        raise InvalidInputError("Invalid entry ID; expected entry_ and 64 hex digits.")


def supersede(core: Core, old: str, new: str) -> dict[str, Any]:
    """Record that entry ``new`` supersedes entry ``old`` (both live)."""
    _check(old)
    _check(new)
    if old == new:
        raise InvalidInputError("An entry cannot supersede itself.")
    agent = proposal(core, None)
    with core.transaction("entry supersede") as txn:
        replaced, current = kind.get(txn, old), kind.get(txn, new)
        if replaced is None or current is None:
            raise NotFoundError(f"Entry not found: {old if replaced is None else new}.")
        if (
            agent is not None
            and current["status"] != "proposed"
            and old not in current.get("supersedes", ())
        ):
            raise ConflictError(
                f"Entry {new} is in force; an agent cannot supersede with it "
                "(review.agentWrites is proposed). Propose a new entry with "
                f"supersedes: [{old}]."
            )
        if new in replaced.get("supersedes", ()):  # each would hide the other
            raise InvalidInputError(f"Entry {old} already supersedes {new}.")
        links = current.get("supersedes", [])
        changed = old not in links
        if changed:
            now = core.clock()
            raw = {
                **current,
                "supersedes": [*links, old],
                "validFrom": current.get("validFrom") or now,
                "updatedAt": later_of(now, current["updatedAt"]),
            }
            updated, _ = kind.normalize_entry(raw, now)  # canonical key order
            kind.put(txn, updated)
            txn.actions = [("supersede", new, f"{current['name']} supersedes {replaced['name']}")]
    return {
        "id": new,
        "supersedes": old,
        "status": "superseded" if changed else "unchanged",
        "commit": txn.commit_id,
    }


def superseded_by(entry: dict[str, Any], others: list[dict[str, Any]]) -> list[str]:
    """The ids of the active entries among ``others`` that supersede ``entry``."""
    return sorted(
        other["id"]
        for other in others
        if other["status"] == "active" and entry["id"] in other.get("supersedes", ())
    )


def _words(entry: dict[str, Any]) -> set[str]:
    return word_set(f"{entry['name']} {entry.get('description', '')} {entry.get('oneLiner', '')}")


def conflicts(
    written: list[dict[str, Any]], existing: list[dict[str, Any]], results: list[dict[str, Any]]
) -> None:
    """Add ``possibleConflicts`` ([{id, name, why}]) to the results of ``written`` entries:
    the active ones among ``existing`` of the same scope and kind that look like the same
    subject (the same name; or most words of name, description and one-liner shared).
    Each is compared with the entries that could be one (``_Alike``), not with all of
    them: a batch of 1,000 into a store of 2,000 compared each pair, 8 s."""
    by_id = {result["id"]: result for result in results}
    groups: dict[tuple[str, str], _Alike] = {}
    for new in written:
        result = by_id.get(new["id"])
        if result is None or result.get("status") in ("skipped_deleted",):
            continue
        key = (new["scope"], new["kind"])
        if key not in groups:
            active = [o for o in existing if o["status"] == "active"]
            groups[key] = _Alike([o for o in active if (o["scope"], o["kind"]) == key])
        words, name = _words(new), new["name"].casefold()
        passed = {new["id"], *new.get("supersedes", ())}
        found: list[tuple[float, dict[str, Any]]] = []
        for other, theirs in groups[key].candidates(words, name):
            if other["id"] in passed:
                continue
            share = shared_words(words, theirs)
            if other["name"].casefold() == name:
                found.append((2.0, {"id": other["id"], "name": other["name"], "why": "same name"}))
            elif share >= SIMILAR:
                why = f"similar name and description ({share:.2f} of words shared)"
                found.append((share, {"id": other["id"], "name": other["name"], "why": why}))
        result["possibleConflicts"] = likeliest_conflicts(found)


class _Alike:
    """Entries found by their name and by their words: those that may share ``SIMILAR``
    of a word set's words hold one of its rarest (a pair that shares that share of the
    words of both shares at least that share of each one's; were all of them among the
    others, too few would be left)."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.entries = entries
        self.words = [_words(entry) for entry in entries]
        self.holders: dict[str, list[int]] = {}
        self.named: dict[str, list[int]] = {}
        for i, (entry, words) in enumerate(zip(entries, self.words, strict=True)):
            self.named.setdefault(entry["name"].casefold(), []).append(i)
            for word in words:
                self.holders.setdefault(word, []).append(i)

    def candidates(self, words: set[str], name: str) -> Iterator[tuple[dict[str, Any], set[str]]]:
        """Each entry named ``name`` or holding one of the rarest words of ``words`` (as
        many as a share of ``SIMILAR`` allows to miss, plus one), with its words."""
        rarest = sorted(words, key=lambda word: (len(self.holders.get(word, ())), word))
        need = math.ceil(SIMILAR * len(words) - 1e-9)  # the fewest of them it must hold
        found = set(self.named.get(name, ()))
        for word in rarest[: len(words) - need + 1]:
            found.update(self.holders.get(word, ()))
        for i in sorted(found):
            yield self.entries[i], self.words[i]


def proposal(core: Core, given: dict[str, str] | None) -> dict[str, str] | None:
    """Who proposes a write: ``given`` (MCP, a hook), else the agent named on the core
    when the store's ``review.agentWrites`` is ``proposed``, else None (in force at once)."""
    if given is not None:
        return given
    if core.agent is None:
        return None
    with core.reading() as view:
        if view is None or view.config().review_setting("agentWrites") != "proposed":
            return None
    return {"agent": core.agent}


Cached = Callable[[Callable[[Any], list[dict[str, Any]]]], list[dict[str, Any]] | None]


def everything(core: Core, cached: Cached | None = None) -> list[dict[str, Any]]:
    """Every entry (from recall's entry cache when ``cached`` can say, without its body;
    else from git)."""
    found = None if cached is None else cached(list)
    if found is not None:
        return found
    from ..core import bulk

    with core.reading() as view:
        if view is None:
            return []
        with core.git() as git:
            return list(bulk.records(git, view, "entry"))


def pending(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The review queue: every proposed entry (with who proposed it and the active
    entries it may conflict with), oldest first."""
    queue = sorted(
        (e for e in entries if e["status"] == "proposed"), key=lambda e: (e["updatedAt"], e["id"])
    )
    out = []
    for entry in queue:
        item = {key: entry[key] for key in ("id", "kind", "name", "scope", "updatedAt")}
        item["proposedBy"] = entry.get("proposedBy", {})
        if entry.get("supersedes"):
            item["supersedes"] = entry["supersedes"]
        results = [{"id": entry["id"]}]
        conflicts([entry], entries, results)
        item["possibleConflicts"] = results[0].get("possibleConflicts", [])
        out.append(item)
    return {"count": len(out), "proposals": out}


def _proposed(txn: Any, rid: str) -> dict[str, Any]:
    _check(rid)
    found = kind.get(txn, rid)
    if found is None:
        raise NotFoundError(f"Entry not found: {rid}.")
    if found["status"] != "proposed":
        raise InvalidInputError(f"Entry {rid} is not proposed (it is {found['status']}).")
    return found


Stage = Callable[[Any, list[str], str], None]  # (txn, other ids, now): another kind's half


def _split(ids: list[str]) -> tuple[list[str], list[str]]:
    """Entry ids, and the rest (another kind's: a resource's), each once, in order."""
    unique = list(dict.fromkeys(ids))
    for rid in unique:
        if not kind.is_id(rid) and not rid.startswith("resource_"):
            shown = rid if len(rid) <= 80 and rid.isprintable() else repr(rid[:77]) + "..."
            raise InvalidInputError(
                f"Invalid ID {shown}; expected entry_ or resource_ and 64 hex digits."
            )
    return [i for i in unique if not i.startswith("resource_")], [
        i for i in unique if i.startswith("resource_")
    ]


def accept(core: Core, ids: list[str], others: Stage | None = None) -> dict[str, Any]:
    """Make proposed entries active (all of them, or none); ``others`` stages the ids of
    another kind (proposed resources) in the same commit."""
    entries, rest = _split(ids) if others is not None else (list(dict.fromkeys(ids)), [])
    with core.transaction("review accept") as txn:
        now = core.clock()
        for rid in entries:
            found = _proposed(txn, rid)
            later = later_of(now, found["updatedAt"])
            kind.put(txn, {**found, "status": "active", "updatedAt": later})
            txn.actions.append(("accept", rid, found["name"]))
        if rest and others is not None:
            others(txn, rest, now)
    return {"accepted": list(dict.fromkeys(ids)), "commit": txn.commit_id}


def reject(
    core: Core,
    ids: list[str],
    reason: str,
    others: Callable[[Any, list[str], str, str], None] | None = None,
) -> dict[str, Any]:
    """Replace proposed entries with tombstones that keep ``reason`` (all, or none);
    ``others`` stages the ids of another kind (proposed resources) in the same commit."""
    reason = reason.strip()
    if not reason or len(reason) > 1024 or any(ch < " " or ch == "\x7f" for ch in reason):
        raise InvalidInputError("--reason must be one line of 1-1,024 characters.")
    entries, rest = _split(ids) if others is not None else (list(dict.fromkeys(ids)), [])
    with core.transaction("review reject") as txn:
        now = core.clock()
        for rid in entries:
            found = _proposed(txn, rid)
            kind.bury(txn, rid, later_of(now, found["updatedAt"]), reason)
            txn.actions.append(("reject", rid, found["name"]))
        if rest and others is not None:
            others(txn, rest, reason, now)
    return {"rejected": list(dict.fromkeys(ids)), "commit": txn.commit_id}


def edit(core: Core, rid: str, raw: Any) -> dict[str, Any]:
    """Replace a proposed entry with ``raw`` (its edited text: the same scope and name)
    and accept it."""
    if not isinstance(raw, dict):
        raise InvalidInputError("The edited entry must be one mapping.")
    with core.transaction("review edit") as txn:
        found = _proposed(txn, rid)
        now = core.clock()
        fields = {k: v for k, v in raw.items() if k not in ("id", "updatedAt", "status")}
        fields.setdefault("proposedBy", found.get("proposedBy"))
        later = later_of(now, found["updatedAt"])
        new, _ = kind.normalize_entry({**fields, "status": "active", "updatedAt": later}, now)
        if new["id"] != rid:
            raise InvalidInputError("An edited proposal keeps its scope and name.")
        kind.put(txn, new)
        txn.actions.append(("accept", rid, new["name"]))
    return {"accepted": [rid], "commit": txn.commit_id}
