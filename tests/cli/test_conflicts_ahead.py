"""A big batch's conflict candidates counted ahead, in a helper process, while the
batch is written (``search/similarahead``): the results are those of the finder's own
walk after the commit, the helper's answers are taken only for the index state it read,
and a helper that fails, is late or is left running changes nothing."""

from __future__ import annotations

import random
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make
from xbrain.search import similarahead
from xbrain.search.query import INDEX_FILE
from xbrain.search.similar import SimilarFinder
from xbrain.store import Store
from xbrain.text import SIMILAR

WORDS = ("staging", "database", "host", "replica", "nightly", "batch", "report", "backup")


def _phrase(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.sample(WORDS, rng.randint(low, high)))


@pytest.fixture
def eager(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A helper for any batch of 30, waited for; the number of calls it answered."""
    monkeypatch.setattr(similarahead, "AHEAD_MIN", 5)
    monkeypatch.setattr(similarahead, "BATCH_MIN", 30)
    monkeypatch.setattr(similarahead, "WAIT", 60.0)
    monkeypatch.setattr(similarahead.os, "cpu_count", lambda: 2)
    answered = [0]
    real = similarahead.Ahead.answer

    def counted(self: similarahead.Ahead, *args: Any) -> Any:
        got = real(self, *args)
        answered[0] += got is not None
        return got

    monkeypatch.setattr(similarahead.Ahead, "answer", counted)
    return answered


def _stores(tmp_path: Path, cache: Path) -> tuple[Store, Store, list[dict[str, Any]]]:
    """Two copies of one store of similar titles (some superseded, one proposed) and a
    batch of new and changed resources to put into each."""
    rng = random.Random(46)
    first = Store(tmp_path / "a", cache_dir=cache)
    items = [
        make(f"r-{i}", title=_phrase(rng, 1, 4), purpose=_phrase(rng, 0, 3)) for i in range(120)
    ]
    ids = [r["id"] for r in first.put(items)["results"]]
    for old, new in zip(ids[:5], ids[5:10], strict=True):
        first.resource_supersede(old, new)
    shutil.copytree(first.path, tmp_path / "b", symlinks=True)
    batch = [
        make(f"n-{i}", title=_phrase(rng, 1, 4), purpose=_phrase(rng, 0, 3)) for i in range(60)
    ]
    batch += [
        make(f"r-{i}", title=_phrase(rng, 1, 4), updatedAt="2030-01-01T00:00:00.000Z")
        for i in range(20, 26)
    ]
    batch[3]["supersedes"] = [ids[30]]
    return first, Store(tmp_path / "b", cache_dir=cache), batch


def _conflicts(result: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [each["possibleConflicts"] for each in result["results"]]


def test_a_batch_counted_ahead_lists_what_the_walk_lists(
    tmp_path: Path, segment_cache: Path, eager: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    ahead, walked, batch = _stores(tmp_path, segment_cache)
    counted = _conflicts(ahead.put(batch))
    assert eager[0] >= 40  # the helper answered every call but the first
    monkeypatch.setattr(similarahead, "start", lambda *args: None)
    alone = _conflicts(walked.put(batch))
    assert counted == alone
    assert sum(map(len, counted)) > 100  # many listed: the comparison says something


def test_a_helper_that_fails_or_is_late_leaves_the_walk(
    tmp_path: Path, segment_cache: Path, eager: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    failing, late, batch = _stores(tmp_path, segment_cache)
    eager[0] = 0  # (the stores' first batch, whose write started their index, is counted)
    helpers: list[similarahead.Ahead | None] = []
    real = similarahead.start
    monkeypatch.setattr(similarahead, "start", lambda *a: helpers.append(real(*a)) or helpers[-1])
    monkeypatch.setattr(similarahead, "_BOOT", "import sys; sys.exit(3)")
    failed = _conflicts(failing.put(batch))
    monkeypatch.setattr(similarahead, "_BOOT", "import time; time.sleep(60)")
    monkeypatch.setattr(similarahead, "WAIT", 0.0)
    started = time.monotonic()
    waited = _conflicts(late.put(batch))
    assert time.monotonic() - started < 30  # the sleeping helper was stopped, not waited for
    assert len(helpers) == 2 and all(helpers) and eager[0] == 0
    assert failed == waited and sum(map(len, failed)) > 100


def test_answers_are_taken_only_for_the_state_the_helper_read(
    tmp_path: Path, segment_cache: Path, eager: list[int]
) -> None:
    store, _, batch = _stores(tmp_path, segment_cache)
    head = store.put(make("one more"))["commit"]
    index = store.path / ".git" / INDEX_FILE
    asks = [(item["title"], item.get("purpose", ""), {"resource_x"}) for item in batch[:10]]
    with SimilarFinder(store.path, segment_cache, SIMILAR) as finder:
        finder.ahead(asks, {f"resource_{i}" for i in range(40)}, ())
        running = finder._ahead  # (the helper this finder started)
        assert running is not None
        with sqlite3.connect(index) as conn:  # the index the helper reads: file and build
            built = conn.execute("SELECT value FROM meta WHERE key = 'built'").fetchone()[0]
        here = [*(similarahead.file_id(index) or []), built]
        new = "c" * 40  # the write's commit, as the finder's index reflects it
        assert running.answer(0, (head, new), new, here) is not None  # made on its head
        assert running.answer(0, (None, head), head, here) is not None  # it read the commit
        assert running.answer(0, ("a" * 40, new), new, here) is None  # another parent
        assert running.answer(0, (head, None), head, here) is None  # nothing committed
        assert running.answer(0, (head, new), "d" * 40, here) is None  # written since
        assert running.answer(0, (head, new), new, [*here[:2], "x"]) is None  # rebuilt
        assert running.answer(0, (head, new), new, [0, 0, here[2]]) is None  # another file
        assert running.answer(99, (head, new), new, here) is None  # no such call


def test_the_helper_imports_nothing_from_the_current_directory(
    tmp_path: Path, segment_cache: Path, eager: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module planted where the write runs (``numpy.py``, ``json.py``) is never the
    helper's: it starts isolated, with the caller's import path only."""
    store, _, batch = _stores(tmp_path, segment_cache)
    planted = tmp_path / "work"
    planted.mkdir()
    marker = tmp_path / "imported"
    for name in ("numpy", "json", "sqlite3"):
        (planted / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').write('{name}')\n")
    monkeypatch.chdir(planted)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".")])
    store.put(batch)
    assert eager[0] >= 40
    assert not marker.exists()


