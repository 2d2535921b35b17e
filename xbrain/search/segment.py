"""Chinese word segmentation identical to jieba's, without jieba's 1-second start-up.

jieba builds a prefix dictionary of ~600k entries on every start. This module runs the
same algorithm — the DAG of dictionary words, the max-log-probability route, and the HMM
(Viterbi over B/M/E/S states) for runs of unknown single characters — over the same
data, but reads that data from a compiled cache split by first character, so a process
loads only the shards for the characters it actually segments.

The cache is compiled once from the installed jieba package's own files (``dict.txt``
and ``finalseg/prob_*.py``), keyed by their SHA-256, into the cache directory given by
the caller. jieba itself is never imported here. Identity with ``jieba.cut`` and
``jieba.cut_for_search`` on Han text is a tested property.

Index builds segment whole stores at once: there :func:`bulk_segmenter` hands the work to
jieba-rs (the ``rjieba`` package), the same algorithm over the same data in Rust, ~6x
faster per character but ~0.1 s to load, so it never serves a query. It is used only when
jieba's installed data is the data jieba-rs embeds (the cuts must match the queries').
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import marshal
import math
import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["RustSegmenter", "Segmenter", "bulk_segmenter"]

MIN_FLOAT = -3.14e100
_MAGIC = b"XBJIEBA1"
_PREV = {"B": "ES", "M": "MB", "S": "SE", "E": "BM"}
_STATES = "BMES"
# SHA-256 of jieba 0.42's data files, which jieba-rs embeds (the equality test holds them)
JIEBA_DATA = {
    "dict.txt": "7197c3211ddd98962b036cdf40324d1ea2bfaa12bd028e68faa70111a88e12a8",
    "prob_start.py": "14c5706ced5cd3b42eb4873d4b88f7f52a7bdf80fbd767bc4423d361e20c5330",
    "prob_trans.py": "54dfbc252ed71480d4f0cdfdf516ecfbe44efd0f6c3c64b158e7039f2906c91b",
    "prob_emit.py": "27d46b1c9efe4dd148fde8be042a21be40e3562d0c7f1273f9de7abae12ebb8d",
}


def _jieba_files() -> tuple[Path, Path]:
    spec = importlib.util.find_spec("jieba")  # locates the package without importing it
    if spec is None or spec.origin is None:
        raise RuntimeError("jieba is not installed; Chinese search needs its dictionary.")
    root = Path(spec.origin).parent
    return root / "dict.txt", root / "finalseg"


def _literal(path: Path) -> Any:
    """The ``P = {...}`` literal of one of jieba's finalseg model files."""
    import ast  # only when the dictionary is compiled: once per install

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "P":
            return ast.literal_eval(node.value)
    raise RuntimeError(f"Unexpected jieba model file: {path}")


def _sources(dict_path: Path, model_dir: Path) -> tuple[Path, ...]:
    return (dict_path, *(model_dir / f"prob_{n}.py" for n in ("start", "trans", "emit")))


def _fingerprint(dict_path: Path, model_dir: Path) -> str:
    """The source files' location, size and mtime (cheap on every start: two checksums,
    not hashlib, whose OpenSSL load costs a fresh process ≈ 3 ms; it only names a note)."""
    import zlib

    seen = "".join(
        f"{path}:{info.st_size}:{info.st_mtime_ns};"
        for path in _sources(dict_path, model_dir)
        for info in (path.stat(),)
    ).encode()
    return f"{zlib.crc32(seen):08x}{zlib.adler32(seen):08x}"


def _content_hash(dict_path: Path, model_dir: Path) -> str:
    """The source files' bytes: the same jieba anywhere on the machine, the same cache."""
    import hashlib

    digest = hashlib.sha256()
    for path in _sources(dict_path, model_dir):
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def cache_path(cache_dir: Path, dict_path: Path, model_dir: Path) -> Path:
    """The compiled dictionary for these sources, shared by every install of them.

    A tiny per-location note (``jieba-<location>.ref``) remembers the content hash, so
    the 8 MB dictionary is hashed once per install, not on every start; the compiled
    file itself is named by content and built once per user.
    """
    ref = cache_dir / f"jieba-{_fingerprint(dict_path, model_dir)}.ref"
    try:
        content = ref.read_text(encoding="ascii").strip()
        if len(content) != 16 or not all(c in "0123456789abcdef" for c in content):
            raise ValueError(content)
    except (OSError, ValueError):
        content = _content_hash(dict_path, model_dir)
        old_umask = os.umask(0o077)
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            temp = ref.with_name(f"{ref.name}.{os.getpid()}.tmp")
            temp.write_text(content, encoding="ascii")
            os.replace(temp, ref)
        except OSError:
            pass  # a read-only cache dir: hash again next time
        finally:
            os.umask(old_umask)
    return cache_dir / f"jieba-{content}.bin"


