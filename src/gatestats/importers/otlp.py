"""The one strict reader of OpenTelemetry spans exported as OTLP/JSON (docs/importers.md, "OpenTelemetry").

A file holds one ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``) or, as the collector's
``file`` exporter writes, one per line. Both JSON encodings of the message are read:

- the OTLP specification's (the collector's): ``traceId``/``spanId`` as hex, enums as integers;
- the protobuf JSON mapping (``google.protobuf.json_format.MessageToJson``): ids in base64, enums
  by name (``STATUS_CODE_ERROR``), 64-bit integers as strings.

Every document is decoded by the runner's strict decoder (duplicate keys, ``NaN``, non-UTF-8 and
integers beyond 64 bits refused). Every defect is a :class:`~gatestats.errors.RecordProblem` naming
the file, the line of the document (1 for a single document) and the field with the span's index
(``resourceSpans[0].scopeSpans[0].spans[2].traceId``).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatestats.errors import ProblemList, RecordFileError, RecordProblem
from gatestats.io.jsonfile import read_regular_file
from gatestats.tables.inputs import describe
from gatestats_runner.contract import decode_json

__all__ = ["MAX_OTLP_BYTES", "STATUS_ERROR", "OtlpSpan", "otlp_attributes", "read_otlp_spans"]

#: Largest OTLP/JSON file read (bytes).
MAX_OTLP_BYTES = 256 * 1024 * 1024
#: ``Status.code`` of a span that failed (``STATUS_CODE_ERROR``).
STATUS_ERROR = 2
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_HEX = re.compile(r"[0-9a-fA-F]+")
_INTEGER = re.compile(r"-?[0-9]+")
_INT64 = 2**63
_SCALARS = ("stringValue", "boolValue", "intValue", "doubleValue")
_OPAQUE = ("arrayValue", "kvlistValue", "bytesValue")

Problem = Callable[[str, str], None]


@dataclass(frozen=True, slots=True)
class Opaque:
    """An attribute value gatestats does not read (an array, a key-value list, bytes): kept by its kind."""

    kind: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OtlpSpan:
    """One span as read: ids as lowercase hex, times in Unix nanoseconds, attributes as Python values.

    ``where`` is the span's field path in its document (``resourceSpans[0].scopeSpans[0].spans[2]``)
    and ``line`` the document's line in ``file``. Attribute values are ``str``, ``bool``, ``int``,
    ``float`` or :class:`Opaque`; ``resource`` holds the attributes of the span's resource.
    """

    file: Path
    line: int
    where: str
    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_unix_nano: int
    end_unix_nano: int
    status_code: int
    status_message: str
    attributes: Mapping[str, object] = field(default_factory=dict)
    resource: Mapping[str, object] = field(default_factory=dict)


def _int64(raw: Any) -> int | None:
    if (
        isinstance(raw, bool)
        or not isinstance(raw, int | str)
        or (isinstance(raw, str) and not _INTEGER.fullmatch(raw))
    ):
        return None
    number = int(raw)
    return number if -_INT64 <= number < _INT64 else None


def _double(raw: Any) -> float | None:
    good = not isinstance(raw, bool) and isinstance(raw, int | float) and math.isfinite(raw)
    return float(raw) if good else None


#: The scalar ``AnyValue`` kinds: the value read, or None when the JSON value is not of that kind.
_READERS: dict[str, Callable[[Any], object]] = {
    "stringValue": lambda raw: raw if isinstance(raw, str) else None,
    "boolValue": lambda raw: raw if isinstance(raw, bool) else None,
    "intValue": _int64,
    "doubleValue": _double,
}


def _any_value(value: Any, problem: Problem, where: str) -> object:
    """One OTLP ``AnyValue`` as a Python value (None: unset, or after reporting why it cannot be read)."""
    if value is None or value == {}:  # an empty AnyValue: protobuf's JSON omits it or writes {}
        return None
    if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in _SCALARS + _OPAQUE:
        problem(where, f"expected one of {', '.join(_SCALARS + _OPAQUE)} (got {describe(value)})")
        return None
    kind, raw = next(iter(value.items()))
    read = Opaque(kind) if kind in _OPAQUE else _READERS[kind](raw)
    if read is None:
        why = " (NaN and infinities are not numbers an observation can carry)" if kind == "doubleValue" else ""
        problem(f"{where}.{kind}", f"not a valid {kind}{why} (got {describe(raw)})")
    return read


def otlp_attributes(items: Any, problem: Problem, where: str) -> dict[str, object]:
    """An OTLP attribute list (``[{"key": K, "value": AnyValue}, ...]``) as a dict, strictly.

    Parameters
    ----------
    items
        The decoded ``attributes`` array (absent: None).
    problem
        Called with (field, message) for each defect: not a list, an item without a string ``key``,
        a key twice, a value that is not one ``AnyValue`` of its declared type (``intValue``
        ``"12x"``, ``doubleValue`` ``"NaN"``).
    where
        The field path of the list, for messages (``...spans[2].attributes``).

    Returns
    -------
    dict
        Key -> value (``str``, ``bool``, ``int``, ``float`` or :class:`Opaque`); an attribute with an
        empty value (unset) and defective items are left out.
    """
    if items is None:
        return {}
    if not isinstance(items, list):
        problem(where, f"expected a list of {{key, value}} objects (got {describe(items)})")
        return {}
    out: dict[str, object] = {}
    for index, item in enumerate(items):
        at = f"{where}[{index}]"
        key = item.get("key") if isinstance(item, dict) else None
        if not isinstance(key, str) or not key or set(item) - {"key", "value"}:
            problem(at, f"expected an object with a non-empty string key and a value (got {describe(item)})")
            continue
        if key in out:
            problem(f"{at}.key", f"attribute {key!r:.80} is given twice")
            continue
        value = _any_value(item.get("value"), problem, f"{at}.value")
        if value is not None:
            out[key] = value
    return out


def _id(raw: Any, size: int) -> str | None:
    """A trace (16 bytes) or span (8 bytes) id as lowercase hex, from hex or base64; None if neither."""
    if not isinstance(raw, str):
        return None
    if len(raw) == 2 * size and _HEX.fullmatch(raw):
        hex_id = raw.lower()
    else:
        try:
            decoded = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            return None
        if len(decoded) != size:
            return None
        hex_id = decoded.hex()
    return None if set(hex_id) == {"0"} else hex_id


def _nanos(raw: Any) -> int | None:
    if isinstance(raw, str) and _INTEGER.fullmatch(raw):
        raw = int(raw)
    return raw if isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw < 2**64 else None


def _status(raw: Any, problem: Problem, where: str) -> tuple[int, str]:
    if raw is None:
        return 0, ""
    if not isinstance(raw, dict):
        problem(where, f"expected an object (got {describe(raw)})")
        return 0, ""
    code = raw.get("code", 0)
    code = _STATUS_NAMES.get(code, code) if isinstance(code, str) else code
    if isinstance(code, bool) or code not in (0, 1, 2):
        problem(f"{where}.code", f"expected 0/1/2 or STATUS_CODE_UNSET/OK/ERROR (got {describe(raw.get('code'))})")
        code = 0
    message = raw.get("message", "")
    if not isinstance(message, str):
        problem(f"{where}.message", f"expected a string (got {describe(message)})")
        message = ""
    return int(code), message


def _span(raw: Any, problem: Problem, where: str, **context: Any) -> OtlpSpan | None:
    """One span, or None after reporting why it cannot be read."""
    if not isinstance(raw, dict):
        problem(where, f"expected a span object (got {describe(raw)})")
        return None
    trace_id, span_id = _id(raw.get("traceId"), 16), _id(raw.get("spanId"), 8)
    parent = raw.get("parentSpanId")
    parent_id = None if parent in (None, "") else _id(parent, 8)
    start, end = _nanos(raw.get("startTimeUnixNano")), _nanos(raw.get("endTimeUnixNano"))
    for name, value, expected in (
        ("traceId", trace_id, "a trace id of 16 bytes, not all zero (32 hex digits or base64)"),
        ("spanId", span_id, "a span id of 8 bytes, not all zero (16 hex digits or base64)"),
        ("parentSpanId", "-" if parent in (None, "") else parent_id, "empty, or a span id of 8 bytes"),
        ("startTimeUnixNano", start, "Unix nanoseconds (an unsigned 64-bit integer)"),
        ("endTimeUnixNano", end, "Unix nanoseconds (an unsigned 64-bit integer)"),
    ):
        if value is None:
            problem(f"{where}.{name}", f"expected {expected} (got {describe(raw.get(name))})")
    name = raw.get("name", "")
    if not isinstance(name, str):
        problem(f"{where}.name", f"expected a string (got {describe(name)})")
    attributes = otlp_attributes(raw.get("attributes"), problem, f"{where}.attributes")
    code, message = _status(raw.get("status"), problem, f"{where}.status")
    if trace_id is None or span_id is None or start is None or end is None or not isinstance(name, str):
        return None
    if parent not in (None, "") and parent_id is None:
        return None
    return OtlpSpan(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent_id,
        name=name,
        start_unix_nano=start,
        end_unix_nano=end,
        status_code=code,
        status_message=message,
        attributes=attributes,
        where=where,
        **context,
    )


def _list(holder: dict[str, Any], key: str, problem: Problem, where: str) -> list[Any]:
    value = holder.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        problem(f"{where}.{key}" if where else key, f"expected a list (got {describe(value)})")
        return []
    return value


def _document_spans(file: Path, line: int, document: Any, problems: ProblemList) -> list[OtlpSpan]:
    """The spans of one ``ExportTraceServiceRequest``."""

    def problem(name: str, message: str) -> None:
        problems.add(RecordProblem(file=str(file), field=name, message=message, line=line))

    if not isinstance(document, dict) or "resourceSpans" not in document:
        problem("resourceSpans", f"expected an OTLP/JSON object with resourceSpans (got {describe(document)})")
        return []
    spans: list[OtlpSpan] = []
    for r, resource in enumerate(_list(document, "resourceSpans", problem, "")):
        at = f"resourceSpans[{r}]"
        if not isinstance(resource, dict):
            problem(at, f"expected an object (got {describe(resource)})")
            continue
        owner = resource.get("resource")
        if owner is not None and not isinstance(owner, dict):
            problem(f"{at}.resource", f"expected an object (got {describe(owner)})")
        items = owner.get("attributes") if isinstance(owner, dict) else None
        attributes = otlp_attributes(items, problem, f"{at}.resource.attributes")
        for s, scope in enumerate(_list(resource, "scopeSpans", problem, at)):
            where = f"{at}.scopeSpans[{s}]"
            if not isinstance(scope, dict):
                problem(where, f"expected an object (got {describe(scope)})")
                continue
            for i, raw in enumerate(_list(scope, "spans", problem, where)):
                span = _span(raw, problem, f"{where}.spans[{i}]", file=file, line=line, resource=attributes)
                spans.append(span) if span is not None else None
    return spans


def read_otlp_spans(path: str | Path) -> list[OtlpSpan]:
    """Every span of an OTLP/JSON file: one document, or one document per line (the collector's file exporter).

    Parameters
    ----------
    path
        The file.

    Returns
    -------
    list of OtlpSpan
        In file order.

    Raises
    ------
    RecordFileError
        The file cannot be read, a line is not strict JSON (duplicate key, ``NaN``, ...), or a
        resource, scope or span is malformed (file, line and field with the span's index named);
        a file without any span.
    """
    file = Path(path)
    data = read_regular_file(file, limit=MAX_OTLP_BYTES, what="OTLP/JSON spans")
    whole, why = decode_json(data, max_bytes=MAX_OTLP_BYTES)
    lines = data.split(b"\n")
    first = next((text for text in lines if text.strip()), b"")
    if why is not None and (not first.strip().startswith(b"{") or decode_json(first, max_bytes=len(first))[1]):
        where = why.field if why.field else "<line>"
        raise RecordFileError.single(file, where, f"not valid JSON ({why.message})", line=why.line)
    documents: list[tuple[int, Any]] = [(1, whole)] if why is None else []
    for number, text in enumerate(lines if why is not None else [], start=1):  # the collector's JSON lines
        if text.strip():
            value, bad = decode_json(text, max_bytes=MAX_OTLP_BYTES)
            if bad is not None:
                raise RecordFileError.single(file, bad.field, f"not valid JSON ({bad.message})", line=number)
            documents.append((number, value))
    problems = ProblemList()
    spans = [span for line, document in documents for span in _document_spans(file, line, document, problems)]
    problems.raise_if_any()
    if not spans:
        raise RecordFileError.single(file, "resourceSpans", "no span found (an empty export has no observation)")
    return spans
