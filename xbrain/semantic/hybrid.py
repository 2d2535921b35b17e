"""Lexical, semantic or hybrid retrieval (SPEC §14): which mode, the semantic leg, and
reciprocal rank fusion.

Each leg is gated on its own terms first — the lexical leg by its coverage rule and
scores, the semantic leg by the model's gate (derived from the model, :mod:`.gate`, or
the ``--floor`` the user chose), by standing ``QUERY_SPREAD`` standard deviations above
the query's own cosines with unrelated passages, and by staying within 0.1 of its own
best cosine — and only what passed is fused, by rank: ``Σ weight / (10 + rank)`` over
the legs that found a record (lexical 1, semantic 0.8; the lexical leg 10 deep, the
semantic one 5). A fused score is never thresholded, so a prompt that clears neither
gate ("ok thanks") recalls nothing. These numbers were chosen on the dev halves of
``bench/semantic_quality.py`` with ``bench/fusion_tune.py`` (see the README).

A search's lexical leg leads where it is confident: its first results that stand clear
of the ones after them (``lexical_lead``) keep their places at the top of the fused
answer, so records both legs found further down no longer push a clear lexical best
down (chosen on the dev halves of the suite's rows with ``bench/fusion_rows.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import InvalidInputError, ProviderError, XbrainError
from ..search.query import SEMANTIC_FILE

if TYPE_CHECKING:
    from ..embedding import Provider, ProviderTimeoutError

__all__ = [
    "LEXICAL_DEPTH",
    "MODES",
    "RRF_K",
    "SEMANTIC_DEPTH",
    "WEIGHTS",
    "failed_provider",
    "fuse",
    "fused_search",
    "led",
    "lexical_instead",
    "lexical_lead",
    "or_lexical",
    "resolve_mode",
    "semantic_leg",
]

MODES = ("lexical", "semantic", "hybrid")
RRF_K = 10
WEIGHTS = {"lexical": 1.0, "semantic": 0.8}
LEXICAL_DEPTH = 10
SEMANTIC_DEPTH = 5
SEMANTIC_DELTA = 0.1  # the semantic leg keeps what is within this of its best cosine
LEAD_RATIO = 1.1  # a lexical result this far above the next one leads the fused answer
LEAD_DEPTH = 3  # ... among the lexical leg's first this many
QUERY_SPREAD: float | None = None  # above the query's own background: measured, not adopted
T = TypeVar("T")
_TIMED_OUT: dict[str, tuple[float, ProviderTimeoutError]] = {}  # by store: when, what
RETRY_AFTER = 60.0  # seconds a provider that timed out is not asked again by default
_PROVIDERS: dict[str, Provider] = {}  # one loaded model per process (the server keeps it)


def resolve_mode(control: Path, asked: str | None) -> str:
    """The mode a search or recall runs in: ``asked``, else hybrid when this device has
    semantic recall switched on (``reindex --semantic``) and the extra installed, else
    lexical. Asking for semantic or hybrid without them is an error."""
    if asked is not None and asked not in MODES:
        raise InvalidInputError(f"--mode must be one of: {', '.join(MODES)}.")
    if asked == "lexical" or (asked is None and not (control / SEMANTIC_FILE).is_file()):
        return "lexical"
    from .vectors import settings

    spec = settings(control) if control.is_dir() else None
    usable = spec is not None and _numpy_installed()
    if asked is None:
        return "hybrid" if usable else "lexical"
    if spec is None:
        raise InvalidInputError(
            f"--mode {asked} needs semantic recall on this device: xbrain reindex --semantic."
        )
    if not usable:
        from ..embedding import SemanticUnavailableError

        raise SemanticUnavailableError(
            "Semantic recall needs the extra: pip install 'xbrain[semantic]'."
        )
    return asked


def _numpy_installed() -> bool:
    from importlib.util import find_spec

    return find_spec("numpy") is not None


def provider_for(control: Path) -> Provider:
    """This device's provider, loaded once per process."""
    import json

    from ..embedding import load_provider
    from .vectors import settings

    spec = settings(control)
    if spec is None:
        raise InvalidInputError("Semantic recall is off on this device: xbrain reindex --semantic.")
    key = json.dumps(spec.to_json(), sort_keys=True)
    if key not in _PROVIDERS:
        _PROVIDERS[key] = load_provider(spec)
    return _PROVIDERS[key]


