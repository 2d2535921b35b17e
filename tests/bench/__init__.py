"""Tests of the benchmarks' own code and data (bench/), loaded without putting bench/ on
sys.path (its modules' short names, such as ``packages``, would shadow others)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent.parent.parent / "bench"


def bench_module(name: str) -> ModuleType:
    """``bench/<name>.py`` as module ``name`` (loaded once)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module
