"""A warm process (``xbrain serve``, the MCP server) reads a team layer's derived file
(what it hides, every record's provenance: megabytes on a big team) once, not on every
prompt, and again as soon as a team command replaced it (issue 47: through serve a team
layer adds ≤ 1.2x)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_team_reads import DIALOG, team
from xbrain.team import derived, layers
from xbrain.team.place import team_layers

__all__ = ["team"]  # the fixture, used by name


def test_a_warm_process_parses_a_layers_derived_file_once_until_it_is_replaced(
    team: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (layer,) = team_layers(Path(os.environ["XDG_DATA_HOME"]) / "xbrain" / "teams")
    first = layers.derived(layer)  # worked out by team add; parsed here
    parsed: list[int] = []
    loads = json.loads

    def counted(data: Any, *args: Any, **kwargs: Any) -> Any:
        parsed.append(len(data))
        return loads(data, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counted)
    for _ in range(3):
        assert layers.derived(layer) == first
    assert parsed == []
    assert layers.provenance(first, DIALOG) is not None

    path = Path(derived.layer_file(layer.path))  # a team command writes a new file
    temp = path.with_name("replaced.tmp")
    temp.write_bytes(path.read_bytes().replace(b'"hidden": [', b'"hidden": ["gone", ', 1))
    os.replace(temp, path)
    again = layers.derived(layer)
    assert len(parsed) == 1 and again["hidden"][0] == "gone"
    assert layers.derived(layer) == again and len(parsed) == 1
