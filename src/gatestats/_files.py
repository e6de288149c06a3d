"""Atomic file writes: a reader never sees a half-written file, and write-once files are never replaced."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic", "write_once"]


def _temporary(path: Path, data: bytes) -> Path:
    """``data`` in an fsync'd temporary file beside ``path``."""
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp, 0o644)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return Path(temp)


def write_once(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole, only if ``path`` does not exist (a hard link cannot replace a file).

    Raises
    ------
    FileExistsError
        ``path`` exists, or appeared while writing.
    """
    temp = _temporary(path, data)
    try:
        os.link(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, then rename it over ``path``."""
    temp = _temporary(path, data)
    try:
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
