"""Which embedding model ranks best: each candidate's semantic leg alone, ungated (the
top 5 by cosine of the records' best passages), on the constructions of
``bench/semantic_quality.py`` (both halves: nothing is chosen here), English and
Chinese stores with ``--distractors`` English pages; then the gate derived from the
model (``xbrain/search/gate.py``) and how many off-topic prompts it keeps quiet.

Run: ``python bench/model_compare.py [--distractors 300] [packaged e5 minilm]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import semantic_quality as sq
from recall_quality import OFF_TOPIC, OFF_TOPIC_HELD_OUT

from xbrain.search.tokenize import Tokenizer
from xbrain.semantic import hybrid, semantic
from xbrain.semantic.gate import calibrate, queries, threshold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--distractors", type=int, default=300)
    parser.add_argument("models", nargs="*", default=["packaged", "e5", "minilm"])
    args = parser.parse_args()
    rng = random.Random(11)
    corpora, en_all = sq.corpora_for(rng, args.distractors)
    rows: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="xbrain-models-") as tmp:
        root = Path(tmp)
        cache = root / "cache"
        tokenizer = Tokenizer(cache)
        sets = sq.query_sets(corpora, en_all, random.Random(12), tokenizer, 60)
        for model in args.models:
            hybrid._PROVIDERS.clear()
            stores, built = {}, {}
            started = time.perf_counter()
            for language, docs in corpora.items():
                where = root / model / language
                stores[language], built[language] = sq.stocked(where, cache, docs, model)
            build = time.perf_counter() - started
            provider = hybrid.provider_for(stores["en"] / ".git")
            cells: dict[str, str] = {}
            for (construction, language), items in sets.items():
                control = stores[language] / ".git"
                vectors = semantic.catch_up(control, provider)
                docs = semantic.documents(control, "resource", [r[1] for r in vectors.rows])

                def rank(
                    text: str, vectors: Any = vectors, docs: Any = docs, p: Any = provider
                ) -> Any:
                    near = semantic.nearest(vectors, queries(p, [text])[0], ("resource",), -1.0, 5)
                    return [docs[rid]["title"] for _, rid, _, _ in near if rid in docs]

                r5, mrr = sq.measure(rank, items)
                cells[f"{construction} {language}"] = f"{r5:.3f} / {mrr:.3f}"
            gate = threshold(calibrate(provider))
            vectors = semantic.catch_up(stores["en"] / ".git", provider)
            off = OFF_TOPIC + OFF_TOPIC_HELD_OUT
            loud = 0
            for prompt in off:
                found = semantic.nearest(
                    vectors, queries(provider, [prompt])[0], ("resource",), gate, 1, 2.0
                )
                loud += bool(found)
            passages = sum(report["rows"] for report in built.values())
            cells["gate"] = f"{gate:.3f}"
            cells["off-topic quiet"] = f"{len(off) - loud}/{len(off)}"
            cells["build"] = f"{passages} passages in {build:.0f} s"
            rows[model] = cells
            print(model, cells, flush=True)
        tokenizer.close()
    columns = list(next(iter(rows.values())))
    print("\n| model | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for model, cells in rows.items():
        print(f"| {model} | " + " | ".join(cells[c] for c in columns) + " |")


if __name__ == "__main__":
    main()
