"""Small helpers inside the runner: timestamps, ids, atomic writes (the digests are public: :mod:`.digests`)."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# The digests moved to the public :mod:`gatestats_runner.digests`; re-exported for older callers.
from gatestats_runner.digests import (
    EMPTY_TREE_DIGEST,
    canonical_json,
    digest_bytes,
    digest_file,
    digest_json,
    tree_digest,
)

__all__ = [
    "EMPTY_TREE_DIGEST",
    "atomic_write_json",
    "canonical_json",
    "digest_bytes",
    "digest_file",
    "digest_json",
    "fsync_dir",
    "now_rfc3339",
    "short_id",
    "tree_digest",
    "write_all",
]


def short_id(run_set_id: str) -> str:
    """12 hex characters naming a run set's cgroups and workspaces (unique per run set)."""
    return hashlib.sha256(run_set_id.encode("utf-8")).hexdigest()[:12]


def now_rfc3339() -> str:
    """The current time as RFC 3339 with an explicit UTC offset and milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync a directory so that a rename or a new entry in it survives a crash."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_json(path: Path, value: Any) -> None:
    """Write JSON to ``path`` through a temporary file, fsync and rename (never a torn file)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = (json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)
