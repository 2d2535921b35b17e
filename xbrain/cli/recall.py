"""``xbrain recall``: the guidance a prompt needs (entries, skill pointers, resources)."""

from __future__ import annotations

import click

from ..lightcli import MODES, ONLY, SCORING, read_prompt
from .base import common_options, emit, store_path


@click.command("recall")
@click.argument("source", metavar="-", default="-")
@click.option(
    "--scoring",
    type=click.Choice(SCORING),
    help="relative (default): the best must clear --threshold, then up to --top-k within "
    "--max-dropoff of it; absolute: each must clear --threshold.",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    help="Retrieval: lexical, semantic or hybrid [hybrid when semantic recall is on here].",
)
@click.option("--top-k", type=int, help="Entries (and skills, resources) at most, 1-20 [3].")
@click.option("--threshold", type=float, help="Score floor [0.5].")
@click.option("--max-dropoff", type=float, help="Relative mode: the most below the best [0.1].")
@click.option("--budget", type=int, help="Characters at most [8000].")
@click.option("--include-retired", is_flag=True, help="Let retired entries surface too.")
@click.option(
    "--include-superseded",
    is_flag=True,
    help="Let superseded and out-of-validity entries surface too, marked in why.",
)
@click.option(
    "--as-of",
    metavar="DATE",
    help="Answer as the facts stood at DATE (ISO 8601): validity and supersession then.",
)
@click.option("--project", metavar="ID", help="This project's id (default: from the cwd).")
@click.option("--session", metavar="ID", help="Session id (a hook payload carries its own).")
@click.option(
    "--path",
    metavar="FILE",
    help="Also the entries whose paths globs match FILE (relative to the project root); "
    "stdin is then optional.",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    type=click.Choice(ONLY),
    help="Recall only these kinds (repeatable; e.g. --only stop-rule).",
)
@common_options
@click.pass_context
def recall(
    ctx: click.Context,
    source: str,
    scoring: str | None,
    mode: str | None,
    top_k: int | None,
    threshold: float | None,
    max_dropoff: float | None,
    budget: int | None,
    include_retired: bool,
    include_superseded: bool,
    as_of: str | None,
    project: str | None,
    session: str | None,
    path: str | None,
    only: tuple[str, ...],
) -> None:
    """Recall for a prompt on stdin (plain text or a Claude Code hook payload).

    Answers {results: [{id, kind, name, disclosure, text, score, why}], skipped: [{id,
    reason}], budget: {limit, used}}: rules and memories that match the prompt (by their
    queries, keywords or description, plus boost), skills as pointers, resources as
    cited candidates. With --path FILE (or the payload of a tool that edits or reads a
    file), the entries whose paths globs match the file come first. Within one session
    a rule is shown in full once, then as its one-liner; a memory, a skill pointer and
    a resource once. Nothing is cut in half:
    what does not fit the budget is skipped. Defaults [in brackets] can be set per store
    with `xbrain config recall.topK 5` (topK, threshold, maxDropoff, budget, scoring).
    Prints private content.
    """
    from ..errors import UsageError
    from ..lightcli import answer, note_missing_store

    if source != "-":
        raise UsageError("recall reads the prompt from stdin: xbrain recall - < prompt.txt")
    result = answer(
        store_path(ctx),
        read_prompt(path is not None),
        session=session,
        path=path,
        include_retired=include_retired,
        include_superseded=include_superseded,
        as_of=as_of,
        project=project,
        only=only,
        scoring=scoring,
        mode=mode,
        top_k=top_k,
        threshold=threshold,
        max_dropoff=max_dropoff,
        budget=budget,
    )
    note_missing_store(str(store_path(ctx)))
    emit(result)
