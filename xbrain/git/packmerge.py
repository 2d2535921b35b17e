"""One pack from several: deltas kept as they are, whole objects deltified by path.

A write's pack holds every object whole; a consolidated one holds, for each path, its
largest version whole and the others as deltas against it. Merging packs:

* an entry that is a delta is copied as it is compressed (``PackWriter.copy``): it
  stays a delta against the same base, which is in the new pack too;
* a whole tree a write stored uncompressed is compressed (it is inflated anyway);
* the whole objects (and the loose ones packed with them) are grouped by the path they
  sit at in the trees of the commits among them (walking only whole trees: reading a
  delta's tree would cost more than it saves). Where a path has more than one version,
  they are sorted newest first (by the commits that hold them) and each is written as
  a delta against the nearest newer one (in chains at most ``_DEPTH`` long) when that
  is smaller: the newest version of a directory or a catalog shard stays whole, so a
  read of the head unwinds no chain, and every pack's whole versions are the ones its
  newest commit reaches through whole trees, found again by the next merge. Anything
  else is copied as it is.

So what a write added (every path it touched, whole) becomes deltas against the
versions already packed as soon as it is merged with the pack holding them, and a
merge inflates only trees, commits and the versions it deltifies.

What that leaves: the whole version of a path in an older pack becomes a delta against
the nearest newer *whole* one, the newest of the next pack, which may be hundreds of
commits later (every entry of a catalog directory changed in between), while the
versions between them stay deltas of their own. A store written to thousands of times
holds its history at about four times what deltas between neighbours take (a year of
use simulated: 78 MB of packs where git's `repack -adf --window=10 --depth=16` makes
21 MB). ``redo`` (``xbrain gc``, and the upkeep once the history outgrows the records:
``packs.redo_due``) first rebuilds the deltas' objects (each from its base, bases
first, each checked against its id, up to ``redo`` bytes held; past that the rest
stay as they are), so that every version is whole here and each path's versions are
deltified between neighbours again, in chains of up to ``_REDO_DEPTH``; the pack is
named by its checksum, so a rebuild of one pack is not taken for that pack.
"""

from __future__ import annotations

import hashlib
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from dulwich.objects import object_class
from dulwich.pack import apply_delta

from .delta import checked_delta, tree_entries
from .packcheck import delta_sizes
from .repack import MAX_CHAIN, PackEntry, PackWriter, SourcePack

__all__ = ["merge"]

_COMMIT, _TREE = 1, 2
_WINDOW = 10  # versions of a path each one is tried as a delta against
_DEPTH = 16  # the longest delta chain a merge makes
# with ``redo`` every version is in a chain: longer ones, but short enough that a later
# merge putting a newer version on top (``_DEPTH`` more) keeps them under ``MAX_CHAIN``
_REDO_DEPTH = MAX_CHAIN - _DEPTH
_NO_DELTA_BELOW = 64  # bytes: smaller objects are stored whole
_DIR = b"40000"


def _inflate(source: SourcePack, entry: PackEntry) -> bytes:
    """An entry's bytes, never inflating past its declared size: a stream that makes
    more, less, or runs on past its end is damage (``ValueError``)."""
    stream = zlib.decompressobj()
    raw = stream.decompress(source.data[entry.start : entry.end], entry.size + 1)
    if len(raw) != entry.size or not stream.eof:
        raise ValueError("a pack entry does not inflate to its size")
    return raw


def _stored(entry: PackEntry) -> bool:
    """A whole tree a write stored rather than compressed (``packwrite``: its trees at zlib
    level 0): a merge, which inflates every whole tree anyway, compresses it."""
    return entry.type_num == _TREE and entry.end - entry.start >= entry.size


def _children(raw: bytes) -> Iterable[tuple[bytes, bytes, bool]]:
    """A tree's entries: name, binary id, whether a directory."""
    for piece in tree_entries(raw):
        space, nul = piece.find(b" "), piece.find(b"\0")
        if space == -1 or nul == -1 or len(piece) != nul + 21:
            return  # a malformed tail: no names from it (the copy is unchanged)
        yield piece[space + 1 : nul], piece[nul + 1 :], piece[:space] == _DIR


