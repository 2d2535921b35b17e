"""The semantic leg of search and recall (SPEC §14): vectors as derived data.

A device switches semantic recall on with ``xbrain reindex --semantic`` (the provider it
chose is kept in ``.git/xbrain/semantic.json``, never committed). The vectors live in
one file per model, ``.git/xbrain/vectors/<model key>.bin``: a JSON header (the model,
its dimension, the commit each source reflected, one row per text: kind, id, text hash)
and the float32, L2-normalized matrix, replaced whole (write, fsync, rename) so a reader
never sees half of one.

The texts are each record's passages (:mod:`.passages`: what it says, not only its
labels), read from the lexical indexes, which every commit keeps current; one row per
passage (kind, id, text hash, its place among the record's passages). A record scores by
its best passage. When a source's index has moved on since the vectors were made, the
next semantic query catches up: passages whose text hash is unchanged keep their
vectors, only new passages are embedded (:mod:`.embedbulk`) — so a write never loads a
model, and a search never answers from vectors older than the index it ranks with. The
header also keeps the model's gate (:mod:`.gate`), derived once from the model.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CorruptStoreError, InvalidInputError, ProviderError
from ..search.query import INDEX_FILE, SEMANTIC_FILE

if TYPE_CHECKING:
    import numpy as np

    from ..embedding import Provider, ProviderSpec

__all__ = [
    "SETTINGS_FILE",
    "VECTOR_DIR",
    "Vectors",
    "catch_up",
    "disable",
    "documents",
    "enable",
    "load",
    "nearest",
    "rebuild",
    "settings",
]

SETTINGS_FILE = SEMANTIC_FILE
VECTOR_DIR = Path("xbrain") / "vectors"
MAGIC = b"XBVEC1\n\0"
FORMAT = 2  # rows per passage, with a gate; a file of an older format is embedded again
MAX_HEADER = 256 << 20
_SOURCES = {  # kind → (index file, query of (id, JSON document))
    "resource": (INDEX_FILE, "SELECT rid, resource FROM docs"),
    "skill": (Path("xbrain") / "skills.sqlite", "SELECT rid, resource FROM docs"),
    "entry": (Path("xbrain") / "entries.sqlite", "SELECT id, data FROM entry"),
}
_PASSAGE_QUERY = {"entry": "SELECT id, data, body FROM entry"}  # an entry's body too
Row = tuple[str, str, str, int]  # kind, id, passage digest, the passage's place


def settings(control: Path) -> ProviderSpec | None:
    """The provider this device chose for semantic recall, or None (switched off)."""
    from ..errors import NotFoundError, XbrainError
    from ..inputs import read_file

    path = control / SETTINGS_FILE
    try:
        data = json.loads(read_file(path, 65536, "too big"))
    except NotFoundError:
        return None
    except (XbrainError, ValueError, RecursionError):
        raise CorruptStoreError(f"Unreadable {path}; run xbrain reindex --semantic.") from None
    from ..embedding import ProviderSpec

    return ProviderSpec.from_json(data.get("provider") if isinstance(data, dict) else None)


def enable(control: Path, spec: ProviderSpec) -> None:
    """Keep ``spec`` as this device's semantic provider (0600, outside git)."""
    _write_file(control / SETTINGS_FILE, json.dumps({"provider": spec.to_json()}).encode())


def disable(control: Path) -> int:
    """Switch semantic recall off on this device and delete its vectors; files removed."""
    removed = 0
    for path in [control / SETTINGS_FILE, *sorted((control / VECTOR_DIR).glob("*.bin"))]:
        if path.is_file():
            path.unlink()
            removed += 1
    return removed


@dataclass
class Vectors:
    """One model's vectors: rows (kind, id, passage hash, place), the matrix, what they
    reflect, the model's gate (None: not derived yet), how many were embedded just now."""

    model: str
    dimension: int
    sources: dict[str, str | None]
    rows: list[Row]
    matrix: np.ndarray
    gate: tuple[float, float] | None = None  # unrelated cosines' mean and deviation
    embedded: int = 0


def _path(control: Path, model: str) -> Path:
    return control / VECTOR_DIR / (hashlib.sha256(model.encode()).hexdigest()[:16] + ".bin")


_LOADED: dict[Path, tuple[tuple[int, int, int], Vectors]] = {}  # by path: what was read


