"""Reads across layers: the personal store first, then every team store.

Each function takes the personal answer the command already computed and a way to ask
one team layer the same question, and merges: every result says its ``layer``
(``personal`` or ``team:NAME``); a personal record wins over a team record with the same
id; a team result carries ``trust: team`` (``untrusted`` stays so) and ``provenance``
(who committed it last, when). What a team has not accepted (``hidden``) is left out.
With no team layer the personal answer is returned unchanged, byte for byte.

A team layer that cannot be read (removed meanwhile, damaged, busy) is skipped: a read
never fails because of a team.

A team layer's leg of a recall or search runs on a thread of its own while the personal
leg runs (:func:`started`): its SQLite work releases the interpreter, so on two cores a
team costs a prompt about what its slowest leg costs, not the sum. Each layer keeps its
one thread for the life of the process, so the databases a long-lived process keeps open
for a store (``xbrain serve``: its indexes, its entry cache, its telemetry) are only ever
used by that thread, one request at a time.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import XbrainError
from .place import Layer

__all__ = [
    "PERSONAL",
    "beside",
    "derived",
    "layered_list",
    "layered_recall",
    "layered_search",
    "layered_skills",
    "provenance",
    "started",
    "team_item",
]

PERSONAL = "personal"
_FAILURES = (XbrainError, OSError, ValueError)


def derived(layer: Layer) -> dict[str, Any]:
    """The layer's derived file (what it hides, provenance), worked out when behind."""
    from ..search.query import main_head
    from .keyed import read_keyed  # its provenance read by key: a prompt shows a few

    found = read_keyed(layer.path, main_head(Path(layer.path) / ".git"))
    if found is None:
        from .hidden import refresh  # git: only when the layer moved without a team command

        found = refresh(layer.path)
    return found


def provenance(known: dict[str, Any], key: str) -> dict[str, Any] | None:
    """``{committer, time, commit}`` of the last commit that changed record ``key`` (an
    id, or ``skill:SLUG``), or None when it cannot be told."""
    found = known.get("provenance", {}).get(key)
    if not isinstance(found, list) or len(found) != 3:
        return None
    from datetime import datetime, timezone

    from ..timestamps import format_timestamp

    when = format_timestamp(datetime.fromtimestamp(int(found[1]), timezone.utc))
    return {"committer": str(found[0]), "time": when, "commit": str(found[2])}


def team_item(
    item: dict[str, Any], layer: Layer, known: dict[str, Any], key: str
) -> dict[str, Any]:
    """``item`` as a result of team ``layer``: its layer, trust and provenance."""
    trust = "untrusted" if item.get("trust") == "untrusted" else "team"
    return {**item, "layer": layer.label, "trust": trust, "provenance": provenance(known, key)}


_returned: dict[str, tuple[str | None, dict[str, Any]]] = {}


@contextlib.contextmanager
def session_kept(layer: Layer, session: str | None) -> Iterator[None]:
    """Around one team layer's recall: remember what its session had shown, so that what
    the merge then leaves out is not counted as shown (``layered_recall`` undoes it)."""
    from ..recall.session import session_state

    control = Path(layer.path) / ".git"
    with session_state(control, session) as state:
        before = dict(state["shown"])
    yield
    _returned[layer.path] = (session, before)


def _unshow(layer: Layer, cut: set[str]) -> None:
    """Forget that ``layer``'s session showed ``cut`` (the merge left them out)."""
    kept = _returned.pop(layer.path, None)
    if kept is None or not cut or kept[0] is None:
        return
    from ..recall.session import session_state

    session, before = kept
    with session_state(Path(layer.path) / ".git", session) as state:
        for rid in cut:
            if rid in before:
                state["shown"][rid] = before[rid]
            else:
                state["shown"].pop(rid, None)


