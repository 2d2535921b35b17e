"""Embedding many passages: batched by length, half of them in a forked helper when the
provider allows it, the same vectors in the same order either way."""

from __future__ import annotations

from typing import Any

import pytest

np = pytest.importorskip("numpy", reason="the semantic extra is not installed")


class Words:
    """The hashing provider, marked as one that may run in a second process."""

    def __init__(self, parallel: bool) -> None:
        from xbrain.embedding.hashing import HashingProvider

        self.inner = HashingProvider()
        self.model_id, self.dimension, self.floor = "words", 256, 0.3
        self.parallel = parallel
        self.calls = 0

    def embed(self, texts: list[str]) -> Any:
        self.calls += 1
        return self.inner.embed(texts)


def texts(count: int) -> list[str]:
    return [f"passage {i} " + "word " * (i % 37) + f"tail {i * 7}" for i in range(count)]


def test_parallel_and_serial_embedding_agree_in_order() -> None:
    from xbrain.semantic.embedbulk import BATCH, PARALLEL_AT, embed_all

    made = texts(PARALLEL_AT + 3 * BATCH + 5)
    serial, forked = Words(parallel=False), Words(parallel=True)
    one = embed_all(serial, made)
    two = embed_all(forked, made)
    assert one.shape == (len(made), 256)
    assert np.array_equal(one, two)
    assert np.array_equal(one, serial.inner.embed(made))  # each row is its own text's
    assert forked.calls < -(-len(made) // BATCH)  # the helper embedded part of the batches


def test_a_helper_that_cannot_start_leaves_the_work_here(monkeypatch: pytest.MonkeyPatch) -> None:
    from xbrain.semantic import embedbulk

    monkeypatch.setattr(embedbulk, "_start", lambda provider, batches: None)
    made = texts(embedbulk.PARALLEL_AT + 10)
    provider = Words(parallel=True)
    assert np.array_equal(embedbulk.embed_all(provider, made), provider.inner.embed(made))


def test_nothing_to_embed_is_an_empty_matrix() -> None:
    from xbrain.semantic.embedbulk import embed_all

    assert embed_all(Words(parallel=True), []).shape[0] == 0
