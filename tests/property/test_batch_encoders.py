"""What a batch's records are written with, made cheaper per record (issue 45 item 4):
the same text as before. The catalog line's encoder (one C encoder made once instead of
a ``JSONEncoder`` set up per value), ``canonical_json`` (one encoder), a catalog entry's
digest and size (one encoding) and ``record_texts`` (a list)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import sample
from xbrain.codec import canonical_json, digest
from xbrain.core import layout
from xbrain.core.derive import catalog_entry, record_bytes
from xbrain.kinds.model import normalize_resource
from xbrain.secretscan import record_texts

text = st.text(
    st.characters(codec="utf-8") | st.sampled_from(["\u2028", "\x00", '"', "\\", "é", "😀"])
)
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(text, children, max_size=4),
    max_leaves=20,
)


def test_the_catalog_line_encoder_is_the_fast_one_on_this_python() -> None:
    assert layout._ENTRY_FAST is not layout._ENTRY


@settings(max_examples=500, deadline=None)
@given(values)
def test_a_catalog_line_is_what_json_dumps_writes(value: Any) -> None:
    assert layout._ENTRY_FAST(value) == json.dumps(value, ensure_ascii=False, sort_keys=True)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(text, values, max_size=6))
def test_a_catalog_file_is_one_sorted_json_line_per_entry(entries: dict[str, Any]) -> None:
    data = layout.dump_catalog(entries)
    assert json.loads(data) == json.loads(json.dumps(entries))
    expected = [
        f"  {json.dumps(key)}: {json.dumps(entries[key], ensure_ascii=False, sort_keys=True)}"
        for key in sorted(entries)
    ]
    body = ",\n".join(expected)
    assert data == ("{\n" + body + "\n}\n" if entries else "{}\n").encode()


@settings(max_examples=500, deadline=None)
@given(values)
def test_canonical_json_is_json_dumps_compact_with_lone_surrogates_escaped(value: Any) -> None:
    plain = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    assert canonical_json(value) == plain
    assert canonical_json(["\ud800", value]) == '["\\ud800",' + plain + "]"


def test_a_catalog_entry_has_the_records_digest_and_size() -> None:
    record = normalize_resource(sample(title="Ünïcode 标题 😀", useWhen=["a", "b"])).resource
    entry = catalog_entry("resource", record)
    assert entry["revision"] == digest(record)
    assert entry["bytes"] == record_bytes(record) == len(canonical_json(record).encode())
    assert list(entry) == ["path", "revision", "updatedAt", "bytes"]


def test_record_texts_names_every_string_with_its_path_in_order() -> None:
    record = {"a": "x", "b": [1, "y", {"c": "z", "d": None}], "e": {"f": ("g", "h")}, "i": 2}
    assert record_texts(record) == [
        ("a", "x"),
        ("b[1]", "y"),
        ("b[2].c", "z"),
        ("e.f[0]", "g"),
        ("e.f[1]", "h"),
    ]
    assert record_texts("alone") == [("value", "alone")]
    assert record_texts(["p", ["q"]], "tags") == [("tags[0]", "p"), ("tags[1][0]", "q")]
