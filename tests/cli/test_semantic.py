"""Semantic and hybrid recall through the CLI (SPEC §14), with the hashing provider (no
model): switching it on and off, modes, the gates, catch-up after writes, doctor."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import EXAMPLES, Result, head

pytest.importorskip("numpy", reason="the semantic extra is not installed")

Run = Callable[..., Result]


@pytest.fixture
def semantic(xb: Run, store_dir: Path) -> Path:
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    result = xb("reindex", "--semantic", "--provider", "hashing")
    assert result.code == 0, result.stderr
    assert result.json["semantic"]["enabled"] and result.json["semantic"]["model"] == "hashing-256"
    return store_dir


def test_switching_on_keeps_private_files_outside_git(semantic: Path) -> None:
    control = semantic / ".git" / "xbrain"
    settings = control / "semantic.json"
    (vectors,) = (control / "vectors").glob("*.bin")
    assert json.loads(settings.read_text()) == {"provider": {"kind": "hashing"}}
    assert settings.stat().st_mode & 0o777 == 0o600 and vectors.stat().st_mode & 0o777 == 0o600
    assert (control / "vectors").stat().st_mode & 0o777 == 0o700
    tracked = subprocess.run(
        ["git", "-C", str(semantic), "ls-files"], capture_output=True, text=True
    ).stdout
    assert "vectors" not in tracked and "semantic" not in tracked


def test_search_defaults_to_hybrid_and_says_which_leg_found_what(xb: Run, semantic: Path) -> None:
    hybrid = xb("search", "keyboard focus in a React dialog").json
    lexical = xb("search", "keyboard focus in a React dialog", "--mode", "lexical").json
    assert hybrid["retrieval"] == "hybrid" and lexical["retrieval"] == "lexical"
    (top,) = hybrid["results"]
    assert top["foundBy"] == ["lexical", "semantic"] and 0 < top["similarity"] <= 1
    assert top["matched"] == lexical["results"][0]["matched"]
    assert "foundBy" not in lexical["results"][0]
    only = xb("search", "keyboard behavior React dialogs", "--mode", "semantic").json
    assert only["results"][0]["foundBy"] == ["semantic"] and only["results"][0]["matched"] == []
    for chatter in ("ok thanks", "好的", "继续"):
        assert xb("search", chatter).json["results"] == [], chatter


def test_recall_fuses_and_stays_quiet_off_topic(xb: Run, semantic: Path) -> None:
    asked = xb("recall", "-", input="can I git push --force to main?").json["results"]
    rule = next(r for r in asked if r["name"] == "no-force-push")
    assert rule["foundBy"] == ["lexical", "semantic"] and rule["why"]["via"] == "query"
    assert 0 < rule["why"]["similarity"] <= 1
    lexical = xb("recall", "-", "--mode", "lexical", input="can I git push --force to main?")
    assert all("foundBy" not in r for r in lexical.json["results"])
    for chatter in ("ok thanks", "好的", "继续"):
        assert xb("recall", "-", input=chatter).json["results"] == [], chatter
    retired = xb("entry", "retire", next(r["id"] for r in asked if r["name"] == "no-force-push"))
    assert retired.code == 0
    again = xb("recall", "-", "--mode", "semantic", input="can I git push --force to main?")
    assert "no-force-push" not in [r["name"] for r in again.json["results"]]


def test_chatter_gets_no_semantic_leg_even_when_a_note_shares_its_words(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """A model finds "好的" close to "好的代码" and "ok thanks" close to a note about an ok
    button: off-topic prompts must still recall nothing (SPEC §14), in every mode; a
    prompt that says something still reaches the semantic leg."""
    notes = [
        {
            "kind": "rule",
            "name": "good-code",
            "description": "好的代码",
            "body": "好的代码要有测试。",
            "oneLiner": "好的代码有测试",
            "queries": ["好的代码"],
            "keywords": ["代码质量"],
        },
        {
            "kind": "memory",
            "name": "ok-button",
            "description": "ok button label",
            "body": "The dialog's ok button says OK.",
            "oneLiner": "ok button",
            "queries": ["ok button"],
            "keywords": ["button"],
        },
    ]
    (tmp_path / "notes.json").write_text(json.dumps(notes, ensure_ascii=False))
    assert xb("entry", "put", str(tmp_path / "notes.json")).code == 0
    assert xb("reindex", "--semantic", "--provider", "hashing").code == 0
    for mode in ("semantic", "hybrid"):
        for chatter in ("好的", "ok thanks", "可以", "ok"):
            found = xb("recall", "-", "--mode", mode, input=chatter).json["results"]
            assert found == [], (mode, chatter)
        said = xb("recall", "-", "--mode", mode, input="好的代码").json["results"]
        assert [r["name"] for r in said] == ["good-code"] and "semantic" in said[0]["foundBy"]


def test_writes_are_caught_up_by_the_next_query(xb: Run, semantic: Path) -> None:
    resource = json.loads((EXAMPLES / "synthetic-resource.json").read_text())
    resource = resource[0] if isinstance(resource, list) else resource
    changed = {
        **resource,
        "id": None,
        "source": {**resource["source"], "id": "glacier-notes", "url": "https://example.com/g"},
        "title": "Glacier hiking checklist",
        "purpose": "Pack crampons rope and an ice axe for glacier hiking",
        "useWhen": ["planning a glacier hike"],
        "updatedAt": "2026-11-01T00:00:00.000Z",
    }
    changed.pop("id")
    put = xb("put", "-", input=json.dumps(changed))
    assert put.code == 0, put.stderr
    found = xb("search", "crampons ice axe glacier", "--mode", "semantic").json["results"]
    assert found and found[0]["brief" if "brief" in found[0] else "resource"]["title"].startswith(
        "Glacier"
    )


def test_modes_without_semantic_recall_are_one_line_errors(xb: Run, store_dir: Path) -> None:
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    before = head(store_dir)
    for argv in (["search", "dialog", "--mode", "semantic"], ["recall", "-", "--mode", "hybrid"]):
        result = xb(*argv, input="dialog")
        assert result.code == 4 and result.stderr.count("\n") == 1
        assert "reindex --semantic" in result.stderr
    assert xb("search", "dialog").json["retrieval"] == "lexical"
    bad = xb("reindex", "--provider", "onnx")
    assert bad.code == 2 and "--semantic" in bad.stderr
    assert head(store_dir) == before


def test_switching_off_removes_the_vectors(xb: Run, semantic: Path) -> None:
    off = xb("reindex", "--semantic-off")
    assert off.code == 0 and off.json["semantic"] == {"enabled": False, "removed": 2}
    assert not list((semantic / ".git" / "xbrain" / "vectors").glob("*.bin"))
    assert xb("search", "keyboard focus in a React dialog").json["retrieval"] == "lexical"


def test_doctor_reports_and_repairs_damaged_vectors(xb: Run, semantic: Path) -> None:
    assert xb("doctor").json["problems"] == []
    (vectors,) = (semantic / ".git" / "xbrain" / "vectors").glob("*.bin")
    data = bytearray(vectors.read_bytes())
    data[-4:] = b"\xff\xff\xff\x7f"  # a NaN in the last vector
    vectors.write_bytes(bytes(data))
    problems = xb("doctor").json["problems"]
    assert [p["code"] for p in problems] == ["semantic_vectors"]
    assert xb("search", "dialog", "--mode", "lexical").code == 0  # the lexical leg still works
    repaired = xb("doctor", "--repair").json
    assert [p["code"] for p in repaired["repaired"]] == ["semantic_vectors"]
    assert xb("search", "keyboard focus in a React dialog").json["results"]  # rebuilt
    assert xb("doctor").json["problems"] == []
    vectors.write_bytes(b"XBVEC1\n\0" + b"\xff" * 8)  # a header that lies about its size
    result = xb("search", "keyboard focus in a React dialog")
    assert result.code == 7 and "reindex --semantic" in result.stderr


def test_the_base_install_path_never_imports_numpy(xb: Run, store_dir: Path) -> None:
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    for argv, stdin in ((["search", "dialog"], ""), (["recall", "-"], "keyboard dialog focus")):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "xbrain", *argv, "--store", str(store_dir)],
            input=stdin,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr[-500:]
        loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
        assert "numpy" not in loaded and "xbrain.semantic.vectors" not in loaded, argv


@given(
    st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8),
    st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8),
)
def test_fusion_ranks_by_reciprocal_rank(lexical: list[str], semantic: list[str]) -> None:
    from xbrain.semantic.hybrid import RRF_K, WEIGHTS, fuse

    fused = fuse({"lexical": lexical, "semantic": semantic})
    assert sorted(rid for rid, _, _ in fused) == sorted(set(lexical) | set(semantic))
    for rid, score, legs in fused:
        expected = sum(
            WEIGHTS[leg] / (RRF_K + ids.index(rid) + 1)
            for leg, ids in (("lexical", lexical), ("semantic", semantic))
            if rid in ids
        )
        assert abs(score - expected) < 1e-6
        assert legs == [
            leg for leg, ids in (("lexical", lexical), ("semantic", semantic)) if rid in ids
        ]
    first = {"lexical": 0, "semantic": 1}
    keys: list[Any] = [(-score, first[legs[0]], rid) for rid, score, legs in fused]
    assert keys == sorted(keys)


def test_catching_up_embeds_only_new_texts(xb: Run, semantic: Path) -> None:
    from xbrain.embedding import ProviderSpec, load_provider
    from xbrain.semantic.vectors import catch_up

    inner = load_provider(ProviderSpec("hashing"))
    asked: list[str] = []

    class Counting:
        model_id, dimension, floor = inner.model_id, inner.dimension, inner.floor

        def embed(self, texts: list[str]) -> Any:
            asked.extend(texts)
            return inner.embed(texts)

    control = semantic / ".git"
    before = catch_up(control, Counting())
    assert asked == []  # nothing changed since reindex --semantic
    rule = {"kind": "rule", "name": "tabs", "queries": ["indent with tabs"], "body": "Use tabs."}
    assert xb("entry", "put", "-", input=json.dumps(rule)).code == 0
    assert xb("recall", "-", "--mode", "lexical", input="indent with tabs").code == 0
    after = catch_up(control, Counting())
    # the new entry's passages (its query and its body), nothing else
    assert sorted(asked) == ["Use tabs.", "indent with tabs"]
    assert len(after.rows) == len(before.rows) + 2


def test_without_the_extra_auto_stays_lexical_and_asking_is_one_line(
    xb: Run, semantic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from xbrain.semantic import hybrid

    monkeypatch.setattr(hybrid, "_numpy_installed", lambda: False)
    assert xb("search", "keyboard focus in a React dialog").json["retrieval"] == "lexical"
    refused = xb("search", "dialog", "--mode", "hybrid")
    assert refused.code == 4 and "pip install 'xbrain[semantic]'" in refused.stderr


def test_an_endpoint_provider_never_stores_or_shows_its_key(
    xb: Run, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    seen: list[str | None] = []

    class Endpoint(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(self.headers.get("Authorization"))
            vectors = [[1.0, float(len(t) % 7), float("dialog" in t)] for t in body["input"]]
            raw = json.dumps(
                {"data": [{"index": i, "embedding": v} for i, v in enumerate(vectors)]}
            )
            self.send_response(200)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw.encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("XB_TEST_KEY", "sk-never-shown-42")
        assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        # a 3-dimension toy endpoint: the gate derived from it would let nothing through
        made = xb(
            "reindex", "--semantic", "--provider", "openai", "--url", url,
            "--model", "tiny", "--key-env", "XB_TEST_KEY", "--floor", "0.4",
        )  # fmt: skip
        assert made.code == 0, made.stderr
        found = xb("search", "dialog guide", "--mode", "semantic")
        assert found.code == 0 and found.json["results"]
    finally:
        server.shutdown()
        server.server_close()
    assert seen and set(seen) == {"Bearer sk-never-shown-42"}
    settings = (store_dir / ".git" / "xbrain" / "semantic.json").read_text()
    assert "XB_TEST_KEY" in settings and "sk-never" not in settings
    for output in (made.stdout, made.stderr, found.stdout, found.stderr):
        assert "sk-never" not in output
    log = subprocess.run(
        ["git", "-C", str(store_dir), "log", "-p", "--all"], capture_output=True, text=True
    ).stdout
    assert "sk-never" not in log and "semantic.json" not in log


def test_hybrid_and_semantic_answers_match_their_schemas(xb: Run, semantic: Path) -> None:
    from tests.cli.test_schemas import validate

    for mode in ("hybrid", "semantic", "lexical"):
        validate(xb("search", "keyboard focus in a React dialog", "--mode", mode), "search-output")
        validate(xb("search", "keyboard dialog", "--mode", mode, "--brief"), "search-output")
        asked = xb("recall", "-", "--mode", mode, input="can I git push --force to main?")
        validate(asked, "recall-output")
    validate(xb("reindex", "--semantic", "--provider", "hashing"), "reindex-output")
    validate(xb("reindex", "--semantic-off"), "reindex-output")


def test_a_users_onnx_model_through_the_cli(xb: Run, store_dir: Path, tmp_path: Path) -> None:
    from tests.unit.test_embedding import tiny_model

    folder = tiny_model(tmp_path / "model")
    rule = {"kind": "rule", "name": "ls-help", "description": "list directory contents"}
    assert xb("entry", "put", "-", input=json.dumps(rule)).code == 0
    made = xb("reindex", "--semantic", "--provider", "onnx", "--model-dir", str(folder))
    assert made.code == 0, made.stderr
    assert made.json["semantic"]["model"].startswith("onnx:")
    assert made.json["semantic"]["dimension"] == 8
    settings = json.loads((store_dir / ".git" / "xbrain" / "semantic.json").read_text())
    assert settings["provider"] == {"kind": "onnx", "path": str(folder)}
    found = xb("recall", "-", "--mode", "semantic", input="list directory")
    assert [r["name"] for r in found.json["results"]] == ["ls-help"]
    missing = xb("reindex", "--semantic", "--provider", "onnx", "--model-dir", str(tmp_path / "no"))
    assert missing.code == 4 and missing.stderr.count("\n") == 1


def test_a_relative_model_dir_is_kept_absolute(
    xb: Run, store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept as given, ./model named another folder for a search run elsewhere."""
    from tests.unit.test_embedding import tiny_model

    folder = tiny_model(tmp_path / "model")
    rule = {"kind": "rule", "name": "ls-help", "description": "list directory contents"}
    assert xb("entry", "put", "-", input=json.dumps(rule)).code == 0
    monkeypatch.chdir(tmp_path)
    made = xb("reindex", "--semantic", "--provider", "onnx", "--model-dir", "model")
    assert made.code == 0, made.stderr
    settings = json.loads((store_dir / ".git" / "xbrain" / "semantic.json").read_text())
    assert settings["provider"] == {"kind": "onnx", "path": str(folder)}
    monkeypatch.chdir("/")
    found = xb("recall", "-", "--mode", "semantic", input="list directory")
    assert [r["name"] for r in found.json["results"]] == ["ls-help"]


