"""Strict JSON for signed files: no duplicate keys, no NaN or infinities, bounded size and depth.

Python's :mod:`json` keeps the last of two equal keys, reads ``NaN`` and ``Infinity``, turns
``1e999`` into ``inf`` and recurses without a limit of its own; a file that is signed or whose
digest is checked must mean one thing only, so each of these is an error here.
"""

from __future__ import annotations

import os
from typing import Any

from gatestats.attest.errors import AttestationError
from gatestats.errors import RecordFileError
from gatestats.jsonfile import parse_json_document
from gatestats.jsonfile import read_regular_file as _read_regular_file

__all__ = ["MAX_DEPTH", "MAX_JSON_BYTES", "loads_strict", "read_regular_file", "type_name"]

#: Largest document read (bytes); a verdict of a 100,000-case gate is far below this.
MAX_JSON_BYTES = 256 * 1024 * 1024
#: Deepest nesting of arrays and objects accepted (a verdict nests 5 levels).
MAX_DEPTH = 64


def type_name(value: Any) -> str:
    """The JSON name of ``value``'s type, for "(got ...)" messages.

    >>> type_name(None), type_name(True), type_name(1), type_name("x"), type_name([])
    ('null', 'boolean', 'integer', 'string', 'array')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def loads_strict(data: bytes, *, source: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Parse ``data`` as one JSON document, refusing anything that could be read two ways.

    The rules are the project's one strict decoder (:func:`gatestats.jsonfile.parse_json_document`).

    Parameters
    ----------
    data
        The document's bytes (UTF-8, no byte-order mark).
    source
        How to name the document in errors (a path, or ``path:line``).
    max_bytes
        Largest document accepted.

    Returns
    -------
    Any
        The parsed value.

    Raises
    ------
    AttestationError
        Too large, not UTF-8, a byte-order mark, not JSON (line named), a duplicate key,
        ``NaN``/``Infinity``/an overflowing number, or nesting deeper than :data:`MAX_DEPTH`.

    Examples
    --------
    >>> loads_strict(b'{"a": [1, 2.5, null]}', source="x.json")
    {'a': [1, 2.5, None]}
    >>> loads_strict(b'{"a": 1, "a": 2}', source="x.json")
    Traceback (most recent call last):
    ...
    gatestats.attest.errors.AttestationError: x.json: field 'a': duplicate key 'a' (readers disagree ...)
    """
    if len(data) > max_bytes:
        msg = f"{source}: larger than {max_bytes} bytes (got {len(data)})"
        raise AttestationError(msg)
    try:
        return parse_json_document(data, source=source, max_depth=MAX_DEPTH)
    except RecordFileError as exc:
        raise AttestationError(str(exc)) from None


def read_regular_file(path: str | os.PathLike[str], *, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``); never blocks on a FIFO or reads a device.

    Raises
    ------
    AttestationError
        Missing, not a regular file, larger than ``limit``, or unreadable (``what`` names the file's role).
    """
    try:
        return _read_regular_file(path, limit=limit, what=what)
    except RecordFileError as exc:
        raise AttestationError(str(exc).replace(": field '<file>': ", ": ", 1)) from None
