"""A skill as the skill index holds it, and the index's whole build on both cores.

A skill's document is its state (``skill.yaml``), the revision recall shows and that
revision's ``SKILL.md``: three files (seven git objects) read and parsed per skill, the
state and the revision in the plain YAML xbrain writes and the ``SKILL.md``'s front
matter when it is flat one-line text, read without the parser
(:mod:`xbrain.kinds.plainyaml`), the objects from the pack the last one came from
(``git.objects``); then tokenized, as a resource is. A first build of many skills is
therefore shared with a helper process as the resource index's build is (:mod:`.build`):
each process parses the states of the chunks it takes and reads their revisions itself;
the helper reads them from its own repository handle at the same commit.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the skill index's fast path never imports git
    from ..core import View

__all__ = [
    "SkillShape",
    "document",
    "documents",
    "helper_shape",
    "skill_fields",
    "source",
    "states",
]

# A helper pays off once the work well outlasts what it costs before it is of use: its
# start (an interpreter, xbrain, the segmenter) and its first Chinese, cut by the query
# segmenter until jieba-rs pays for its load; measured (issue 45 item 4, load 6.5, CPU
# of both processes) as 0.35-0.45 s over the serial build's, at 1,000 skills as at 2,500,
# while a skill now costs 0.4-0.45 ms alone (1,000: 0.46 s, 2,500: 0.95 s of CPU). So
# with an idle second core the shared build breaks even near 1,000 skills and would save
# about a sixth at 1,500 (estimated from those figures: no core was idle to time it); on
# a busy machine (``idle_core``) it only loses, as it did at every size measured.
PARALLEL_MIN = 1_500
CHUNK = 40  # skills per chunk: the helper holds three before it has started


def idle_core() -> bool:
    """Whether a core looks free (the last minute's load average leaves one): on a busy
    machine a helper only adds its start to the build (1,000 skills at a load of 12:
    2.6 s shared, 1.8 s on one core)."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average here: assume the cores are free
        return True
    return load <= (os.cpu_count() or 1) - 1


def skill_fields(doc: dict[str, Any]) -> tuple[str, ...]:
    """A skill's text per index field: name where a title goes, description where a
    purpose goes, the body where a resource's text goes."""
    return ("", doc["name"], doc["description"], "", "", doc["level1"]["instructions"])


def document(view: View, state: dict[str, Any] | None) -> dict[str, Any] | None:
    """The indexed form of the skill whose parsed state is ``state`` (None: archived,
    gone, only proposed, or one that sets ``disable-model-invocation``): what Level 0
    lists, the text it ranks, and the Level 1 answer of the revision recall shows."""
    from ..errors import CorruptStoreError
    from ..kinds import skillshow

    if state is None or state["status"] != "active":
        return None
    slug = state["slug"]
    entry, fallback = skillshow.served(state)
    if entry is None:  # only proposed revisions: none is offered before review
        return None
    try:
        shown, offered = skillshow.level1_offered(view, state, entry, fallback)
    except CorruptStoreError:  # a changed revision is never served: its reads say why
        return None
    if not offered:  # disable-model-invocation: read when asked by name, never offered
        return None
    return {
        "id": slug,  # the index's key (ties rank by it): no hashing to look a skill up
        "slug": slug,
        "name": shown["frontmatter"]["name"],
        "description": shown["frontmatter"]["description"],
        "published": not fallback,
        "revision_id": entry["id"],
        "level1": shown,
    }


class SkillShape:
    """Parsed skill states → skill documents, revisions read through ``view``."""

    def __init__(self, view: View) -> None:
        self.view = view

    def fields(self, doc: dict[str, Any]) -> tuple[str, ...]:
        """A skill's text per index field."""
        return skill_fields(doc)

    def documents(self, records: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
        """Each state's document (None: no document)."""
        return [document(self.view, state) for state in records]


def helper_shape(store: Path, commit: str) -> SkillShape:
    """The helper process's shape: its own repository handle at ``commit``."""
    from ..core import CommitId, GitStore, View

    return SkillShape(View(GitStore(store).snapshot(CommitId(commit))))


def states(view: View) -> list[tuple[str, str]]:
    """``(path, blob id)`` of each skill's ``skill.yaml`` at ``view``'s commit, in slug
    order (a name whose state is missing or not a file is no skill, as
    :func:`xbrain.kinds.skill.read_state` has it)."""
    from ..kinds import skill as kind

    items = []
    for slug in sorted(view.children(kind.DIRECTORY)):
        blob = view.snap.blob_id(kind.state_path(slug))
        if blob is not None:
            items.append((kind.state_path(slug), blob))
    return items


def documents(view: View, items: list[tuple[str, str]] | None = None) -> Iterator[dict[str, Any]]:
    """Every indexed skill's document at ``view``'s commit, in slug order (``items``:
    :func:`states`, when the caller has them): the one serial first build, whether
    ``reindex`` builds alone or recall builds a missing index."""
    from ..core.view import parse_stored
    from ..kinds import skill as kind

    for path, blob in states(view) if items is None else items:
        state = parse_stored(kind.parse_state, path, view.snap.blob(blob))
        if (doc := document(view, state)) is not None:
            yield doc


def source(store: Path, view: View, meta: dict[str, str]) -> Any:
    """What :func:`.build.rebuild` needs to build the skill index of ``view``'s commit
    (``store`` holds it): each skill's ``skill.yaml`` in slug order, then ``meta``;
    shared with a helper when the skills are many and a core idle."""
    import functools

    from ..kinds import skill as kind
    from .build import Source

    items = states(view)
    return Source(
        listing=(kind.parse_state, items),
        here=SkillShape(view),
        helper=functools.partial(helper_shape, store, str(view.snap.commit)),
        serial=functools.partial(documents, view, items),
        least=PARALLEL_MIN if idle_core() else 1 << 62,
        size=CHUNK,
        meta=meta,
    )
