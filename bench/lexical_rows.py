"""xbrain's lexical ranking against plain BM25 on the suite's known-item rows, by issue
43's rule: a row is below BM25 only when the paired sign test over both halves pooled
gives p < 0.05 on Recall@5 or MRR@5 (per query: found in the top 5; the reciprocal rank);
and the coverage gate may drop no more questions than BM25's (the zero-result rate).

Run ``python bench/lexical_rows.py [--languages zh] [--corpora man,catalog]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite

from xbrain.search.tokenize import Tokenizer


def sign_test(won: int, lost: int) -> float:
    """The two-sided sign test's p-value of ``won`` against ``lost``."""
    n = won + lost
    tail = sum(math.comb(n, k) for k in range(min(won, lost) + 1)) / 2**n if n else 1.0
    return min(1.0, 2 * tail)


def compare(ours: list[int], base: list[int]) -> tuple[str, bool]:
    """The paired splits on Recall@5 and MRR@5, and whether ours is below by the rule."""
    r_won = sum(bool(a) and not b for a, b in zip(ours, base, strict=True))
    r_lost = sum(bool(b) and not a for a, b in zip(ours, base, strict=True))
    rr = [((1 / a if a else 0.0), (1 / b if b else 0.0)) for a, b in zip(ours, base, strict=True)]
    m_won, m_lost = sum(a > b for a, b in rr), sum(a < b for a, b in rr)
    p_r, p_m = sign_test(r_won, r_lost), sign_test(m_won, m_lost)
    below = (r_lost > r_won and p_r < 0.05) or (m_lost > m_won and p_m < 0.05)
    return f"+{r_won}/-{r_lost} p={p_r:.3f} | +{m_won}/-{m_lost} p={p_m:.3f}", below


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--languages", default="en,zh")
    parser.add_argument("--corpora", default=",".join(suite.available()))
    parser.add_argument("--queries", type=int, default=400)
    args = parser.parse_args()
    print(
        "| corpus | lang | queries | n | xbrain R@5 | MRR@5 | zero | BM25 R@5 | MRR@5 | zero "
        "| R@5 split | MRR@5 split | verdict |"
    )
    print("|" + "---|" * 13)
    with tempfile.TemporaryDirectory(prefix="xbrain-rows-") as tmp:
        for corpus_name in args.corpora.split(","):
            for language in args.languages.split(","):
                tokenizer = Tokenizer(Path(tmp))
                try:
                    ids, constructions = suite.prepare(
                        corpus_name, language, args.queries, tokenizer, 1500
                    )
                    for construction, (ranked_by, queries) in constructions.items():
                        figures = {
                            name: suite.measure(
                                [ranked_by[name](terms, 5) for _, terms in queries], ids, queries
                            )
                            for name in ("xbrain", "bm25")
                        }
                        (ours, ours_first), (base, base_first) = figures["xbrain"], figures["bm25"]
                        split, below = compare(ours_first, base_first)
                        dropped = ours[3] > base[3]
                        verdict = "below" if below else "at or above"
                        verdict += "; drops more" if dropped else ""
                        print(
                            f"| {corpus_name} | {language} | {construction} | {len(queries)} | "
                            f"{ours[1]:.3f} | {ours[2]:.3f} | {ours[3]:.3f} | {base[1]:.3f} | "
                            f"{base[2]:.3f} | {base[3]:.3f} | {split.replace(' | ', ' | ')} | "
                            f"{verdict} |"
                        )
                finally:
                    tokenizer.close()


if __name__ == "__main__":
    main()
