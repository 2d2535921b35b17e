"""A batch's index terms cut in a helper process while the batch is written.

A batch of 1,000 Chinese pages spent a fifth of its time cutting its text for the search
index (jieba-rs's load, then the cuts: ~0.2–0.4 s at 100,000 resources), after the
commit, on one core. A text's term counts are a function of the text alone (the same
segmenter data everywhere: ``Tokenizer.counts``), so the helper that counts the batch's
conflict candidates (:mod:`.similarahead`, started once the batch is valid, before the
store is touched) first cuts the batch's distinct texts that are not ASCII, when their
Han characters are many enough for a build to load jieba-rs (``BULK_SWITCH``) and few
enough to be cut in time (``MAX_CHARS``), and hands their counts back on a line of their
own. The index update then takes a text's counts from there (``Tokenizer.counts`` asks
every ``Counted`` this process holds: any of them serves any build, a text's counts
being the same), waiting for each at most ``WAIT`` seconds in all, and cuts itself any
text they do not hold: the helper not done in time, failed, never started, or a text
the write changed after the helper was asked.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["MAX_CHARS", "WAIT", "Counted", "cut", "line", "worth"]

# seconds an update waits in all for a helper's counts before cutting itself (about what
# the cut would cost it; the helper started most of a second before)
WAIT = 0.3
# characters a helper is sent to cut at most: ~0.3 s of jieba-rs a million Han characters,
# and the update asks ~0.7 s after the helper starts (a batch of 1,000 manual pages: ~0.3
# million); a longer batch's texts are cut by the update, its helper left to the answers
MAX_CHARS = 1_500_000


def worth(
    cache_dir: Path, index: Path, written: Sequence[dict[str, Any]]
) -> tuple[Path, list[str]] | None:
    """What a helper is to cut for the resources ``written``: the segmenter's cache
    directory and their distinct texts that are not ASCII, when ``index`` exists or the
    store holds no resource yet (else no update cuts; a store's first resources start
    it: ``upkeep``), their Han characters would load jieba-rs (English costs less to cut
    than to send) and they are few enough for the helper to cut before the update asks
    (``MAX_CHARS``); else None."""
    from .fields import field_texts
    from .tokenize import past_switch

    if not index.exists() and _holds_resources(index.parents[2]):
        return None
    texts = {text: None for r in written for text in field_texts(r) if not text.isascii()}
    if sum(map(len, texts)) > MAX_CHARS or not past_switch(texts):
        return None
    return cache_dir, list(texts)


def _holds_resources(store: Path) -> bool:
    """Whether the working tree of ``store`` has a resource folder with anything in it
    (a guess for a helper: its counts are right whoever takes them)."""
    from ..kinds.resource import DIRECTORY

    try:
        with os.scandir(store / DIRECTORY) as found:
            return any(True for _ in found)
    except OSError:
        return False


def cut(cache_dir: str, texts: list[str]) -> list[dict[str, int]]:
    """In the helper: each text's term counts, as a build's ``counts(text, bulk=True)``
    (no counts are offered in a helper: ``AHEAD`` is empty there)."""
    from .tokenize import Tokenizer

    tokenizer = Tokenizer(Path(cache_dir))
    tokenizer.bulk_ahead(texts)
    try:
        return [dict(tokenizer.counts(text, True)) for text in texts]
    finally:
        tokenizer.close()


def line(job: dict[str, Any]) -> bytes:
    """In the helper: the first line it writes, the counts of the job's texts (``null``:
    none asked, or the cut failed: the answers that follow do not depend on it)."""
    counts = None
    if job.get("texts"):
        try:
            counts = cut(job["cache"], job["texts"])
        except Exception:  # (MemoryError included: the update cuts them itself)
            counts = None
    data = json.dumps(counts, ensure_ascii=False, separators=(",", ":"))
    return data.encode("utf-8", "surrogatepass") + b"\n"


class Counted:
    """The counts a helper cuts for ``texts`` (its output's first line, ``fill``),
    offered to this process's builds while the batch is written."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self._asked = set(texts)  # (another build's texts never wait for these)
        self._counts: dict[str, dict[str, int]] = {}
        self._done = threading.Event()
        self._deadline: float | None = None
        self._lock = threading.Lock()

    def fill(self, line: bytes) -> None:
        """Take the helper's line (anything malformed: no counts), once."""
        try:
            counts = _well_formed(json.loads(line), len(self.texts)) if line else None
        except ValueError:
            counts = None
        if counts is not None and not self._done.is_set():
            self._counts = dict(zip(self.texts, counts, strict=True))
        self._done.set()

    def give_up(self) -> None:
        """The helper ended without a line (or was stopped): no counts."""
        self._done.set()

    def get(self, text: str) -> Counter[str] | None:
        """``text``'s counts, when the helper cut it (waiting for them, ``WAIT`` in all
        from the first ask)."""
        if text not in self._asked:
            return None
        if not self._done.is_set():
            with self._lock:
                if self._deadline is None:
                    self._deadline = time.monotonic() + WAIT
            if not self._done.wait(max(0.0, self._deadline - time.monotonic())):
                return None
        got = self._counts.get(text)
        return None if got is None else Counter(got)


def _well_formed(counts: Any, texts: int) -> list[dict[str, int]] | None:
    if not isinstance(counts, list) or len(counts) != texts:
        return None
    for each in counts:
        if not isinstance(each, dict):
            return None
        for term, n in each.items():
            if not isinstance(term, str) or type(n) is not int or n < 1:
                return None
    return counts