def load(control: Path, model: str) -> Vectors | None:
    """The vectors of ``model`` (memory-mapped), None when there are none; a damaged
    file is an error (``doctor`` reports it, ``reindex --semantic`` rebuilds it)."""
    import numpy as np

    path = _path(control, model)
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    signature = (info.st_ino, info.st_size, info.st_mtime_ns)
    cached = _LOADED.get(path)
    if cached is not None and cached[0] == signature:  # files are replaced, never edited
        return cached[1]
    try:
        with path.open("rb") as handle:
            magic, size = handle.read(8), handle.read(8)
            if magic != MAGIC or len(size) != 8:
                raise ValueError("magic")
            (length,) = struct.unpack("<Q", size)
            if length > MAX_HEADER:
                raise ValueError("header")
            header = json.loads(handle.read(length))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        raise CorruptStoreError(
            f"Damaged vectors in {path}; run xbrain reindex --semantic."
        ) from None
    if isinstance(header, dict) and header.get("format") != FORMAT:
        return None  # made before passages: embedded again
    try:
        rows = [(str(k), str(i), str(h), int(p)) for k, i, h, p in header["rows"]]
        stats = header.get("gate")
        gate = None if stats is None else (float(stats[0]), float(stats[1]))
        dimension = int(header["dimension"])
        offset = _aligned(16 + length)
        matrix = np.memmap(path, dtype="<f4", mode="r", offset=offset, shape=(len(rows), dimension))
        if header["model"] != model:
            raise ValueError("model")
        sources = {kind: header["sources"].get(kind) for kind in _SOURCES}
    except (KeyError, TypeError, ValueError):
        raise CorruptStoreError(
            f"Damaged vectors in {path}; run xbrain reindex --semantic."
        ) from None
    vectors = Vectors(model, dimension, sources, rows, matrix, gate)
    _LOADED[path] = (signature, vectors)
    return vectors


def _aligned(offset: int) -> int:
    return (offset + 63) // 64 * 64


def save(control: Path, vectors: Vectors) -> None:
    """Replace the model's vector file whole."""
    import numpy as np

    header = json.dumps(
        {
            "format": FORMAT,
            "model": vectors.model,
            "dimension": vectors.dimension,
            "sources": vectors.sources,
            "gate": vectors.gate,
            "rows": vectors.rows,
        },
        separators=(",", ":"),
    ).encode()
    start = 16 + len(header)
    pad = _aligned(start) - start
    matrix = np.ascontiguousarray(vectors.matrix, dtype="<f4")
    data = MAGIC + struct.pack("<Q", len(header)) + header + b"\0" * pad
    _write_file(_path(control, vectors.model), data, matrix.tobytes())


