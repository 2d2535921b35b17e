"""Facts that change and the review queue for resources (issue 46), beside the entries'.

A resource's facts live in its sidecar (:mod:`xbrain.kinds.resourcefacts`), so the
resource's bytes, id and digest never change:

* ``put`` with ``supersedes``/``validFrom``/``validUntil`` (input fields, or the CLI's
  options) writes them into the sidecar of each resource put, in the same commit;
  ``supersede OLD NEW`` adds OLD to NEW's links (the link lives in the newer resource's
  sidecar only) and, when NEW has no ``validFrom``, starts it now, so ``--as-of`` an
  earlier date still answers with OLD. Unknown ids, a resource superseding itself and
  links that would close a cycle are refused.
* A proposal (MCP; the CLI with ``--agent`` when ``review.agentWrites`` is ``proposed``)
  is a resource whose sidecar says ``status: proposed``: never searched or recalled until
  ``accept``; ``reject`` leaves the resource's tombstone and keeps the reason in the
  sidecar (a tombstone is the original store's ``{id, deletedAt}``); ``edit`` replaces it
  with the edited resource and accepts it. A proposal never changes a resource in force,
  and an agent's ``supersede`` never links from one (exit 5: propose a resource that
  supersedes it). A person's ``put`` of a proposal accepts it as ``review accept`` does
  (``proposedBy`` kept as who proposed it): the result says ``accepted`` (``updated``
  when its text changed too) and the commit names the accept.
* A change of facts alone (the resource's bytes unchanged) is an update: the result
  says ``updated`` and the commit ``facts ID``. An input's ``"supersedes": []`` removes
  every link, ``"validFrom": null`` / ``"validUntil": null`` remove the validity; a
  field left out keeps what the sidecar has.
* ``possibleConflicts`` (:mod:`xbrain.resourceconflicts`): live resources in force that
  look like the same subject, reported and never changed.
"""

from __future__ import annotations

from typing import Any

from .core import Core, Transaction
from .errors import ConflictError, InvalidInputError, NotFoundError
from .kinds import resource as resource_kind
from .kinds import resourcefacts as facts_kind
from .kinds import tombstone as tombstone_kind
from .kinds.model import normalize_resource
from .resourceconflicts import MAX_CONFLICT_CHECKS, Ahead, Similar, asks, conflicts
from .resources import put as put_resources
from .timestamps import later_of

__all__ = [
    "FACT_FIELDS",
    "accept",
    "conflicts",
    "edit",
    "pending",
    "proposal",
    "put",
    "reject",
    "supersede",
]

FACT_FIELDS = ("supersedes", "validFrom", "validUntil")


def _check(rid: str) -> None:
    if not resource_kind.is_id(rid):
        raise InvalidInputError("Invalid resource ID; expected resource_ and 64 hex digits.")


def proposal(core: Core, given: dict[str, str] | None) -> dict[str, str] | None:
    """Who proposes a write: ``given`` (MCP), else the agent named on the core when the
    store's ``review.agentWrites`` is ``proposed``, else None (in force at once)."""
    if given is not None:
        return given
    if core.agent is None:
        return None
    with core.reading() as view:
        if view is None or view.config().review_setting("agentWrites") != "proposed":
            return None
    return {"agent": core.agent}


def _cycle(txn: Transaction, new: str, olds: list[str], staged: dict[str, list[str]]) -> None:
    """Refuse links from ``new`` to ``olds`` when one of ``olds`` already (through any
    chain of links) supersedes ``new``."""
    seen: set[str] = set()
    todo = list(olds)
    while todo:
        rid = todo.pop()
        if rid == new:
            raise InvalidInputError(f"Resource {new} would supersede itself through {olds[0]}.")
        if rid in seen or len(seen) > 10_000:
            continue
        seen.add(rid)
        todo += staged.get(rid) or facts_kind.facts_of(txn, rid).get("supersedes", [])


