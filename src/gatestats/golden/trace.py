"""Traces a case can be promoted from: production traces, OpenTelemetry GenAI spans, run records.

Three formats become one :class:`Trace` (docs/golden.md, "Traces"):

1. ``gatestats-trace/1``: an imported production trace (one JSON object);
2. OpenTelemetry GenAI spans exported as OTLP/JSON (``resourceSpans``), one trace id;
3. a gatestats run record with its evidence (a run-set directory and a record id).

Every defect raises :class:`TraceError` naming the file and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatestats._typing import JSONObject
from gatestats.errors import GatestatsError, RecordFileError
from gatestats.importers.observations import MAX_TRACE_BYTES, TRACE_FORMAT, TRACE_KEYS
from gatestats.importers.otlp import otlp_attributes
from gatestats.records.runset import MANIFEST
from gatestats_runner.cases import CaseError, load_case
from gatestats_runner.contract import MAX_LINE_BYTES, decode_json
from gatestats_runner.digests import canonical_json, digest_bytes

__all__ = ["TRACE_FORMAT", "ToolCall", "Trace", "TraceError", "read_run_record_trace", "read_trace"]

_TRACE_KEYS = TRACE_KEYS
_REQUIRED = ("trace_id", "request", "tool_calls", "output")


class TraceError(GatestatsError, ValueError):
    """A trace file does not follow its format (the message names the file and the field)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call of a trace: the tool's name and its arguments (a JSON object)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> JSONObject:
        """The call as JSON.

        Returns
        -------
        dict
            ``name`` and ``arguments``.
        """
        return {"name": self.name, "arguments": dict(self.arguments)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Trace:
    """A run to promote, whatever its source format.

    ``snapshot`` maps a relative file path to the file's bytes (the starting state);
    ``source_digest`` is the digest of the source bytes (or the record's checksum).
    """

    source_format: str
    source: str
    source_id: str
    source_digest: str
    request: str
    snapshot: Mapping[str, bytes]
    tool_calls: tuple[ToolCall, ...]
    output: str
    model: str | None = None
    harness_version: str | None = None
    outcome: str | None = None
    cost: Mapping[str, Any] | None = None

    def to_dict(self) -> JSONObject:
        """The normalised trace as JSON (snapshot files as text where they are UTF-8).

        Returns
        -------
        dict
            Every field of the trace.
        """
        return {
            "format": TRACE_FORMAT,
            "source_format": self.source_format,
            "trace_id": self.source_id,
            "source_digest": self.source_digest,
            "request": self.request,
            "snapshot": {k: v.decode("utf-8", errors="replace") for k, v in sorted(self.snapshot.items())},
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "output": self.output,
            "model": self.model,
            "harness_version": self.harness_version,
            "outcome": self.outcome,
            "cost": None if self.cost is None else dict(self.cost),
        }


def _fail(path: Path | str, name: str, message: str) -> TraceError:
    return TraceError(f"{path}: field '{name}': {message}")


def _string(path: Path, data: Mapping[str, Any], name: str, *, required: bool) -> str | None:
    if name not in data or data[name] is None:
        if required:
            raise _fail(path, name, "required field is missing")
        return None
    value = data[name]
    if not isinstance(value, str) or (required and not value.strip()):
        raise _fail(path, name, f"expected a non-empty string (got {value!r:.80})")
    return value


def _tool_calls(path: Path, raw: Any, name: str = "tool_calls") -> tuple[ToolCall, ...]:
    if not isinstance(raw, list):
        raise _fail(path, name, f"expected a list of {{name, arguments}} objects (got {raw!r:.80})")
    calls = []
    for i, item in enumerate(raw):
        where = f"{name}[{i}]"
        if not isinstance(item, dict) or set(item) - {"name", "arguments", "result", "id"}:
            raise _fail(path, where, f"expected an object with name and arguments (got {item!r:.80})")
        tool = item.get("name")
        if not isinstance(tool, str) or not tool:
            raise _fail(path, f"{where}.name", f"expected a non-empty string (got {tool!r:.80})")
        arguments = item.get("arguments", {})
        if isinstance(arguments, str):
            decoded, bad = decode_json(arguments.encode("utf-8", errors="replace"), max_bytes=MAX_LINE_BYTES)
            arguments = {"_": arguments} if bad is not None else decoded
        if not isinstance(arguments, dict):
            raise _fail(path, f"{where}.arguments", f"expected a JSON object (got {arguments!r:.80})")
        calls.append(ToolCall(name=tool, arguments=arguments))
    return tuple(calls)


def _snapshot(path: Path, raw: Any) -> dict[str, bytes]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _fail(path, "snapshot", f"expected an object of file path -> content (got {raw!r:.80})")
    files: dict[str, bytes] = {}
    for name, value in raw.items():
        parts = name.split("/")
        if not name or name.startswith("/") or ".." in parts or "\\" in name or any(ord(c) < 32 for c in name):
            raise _fail(path, f"snapshot.{name!r}", "expected a relative file path without '..'")
        text = value if isinstance(value, str) else json.dumps(value, indent=2, sort_keys=True) + "\n"
        files[name] = text.encode("utf-8")
    return files


def _load_json(path: Path) -> tuple[Any, bytes]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        msg = f"{path}: cannot read the trace ({exc.strerror or exc})"
        raise TraceError(msg) from None
    value, why = decode_json(data, max_bytes=MAX_TRACE_BYTES)
    if why is not None:
        where = f"{path}:{why.line}" if why.line is not None else str(path)
        msg = f"{where}: field {why.field!r}: not valid JSON ({why.message})"
        raise TraceError(msg)
    return value, data


def _gatestats_trace(path: Path, raw: Mapping[str, object], data: bytes) -> Trace:
    unknown = sorted(set(raw) - _TRACE_KEYS)
    if unknown:
        raise _fail(path, unknown[0], f"unknown field (expected one of {', '.join(sorted(_TRACE_KEYS))})")
    if raw.get("format") != TRACE_FORMAT:
        raise _fail(path, "format", f"must be {TRACE_FORMAT!r} (got {raw.get('format')!r:.80})")
    for name in _REQUIRED:
        if name not in raw:
            raise _fail(path, name, "required field is missing")
    cost = raw.get("cost")
    if cost is not None and not isinstance(cost, dict):
        raise _fail(path, "cost", f"expected an object (got {cost!r:.80})")
    output = raw["output"]
    if not isinstance(output, str):
        raise _fail(path, "output", f"expected a string (got {output!r:.80})")
    return Trace(
        source_format=TRACE_FORMAT,
        source=str(path),
        source_id=_string(path, raw, "trace_id", required=True) or "",
        source_digest=digest_bytes(data),
        request=_string(path, raw, "request", required=True) or "",
        snapshot=_snapshot(path, raw.get("snapshot")),
        tool_calls=_tool_calls(path, raw["tool_calls"]),
        output=output,
        model=_string(path, raw, "model", required=False),
        harness_version=_string(path, raw, "harness_version", required=False),
        outcome=_string(path, raw, "outcome", required=False),
        cost=cost,
    )


def _attributes(path: Path, span: Mapping[str, object]) -> dict[str, object]:
    """The span's attributes, read by the one strict OTLP/JSON attribute reader (a defect is a TraceError)."""
    problems: list[str] = []
    where = f"span {span.get('spanId')!r:.40}.attributes"
    out = otlp_attributes(span.get("attributes"), lambda name, why: problems.append(f"{name}': {why}"), where)
    if problems:
        raise TraceError(f"{path}: field '{problems[0]}")
    return out


def _message_text(raw: Any, role: str) -> str | None:
    """The text of the last message with ``role`` in a GenAI messages attribute (JSON string)."""
    messages = raw
    if isinstance(raw, str):
        messages, bad = decode_json(raw.encode("utf-8", errors="replace"), max_bytes=MAX_LINE_BYTES)
        if bad is not None:
            return None
    if not isinstance(messages, list):
        return None
    texts = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != role:
            continue
        parts = message.get("parts") or []
        text = "".join(p.get("content", "") for p in parts if isinstance(p, dict) and p.get("type") == "text")
        if isinstance(message.get("content"), str):
            text = text or message["content"]
        texts.append(text)
    return texts[-1] if texts else None


def _otel_spans(path: Path, raw: Mapping[str, object]) -> tuple[list[dict[str, Any]], str]:
    """The spans of one trace in start order, and that trace's id."""
    spans: list[dict[str, Any]] = []
    resources = raw.get("resourceSpans")
    for resource in resources if isinstance(resources, list) else []:
        for scope in (resource or {}).get("scopeSpans") or []:
            spans.extend(s for s in (scope or {}).get("spans") or [] if isinstance(s, dict))
    if not spans:
        raise _fail(path, "resourceSpans", "no span found")
    trace_ids = {s.get("traceId") for s in spans}
    if len(trace_ids) != 1 or not isinstance(next(iter(trace_ids)), str):
        raise _fail(path, "resourceSpans[].scopeSpans[].spans[].traceId", f"expected one trace (got {len(trace_ids)})")
    spans.sort(key=lambda s: int(s.get("startTimeUnixNano") or 0))
    return spans, str(next(iter(trace_ids)))


def _otel_trace(path: Path, raw: Mapping[str, object], data: bytes) -> Trace:
    """A :class:`Trace` from OTLP/JSON GenAI spans."""
    spans, trace_id = _otel_spans(path, raw)
    calls: list[ToolCall] = []
    chats: list[dict[str, object]] = []
    model = None
    tokens = {"input_tokens": 0, "output_tokens": 0}
    for span in spans:
        attrs = _attributes(path, span)
        operation = attrs.get("gen_ai.operation.name")
        if operation == "execute_tool":
            name = attrs.get("gen_ai.tool.name")
            if not isinstance(name, str) or not name:
                raise _fail(path, f"span {span.get('spanId')!r}.gen_ai.tool.name", "required for execute_tool spans")
            args = attrs.get("gen_ai.tool.call.arguments") or "{}"
            calls.extend(_tool_calls(path, [{"name": name, "arguments": args}], f"span {span.get('spanId')!r}"))
        elif operation in {"chat", "invoke_agent", "text_completion", "generate_content"}:
            chats.append(attrs)
            model = model or attrs.get("gen_ai.request.model")
            for key in tokens:
                value = attrs.get(f"gen_ai.usage.{key}")
                tokens[key] += int(value) if isinstance(value, int) else 0
    request = next((t for a in chats if (t := _message_text(a.get("gen_ai.input.messages"), "user"))), None)
    output = next(
        (t for a in reversed(chats) if (t := _message_text(a.get("gen_ai.output.messages"), "assistant")) is not None),
        None,
    )
    if not request:
        raise _fail(path, "gen_ai.input.messages", "no user message in any chat or invoke_agent span")
    if output is None:
        raise _fail(path, "gen_ai.output.messages", "no assistant message in any chat or invoke_agent span")
    return Trace(
        source_format="otlp-json/gen_ai",
        source=str(path),
        source_id=trace_id,
        source_digest=digest_bytes(data),
        request=request,
        snapshot={},
        tool_calls=tuple(calls),
        output=output,
        model=model if isinstance(model, str) else None,
        cost=tokens,
    )


def read_trace(path: str | Path) -> Trace:
    """Read a ``gatestats-trace/1`` file or OTLP/JSON GenAI spans into a :class:`Trace`.

    Parameters
    ----------
    path
        The trace file.

    Returns
    -------
    Trace
        The request, snapshot, tool calls, reply and source of the trace.

    Raises
    ------
    TraceError
        The file is unreadable, not JSON, of neither format, or a field is missing or wrong.
    """
    path = Path(path)
    raw, data = _load_json(path)
    if not isinstance(raw, dict):
        msg = f"{path}: expected a JSON object (got {type(raw).__name__})"
        raise TraceError(msg)
    if "resourceSpans" in raw:
        return _otel_trace(path, raw, data)
    if "format" not in raw:
        raise _fail(path, "format", f"required field is missing (expected {TRACE_FORMAT!r} or OTLP 'resourceSpans')")
    return _gatestats_trace(path, raw, data)


def read_run_record_trace(run_set: str | Path, record_id: str) -> Trace:
    """The trace of one run record: its case's request and snapshot, the trial's stdout as the reply.

    The run set is read through the gate's door (:func:`gatestats.records.read_run_set`: line
    checksums, the seal, membership, evidence digests and containment) and the stdout through
    :func:`gatestats.records.read_record_evidence`: a record edited after the run, or one whose
    evidence path leaves the run set, is refused before anything is read from it.

    Parameters
    ----------
    run_set
        The run set directory.
    record_id
        The record's id.

    Returns
    -------
    Trace
        As :func:`read_trace` returns.

    Raises
    ------
    TraceError
        The run set fails a check of the gate's reader (file, line and field named), no such
        record, the case directory is gone or its request no longer matches the manifest.
    """
    from gatestats.records import read_record_evidence, read_run_set  # noqa: PLC0415 - polars, on first use

    run_set = Path(run_set)
    try:
        records, info = read_run_set(run_set)
    except RecordFileError as exc:
        raise TraceError(str(exc)) from None
    manifest, records_path, manifest_path = info.manifest or {}, Path(info.path), run_set / MANIFEST
    rows = [i for i, rid in enumerate(records.get_column("record_id").to_list()) if rid == record_id]
    if not rows:
        raise _fail(records_path, "record_id", f"no record {record_id!r}")
    record: dict[str, Any] = records.row(rows[-1], named=True)
    try:
        stdout = read_record_evidence(run_set, record, "stdout_path", row=rows[-1])
    except RecordFileError as exc:
        raise TraceError(str(exc)) from None
    case_id = str(record.get("case_id"))
    entry = next((c for c in manifest.get("cases") or [] if c.get("case_id") == case_id), None)
    cases_dir = manifest.get("cases_dir")
    if entry is None or not isinstance(cases_dir, str):
        raise _fail(manifest_path, "cases", f"case {case_id!r} of record {record_id!r} is not in the manifest")
    try:
        case = load_case(Path(cases_dir) / case_id)
    except CaseError as exc:
        raise TraceError(str(exc)) from None
    request = case.request or ""
    if digest_bytes(request.encode("utf-8")) != entry.get("request_digest"):
        raise _fail(manifest_path, f"cases[{case_id}].request_digest", "the case's request changed since the run")
    snapshot = {
        p.relative_to(case.snapshot).as_posix(): p.read_bytes() for p in sorted(case.snapshot.rglob("*")) if p.is_file()
    }
    output = "" if stdout is None else stdout.decode("utf-8", errors="replace")
    checksum = record.get("checksum")
    return Trace(
        source_format="gatestats-run-record/1",
        source=str(records_path),
        source_id=record_id,
        source_digest=checksum if isinstance(checksum, str) else digest_bytes(canonical_json(record).encode()),
        request=request,
        snapshot=snapshot,
        tool_calls=(),
        output=output,
        outcome=str(record.get("outcome")),
        model=record.get("model_id"),
    )