def _write_file(path: Path, *parts: bytes) -> None:
    old = os.umask(0o077)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(
            temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
        try:
            with os.fdopen(fd, "wb") as handle:
                for part in parts:
                    handle.write(part)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
    finally:
        os.umask(old)


def _source_commit(control: Path, kind: str) -> str | None:
    """The commit a source's index reflects (None: no index) — read alone, so a query
    whose vectors are current reads no document."""
    path = control / _SOURCES[kind][0]
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return str(row[0]) if row else None


def _read_source(control: Path, kind: str) -> tuple[str | None, Iterator[tuple[str, int, str]]]:
    """The commit a source's index reflects and its (id, place, passage) triples (none:
    no index)."""
    from .passages import passages

    path, query = _SOURCES[kind]
    query = _PASSAGE_QUERY.get(kind, query)
    if not (control / path).is_file():
        return None, iter(())
    try:
        conn = sqlite3.connect(f"file:{control / path}?mode=ro", uri=True, timeout=10)
        conn.execute("BEGIN")
        row = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
        docs = conn.execute(query).fetchall()
        conn.close()
    except sqlite3.Error:
        return None, iter(())
    return (row[0] if row else None), (
        (rid, place, text)
        for rid, data, *body in docs
        for place, (_, text) in enumerate(passages(kind, _doc(data, body)))
    )


def _doc(data: str, body: list[str]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(data)
    return {**doc, "body": body[0]} if body else doc


def catch_up(control: Path, provider: Provider) -> Vectors:
    """The provider's vectors, brought up to the lexical indexes (only new passages are
    embedded; with nothing changed, nothing is written)."""
    import numpy as np

    from .embedbulk import embed_all
    from .gate import PASSAGES as BACKGROUND
    from .gate import calibrate

    vectors = load(control, provider.model_id)
    commits = {kind: _source_commit(control, kind) for kind in _SOURCES}
    if vectors is not None and vectors.sources == commits and vectors.gate is not None:
        return vectors
    known: dict[str, int] = {}
    if vectors is not None:
        known = {digest: i for i, (_, _, digest, _) in enumerate(vectors.rows)}
    rows: list[Row] = []
    texts: dict[str, str] = {}
    for place, text in enumerate(BACKGROUND):  # each query's own background (.gate)
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]
        rows.append(("background", str(place), digest, place))
        if digest not in known:
            texts.setdefault(digest, text)
    for kind in _SOURCES:
        commits[kind], found = _read_source(control, kind)  # the commit and texts of one read
        for rid, place, text in found:
            digest = hashlib.sha256(text.encode()).hexdigest()[:32]
            rows.append((kind, rid, digest, place))
            if digest not in known:
                texts.setdefault(digest, text)
    pending = list(texts)
    kept = vectors is not None and any(row[2] in known for row in rows)
    dimension = vectors.dimension if vectors is not None and kept else 0
    made = embed_all(provider, [texts[digest] for digest in pending])
    if pending and dimension not in (0, made.shape[1]):
        raise ProviderError(
            "The embedding provider's vectors changed their dimension (they had "
            f"{dimension}); run xbrain reindex --semantic."
        )
    fresh = {digest: i for i, digest in enumerate(pending)}
    dimension = (int(made.shape[1]) if pending else dimension) or provider.dimension
    matrix = np.zeros((len(rows), dimension), dtype=np.float32)
    for i, (_, _, digest, _) in enumerate(rows):
        matrix[i] = made[fresh[digest]] if digest in fresh else vectors.matrix[known[digest]]  # type: ignore[union-attr]
    gate = vectors.gate if vectors is not None and vectors.gate is not None else None
    gate = calibrate(provider) if gate is None else gate
    result = Vectors(provider.model_id, dimension, commits, rows, matrix, gate)
    save(control, result)
    done = load(control, provider.model_id) or result
    done.embedded = len(pending)
    return done


def nearest(
    vectors: Vectors,
    query: np.ndarray,
    kinds: tuple[str, ...],
    floor: float,
    limit: int,
    spread: float | None = None,
) -> list[tuple[str, str, float, int]]:
    """The records of ``kinds`` most similar to ``query`` (a normalized vector) that clear
    ``floor`` — and, with ``spread``, stand that many standard deviations above the
    query's cosines with the background passages (:mod:`.gate`) — by their best
    passage: (kind, id, cosine, that passage's place), best first, ties by id."""
    import numpy as np

    if not vectors.rows or limit < 1:
        return []
    if query.shape != (vectors.dimension,):
        raise InvalidInputError("The query's vector does not match the stored vectors.")
    scores = np.asarray(vectors.matrix @ query.astype(np.float32))
    background = sum(row[0] == "background" for row in vectors.rows[:64])  # rows first
    if spread is not None and background > 1 and float(scores[:background].std()) >= 1e-3:
        own = scores[:background]  # (a model that cannot tell them apart: no background)
        floor = max(floor, float(own.mean() + spread * own.std()))
    best: dict[tuple[str, str], tuple[float, int]] = {}
    for i in np.flatnonzero(scores >= floor):
        kind, rid, _, place = vectors.rows[int(i)]
        if kind in kinds:
            key = (kind, rid)
            score = float(scores[i])
            if score > best.get(key, (-2.0, 0))[0]:
                best[key] = (score, place)
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0][1]))
    return [(kind, rid, round(score, 6), place) for (kind, rid), (score, place) in ranked[:limit]]


def documents(control: Path, kind: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The indexed documents of ``ids`` (a resource, a skill's descriptor, an entry)."""
    if not ids:
        return {}
    path, query = _SOURCES[kind]
    found: dict[str, dict[str, Any]] = {}
    try:
        conn = sqlite3.connect(f"file:{control / path}?mode=ro", uri=True, timeout=10)
        try:
            key = "id" if kind == "entry" else "rid"
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for rid, data in conn.execute(f"{query} WHERE {key} IN ({marks})", chunk):
                    found[rid] = json.loads(data)
        finally:
            conn.close()
    except sqlite3.Error:
        return found
    return found


def rebuild(control: Path, spec: ProviderSpec, provider: Provider) -> dict[str, Any]:
    """Switch semantic recall on with ``spec`` and embed every record's texts afresh."""
    import time

    from .gate import threshold

    started = time.perf_counter()
    _path(control, provider.model_id).unlink(missing_ok=True)
    vectors = catch_up(control, provider)
    enable(control, spec)  # only once the vectors exist: a failed build leaves it off
    return {
        "enabled": True,
        "provider": spec.kind,
        "model": provider.model_id,
        "dimension": vectors.dimension,
        "floor": spec.floor if spec.floor is not None else threshold(vectors.gate or (0.0, 0.0)),
        "records": len({row[:2] for row in vectors.rows if row[0] != "background"}),
        "rows": sum(row[0] != "background" for row in vectors.rows),
        "milliseconds": round((time.perf_counter() - started) * 1000),
    }
