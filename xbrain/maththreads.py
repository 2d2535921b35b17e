"""Numpy's math libraries on one thread in this process, unless the user set their
threads (read once, when numpy loads).

Their thread pools spin while they wait for work: a server request embeds one prompt, a
product too small to share, and BLAS's worker threads spinning for it on a busy machine
made it 21 ms where one thread takes 1.8 (476 ms at worst; 2 cores, load 10). A batch
put counts its conflict candidates with numpy and never calls BLAS, yet its idle
workers took 6 % of the put's CPU. Batches are embedded by ``reindex --semantic``,
elsewhere.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["ONE_THREAD", "numpy_one_thread", "one_thread_math"]

ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_thread_math() -> None:
    """Set each of ``ONE_THREAD`` the user did not set to 1 (call before numpy loads)."""
    for name in ONE_THREAD:
        os.environ.setdefault(name, "1")


def numpy_one_thread() -> Any:
    """numpy, loaded with its math libraries on one thread (the user's settings aside)
    when this loads it; the environment is left as it was (the libraries read it once,
    as they load): neither the caller's later imports nor its child processes see it."""
    if "numpy" in sys.modules:
        return sys.modules["numpy"]
    saved = {name: os.environ.get(name) for name in ONE_THREAD}
    one_thread_math()
    try:
        import numpy
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return numpy
