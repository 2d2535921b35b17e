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

A request that names a file (a ``PreToolUse`` of ``Edit``, ``Write``, ``MultiEdit``,
``Read`` or ``NotebookEdit``; ``recall --path FILE``) also routes by the entries'
``paths`` globs (``pathroute``): each entry whose globs match the file, relative to the
project root, scores ``PATH`` plus its boost, whatever the prompt says; up to ``top_k``
of them come first (a stop-rule never: it blocks only on ``Stop``), with the same
disclosure.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import InvalidInputError
from ..inputs import check_store_dir
from ..search import entrycache
from ..search.entrycache import PATHS_TERM
from ..search.query import main_head
from ..search.stems import MARK, stems_of
from ..search.tokenize import Tokenizer
from ..semantic.hybrid import resolve_mode
from .candidates import CHATTER, entry_candidate, resource_candidates, skill_candidates
from .disclosure import fill_budget
from .entryscore import Idf, one_term, score_entry
from .pathroute import matching_glob, relative_file
from .prompt import Request, payload_request, project_folder, project_id, read_request
from .session import session_state
from .standing import now_if_needed, standing

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

PATH = 1.0


class Options(NamedTuple):
    """How to choose and how much to show (a NamedTuple: ``dataclasses`` costs a fresh
    hook ≈ 7 ms to import)."""

    scoring: str = "relative"
    top_k: int = 3
    threshold: float = 0.5
    max_dropoff: float = 0.1
    budget: int = 8000
    include_retired: bool = False
    include_superseded: bool = False  # superseded or out-of-validity entries, marked
    as_of: str | None = None  # the facts as they stood then (normalized ISO 8601)
    project: str | None = None
    kinds: tuple[str, ...] = ("entry", "skill", "resource")
    entry_kinds: tuple[str, ...] | None = None  # only entries of these kinds
    path_kinds: tuple[str, ...] | None = None  # routed by a file: these (None: entry_kinds)
    mode: str | None = None  # lexical, semantic or hybrid (None: hybrid when it can)
    given: frozenset[str] = frozenset()  # fields the caller set: the store's defaults yield
    record: bool = True  # telemetry notes what was shown (not a viewer's look: ``xbrain ui``)

    @classmethod
    def of(
        cls,
        *,
        include_retired: bool = False,
        include_superseded: bool = False,
        as_of: str | None = None,
        project: str | None = None,
        only: tuple[str, ...] = (),
        path_kinds: tuple[str, ...] | None = None,
        **given: Any,
    ) -> Options:
        """Options from what a caller set (``given``: scoring, top_k, threshold,
        max_dropoff, budget; None means unset, so the store's defaults apply); ``project``
        is a bare id; ``only`` limits the kinds (entry kinds, ``skill``, ``resource``);
        ``path_kinds``, the entry kinds a file may route to (default: as ``only``)."""
        given = {key: value for key, value in given.items() if value is not None}
        unknown = set(given) - {"scoring", "top_k", "threshold", "max_dropoff", "budget", "mode"}
        if unknown:
            raise TypeError(f"unknown recall options: {sorted(unknown)}")
        if as_of is not None:
            from ..kinds.entryfacts import moment

            as_of = moment(as_of, "--as-of")
        options = cls(
            **given,
            given=frozenset(given),
            include_retired=include_retired,
            include_superseded=include_superseded,
            as_of=as_of,
            project=("project:" + project.lower()) if project else None,
            path_kinds=path_kinds,
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


def _allowed(
    entry: dict[str, Any],
    options: Options,
    project: str,
    event: str | None,
    kinds: tuple[str, ...] | bool | None = True,
) -> bool:
    """Whether the call may show ``entry``: its kind asked for (``kinds``; True:
    ``options.entry_kinds``), active (or retired ones asked for), global or this
    project's, and for this hook event."""
    if kinds is True:
        kinds = options.entry_kinds
    if isinstance(kinds, tuple) and entry["kind"] not in kinds:
        return False
    if entry["status"] == "proposed" or (
        entry["status"] == "retired" and not options.include_retired
    ):
        return False  # a proposal waits for review
    if entry["scope"] not in ("global", project):
        return False
    return not (entry["events"] and event and event not in entry["events"])


def _routed(
    entry: dict[str, Any], file: str, options: Options, project: str, event: str | None
) -> Scored | None:
    """``entry`` as routed to by ``file`` (relative to the project root), when one of its
    globs matches it and the call may show it; a stop-rule never is."""
    kinds = options.path_kinds if options.path_kinds is not None else options.entry_kinds
    if entry["kind"] == "stop-rule" or not _allowed(entry, options, project, event, kinds):
        return None
    glob = matching_glob(entry["paths"], file)
    if glob is None:
        return None
    return PATH + entry["boost"], entry, {"via": "path", "glob": glob, "matched": [file]}


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
    if head is None or not (request.prompt.strip() or request.path):
        return empty
    file = None
    if request.path is not None:  # outside the project, or no usable path: no route
        from ..workdir import working_directory

        file = relative_file(request.path, request.cwd or working_directory())
    tokenizer = Tokenizer(cache_dir)
    routed: list[dict[str, Any]] = []  # entries the file routes to: first, as they are
    try:
        words = tokenizer.words(request.prompt)
        order = list(dict.fromkeys(words))
        prompt = set(words) | set(tokenizer.search_words(request.prompt))
        if not prompt and file is None:
            return empty
        forms = stems_of(prompt)  # other English forms match too, weaker (entryscore)
        roots = frozenset(forms.values())
        asked = prompt | {MARK + root for root in roots} | ({PATHS_TERM} if file else set())
        found = _candidates(store_dir, head, asked, tokenizer)
        options = options.with_defaults(found.defaults)
        options.check()
        project = options.project or _resolved(store_dir, request, found.defaults)
        lexical: dict[str, list[dict[str, Any]]] = {}
        skipped: list[dict[str, Any]] = []
        when = options.as_of or now_if_needed(found.links, found.entries)
        if "entry" in options.kinds:
            idf = Idf(found.df, found.n)
            # once per prompt, not per entry: a long prompt has thousands of terms
            weight_total = sum(idf.weight(t) for t in order)
            position = {t: i for i, t in enumerate(order) if t not in CHATTER}
            scored: list[Scored] = []
            by_path: list[Scored] = []
            for entry, held in found.entries:
                if file is not None and PATHS_TERM in held:
                    held = held - {PATHS_TERM}
                    hit = _routed(entry, file, options, project, request.event)
                    if hit is not None:
                        stands = standing(entry, found.links, when) if when else None
                        if stands is None or options.include_superseded:
                            by_path.append(hit if stands is None else (*hit[:2], hit[2] | stands))
                        continue  # routed (or not in force): not scored again by the prompt
                shared = {t for t in held if t in prompt}
                formed = {t for t in forms if t not in held and MARK + forms[t] in held}
                if not shared | formed or (len(shared | formed) < 2 and not one_term(entry)):
                    continue  # one shared term: at most half of a longer query
                if not _allowed(entry, options, project, request.event):
                    continue
                stands = standing(entry, found.links, when) if when else None
                if stands is not None and not options.include_superseded:
                    continue
                within = sorted((t for t in shared if t in position), key=position.__getitem__)
                near = sorted((t for t in formed if t in position), key=position.__getitem__)
                score, why = score_entry(
                    entry, prompt, within, weight_total, idf, request.prompt, roots, tuple(near)
                )
                if stands is not None:
                    why = {**why, **stands}  # shown, marked
                if score > 0:
                    scored.append((score, entry, why))
            kept, cut = choose(scored, options)
            by_path, cut_path = choose(by_path, options.changed(scoring="absolute", threshold=0))
            skipped += cut_path + cut
            ids = [entry["id"] for _, entry, _ in by_path + kept]
            texts = entrycache.bodies(store_dir / ".git", ids)
            shown = [
                entry_candidate({**entry, "body": texts.get(entry["id"], "")}, score, why)
                for score, entry, why in by_path + kept
            ]
            routed, lexical["entry"] = shown[: len(by_path)], shown[len(by_path) :]
        wide = min(20, options.top_k * 3)  # room for what this session saw already
        if prompt and "skill" in options.kinds:  # (a file alone asks for entries only)
            lexical["skill"] = skill_candidates(
                store_dir, cache_dir, request.prompt, order, wide, tokenizer
            )
        if prompt and "resource" in options.kinds:
            lexical["resource"] = resource_candidates(
                store_dir, cache_dir, request.prompt, order, wide, tokenizer
            )
    finally:
        tokenizer.close()
    note: dict[str, str] = {}
    both: list[dict[str, Any]] | None = None  # both legs' candidates, fused
    if mode != "lexical" and prompt:
        from ..semantic.hybrid import or_lexical
        from .recallfuse import recall_fused

        def allowed(entry: dict[str, Any]) -> bool:
            at = when or now_if_needed({}, [(entry, set())])
            if at and standing(entry, found.links, at) and not options.include_superseded:
                return False
            return _allowed(entry, options, project, request.event)

        def fused() -> list[dict[str, Any]]:
            return recall_fused(store_dir, request.prompt, lexical, mode, options, allowed, order)

        # the endpoint failing: the lexical answer, as a fresh hook gives
        both, note = or_lexical(store_dir / ".git", options.mode, fused)
    if both is None:
        candidates = [item for kind in options.kinds for item in lexical.get(kind, [])]
    else:
        candidates = both
    if "resource" in options.kinds:  # proposed, superseded, out of validity: left out
        from ..search.resourcestanding import mark, not_in_force

        candidates = mark(
            candidates,
            not_in_force(store_dir, options.as_of),
            lambda item: item["id"] if item["kind"] == "resource" else None,
            options.include_superseded,
            "why",
        )
    if routed:
        first = {item["id"] for item in routed}
        candidates = routed + [item for item in candidates if item["id"] not in first]
    with session_state(store_dir / ".git", request.session) as state:
        results, more, used = fill_budget(
            candidates, state["shown"], options.budget, cap=options.top_k
        )
    import sqlite3

    from . import telemetry

    with contextlib.suppress(sqlite3.Error, OSError):  # never fails a prompt
        if options.record:
            telemetry.record(store_dir / ".git", request.session, request.event, results)
    return {
        "results": results,
        "skipped": skipped + more,
        "budget": {"limit": options.budget, "used": used},
        **note,
    }
