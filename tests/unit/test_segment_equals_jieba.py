"""The segmenters' cuts equal jieba's, on a sizeable sample and on random text: ours (every
query and small write) and jieba-rs (index builds), so a query's terms are the index's."""

from __future__ import annotations

import gettext
import logging
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.search.segment import RustSegmenter, Segmenter, bulk_segmenter
from xbrain.search.tokenize import Cutter

HAN = re.compile("[\u4e00-\u9fd5]+")
LOCALE = Path("/usr/share/locale/zh_CN/LC_MESSAGES")


@pytest.fixture(scope="module")
def jieba() -> Any:
    import jieba as real

    real.setLogLevel(logging.ERROR)
    real.initialize()
    return real


@pytest.fixture(scope="module", params=["python", "rust"])
def segmenter(request: pytest.FixtureRequest, segment_cache: Path) -> Iterator[Cutter]:
    instance: Cutter | None = (
        Segmenter(segment_cache) if request.param == "python" else bulk_segmenter()
    )
    if instance is None:
        pytest.skip("rjieba is not installed, or jieba's data is not what jieba-rs embeds")
    yield instance
    instance.close()


def test_index_builds_use_jieba_rs_here() -> None:
    """With the pinned jieba and rjieba installed (as the project's set-up does), index
    builds get the fast segmenter; if a new jieba changed its data, this says so."""
    assert isinstance(bulk_segmenter(), RustSegmenter)


@pytest.fixture(scope="module")
def words() -> list[str]:
    from xbrain.search.segment import _jieba_files

    dict_path, _ = _jieba_files()
    lines = dict_path.read_text(encoding="utf-8").splitlines()
    return [line.split(" ")[0] for line in lines[::7]]


def check(segmenter: Cutter, jieba: Any, text: str) -> None:
    assert segmenter.cut(text) == jieba.lcut(text), text
    assert segmenter.cut_for_search(text) == jieba.lcut_for_search(text), text
    full = [word for word in jieba.lcut(text, cut_all=True) if len(word) > 1]
    assert segmenter.subwords(text) == full, text


def test_dictionary_sentences(segmenter: Cutter, jieba: Any, words: list[str]) -> None:
    """20,000 pseudo-sentences of dictionary words and unknown characters (HMM path)."""
    rng = random.Random(42)
    han_words = [w for w in words if HAN.fullmatch(w)]
    rare = "".join(chr(c) for c in range(0x9F00, 0x9FD5))
    for _ in range(20_000):
        parts = [rng.choice(han_words) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.3:
            parts.insert(
                rng.randint(0, len(parts)),
                "".join(rng.choice(rare) for _ in range(rng.randint(1, 3))),
            )
        check(segmenter, jieba, "".join(parts))


@pytest.mark.skipif(
    not LOCALE.is_dir(), reason="no zh_CN message catalogs installed on this machine"
)
def test_real_chinese_text(segmenter: Cutter, jieba: Any) -> None:
    """Every Han run of the installed zh_CN gettext catalogs (tens of thousands of runs)."""
    runs: list[str] = []
    for path in sorted(LOCALE.glob("*.mo")):
        try:
            with open(path, "rb") as handle:
                catalog = gettext.GNUTranslations(handle)
        except (OSError, UnicodeDecodeError):
            continue
        for value in catalog._catalog.values():  # type: ignore[attr-defined]
            if isinstance(value, str):
                runs.extend(HAN.findall(value))
    assert len(runs) > 1000
    for run in runs:
        check(segmenter, jieba, run)


def test_long_runs_no_word_joins(segmenter: Cutter, jieba: Any) -> None:
    """Runs of rare characters cut by the HMM alone, up to 600 long (ours follows the best
    states back instead of copying each path at every step, as jieba does)."""
    rng = random.Random(7)
    rare = "".join(chr(c) for c in range(0x9F00, 0x9FD5))
    for length in (40, 150, 600):
        for _ in range(30):
            check(segmenter, jieba, "".join(rng.choice(rare) for _ in range(length)))
    check(segmenter, jieba, "龘" * 600)


@settings(max_examples=300)
@given(
    st.text(
        alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FD5), min_size=1, max_size=30
    )
)
def test_random_han_strings(segmenter: Cutter, jieba: Any, text: str) -> None:
    check(segmenter, jieba, text)


def test_without_rjieba_or_with_other_jieba_data_builds_use_ours(
    segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No jieba-rs, or a jieba whose data is not what jieba-rs embeds: index builds fall
    back to our segmenter, with the same terms."""
    from xbrain.search import segment
    from xbrain.search.tokenize import Tokenizer

    text = "检查对话框键盘导航，南京市长江大桥"
    monkeypatch.setitem(segment.JIEBA_DATA, "dict.txt", "0" * 64)
    assert bulk_segmenter() is None
    monkeypatch.undo()
    real = segment.importlib.util.find_spec
    monkeypatch.setattr(
        segment.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "rjieba" else real(name, *a),
    )
    assert bulk_segmenter() is None
    tokenizer = Tokenizer(segment_cache)
    try:
        assert tokenizer.counts(text, bulk=True) == tokenizer.counts(text)
        assert isinstance(tokenizer.bulk_segmenter(), Segmenter)
    finally:
        tokenizer.close()
