"""A big Chinese batch's index terms cut ahead, in the helper process, while the batch is
written (``search/countahead``): the index the write leaves holds exactly the rows a
rebuild writes, whether the helper's counts were taken, malformed, late or absent."""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make
from xbrain.search import countahead, similarahead
from xbrain.search.query import INDEX_FILE
from xbrain.search.tokenize import AHEAD, BULK_SWITCH, Tokenizer
from xbrain.store import Store

WORDS = ("配置", "服务器", "网络", "接口", "目录", "文件", "权限", "用户", "进程", "内存")
WORDS += ("日志", "备份", "数据库", "每周四", "对话框", "排序", "隐藏", "命令", "参数", "时间")


def _chinese(rng: random.Random, words: int) -> str:
    return "，".join("".join(rng.choices(WORDS, k=4)) for _ in range(words // 4))


def _batch(count: int, seed: int = 45) -> list[dict[str, Any]]:
    """``count`` resources whose Chinese text takes a build past ``BULK_SWITCH``."""
    rng = random.Random(seed)
    return [
        make(
            f"zh-{seed}-{i}",
            title=f"{_chinese(rng, 4)} {i}",
            purpose=_chinese(rng, 8),
            summary=_chinese(rng, 40),
        )
        for i in range(count)
    ]


def _rows(store: Store) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The index's documents (id, field lengths) and postings (term, id, counts), by id."""
    with sqlite3.connect(store.path / ".git" / INDEX_FILE) as conn:
        docs = conn.execute("SELECT rid, l0, l1, l2, l3, l4, l5 FROM docs ORDER BY rid")
        postings = conn.execute(
            "SELECT term, rid, f0, f1, f2, f3, f4, f5 FROM postings JOIN docs USING (doc) "
            "ORDER BY term, rid"
        )
        return docs.fetchall(), postings.fetchall()


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A second core whatever the machine, a helper waited for (a busy machine's is late);
    the number of texts whose counts a build took from a helper."""
    monkeypatch.setattr(similarahead.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(countahead, "WAIT", 60.0)
    got = [0]
    real = countahead.Counted.get

    def counting(self: countahead.Counted, text: str) -> Any:
        counts = real(self, text)
        got[0] += counts is not None
        return counts

    monkeypatch.setattr(countahead.Counted, "get", counting)
    return got


def _indexed_store(tmp_path: Path, cache: Path) -> Store:
    store = Store(tmp_path / "store", cache_dir=cache)
    store.put(make("first"))
    store.search("配置")  # the index exists, so a write updates it
    return store


def test_a_chinese_batch_cut_ahead_indexes_what_a_rebuild_indexes(
    tmp_path: Path, segment_cache: Path, taken: list[int]
) -> None:
    store = _indexed_store(tmp_path, segment_cache)
    batch = _batch(similarahead.BATCH_MIN + 10)
    texts = [t for r in batch for t in (r["title"], r["purpose"], r["summary"])]
    assert sum(len(t) for t in texts) > BULK_SWITCH  # (what makes the cut worth sending)
    store.put(batch)
    assert taken[0] >= 3 * len(batch)  # every title, purpose and summary from the helper
    assert not AHEAD  # the helper's counts are not kept past the write
    written = _rows(store)
    store.reindex()
    assert _rows(store) == written
    assert len(written[1]) > 1000  # postings of many terms: the comparison says something


def test_a_store_s_first_chinese_batch_is_cut_ahead_for_the_index_it_starts(
    tmp_path: Path, segment_cache: Path, taken: list[int]
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)  # no resource, no index yet
    batch = _batch(similarahead.BATCH_MIN + 10, seed=11)
    store.put(batch)
    assert taken[0] >= 3 * len(batch)  # the write's index update took the helper's counts
    written = _rows(store)
    store.reindex()
    assert _rows(store) == written and len(written[0]) == len(batch)


def test_a_store_with_resources_but_no_index_sends_nothing_to_cut(
    tmp_path: Path, segment_cache: Path
) -> None:
    store = _indexed_store(tmp_path, segment_cache)
    index = store.path / ".git" / INDEX_FILE
    batch = _batch(similarahead.BATCH_MIN + 10)
    assert countahead.worth(segment_cache, index, batch) is not None
    for suffix in ("", "-wal", "-shm"):  # no update cuts: a search builds it later
        index.with_name(index.name + suffix).unlink(missing_ok=True)
    assert countahead.worth(segment_cache, index, batch) is None


# each writes counts of the right shape that would index wrong terms, were they taken
_WRONG = 'json.dumps([{"wrong": 1}] * len(json.loads(sys.stdin.buffer.read())["texts"]))'
_ANY_COUNTS = f"import sys, json; sys.stdout.write({_WRONG}"


@pytest.mark.parametrize(
    ("boot", "bound"),
    [
        ('import sys; sys.stdin.buffer.read(); print("[{\\"x\\": -1}]"); sys.exit(0)', None),
        (f"{_ANY_COUNTS}); sys.exit(0)", None),  # no line end: cut short
        (f'{_ANY_COUNTS} + "\\n"); sys.exit(0)', 64),  # a line past the reader's bound
        ("import sys; sys.exit(3)", None),
        ("import time; time.sleep(60)", None),
    ],
    ids=["malformed", "no-line-end", "past-the-bound", "failed", "asleep"],
)
def test_a_helper_without_counts_leaves_the_cut_to_the_update(
    tmp_path: Path,
    segment_cache: Path,
    taken: list[int],
    monkeypatch: pytest.MonkeyPatch,
    boot: str,
    bound: int | None,
) -> None:
    store = _indexed_store(tmp_path, segment_cache)
    monkeypatch.setattr(similarahead, "_BOOT", boot)
    monkeypatch.setattr(countahead, "WAIT", 0.5)
    if bound is not None:
        monkeypatch.setattr(similarahead, "_MAX_OUTPUT", bound)
    asked: list[int] = []
    real = similarahead.start
    monkeypatch.setattr(similarahead, "start", lambda *a: asked.append(len(a[4][1])) or real(*a))
    started = time.monotonic()
    store.put(_batch(similarahead.BATCH_MIN + 10, seed=7))
    assert time.monotonic() - started < 30  # a sleeping helper waited for 0.5 s, stopped
    assert asked and asked[0] > 200  # the helper was asked to cut the texts
    assert taken[0] == 0 and not AHEAD
    written = _rows(store)
    store.reindex()
    assert _rows(store) == written


def test_an_english_or_small_batch_sends_nothing_to_cut(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _indexed_store(tmp_path, segment_cache)
    sent: list[Any] = []
    real = similarahead.start
    monkeypatch.setattr(similarahead, "start", lambda *a: sent.append(a[4]) or real(*a))
    store.put([make(f"en-{i}", summary="list directory contents " * 20) for i in range(210)])
    store.put(_batch(similarahead.BATCH_MIN - 1, seed=3))  # Chinese, but below a helper
    assert sent == [None, None]


def test_counts_taken_only_when_well_formed() -> None:
    for line in (b"", b"null\n", b"[]\n", b'[{"a": 1}]\n', b'[{"a": 0}, {}]\n', b"[{}, 3]\n"):
        counted = countahead.Counted(["x", "y"])
        counted.fill(line)
        assert counted.get("x") is None and counted.get("y") is None
    for line in (b'[{"a": true}, {}]\n', b'[{"a": 1.0}, {}]\n', b"\xff\n"):
        counted = countahead.Counted(["x", "y"])
        counted.fill(line)
        assert counted.get("x") is None
    counted = countahead.Counted(["x", "y"])
    counted.fill(b'[{"a": 2}, {}]\n')
    assert counted.get("x") == {"a": 2} and counted.get("y") == {}
    assert counted.get("z") is None  # not asked


def test_a_text_not_asked_never_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(countahead, "WAIT", 60.0)
    counted = countahead.Counted(["asked"])  # never filled
    started = time.monotonic()
    assert counted.get("another build's text") is None
    assert time.monotonic() - started < 5


def test_too_much_text_is_left_to_the_update(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _indexed_store(tmp_path, segment_cache)
    batch = _batch(similarahead.BATCH_MIN + 10)
    index = store.path / ".git" / INDEX_FILE
    texts = countahead.worth(segment_cache, index, batch)
    assert texts is not None and all(not text.isascii() for text in texts[1])
    monkeypatch.setattr(countahead, "MAX_CHARS", sum(map(len, texts[1])) - 1)
    assert countahead.worth(segment_cache, index, batch) is None


def test_a_late_helper_is_waited_for_once_in_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(countahead, "WAIT", 0.3)
    counted = countahead.Counted([f"t{i}" for i in range(50)])
    started = time.monotonic()
    assert all(counted.get(f"t{i}") is None for i in range(50))
    assert time.monotonic() - started < 3  # 0.3 s in all, not 0.3 s a text
    assert counted.get("unasked") is None
    late = countahead.Counted(["a"])
    threading.Timer(0.1, late.fill, [json.dumps([{"w": 3}]).encode() + b"\n"]).start()
    monkeypatch.setattr(countahead, "WAIT", 30.0)
    assert late.get("a") == {"w": 3}  # arrived while waited for


def test_the_helper_s_cut_is_the_build_s(segment_cache: Path) -> None:
    texts = [t for r in _batch(300, seed=9) for t in (r["title"], r["summary"])]
    texts += ["Mixed 文本 with ASCII words", "ｒｅａｃｔ 全角", "plain english text"]
    here = Tokenizer(segment_cache)
    expected = [dict(here.counts(text, True)) for text in texts]
    here.close()
    assert countahead.cut(str(segment_cache), texts) == expected


def test_a_cut_that_fails_in_the_helper_still_leaves_its_answers(
    tmp_path: Path, segment_cache: Path, taken: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper writes ``null`` for counts it could not cut (a MemoryError, say) and
    goes on to the conflict answers: the write cuts its text itself and still takes them."""
    store = _indexed_store(tmp_path, segment_cache)
    store.put(_batch(similarahead.BATCH_MIN + 10, seed=11))  # candidates for the next batch
    failing = "import xbrain.search.countahead as c; c.cut = lambda *a: 1 / 0; "
    boot = similarahead._BOOT.replace(
        "from xbrain.search.similarahead", failing + "from xbrain.search.similarahead"
    )
    assert boot != similarahead._BOOT
    monkeypatch.setattr(similarahead, "_BOOT", boot)
    monkeypatch.setattr(similarahead, "WAIT", 60.0)
    answered = [0]
    real = similarahead.Ahead.answer

    def counting(self: similarahead.Ahead, *args: Any) -> Any:
        got = real(self, *args)
        answered[0] += got is not None
        return got

    monkeypatch.setattr(similarahead.Ahead, "answer", counting)
    line = countahead.line({"texts": ["配置"], "cache": str(segment_cache)})
    assert line.endswith(b"\n") and json.loads(line) == [{"配置": 1}]
    monkeypatch.setattr(countahead, "cut", lambda *a: 1 / 0)
    assert countahead.line({"texts": ["配置"], "cache": str(segment_cache)}) == b"null\n"
    taken[0] = 0  # (the first batch's helper cut its texts)
    store.put(_batch(similarahead.BATCH_MIN + 10, seed=12))
    assert taken[0] == 0 and answered[0] >= 40  # no counts, every later call answered
    written = _rows(store)
    store.reindex()
    assert _rows(store) == written
