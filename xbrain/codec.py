"""Canonical encodings: JSON for digests and documents, YAML for record files.

These byte forms are part of the contract. ``canonical_json`` reproduces JavaScript's
``JSON.stringify`` (compact, insertion order, raw non-ASCII, lone surrogates escaped) so
ids, revisions and provider keys match the original implementation byte for byte.
Changing it changes every hash. ``dump_yaml`` is the one emitter for record files: block
scalars for multi-line strings so ``git log -p`` shows line diffs; ``load_yaml`` reads them
back to exactly the same value (a tested property).
"""

from __future__ import annotations

import io
import json
import re

TYPE_CHECKING = False  # recall's served path writes JSON with this module: no typing
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_YAML_DEPTH",
    "YamlTooDeep",
    "canonical_json",
    "digest",
    "dump_yaml",
    "json_document",
    "load_yaml",
    "marked_json",
    "sha256_hex",
    "yaml_problem",
]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


# what ``json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)``
# builds on every call, made once (ids, digests and sizes take one per record)
_CANONICAL = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def canonical_json(value: Any) -> str:
    """Serialize like JavaScript ``JSON.stringify(value ?? null)``."""
    return _escape_lone_surrogates(_CANONICAL(value))


def _escape_lone_surrogates(text: str) -> str:
    # A Python str holds astral characters as one code point, so any surrogate left in
    # it is unpaired (a file name that is not UTF-8 reads as one); JavaScript escapes
    # those as \udXXX, which keeps the document valid UTF-8.
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 of raw bytes."""
    import hashlib  # not at import: printing a search answer needs no digest

    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """The original's ``digest(v)``: SHA-256 of the canonical JSON, as UTF-8."""
    return sha256_hex(canonical_json(value).encode("utf-8"))


def json_document(value: Any, *, reveal: bool = True) -> str:
    """A human-facing JSON document: 2-space indent, non-ASCII kept, trailing newline.

    Matches the original's ``JSON.stringify(value, null, 2) + "\\n"``, lone surrogates
    escaped as it escapes them; and (``reveal``, all but the original's store file)
    every character that can hide text from a reviewer written as its ``\\u`` escape
    (:func:`xbrain.text.reveal_hidden`).
    """
    text = _escape_lone_surrogates(json.dumps(value, ensure_ascii=False, indent=2)) + "\n"
    if reveal:
        from .text import reveal_hidden

        text = reveal_hidden(text)
    return text


def marked_json(value: Any) -> str:
    """Compact JSON for a model's context (a hook's answer), non-ASCII kept, each
    character that can hide text from the user marked visibly
    (:func:`xbrain.text.mark_hidden`): the user reads what the model gets only as the
    agent shows it."""
    from .text import mark_hidden

    return mark_hidden(json.dumps(value, ensure_ascii=False))


_yaml: Any = None


def _representer() -> Any:
    """ruamel's safe representer, for xbrain's engine alone (not registered on ruamel's
    class, which every other user of ruamel in the process shares): multi-line strings
    as block scalars, and each standard tag made once. ruamel makes a new tag object for
    every scalar and decodes its URI character by character, which was half of a
    dump's time (a skill's state with 400 revisions: 65 → 34 ms)."""
    from ruamel.yaml.representer import SafeRepresenter
    from ruamel.yaml.tag import Tag

    tags: dict[str, Any] = {}

    def tag(name: Any) -> Any:
        if not isinstance(name, str):
            return name
        made = tags.get(name)
        if made is None:
            made = tags[name] = Tag(suffix=name)
        return made

    class Representer(SafeRepresenter):
        def represent_scalar(
            self, tag_name: Any, value: Any, style: Any = None, anchor: Any = None
        ) -> Any:
            return super().represent_scalar(tag(tag_name), value, style, anchor)

        def represent_sequence(self, tag_name: Any, sequence: Any, flow_style: Any = None) -> Any:
            return super().represent_sequence(tag(tag_name), sequence, flow_style)

        def represent_mapping(self, tag_name: Any, mapping: Any, flow_style: Any = None) -> Any:
            return super().represent_mapping(tag(tag_name), mapping, flow_style)

    from .yamlfast import block_style

    def represent_str(representer: Any, text: str) -> Any:
        style = block_style(text)
        return representer.represent_scalar("tag:yaml.org,2002:str", text, style=style)

    Representer.add_representer(str, represent_str)
    Representer.tag = staticmethod(tag)  # type: ignore[attr-defined]
    return Representer


def _engine() -> Any:
    global _yaml
    if _yaml is None:
        from ruamel.yaml import YAML

        engine = YAML(typ="safe", pure=False)
        engine.Representer = _representer()
        engine.default_flow_style = False
        engine.allow_unicode = True
        engine.width = 1 << 30  # never fold long lines: keeps one field per line in diffs
        engine.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
        _yaml = engine
    return _yaml


def dump_yaml(value: Any) -> bytes:
    """The canonical YAML bytes of a record (keys in insertion order): a record of plain
    values through :mod:`.yamlfast` (the same bytes, half the time), anything else
    through ``YAML.dump``."""
    from .yamlfast import dump_plain

    out = io.StringIO()
    if not dump_plain(_engine(), value, out):
        _engine().dump(value, out)
    return out.getvalue().encode("utf-8")


MAX_YAML_DEPTH = 200
# what nests cheaply: flow collections, and block sequences or complex keys on one line
_NESTING = ("[", "{", "- ", "? ")


