"""Strict JSON for signed files: no duplicate keys, no NaN or infinities, bounded size and depth.

Python's :mod:`json` keeps the last of two equal keys, reads ``NaN`` and ``Infinity``, turns
``1e999`` into ``inf`` and recurses without a limit of its own; a file that is signed or whose
digest is checked must mean one thing only, so each of these is an error here.
"""

from __future__ import annotations

import json
import math
import os
import stat
from typing import Any

from gatestats.attest.errors import AttestationError

__all__ = ["MAX_DEPTH", "MAX_JSON_BYTES", "loads_strict", "read_regular_file", "type_name"]

#: Largest document read (bytes); a verdict of a 100,000-case gate is far below this.
MAX_JSON_BYTES = 256 * 1024 * 1024
#: Deepest nesting of arrays and objects accepted (a verdict nests 5 levels).
MAX_DEPTH = 64


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _BadNumberError(ValueError):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKeyError(key)
        out[key] = value
    return out


def _constant(text: str) -> Any:
    raise _BadNumberError(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadNumberError(text)
    return value


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


def _depth(value: Any) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def loads_strict(data: bytes, *, source: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Parse ``data`` as one JSON document, refusing anything that could be read two ways.

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
        Too large, not UTF-8, a byte-order mark, not JSON (line and column named), a duplicate key,
        ``NaN``/``Infinity``/an overflowing number, or nesting deeper than :data:`MAX_DEPTH`.

    Examples
    --------
    >>> loads_strict(b'{"a": [1, 2.5, null]}', source="x.json")
    {'a': [1, 2.5, None]}
    >>> loads_strict(b'{"a": 1, "a": 2}', source="x.json")
    Traceback (most recent call last):
    ...
    gatestats.attest.errors.AttestationError: x.json: field 'a': duplicate key (a key may appear once per object)
    """
    if len(data) > max_bytes:
        msg = f"{source}: larger than {max_bytes} bytes (got {len(data)})"
        raise AttestationError(msg)
    if data.startswith(b"\xef\xbb\xbf"):
        msg = f"{source}: starts with a UTF-8 byte-order mark (expected plain UTF-8 JSON)"
        raise AttestationError(msg)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"{source}: byte {exc.start}: not valid UTF-8 (got {data[exc.start : exc.start + 4]!r})"
        raise AttestationError(msg) from None
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float)
    except _DuplicateKeyError as exc:
        msg = f"{source}: field {exc.key!r}: duplicate key (a key may appear once per object)"
        raise AttestationError(msg) from None
    except _BadNumberError as exc:
        msg = f"{source}: not a finite JSON number (got {exc.text[:40]!r}): NaN and infinities are refused"
        raise AttestationError(msg) from None
    except json.JSONDecodeError as exc:
        msg = f"{source}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}"
        raise AttestationError(msg) from None
    except RecursionError:
        msg = f"{source}: nested deeper than {MAX_DEPTH} levels"
        raise AttestationError(msg) from None
    except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
        msg = f"{source}: unreadable number: {exc}"
        raise AttestationError(msg) from None
    if _depth(value) > MAX_DEPTH:
        msg = f"{source}: nested deeper than {MAX_DEPTH} levels"
        raise AttestationError(msg)
    return value


def read_regular_file(path: str | os.PathLike[str], *, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``); never blocks on a FIFO or reads a device.

    Raises
    ------
    AttestationError
        Missing, not a regular file, larger than ``limit``, or unreadable (``what`` names the file's role).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        msg = f"{path}: no such {what} file"
        raise AttestationError(msg) from None
    except OSError as exc:
        msg = f"{path}: cannot read the {what} file: {exc.strerror or exc}"
        raise AttestationError(msg) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            msg = f"{path}: {kind} (expected a {what} file)"
            raise AttestationError(msg)
        chunks: list[bytes] = []
        total = 0
        while total <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - total))):
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        msg = f"{path}: cannot read the {what} file: {exc.strerror or exc}"
        raise AttestationError(msg) from None
    finally:
        os.close(fd)
    if total > limit:
        msg = f"{path}: larger than {limit} bytes: not a {what} file"
        raise AttestationError(msg)
    return b"".join(chunks)
