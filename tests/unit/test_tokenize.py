"""The tokenizer: scripts, punctuation, numbers, stopwords, Chinese cuts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.search.tokenize import CHINESE_STOPWORDS, ENGLISH_STOPWORDS, Tokenizer


@pytest.fixture(scope="module")
def tokenizer(segment_cache: Path) -> Iterator[Tokenizer]:
    instance = Tokenizer(segment_cache)
    yield instance
    instance.close()


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        (
            "web-ui app_ui don't 3.14 e-mail foo.bar x@y.com",
            ["web", "ui", "app_ui", "don't", "3.14", "e", "mail", "foo.bar", "x", "y.com"],
        ),
        ("Hello, WORLD! hello world.", ["hello", "world"]),
        ("ｒｅａｃｔ ＡＰＩ １２３", ["react", "api", "123"]),
        ("emoji 😀 🎉 party", ["emoji", "party"]),
        ("Dialog’s focus", ["dialog's", "focus"]),
        ("version 10.2.3 and 1,000 items", ["version", "10.2.3", "1", "000", "items"]),
        ("naïve café Straße", ["naïve", "café", "straße"]),
        ("检查对话框键盘导航", ["检查", "对话框", "键盘", "导航"]),
        ("帮我找一个React对话框无障碍的资源", ["react", "对话框", "无障碍"]),
        ("React对话框", ["react", "对话框"]),
        ("日本語のテキスト", ["日本", "語", "の", "テキスト"]),
        ("the and for 的 我", []),
        ("...---!!!", []),
        ("", []),
    ],
)
def test_query_terms(tokenizer: Tokenizer, text: str, terms: list[str]) -> None:
    assert tokenizer.query_terms(text) == terms


def test_query_terms_are_deduplicated_in_order(tokenizer: Tokenizer) -> None:
    assert tokenizer.query_terms("dialog React dialog REACT 对话框 对话框") == [
        "dialog",
        "react",
        "对话框",
    ]


def test_indexed_chinese_includes_inner_words(tokenizer: Tokenizer) -> None:
    counts = tokenizer.counts("中华人民共和国成立了")
    assert {"中华", "人民", "共和国", "中华人民共和国"} <= set(counts)
    assert tokenizer.query_terms("中华人民共和国") == ["中华人民共和国"]


def test_indexed_chinese_includes_the_words_straddling_its_cut(tokenizer: Tokenizer) -> None:
    """jieba cuts ``每周四`` as ``每周|四``; the index holds ``周四`` too (once per
    occurrence), and a query keeps its precise cut (issue 43 item 4)."""
    counts = tokenizer.counts("每周四发布，每周四开会")
    assert counts["周四"] == 2 and counts["每周"] == 2 and counts["发布"] == 1
    assert tokenizer.query_terms("每周四发布") == ["每周", "四", "发布"]
    assert "周四" not in tokenizer.search_words("每周四发布")  # a prompt's cut stays precise


def test_original_stopwords_present() -> None:
    assert len(ENGLISH_STOPWORDS) == 36 and len(CHINESE_STOPWORDS) == 13
    assert {"resource", "please", "saved"} <= ENGLISH_STOPWORDS
    assert {"帮我", "查找", "收藏"} <= CHINESE_STOPWORDS


def test_english_only_text_never_loads_the_segmenter(tmp_path: Path) -> None:
    tokenizer = Tokenizer(tmp_path / "cache")
    assert tokenizer.query_terms("plain English words") == ["plain", "english", "words"]
    assert not (tmp_path / "cache").exists()


def test_compiled_dictionary_is_shared_by_every_install_of_the_same_jieba(tmp_path: Path) -> None:
    """Issue 12, item 13: the 10 MB cache was rebuilt per install location."""
    import importlib.util
    import shutil

    from xbrain.search.segment import cache_path

    spec = importlib.util.find_spec("jieba")
    assert spec is not None and spec.origin is not None
    root = Path(spec.origin).parent
    copies = []
    for name in ("one", "two"):
        target = tmp_path / name
        (target / "finalseg").mkdir(parents=True)
        shutil.copy(root / "dict.txt", target / "dict.txt")
        for model in ("start", "trans", "emit"):
            shutil.copy(root / "finalseg" / f"prob_{model}.py", target / "finalseg")
        copies.append(target)
    cache = tmp_path / "cache"
    first = cache_path(cache, copies[0] / "dict.txt", copies[0] / "finalseg")
    second = cache_path(cache, copies[1] / "dict.txt", copies[1] / "finalseg")
    assert first == second
    assert len(list(cache.glob("jieba-*.ref"))) == 2  # one small note per location
    with open(copies[1] / "dict.txt", "a", encoding="utf-8") as handle:
        handle.write("新词语 3 n\n")
    changed = tmp_path / "three"
    shutil.copytree(copies[1], changed)
    assert cache_path(cache, changed / "dict.txt", changed / "finalseg") != first


ascii_text = st.lists(
    st.one_of(st.sampled_from("aZ9_.'- \n,"), st.characters(max_codepoint=127)), max_size=60
).map("".join)


# (a list of characters joined: st.text's alphabet handling never drew the last group)
simple_text = st.lists(
    st.one_of(
        st.sampled_from("aZ9_.'- \n,"),
        st.characters(max_codepoint=127),
        st.sampled_from("对话框键盘导航南京市长江大桥列出目录内容时间排序中文"),
        st.characters(min_codepoint=0x4E00, max_codepoint=0x9FD5),
        st.sampled_from("，。、；：？！（）《》【】「」“”"),
        st.sampled_from("．’‘ｒ…·"),  # not simple (NFKC makes "." or "r", or a joiner)
    ),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(ascii_text, simple_text))
def test_the_fast_paths_give_the_terms_of_the_unicode_path(tokenizer: Tokenizer, text: str) -> None:
    # ASCII text takes one short pattern; ASCII, Han and common Chinese punctuation two
    # cheap ones. A trailing em dash (never a term) sends the same text down the full
    # Unicode path: both must cut alike.
    assert tokenizer.words(text) == tokenizer.words(text + " —")
    assert tokenizer.counts(text) == tokenizer.counts(text + " —")
    assert tokenizer.query_terms(text) == tokenizer.query_terms(text + " —")


def test_each_han_run_is_cut_once_even_when_the_fast_path_gives_up(
    segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from xbrain.search.segment import Segmenter

    runs: list[str] = []
    real = Segmenter.cut

    def counting(self: Segmenter, text: str) -> list[str]:
        runs.append(text)
        return real(self, text)

    monkeypatch.setattr(Segmenter, "cut", counting)
    instance = Tokenizer(segment_cache)
    try:  # the em dash is not simple: the full rule cuts; the fast path must not first
        assert instance.words("检查对话框 — 键盘导航") == ["检查", "对话框", "键盘", "导航"]
    finally:
        instance.close()
    assert runs == ["检查对话框", "键盘导航"]


def test_a_build_switches_to_jieba_rs_only_after_enough_chinese(
    segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading jieba-rs costs what the query segmenter spends on BULK_SWITCH characters:
    a small build never loads it, a big one does once, and the terms never change."""
    from xbrain.search import segment, tokenize

    loads: list[int] = []
    real = segment.bulk_segmenter

    def counted() -> Any:
        loads.append(1)
        return real()

    monkeypatch.setattr(segment, "bulk_segmenter", counted)
    monkeypatch.setattr(tokenize, "BULK_SWITCH", 40)
    text = "先确认告警级别，再通知值班人员。"  # 14 Han characters
    reference = Tokenizer(segment_cache)
    build = Tokenizer(segment_cache)
    try:
        for _ in range(6):
            assert build.counts(text, bulk=True) == reference.counts(text)
            assert len(loads) <= 1
        assert loads == [1]  # switched after 40 characters, once
        small = Tokenizer(segment_cache)
        small.counts(text, bulk=True)
        small.close()
        assert loads == [1]  # 14 characters: never loaded
    finally:
        build.close()
        reference.close()


