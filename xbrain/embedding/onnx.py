"""A sentence-embedding model directory the user supplies: ``model.onnx`` (a
transformer whose first output is the token states ``[n, tokens, d]``, or already
pooled ``[n, d]``) and ``tokenizer.json`` (Hugging Face ``tokenizers``), run with
``onnxruntime`` on the CPU and mean-pooled over the attention mask — how
all-MiniLM-L6-v2, the model memex uses, is exported."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidInputError
from . import SemanticUnavailableError

__all__ = ["OnnxProvider"]

MAX_TOKENS = 256
MAX_MODEL = 2 << 30  # a sentence model is tens of MB; refuse what cannot be one
MAX_TOKENIZER = 64 << 20  # tokenizer.json of a large vocabulary is a few MB


class OnnxProvider:
    """An ONNX sentence-embedding model from a directory."""

    def __init__(self, folder: str) -> None:
        root = Path(folder).expanduser()
        model, tokenizer = root / "model.onnx", root / "tokenizer.json"
        for path in (model, tokenizer):
            if not path.is_file():
                raise InvalidInputError(f"The model directory has no {path.name}: {root}")
        if model.stat().st_size > MAX_MODEL:
            raise InvalidInputError(f"{model} is larger than 2 GiB; not a sentence model.")
        if tokenizer.stat().st_size > MAX_TOKENIZER:
            raise InvalidInputError(f"{tokenizer} is larger than 64 MiB; not a tokenizer.")
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError:
            raise SemanticUnavailableError(
                "The onnx provider needs: pip install 'xbrain[semantic]' (onnxruntime, tokenizers)."
            ) from None
        digest = hashlib.sha256()
        with model.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(tokenizer.read_bytes())
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self._session: Any = onnxruntime.InferenceSession(
                str(model), options, providers=["CPUExecutionProvider"]
            )
            self._tokenizer: Any = Tokenizer.from_file(str(tokenizer))
        except Exception as exc:  # a damaged or foreign file
            raise InvalidInputError(
                f"Cannot load the model in {root}: {type(exc).__name__}."
            ) from None
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()
        self._inputs = {item.name for item in self._session.get_inputs()}
        if "input_ids" not in self._inputs:
            raise InvalidInputError(f"The model in {root} takes no input_ids.")
        self.model_id = "onnx:" + digest.hexdigest()[:16]
        self.floor = 0.4
        self.dimension = int(self.embed(["dimension"]).shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        """Tokenize, run the model, mean-pool over the mask, normalize."""
        if not texts:
            return np.zeros((0, getattr(self, "dimension", 0)), dtype=np.float32)
        encoded = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        states = np.asarray(self._session.run(None, feed)[0], dtype=np.float32)
        if states.ndim == 3:  # token states: the mean over real tokens
            weights = mask[:, :, None].astype(np.float32)
            states = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        if states.ndim != 2 or states.shape[0] != len(texts):
            raise InvalidInputError("The model's output is not one vector per text.")
        norms = np.linalg.norm(states, axis=1, keepdims=True)
        return (states / np.where(norms == 0, 1.0, norms)).astype(np.float32)
