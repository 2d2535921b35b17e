"""A record's YAML through ruamel's C emitter without ruamel's per-call set-up.

``YAML.dump`` on the C emitter builds a dumper class for every call, then walks the
value with the Python representer (a dispatch and alias bookkeeping per node) before the
C serializer and emitter choose each scalar's style and write the bytes; for a resource
the class and the walk were half the time (1,000 resources: 94 → 45 ms of CPU). Here the
class is built once, with the engine's settings, and a value made of dicts with string
keys, lists, strings, booleans, integers and None, no container twice, becomes the very
nodes the engine's representer makes (its tags; ``|`` for a string of several lines,
block style), handed to the same serializer and emitter: the same bytes (a property
test against ruamel's own dump). Anything else is left to ``YAML.dump``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["block_style", "dump_plain"]

_made: list[Any] = []  # [the dumper class, (node classes and tags)] once built


def dump_plain(engine: Any, value: Any, out: Any) -> bool:
    """Write ``value`` as ``engine`` (``codec``'s YAML object) would into ``out``; False
    (nothing written) when ``value`` is not plain or ruamel has no C extension here."""
    if not _made and not _build(engine):
        return False
    dumper, kinds = _made
    node = _node(value, kinds, set())
    if node is None:
        return False
    emitter = dumper(out)
    try:
        emitter.open()
        emitter.serialize(node)
        emitter.close()
    finally:
        emitter.dispose()
    return True


def _build(engine: Any) -> bool:
    """The class ruamel's ``get_serializer_representer_emitter`` builds per call on the C
    emitter (its ``XDumper``), with the arguments it passes."""
    try:
        from ruamel.yaml.cyaml import CEmitter  # type: ignore[attr-defined]
    except ImportError:
        return False
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
    from ruamel.yaml.resolver import Resolver

    representer = engine.Representer
    resolved: dict[tuple[str, Any], str] = {}
    default = str(Resolver.DEFAULT_SCALAR_TAG)

    class Dumper(CEmitter, representer, Resolver):  # type: ignore[misc, valid-type]
        def __init__(self, stream: Any) -> None:
            CEmitter.__init__(
                self,
                stream,
                canonical=engine.canonical,
                indent=engine.old_indent,
                width=engine.width,
                encoding=engine.encoding,
                allow_unicode=engine.allow_unicode,
                line_break=engine.line_break,
                explicit_start=engine.explicit_start,
                explicit_end=engine.explicit_end,
                version=engine.version,
                tags=engine.tags,
            )
            self._emitter = self._serializer = self._representer = self
            representer.__init__(
                self,
                default_style=engine.default_style,
                default_flow_style=engine.default_flow_style,
            )
            Resolver.__init__(self)

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            # The serializer asks twice per scalar which tag it would read as when plain
            # (then quoted), only to compare the answer with the node's tag, a string:
            # answered as a string, a short scalar's answer remembered (keys repeat).
            # Where ruamel's own answer is its default string tag without looking at the
            # value (quoted; or plain, no implicit resolver for its first character, and
            # no path resolvers), that answer at once: most of a record's values.
            if kind is ScalarNode and not self.yaml_path_resolvers:
                starts = self.yaml_implicit_resolvers
                if not implicit[0] or (value and value[0] not in starts and None not in starts):
                    return default
            if kind is not ScalarNode or len(value) > 64:
                return str(Resolver.resolve(self, kind, value, implicit))
            key = (value, implicit)
            found = resolved.get(key)
            if found is None:
                found = str(Resolver.resolve(self, kind, value, implicit))
                if len(resolved) < 10_000:
                    resolved[key] = found
            return found

    tag = representer.tag  # the engine's own tag objects
    names = ("str", "seq", "map", "null", "bool", "int")
    tags = tuple(tag(f"tag:yaml.org,2002:{name}") for name in names)
    _made[:] = [Dumper, (ScalarNode, SequenceNode, MappingNode, *tags)]
    return True


def block_style(text: str) -> str | None:
    """How xbrain writes a string in YAML: a literal block when it spans lines, else
    ruamel's choice (``codec``'s representer and the nodes built here share it)."""
    return "|" if "\n" in text else None


def _node(value: Any, kinds: tuple[Any, ...], seen: set[int]) -> Any:
    """The node the engine's representer makes for ``value``, or None when ``value``
    holds anything else, or one container twice (ruamel would write an alias)."""
    scalar, sequence, mapping, text, seq, map_, null, boolean, integer = kinds
    kind = type(value)
    if kind is str:
        return scalar(text, value, style=block_style(value))
    if value is None:
        return scalar(null, "null")
    if kind is bool:
        return scalar(boolean, "true" if value else "false")
    if kind is int:
        return scalar(integer, str(value))
    if id(value) in seen:
        return None
    seen.add(id(value))
    items: list[Any] = []
    if kind is list:
        for item in value:
            node = _node(item, kinds, seen)
            if node is None:
                return None
            items.append(node)
        return sequence(seq, items, flow_style=False)
    if kind is not dict:
        return None
    for key, item in value.items():
        node = _node(item, kinds, seen)
        if type(key) is not str or node is None:
            return None
        items.append((scalar(text, key, style=block_style(key)), node))
    return mapping(map_, items, flow_style=False)
