"""Each embedding model candidate's speed on this machine: load time (in a fresh
process, to the first vector), one short query's time (median of 20), and passages per
second over 256 real manual-page passages (``xbrain/search/passages.py`` windows, as
``reindex --semantic`` embeds them, batched by ``embedbulk``, one process).

Run: ``python bench/model_speed.py [packaged e5 minilm]``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

CHILD = """
import sys, time
sys.path.insert(0, {bench!r}); sys.path.insert(0, {root!r})
started = time.perf_counter()
name = {name!r}
if name == "packaged":
    from xbrain.embedding import ProviderSpec, load_provider
    provider = load_provider(ProviderSpec("packaged"))
elif name == "e5":
    from semantic_quality import E5Provider
    provider = E5Provider()
else:
    from minilm import MiniLMProvider
    provider = MiniLMProvider()
provider.embed(["first"])
print(time.perf_counter() - started)
"""


def main() -> None:
    import corpus

    from xbrain.semantic.embedbulk import embed_all
    from xbrain.semantic.gate import queries
    from xbrain.semantic.passages import passages

    names = sys.argv[1:] or ["packaged", "e5", "minilm"]
    docs = corpus.resources("en", None, 4000)[:300] + corpus.resources("zh", None, 4000)[:40]
    texts = [text for doc in docs for _, text in passages("resource", doc)][:256]
    words = statistics.mean(len(t.split()) for t in texts)
    bench, root = str(Path(__file__).parent), str(Path(__file__).parent.parent)
    print("| model | load (s) | query (ms) | passages/s |")
    print("|---|---|---|---|")
    for name in names:
        code = CHILD.format(bench=bench, root=root, name=name)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        load = float(out.stdout.strip().splitlines()[-1])
        if name == "packaged":
            from xbrain.embedding import ProviderSpec, load_provider

            provider = load_provider(ProviderSpec("packaged"))
        elif name == "e5":
            from semantic_quality import E5Provider

            provider = E5Provider()  # type: ignore[assignment]
        else:
            from minilm import MiniLMProvider

            provider = MiniLMProvider()  # type: ignore[assignment]
        queries(provider, ["warm up"])
        took = []
        for prompt in ("the main postgres box is down, what now?", "周四发布之前要做什么？") * 10:
            started = time.perf_counter()
            queries(provider, [prompt])
            took.append(time.perf_counter() - started)
        started = time.perf_counter()
        embed_all(provider, texts)
        rate = len(texts) / (time.perf_counter() - started)
        print(f"| {name} | {load:.2f} | {statistics.median(took) * 1000:.1f} | {rate:.0f} |")
    print(f"\n(passages: {len(texts)}, mean {words:.0f} words)")


if __name__ == "__main__":
    main()
