"""Terms for search: lowercase words in any script, Chinese segmented like jieba.

* Text is NFKC-normalized (full-width ``ｒｅａｃｔ`` is ``react``) and lowercased.
* Han runs (U+4E00–U+9FD5, jieba's range) are segmented with :class:`Segmenter`: the
  precise cut for queries; for indexed text the search-engine cut (which adds the
  dictionary words inside long words, so the query ``对话`` finds ``对话框``) and the
  dictionary words that straddle its words (jieba's full mode: ``每周四`` is cut
  ``每周|四``, and ``周四`` is indexed too, once per occurrence).
* Other words follow a Unicode rule: letters, digits and ``_`` joined by an inner ``.``
  or apostrophe (``3.14``, ``foo.bar``, ``don't``, ``app_ui``); hyphens split
  (``web-ui`` → ``web``, ``ui``). Kana runs are words; other ideographs stand alone;
  punctuation and emoji are dropped.
* The original's 36 English and 13 Chinese stopwords are removed.

ASCII text (most English queries) takes a short pattern that compiles in microseconds and
gives the same terms; the full pattern, whose Unicode classes take ~10 ms to compile, is
compiled on the first non-ASCII text a process sees.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .segment import Segmenter

__all__ = ["BULK_SWITCH", "STOPWORDS", "Cutter", "Tokenizer"]

ENGLISH_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "to",
        "for",
        "of",
        "in",
        "on",
        "and",
        "or",
        "is",
        "are",
        "be",
        "with",
        "use",
        "using",
        "my",
        "me",
        "i",
        "we",
        "our",
        "want",
        "need",
        "help",
        "please",
        "task",
        "resource",
        "resources",
        "find",
        "saved",
        "how",
        "can",
        "do",
        "this",
        "that",
        "it",
    }
)
CHINESE_STOPWORDS = frozenset(
    {
        "做",
        "一个",
        "的",
        "我",
        "请",
        "帮",
        "帮我",
        "如何",
        "使用",
        "资源",
        "收藏",
        "找",
        "查找",
    }
)
STOPWORDS = ENGLISH_STOPWORDS | CHINESE_STOPWORDS

# Han characters a build (``counts(text, bulk=True)``) cuts with the segmenter queries use
# before it loads jieba-rs (the same cuts). Loading takes ~0.13 s; ours takes ~2.6 µs a
# character against jieba-rs's ~0.24 µs. So a small store's first search never pays the
# load, and a whole store's build pays ~0.05 s for having waited.
BULK_SWITCH = 20_000
_RUST = "rjieba"  # the module jieba-rs is loaded as

_IDEO = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff"
_HIRAGANA = "\u3040-\u309f"
_KATAKANA = "\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_KANA = _HIRAGANA + _KATAKANA
_WORDCHAR = rf"[^\W{_IDEO}{_KANA}]"
# On ASCII text the full pattern's word rule is exactly this (NFKC changes no ASCII).
_ASCII_TOKEN = re.compile(r"[0-9a-z_]+(?:[.'][0-9a-z_]+)*")


# Text of ASCII, Han (U+4E00–U+9FD5) and these punctuation marks (which NFKC leaves alone
# or maps to ASCII punctuation that neither is part of a word nor joins two) gets the
# full rule's terms from two cheap patterns: ASCII words between Han runs. This one
# compiles in ~1.5 ms; the full pattern's Unicode classes take ~5–7 ms.
_HAN_RUN = re.compile(r"[\u4e00-\u9fd5]+")  # what the segmenters cut
_SIMPLE = re.compile(r"([\u4e00-\u9fd5]+)|[^\x00-\x7f，。、；：？！（）《》【】「」“”]")


def _simple_tokens(text: str, cut: Callable[[str], list[str]]) -> list[str] | None:
    """The terms of lowercased ``text`` when it is ASCII, Han and simple punctuation only;
    None (use the full rule) on any other character."""
    runs = []
    for match in _SIMPLE.finditer(text):
        if match.group(1) is None:
            return None  # before any Han run is cut: segmenting is the costly part
        runs.append(match.span())
    out: list[str] = []
    start = 0
    for begin, end in runs:
        out.extend(_ASCII_TOKEN.findall(text, start, begin))
        out.extend(cut(text[begin:end]))
        start = end
    out.extend(_ASCII_TOKEN.findall(text, start))
    return out


@cache
def _token_pattern() -> re.Pattern[str]:
    return re.compile(
        rf"(?P<han>[\u4e00-\u9fd5]+)"
        rf"|(?P<kana>[{_HIRAGANA}]+|[{_KATAKANA}]+)"
        rf"|(?P<ideo>[{_IDEO}])"
        rf"|(?P<word>{_WORDCHAR}+(?:[.'’]{_WORDCHAR}+)*)"
    )


class Cutter(Protocol):
    """A jieba-compatible segmenter of Han runs."""

    def cut(self, text: str) -> list[str]:
        """``jieba.lcut(text)``."""
        ...

    def cut_for_search(self, text: str) -> list[str]:
        """``jieba.lcut_for_search(text)``."""
        ...

    def subwords(self, text: str) -> list[str]:
        """The multi-character words of ``jieba.lcut(text, cut_all=True)``."""
        ...

    def close(self) -> None:
        """Release what the segmenter holds."""
        ...


_WARM: dict[Path, Segmenter] | None = None  # segmenters kept across calls (xbrain serve)


class Known(Protocol):
    """Term counts cut ahead for some texts (:class:`.countahead.Counted`)."""

    def get(self, text: str) -> Counter[str] | None:
        """``text``'s counts, or None."""
        ...


# counts a helper cut ahead for a batch being written (:mod:`.countahead`): a text's
# counts are the same for any build, so any of them serves any build in this process
AHEAD: list[Known] = []