def _compile(dict_path: Path, model_dir: Path) -> bytes:
    """The sharded cache, built exactly as jieba's ``gen_pfdict`` builds FREQ."""
    freq: dict[str, int] = {}
    total = 0
    with open(dict_path, "rb") as handle:
        for line in handle:
            text = line.strip().decode("utf-8")
            word, number = text.split(" ")[:2]
            freq[word] = int(number)
            total += int(number)
            for end in range(len(word)):
                fragment = word[: end + 1]
                if fragment not in freq:
                    freq[fragment] = 0
    emit = _literal(model_dir / "prob_emit.py")
    model = (_literal(model_dir / "prob_start.py"), _literal(model_dir / "prob_trans.py"))
    shards: dict[str, dict[str, int]] = {}
    for word, count in freq.items():
        shards.setdefault(word[0], {})[word] = count
    for state in _STATES:
        for char in emit[state]:
            shards.setdefault(char, {})
    blobs: list[bytes] = []
    table: dict[str, tuple[int, int]] = {}
    offset = 0
    for char, words in shards.items():
        probs = tuple(emit[state].get(char, MIN_FLOAT) for state in _STATES)
        blob = marshal.dumps((words, probs))
        table[char] = (offset, len(blob))
        blobs.append(blob)
        offset += len(blob)
    head = marshal.dumps((total, model, table))
    return b"".join([_MAGIC, struct.pack(">Q", len(head)), head, *blobs])


def _save(data: bytes, target: Path) -> bool:
    """Write the compiled cache to ``target`` (atomically, private); False when the cache
    directory cannot be written (read-only, or on a path that cannot exist)."""
    from ..kinds.jsonstore import write_private_file  # only when compiling: once per user

    try:
        write_private_file(target, data)
    except OSError:
        return False
    return True


_DAMAGE = (ValueError, EOFError, TypeError, KeyError, struct.error, OverflowError)


