"""Embedding many passages at once: batched by length, on both cores when there are two.

Texts are embedded in batches of similar length (a batch is padded to its longest text,
so mixing lengths wastes the model's time) and, when there are many and the provider
runs in this process (``parallel``: the packaged model, whose tokenizer is pure Python
and holds one core), half the batches go to one forked helper that shares the loaded
model. A helper that cannot start or dies leaves its batches to this process: the
result is the same, only slower.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..errors import ProviderError

if TYPE_CHECKING:
    import numpy as np

    from ..embedding import Provider

__all__ = ["BATCH", "PARALLEL_AT", "embed_all"]

BATCH = 64
WHOLE = 256  # texts per call to a provider that batches itself (an endpoint: its requests)
PARALLEL_AT = 4 * BATCH  # fewer texts than this: one process (a fork costs more)
_HELD: list[Any] = []  # the provider the forked helper embeds with


def _helper(batches: list[list[str]]) -> list[Any]:
    provider = _HELD[0]
    return [provider.embed(batch) for batch in batches]


def embed_all(provider: Provider, texts: list[str]) -> np.ndarray:
    """The vectors of ``texts`` in their order (``[n, d]``)."""
    import numpy as np

    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    size = BATCH if getattr(provider, "parallel", False) else WHOLE
    batches = [order[i : i + size] for i in range(0, len(order), size)]
    made: list[Any] = [None] * len(batches)
    mine = list(range(len(batches)))
    pending = None
    if _parallel(provider, len(texts)):
        made[0] = provider.embed([texts[i] for i in batches[0]])  # loads the model first
        theirs = mine[1::2]
        mine = mine[2::2]
        pending = _start(provider, [[texts[i] for i in batches[b]] for b in theirs])
        if pending is None:
            mine = sorted(mine + theirs)
    for b in mine:
        made[b] = provider.embed([texts[i] for i in batches[b]])
    if pending is not None:
        pool, result = pending
        try:
            for b, vectors in zip(theirs, result.get(), strict=True):
                made[b] = vectors
        except Exception:  # the helper died: embed its share here
            for b in theirs:
                made[b] = provider.embed([texts[i] for i in batches[b]])
        finally:
            pool.terminate()
            _HELD.clear()
    out: Any = None
    for b, rows in enumerate(batches):
        vectors = np.asarray(made[b], dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(rows):
            raise ProviderError("The embedding provider did not return one vector per text.")
        if out is None:
            out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        elif vectors.shape[1] != out.shape[1]:
            raise ProviderError("The embedding provider's vectors changed their dimension.")
        out[rows] = vectors
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


def _parallel(provider: Provider, count: int) -> bool:
    return (
        count >= PARALLEL_AT
        and bool(getattr(provider, "parallel", False))
        and (os.cpu_count() or 1) >= 2
        and hasattr(os, "fork")
    )


def _start(provider: Provider, batches: list[list[str]]) -> tuple[Any, Any] | None:
    """One forked helper embedding ``batches`` (None: it could not start)."""
    import multiprocessing

    try:
        context = multiprocessing.get_context("fork")
        _HELD[:] = [provider]
        pool = context.Pool(1)
    except (OSError, ValueError, IndexError):
        _HELD.clear()
        return None
    return pool, pool.apply_async(_helper, (batches,))
