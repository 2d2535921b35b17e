"""Hypothesis: canonical forms round-trip exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from tests.conftest import sample
from xbrain.codec import canonical_json, dump_yaml, load_yaml
from xbrain.kinds.model import normalize_resource

# Any text a user could store: everything but NUL and lone surrogates.
text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=300
)
notes = st.lists(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        max_size=40,
    ),
    max_size=6,
)


@given(
    title=text,
    body=text,
    summary=text,
    purpose=text,
    use_when=notes,
    limitations=notes,
    reason=st.one_of(st.none(), text),
)
def test_resource_yaml_round_trip(
    title: str,
    body: str,
    summary: str,
    purpose: str,
    use_when: list[str],
    limitations: list[str],
    reason: str | None,
) -> None:
    raw = sample(
        title=title,
        text=body,
        summary=summary,
        purpose=purpose,
        useWhen=use_when,
        limitations=limitations,
        savedReason=reason,
    )
    resource = normalize_resource(raw).resource
    data = dump_yaml(resource)
    back = load_yaml(data)
    assert back == resource
    assert list(back) == list(resource)
    assert normalize_resource(back).resource == resource  # reading re-normalizes to itself
    assert dump_yaml(back) == data  # one canonical byte form
    assert load_yaml(data) == YAML(typ="safe", pure=True).load(data)  # ruamel's own reading


yaml_scalars = st.one_of(
    st.sampled_from(["yes", "no", "on", "off", "~", "null", "0777", "0o17", "1:20", "1e3", ".inf"]),
    st.sampled_from(["2026-01-01", "0x1f", "+12", "-0", "true", "False", "'quoted'", "a: b"]),
    st.sampled_from(["!!float 1:20", "!!int 0777", "1_000", ".NaN", "1.5e-3", "[1, 2]", "{}"]),
    text,
)


@given(
    st.dictionaries(st.sampled_from(["a", "b", "c"]), yaml_scalars, max_size=3),
    st.sampled_from(["", "%YAML 1.1\n---\n", "%YAML 1.2\n---\n", "---\n"]),
)
def test_hand_written_yaml_reads_as_ruamel_reads_it(mapping: dict[str, str], head: str) -> None:
    """Plain scalars a person might type, unquoted, with or without a directive: what
    ruamel's own safe engine makes of them (the same value, or the same error), and never
    a warning (the suite turns warnings into errors)."""
    data = (head + "".join(f"{key}: {value}\n" for key, value in mapping.items())).encode()
    try:
        expected: Any = YAML(typ="safe", pure=False).load(data)
    except (YAMLError, ValueError) as exc:
        expected = type(exc)
    try:
        fast: Any = load_yaml(data)
    except (YAMLError, ValueError) as exc:
        fast = type(exc)
    assert fast == expected or (fast != fast and expected != expected)  # NaN != NaN


def test_multiline_text_is_a_block_scalar() -> None:
    resource = normalize_resource(sample(text="line one\nline two\nline three")).resource
    assert "text: |-\n  line one\n  line two\n  line three\n" in dump_yaml(resource).decode()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(text, children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_canonical_json_round_trip(value: Any) -> None:
    encoded = canonical_json(value)
    assert json.loads(encoded) == value
    assert "\n" not in encoded


def test_without_the_c_extension_records_load_the_same(monkeypatch: Any) -> None:
    """Where ruamel.yaml's C loader cannot be imported, the pure-Python engine reads."""
    import sys

    from xbrain import codec

    data = dump_yaml(normalize_resource(sample(text="line one\nline two")).resource)
    expected = load_yaml(data)
    monkeypatch.setattr(codec, "_loader", None)
    monkeypatch.setitem(sys.modules, "ruamel.yaml.cyaml", None)  # import fails
    assert load_yaml(data) == expected
    assert codec._loader is None  # nothing cached: the engine did the work


