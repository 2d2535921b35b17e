"""An entry write's ``possibleConflicts`` found through its rarest words
(``entries.review._Alike``) are those of comparing it with every entry."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.entries.review import conflicts
from xbrain.text import SIMILAR, likeliest_conflicts, shared_words, word_set

# few words, so that many pairs share most of theirs: the threshold is crossed both ways
_WORDS = ("deploy", "staging", "host", "backup", "nightly", "配置", "网络", "the", "to", "db")


def _every_pair(
    written: list[dict[str, Any]], existing: list[dict[str, Any]]
) -> list[list[dict[str, Any]]]:
    """The conflicts as one comparison per pair finds them (the rule, spelled plainly)."""
    out = []
    for new in written:
        words = word_set(f"{new['name']} {new['description']} {new.get('oneLiner', '')}")
        found = []
        for other in existing:
            if (
                other["id"] == new["id"]
                or other["status"] != "active"
                or (other["scope"], other["kind"]) != (new["scope"], new["kind"])
                or other["id"] in new.get("supersedes", ())
            ):
                continue
            theirs = word_set(f"{other['name']} {other['description']} {other.get('oneLiner', '')}")
            share = shared_words(words, theirs)
            if other["name"].casefold() == new["name"].casefold():
                found.append((2.0, {"id": other["id"], "name": other["name"], "why": "same name"}))
            elif share >= SIMILAR:
                why = f"similar name and description ({share:.2f} of words shared)"
                found.append((share, {"id": other["id"], "name": other["name"], "why": why}))
        out.append(likeliest_conflicts(found))
    return out


_TEXT = st.lists(st.sampled_from(_WORDS), max_size=7).map(" ".join)


@st.composite
def _entry(draw: st.DrawFn, i: int) -> dict[str, Any]:
    entry = {
        "id": f"entry_{i:04x}",
        "name": draw(st.sampled_from(["Deploy", "deploy", "Backup host", "网络", "x"])),
        "description": draw(_TEXT),
        "scope": draw(st.sampled_from(["global", "project:a"])),
        "kind": draw(st.sampled_from(["rule", "memory"])),
        "status": draw(st.sampled_from(["active", "active", "proposed"])),
    }
    if draw(st.booleans()):
        entry["oneLiner"] = draw(_TEXT)
    return entry


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_conflicts_through_the_rarest_words_are_those_of_every_pair(data: st.DataObject) -> None:
    existing = [data.draw(_entry(i)) for i in range(data.draw(st.integers(0, 25)))]
    written = [data.draw(_entry(100 + i)) for i in range(data.draw(st.integers(1, 6)))]
    for other in existing:  # many near the threshold: a written one's words, some dropped
        if data.draw(st.booleans()):
            new = data.draw(st.sampled_from(written))
            words = sorted(word_set(f"{new['name']} {new['description']}"))
            kept = data.draw(st.lists(st.sampled_from(words), unique=True)) if words else []
            other.update(name=new["name"] if data.draw(st.booleans()) else "x")
            other.update(description=" ".join(kept), scope=new["scope"], kind=new["kind"])
    if existing and data.draw(st.booleans()):  # an update of an existing one, superseding
        written[0]["id"] = existing[0]["id"]
        written[0]["supersedes"] = [e["id"] for e in existing[1:3]]
    results = [{"id": new["id"], "status": "added"} for new in written]
    conflicts(written, existing, results)
    assert [r["possibleConflicts"] for r in results] == _every_pair(written, existing)


def test_a_pair_at_the_threshold_that_shares_only_common_words_is_found() -> None:
    """``a b c d e`` and ``c d e`` share 3 of 5 words (0.6): found though c, d and e are
    the most common words here — the rarest three of the five must be looked up."""

    def entry(i: int, name: str, description: str) -> dict[str, Any]:
        return {"id": f"entry_{i}", "name": name, "description": description}

    base = {"scope": "global", "kind": "rule", "status": "active"}
    existing = [{**entry(i, "c", "d e"), **base} for i in range(3)]
    written = [{**entry(9, "a", "b c d e"), **base}]
    results = [{"id": "entry_9", "status": "added"}]
    conflicts(written, existing, results)
    assert [c["id"] for c in results[0]["possibleConflicts"]] == ["entry_0", "entry_1", "entry_2"]
    assert results[0]["possibleConflicts"] == _every_pair(written, existing)[0]