def _newest_first(texts: dict[bytes, tuple[int, bytes]]) -> list[bytes]:
    """The trees of the commits among ``texts``, the newest commit's first (a commit
    after every commit among them it descends from)."""
    parents: dict[bytes, list[bytes]] = {}
    trees: dict[bytes, bytes] = {}
    for sha, (type_num, raw) in texts.items():
        if type_num != _COMMIT or not raw.startswith(b"tree ") or raw[45:46] != b"\n":
            continue
        trees[sha] = bytes.fromhex(raw[5:45].decode())
        found = []
        for line in raw[46:].split(b"\n"):
            if not line.startswith(b"parent "):
                break
            found.append(bytes.fromhex(line[7:].decode()))
        parents[sha] = found
    generation: dict[bytes, int] = {}
    for start in parents:
        todo = [start]
        while todo:  # each commit's generation after its parents' (no recursion)
            sha = todo[-1]
            waiting = [p for p in parents[sha] if p in parents and p not in generation]
            if waiting:
                todo.extend(waiting)
                continue
            todo.pop()
            generation[sha] = 1 + max(
                (generation[p] for p in parents[sha] if p in parents), default=0
            )
    return [trees[sha] for sha in sorted(trees, key=lambda c: (-generation[c], c))]


def _names(texts: dict[bytes, tuple[int, bytes]]) -> dict[bytes, tuple[int, bytes]]:
    """Each object's age (0 for the newest commit's, then each older one's) and the
    path it sits at, from the commits among ``texts`` down through the trees among
    them; an object several commits share takes its newest place."""
    names: dict[bytes, tuple[int, bytes]] = {}
    for age, root in enumerate(_newest_first(texts)):
        todo = [(root, b"")]
        while todo:
            sha, path = todo.pop()
            if sha in names:
                continue
            names[sha] = (age, path)
            found = texts.get(sha)
            if found is None or found[0] != _TREE:
                continue
            for name, child, directory in _children(found[1]):
                if directory:
                    todo.append((child, path + b"/" + name))
                elif child not in names:
                    names[child] = (age, path + b"/" + name)
    return names


def _rebuilt(
    wholes: dict[bytes, tuple[SourcePack, PackEntry]],
    deltas: list[tuple[SourcePack, PackEntry]],
    budget: int,
) -> dict[bytes, tuple[int, bytes]]:
    """The objects of the ``deltas``, each rebuilt once from its base's text (bases
    first) and checked against its id, until ``budget`` bytes are held; a delta past
    that is left out (copied as it is). A base in none of the packs is damage."""
    by_sha = {entry.sha: (source, entry) for source, entry in deltas}
    out: dict[bytes, tuple[int, bytes]] = {}
    bases: dict[bytes, tuple[int, bytes]] = {}  # whole objects read as bases
    held = 0
    for sha in by_sha:
        if held > budget:
            break
        chain = []
        at: bytes | None = sha
        while at is not None and at not in out and at in by_sha:
            chain.append(at)
            at = by_sha[at][1].base
            if len(chain) > len(by_sha):  # (a hostile pack's deltas in a ring)
                raise ValueError("a delta chain never reaches a whole object")
        if at is None:  # (a delta entry always names its base)
            continue
        if at in out:
            base = out[at]
        elif at in bases:
            base = bases[at]
        else:
            found = wholes.get(at)
            if found is None:  # (a merge never writes a delta without its base: damage)
                raise ValueError("a delta's base is not in the packs merged")
            if found[1].size > budget - held:
                return out
            base = bases[at] = (found[1].type_num, _inflate(*found))
            held += len(base[1])
        for link in reversed(chain):
            if by_sha[link][1].size > budget - held:  # (what it says it holds: too much)
                return out
            delta = _inflate(*by_sha[link])
            base_size, size = delta_sizes(delta[:20])
            if base_size != len(base[1]):
                raise ValueError("a delta does not fit its base")
            if size > budget - held:  # rebuilt past the budget: left as it is
                return out
            raw = b"".join(apply_delta(base[1], delta))
            kind = object_class(base[0])
            head = b"%s %d\0" % (kind.type_name if kind else b"?", len(raw))
            if kind is None or hashlib.sha1(head + raw).digest() != link:
                raise ValueError("a delta does not rebuild its object")
            base = out[link] = (base[0], raw)
            held += len(raw)
    return out


