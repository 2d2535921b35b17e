"""The merge of two devices' stores, decided per record id, the same whichever side pulls:

* a record only one side has is kept;
* two live versions: the newer ``updatedAt`` wins (tie: the greater revision digest);
* a tombstone beats an edit that is not newer than it; a newer edit restores;
* two tombstones: the later ``deletedAt`` (tie: the greater digest).

The same rules hold for every registered family of record kinds (resources and their
tombstones, entries and theirs): a kind says which field orders its revisions and
whether it is a tombstone. Other files merge by their kind's rule (a skill's state), or
keep the greater bytes.

Receipts, ingestion state, the catalog and the summary are re-derived from the merged
records, never text-merged, so no conflict markers can exist.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..codec import digest, dump_yaml
from ..core import CommitId, GitStore, View, layout
from ..core.derive import catalog_entry, count_change, derived_files
from ..core.registry import classify, family, file_kind, record_kind, record_kinds, record_path
from ..core.shards import Placement, same_apart
from ..core.view import record_count
from ..kinds import resource as resource_kind
from ..kinds import state
from ..kinds.urls import URLS_DIR, url_digits, urls_path
from ..messages import commit_message
from ..text import canonical_url
from ..timestamps import later_of
from .intake import horizon

__all__ = ["derived_in_step", "integrate", "merge_files"]


def _record_dirs() -> tuple[str, ...]:
    return tuple(spec.directory + "/" for spec in record_kinds())


DERIVED = (f"{layout.DERIVED_DIR}/", state.RECEIPTS_DIR + "/", "ingestion/")


def _record(
    view: View, rid: str, parsed: dict[str, dict[str, Any]] | None = None
) -> tuple[str, dict[str, Any], bytes] | None:
    for spec in family(rid):
        path = spec.path(rid)
        data = view.read(path)
        if data is not None:
            known = parsed.get(view.snap.blob_id(path) or "") if parsed else None
            return spec.name, known if known is not None else spec.parse(data), data
    return None


def _winner(
    a: tuple[str, dict[str, Any], bytes], b: tuple[str, dict[str, Any], bytes]
) -> tuple[str, dict[str, Any], bytes]:
    spec_a, spec_b = record_kind(a[0]), record_kind(b[0])
    if spec_a is spec_b:
        return max(a, b, key=lambda r: (r[1][spec_a.clock], digest(r[1])))
    (live, live_spec), (dead, dead_spec) = sorted(
        ((a, spec_a), (b, spec_b)), key=lambda pair: pair[1].tombstone
    )
    return live if live[1][live_spec.clock] > dead[1][dead_spec.clock] else dead


def _combined(
    pick: tuple[str, dict[str, Any], bytes], other: tuple[str, dict[str, Any], bytes]
) -> tuple[str, dict[str, Any], bytes]:
    """The kept revision with what its kind says the other must not lose (both live)."""
    spec = record_kind(pick[0])
    if spec.combine is None or other[0] != pick[0]:
        return pick
    record = spec.combine(pick[1], other[1])
    return pick if record == pick[1] else (pick[0], record, spec.serialize(record))


def _ids(view: View) -> set[str]:
    return {
        Path(p).stem for prefix in _record_dirs() for p, _ in view.snap.files(prefix.rstrip("/"))
    }


def merge_files(
    ours: View,
    theirs: View,
    dropped: list[dict[str, Any]] | None = None,
    parsed: dict[str, dict[str, Any]] | None = None,
) -> dict[str, bytes | None]:
    """The changes that turn ``ours`` into the merged tree (symmetric in its choices).

    ``dropped``, when given, receives one entry per id where the two sides held
    different revisions: which side was kept and what the other side had. ``parsed``
    holds records already parsed by the incoming check (blob id → record).
    """
    changes: dict[str, bytes | None] = {}
    merged: dict[str, tuple[str, dict[str, Any]]] = {}
    same = ours.snap.commit == theirs.snap.commit  # re-deriving one tree: read it once
    for rid in sorted(_ids(ours) | _ids(theirs)):
        a = _record(ours, rid, parsed)
        b = a if same else _record(theirs, rid, parsed)
        pick = a if b is None else b if a is None else (a if a[2] == b[2] else _winner(a, b))
        assert pick is not None
        if a is not None and b is not None and a[2] != b[2]:
            pick = _combined(pick, b if pick is a else a)
        if dropped is not None and a is not None and b is not None and a[2] != b[2]:
            lost, view = (b, theirs) if pick is a else (a, ours)
            dropped.append(
                {
                    "id": rid,
                    "kept": "local" if pick is a else "remote",
                    "dropped": {
                        "revision": digest(lost[1]),
                        "updatedAt": lost[1].get("updatedAt") or lost[1].get("deletedAt"),
                        "deleted": lost[0] == "tombstone",
                        "commit": view.snap.commit,
                    },
                }
            )
        kind, record, data = pick
        merged[rid] = (kind, record)
        if ours.read(record_path(kind, rid)) != data:
            changes[record_path(kind, rid)] = data
        for other in record_kind(kind).siblings:
            if ours.read(record_path(other, rid)) is not None:
                changes[record_path(other, rid)] = None
    ours_files, theirs_files = dict(ours.snap.files()), dict(theirs.snap.files())
    for path in sorted(set(ours_files) | set(theirs_files)):
        if path.startswith(_record_dirs()) or path.startswith(DERIVED):
            continue
        if ours_files.get(path) != theirs_files.get(path):
            sides = (ours.snap.commit, theirs.snap.commit)
            changes[path] = _combine(path, ours.read(path), theirs.read(path), dropped, sides)
    changes.update(_derived(ours, theirs, merged))
    return {path: data for path, data in changes.items() if ours.read(path) != data}


def _combine(
    path: str,
    a: bytes | None,
    b: bytes | None,
    dropped: list[dict[str, Any]] | None = None,
    commits: tuple[str | None, str | None] = (None, None),
) -> bytes:
    """One file both sides hold differently (or one side only): the kind's merge when it
    has one, else the larger bytes (the same whichever side is ours). What the kind's
    merge set aside (a skill's publication) goes to ``dropped``, as a record would."""
    if a is None or b is None:
        kept = a if b is None else b
        assert kept is not None
        return kept
    kind = classify(path)
    spec = file_kind(kind) if kind is not None else None
    if spec is None or spec.merge is None:
        return max(a, b)
    merged = spec.merge(a, b)
    if dropped is not None and spec.superseded is not None:
        for side, what in spec.superseded(a, b, merged):
            commit = commits[side]
            dropped.append(
                {
                    "id": what.pop("id"),
                    "kept": "remote" if side == 0 else "local",
                    "dropped": {**what, **({"commit": commit} if commit else {})},
                }
            )
    return merged


def _json_files(view: View, directory: str) -> dict[str, Any]:
    return {
        name: view.read_json(f"{directory}/{name}", {})
        for name in view.snap.listdir(directory)
        if name.endswith(".json")
    }


def _derived(
    ours: View, theirs: View, merged: dict[str, tuple[str, dict[str, Any]]]
) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    revisions = {rid: digest(record) for rid, (_, record) in merged.items()}
    # receipts: keep an acknowledgement only if it is for the merged revision
    a, b = _json_files(ours, state.RECEIPTS_DIR), _json_files(theirs, state.RECEIPTS_DIR)
    for name in sorted(set(a) | set(b)):
        bucket: dict[str, str] = {}
        for rid in sorted(set(a.get(name, {})) | set(b.get(name, {}))):
            for side in (a.get(name, {}), b.get(name, {})):
                if side.get(rid) is not None and side[rid] == revisions.get(rid, side[rid]):
                    bucket[rid] = side[rid]
        out[f"{state.RECEIPTS_DIR}/{name}"] = layout.dump_json(bucket)
    # pull progress: the further one (generation, then digest)
    a, b = _json_files(ours, state.SOURCES_DIR), _json_files(theirs, state.SOURCES_DIR)
    for name in sorted(set(a) | set(b)):
        options = [v for v in (a.get(name), b.get(name)) if v is not None]
        best = max(options, key=lambda v: (v.get("generation", 0), digest(v)))
        out[f"{state.SOURCES_DIR}/{name}"] = layout.dump_json(best)
    # capture hashes: per id, the later (then greater) entry
    a, b = _json_files(ours, state.CAPTURES_DIR), _json_files(theirs, state.CAPTURES_DIR)
    for name in sorted(set(a) | set(b)):
        entries: dict[str, Any] = {}
        for rid in sorted(set(a.get(name, {})) | set(b.get(name, {}))):
            options = [s[rid] for s in (a.get(name, {}), b.get(name, {})) if rid in s]
            entries[rid] = max(options, key=lambda v: (v.get("updatedAt") or "", digest(v)))
        out[f"{state.CAPTURES_DIR}/{name}"] = layout.dump_catalog(entries)
    # the queue: live resources only, in id order
    queue_a, queue_b = ours.read_json(state.PENDING, {}), theirs.read_json(state.PENDING, {})
    queue = {}
    for rid in sorted(set(queue_a) | set(queue_b)):
        if merged.get(rid, ("",))[0] == "resource":
            options = [q[rid] for q in (queue_a, queue_b) if rid in q]
            queue[rid] = max(options, key=digest)
    out[state.PENDING] = layout.dump_json(queue) if queue else None
    # catalog, summary and URL index from the merged records
    entries = {rid: catalog_entry(kind, record) for rid, (kind, record) in merged.items()}
    live: dict[str, dict[str, dict[str, Any]]] = {}
    for rid, (kind, record) in merged.items():
        live.setdefault(kind, {})[rid] = record
    want = derived_files(entries, live)
    if not merged and ours.read(layout.SUMMARY) is None and theirs.read(layout.SUMMARY) is None:
        del want[layout.SUMMARY]  # two new, empty stores: nothing to sum yet
    for directory in (layout.CATALOG_DIR, URLS_DIR):  # shards no record needs go
        for path in {p for v in (ours, theirs) for p, _ in v.snap.files(directory)}:
            out[path] = None
    out.update(want)
    return out


def _vanished(ours: View, theirs: View, now: str) -> dict[str, bytes | None]:
    """Records ``theirs`` lost without a tombstone (``git rm`` elsewhere): tombstones.

    A deleted resource gets a tombstone, so capture or pull cannot resurrect it; a
    tombstone removed by hand is kept.
    """
    changes: dict[str, bytes | None] = {}
    for rid in sorted(_ids(ours) - _ids(theirs)):
        record = _record(ours, rid)
        assert record is not None
        kind, value, data = record
        spec = record_kind(kind)
        if spec.tombstone:
            changes[spec.path(rid)] = data
            continue
        dead = next((s for s in family(rid) if s.tombstone), None)
        if dead is not None:
            when = later_of(now, value[spec.clock])
            # never dated past the bound pulls hold records to: a record dated 2099 and
            # removed with git must not come back as a tombstone every pull refuses
            tombstone = {"id": rid, "deletedAt": when if when <= horizon() else now}
            changes[dead.path(rid)] = dump_yaml(tombstone)
    return changes


def derived_in_step(
    git: GitStore, ours: CommitId, head: CommitId, parsed: dict[str, dict[str, Any]] | None
) -> bool:
    """Whether ``head`` (a descendant of ``ours``) already carries the catalog, summary
    and URL index its records imply, judged from what changed since ``ours``.

    True for commits xbrain made; then a fast-forward need not re-derive the whole
    store (which parses every record). Anything else — a commit made with plain git, a
    derived file that disagrees — is False, and the caller re-derives everything.
    """
    old, new = View(git.snapshot(ours)), View(git.snapshot(head))
    summary = new.summary()
    resources = summary["resources"]
    if resources and not new.snap.listdir(URLS_DIR):
        return False
    urls = Placement(new.listdir, URLS_DIR)
    if not new.catalog_placement().settled(record_count(summary)):
        return False  # a prefix at a depth the record count does not give
    if not urls.settled(resources):
        return False
    changed = {
        Path(p).stem
        for spec in record_kinds()
        for p in git.changed_files(ours, head, spec.directory)
    }

    def entries_apart(entries: dict[str, Any]) -> dict[str, Any]:
        return {rid: entry for rid, entry in entries.items() if rid not in changed}

    def urls_apart(entries: dict[str, Any]) -> dict[str, Any]:
        kept = {url: [i for i in ids if i not in changed] for url, ids in entries.items()}
        return {url: ids for url, ids in kept.items() if ids}

    for directory, filed_by, apart in (  # no entry edited alone
        (layout.CATALOG_DIR, layout.id_digits, entries_apart),
        (URLS_DIR, url_digits, urls_apart),
    ):
        paths = git.changed_files(ours, head, directory)
        if not same_apart(directory, paths, old.read, new.read, filed_by, apart):
            return False
    totals = dict(old.summary())
    for rid in changed:
        found = _record(new, rid, parsed)
        want = catalog_entry(found[0], found[1]) if found else None
        if new.entry(rid) != want:
            return False
        count_change(totals, old.entry(rid), want)
        was = resource_kind.get(old, rid)
        for url, live in (
            (was["source"]["url"] if was else None, False),
            (found[1]["source"]["url"] if found and found[0] == "resource" else None, True),
        ):
            if url is not None:
                canonical = canonical_url(url)
                hashed = url_digits(canonical)
                ids = new.read_json(urls_path(hashed[: urls.depth(hashed[:2]) or 2]), {})
                if (rid in ids.get(canonical, ())) != (live or canonical == _url_of(found)):
                    return False
    return totals == summary


def _url_of(found: tuple[str, dict[str, Any], bytes] | None) -> str | None:
    if found is None or found[0] != "resource":
        return None
    return canonical_url(found[1]["source"]["url"])


def integrate(
    git: GitStore,
    ours: CommitId | None,
    theirs: CommitId,
    subject: str,
    agent: str | None,
    now: str,
    dropped: list[dict[str, Any]] | None = None,
    parsed: dict[str, dict[str, Any]] | None = None,
    identity: str | None = None,
) -> tuple[str, CommitId]:
    """The commit ``main`` should move to after checking ``theirs``: (state, commit).

    Fast-forward: ``theirs`` itself, plus tombstones for records it dropped without one
    and a re-derived catalog when git users edited records. Otherwise a merge commit;
    ``dropped`` receives the revisions the merge did not keep; ``identity``: who makes
    the merge commit (default: the store's configured identity).
    """
    when = int(time.time())
    if ours is None or git.is_ancestor(ours, theirs):
        head = theirs
        # the puller's commits (a team member's clone pushes them): the caller's identity
        identity = identity or View(git.snapshot(theirs)).config().identity
        if ours is not None:
            tombstones = _vanished(View(git.snapshot(ours)), View(git.snapshot(theirs)), now)
            if tombstones:
                message = commit_message(
                    "remote-pull",
                    [],
                    agent,
                    subject=f"{subject}: tombstones for "
                    f"{len(tombstones)} records removed without xbrain",
                )
                head = git.write_commit(head, tombstones, message, identity, when)
        view = View(git.snapshot(head))
        consistent = ours is not None and derived_in_step(git, ours, head, parsed)
        fixes = {} if consistent else merge_files(view, view, parsed=parsed)
        if fixes:  # a commit made with plain git: re-derive the catalog etc.
            message = commit_message(
                "remote-pull", [], agent, subject=f"{subject}: re-derive index"
            )
            head = git.write_commit(head, fixes, message, identity, when)
        return "fast_forward" if ours is not None else "cloned", head
    identity = identity or View(git.snapshot(ours)).config().identity  # who merges
    changes = merge_files(View(git.snapshot(ours)), View(git.snapshot(theirs)), dropped, parsed)
    message = commit_message("remote-pull", [], agent, subject=f"{subject}: merge {theirs[:12]}")
    return "merged", git.write_commit(ours, changes, message, identity, when, merged=theirs)
