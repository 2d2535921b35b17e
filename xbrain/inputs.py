"""Reading JSON documents given to commands (a file path or a byte stream), bounded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, BinaryIO

from .errors import InvalidInputError, NotFoundError

__all__ = ["MAX_INPUT", "read_json_input"]

MAX_INPUT = 10 * 1024 * 1024


def read_json_input(source: Path | BinaryIO, *, limit: int = MAX_INPUT) -> Any:
    """Parse one JSON document of at most ``limit`` bytes.

    Errors: ``Input exceeds 10 MiB.``, ``Invalid resource JSON.``, or not found.
    """
    if isinstance(source, Path):
        try:
            if source.stat().st_size > limit:
                raise InvalidInputError("Input exceeds 10 MiB.")
            data = source.read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"No such file: {source}") from None
        except IsADirectoryError:
            raise InvalidInputError(f"Not a file: {source}") from None
    else:
        data = source.read(limit + 1)
    if len(data) > limit:
        raise InvalidInputError("Input exceeds 10 MiB.")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise InvalidInputError("Invalid resource JSON.") from None
