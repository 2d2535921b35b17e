"""Where a put's ``possibleConflicts`` come from (issue 45 item 4): the search index's
title and purpose postings, read once for a batch, from an index that reflects ``main``
(else a search, which catches the index up), never a ranking of the whole store per
resource written."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, make
from xbrain.search.similar import SimilarFinder
from xbrain.text import SIMILAR

Run = Callable[..., Result]

SAME = make("same", title="Staging database host", purpose="Where the staging database runs")
NEW = make("new", title="Staging database host", purpose="Weather forecasting tips")


def decoy(i: int) -> dict[str, Any]:
    """A resource a search for NEW's title and purpose ranks first (every word, in title,
    purpose and text), but that shares too few of its title and purpose words to be a
    conflict."""
    return make(
        f"decoy-{i}",
        title=f"Weather forecasting {i}",
        purpose="Staging database notes",
        text="Staging database host weather forecasting tips. " * 20,
        summary="Staging database host weather forecasting tips.",
    )


def put(run: Run, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result = run("put", "-", input=items)
    assert result.code == 0, result.stderr
    return list(result.json["results"])


def test_the_same_title_is_a_conflict_however_many_resources_a_search_ranks_first(
    xb_proc: Run,
) -> None:
    """Six resources outrank the one with the same title in a search for the new one's
    title and purpose (a search's first five held none of the conflicts); it is still
    listed, and the decoys, which share too few words, are not."""
    (same,) = put(xb_proc, [SAME])
    put(xb_proc, [decoy(i) for i in range(6)])
    searched = xb_proc(
        "search", "Staging database host Weather forecasting tips", "--mode", "lexical"
    )
    assert searched.code == 0, searched.stderr
    assert same["id"] not in [r["citation"]["id"] for r in searched.json["results"]]
    (result,) = put(xb_proc, [NEW])
    assert result["possibleConflicts"] == [
        {"id": same["id"], "name": "Staging database host", "why": "same title"}
    ]


def test_a_batch_lists_the_conflicts_of_each_of_its_resources(xb_proc: Run) -> None:
    (same,) = put(xb_proc, [SAME])
    other = make("other", title="Sourdough starter feeding", purpose="Keep a starter alive")
    batch = put(
        xb_proc,
        [NEW, make("other-2", title="Sourdough starter feeding", purpose="Feed it"), other],
    )
    conflicts = [[c["id"] for c in r["possibleConflicts"]] for r in batch]
    assert conflicts == [[same["id"]], [], []]  # never the resources written together


def test_candidates_come_only_from_an_index_that_reflects_main(
    xb_proc: Run, store_dir: Path
) -> None:
    """A commit no xbrain hook saw: the postings do not answer for it, the put searches
    instead (catching the index up) and still finds the conflict."""
    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    (same,) = put(xb_proc, [SAME])
    with SimilarFinder(store_dir, store_dir / ".git/xbrain/cache", SIMILAR) as finder:
        found = finder.find(NEW["title"], NEW["purpose"])
    assert found is not None and [r["id"] for r in found] == [same["id"]]
    who = ["-c", "user.name=t", "-c", "user.email=t@x.invalid"]
    subprocess.run(
        ["git", "-C", str(store_dir), *who, "commit", "-q", "--allow-empty", "-m", "by hand"],
        check=True,
    )
    with SimilarFinder(store_dir, store_dir / ".git/xbrain/cache", SIMILAR) as finder:
        assert finder.find(NEW["title"], NEW["purpose"]) is None
    (result,) = put(xb_proc, [NEW])
    assert [c["id"] for c in result["possibleConflicts"]] == [same["id"]]


def test_a_superseded_resource_is_no_candidate(xb_proc: Run, store_dir: Path) -> None:
    (same,) = put(xb_proc, [SAME])
    (newer,) = put(xb_proc, [make("newer", title="Where staging runs", purpose="Staging")])
    assert xb_proc("supersede", same["id"], newer["id"]).code == 0
    with SimilarFinder(store_dir, store_dir / ".git/xbrain/cache", SIMILAR) as finder:
        assert finder.find(NEW["title"], NEW["purpose"]) == []
    (result,) = put(xb_proc, [NEW])
    assert result["possibleConflicts"] == []


def test_a_damaged_index_row_never_fails_the_write(xb_proc: Run, store_dir: Path) -> None:
    """The write is committed before its conflicts are looked for: a row of the index
    that does not read as a resource makes the postings step aside, never the put fail."""
    import sqlite3

    (same,) = put(xb_proc, [SAME])
    index = store_dir / ".git/xbrain/search.sqlite"
    with sqlite3.connect(index) as conn:
        conn.execute("UPDATE docs SET resource = '{not json' WHERE rid = ?", (same["id"],))
    with SimilarFinder(store_dir, store_dir / ".git/xbrain/cache", SIMILAR) as finder:
        assert finder.find(NEW["title"], NEW["purpose"]) is None
    written = xb_proc("put", "-", input=[NEW])
    assert written.code == 0, written.stderr
    assert isinstance(written.json["results"][0]["possibleConflicts"], list)
    assert xb_proc("get", written.json["results"][0]["id"]).code == 0


def test_no_resource_of_a_batch_is_a_conflict_of_another_however_large_the_batch(
    xb_proc: Run,
) -> None:
    """Past the resources a batch checks (its first 50), the rest were written with them
    too: never listed as their conflicts, and never crowding out an older one."""
    (same,) = put(xb_proc, [SAME])
    batch = [make(f"b-{i}", title=NEW["title"], purpose=NEW["purpose"]) for i in range(60)]
    results = put(xb_proc, batch)
    listed = [[c["id"] for c in r["possibleConflicts"]] for r in results]
    assert listed[:50] == [[same["id"]]] * 50
    assert listed[50:] == [[]] * 10  # not checked


def test_the_same_title_is_found_behind_more_near_matches_than_the_candidates_taken(
    xb_proc: Run,
) -> None:
    """25 resources hold every term of NEW's title (more than the 20 candidates taken)
    and were stored before the one with the same title: the candidates are ordered by
    the title's terms their title holds, then the shortest title, before the cut, so
    the same title is still listed (cut in storage order, it was not)."""
    near = [
        make(
            f"near-{i}",
            title=f"Staging database host replica {i} for nightly batch reports",
            purpose="Where the staging database runs nightly batch reports and backups",
        )
        for i in range(25)
    ]
    put(xb_proc, near)
    (same,) = put(
        xb_proc, [make("same-last", title="Staging database host", purpose="Kept by platform")]
    )
    (result,) = put(xb_proc, [NEW])
    assert result["possibleConflicts"] == [
        {"id": same["id"], "name": "Staging database host", "why": "same title"}
    ]


def test_the_same_title_leads_the_conflicts_listed_however_many_look_alike(
    xb_proc: Run,
) -> None:
    """More than ten resources share most words of a new one's title and purpose: the
    ten listed start with the one of the same title, then the most words shared (cut by
    id, the same title fell behind the ten whenever its id sorted late)."""
    purpose = "Where the build cache lives"
    put(
        xb_proc,
        [make(f"alike-{i}", title=f"Build cache server {i}", purpose=purpose) for i in range(24)],
    )
    (same,) = put(
        xb_proc, [make("same-title", title="Build cache server", purpose="Kept by infra")]
    )
    (result,) = put(xb_proc, [make("new-one", title="Build cache server", purpose=purpose)])
    listed = result["possibleConflicts"]
    assert len(listed) == 10
    assert listed[0] == {"id": same["id"], "name": "Build cache server", "why": "same title"}
    assert all(c["why"].startswith("similar title and purpose") for c in listed[1:])


def test_a_title_differing_in_case_and_spacing_only_is_the_same_title(xb_proc: Run) -> None:
    (same,) = put(xb_proc, [make("k8s", title="Kubernetes pod restart guide", purpose="Ops")])
    (result,) = put(xb_proc, [make("k8s-2", title="kubernetes POD restart   guide", purpose="x")])
    assert result["possibleConflicts"] == [
        {"id": same["id"], "name": "Kubernetes pod restart guide", "why": "same title"}
    ]
