"""Hypothesis: an entry's similarity (``recall/entryscore.similarity``, one pass over its
terms since the served hook's profile) equals the formula it was written from, to the
last bit: the rarity-weighted share of its distinct terms the prompt holds, a term held
in another English form only counting ``STEMMED``, halved for one shared term of several."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.recall.entryscore import STEMMED, Idf, similarity
from xbrain.search.stems import stem

WORDS = ["sort", "sorted", "sorting", "list", "listing", "files", "file", "目录", "x.y", "ok"]


def _reference(
    terms: list[str], prompt: set[str], idf: Idf, roots: frozenset[str]
) -> tuple[float, list[str]]:
    unique = list(dict.fromkeys(terms))
    if not unique:
        return 0.0, []
    matched = [t for t in unique if t in prompt]
    formed: list[str] = []
    if roots and len(matched) < len(unique):
        formed = [t for t in unique if t not in prompt and stem(t) in roots]
    total = sum(idf.weight(t) for t in unique)
    held = sum(idf.weight(t) for t in matched) + STEMMED * sum(idf.weight(t) for t in formed)
    score = held / total
    if len(unique) > 1 and len(matched) + len(formed) < 2:
        score *= 0.5
    return score, [t for t in unique if t in matched or t in formed]


@settings(max_examples=200, deadline=None)
@given(
    terms=st.lists(st.sampled_from(WORDS), max_size=8),
    prompt=st.sets(st.sampled_from(WORDS), max_size=5),
    df=st.dictionaries(st.sampled_from(WORDS), st.integers(0, 50)),
    stemmed=st.booleans(),
)
def test_similarity_equals_its_formula(
    terms: list[str], prompt: set[str], df: dict[str, int], stemmed: bool
) -> None:
    roots = frozenset(stem(t) for t in prompt) if stemmed else frozenset()
    idf = Idf(df, 60)
    assert similarity(terms, prompt, idf, roots) == _reference(terms, prompt, idf, roots)