class Segmenter:
    """jieba's ``cut`` / ``cut_for_search`` (HMM on) over Han text, with lazy shards."""

    def __init__(self, cache_dir: Path) -> None:
        self._sources = _jieba_files()
        self.path = cache_path(cache_dir, *self._sources)
        self._shards: dict[str, tuple[dict[str, int], tuple[float, ...]]] = {}
        self._memory: bytes | None = None  # the cache, when the cache dir takes no file
        if not self.path.exists():
            self._build()
        try:
            self._open()
        except (OSError, *_DAMAGE):  # a damaged or unreadable cache is derived: build it
            self._rebuild()

    def _build(self) -> None:
        data = _compile(*self._sources)
        if not _save(data, self.path):  # a read-only cache dir: this process holds it
            self._memory = data

    def _open(self) -> None:
        self._file: BinaryIO
        if self._memory is not None:
            self._file = io.BytesIO(self._memory)
        else:
            self._file = open(self.path, "rb")  # noqa: SIM115 (kept open for lazy shard reads)
        try:
            if self._file.read(len(_MAGIC)) != _MAGIC:
                raise ValueError("not a segmentation cache")
            (size,) = struct.unpack(">Q", self._file.read(8))
            total, model, table = marshal.loads(self._file.read(size))
            self._base = len(_MAGIC) + 8 + size
            self._logtotal = math.log(total)
            self._start, self._trans = model
            self._table: dict[str, tuple[int, int]] = dict(table)
        except BaseException:
            self._file.close()
            raise

    def _rebuild(self) -> None:
        with contextlib.suppress(AttributeError, OSError):
            self._file.close()
        self._shards.clear()
        self._build()
        self._open()

    def close(self) -> None:
        """Release the cache file."""
        self._file.close()

    def _read_shard(self, char: str) -> tuple[dict[str, int], tuple[float, ...]]:
        where = self._table.get(char)
        if where is None:
            return ({}, (MIN_FLOAT,) * 4)
        self._file.seek(self._base + where[0])
        words, probs = marshal.loads(self._file.read(where[1]))
        if not isinstance(words, dict) or not isinstance(probs, tuple) or len(probs) != 4:
            raise ValueError("damaged shard")
        return words, probs

    def _shard(self, char: str) -> tuple[dict[str, int], tuple[float, ...]]:
        shard = self._shards.get(char)
        if shard is None:
            try:
                shard = self._read_shard(char)
            except _DAMAGE:
                self._rebuild()
                shard = self._read_shard(char)
            self._shards[char] = shard
        return shard

    def freq(self, word: str) -> int | None:
        """jieba's ``FREQ.get(word)``: None when neither a word nor a prefix of one."""
        return self._shard(word[0])[0].get(word) if word else None

    def _route(self, text: str) -> list[int]:
        n = len(text)
        dag: list[list[int]] = []
        for k in range(n):
            words = self._shard(text[k])[0]
            ends = []
            i = k
            fragment = text[k]
            while i < n and fragment in words:
                if words[fragment]:
                    ends.append(i)
                i += 1
                fragment = text[k : i + 1]
            dag.append(ends or [k])
        route: list[tuple[float, int]] = [(0.0, 0)] * (n + 1)
        logtotal = self._logtotal
        for idx in range(n - 1, -1, -1):
            words = self._shard(text[idx])[0]
            route[idx] = max(
                (math.log(words.get(text[idx : x + 1]) or 1) - logtotal + route[x + 1][0], x)
                for x in dag[idx]
            )
        return [end for _, end in route[:n]]

    def _viterbi(self, text: str) -> Iterator[str]:
        emit = [dict(zip(_STATES, self._shard(char)[1], strict=True)) for char in text]
        table = [{s: self._start[s] + emit[0][s] for s in _STATES}]
        back: list[dict[str, str]] = [{}]  # each step's best previous state, per state
        for t in range(1, len(text)):
            row: dict[str, float] = {}
            came: dict[str, str] = {}
            for state in _STATES:
                prob, prev = max(
                    (table[t - 1][p] + self._trans[p].get(state, MIN_FLOAT) + emit[t][state], p)
                    for p in _PREV[state]
                )
                row[state] = prob
                came[state] = prev
            table.append(row)
            back.append(came)
        _, last = max((table[-1][state], state) for state in "ES")
        # jieba copies each state's whole path at every step (time in the square of a run
        # of characters no word joins: 16,000 took 0.8 s); following the best previous
        # states back from the end gives the same path
        path = [last]
        for t in range(len(text) - 1, 0, -1):
            path.append(back[t][path[-1]])
        path.reverse()
        begin = after = 0
        for i, state in enumerate(path):
            if state == "B":
                begin = i
            elif state == "E":
                yield text[begin : i + 1]
                after = i + 1
            elif state == "S":
                yield text[i]
                after = i + 1
        if after < len(text):
            yield text[after:]

    def _flush(self, buf: str) -> Iterator[str]:
        if len(buf) == 1:
            yield buf
        elif not self.freq(buf):
            yield from self._viterbi(buf)
        else:
            yield from buf

    def cut(self, text: str) -> list[str]:
        """``jieba.lcut(text)`` for a run of Han characters (U+4E00–U+9FD5)."""
        if not text:
            return []
        route = self._route(text)
        out: list[str] = []
        buf = ""
        x = 0
        while x < len(text):
            y = route[x] + 1
            if y - x == 1:
                buf += text[x]
            else:
                if buf:
                    out.extend(self._flush(buf))
                    buf = ""
                out.append(text[x:y])
            x = y
        if buf:
            out.extend(self._flush(buf))
        return out

    def cut_for_search(self, text: str) -> list[str]:
        """``jieba.lcut_for_search(text)`` for a run of Han characters."""
        out: list[str] = []
        for word in self.cut(text):
            if len(word) > 2:
                out.extend(
                    word[i : i + 2] for i in range(len(word) - 1) if self.freq(word[i : i + 2])
                )
            if len(word) > 3:
                out.extend(
                    word[i : i + 3] for i in range(len(word) - 2) if self.freq(word[i : i + 3])
                )
            out.append(word)
        return out

    def subwords(self, text: str) -> list[str]:
        """``jieba.lcut(text, cut_all=True)``'s words of 2+ characters (``周四`` in ``每周四``)."""
        out: list[str] = []
        for k in range(len(text)):
            words, end = self._shard(text[k])[0], k + 2
            while end <= len(text) and text[k:end] in words:
                out += [text[k:end]] if words[text[k:end]] else []
                end += 1
        return out


class RustSegmenter:
    """jieba's ``cut`` / ``cut_for_search`` (HMM on) by jieba-rs: for index builds."""

    def __init__(self) -> None:
        import rjieba

        self._cut = rjieba.cut
        self._cut_for_search = rjieba.cut_for_search
        self._cut_all = rjieba.cut_all

    def cut(self, text: str) -> list[str]:
        """``jieba.lcut(text)``."""
        return self._cut(text)

    def cut_for_search(self, text: str) -> list[str]:
        """``jieba.lcut_for_search(text)``."""
        return self._cut_for_search(text)

    def subwords(self, text: str) -> list[str]:
        """The multi-character words of ``jieba.lcut(text, cut_all=True)``."""
        return [word for word in self._cut_all(text) if len(word) > 1]

    def close(self) -> None:
        """Nothing to release (the interface of :class:`Segmenter`)."""


def bulk_segmenter() -> RustSegmenter | None:
    """The jieba-rs segmenter, or None: rjieba not installed, or jieba's data is not the
    data jieba-rs embeds (then its cuts could differ from a query's)."""
    if importlib.util.find_spec("rjieba") is None:
        return None
    for path in _sources(*_jieba_files()):
        import hashlib

        if hashlib.sha256(path.read_bytes()).hexdigest() != JIEBA_DATA.get(path.name):
            return None
    return RustSegmenter()