def _stage_facts(
    txn: Transaction,
    rid: str,
    given: dict[str, Any],
    propose: dict[str, str] | None,
    now: str,
    batch: set[str],
    staged: dict[str, list[str]],
    settle: bool = True,
    clear: tuple[str, ...] = (),
) -> bool:
    """Stage the sidecar of ``rid`` after a put with ``given`` facts (by ``propose``;
    else, when ``settle``, a person's write: in force); ``clear``: the facts the input
    set to ``[]``/``null``, removed. Whether the sidecar changed."""
    old = facts_kind.facts_of(txn, rid)
    facts = {k: v for k, v in old.items() if k != "updatedAt" and k not in clear}
    links = given.get("supersedes", [])
    for target in links:
        if target not in batch and resource_kind.get(txn, target) is None:
            raise NotFoundError(f"Resource not found: {target}.")
    if links:
        _cycle(txn, rid, links, staged)
        facts["supersedes"] = list(dict.fromkeys([*facts.get("supersedes", []), *links]))
        staged[rid] = facts["supersedes"]
        if "validFrom" not in clear:
            facts.setdefault("validFrom", given.get("validFrom") or now)
    for key in ("validFrom", "validUntil"):
        if key in given:
            facts[key] = given[key]
    if propose is not None:
        facts.update(status="proposed", proposedBy=propose)
    elif settle and facts.get("status"):  # a person's put of it: in force
        facts.pop("status")
        facts.pop("reason", None)
    facts = facts_kind.normalize(facts, rid)  # validUntil after validFrom, once merged
    return bool(facts or old) and facts_kind.write(txn, rid, facts, now)


def _item_facts(item: Any, given: dict[str, Any]) -> tuple[Any, dict[str, Any], tuple[str, ...]]:
    """An input item without its facts, its facts (``given`` first, then its own) and
    the facts it clears (``"supersedes": []``, ``"validFrom": null``,
    ``"validUntil": null``)."""
    fields = dict(given)
    if not isinstance(item, dict):
        return item, fields, ()
    clear = tuple(k for k in FACT_FIELDS if k in item and item[k] in (None, []))
    fields.update({k: item[k] for k in FACT_FIELDS if k in item and k not in clear})
    for key in clear:
        fields.pop(key, None)  # the input's own value wins over an option
    return {k: v for k, v in item.items() if k not in FACT_FIELDS}, fields, clear


def _report(
    txn: Transaction, result: dict[str, Any], propose: dict[str, str] | None, was: str | None
) -> None:
    """Name a change of facts alone (the resource's bytes unchanged) in the result and
    the commit: a person's put of a proposal accepts it; else its facts were updated."""
    rid = result["id"]
    title = (resource_kind.get(txn, rid) or {}).get("title")
    accepted = propose is None and was == "proposed"
    if result["status"] == "unchanged":
        result["status"] = "accepted" if accepted else "updated"
        txn.actions.append(("accept" if accepted else "facts", rid, title))
    elif accepted:  # a person's new text of a proposal: in force, and the log says so
        txn.actions.append(("accept", rid, title))


