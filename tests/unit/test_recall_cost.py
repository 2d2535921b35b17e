"""What a fresh recall pays for beside its answer (the English recall and hook regression
of issue 43's session): ranking a document twice, the telemetry's syncs, the imports."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.property.test_ranking import resource
from xbrain.search.index import SearchIndex
from xbrain.search.tokenize import Tokenizer


@pytest.fixture
def tokenizer(segment_cache: Path) -> Iterator[Tokenizer]:
    instance = Tokenizer(segment_cache)
    yield instance
    instance.close()


def _resource(i: int, title: str, text: str) -> dict[str, Any]:
    return resource(i, title, "", "", text)


WORDS = ["list", "listing", "lists", "sort", "sorted", "sorting", "time", "times", "timing"]
WORDS += ["directory", "directories", "content", "contents", "by", "file", "files", "show"]


def _statements(tokenizer: Tokenizer, terms: list[str]) -> tuple[list[str], list[Any]]:
    """The SQL statements one ranking of ``terms`` runs, and its hits, on a store whose
    words have several English forms each."""
    docs = [
        _resource(
            i, " ".join(WORDS[(i + k) % len(WORDS)] for k in range(3)), " ".join(WORDS[i % 7 :])
        )
        for i in range(400)
    ]
    with SearchIndex(":memory:", tokenizer) as index:
        index.rebuild(iter(docs), "c1")
        seen: list[str] = []
        index.conn.set_trace_callback(seen.append)
        hits = index.search(terms, 9)
        index.conn.set_trace_callback(None)
    return seen, hits


def test_the_second_look_does_not_rank_again_what_the_first_one_ranked(
    tokenizer: Tokenizer,
) -> None:
    """With English forms, a ranking takes a first look at the documents holding the
    rarest words as asked, then ranks every document holding one of the words that can
    still reach its results, in any form: the documents of the first look all over again
    (on 10,000 manual pages, 460 of the 1,080 an English prompt ranked twice, the larger
    part of what the forms cost). The second look now leaves them out, and the answer is
    the same as ranking them all at once (``test_ranking`` checks it against a reference)."""
    seen, hits = _statements(tokenizer, ["list", "directory", "contents", "sorted", "by", "time"])
    looks = [sql for sql in seen if sql.startswith("WITH q(")]
    assert hits and len(looks) == 2, looks
    assert "NOT IN (SELECT doc FROM postings WHERE term IN (" in looks[1]
    assert "NOT IN" not in looks[0]


def test_telemetry_never_waits_for_an_fsync(tmp_path: Path) -> None:
    """Every recall that showed something noted it in the telemetry, and closing that
    database (the last connection: it checkpoints its WAL) synced the WAL, its folder and
    the database: four fsyncs on each prompt, 3-20 ms on a busy disk, though telemetry
    keeps counts, not records. Its connection syncs nothing now."""
    from xbrain.recall.telemetry import connect

    (tmp_path / ".git").mkdir()
    conn = connect(tmp_path / ".git")
    try:
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 0  # OFF
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # a crash loses none
    finally:
        conn.close()


def test_importing_the_text_rules_compiles_no_unicode_class() -> None:
    """``xbrain.text`` compiled its CJK class (≈ 1.5-2 ms) at import, on every fresh recall
    and hook, for the duplicate check of writes only; it is compiled when first used."""
    code = (
        "import re, time\n"
        "compiled = []\n"
        "real = re._compile\n"
        "def spy(pattern, flags):\n"
        "    compiled.append(pattern)\n"
        "    return real(pattern, flags)\n"
        "re._compile = spy\n"
        "import xbrain.text\n"
        "print(sum('\\\\u3040' in str(p) for p in compiled))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"
    from xbrain.text import word_set

    assert word_set("Deploy 周四 release") == {"deploy", "周", "四", "release"}


def test_the_entry_cache_keeps_each_terms_entry_count_with_its_postings(
    xb: Any, store_dir: Path
) -> None:
    """Recall weighs an entry's words by how many entries hold them, and read those counts
    by counting the postings of every word of every entry the prompt touched (some 900
    words, half of an English prompt's entry leg on 1,000 entries). The cache keeps the
    counts beside the postings now, through a whole build and each commit's update (an
    entry added, changed, deleted), and recall answers as it did."""
    import json
    import sqlite3

    rules = [
        {"kind": "rule", "name": f"rule-{i}", "queries": [q], "body": f"Body {i} {q}."}
        for i, q in enumerate(
            ["sort files by time", "list directory contents", "sorted listing of files"]
        )
    ]
    assert xb("entry", "put", "-", input=json.dumps(rules)).code == 0
    asked = xb("recall", "-", input="list the directory contents sorted by time")
    assert asked.code == 0 and asked.json["results"]

    def counts() -> tuple[dict[str, int], dict[str, int]]:
        path = store_dir / ".git" / "xbrain" / "entries.sqlite"
        with sqlite3.connect(path) as conn:
            kept = dict(conn.execute("SELECT term, n FROM df"))
            counted = dict(conn.execute("SELECT term, COUNT(*) FROM posting GROUP BY term"))
        return kept, counted

    kept, counted = counts()  # after a whole build
    assert kept == counted and kept["files"] == 2
    changed = {**rules[0], "queries": ["sort photos by date"], "body": "Photos."}
    assert (
        xb("entry", "put", "-", input=json.dumps([changed, {**rules[2], "name": "new"}])).code == 0
    )
    listed = {e["name"]: e["id"] for e in xb("entry", "list").json["entries"]}
    assert xb("entry", "delete", listed["rule-1"]).code == 0
    again = xb("recall", "-", input="sorted listing of files")
    assert again.code == 0 and again.json["results"]
    kept, counted = counts()  # after updates: the same counts as the postings
    assert kept == counted and "photos" in kept and "directory" not in kept


def test_the_server_embeds_a_prompt_with_numpy_on_one_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With semantic recall on, ``xbrain serve`` embeds each prompt with numpy, whose BLAS
    started a worker thread per core: for one prompt they spin more than they share, and
    on a busy 2-core machine a served recall took 50 ms (the embedding alone 21 ms, 476 ms
    at worst) where one thread answers in 11. The server keeps BLAS on one thread (set
    before numpy loads), unless the user chose a number."""
    from xbrain.server import ONE_THREAD, one_thread_math

    for name in ONE_THREAD:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "4")  # the user's choice stays
    one_thread_math()
    import os

    assert os.environ["OPENBLAS_NUM_THREADS"] == "1" and os.environ["OMP_NUM_THREADS"] == "1"
    assert os.environ["MKL_NUM_THREADS"] == "4"
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "import xbrain.server as server\n"
        "server.one_thread_math()\n"
        "print('numpy' in sys.modules, os.environ['OPENBLAS_NUM_THREADS'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ONE_THREAD}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.split() == ["False", "1"], out.stderr  # set before numpy loads
