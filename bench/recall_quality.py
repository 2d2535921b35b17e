"""Recall quality: does ``xbrain recall`` surface the right entry, and stay quiet off-topic?

Entries are built from real manual pages (English and Chinese): a rule per command whose
query is the page's one-line description, whose body is a section of the page. Prompts:

* ``words``: four words drawn from the target's body (how a prompt mentions a topic);
* ``description``: the target's description with its first word dropped;
* ``off-topic``: chit-chat in English and Chinese that should recall nothing.

Recall's own scoring is compared with plain BM25 over the same entries' text (same
tokens, k1 1.2, b 0.75, the 35 % coverage rule, top 3), which has no notion of "nothing
applies" beyond that rule. Half the targets are a dev split (look at them when tuning),
half a test split (report them); nothing here was tuned on the test split.

Run: ``python bench/recall_quality.py [--entries 1000] [--prompts 200]``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus

from xbrain.recall.route import Options, Request, recall
from xbrain.search.tokenize import Tokenizer
from xbrain.store import Store

OFF_TOPIC = [
    "ok thanks",
    "thanks!",
    "sounds good",
    "yes please",
    "no, that's fine",
    "great, continue",
    "hello there",
    "what do you think?",
    "let's move on",
    "perfect",
    "好的",
    "继续",
    "谢谢",
    "可以",
    "没问题",
    "好的，谢谢",
    "嗯嗯",
    "下一步呢？",
    "你觉得呢",
    "太好了",
]


# Written apart from OFF_TOPIC and from recall's chatter list, after both: a held-out
# check that the gate was not fitted to the prompts above.
OFF_TOPIC_HELD_OUT = [
    "cool, go ahead",
    "that works for me",
    "why not",
    "nice job!",
    "ok, what's next?",
    "can you do that?",
    "hmm, not sure",
    "alright then",
    "awesome, thank you so much",
    "I see",
    "行吧",
    "明白了",
    "辛苦了",
    "就这样吧",
    "收到",
    "没事了",
    "那好吧",
    "对的",
    "然后呢",
    "我知道了",
]


def build_entries(count: int) -> list[dict[str, object]]:
    pages = corpus.resources("zh", None, 1500) + corpus.resources("en", None, 1500)
    entries, seen = [], set()
    for item in pages:
        name = str(item["title"]).split(":", 1)[0]
        purpose = " ".join(str(item["purpose"]).split())[:400]
        body = str(item["text"])
        if name in seen or not purpose or len(body.split()) < 8:
            continue
        if not corpus.storable({"description": purpose, "body": body}):
            continue  # an example credential in a man page: a put refuses it
        seen.add(name)
        entries.append(
            {
                "kind": "rule",
                "name": f"{name}-guidance",
                "description": purpose,
                "queries": [purpose],
                "body": body,
                "oneLiner": f"See {name}.",
            }
        )
        if len(entries) == count:
            break
    return entries


def bm25(entries: list[dict[str, object]], tokenizer: Tokenizer):  # type: ignore[no-untyped-def]
    docs = [
        tokenizer.counts(f"{e['name']} {e['description']} {' '.join(e['queries'])} {e['body']}")  # type: ignore[arg-type]
        for e in entries
    ]
    df: Counter[str] = Counter()
    for doc in docs:
        df.update(doc.keys())
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs) / n

    def rank(prompt: str) -> list[int]:
        terms = tokenizer.query_terms(prompt)
        if not terms:
            return []
        need = math.ceil(0.35 * len(terms))
        scored = []
        for i, doc in enumerate(docs):
            matched = [t for t in terms if t in doc]
            if len(matched) < need:
                continue
            length = sum(doc.values())
            score = 0.0
            for t in matched:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                tf = doc[t]
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))
            scored.append((score, i))
        return [i for _, i in sorted(scored, reverse=True)[:3]]

    return rank


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--prompts", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    entries = build_entries(args.entries)
    with tempfile.TemporaryDirectory(prefix="xbrain-recall-q-") as tmp:
        root = Path(tmp)
        store = Store(root / "store", cache_dir=root / "cache")
        for start in range(0, len(entries), 500):
            store.entry_put(entries[start : start + 500])
        tokenizer = Tokenizer(root / "cache")
        baseline = bm25(entries, tokenizer)
        targets = rng.sample(range(len(entries)), min(args.prompts, len(entries)))
        half = len(targets) // 2
        rows = []
        options = Options(kinds=("entry",))
        for split, chosen in (("dev", targets[:half]), ("test", targets[half:])):
            for construction in ("words", "description"):
                hits = {"recall": 0, "bm25": 0}
                for target in chosen:
                    entry = entries[target]
                    if construction == "words":
                        words = [w for w in str(entry["body"]).split() if len(w) > 3]
                        prompt = " ".join(rng.sample(words, min(4, len(words))))
                    else:
                        prompt = " ".join(str(entry["description"]).split()[1:]) or str(
                            entry["description"]
                        )
                    found = recall(root / "store", root / "cache", Request(prompt), options)
                    names = [r["name"] for r in found["results"]]
                    hits["recall"] += entry["name"] in names
                    hits["bm25"] += target in baseline(prompt)
                rows.append((split, construction, len(chosen), hits["recall"], hits["bm25"]))
        quiet = {"recall": 0, "bm25": 0}
        loud = []
        for prompt in OFF_TOPIC + OFF_TOPIC_HELD_OUT:
            found = recall(root / "store", root / "cache", Request(prompt), options)
            quiet["recall"] += not found["results"]
            quiet["bm25"] += not baseline(prompt)
            if found["results"]:
                loud.append(f"{prompt!r} → {found['results'][0]['name']}")
        tokenizer.close()
    print(f"recall quality: {len(entries)} man-page rules (prompts per split and construction)\n")
    print("| split | construction | prompts | recall hit@3 | plain BM25 hit@3 |")
    print("|---|---|---|---|---|")
    for split, construction, n, ours, theirs in rows:
        print(f"| {split} | {construction} | {n} | {ours / n:.3f} | {theirs / n:.3f} |")
    total = len(OFF_TOPIC) + len(OFF_TOPIC_HELD_OUT)
    print(
        f"\noff-topic prompts with nothing recalled: recall {quiet['recall']}/{total}, "
        f"plain BM25 {quiet['bm25']}/{total}"
    )
    for line in loud:
        print(f"  recall answered {line}")


if __name__ == "__main__":
    main()
