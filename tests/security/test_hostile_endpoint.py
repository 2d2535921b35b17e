"""An OpenAI-compatible embeddings endpoint is hostile input: its time is bounded as a
whole, its answer is checked (count, dimension, finite numbers, size) and every failure
is a provider error (exit 8) — or, for a recall or search in the default mode, the
lexical answer and a warning saying why, as a fresh hook answers.

Issue 42, items 4, 5 and 9: a server trickling a byte every 0.2 s held reindex and
recall past 70 s (the timeout bounded each socket read); recall exited 8 where the hook
answered lexically; vectors changing size between batches were an internal error (exit
1); huge numbers printed numpy's overflow warning on stderr.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, head, make, write_json

pytest.importorskip("numpy", reason="the semantic extra is not installed")

Run = Callable[..., Result]
PROMPT = "keyboard focus in a React dialog"


def vector(text: str, size: int = 3) -> list[float]:
    """A made-up embedding: a few numbers that depend on the text."""
    return [1.0, float(len(text) % 7), float("dialog" in text), 0.5][:size]


class Stub:
    """An embeddings endpoint on 127.0.0.1 whose answers a test sets: ``answer(texts,
    request number)`` gives (HTTP status, body); ``trickle`` sends the body a byte every
    0.2 s (padded far past any bound a test waits for)."""

    def __init__(self) -> None:
        self.answer: Callable[[list[str], int], tuple[int, bytes]] = self.vectors
        self.trickle = False
        self.requests = 0
        self.stopping = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                texts = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["input"]
                stub.requests += 1
                status, body = stub.answer(texts, stub.requests)
                if stub.trickle:
                    body += b" " * 10_000  # JSON allows it: minutes at this pace
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not stub.trickle:
                    self.wfile.write(body)
                    return
                for byte in body:
                    if stub.stopping.wait(0.2):
                        return
                    try:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    except OSError:
                        return  # the client hung up

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @staticmethod
    def vectors(texts: list[str], number: int, size: int = 3) -> tuple[int, bytes]:
        data = [{"index": i, "embedding": vector(text, size)} for i, text in enumerate(texts)]
        return 200, json.dumps({"data": data}).encode()

    def __enter__(self) -> Stub:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[Stub]:
    with Stub() as stub:
        yield stub


def switch_on(xb_proc: Run, stub: Stub, *more: str) -> Result:
    return xb_proc(
        "reindex", "--semantic", "--provider", "openai", "--url", stub.url, "--model", "m", *more
    )


def switched_off(store: Path) -> bool:
    """Semantic recall is not on, and no vectors were kept (derived lexical indexes a
    reindex rebuilds first may have changed; the records did not)."""
    control = store / ".git" / "xbrain"
    return not (control / "semantic.json").exists() and not list(control.glob("vectors/*"))


@pytest.fixture
def stocked(xb: Run, store_dir: Path) -> Path:
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    return store_dir


def test_a_trickling_endpoint_is_bounded_as_a_whole(
    xb_proc: Run, stocked: Path, endpoint: Stub
) -> None:
    """The timeout bounds the whole request, not each read: reindex fails with one line
    (exit 8) and switches nothing on; recall answers lexically and says why; an asked-for
    hybrid search fails. (xb_proc gives each command 120 s: the old bound never ended.)"""
    endpoint.trickle = True
    before = head(stocked)
    started = time.monotonic()
    made = switch_on(xb_proc, endpoint, "--timeout", "1")
    assert made.code == 8 and made.stdout == ""
    assert made.stderr == (
        "The embeddings endpoint did not answer within 1 s "
        "(reindex --semantic --timeout sets it).\n"
    )
    assert switched_off(stocked) and head(stocked) == before
    assert time.monotonic() - started < 60  # generous: a second, and a process to start
    endpoint.trickle = False
    assert switch_on(xb_proc, endpoint, "--timeout", "1").code == 0
    endpoint.trickle = True
    recalled = xb_proc("recall", "-", input=PROMPT)
    assert recalled.code == 0 and recalled.stderr == ""
    answer = recalled.json
    assert answer["retrieval"] == "lexical" and answer["results"]
    assert "did not answer within 1 s" in answer["warning"]
    assert answer["warning"].endswith("; answered lexically.")
    lexical = xb_proc("recall", "-", "--mode", "lexical", input=PROMPT).json
    assert answer["results"] == lexical["results"]
    asked = xb_proc("search", PROMPT, "--mode", "hybrid")
    assert asked.code == 8 and asked.stderr.count("\n") == 1 and "within 1 s" in asked.stderr


@pytest.mark.parametrize("status", [401, 500])
def test_a_failing_endpoint_falls_back_to_lexical_where_no_mode_was_asked(
    xb_proc: Run, stocked: Path, endpoint: Stub, status: int
) -> None:
    assert switch_on(xb_proc, endpoint).code == 0
    endpoint.answer = lambda texts, number: (status, b'{"error": "no"}')
    recalled = xb_proc("recall", "-", input=PROMPT)
    assert recalled.code == 0 and recalled.stderr == ""
    assert recalled.json["retrieval"] == "lexical" and recalled.json["results"]
    assert recalled.json["warning"] == f"The embeddings endpoint answered HTTP {status}; " + (
        "answered lexically."
    )
    searched = xb_proc("search", PROMPT)
    assert searched.code == 0 and searched.json["retrieval"] == "lexical"
    assert searched.json["results"] and f"HTTP {status}" in searched.json["warning"]
    for mode in ("hybrid", "semantic"):
        asked = xb_proc("recall", "-", "--mode", mode, input=PROMPT)
        assert (
            asked.code == 8 and asked.stderr == f"The embeddings endpoint answered HTTP {status}.\n"
        )


def test_a_key_not_set_here_falls_back_too(xb_proc: Run, stocked: Path, endpoint: Stub) -> None:
    """The key's variable is read by the process that asks: a server started without it,
    or a shell, recalls lexically (and says so) instead of failing every prompt."""
    assert (
        switch_on(
            xb_proc,
            endpoint,
            "--key-env",
            "XB_KEY",
        ).code
        == 4
    )  # not set here
    made = xb_proc(
        "reindex", "--semantic", "--provider", "openai", "--url", endpoint.url, "--model", "m",
        "--key-env", "XB_KEY", env={"XB_KEY": "sk-test"},
    )  # fmt: skip
    assert made.code == 0, made.stderr
    recalled = xb_proc("recall", "-", input=PROMPT)
    assert recalled.code == 0 and recalled.json["retrieval"] == "lexical"
    assert "$XB_KEY is not set" in recalled.json["warning"]
    asked = xb_proc("search", PROMPT, "--mode", "semantic")
    assert asked.code == 4 and "$XB_KEY is not set" in asked.stderr


def test_vectors_that_change_size_are_a_provider_error(
    xb: Run, xb_proc: Run, store_dir: Path, endpoint: Stub, json_file: Callable[[Any], str]
) -> None:
    """Between the batches of one request (64 texts each), between a build and the texts
    added later, between the stored vectors and a query: exit 8 (was ValueError, exit 1,
    or "the query's vector does not match", exit 4); a default-mode recall answers
    lexically."""
    batch = [make(f"r-{i}", title=f"Resource {i} about topic {i}") for i in range(70)]
    assert xb("put", json_file(batch)).code == 0  # 71 texts: two requests
    endpoint.answer = lambda texts, number: Stub.vectors(texts, number, 3 if number == 1 else 4)
    made = switch_on(xb_proc, endpoint)
    assert made.code == 8 and made.stdout == ""
    assert made.stderr == (
        "The embeddings endpoint changed its vectors' dimension between requests (3, then 4).\n"
    )
    endpoint.answer = Stub.vectors
    assert switch_on(xb_proc, endpoint).code == 0
    endpoint.answer = lambda texts, number: Stub.vectors(texts, number, 4)
    searched = xb_proc("search", "topic", "--mode", "hybrid")  # the query: 4, stored: 3
    assert searched.code == 8 and "run xbrain reindex --semantic" in searched.stderr
    assert searched.stderr.count("\n") == 1
    new = make("late", title="A late resource about dialogs")
    assert xb("put", str(write_json(store_dir.parent / "late.json", new))).code == 0
    caught_up = xb_proc("search", "dialogs", "--mode", "hybrid")  # new texts: 4
    assert caught_up.code == 8 and "run xbrain reindex --semantic" in caught_up.stderr
    recalled = xb_proc("recall", "-", input="a late resource about dialogs")
    assert recalled.code == 0 and recalled.stderr == "" and recalled.json["retrieval"] == "lexical"
    assert switch_on(xb_proc, endpoint).code == 0  # a rebuild takes the new size
    assert xb_proc("search", "dialogs", "--mode", "hybrid").code == 0


def huge(texts: list[str], number: int) -> tuple[int, bytes]:
    data = [{"index": i, "embedding": [3e38, -3e38, 1e-300]} for i in range(len(texts))]
    return 200, json.dumps({"data": data}).encode()


def test_huge_finite_numbers_are_normalized_without_a_warning(
    xb_proc: Run, stocked: Path, endpoint: Stub
) -> None:
    """numpy's "overflow encountered" RuntimeWarning went to stderr (the norm of numbers
    near float32's largest): a command that succeeds prints nothing there."""
    endpoint.answer = huge
    made = switch_on(xb_proc, endpoint)
    assert made.code == 0 and made.stderr == ""
    found = xb_proc("search", "dialog", "--mode", "semantic")
    assert found.code == 0 and found.stderr == ""
    assert [round(r["similarity"], 4) for r in found.json["results"]] == [1.0]