def merge(
    pack_dir: Path,
    sources: list[SourcePack],
    loose: dict[bytes, tuple[int, bytes]],
    whole: Callable[[bytes], tuple[int, bytes]],
    fsync: bool,
    level: int,
    index_version: int | None,
    redo: int = 0,
) -> str:
    """Write one pack of every object of ``sources`` and ``loose`` (binary id: type,
    bytes); its basename. ``whole(sha)`` reads an object from the store (a copied
    delta whose chain would grow too long here is written whole). ``redo``: bytes of
    the deltas' objects rebuilt to be deltified again (see the module)."""
    wholes: dict[bytes, tuple[SourcePack, PackEntry]] = {}
    deltas: list[tuple[SourcePack, PackEntry]] = []
    for source in sources:
        for entry in source.entries:
            if entry.base is None:
                wholes.setdefault(entry.sha, (source, entry))
            else:
                deltas.append((source, entry))
    ids = set(wholes) | {entry.sha for _, entry in deltas} | set(loose)
    depth_max = _REDO_DEPTH if redo > 0 else _DEPTH
    if redo > 0:
        rebuilt = _rebuilt(wholes, deltas, redo)
        loose = {**loose, **rebuilt}
        deltas = [(source, entry) for source, entry in deltas if entry.sha not in rebuilt]
    texts = {sha: found for sha, found in loose.items() if sha not in wholes}
    for sha, (source, entry) in wholes.items():
        if entry.type_num in (_COMMIT, _TREE):
            texts[sha] = (entry.type_num, _inflate(source, entry))
    by_path: dict[bytes, list[tuple[int, bytes]]] = defaultdict(list)
    for sha, (age, path) in _names(texts).items():
        if sha in wholes or sha in texts:
            by_path[path].append((age, sha))
    writer = PackWriter(pack_dir, len(ids), fsync, level, by_content=redo > 0)
    try:
        for _, shas in sorted(by_path.items()):
            if len(shas) < 2:
                continue
            versions = []
            for _, sha in sorted(shas):  # the newest first: it stays whole
                if sha not in texts:
                    source, entry = wholes[sha]
                    texts[sha] = (entry.type_num, _inflate(source, entry))
                versions.append((sha, *texts[sha]))
            window: list[tuple[bytes, int, bytes, int]] = []  # sha, type, text, depth
            for sha, type_num, raw in versions:
                base, payload, depth = None, raw, 0
                if len(raw) >= _NO_DELTA_BELOW:
                    for candidate, kind, text, chain in window:
                        if kind != type_num or chain >= depth_max or len(text) > 2 * len(raw):
                            continue
                        delta = checked_delta(text, raw, type_num)
                        if len(delta) < len(raw):
                            base, payload, depth = candidate, delta, chain + 1
                            break  # the nearest version: good enough, and no more time spent
                if base is None and sha in wholes and not _stored(wholes[sha][1]):
                    writer.copy(*wholes[sha], whole)
                else:
                    writer.add(sha, type_num, payload, base)
                window.insert(0, (sha, type_num, raw, depth))
                del window[_WINDOW:]
            for _, sha in shas:  # written: its text is no longer needed
                texts.pop(sha, None)
        for sha, (type_num, raw) in loose.items():
            writer.add(sha, type_num, raw)
        for source, entry in wholes.values():
            if _stored(entry) and entry.sha in texts:
                writer.add(entry.sha, entry.type_num, texts[entry.sha][1])
            else:
                writer.copy(source, entry, whole)
        for source, entry in deltas:
            writer.copy(source, entry, whole)
    except BaseException:
        writer.abort()
        raise
    return writer.land(index_version)
