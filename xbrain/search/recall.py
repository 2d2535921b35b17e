"""``xbrain recall``: the guidance a prompt needs, within a budget, once per session.

Entries score by their best query, keyword or description against the prompt, plus
their ``boost``: a query scores the share of its terms (weighted by rarity among the
entries) that the prompt holds, halved when only one of several terms is there; a
keyword the prompt holds scores ``KEYWORD``; the name and description score like a query
at ``ABOUT`` of the weight; and the share of the prompt's terms found anywhere in the
entry (body included, three at least) at ``CONTENT``. A stop-rule, which blocks the
agent, matches by its queries and keywords only. ``relative`` scoring keeps up to
``top_k`` within ``max_dropoff`` of the best when the best clears ``threshold``;
``absolute`` keeps each that clears it. Skills come as Level 0 pointers and resources as
cited candidates, each only when it matched half of the prompt's terms, two at least.
The answer is filled greedily into the budget (a text that does not fit falls back to
its one-liner, else is skipped and the next is tried; nothing is cut). Per session, a
rule is shown in full once and then as its one-liner (in full again when it changed); a
memory, a skill pointer and a resource once.
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import InvalidInputError
from ..inputs import check_store_dir
from . import entrycache
from .candidates import CHATTER, entry_candidate, resource_candidates, skill_candidates
from .disclosure import fill_budget
from .hybrid import resolve_mode
from .prompt import Request, payload_request, project_folder, project_id, read_request
from .query import main_head
from .session import session_state
from .tokenize import Tokenizer

__all__ = [
    "Options",
    "Request",
    "choose",
    "fill_budget",
    "payload_request",
    "project_id",
    "read_request",
    "recall",
]

KEYWORD = 0.6
ABOUT = 0.8
CONTENT = 0.7


class Options(NamedTuple):
    """How to choose and how much to show (a NamedTuple: ``dataclasses`` costs a fresh
    hook ≈ 7 ms to import)."""

    scoring: str = "relative"
    top_k: int = 3
    threshold: float = 0.5
    max_dropoff: float = 0.1
    budget: int = 8000
    include_retired: bool = False
    project: str | None = None
    kinds: tuple[str, ...] = ("entry", "skill", "resource")
    entry_kinds: tuple[str, ...] | None = None  # only entries of these kinds
    mode: str | None = None  # lexical, semantic or hybrid (None: hybrid when it can)
    given: frozenset[str] = frozenset()  # fields the caller set: the store's defaults yield

    @classmethod
    def of(
        cls,
        *,
        include_retired: bool = False,
        project: str | None = None,
        only: tuple[str, ...] = (),
        **given: Any,
    ) -> Options:
        """Options from what a caller set (``given``: scoring, top_k, threshold,
        max_dropoff, budget; None means unset, so the store's defaults apply); ``project``
        is a bare id; ``only`` limits the kinds (entry kinds, ``skill``, ``resource``)."""
        given = {key: value for key, value in given.items() if value is not None}
        unknown = set(given) - {"scoring", "top_k", "threshold", "max_dropoff", "budget", "mode"}
        if unknown:
            raise TypeError(f"unknown recall options: {sorted(unknown)}")
        options = cls(
            **given,
            given=frozenset(given),
            include_retired=include_retired,
            project=("project:" + project.lower()) if project else None,
        )
        if not only:
            return options
        entry_kinds = tuple(kind for kind in only if kind not in ("skill", "resource"))
        kinds = tuple(k for k in ("skill", "resource") if k in only)
        return options.changed(
            kinds=(("entry",) if entry_kinds else ()) + kinds,
            entry_kinds=entry_kinds or None,
        )

    def with_defaults(self, stored: dict[str, Any]) -> Options:
        """The store's recall defaults (``xbrain config recall.KEY``) for what the caller
        did not set."""
        names = {"topK": "top_k", "maxDropoff": "max_dropoff"}
        changes = {names.get(key, key): value for key, value in stored.items()}
        changes = {
            key: value
            for key, value in changes.items()
            if key in ("scoring", "top_k", "threshold", "max_dropoff", "budget")
            and key not in self.given
        }
        return self.changed(**changes)

    def changed(self, **fields: Any) -> Options:
        """A copy with ``fields`` replaced."""
        return self._replace(**fields)

    def check(self) -> None:
        """Refuse values outside their ranges (one clear error)."""
        if self.scoring not in ("relative", "absolute"):
            raise InvalidInputError("--scoring must be relative or absolute.")
        if not 1 <= self.top_k <= 20:
            raise InvalidInputError("--top-k must be 1-20.")
        if not 0 <= self.threshold <= 2 or not 0 <= self.max_dropoff <= 2:
            raise InvalidInputError("--threshold and --max-dropoff must be 0-2.")
        if not 100 <= self.budget <= 200_000:
            raise InvalidInputError("--budget must be 100-200,000 characters.")


def _similarity(terms: list[str], prompt: set[str], idf: Idf) -> tuple[float, list[str]]:
    unique = list(dict.fromkeys(terms))
    if not unique:
        return 0.0, []
    matched = [t for t in unique if t in prompt]
    total = sum(idf.weight(t) for t in unique)
    score = sum(idf.weight(t) for t in matched) / total
    if len(unique) > 1 and len(matched) < 2:
        score *= 0.5  # one shared word out of several is weak evidence
    return score, matched


def _score(
    entry: dict[str, Any],
    prompt: set[str],
    found: list[str],
    weight_total: float,
    idf: Idf,
    asked: str,
) -> tuple[float, dict[str, Any]]:
    """``asked``: the prompt as written (a ``caseSensitive`` entry's keyword must be in
    it in the same case; its terms alone are lower-cased)."""
    best: tuple[float, dict[str, Any]] = (0.0, {"via": None, "matched": []})
    for text, terms in entry["queries"]:
        score, matched = _similarity(terms, prompt, idf)
        if score > best[0]:
            best = (score, {"via": "query", "query": text, "matched": matched})
    for text, terms in entry["keywords"]:
        exact = not entry.get("caseSensitive") or text in asked
        if terms and all(t in prompt for t in terms) and exact and best[0] < KEYWORD:
            best = (KEYWORD, {"via": "keyword", "query": text, "matched": terms})
    if entry["kind"] == "stop-rule":  # it blocks the agent: only its own queries count
        return (best[0] + entry["boost"], best[1]) if best[0] > 0 else (0.0, best[1])
    score, matched = _similarity(entry["about"], prompt, idf)
    if score * ABOUT > best[0]:
        best = (score * ABOUT, {"via": "description", "matched": matched})
    if len(found) >= 3:  # the prompt's terms the entry holds anywhere (body too), three at least
        share = sum(idf.weight(t) for t in found) / weight_total
        if share * CONTENT > best[0]:
            best = (share * CONTENT, {"via": "content", "matched": found})
    if best[0] <= 0:
        return 0.0, best[1]
    return best[0] + entry["boost"], best[1]


class Idf:
    """Inverse document frequency among the entries, computed per term on demand (a
    prompt touches few terms); a term no entry holds weighs as the rarest."""

    def __init__(self, df: dict[str, int], n: int) -> None:
        self.df = df
        self.n = n
        self._known: dict[str, float] = {}

    def weight(self, term: str) -> float:
        """``log(1 + (n + 1) / (df + 0.5))``."""
        known = self._known.get(term)
        if known is None:
            known = self._known[term] = math.log(1 + (self.n + 1) / (self.df.get(term, 0) + 0.5))
        return known


def _resolved(store_dir: Path, request: Request, defaults: dict[str, Any]) -> str:
    """The project of the request's folder, noted in the local project registry."""
    from .projects import note

    project = project_id(request.cwd, defaults.get("projects"))
    note(store_dir / ".git", str(project_folder(request.cwd)), project.removeprefix("project:"))
    return project


def _candidates(
    store_dir: Path, head: str, prompt: set[str], tokenizer: Tokenizer
) -> entrycache.Candidates:
    """The entries sharing a term with the prompt (the cache rebuilt from git first when
    it does not reflect ``head``)."""
    control = store_dir / ".git"
    found = entrycache.candidates(control, head, prompt)
    if found is None:
        head = entrycache.rebuild(store_dir, tokenizer) or head
        found = entrycache.candidates(control, head, prompt)
    return found or entrycache.Candidates([], {}, 0, {})


def _allowed(entry: dict[str, Any], options: Options, project: str, event: str | None) -> bool:
    """Whether the call may show ``entry``: its kind asked for, active (or retired ones
    asked for), global or this project's, and for this hook event."""
    if options.entry_kinds is not None and entry["kind"] not in options.entry_kinds:
        return False
    if entry["status"] == "retired" and not options.include_retired:
        return False
    if entry["scope"] not in ("global", project):
        return False
    return not (entry["events"] and event and event not in entry["events"])


def _one_term(entry: dict[str, Any]) -> bool:
    """Whether a single term can match the entry fully (a one-word query or keyword, or a
    name alone)."""
    texts = [terms for _, terms in entry["queries"] + entry["keywords"]] + [entry["about"]]
    return any(len(set(terms)) == 1 for terms in texts)


Scored = tuple[float, dict[str, Any], dict[str, Any]]  # (score, entry, why)


def choose(scored: list[Scored], options: Options) -> tuple[list[Scored], list[dict[str, Any]]]:
    """The entries kept by the scoring mode, and the ones that cleared but were cut."""
    scored.sort(key=lambda item: (-item[0], item[1]["id"]))
    if not scored or (options.scoring == "relative" and scored[0][0] < options.threshold):
        return [], []
    kept: list[Scored] = []
    cut: list[dict[str, Any]] = []
    for item in scored:
        score = item[0]
        if options.scoring == "absolute" and score < options.threshold:
            break
        if options.scoring == "relative" and score < scored[0][0] - options.max_dropoff:
            if score >= options.threshold:
                cut.append({"id": item[1]["id"], "reason": "dropoff"})
            continue
        if len(kept) >= options.top_k:
            cut.append({"id": item[1]["id"], "reason": "top-k"})
            continue
        kept.append(item)
    return kept, cut


def recall(store_dir: Path, cache_dir: Path, request: Request, options: Options) -> dict[str, Any]:
    """Entries, skill pointers and resource candidates for ``request`` (see the module)."""
    options.check()
    empty = {"results": [], "skipped": [], "budget": {"limit": options.budget, "used": 0}}
    mode = resolve_mode(store_dir / ".git", options.mode)
    head = main_head(store_dir / ".git")
    if head is None:
        check_store_dir(store_dir)  # a file, a folder that is no store: said, as search does
    if head is None or not request.prompt.strip():
        return empty
    tokenizer = Tokenizer(cache_dir)
    try:
        words = tokenizer.words(request.prompt)
        order = list(dict.fromkeys(words))
        prompt = set(words) | set(tokenizer.counts(request.prompt))
        if not prompt:
            return empty
        found = _candidates(store_dir, head, prompt, tokenizer)
        options = options.with_defaults(found.defaults)
        options.check()
        project = options.project or _resolved(store_dir, request, found.defaults)
        lexical: dict[str, list[dict[str, Any]]] = {}
        skipped: list[dict[str, Any]] = []
        if "entry" in options.kinds:
            idf = Idf(found.df, found.n)
            # once per prompt, not per entry: a long prompt has thousands of terms
            weight_total = sum(idf.weight(t) for t in order)
            position = {t: i for i, t in enumerate(order) if t not in CHATTER}
            scored = []
            for entry, held in found.entries:
                if len(held) < 2 and not _one_term(entry):
                    continue  # one shared term: at most half of a longer query
                if not _allowed(entry, options, project, request.event):
                    continue
                within = sorted((t for t in held if t in position), key=position.__getitem__)
                score, why = _score(entry, prompt, within, weight_total, idf, request.prompt)
                if score > 0:
                    scored.append((score, entry, why))
            kept, cut = choose(scored, options)
            skipped += cut
            texts = entrycache.bodies(store_dir / ".git", [entry["id"] for _, entry, _ in kept])
            lexical["entry"] = [
                entry_candidate({**entry, "body": texts.get(entry["id"], "")}, score, why)
                for score, entry, why in kept
            ]
        wide = min(20, options.top_k * 3)  # room for what this session saw already
        if "skill" in options.kinds:
            lexical["skill"] = skill_candidates(
                store_dir, cache_dir, request.prompt, order, wide, tokenizer
            )
        if "resource" in options.kinds:
            lexical["resource"] = resource_candidates(
                store_dir, cache_dir, request.prompt, order, wide, tokenizer
            )
    finally:
        tokenizer.close()
    note: dict[str, str] = {}
    both: list[dict[str, Any]] | None = None  # both legs' candidates, fused
    if mode != "lexical":
        from .hybrid import or_lexical
        from .recallfuse import recall_fused

        def allowed(entry: dict[str, Any]) -> bool:
            return _allowed(entry, options, project, request.event)

        def fused() -> list[dict[str, Any]]:
            return recall_fused(store_dir, request.prompt, lexical, mode, options, allowed, order)

        # the endpoint failing: the lexical answer, as a fresh hook gives
        both, note = or_lexical(store_dir / ".git", options.mode, fused)
    if both is None:
        candidates = [item for kind in options.kinds for item in lexical.get(kind, [])]
    else:
        candidates = both
    with session_state(store_dir / ".git", request.session) as state:
        results, more, used = fill_budget(
            candidates, state["shown"], options.budget, cap=options.top_k
        )
    import sqlite3

    from . import telemetry

    with contextlib.suppress(sqlite3.Error, OSError):  # never fails a prompt
        telemetry.record(store_dir / ".git", request.session, request.event, results)
    return {
        "results": results,
        "skipped": skipped + more,
        "budget": {"limit": options.budget, "used": used},
        **note,
    }