def put(
    core: Core,
    items: Any,
    given: dict[str, Any] | None = None,
    *,
    propose: dict[str, str] | None = None,
    similar: Similar | None = None,
    ahead: Ahead | None = None,
) -> dict[str, Any]:
    """``resources.put`` with facts: ``given`` (the CLI's) and each item's own
    ``supersedes``/``validFrom``/``validUntil`` go into the sidecars (``[]``/``null``
    clear them); a proposal lands ``proposed``; a person's put of a proposal accepts
    it; each result lists the resources it may conflict with (``ahead`` may count their
    candidates while the batch is written)."""
    batch = items if isinstance(items, list) else [items]
    own: list[tuple[dict[str, Any], tuple[str, ...]]] = []
    plain: list[Any] = []
    for item in batch:
        bare, fields, clear = _item_facts(item, given or {})
        own.append((fields, clear))
        plain.append(bare)
    checked = []  # every item's facts validated before the store is touched
    for (fields, clear), item in zip(own, plain, strict=True):
        rid = normalize_resource(item).resource["id"] if fields else None
        checked.append((facts_kind.normalize(fields, rid) if fields else {}, clear))
    propose = proposal(core, propose)
    now = core.clock()

    def replaced(resources: list[dict[str, Any]]) -> dict[str, list[str]]:
        pairs = zip(resources, checked, strict=False)
        return {r["id"]: f.get("supersedes", []) for r, (f, _) in pairs}

    checked_first: list[dict[str, Any]] = []  # the resources the conflict check reads

    def before(resources: list[dict[str, Any]]) -> None:
        checked_first.extend(resources[:MAX_CONFLICT_CHECKS])  # (normalized once: here)
        if ahead is not None and similar is not None:
            ids = {r["id"] for r in resources}
            ahead.ahead(asks(checked_first, ids, replaced(checked_first)), ids, resources)

    parent: list[str | None] = [None]

    def stage(txn: Transaction, written: list[dict[str, Any]]) -> None:
        parent[0] = txn.snap.commit
        ids = {result["id"] for result in written}
        staged: dict[str, list[str]] = {}
        for result, (fields, clear) in zip(written, checked, strict=True):
            rid = result["id"]
            was = facts_kind.facts_of(txn, rid).get("status")
            if propose is not None:
                if (
                    result["status"] == "unchanged"
                    and not fields
                    and not set(clear) & set(facts_kind.facts_of(txn, rid))
                ):
                    continue  # the same resource again: nothing to propose
                if result["status"] != "added" and was != "proposed":
                    raise ConflictError(
                        f"Resource {rid} is in force; an agent's proposal cannot change it. "
                        "Propose a resource that supersedes it."
                    )
            if _stage_facts(txn, rid, fields, propose, now, ids, staged, clear=clear):
                _report(txn, result, propose, was)
            if propose is not None and result["status"] != "unchanged":
                result["proposed"] = True
        counts = {"added": 0, "updated": 0, "unchanged": 0}
        for result in written:  # a change of facts alone counts as an update
            key = result["status"] if result["status"] in counts else "updated"
            counts[key] += 1
        tally.update(counts)

    tally: dict[str, int] = {}
    one = plain if isinstance(items, list) else plain[0]
    result = put_resources(core, one, stage=stage, before=before)
    result.update(tally)
    for each in result["results"]:
        each["possibleConflicts"] = []  # every result lists them (none: an empty list)
    if similar is not None:
        if ahead is not None:
            ahead.landed(parent[0], result.get("commit"))
        conflicts(checked_first, similar, result["results"], replaced(checked_first))
    return result


def supersede(core: Core, old: str, new: str) -> dict[str, Any]:
    """Record that resource ``new`` supersedes resource ``old`` (both live)."""
    _check(old)
    _check(new)
    if old == new:
        raise InvalidInputError("A resource cannot supersede itself.")
    agent = proposal(core, None)
    with core.transaction("resource supersede") as txn:
        replaced, current = resource_kind.get(txn, old), resource_kind.get(txn, new)
        if replaced is None or current is None:
            raise NotFoundError(f"Resource not found: {old if replaced is None else new}.")
        facts = facts_kind.facts_of(txn, new)
        changed = old not in facts.get("supersedes", ())
        if changed and agent is not None and facts.get("status") != "proposed":
            raise ConflictError(
                f"Resource {new} is in force; an agent cannot supersede with it "
                "(review.agentWrites is proposed). Propose a resource that supersedes "
                f"{old}: xbrain put FILE --supersedes {old}."
            )
        if changed:
            _cycle(txn, new, [old], {})
            now = core.clock()
            # superseding is not accepting: a proposal stays one
            _stage_facts(txn, new, {"supersedes": [old]}, None, now, set(), {}, settle=False)
            what = f"{current['title']} supersedes {replaced['title']}"
            txn.actions = [("supersede", new, what)]
    return {
        "id": new,
        "supersedes": old,
        "status": "superseded" if changed else "unchanged",
        "commit": txn.commit_id,
    }