class YamlTooDeep(ValueError):
    """YAML nested deeper than any file xbrain reads. ruamel's C composer recurses once
    per level with no bound: some 25,000 levels (50 KB of ``[``) crash the process."""

    problem = f"nested deeper than {MAX_YAML_DEPTH} levels"
    problem_mark = None


def load_yaml(data: bytes) -> Any:
    """Parse YAML bytes written by :func:`dump_yaml` (or by hand), by YAML 1.2 rules.

    ruamel's ``YAML.load`` builds a loader class for every call, ~0.15 ms that dwarfs the
    parse of a small record (a reindex reads thousands). The loader below is built once
    from the same parts: the C parser, the safe constructor, the YAML 1.2 resolver; the
    parsed document is then built by :func:`_construct`, a quarter faster per record.
    Text that could nest deeper than ``MAX_YAML_DEPTH`` is first walked event by event
    (the parser's events are flat; only composing recurses) and refused (YamlTooDeep).
    """
    text = data.decode("utf-8")
    loader_class = _fast_loader()
    if loader_class is None:  # no C extension on this platform: the pure-Python engine
        return _engine().load(text)  # deep text: RecursionError, never a crash
    if sum(text.count(token) for token in _NESTING) > MAX_YAML_DEPTH and _may_nest_deeper(text):
        _check_depth(text, loader_class)
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        return None if node is None else _construct(loader, node)
    finally:
        loader.dispose()


_STR, _SEQ, _MAP = (f"tag:yaml.org,2002:{name}" for name in ("str", "seq", "map"))


class _Unusual(Exception):
    """A node the plain walk leaves to ruamel's constructor."""


def _construct(loader: Any, root: Any) -> Any:
    """The value of the document ``root``, as ruamel's safe constructor makes it.

    A record is mappings, sequences and strings. ruamel's constructor dispatches each of
    them by its tag's text and through generators, which costs more than parsing it.
    This walk builds those three directly and hands other scalars (null, numbers, dates)
    to ruamel's constructor one by one. Anything else — an alias of a collection, a merge
    key, a duplicate or non-string key, another tag, nesting past ``MAX_YAML_DEPTH``, a
    scalar ruamel refuses — sends the whole document to ruamel's own construction, so
    values, shared objects, errors and warnings are ruamel's (a tested property).
    """
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    seen: set[int] = set()
    scalar = loader.construct_non_recursive_object

    def build(node: Any, depth: int) -> Any:
        kind, tag = type(node), node.ctag
        plain = tag.handle is None
        if kind is ScalarNode:
            return node.value if plain and tag.suffix == _STR else scalar(node)
        if depth > MAX_YAML_DEPTH or id(node) in seen:
            raise _Unusual
        seen.add(id(node))
        if kind is SequenceNode and plain and tag.suffix == _SEQ:
            return [build(child, depth + 1) for child in node.value]
        if kind is not MappingNode or not plain or tag.suffix != _MAP:
            raise _Unusual
        mapping: dict[str, Any] = {}
        for key, value in node.value:
            key_tag = key.ctag
            if (
                type(key) is not ScalarNode
                or key_tag.handle is not None
                or key_tag.suffix != _STR
                or key.value in mapping
            ):
                raise _Unusual
            mapping[key.value] = build(value, depth + 1)
        return mapping

    try:
        return build(root, 0)
    except Exception:  # whatever the walk met, ruamel decides (and words any error)
        return loader.construct_document(root)


def _may_nest_deeper(text: str) -> bool:
    """Whether ``text`` could nest past ``MAX_YAML_DEPTH``, by a bound that costs a scan.

    A block collection inside another starts at a greater column, or (a sequence as a
    mapping's value) at the same one, which the next level cannot repeat: a chain of D
    block levels needs a column of at least (D - 1) / 2. Each flow level needs its own
    bracket. So D ≤ 2 × the widest line + 1 + the brackets. Lines are split at newlines
    only, so any other break YAML may honour makes them longer here, never shorter. A
    skill's state with hundreds of revisions has hundreds of ``- `` but short lines.
    """
    widest = max(map(len, text.split("\n")))
    return 2 * widest + 1 + text.count("[") + text.count("{") > MAX_YAML_DEPTH


def _check_depth(text: str, loader_class: Any) -> None:
    """Walk the events of ``text`` (the C parser's loader yields them one by one)."""
    from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent, StreamEndEvent

    parser = loader_class(text)
    depth = 0
    try:
        while True:
            event = parser.get_event()
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise YamlTooDeep(YamlTooDeep.problem)
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
            elif event is None or isinstance(event, StreamEndEvent):
                return
    finally:
        parser.dispose()


_loader: Any = None


def _fast_loader() -> Any:
    global _loader
    if _loader is None:
        try:
            from ruamel.yaml.cyaml import CSafeLoader
        except ImportError:
            return None

        class Loader(CSafeLoader):
            # The constructor asks which YAML version it reads (1.1 floats and ints
            # differ); the plain resolver answers None. This loader reads 1.2 only.
            processing_version = (1, 2)

        _loader = Loader
    return _loader


def yaml_problem(exc: Exception, first_line: int = 1) -> str:
    """One short line for a YAML error: ruamel's problem and where, without its boilerplate.

    ``first_line``: the file line the parsed text began on (frontmatter starts on 2), so
    the position names the user's file. Errors without a position (a date that does not
    exist) give their text.
    """
    problem = getattr(exc, "problem", None)
    if not problem:
        return " ".join(str(exc).split())[:200] or type(exc).__name__
    mark = getattr(exc, "problem_mark", None)
    where = "" if mark is None else f" (line {mark.line + first_line}, column {mark.column + 1})"
    return " ".join(f"{problem}{where}".split())[:200]
