"""Hypothesis: the store behaves like a dict model over random put/delete sequences."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make
from xbrain.codec import digest
from xbrain.errors import ConflictError, NotFoundError, StaleError, XbrainError
from xbrain.kinds.model import normalize_resource
from xbrain.store import Store
from xbrain.timestamps import later_of

CLOCK = "2026-06-01T00:00:00.000Z"
SOURCES = ["a", "b", "c"]
TIMES = [
    "2026-01-01T00:00:00.000Z",
    "2026-06-01T00:00:00.000Z",
    "2026-06-01T00:00:00.001Z",
    "2027-01-01T00:00:00.000Z",
]

put_op = st.tuples(
    st.just("put"),
    st.lists(
        st.tuples(st.sampled_from(SOURCES), st.sampled_from(["t1", "t2"]), st.sampled_from(TIMES)),
        min_size=1,
        max_size=2,
    ),
)
delete_op = st.tuples(st.just("delete"), st.sampled_from(SOURCES))
ops = st.lists(st.one_of(put_op, delete_op), min_size=1, max_size=8)


class Model:
    def __init__(self) -> None:
        self.live: dict[str, dict[str, Any]] = {}
        self.tombs: dict[str, str] = {}

    def put(self, batch: list[dict[str, Any]]) -> str:
        ids = [r["id"] for r in batch]
        if len(set(ids)) != len(ids):
            return "invalid"
        live, tombs = dict(self.live), dict(self.tombs)
        for new in batch:
            old, tomb = live.get(new["id"]), tombs.get(new["id"])
            if (old and new["updatedAt"] < old["updatedAt"]) or (tomb and new["updatedAt"] <= tomb):
                return "stale"
            if old and digest(old) == digest(new):
                continue
            if old and old["updatedAt"] == new["updatedAt"]:
                return "conflict"
            live[new["id"]] = new
            tombs.pop(new["id"], None)
        self.live, self.tombs = live, tombs
        return "ok"

    def delete(self, rid: str) -> bool:
        old = self.live.pop(rid, None)
        if old is None:
            return False
        self.tombs[rid] = later_of(CLOCK, old["updatedAt"])
        return True


counter = itertools.count()


@settings(max_examples=25)
@given(ops)
def test_store_matches_model(tmp_path: Path, sequence: list[Any]) -> None:
    store = Store(tmp_path / f"store-{next(counter)}", clock=lambda: CLOCK)
    model = Model()
    for op in sequence:
        if op[0] == "put":
            batch = [
                normalize_resource(make(source, title=title, updatedAt=when)).resource
                for source, title, when in op[1]
            ]
            expected = model.put(batch)
            try:
                store.put(batch)
                outcome = "ok"
            except StaleError:
                outcome = "stale"
            except ConflictError:
                outcome = "conflict"
            except XbrainError:
                outcome = "invalid"
            assert outcome == expected, op
        else:
            rid = normalize_resource(make(op[1])).resource["id"]
            assert store.delete(rid)["deleted"] is model.delete(rid)
    status = store.status()
    assert (status["resources"], status["tombstones"]) == (len(model.live), len(model.tombs))
    for source in SOURCES:
        rid = normalize_resource(make(source)).resource["id"]
        if rid in model.live:
            assert store.get(rid) == model.live[rid]
        else:
            try:
                store.get(rid)
                raise AssertionError("deleted resource still readable")
            except NotFoundError:
                pass
    if store.exists():
        assert store.doctor()["ok"] is True
