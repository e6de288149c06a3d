"""Strict JSON documents from disk: regular files only, one reading only, every defect located.

Verdicts, manifests, τ-bench results and signed envelopes are JSON documents that decide or record
a release. Each is read here: from a regular file (a FIFO or a device is refused without blocking),
within a size limit, and decoded by the runner's strict decoder
(:func:`gatestats_runner.contract.decode_json`: no duplicate keys, no ``NaN``/``Infinity``, no
number that overflows, bounded nesting, UTF-8 without a byte-order mark). A defect is a
:class:`~gatestats.errors.RecordFileError` naming the file, the line where it is known, and the field.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from gatestats.errors import RecordFileError
from gatestats_runner.contract import MAX_DEPTH, decode_json

__all__ = ["parse_json_document", "read_json_file", "read_regular_file"]


def read_regular_file(path: str | os.PathLike[str], *, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``); never blocks on a FIFO or reads a device.

    Parameters
    ----------
    path
        The file.
    limit
        The most bytes accepted.
    what
        The file's role, for messages (e.g. ``verdict``).

    Returns
    -------
    bytes
        The file's content.

    Raises
    ------
    RecordFileError
        Missing, not a regular file, larger than ``limit``, or unreadable (``what`` names the file's role).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise RecordFileError.single(path, "<file>", f"no such {what} file") from None
    except OSError as exc:
        raise RecordFileError.single(path, "<file>", f"cannot read the {what} file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise RecordFileError.single(path, "<file>", f"{kind} (expected a {what} file)")
        chunks: list[bytes] = []
        total = 0
        while total <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - total))):
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise RecordFileError.single(path, "<file>", f"cannot read the {what} file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if total > limit:
        raise RecordFileError.single(path, "<file>", f"larger than {limit} bytes: not a {what} file")
    return b"".join(chunks)


def parse_json_document(data: bytes, *, source: str | os.PathLike[str], max_depth: int = MAX_DEPTH) -> Any:
    """Decode ``data`` strictly as one JSON document named ``source`` in errors.

    Parameters
    ----------
    data
        The document's bytes.
    source
        How errors name the document (a path).
    max_depth
        The deepest nesting of arrays and objects accepted.

    Returns
    -------
    Any
        The decoded value.

    Raises
    ------
    RecordFileError
        Not strict JSON (see the module docstring).

    Examples
    --------
    >>> parse_json_document(b'{"a": [1, 2.5, null]}', source="x.json")
    {'a': [1, 2.5, None]}
    >>> parse_json_document(b'{"a": 1,\\n "b": NaN}', source="x.json")
    Traceback (most recent call last):
    ...
    gatestats.errors.RecordFileError: x.json:2: field '<line>': not valid JSON: NaN is not a JSON number
    """
    value, bad = decode_json(data, max_bytes=len(data), max_depth=max_depth)
    if bad is not None:
        raise RecordFileError.single(source, bad.field, bad.message, line=bad.line)
    return value


def read_json_file(path: str | os.PathLike[str], *, limit: int, what: str, max_depth: int = MAX_DEPTH) -> Any:
    """Read and strictly decode the JSON document in the regular file ``path``.

    Parameters
    ----------
    path, limit, what
        As :func:`read_regular_file`.
    max_depth
        As :func:`parse_json_document`.

    Returns
    -------
    Any
        The decoded document.

    Raises
    ------
    RecordFileError
        The file is missing, not a regular file, too large, or not strict JSON; named with its line.
    """
    return parse_json_document(read_regular_file(path, limit=limit, what=what), source=Path(path), max_depth=max_depth)