def test_closing_stops_a_running_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(similarahead, "_BOOT", "import time; time.sleep(60)")
    running = similarahead.Ahead(tmp_path, 20, [(["a"], ["a"], 1, set())], set())
    started = time.monotonic()
    running.close()
    assert time.monotonic() - started < 10
    assert running.answer(0, ("a", "b"), "b", [0, 0, None]) is None


def test_a_write_landing_before_the_finder_opens_leaves_the_walk(
    tmp_path: Path, segment_cache: Path, eager: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's write between the batch's commit and the finder's first read (a
    writer waiting on the lock gets it then): the index no longer differs from the one
    the helper read by the batch alone, so its answers are not taken — the intruder, a
    same-title resource, is listed as the walk lists it."""
    ahead, walked, batch = _stores(tmp_path, segment_cache)
    eager[0] = 0  # (the stores' first batch, whose write started their index, is counted)
    batch[1]["title"] = "Quarterly zebra audit"
    real = SimilarFinder.landed
    intruders = [make("intruder", title="Quarterly zebra audit")] * 2  # one for each store

    def intruding(self: SimilarFinder, parent: str | None, commit: str | None) -> None:
        if intruders and self.store_dir != Path("/"):
            monkeypatch.setattr(SimilarFinder, "landed", real)  # (the intruder's own put)
            Store(self.store_dir, cache_dir=segment_cache).put(intruders.pop())
            monkeypatch.setattr(SimilarFinder, "landed", intruding)
        real(self, parent, commit)

    monkeypatch.setattr(SimilarFinder, "landed", intruding)
    counted = _conflicts(ahead.put(batch))
    assert eager[0] == 0  # nothing taken from the helper
    monkeypatch.setattr(similarahead, "start", lambda *args: None)
    alone = _conflicts(walked.put(batch))
    assert counted == alone
    assert [c["why"] for c in counted[1]] == ["same title"]


def test_the_same_title_written_twice_with_other_links_is_asked_once(
    tmp_path: Path, segment_cache: Path, eager: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two resources of a batch with the same title and purpose but different
    ``supersedes`` pass over different ids: the helper's answer for the first is never
    the second's."""
    ahead, walked, batch = _stores(tmp_path, segment_cache)
    old = ahead.get(batch[3]["supersedes"][0])  # what batch[3] supersedes: its title too
    batch[3] = {**batch[3], "title": old["title"], "purpose": old.get("purpose", "")}
    batch[3]["validFrom"] = "2099-01-01T00:00:00.000Z"  # so the old one stays in force
    twin = {
        **batch[3],
        "source": {**batch[3]["source"], "id": "twin", "url": "https://example.com/twin"},
    }
    twin["supersedes"] = []
    batch.insert(4, twin)
    counted = _conflicts(ahead.put(batch))
    assert eager[0] >= 40
    monkeypatch.setattr(similarahead, "start", lambda *args: None)
    alone = _conflicts(walked.put(batch))
    assert counted == alone
    assert old["id"] not in {c["id"] for c in counted[3]}  # superseded by it: passed over
    assert old["id"] in {c["id"] for c in counted[4]}  # the same title, for its twin