def _bare(facts: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in facts.items() if k != "updatedAt"}


def pending(core: Core, similar: Similar | None) -> list[dict[str, Any]]:
    """The proposed resources (review queue items), oldest first."""
    out = []
    with core.reading() as view:
        if view is None:
            return []
        for rid, facts in facts_kind.read_all(view).items():
            resource = resource_kind.get(view, rid) if facts.get("status") == "proposed" else None
            if resource is None:
                continue
            item: dict[str, Any] = {
                "id": rid,
                "kind": "resource",
                "name": resource["title"],
                "updatedAt": resource["updatedAt"],
                "proposedBy": facts.get("proposedBy", {}),
            }
            if facts.get("supersedes"):
                item["supersedes"] = facts["supersedes"]
            out.append((item, resource))
    items = []
    for item, resource in sorted(out, key=lambda pair: (pair[0]["updatedAt"], pair[0]["id"])):
        results = [{"id": item["id"]}]
        if similar is not None:
            conflicts([resource], similar, results, {item["id"]: item.get("supersedes", [])})
        item["possibleConflicts"] = results[0].get("possibleConflicts", [])
        items.append(item)
    return items


def _proposed(txn: Transaction, rid: str) -> tuple[dict[str, Any], dict[str, Any]]:
    _check(rid)
    found = resource_kind.get(txn, rid)
    if found is None:
        raise NotFoundError(f"Resource not found: {rid}.")
    facts = facts_kind.facts_of(txn, rid)
    if facts.get("status") != "proposed":
        raise InvalidInputError(f"Resource {rid} is not proposed (it is in force).")
    return found, facts


def accept(txn: Transaction, ids: list[str], now: str) -> None:
    """Stage: proposed resources in force (their bytes unchanged)."""
    for rid in ids:
        found, facts = _proposed(txn, rid)
        facts_kind.write(txn, rid, {k: v for k, v in _bare(facts).items() if k != "status"}, now)
        txn.actions.append(("accept", rid, found["title"]))


def reject(txn: Transaction, ids: list[str], reason: str, now: str) -> None:
    """Stage: proposed resources replaced by tombstones; the reason kept in the sidecar."""
    for rid in ids:
        found, facts = _proposed(txn, rid)
        txn.scan_secrets([("reason", reason)])
        later = later_of(now, found["updatedAt"])
        tombstone_kind.put(txn, {"id": rid, "deletedAt": later})
        facts_kind.write(txn, rid, {**_bare(facts), "status": "rejected", "reason": reason}, now)
        txn.actions.append(("reject", rid, found["title"]))


def rejected(view: Any, rid: str) -> str | None:
    """Why a review rejected resource ``rid`` (its sidecar's reason), or None."""
    facts = facts_kind.facts_of(view, rid)
    return facts.get("reason") if facts.get("status") == "rejected" else None


def edit(core: Core, rid: str, raw: Any) -> dict[str, Any]:
    """Replace a proposed resource with ``raw`` (its edited text: the same source
    provider and id) and accept it."""
    if not isinstance(raw, dict):
        raise InvalidInputError("The edited resource must be one mapping.")
    with core.transaction("review edit") as txn:
        found, facts = _proposed(txn, rid)
        now = core.clock()
        fields = {k: v for k, v in raw.items() if k != "updatedAt"}
        new = normalize_resource({**fields, "updatedAt": later_of(now, found["updatedAt"])})
        if new.resource["id"] != rid:
            raise InvalidInputError("An edited proposal keeps its source provider and id.")
        resource_kind.put(txn, new.resource)
        facts_kind.write(txn, rid, {k: v for k, v in _bare(facts).items() if k != "status"}, now)
        txn.actions.append(("accept", rid, new.resource["title"]))
    return {"accepted": [rid], "commit": txn.commit_id}
