"""Strict JSON for signed files: no duplicate keys, no NaN or infinities, bounded size and depth.

Python's :mod:`json` keeps the last of two equal keys, reads ``NaN`` and ``Infinity``, turns
``1e999`` into ``inf`` and recurses without a limit of its own; a file that is signed or whose
digest is checked must mean one thing only, so each of these is an error here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from gatestats.attest.errors import AttestationError
from gatestats.errors import RecordFileError
from gatestats.io.jsonfile import parse_json_document
from gatestats.io.jsonfile import read_regular_file as _read_regular_file

__all__ = ["MAX_DEPTH", "MAX_JSON_BYTES", "loads_strict", "read_regular_file", "strict_object", "type_name"]

#: Largest document read (bytes); a verdict of a 100,000-case gate is far below this.
MAX_JSON_BYTES = 256 * 1024 * 1024
#: Deepest nesting of arrays and objects accepted (a verdict nests 5 levels).
MAX_DEPTH = 64


def type_name(value: Any) -> str:
    """The JSON name of ``value``'s type, for "(got ...)" messages.

    Parameters
    ----------
    value
        A decoded JSON value (any other object is named by its Python type).

    Returns
    -------
    str
        ``null``, ``boolean``, ``integer``, ``number``, ``string``, ``array`` or ``object``; the
        Python type's name for anything else.

    Examples
    --------
    >>> type_name(None), type_name(True), type_name(1), type_name("x"), type_name([])
    ('null', 'boolean', 'integer', 'string', 'array')
    """
    if value is None:
        return "null"
    for kind, name in _JSON_TYPES:  # bool before int: a JSON boolean is not an integer
        if isinstance(value, kind):
            return name
    return type(value).__name__


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def loads_strict(data: bytes, *, source: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Parse ``data`` as one JSON document, refusing anything that could be read two ways.

    The rules are the project's one strict decoder (:func:`gatestats.io.jsonfile.parse_json_document`).

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
    >>> loads_strict(b'[true, {"b": "c"}]', source="x.json")
    [True, {'b': 'c'}]
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

    Parameters
    ----------
    path, limit, what
        As :func:`gatestats.io.jsonfile.read_regular_file`.

    Returns
    -------
    bytes
        Every byte of the file (at most ``limit``).

    Raises
    ------
    AttestationError
        Where :func:`gatestats.io.jsonfile.read_regular_file` raises a ``RecordFileError``, with its message.
    """
    try:
        return _read_regular_file(path, limit=limit, what=what)
    except RecordFileError as exc:
        raise AttestationError(str(exc).replace(": field '<file>': ", ": ", 1)) from None


def strict_object(value: Any, keys: Sequence[str], *, source: str, expected: str, noun: str) -> dict[str, Any]:
    """``value`` when it is a JSON object with no key outside ``keys``.

    Parameters
    ----------
    value
        A decoded JSON value.
    keys
        The keys the object may have.
    source
        How errors name the document.
    expected
        What the document should be, e.g. ``a DSSE envelope object``.
    noun
        What its fields are called, e.g. ``envelope`` (an ``unknown envelope field``).

    Returns
    -------
    dict
        The object.

    Raises
    ------
    AttestationError
        Not an object, or a key outside ``keys`` (the first in sorted order named).
    """
    if not isinstance(value, dict):
        msg = f"{source}: expected {expected} (got {type_name(value)})"
        raise AttestationError(msg)
    unknown = sorted(set(value) - set(keys))
    if unknown:
        msg = f"{source}: field {unknown[0]!r}: unknown {noun} field (expected {', '.join(keys)})"
        raise AttestationError(msg)
    return value