def past_switch(texts: Iterable[str], han: int = 0) -> bool:
    """Whether ``texts`` hold more than ``BULK_SWITCH`` Han characters (``han`` more)."""
    for text in texts:
        if not text.isascii():
            han += sum(map(len, _HAN_RUN.findall(text)))
            if han > BULK_SWITCH:
                return True
    return False


def keep_warm() -> None:
    """Keep every segmenter this process opens for the next ``Tokenizer`` (a long-lived
    server: a fresh process opens one per command and closes it)."""
    global _WARM
    if _WARM is None:
        _WARM = {}


class Tokenizer:
    """Turns text into terms; loads the Chinese segmenter only when Han text appears.

    ``counts(text, bulk=True)`` (an index build) switches to jieba-rs once it has cut
    ``BULK_SWITCH`` Han characters: faster to run and slower to load than the segmenter
    queries use; the terms are the same. ``whole``: a whole index's build, which uses
    jieba-rs at once when this process has loaded it.
    """

    def __init__(self, cache_dir: Path, *, whole: bool = False) -> None:
        self.cache_dir = cache_dir
        self._segmenter: Segmenter | None = None
        self._bulk: Cutter | None = None
        self._bulk_cut = 0  # Han characters cut for builds so far
        # a whole index's build: jieba-rs from the first Han character when this process
        # has loaded it already (a reindex's resource build did), as there is no load
        # left to pay
        self._whole = whole

    def _loaded(self) -> bool:
        return self._whole and _RUST in sys.modules

    @property
    def segmenter(self) -> Segmenter:
        """The jieba-compatible segmenter (compiled into ``cache_dir`` on first use)."""
        if self._segmenter is None:
            from .segment import Segmenter

            if _WARM is None:
                self._segmenter = Segmenter(self.cache_dir)
            else:
                if self.cache_dir not in _WARM:
                    _WARM[self.cache_dir] = Segmenter(self.cache_dir)
                self._segmenter = _WARM[self.cache_dir]
        return self._segmenter

    def bulk_segmenter(self) -> Cutter:
        """The segmenter for index builds: jieba-rs when it may be used, else ours."""
        if self._bulk is None:
            from .segment import bulk_segmenter

            self._bulk = bulk_segmenter() or self.segmenter
        return self._bulk

    def bulk_ahead(self, texts: Iterable[str]) -> None:
        """``texts`` are what the next bulk cuts (``counts(…, bulk=True)``) will cut: when
        their Han characters take the builds past ``BULK_SWITCH``, jieba-rs cuts them from
        the first (its load pays for itself; ours would load its dictionary for nothing)."""
        if self._bulk is not None or self._bulk_cut > BULK_SWITCH:
            return
        if past_switch(texts, self._bulk_cut):
            self._bulk_cut = BULK_SWITCH + 1

    def close(self) -> None:
        """Release the segmenter's cache file."""
        if self._segmenter is not None:
            if _WARM is None:  # a warm one stays open for the next call
                self._segmenter.close()
            self._segmenter = None
        self._bulk = None

    def _tokens(self, text: str, how: str, bulk: bool = False) -> list[str]:
        if text.isascii():
            return [token for token in _ASCII_TOKEN.findall(text.lower()) if token not in STOPWORDS]
        cut = self._cut(how, bulk)
        out = _simple_tokens(text.lower(), cut)
        if out is None:  # other scripts, or characters NFKC changes: the full rule
            import unicodedata

            out = []
            text = unicodedata.normalize("NFKC", text).lower()
            for match in _token_pattern().finditer(text):
                han = match.group("han")
                out.extend([match.group().replace("’", "'")] if han is None else cut(han))
        return [token for token in out if token not in STOPWORDS]

    def _cut(self, how: str, bulk: bool) -> Callable[[str], list[str]]:
        """The cut of a Han run (``how``: ``precise``, ``search`` or ``index``), loading a
        segmenter only when one is called."""

        def cut(han: str) -> list[str]:
            if bulk:
                self._bulk_cut += len(han)
            if bulk and (self._bulk is not None or self._bulk_cut > BULK_SWITCH or self._loaded()):
                cutter: Cutter = self.bulk_segmenter()
            else:
                cutter = self.segmenter  # (loaded only here: a bulk cut may never need it)
            if how == "precise":
                return cutter.cut(han)
            out = cutter.cut_for_search(han)
            if how == "index" and len(han) > 2:  # two characters: no word straddles two
                held = set(out)
                out += [word for word in cutter.subwords(han) if word not in held]
            return out

        return cut

    def words(self, text: str) -> list[str]:
        """Every term of ``text`` in order, repeats kept (precise Chinese cut)."""
        return self._tokens(text, "precise")

    def search_words(self, text: str) -> list[str]:
        """Every term of ``text`` with jieba's search-engine Chinese cut (the words inside
        long words too), without the straddling words an index adds: what a prompt may
        share with an entry, kept as precise as a query."""
        return self._tokens(text, "search")

    def query_terms(self, text: str) -> list[str]:
        """Distinct query terms in first-occurrence order (precise Chinese cut)."""
        return list(dict.fromkeys(self.words(text)))

    def counts(self, text: str, bulk: bool = False) -> Counter[str]:
        """Term frequencies of indexed text (search-engine Chinese cut and the dictionary
        words straddling its words); ``bulk`` for an index build, which takes the counts
        a helper cut ahead when one holds them (``AHEAD``)."""
        if bulk and AHEAD:
            for counted in tuple(AHEAD):
                got = counted.get(text)
                if got is not None:
                    return got
        return Counter(self._tokens(text, "index", bulk=bulk))