def test_a_lexical_hit_holding_only_other_forms_of_the_words_is_not_complete(
    xb: Run, store_dir: Path, json_file: Callable[[Any], str]
) -> None:
    """Fusion lets a lexical hit that holds every query word keep its place; a note that
    holds only other forms of them (``sorting`` for ``sorted``) matches every word by
    stem, but the words as asked are the evidence that rule stands on."""
    from tests.conftest import make
    from xbrain.kinds.model import resource_id
    from xbrain.semantic.hybrid import holds_as_asked

    rid = resource_id("web", "forms")
    assert holds_as_asked(store_dir, rid, ["sorted"])  # no index yet: it cannot say no
    xb("put", json_file(make("forms", title="Sorting directory listings", text="by time")))
    (hit,) = xb("search", "sorted directory listing", "--mode", "lexical").json["results"]
    assert hit["matched"] == ["sorted", "directory", "listing"]
    assert holds_as_asked(store_dir, rid, ["directory", "listings", "time"])
    assert not holds_as_asked(store_dir, rid, ["sorted", "directory", "listing"])
    assert not holds_as_asked(store_dir, resource_id("web", "gone"), ["time"])


def test_timeout_goes_with_an_endpoint(xb: Run, store_dir: Path) -> None:
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    alone = xb("reindex", "--timeout", "5")
    assert alone.code == 2 and "--timeout go with --semantic" in alone.stderr
    hashing = xb("reindex", "--semantic", "--provider", "hashing", "--timeout", "5")
    assert hashing.code == 4 and hashing.stderr == "--timeout goes with --provider openai.\n"
    url = ["--url", "http://127.0.0.1:9/v1", "--model", "m"]
    for bad in ("0", "-1", "601", "nan"):
        refused = xb("reindex", "--semantic", "--provider", "openai", *url, "--timeout", bad)
        assert refused.code == 4 and "at most 600 seconds" in refused.stderr, bad
    assert not (store_dir / ".git" / "xbrain" / "semantic.json").exists()