def _ruamel_construct(data: bytes) -> Any:
    """What ruamel's own constructor makes of ``data`` (value, or error type and text),
    on the same C parser and YAML 1.2 resolver ``load_yaml`` uses."""
    from xbrain import codec

    loader = codec._fast_loader()(data.decode())
    try:
        return loader.get_single_data()
    except (YAMLError, ValueError) as exc:
        return (type(exc), str(exc))
    finally:
        loader.dispose()


def _read(data: bytes) -> Any:
    try:
        return load_yaml(data)
    except (YAMLError, ValueError) as exc:
        return (type(exc), str(exc))


# pieces of YAML a person (or an attacker) may write by hand
yaml_values = st.one_of(
    yaml_scalars,
    st.sampled_from(["&x [1, 2]", "*x", "&y {a: 1}", "*y", "!!set {a, b}", "!!omap [{a: 1}]"]),
    st.sampled_from(["!!str 12", "!!map {a: 1}", "!!seq [a]", "!foo bar", "!!binary aGk=", "*z"]),
    st.sampled_from(["[a, [b, {c: d}]]", "{<<: {m: 1}, a: 2}", "{a: 1, a: 2}", "{? [a]: b}"]),
)
yaml_keys = st.sampled_from(["a", "b", "c", "<<", "=", "1", "null", "!!str k", "? [k]", "'q'"])


@given(st.lists(st.tuples(yaml_keys, yaml_values), max_size=5), st.booleans())
def test_load_yaml_constructs_as_ruamel_does(entries: list[tuple[str, str]], nest: bool) -> None:
    """The plain walk in load_yaml gives ruamel's value — or ruamel's exact error — for
    anchors, aliases, merge keys, tags, duplicate and non-string keys, nested or not."""
    lines = "".join(f"{key}: {value}\n" for key, value in entries)
    if nest:
        lines = "top:\n" + "".join(f"  {line}\n" for line in lines.splitlines())
    data = lines.encode()
    expected, fast = _ruamel_construct(data), _read(data)
    assert fast == expected or repr(fast) == repr(expected)  # NaN != NaN


def test_load_yaml_keeps_aliases_shared_and_merges() -> None:
    value = load_yaml(b"a: &x [1, 2]\nb: *x\nc: {d: *x}\n")
    assert value["a"] is value["b"] is value["c"]["d"]  # one object, as ruamel makes it
    value = load_yaml(b"base: &m {k: 1}\nc:\n  <<: *m\n  j: 2\n")
    assert value["c"] == {"k": 1, "j": 2}


def test_load_yaml_refuses_what_ruamel_refuses_in_its_words() -> None:
    for data in (b"a: 1\na: 2\n", b"a: !foo bar\n", b"a: !!int x\n", b"- a\n- !!timestamp nope\n"):
        refused = _read(data)
        assert isinstance(refused, tuple)
        assert refused == _ruamel_construct(data)


def test_load_yaml_reads_deep_block_nesting_without_recursion() -> None:
    """Indentation nests without any bracket, so the depth check does not see it: the walk
    stops at MAX_YAML_DEPTH and ruamel (whose constructor does not recurse) builds it."""
    from xbrain.codec import MAX_YAML_DEPTH

    depth = 6 * MAX_YAML_DEPTH  # past Python's recursion limit too
    data = "".join(f"{' ' * level}k{level}:\n" for level in range(depth)) + " " * depth + "v\n"
    value = load_yaml(data.encode())
    for level in range(depth):
        value = value[f"k{level}"]
    assert value == "v"


def _stock_dump(value: Any) -> bytes:
    """The record bytes as ruamel's stock safe representer makes them, with xbrain's one
    rule (multi-line strings as block scalars) added on a subclass of its own."""
    import io

    from ruamel.yaml.representer import SafeRepresenter

    class Stock(SafeRepresenter):
        pass

    def block(representer: Any, text: str) -> Any:
        style = "|" if "\n" in text else None
        return representer.represent_scalar("tag:yaml.org,2002:str", text, style=style)

    Stock.add_representer(str, block)
    engine = YAML(typ="safe", pure=False)
    engine.Representer = Stock
    engine.default_flow_style = False
    engine.allow_unicode = True
    engine.width = 1 << 30
    engine.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    out = io.StringIO()
    engine.dump(value, out)
    return out.getvalue().encode("utf-8")