class _Job:
    """One layer's leg: its answer (or what it raised) once it has run."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self.work = work
        self.done = threading.Lock()
        self.done.acquire()
        self.value: Any = None
        self.error: BaseException | None = None

    def __call__(self) -> None:
        try:
            self.value = self.work()
        except BaseException as exc:  # handed to the caller, who raises it
            self.error = exc
        finally:
            self.done.release()

    def result(self) -> Any:
        """Wait for the leg; its answer, or raise what it raised."""
        with self.done:
            pass
        if self.error is not None:
            raise self.error
        return self.value


class _Worker:
    """A team layer's own thread: it runs one caller's job at a time."""

    def __init__(self) -> None:
        self.busy = threading.Lock()  # held from a job's start to its end
        self.wake = threading.Lock()
        self.wake.acquire()
        self.job: _Job | None = None
        threading.Thread(target=self._loop, name="xbrain-team-layer", daemon=True).start()

    def _loop(self) -> None:
        while True:
            self.wake.acquire()
            job, self.job = self.job, None
            if job is not None:
                job()
            self.busy.release()

    def start(self, job: _Job) -> None:
        self.busy.acquire()  # another caller's job on this layer ends first
        self.job = job
        self.wake.release()


_workers: dict[str, tuple[int, _Worker]] = {}  # layer path → (process id, its thread)


def _worker(layer: Layer) -> _Worker:
    kept = _workers.get(layer.path)
    if kept is None or kept[0] != os.getpid():  # a forked child has none of the threads
        kept = _workers[layer.path] = (os.getpid(), _Worker())
    return kept[1]


def _semantic(layer: Layer) -> bool:
    from ..search.query import SEMANTIC_FILE

    return (Path(layer.path) / ".git" / SEMANTIC_FILE).is_file()


def started(
    layers: list[Layer], run: Callable[[Layer], dict[str, Any]], mode: str | None, store: Path
) -> Callable[[Layer], dict[str, Any]]:
    """Start ``run(layer)`` (and the read of the layer's derived file) on each layer's
    thread; what :func:`_ask` then asks instead of ``run``: it waits for that layer's
    answer. A layer that is the personal ``store`` itself, or whose leg may be semantic
    (``mode`` not lexical, and semantic recall on in that store), starts only when asked,
    after the personal leg: a store's kept databases and the embedding model (one per
    process) are never used by two threads at once."""
    from ..search.tokenize import keep_warm

    keep_warm()  # every leg cuts Chinese with one segmenter, loaded once
    jobs: dict[str, _Job] = {}

    def leg(layer: Layer) -> Any:
        return run(layer), derived(layer)

    def begin(layer: Layer) -> _Job:
        job = jobs[layer.path] = _Job(lambda: leg(layer))
        _worker(layer).start(job)
        return job

    mine = os.path.realpath(store)
    for layer in layers:
        if (mode == "lexical" or not _semantic(layer)) and os.path.realpath(layer.path) != mine:
            begin(layer)

    def answer(layer: Layer) -> dict[str, Any]:
        job = jobs.get(layer.path) or begin(layer)
        found: dict[str, Any] = job.result()[0]
        return found

    return answer


def beside(
    layers: list[Layer],
    answer: Callable[[Layer], dict[str, Any]],
    personal: Callable[[], dict[str, Any]],
) -> dict[str, Any]:
    """``personal()``: the personal leg, run here while the team legs :func:`started`
    run. When it fails, every team leg is waited for first, and what they returned is
    not counted as shown in their sessions (nothing was shown)."""
    try:
        return personal()
    except BaseException:
        for layer in layers:
            try:
                found = answer(layer)
            except BaseException:  # the personal leg's error is the one told
                _returned.pop(layer.path, None)
                continue
            _unshow(layer, {str(r["id"]) for r in found.get("results", ())})
        raise


def _ask(layers: Iterable[Layer], run: Callable[[Layer], dict[str, Any]]) -> Any:
    """(layer, its answer, its derived file, what it hides) for every layer that answers."""
    for layer in layers:
        try:
            found = run(layer)
            known = derived(layer)
        except _FAILURES:
            continue
        yield layer, found, known, frozenset(known.get("hidden", ()))


def layered_search(
    personal: dict[str, Any],
    layers: list[Layer],
    run: Callable[[Layer], dict[str, Any]],
    limit: int,
) -> dict[str, Any]:
    """``xbrain search``: the best ``limit`` results of every layer by score."""
    if not layers:
        return personal
    results = _by_score(personal, layers, run, limit, lambda r: r["citation"]["id"])
    return {**personal, "results": results}


def _by_score(
    personal: dict[str, Any],
    layers: list[Layer],
    run: Callable[[Layer], dict[str, Any]],
    limit: int,
    key: Callable[[dict[str, Any]], str],
    keep: Callable[[dict[str, Any]], bool] = lambda _: True,
) -> list[dict[str, Any]]:
    """The best ``limit`` results of the personal answer and every layer's by score, each
    marked with its layer: a personal result wins over a team one with the same ``key``
    (the key a layer hides records by); a team result must pass ``keep``."""
    merged: list[tuple[dict[str, Any], Any]] = [(r, None) for r in personal["results"]]
    seen = {key(r) for r in personal["results"]}
    for layer, found, known, hide in _ask(layers, run):
        for result in found["results"]:
            name = key(result)
            if name not in seen and name not in hide and keep(result):
                seen.add(name)
                merged.append((result, (layer, known)))
    merged.sort(key=lambda pair: -float(pair[0]["score"]))
    return [
        {**r, "layer": PERSONAL} if at is None else team_item(r, at[0], at[1], key(r))
        for r, at in merged[:limit]
    ]


def layered_list(
    personal: dict[str, Any],
    layers: list[Layer],
    run: Callable[[Layer], dict[str, Any]],
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """``xbrain list``: every layer's newest first (``run`` asks a layer for its first
    ``offset + limit``)."""
    if not layers:
        return personal
    merged: list[tuple[dict[str, Any], Any]] = [(r, None) for r in personal["results"]]
    seen = {r["id"] for r in personal["results"]}
    total = personal["total"]
    for layer, found, known, hide in _ask(layers, run):
        total += found["total"]
        for result in found["results"]:
            if result["id"] in hide or result["id"] in seen:
                total -= 1
                continue
            seen.add(result["id"])
            merged.append((result, (layer, known)))
    merged.sort(key=lambda pair: (pair[0]["updatedAt"], pair[0]["id"]), reverse=True)
    page = merged[offset : offset + limit]
    results = [
        {**r, "layer": PERSONAL} if at is None else team_item(r, at[0], at[1], r["id"])
        for r, at in page
    ]
    return {**personal, "total": max(total, len(merged)), "results": results}


def layered_skills(
    personal: dict[str, Any],
    layers: list[Layer],
    run: Callable[[Layer], dict[str, Any]],
    limit: int,
) -> dict[str, Any]:
    """``xbrain skill recall QUERY`` (Level 0): published team skills beside yours."""
    if not layers:
        return personal
    results = _by_score(
        personal,
        layers,
        run,
        limit,
        lambda r: f"skill:{r['slug']}",
        lambda r: bool(r.get("published")),
    )
    return {**personal, "count": len(results), "results": results}


_GROUP = {"skill": 2, "resource": 3}


def _group(result: dict[str, Any]) -> int:
    """Recall's order: entries a file routed, entries, skill pointers, resources."""
    if result["kind"] in _GROUP:
        return _GROUP[result["kind"]]
    return 0 if result.get("why", {}).get("via") == "path" else 1