def semantic_leg(
    store_dir: Path, text: str, kinds: tuple[str, ...], limit: int, terse: bool = False
) -> list[tuple[str, str, float, int]]:
    """The semantic leg: per kind, the records nearest to ``text`` that clear the gate
    (the ``--floor`` chosen, else the model's own, :mod:`.gate`) and stay within
    ``SEMANTIC_DELTA`` of that kind's best, at most ``limit`` of each: (kind, id,
    cosine, the place of the passage that matched), best first. The vectors catch up
    first. A ``terse`` prompt (one content word) is held to the stricter gate."""
    from .gate import SPREAD, TERSE_SPREAD, queries, threshold
    from .vectors import catch_up, nearest, settings

    control = store_dir / ".git"
    provider = provider_for(control)
    vectors = catch_up(control, provider)
    spec = settings(control)
    floor = spec.floor if spec is not None else None  # a floor the user chose: alone
    query = queries(provider, [text])[0]
    if vectors.rows and query.shape != (vectors.dimension,):
        raise ProviderError(
            f"The embedding provider's vectors now have {query.shape[0]} dimensions, the stored "
            f"ones {vectors.dimension}; run xbrain reindex --semantic."
        )
    best: dict[str, float] = {}
    taken: dict[str, int] = {}
    out = []
    spread_of = TERSE_SPREAD if terse else SPREAD
    gate = floor if floor is not None else threshold(vectors.gate or (0.0, 0.0), spread_of)
    spread = QUERY_SPREAD if getattr(provider, "calibrated", True) and floor is None else None
    for kind, rid, score, place in nearest(vectors, query, kinds, gate, 200 * len(kinds), spread):
        best.setdefault(kind, score)
        if score >= best[kind] - SEMANTIC_DELTA and taken.get(kind, 0) < limit:
            taken[kind] = taken.get(kind, 0) + 1
            out.append((kind, rid, score, place))
    return out


def failed_provider() -> tuple[type[XbrainError], ...]:
    """What a provider that fails raises — an endpoint that fails, is slow or answers
    something else, or a key not set in this process — as opposed to a damaged store
    (``xbrain.embedding`` is imported here, not on every prompt's lexical path)."""
    from ..embedding import KeyNotSetError

    return (ProviderError, KeyNotSetError)


def lexical_instead(exc: XbrainError, asked: str | None) -> dict[str, str]:
    """What an answer says when its semantic leg failed (``exc``, a ``failed_provider()``:
    the endpoint did not answer in time, or answered an error) and it was answered by
    the lexical leg alone — as a fresh hook answers, and as the answer would be without
    semantic recall. Only the default mode falls back: a mode the caller ``asked`` for
    fails with ``exc``."""
    if asked is not None:
        raise exc
    return {"retrieval": "lexical", "warning": f"{exc.message.rstrip('.')}; answered lexically."}


def or_lexical(
    control: Path, asked: str | None, semantic: Callable[[], T]
) -> tuple[T | None, dict[str, str]]:
    """``(semantic(), {})``, or ``(None, what the answer says)`` when it failed in the
    default mode (see ``lexical_instead``: an asked-for mode fails with the error). A
    provider that timed out is not asked again by default for ``RETRY_AFTER`` seconds
    in this process — a server, whose prompts would each wait out the whole timeout
    (past the hook's own) to be answered lexically in the end."""
    key = str(control)
    earlier = _TIMED_OUT.get(key)
    if asked is None and earlier is not None and time.monotonic() - earlier[0] < RETRY_AFTER:
        note = lexical_instead(earlier[1], None)
        note["warning"] = note["warning"].replace(
            "; answered lexically.", f"; answered lexically, asked again after {RETRY_AFTER:g} s."
        )
        return None, note
    from ..embedding import ProviderTimeoutError

    try:
        done = semantic()
    except failed_provider() as exc:
        if isinstance(exc, ProviderTimeoutError):
            _TIMED_OUT[key] = (time.monotonic(), exc)
        return None, lexical_instead(exc, asked)
    _TIMED_OUT.pop(key, None)
    return done, {}


def fuse(
    legs: dict[str, list[str]], weights: dict[str, float] | None = None
) -> list[tuple[str, float, list[str]]]:
    """Weighted reciprocal rank fusion of ranked id lists: (id, fused score, the legs
    that found it, in the order given), best first. Equal scores go to the leg given
    first (the lexical one: where the legs disagree equally, the more precise leg
    leads), then by id. ``weights``: per leg (default ``WEIGHTS``)."""
    weights = WEIGHTS if weights is None else weights
    scores: dict[str, float] = {}
    found: dict[str, list[str]] = {}
    order = {leg: i for i, leg in enumerate(legs)}
    for leg, ids in legs.items():
        for rank, rid in enumerate(ids, start=1):
            scores[rid] = scores.get(rid, 0.0) + weights.get(leg, 1.0) / (RRF_K + rank)
            found.setdefault(rid, []).append(leg)

    def key(item: tuple[str, float]) -> tuple[float, int, str]:
        return (-round(item[1], 12), order[found[item[0]][0]], item[0])

    ranked = sorted(scores.items(), key=key)
    return [(rid, round(score, 6), found[rid]) for rid, score in ranked]


def lexical_lead(scores: list[float]) -> int:
    """How many of the lexical leg's first results (``scores``, best first) lead a fused
    answer: through the deepest of its first ``LEAD_DEPTH`` that scores at least
    ``LEAD_RATIO`` times the result after it (the last one against nothing) — a clear
    step down in the lexical leg's own scores says the records above it match the words
    better than the ones below, which agreement between the legs should not overturn."""
    lead = 0
    for rank, score in enumerate(scores[:LEAD_DEPTH], start=1):
        after = scores[rank] if rank < len(scores) else 0.0
        if score >= LEAD_RATIO * after:
            lead = rank
    return lead