@given(st.dictionaries(text, json_values, max_size=6))
def test_record_bytes_are_ruamels_own(value: dict[str, Any]) -> None:
    """``dump_yaml`` makes each tag once instead of per scalar; the bytes are the ones
    ruamel's stock representer writes, so no stored record changes form."""
    assert dump_yaml(value) == _stock_dump(value)


def test_record_bytes_of_a_resource_are_ruamels_own() -> None:
    resource = normalize_resource(sample(text="line one\nline two", useWhen=["a", "b"])).resource
    assert dump_yaml(resource) == _stock_dump(resource)


def test_dumping_a_record_leaves_ruamels_shared_representer_alone() -> None:
    """xbrain's block-scalar rule is its engine's own: another ruamel user in the same
    process (an agent that embeds xbrain) still gets ruamel's output."""
    import io

    from ruamel.yaml.representer import SafeRepresenter

    dump_yaml({"text": "line one\nline two"})
    assert SafeRepresenter.yaml_representers[str] is SafeRepresenter.represent_str
    out = io.StringIO()
    YAML(typ="safe", pure=False).dump({"text": "line one\nline two"}, out)
    assert "|" not in out.getvalue()


def test_a_long_history_of_short_lines_is_not_walked_twice(monkeypatch: Any) -> None:
    """A skill's state with 400 revisions holds 400 ``- `` but can nest only a few levels
    (its lines are short): it is parsed once, without the event walk that guards
    against deep nesting. Deep text is still walked and refused (test_bounded_inputs)."""
    from xbrain import codec

    revisions = [{"id": f"rev_{i:032x}", "number": i, "state": "draft"} for i in range(400)]
    data = dump_yaml({"slug": "demo", "revisions": revisions})
    walks: list[int] = []
    walk = codec._check_depth
    monkeypatch.setattr(codec, "_check_depth", lambda *args: walks.append(1) or walk(*args))
    assert load_yaml(data)["revisions"] == revisions
    assert walks == []
    compact = ("- " * 300 + "x\n").encode()  # 300 levels on one line: walked, refused
    with pytest.raises(codec.YamlTooDeep):
        load_yaml(compact)
    assert walks == [1]


def _tightest_yaml(blocks: list[str], flows: int) -> str:
    """Nested block collections written as narrow as YAML allows: a mapping's child one
    column right, a sequence as a mapping's value at the mapping's own column, a
    sequence entry's content on the next line one column right; then ``flows`` levels
    of brackets, one bracket a line."""
    lines, column = [], 0
    for level, kind in enumerate(blocks):
        lines.append(" " * column + ("k:" if kind == "dict" else "-"))
        inner = blocks[level + 1] if level + 1 < len(blocks) else None
        column += 0 if kind == "dict" and inner == "list" else 1
    pad = " " * column
    lines += [pad + "["] * flows + [pad + "x"] + [pad + "]"] * flows
    return "\n".join(lines) + "\n"


alternating = st.integers(min_value=50, max_value=115).map(lambda n: ["dict", "list"] * n)


@settings(max_examples=80, deadline=None)
@given(
    st.one_of(alternating, st.lists(st.sampled_from(["list", "dict"]), min_size=100, max_size=230)),
    st.integers(min_value=0, max_value=120),
)
def test_text_that_nests_past_the_limit_is_always_walked(blocks: list[str], flows: int) -> None:
    """The bound that lets short-lined text skip the depth walk never lets deep text
    through, even nesting written as narrow as YAML allows (``_tightest_yaml``). The
    walk itself confirms each text's depth."""
    from xbrain import codec

    text = _tightest_yaml(blocks, flows)
    deep = len(blocks) + flows > codec.MAX_YAML_DEPTH
    if deep:
        assert codec._may_nest_deeper(text)
    try:
        codec._check_depth(text, codec._fast_loader())
        walked_deep = False
    except codec.YamlTooDeep:
        walked_deep = True
    assert walked_deep == deep