def layered_recall(
    personal: dict[str, Any],
    layers: list[Layer],
    run: Callable[[Layer], dict[str, Any]],
    cap: int,
) -> dict[str, Any]:
    """``xbrain recall`` and the hooks: every layer's results in recall's order (routed
    entries, entries, skills, resources; by score within each), at most ``cap`` of each
    group, within the personal answer's budget; what does not fit is skipped."""
    if not layers:
        return personal
    limit = int(personal["budget"]["limit"])
    merged: list[tuple[dict[str, Any], Any]] = [(r, None) for r in personal["results"]]
    seen = {r["id"] for r in personal["results"]}
    skipped = list(personal["skipped"])
    returned: list[tuple[Layer, set[str]]] = []
    for layer, found, known, hide in _ask(layers, run):
        returned.append((layer, {str(r["id"]) for r in found["results"]}))
        skipped += [s for s in found["skipped"] if s["id"] not in seen]
        for result in found["results"]:
            if result["id"] in hide:
                continue
            if result["id"] in seen:
                skipped.append({"id": result["id"], "reason": f"personal wins over {layer.label}"})
                continue
            seen.add(result["id"])
            merged.append((result, (layer, known)))
    merged.sort(key=lambda pair: (_group(pair[0]), -float(pair[0]["score"])))
    results, used, taken = [], 0, dict[int, int]()
    for result, at in merged:
        group = _group(result)
        if taken.get(group, 0) >= cap or used + len(result["text"]) > limit:
            skipped.append({"id": result["id"], "reason": "over budget"})
            continue
        taken[group] = taken.get(group, 0) + 1
        used += len(result["text"])
        if at is None:
            results.append({**result, "layer": PERSONAL})
        else:
            results.append(team_item(result, at[0], at[1], str(result["id"])))
    shown = {str(r["id"]) for r in results if r["layer"] != PERSONAL}
    for layer, ids in returned:
        _unshow(layer, ids - shown)
    return {
        **personal,
        "results": results,
        "skipped": skipped,
        "budget": {"limit": limit, "used": used},
    }
