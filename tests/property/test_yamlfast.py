"""A record's YAML made without ruamel's per-call set-up (``xbrain.yamlfast``, issue 45
item 4: the dump of a batch's 1,000 records) is byte for byte what ruamel writes: ids
and revision digests depend on those bytes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLES, sample
from tests.property.test_roundtrip import _stock_dump, yaml_scalars
from xbrain import codec
from xbrain.codec import dump_yaml, load_yaml
from xbrain.kinds.design import carry_design, normalize_design
from xbrain.kinds.model import normalize_resource

# keys and strings YAML must quote, fold or escape: several lines, padding, tabs, line
# separators, what reads as another type
tricky = st.one_of(
    yaml_scalars,
    st.sampled_from(["a\n", "a\n\n", " lead\nx", "x \ny", "\ta\n", "\u2028", "\x85", "é\n"]),
    st.sampled_from(["- a", "? b", "&a", "*a", "!t", "%x", "@", "`", "|", ">", "a #b", ""]),
)
plain = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | tricky,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(tricky, children, max_size=4),
    max_leaves=24,
)


@settings(max_examples=300)
@given(plain)
def test_plain_values_are_written_as_ruamel_writes_them(value: Any) -> None:
    data = dump_yaml(value)
    assert data == _stock_dump(value)
    assert load_yaml(data) == value


def test_a_container_twice_is_left_to_ruamel_and_its_alias() -> None:
    shared = ["a", "b"]
    value = {"useWhen": shared, "limitations": shared, "n": 1.5}
    data = dump_yaml(value)
    assert data == _stock_dump(value)
    assert b"&id001" in data


def test_a_resource_is_dumped_without_ruamels_representer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before: every dump went through the representer's walk (and a class built per
    call), half a batch's dump."""
    old = normalize_resource(sample(text="line one\nline two", useWhen=["a", "b"])).resource
    design = normalize_design(codec.load_yaml((EXAMPLES / "analysis.json").read_bytes())["design"])
    stale = carry_design({**old, "design": design}, {**old, "text": "changed"})
    expected = [_stock_dump(old), _stock_dump(stale)]
    dump_yaml(old)  # the engine is made

    def refused(*_: object) -> None:
        raise AssertionError("the representer walked the record")

    monkeypatch.setattr(codec._engine().Representer, "represent_data", refused)
    assert [dump_yaml(old), dump_yaml(stale)] == expected


entries = st.dictionaries(
    tricky, st.dictionaries(tricky, st.none() | st.integers() | tricky, max_size=3), max_size=5
)


@given(entries)
def test_a_catalog_shard_is_written_as_json_dumps_writes_it(value: dict[str, Any]) -> None:
    """``dump_catalog`` makes its JSON encoder once instead of per entry: the same bytes."""
    import json

    from xbrain.core.layout import dump_catalog

    lines = [
        f"  {json.dumps(key)}: {json.dumps(value[key], ensure_ascii=False, sort_keys=True)}"
        for key in sorted(value)
    ]
    expected = ("{\n" + ",\n".join(lines) + "\n}\n" if lines else "{}\n").encode()
    assert dump_catalog(value) == expected


def test_a_value_no_implicit_resolver_could_read_is_not_handed_to_ruamels_resolver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Quoted, or plain with a first character no implicit resolver starts at: ruamel's
    answer is its default string tag without looking further, given at once (a batch's
    values are each new: before, each long or first-seen one went through ruamel's
    resolver, twice)."""
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import Resolver

    # keys and values none of ruamel's implicit resolvers starts at (t, f, n, digits…
    # have one: "title" would be answered from the cache of short scalars, when it has
    # room, and asked of ruamel when earlier dumps filled it)
    record = {
        "id": "resource_" + "ab" * 32,
        "label": "Benchmark resource 12345 with a label longer than sixty-four characters",
        "body": "Several lines\nof text\n",
        "links": ["a link never seen before", "https://example.com/a/b"],
    }
    stock = _stock_dump(record)
    codec.dump_yaml({"warm": "up"})
    asked: list[str] = []
    real = Resolver.resolve

    def resolve(self: Any, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode:
            asked.append(value)
        return real(self, kind, value, implicit)

    monkeypatch.setattr(Resolver, "resolve", resolve)
    assert dump_yaml(record) == stock
    assert asked == []
    others = {"a": "123 starts like a number", "b": "null", "c": "false start, new"}
    assert dump_yaml(others) == _stock_dump(others)
    assert set(asked) >= set(others.values())  # these are read further
