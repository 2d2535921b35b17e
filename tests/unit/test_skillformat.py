"""The Agent Skills format and a skill's identities (SPEC §12)."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.errors import InvalidInputError
from xbrain.kinds.skillformat import (
    MAX_COMPONENTS,
    SKILL_MD,
    canonical_hash,
    check_path,
    component_type,
    manifest,
    parse_skill_md,
    revision_id,
    skill_id,
)

SKILL = b"---\nname: incident-triage\ndescription: Triage a production incident.\n---\n# Steps\n"


def test_skill_id_is_the_spec_formula() -> None:
    expected = hashlib.sha256(b'["skill","incident-triage"]').hexdigest()
    assert skill_id("incident-triage") == "skill_" + expected


def test_revision_id_chains_skill_parent_and_hash() -> None:
    first = revision_id(skill_id("a"), None, "sha256:00")
    expected = hashlib.sha256(
        json.dumps([skill_id("a"), None, "sha256:00"], separators=(",", ":")).encode()
    ).hexdigest()[:32]
    assert first == "rev_" + expected
    assert revision_id(skill_id("a"), first, "sha256:00") != first  # the parent is hashed


def test_canonical_hash_is_rfc8785_json_of_the_manifest() -> None:
    files = manifest({SKILL_MD: SKILL, "references/api.md": b"x"})
    skill_sha, x_sha = hashlib.sha256(SKILL).hexdigest(), hashlib.sha256(b"x").hexdigest()
    body = (
        f'{{"files":[{{"bytes":{len(SKILL)},"path":"SKILL.md","sha256":"{skill_sha}",'
        '"type":"instructions"},'
        f'{{"bytes":1,"path":"references/api.md","sha256":"{x_sha}","type":"reference"}}],'
        '"format":"xbrain.skill/1"}'
    )
    assert canonical_hash(files) == "sha256:" + hashlib.sha256(body.encode()).hexdigest()


def test_manifest_sorts_by_utf8_bytes_and_types_by_top_directory() -> None:
    files = {
        SKILL_MD: SKILL,
        "zeta.md": b"z",
        "Ärger.md": b"a",
        "scripts/run.sh": b"echo",
        "assets/logo.png": b"\x89PNG",
        "examples/one.md": b"e",
        "templates/t.md": b"t",
    }
    listed = manifest(files)
    paths = [entry["path"] for entry in listed]
    assert paths == sorted(paths, key=lambda p: p.encode("utf-8"))
    assert paths[-1] == "Ärger.md"  # UTF-8 bytes, not code points or locale
    types = {entry["path"]: entry["type"] for entry in listed}
    assert types == {
        SKILL_MD: "instructions",
        "zeta.md": "document",
        "Ärger.md": "document",
        "scripts/run.sh": "script",
        "assets/logo.png": "artifact",
        "examples/one.md": "example",
        "templates/t.md": "template",
    }


@settings(max_examples=60)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z]{1,8}(/[a-z]{1,8}){0,2}\.md", fullmatch=True),
        st.binary(max_size=64),
        max_size=8,
    )
)
def test_canonical_hash_ignores_order_and_sees_every_byte(components: dict[str, bytes]) -> None:
    files = {SKILL_MD: SKILL, **components}
    forward = canonical_hash(manifest(files))
    backward = canonical_hash(manifest(dict(reversed(list(files.items())))))
    assert forward == backward
    for path, data in components.items():
        changed = {**files, path: data + b"\n"}
        assert canonical_hash(manifest(changed)) != forward


@pytest.mark.parametrize(
    "path",
    [
        "../x",
        "a/../../x",
        "/etc/passwd",
        "C:\\x",
        "C:x",
        "a\\b",
        ".git/config",
        ".GIT/config",
        "sub/.git/hooks/pre-commit",
        "git~1/x",
        ".git./x",
        "a/./b",
        "a//b",
        "",
        "tab\there",
        "a/" * 8 + "deep.md",
        "x" * 513,
        "x" * 256,
        "sub/.gitattributes",
        "a:b.md",
    ],
)
def test_hostile_component_paths_are_refused(path: str) -> None:
    with pytest.raises(InvalidInputError):
        check_path(path)
    with pytest.raises(InvalidInputError):
        manifest({SKILL_MD: SKILL, path: b"x"})


def test_paths_colliding_after_nfc_or_case_are_refused() -> None:
    composed, decomposed = "café.md", unicodedata.normalize("NFD", "café.md")
    assert composed != decomposed
    with pytest.raises(InvalidInputError, match="same after NFC"):
        manifest({SKILL_MD: SKILL, composed: b"1", decomposed: b"2"})
    with pytest.raises(InvalidInputError, match="case folding"):
        manifest({SKILL_MD: SKILL, "Notes.md": b"1", "notes.md": b"2"})
    assert check_path(decomposed) == composed  # stored in NFC


def test_limits() -> None:
    with pytest.raises(InvalidInputError, match="128 KiB"):
        manifest({SKILL_MD: SKILL, "big.bin": b"x" * (128 * 1024 + 1)})
    assert manifest({SKILL_MD: SKILL, "edge.bin": b"x" * (128 * 1024)})
    many = {f"c{i}.md": b"." for i in range(MAX_COMPONENTS + 1)}
    with pytest.raises(InvalidInputError, match="at most 50"):
        manifest({SKILL_MD: SKILL, **many})
    with pytest.raises(InvalidInputError, match="64 KiB"):
        parse_skill_md(SKILL + b"x" * (64 * 1024))
    with pytest.raises(InvalidInputError, match=r"needs a SKILL\.md"):
        manifest({"notes.md": b"x"})
    with pytest.raises(InvalidInputError, match="type"):
        manifest({SKILL_MD: SKILL, "a.md": b"x"}, {"a.md": "executable"})


def test_frontmatter_is_parsed_and_checked() -> None:
    parsed = parse_skill_md(
        b"---\nname: db-migrate\ndescription: Run a migration.\nmetadata:\n  team: core\n"
        b"owner: me\n---\nBody \xe4\xb8\xad\n"
    )
    assert parsed.slug == "db-migrate"
    assert parsed.frontmatter["metadata"] == {"team": "core"}
    assert parsed.unknown == ("owner",)
    assert parsed.body == "Body 中\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"name: x\n", "begin with YAML frontmatter"),
        (b"\xef\xbb\xbf---\nname: a\ndescription: d\n---\n", "save it as UTF-8 without one"),
        (b"---\nname: a\ndescription: d\n", "not closed"),
        (b"---\n- a\n---\n", "mapping"),
        (b"---\nname: [\n---\n", "not valid YAML"),
        (b"---\ndescription: d\n---\n", "name must be"),
        (b"---\nname: Bad_Name\ndescription: d\n---\n", "name must be"),
        (b"---\nname: -lead\ndescription: d\n---\n", "name must be"),
        (b"---\nname: a--b\ndescription: d\n---\n", "name must be"),
        (b"---\nname: " + b"a" * 65 + b"\ndescription: d\n---\n", "name must be"),
        (b"---\nname: a\n---\n", "description"),
        (b"---\nname: a\ndescription: '" + b"d" * 1025 + b"'\n---\n", "description"),
        (b"---\nname: a\ndescription: d\nmetadata:\n  n: 1\n---\n", "metadata"),
        (b"---\nname: a\ndescription: d\ncompatibility: [x]\n---\n", "compatibility"),
        (b"---\nname: a\ndescription: d\nallowed-tools: {a: b}\n---\n", "allowed-tools"),
        (b"---\nname: a\ndescription: d\n---\n\xff", "UTF-8"),
    ],
)
def test_bad_frontmatter_is_one_clear_error(text: bytes, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        parse_skill_md(text)


def test_a_yaml_error_names_the_line_of_skill_md_without_ruamels_boilerplate() -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_skill_md(b"---\nname: a\ndescription: d\nname: b\n---\nbody\n")
    message = str(caught.value)
    assert 'duplicate key "name"' in message and "(line 4, column 1)" in message
    assert "unicode string" not in message and "suppress" not in message


@given(st.from_regex(r"[a-z0-9]+(-[a-z0-9]+)*", fullmatch=True).filter(lambda s: len(s) <= 64))
def test_every_valid_slug_is_accepted_and_ids_differ(slug: str) -> None:
    text = f"---\nname: '{slug}'\ndescription: d\n---\n".encode()
    assert parse_skill_md(text).slug == slug
    assert skill_id(slug) != skill_id(slug + "-x")


def test_a_name_yaml_reads_as_a_number_says_to_quote_it() -> None:
    with pytest.raises(InvalidInputError, match="quote it"):
        parse_skill_md(b"---\nname: 0\ndescription: d\n---\n")


def test_component_type_default() -> None:
    assert component_type("README.md") == "document"
    assert component_type("references/deep/x.md") == "reference"
    assert component_type("referencesx/y.md") == "document"


def test_golden_vector_for_the_identities() -> None:
    """Pinned values: a change to the manifest, the hashing or the chaining that alters
    any stored id fails here (each value was checked against the SPEC's formulas)."""
    files = {
        "SKILL.md": b"---\nname: golden\ndescription: A golden vector.\n---\nStep 1.\n",
        "references/a.md": b"A\n",
        "scripts/run.sh": b"#!/bin/sh\n",
    }
    entries = manifest(files)
    assert [(e["path"], e["type"], e["bytes"]) for e in entries] == [
        ("SKILL.md", "instructions", 59),
        ("references/a.md", "reference", 2),
        ("scripts/run.sh", "script", 10),
    ]
    sid = skill_id("golden")
    assert sid == "skill_a7f7bb60c5fcc299b22a753ce5320181e1f89a40c5b30fe3dc509d982f3f810f"
    content = canonical_hash(entries)
    assert content == "sha256:e62638c95ea287dd48a2ea3a534834e9eb1e1da6f342a0decf4ac4afffe9a50c"
    first = revision_id(sid, None, content)
    assert first == "rev_3f2f2481532f9d83489bb41f07b0a19f"
    assert revision_id(sid, first, content) == "rev_6232a0f55873f33bbab787ad671a332f"


_JSON_TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["\ud800", "a\udfff", "\u2028", "\x7f", "\x00\x1f", '"\\/', "😀", "é"]),
)
_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**54), max_value=2**54),
        st.floats(allow_nan=False, allow_infinity=False),
        _JSON_TEXT,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_JSON_TEXT, inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=400)
@given(st.lists(st.one_of(_JSON, st.dictionaries(_JSON_TEXT, _JSON, max_size=5)), max_size=4))
def test_canonical_hash_is_rfc8785s_for_any_value_or_its_error(files: list[Any]) -> None:
    """The hash takes json's sorted compact form where that is RFC 8785's bytes (a
    manifest: ASCII keys, text and whole numbers), and rfc8785's own for anything else:
    the same hash, or the same error, for every value."""
    import rfc8785

    try:
        expected: Any = (
            "sha256:"
            + hashlib.sha256(
                rfc8785.dumps({"format": "xbrain.skill/1", "files": files})
            ).hexdigest()
        )
    except Exception as exc:  # what rfc8785 refuses, the hash refuses alike
        expected = type(exc)
    try:
        found: Any = canonical_hash(files)
    except Exception as exc:
        found = type(exc)
    assert found == expected