def answering(raw: str) -> Callable[[list[str], int], tuple[int, bytes]]:
    def answer(texts: list[str], number: int) -> tuple[int, bytes]:
        data = ", ".join(f'{{"index": {i}, "embedding": {raw}}}' for i in range(len(texts)))
        return 200, f'{{"data": [{data}]}}'.encode()

    return answer


@pytest.mark.parametrize(
    "raw",
    [
        "[1, 1e999]",  # infinity, as JSON numbers can say it
        "[1, NaN]",
        "[1, " + "9" * 400 + "]",  # an integer no float holds: was OverflowError, exit 1
        '["1.5", "2"]',  # numbers as strings: numpy converted them
        "[true, false]",
        "[1, null]",
        "[[1, 2]]",
        "[]",
        "[" + ", ".join(["1"] * 8193) + "]",  # past 8192 dimensions
    ],
)
def test_malformed_vectors_are_one_provider_error(
    xb_proc: Run, stocked: Path, endpoint: Stub, raw: str
) -> None:
    endpoint.answer = answering(raw)
    made = switch_on(xb_proc, endpoint)
    assert made.code == 8 and made.stdout == ""
    assert made.stderr == "The embeddings endpoint's vectors are malformed.\n"
    assert switched_off(stocked)


def test_an_answer_larger_than_its_texts_need_is_refused(
    xb_proc: Run, stocked: Path, endpoint: Stub
) -> None:
    """An answer is bounded by what its texts can honestly take (each vector at most 8192
    numbers of at most 32 bytes), not by a flat 64 MiB: 40 MB of JSON is a gigabyte of
    Python objects."""
    padded = answering("[" + ", ".join(["0.125"] * 8192) + "]" + " " * (300 << 10))
    endpoint.answer = padded
    made = switch_on(xb_proc, endpoint)
    assert made.code == 8 and "answered more than" in made.stderr
    assert made.stderr.count("\n") == 1
