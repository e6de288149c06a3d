"""Small helpers inside the runner: timestamps, ids, atomic writes (the digests are public: :mod:`.digests`)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeAlias

# The digests moved to the public :mod:`gatestats_runner.digests`; re-exported for older callers.
from gatestats_runner.contract import decode_json
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
    "JSONObject",
    "JSONValue",
    "atomic_write_json",
    "canonical_json",
    "digest_bytes",
    "digest_file",
    "digest_json",
    "fsync_dir",
    "now_rfc3339",
    "read_json_file",
    "set_aside_tail",
    "short_id",
    "tree_digest",
    "write_all",
]


def short_id(run_set_id: str) -> str:
    """12 hex characters naming a run set's cgroups and workspaces (unique per run set).

    Parameters
    ----------
    run_set_id
        The run set's id.

    Returns
    -------
    str
        The first 12 hex digits of its SHA-256.
    """
    return hashlib.sha256(run_set_id.encode("utf-8")).hexdigest()[:12]


def now_rfc3339() -> str:
    """The current time as RFC 3339 with an explicit UTC offset and milliseconds.

    Returns
    -------
    str
        For example ``2026-12-01T09:04:56.123+00:00``.
    """
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (``os.write`` may write less than asked).

    Parameters
    ----------
    fd
        An open file descriptor.
    data
        The bytes.
    """
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync a directory so that a rename or a new entry in it survives a crash.

    Parameters
    ----------
    path
        The directory.
    """
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_json(path: Path, value: Any) -> None:
    """Write JSON to ``path`` through a temporary file, fsync and rename (never a torn file).

    Parameters
    ----------
    path
        The file.
    value
        The JSON value (indented, UTF-8; NaN refused).
    """
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


def set_aside_tail(path: Path, keep: int, tail: bytes) -> Path:
    """Move a torn last line out of an append-only file, into ``PATH.torn-N`` (N the first number free).

    Parameters
    ----------
    path
        The append-only file.
    keep
        Its length without the torn line (it is cut to this, and fsync'd).
    tail
        The torn line's bytes.

    Returns
    -------
    Path
        The ``.torn-N`` file.
    """
    number = 1
    while path.with_name(f"{path.name}.torn-{number}").exists():
        number += 1
    aside = path.with_name(f"{path.name}.torn-{number}")
    aside.write_bytes(tail)
    with open(path, "r+b") as handle:
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())
    fsync_dir(path.parent)
    return aside


#: A value ``json.dumps`` writes without a ``default`` hook (as ``gatestats._typing.JSONValue``).
JSONValue: TypeAlias = "str | int | float | bool | Sequence[JSONValue] | Mapping[str, JSONValue] | None"
#: A JSON object the runner writes or has checked (a record, a manifest, an event): values typed as JSON.
JSONObject: TypeAlias = "dict[str, JSONValue]"


#: Largest manifest or case file read (bytes).
JSON_FILE_MAX_BYTES = 256 << 20


def read_json_file(path: Path, error: Callable[[str], Exception], *, missing: str) -> Any:
    """The JSON value in ``path``.

    Parameters
    ----------
    path
        The file.
    error
        The exception class raised, with ``"PATH: ..."`` as its message.
    missing
        What the message says when there is no file.

    Returns
    -------
    Any
        The value.

    Raises
    ------
    Exception
        ``error``: no file, or it is not strict JSON (:func:`gatestats_runner.contract.decode_json`:
        size and nesting limits, no duplicate keys or ``NaN``), with the line where it is known.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        msg = f"{path}: {missing}"
        raise error(msg) from None
    value, bad = decode_json(raw, max_bytes=JSON_FILE_MAX_BYTES)
    if bad is not None:
        where = f"{path}:{bad.line}" if bad.line is not None else str(path)
        why = bad.message if bad.message.startswith("not valid JSON") else f"not valid JSON ({bad.message})"
        msg = f"{where}: {why}"
        raise error(msg)
    return value
