"""The hybrid fusion on a second corpus: Debian's package descriptions (packages.py).

``bench/fusion_tune.py`` and ``bench/semantic_quality.py`` measure on manual pages only.
This one asks the same question of a corpus nothing in the fusion was chosen on: the
packages apt describes in English and Chinese, one store per language with semantic
recall on (the packaged model). Two constructions, each split into a dev and a test
half (alternating queries):

* ``description`` — a package's one-line synopsis, taken out of the package (the right
  answers: any package with the same long description or the same synopsis);
* ``cross`` — the other language's synopsis of the same package, asked of the store.

Both legs are run once per query (``fusion_tune.legs_of``) and fused offline as
``fusion_tune.fused`` does, with the shipped numbers (k 10, semantic weight 0.8, depths
10 and 5, floor 0.40, within 0.1 of the best cosine): printed per half, construction and
store, Recall@5 / MRR@5 of the lexical leg alone and of the fusion with a lexical hit's
weight scaled by its share of the query's terms to the power 0 (whole weights, as
shipped), ½, 1 and 2.

Run: ``python bench/fusion_packages.py`` (needs the semantic extra and apt's Chinese
descriptions: ``make bench`` fetches them; ≈ 2 min).
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import packages
from fusion_tune import fused, legs_of, recall_mrr, shipped

from xbrain.embedding import ProviderSpec
from xbrain.kinds.model import normalize_resource
from xbrain.search.tokenize import Tokenizer
from xbrain.semantic import hybrid
from xbrain.store import Store

POWERS = (0.0, 0.5, 1.0, 2.0)
Query = tuple[str, set[str]]  # (text, the titles that answer it)


def description_queries(docs: list[dict[str, Any]], rng: random.Random, count: int) -> list[Query]:
    """Synopses as queries, each taken out of its package (``docs`` is changed)."""
    order = list(range(len(docs)))
    rng.shuffle(order)
    out: list[Query] = []
    for target in order:
        line = str(docs[target]["purpose"])
        if not line:
            continue
        text = docs[target]["text"]
        answers = {str(d["title"]) for d in docs if d["text"] == text or d["purpose"] == line}
        docs[target]["purpose"] = ""
        out.append((line, answers))
        if len(out) == count:
            break
    return out


def figures(tops: list[list[str]], queries: list[Query]) -> str:
    """Recall@5 / MRR@5 of ``tops`` (the first five titles per query)."""
    recall, mrr = recall_mrr(tops, [answers for _, answers in queries])
    return f"{recall:.3f} / {mrr:.3f}"


def package_sets(root: Path, cache: Path, rng: random.Random) -> dict[tuple[str, str], list[Query]]:
    """One store per language under ``root`` (semantic recall on), and the query sets:
    (construction, language) → queries. Both halves; the caller splits them."""
    raw = {
        lang: [normalize_resource(r).resource for r in packages.resources(lang)]
        for lang in ("en", "zh")
    }
    if not raw["zh"]:
        raise SystemExit("no Chinese package descriptions: make bench fetches them")
    sets: dict[tuple[str, str], list[Query]] = {}
    for lang, original in raw.items():
        docs = [dict(d) for d in original]
        sets[("description", lang)] = description_queries(docs, rng, 150)
        store = Store(root / lang, cache_dir=cache)
        for first in range(0, len(docs), 1000):
            store.put(docs[first : first + 1000])
        store.reindex(semantic=ProviderSpec("packaged"))
    synopsis = {lang: {str(d["title"]): str(d["purpose"]) for d in raw[lang]} for lang in raw}
    both = sorted(set(synopsis["en"]) & set(synopsis["zh"]))
    rng.shuffle(both)
    for asked, other in (("zh", "en"), ("en", "zh")):
        named = [n for n in both[:150] if synopsis[other][n]]
        sets[("cross", asked)] = [(synopsis[other][n], {n}) for n in named]
    return sets


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="xbrain-fusion-packages-") as tmp:
        root, cache = Path(tmp), Path(tmp) / "cache"
        tokenizer = Tokenizer(cache)
        sets = package_sets(root, cache, random.Random(5))
        ours = shipped(round(hybrid.provider_for(root / "en" / ".git").floor, 2))
        head = " | ".join(f"hybrid, share^{p:g}" for p in POWERS)
        print(f"| half | construction | store | n | lexical | {head} |")
        print("|---" * (5 + len(POWERS)) + "|")
        for half, name in ((0, "dev"), (1, "test")):
            for (construction, lang), queries in sets.items():
                part = queries[half::2]
                legs = [legs_of(root / lang, cache, tokenizer, text) for text, _ in part]
                cells = [figures([[t for t, _, _ in lex] for lex, _ in legs], part)]
                for power in POWERS:
                    tops = [fused(lex, sem, **ours, power=power) for lex, sem in legs]
                    cells.append(figures(tops, part))
                print(f"| {name} | {construction} | {lang} | {len(part)} | {' | '.join(cells)} |")
        tokenizer.close()


if __name__ == "__main__":
    main()