def led(
    fused: list[tuple[str, float, list[str]]], lead: list[str]
) -> list[tuple[str, float, list[str]]]:
    """``fused`` with the ids of ``lead`` first, in that order (each keeps its fused
    score), then the others as they were."""
    first = {rid: item for item in fused if (rid := item[0]) in lead}
    return [first[rid] for rid in lead if rid in first] + [
        item for item in fused if item[0] not in first
    ]


def weights_for(lexical_complete: bool) -> dict[str, float]:
    """The legs' weights: when the lexical leg's best result holds every term of the
    query, the semantic leg only adds after the lexical results (a weight too small to
    reorder the lexical ones: 0.001 / 11 is under the smallest gap between two of its
    first ten ranks, 1/19 − 1/20) — words the user typed that one record holds all of
    are the strongest evidence there is."""
    return {**WEIGHTS, "semantic": 0.001} if lexical_complete else WEIGHTS


def holds_as_asked(store_dir: Path, rid: str, terms: list[str]) -> bool:
    """Whether resource ``rid`` holds every term as asked — not only another form of it
    (``sorting`` for ``sorted``), which is weaker evidence than the words the user typed —
    by the search index when it reflects ``main``; without one the answer is yes (the
    lexical leg's own ``matched`` decided that already)."""
    from ..search.query import INDEX_FILE, index_meta, read_current

    wanted = sorted(set(terms))

    def read(conn: Any) -> bool:
        sql = (
            "SELECT COUNT(*) FROM postings WHERE doc = (SELECT doc FROM docs WHERE rid = ?) "
            f"AND term IN ({', '.join('?' * len(wanted))})"
        )
        return bool(conn.execute(sql, (rid, *wanted)).fetchone()[0] == len(wanted))

    held = read_current(store_dir / ".git", INDEX_FILE, index_meta, read)
    return True if held is None else held


def labelled(
    result: dict[str, Any], legs: list[str], similarity: float | None, passage: str | None = None
) -> dict[str, Any]:
    """A result with the legs that found it (and its cosine and the passage that
    matched when the semantic leg did)."""
    out = {**result, "foundBy": legs}
    if similarity is not None:
        out["similarity"] = similarity
    if passage:
        out["passage"] = passage
    return out


def fused_search(
    store_dir: Path, cache_dir: Path, query: str, limit: int, mode: str, lexical: dict[str, Any]
) -> dict[str, Any]:
    """A search answer in ``mode`` (semantic or hybrid) from the lexical answer (taken
    wide) and the semantic leg: each result says which legs found it; ``score`` is the
    fused score, ``similarity`` the cosine when the semantic leg found it."""
    from ..search.chatter import CHATTER
    from ..search.tokenize import Tokenizer
    from .passages import passage_of
    from .vectors import documents

    tokenizer = Tokenizer(cache_dir)
    try:
        terms = tokenizer.query_terms(query)
    finally:
        tokenizer.close()
    nearest: list[tuple[str, str, float, int]] = []
    content = [term for term in terms if term not in CHATTER]
    if content:  # as recall: chatter has no meaning to match
        terse = len(set(content)) < 2
        nearest = semantic_leg(store_dir, query, ("resource",), SEMANTIC_DEPTH, terse)
    similarity = {rid: score for _, rid, score, _ in nearest}
    place = {rid: where for _, rid, _, where in nearest}
    by_id = {item["citation"]["id"]: item for item in lexical["results"][:LEXICAL_DEPTH]}
    legs = {"semantic": [rid for _, rid, _, _ in nearest]}
    complete = False
    if mode == "hybrid":
        legs = {"lexical": list(by_id), **legs}
        if lexical["results"]:
            top = lexical["results"][0]
            complete = len(top["matched"]) >= len(terms) > 0 and holds_as_asked(
                store_dir, top["citation"]["id"], terms
            )
    fused = fuse(legs, weights_for(complete))
    if mode == "hybrid":
        scores = [item["score"] for item in lexical["results"][:LEXICAL_DEPTH]]
        fused = led(fused, list(by_id)[: lexical_lead(scores)])
    fused = fused[:limit]
    missing = [rid for rid, _, _ in fused if rid not in by_id or rid in place]
    docs = documents(store_dir / ".git", "resource", missing)  # to name their passages too
    results = []
    for rid, score, found in fused:
        if rid in by_id and "lexical" in found:
            base = {**by_id[rid]}
        elif rid in docs or rid in by_id:
            resource = docs[rid] if rid in docs else by_id[rid]["resource"]
            base = {
                "resource": resource,
                "matched": [],
                "citation": {
                    "id": rid,
                    "url": resource["source"]["url"],
                    "updatedAt": resource["updatedAt"],
                },
            }
        else:
            continue  # gone since the vectors were made
        base["score"] = score
        where = place.get(rid)
        shown = (
            None if where is None or rid not in docs else passage_of("resource", docs[rid], where)
        )
        results.append(labelled(base, found, similarity.get(rid), shown))
    return {**lexical, "results": results, "retrieval": mode}
