"""A provider with no model: each word (and each Chinese character pair) hashed into one
of 256 dimensions. Deterministic and instant; it knows nothing of meaning, so it stands
in for a model in tests and shows what the semantic plumbing does without one."""

from __future__ import annotations

import hashlib
import itertools
import re

import numpy as np

__all__ = ["HashingProvider"]

_WORD = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]")


class HashingProvider:
    """Words hashed into a fixed number of dimensions, L2-normalized."""

    def __init__(self, dimension: int = 256) -> None:
        self.dimension = dimension
        self.model_id = f"hashing-{dimension}"
        self.floor = 0.3
        self.calibrated = False  # no model, no meaning to calibrate: its floor is the gate

    def embed(self, texts: list[str]) -> np.ndarray:
        """One normalized row of word counts (hashed) per text."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            grams = [a + b for a, b in itertools.pairwise(words) if len(a) == len(b) == 1]
            for word in words + grams:
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                out[row, int.from_bytes(digest[:4], "little") % self.dimension] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)