def test_a_whole_build_uses_jieba_rs_at_once_when_it_is_loaded(
    segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole index's build (``whole``: the skill index after the resource index, in one
    reindex) cuts with jieba-rs from its first Han character when the process has loaded
    it already; any other build still waits for BULK_SWITCH characters; the terms are the
    same either way."""
    import rjieba  # noqa: F401  (loaded, as a reindex's resource build leaves it)

    from xbrain.search import segment

    loads: list[int] = []
    real = segment.bulk_segmenter

    def counted() -> Any:
        loads.append(1)
        return real()

    monkeypatch.setattr(segment, "bulk_segmenter", counted)
    text = "先确认告警级别，再通知值班人员。"
    reference = Tokenizer(segment_cache)
    small = Tokenizer(segment_cache)
    whole = Tokenizer(segment_cache, whole=True)
    try:
        assert small.counts(text, bulk=True) == reference.counts(text)
        assert loads == []  # 14 characters: not worth it for a build of a few records
        assert whole.counts(text, bulk=True) == reference.counts(text)
        assert loads == [1]
        assert whole.counts("键盘导航", bulk=True) == reference.counts("键盘导航")
        assert loads == [1]  # once
    finally:
        for tokenizer in (reference, small, whole):
            tokenizer.close()


def test_a_bulk_cut_announced_past_the_switch_uses_jieba_rs_from_the_first(
    segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's index update says what it will cut (``bulk_ahead``): past BULK_SWITCH Han
    characters jieba-rs cuts from the first and the query segmenter is never loaded;
    below it, nothing changes; the terms are the same either way."""
    from xbrain.search import segment, tokenize

    if segment.bulk_segmenter() is None:
        pytest.skip("rjieba is not installed, or jieba's data is not what jieba-rs embeds")
    monkeypatch.setattr(tokenize, "BULK_SWITCH", 40)
    texts = ["先确认告警级别，再通知值班人员。", "all ASCII", "键盘导航和对话框的检查顺序"] * 3
    reference, announced, few = (Tokenizer(segment_cache) for _ in range(3))
    loaded: list[str] = []
    real = Tokenizer.segmenter.fget
    assert real is not None

    def counted(self: Tokenizer) -> Any:
        loaded.append({id(announced): "announced", id(few): "few"}.get(id(self), "reference"))
        return real(self)

    monkeypatch.setattr(Tokenizer, "segmenter", property(counted))
    try:
        announced.bulk_ahead(texts)
        assert [announced.counts(text, bulk=True) for text in texts] == [
            reference.counts(text) for text in texts
        ]
        assert "announced" not in loaded  # the query segmenter never loaded
        few.bulk_ahead(texts[:1])  # 14 characters: below the switch
        assert few.counts(texts[0], bulk=True) == reference.counts(texts[0])
        assert "few" in loaded  # cut with the query segmenter, as before
    finally:
        for tokenizer in (reference, announced, few):
            tokenizer.close()
