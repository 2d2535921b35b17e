"""What a team layer costs a prompt (issue 47: a fresh recall ≤ 1.5x, through ``xbrain
serve`` ≤ 1.2x): a fresh process reads a layer's provenance by key from a copy of its
derived file instead of parsing the whole file on every prompt, and every layer's recall
cuts Chinese with the one segmenter the personal recall loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_team_reads import DIALOG, MEMORY, team
from xbrain import lightcli, lightsearch
from xbrain.search import kept
from xbrain.team import derived
from xbrain.team.place import Layer, team_layers

__all__ = ["team"]  # the fixture, used by name

PROMPT = b"build tips: make -j2?"


# a fresh process: every json.loads it makes, and what a prompt's read of the layer gives
READ = """
import json, sys
from pathlib import Path
sizes = []
loads = json.loads
def counted(data, *args, **kwargs):
    sizes.append(len(data))
    return loads(data, *args, **kwargs)
json.loads = counted
from xbrain.team import layers
from xbrain.team.place import Layer
layer = Layer("eng", sys.argv[1])
known = layers.derived(layer)
json.dump({"sizes": sizes, "hidden": sorted(known["hidden"]),
           "provenance": [layers.provenance(known, key) for key in sys.argv[2:]]}, sys.stdout)
"""


def the_layer() -> Layer:
    (layer,) = team_layers(Path(os.environ["XDG_DATA_HOME"]) / "xbrain" / "teams")
    return layer


def fresh_read(layer: Layer, *keys: str) -> dict[str, Any]:
    argv = [sys.executable, "-c", READ, layer.path, *keys]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    found: dict[str, Any] = json.loads(proc.stdout)
    return found


def test_a_fresh_prompt_reads_a_layers_provenance_by_key_not_its_whole_file(
    xb_proc: Any, team: Path
) -> None:
    layer = the_layer()
    path = Path(derived.layer_file(layer.path))
    whole = json.loads(path.read_text())
    assert xb_proc("recall", "-", input=PROMPT.decode()).code == 0  # any read leaves the copy
    found = fresh_read(layer, DIALOG, MEMORY, "resource_none")
    assert max(found["sizes"], default=0) < path.stat().st_size // 4  # never the whole file
    assert found["hidden"] == sorted(whole["hidden"]) and found["hidden"]  # the draft skill
    dialog, memory, none = found["provenance"]
    assert dialog["committer"] == "Mia Maker <mia@example.org>" and none is None
    assert [dialog["commit"], memory["commit"]] == [
        whole["provenance"][DIALOG][2],
        whole["provenance"][MEMORY][2],
    ]


def test_a_replaced_derived_file_is_read_again_never_its_old_copy(xb_proc: Any, team: Path) -> None:
    layer = the_layer()
    assert xb_proc("recall", "-", input=PROMPT.decode()).code == 0  # the copy of this file
    path = Path(derived.layer_file(layer.path))
    value = json.loads(path.read_text())
    value["hidden"] = ["gone", *value["hidden"]]
    value["provenance"][DIALOG] = ["Someone Else <else@example.org>", 1_700_000_000, "0" * 40]
    temp = path.with_name("replaced.tmp")  # as a team command writes it: a new file
    temp.write_text(json.dumps(value, sort_keys=True))
    os.replace(temp, path)
    for _ in range(2):  # the file itself, then the copy the first read made of it
        found = fresh_read(layer, DIALOG)
        assert found["hidden"][0] == "gone"
        assert found["provenance"][0]["committer"] == "Someone Else <else@example.org>"


def test_a_servers_kept_team_connections_answer_a_search_after_a_recall(
    xb: Any, team: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert xb("init").code == 0
    monkeypatch.setattr(kept, "_KEPT", None)
    kept.keep_warm()  # as xbrain serve: a team index's connection opened on its thread
    try:
        for _ in range(2):
            assert lightcli.answer(store_dir, b"keyboard focus in an accessible dialog")
            found = lightsearch.search_document(store_dir, "accessible dialog")
            assert [r["layer"] for r in found["results"]] == ["team:eng"]
    finally:
        for _, conn, _ in (kept._KEPT or {}).values():
            conn.close()


def test_a_recall_with_a_team_loads_the_chinese_segmenter_once_for_every_leg(
    xb: Any, team: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from xbrain.search import segment, tokenize

    assert xb("init").code == 0
    monkeypatch.setattr(tokenize, "_WARM", None)  # as a fresh process
    made: list[int] = []

    class Counted(segment.Segmenter):
        def __init__(self, cache_dir: Path) -> None:
            made.append(threading.get_ident())
            super().__init__(cache_dir)

    monkeypatch.setattr(segment, "Segmenter", Counted)
    found = lightcli.answer(store_dir, "部署前要检查数据库迁移回滚吗".encode())
    assert [(r["kind"], r["layer"]) for r in found["results"]] == [("skill", "team:eng")]
    assert len(made) == 1  # the personal leg's and the team's: the same one
    for kept_one in (tokenize._WARM or {}).values():
        kept_one.close()
