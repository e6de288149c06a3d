"""Observations after the gate from OpenTelemetry GenAI spans and ``gatestats-trace/1`` production traces.

Each trace becomes one contract record for :func:`gatestats.rollout.add_batch` (docs/rollout.md,
"Observations from spans and traces"): ``record_id`` and ``case_id`` are the trace id (so a late
label or ``gatestats watch defects`` can name it), ``system`` the watched release, ``trial`` 0.

From OTLP/JSON (:func:`import_otel_observations`), one observation per trace id, read from the
trace's one root span (no ``parentSpanId``) and, for an attribute the root does not carry, from its
resource: ``gatestats.outcome`` (else the root's status: ``ERROR`` is ``failed``, otherwise
``passed``), ``gatestats.accepted``, ``gatestats.review_minutes``, ``gatestats.unauthorized_actions``
(else the number of spans flagged ``gatestats.unauthorized = true``, when any span carries the flag),
``gatestats.cost_usd``, ``gatestats.cohort``; tokens are ``gen_ai.usage.input_tokens`` /
``output_tokens`` summed over the model-call spans (the root's when none has them); the model is
``gen_ai.response.model`` or ``gen_ai.request.model``; ``started_at``/``ended_at`` the root's times.

From ``gatestats-trace/1`` files (:func:`import_trace_observations`), one observation per file:
``outcome`` (required, a contract outcome), ``model``, ``cost.usd`` / ``cost.input_tokens`` /
``cost.output_tokens``, ``started_at``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from gatestats.errors import ProblemList, RecordFileError, RecordProblem
from gatestats.importers._common import build_records, file_digest
from gatestats.importers.otlp import STATUS_ERROR, OtlpSpan, read_otlp_spans
from gatestats.io.jsonfile import read_regular_file
from gatestats.io.limits import name_problem
from gatestats.tables.inputs import describe
from gatestats.vocabulary import FAILED, INFRA_ERROR, PASSED
from gatestats_runner.contract import decode_json

__all__ = [
    "OBSERVATION_ATTRIBUTES",
    "TRACE_FORMAT",
    "TRACE_KEYS",
    "UNAUTHORIZED_FLAG",
    "import_otel_observations",
    "import_trace_observations",
    "observation_files",
]

TRACE_FORMAT = "gatestats-trace/1"
#: The keys of a ``gatestats-trace/1`` object (docs/golden.md, "Traces"); any other is refused.
TRACE_KEYS = frozenset(
    {
        "format",
        "trace_id",
        "request",
        "snapshot",
        "tool_calls",
        "output",
        "cost",
        "model",
        "harness_version",
        "outcome",
        "started_at",
    }
)
#: Largest ``gatestats-trace/1`` file read (bytes): a trace is one conversation, not a log archive.
MAX_TRACE_BYTES = 64 * 1024 * 1024
#: Span or resource attribute -> (record field, the attribute's type as named in messages).
OBSERVATION_ATTRIBUTES: Mapping[str, tuple[str, str]] = {
    "gatestats.outcome": ("outcome", "passed, failed or infra_error"),
    "gatestats.accepted": ("accepted", "a boolean (boolValue)"),
    "gatestats.review_minutes": ("review_minutes", "a finite number >= 0 (doubleValue or intValue)"),
    "gatestats.unauthorized_actions": ("unauthorized_actions", "an integer >= 0 (intValue)"),
    "gatestats.cost_usd": ("cost_usd", "a finite number >= 0 (doubleValue or intValue)"),
    "gatestats.cohort": ("cohort", "a non-empty one-line string (stringValue)"),
}
#: A span attribute (boolean): this span (a tool call) was an unauthorised action attempt.
UNAUTHORIZED_FLAG = "gatestats.unauthorized"
_MODEL_CALLS = frozenset({"chat", "text_completion", "generate_content", "embeddings"})
_OBSERVED_OUTCOMES = (PASSED, FAILED, INFRA_ERROR)
_COLUMNS: dict[str, pl.DataType] = {
    "record_id": pl.String(),
    "system": pl.String(),
    "case_id": pl.String(),
    "trial": pl.Int64(),
    "outcome": pl.String(),
    "failed_check": pl.String(),
    "accepted": pl.Boolean(),
    "review_minutes": pl.Float64(),
    "unauthorized_actions": pl.Int64(),
    "cost_usd": pl.Float64(),
    "cohort": pl.String(),
    "tokens_input": pl.Int64(),
    "tokens_output": pl.Int64(),
    "model_id": pl.String(),
    "started_at": pl.String(),
    "ended_at": pl.String(),
    "source_note": pl.String(),
}

Problem = Callable[[str, str], None]


def observation_files(path: str | Path, suffixes: Iterable[str]) -> list[Path]:
    """``path`` itself, or the files with one of ``suffixes`` directly in the directory ``path``, by name.

    Parameters
    ----------
    path
        A file or a directory.
    suffixes
        The suffixes read from a directory (``.json``, ``.jsonl``).

    Returns
    -------
    list of Path
        The files.

    Raises
    ------
    RecordFileError
        A directory without such a file.
    """
    given = Path(path)
    if not given.is_dir():
        return [given]
    wanted = tuple(suffixes)
    files = sorted(p for p in given.iterdir() if p.suffix in wanted and not p.name.startswith("."))
    if not files:
        raise RecordFileError.single(given, "<file>", f"a directory without {' or '.join(wanted)} files")
    return files


def _timestamp(nanos: int) -> str:
    """Unix nanoseconds as RFC 3339 UTC (``2025-12-04T10:00:00.1Z``: the fraction only when there is one)."""
    seconds, fraction = divmod(nanos, 1_000_000_000)
    text = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return text + (f".{fraction:09d}".rstrip("0") if fraction else "") + "Z"


def _typed(name: str, value: object) -> tuple[object, str | None]:
    """The value of observation attribute ``name`` checked against its type: (value, None) or (None, why)."""
    good = False
    if name == "gatestats.outcome":
        good = value in _OBSERVED_OUTCOMES
    elif name == "gatestats.accepted":
        good = isinstance(value, bool)
    elif name in ("gatestats.review_minutes", "gatestats.cost_usd"):
        good = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
        value = float(value) if good else value  # type: ignore[arg-type]
    elif name == "gatestats.unauthorized_actions":
        good = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    elif name == "gatestats.cohort":
        good = isinstance(value, str) and bool(value.strip()) and name_problem(value) is None
    if good:
        return value, None
    return None, f"expected {OBSERVATION_ATTRIBUTES[name][1]} (got {describe(value)})"


def _attribute(root: OtlpSpan, name: str, problem: Problem) -> object:
    """Observation attribute ``name`` from the root span, else from its resource (None when neither has it)."""
    if name in root.attributes:
        holder, where = root.attributes, f"{root.where}.attributes"
    elif name in root.resource:
        holder, where = root.resource, f"{root.where.split('.')[0]}.resource.attributes"
    else:
        return None
    value, why = _typed(name, holder[name])
    if why is not None:
        problem(f"{where}[{name}]", why)
    return value


def _tokens(spans: Sequence[OtlpSpan], root: OtlpSpan, problem: Problem) -> tuple[int | None, int | None]:
    """Input and output tokens: summed over the model-call spans, else the root's."""
    calls = [s for s in spans if s.attributes.get("gen_ai.operation.name") in _MODEL_CALLS]
    totals: list[int | None] = []
    for kind in ("input", "output"):
        name = f"gen_ai.usage.{kind}_tokens"
        counted = [s for s in calls if name in s.attributes] or ([root] if name in root.attributes else [])
        total: int | None = None
        for span in counted:
            value = span.attributes[name]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                problem(f"{span.where}.attributes[{name}]", f"expected an integer >= 0 (got {describe(value)})")
                continue
            total = (total or 0) + value
        totals.append(total)
    return totals[0], totals[1]


def _model(spans: Sequence[OtlpSpan], root: OtlpSpan, problem: Problem) -> str | None:
    calls = [s for s in spans if s.attributes.get("gen_ai.operation.name") in _MODEL_CALLS]
    for name in ("gen_ai.response.model", "gen_ai.request.model"):
        for span in (root, *calls):
            if name in span.attributes:
                value = span.attributes[name]
                if isinstance(value, str) and value.strip() and name_problem(value) is None:
                    return value
                problem(f"{span.where}.attributes[{name}]", f"expected a model name (got {describe(value)})")
                return None
    return None


def _unauthorized(spans: Sequence[OtlpSpan], stated: object, root: OtlpSpan, problem: Problem) -> object:
    """``gatestats.unauthorized_actions``, else the flagged spans counted (None when no span carries the flag)."""
    flagged = 0
    carried = False
    for span in spans:
        if UNAUTHORIZED_FLAG in span.attributes:
            carried = True
            flag = span.attributes[UNAUTHORIZED_FLAG]
            if not isinstance(flag, bool):
                problem(f"{span.where}.attributes[{UNAUTHORIZED_FLAG}]", f"expected a boolean (got {describe(flag)})")
            flagged += flag is True
    if isinstance(stated, int) and stated < flagged:
        where = f"{root.where}.attributes[gatestats.unauthorized_actions]"
        problem(where, f"{stated} is fewer than the {flagged} span(s) flagged {UNAUTHORIZED_FLAG} = true")
    return stated if stated is not None else (flagged if carried else None)


def _root(trace_id: str, spans: Sequence[OtlpSpan], problem: Problem) -> OtlpSpan | None:
    """The trace's one root span (no parent), after its spans' ids are checked."""
    seen: dict[str, OtlpSpan] = {}
    for span in spans:
        if span.span_id in seen:
            problem(
                f"{span.where}.spanId", f"span {span.span_id} of trace {trace_id} is also {seen[span.span_id].where}"
            )
        seen[span.span_id] = span
    roots = [s for s in spans if s.parent_span_id is None]
    if len(roots) != 1:
        found = (
            "no root span (export the whole trace)"
            if not roots
            else f"{len(roots)} root spans: " + ", ".join(r.where for r in roots)
        )
        problem(f"{spans[0].where}.traceId", f"trace {trace_id}: expected one span without parentSpanId, {found}")
        return None
    if not any(isinstance(s.attributes.get("gen_ai.operation.name"), str) for s in spans):
        problem(f"{roots[0].where}.attributes", f"trace {trace_id} has no GenAI span (gen_ai.operation.name)")
    root = roots[0]
    if root.start_unix_nano == 0 or root.end_unix_nano < root.start_unix_nano:
        problem(f"{root.where}.endTimeUnixNano", "the root span needs a start time and an end time not before it")
        return None
    return root


def _otel_row(
    trace_id: str, spans: Sequence[OtlpSpan], system: str, digests: Mapping[Path, str], problem: Problem
) -> dict[str, Any] | None:
    """The observation of one trace (None after reporting why it cannot be made)."""
    root = _root(trace_id, spans, problem)
    if root is None:
        return None
    found = {OBSERVATION_ATTRIBUTES[name][0]: _attribute(root, name, problem) for name in OBSERVATION_ATTRIBUTES}
    failed_check = None
    if found["outcome"] is None:
        found["outcome"] = FAILED if root.status_code == STATUS_ERROR else PASSED
        if root.status_code == STATUS_ERROR:
            error_type = root.attributes.get("error.type")
            failed_check = f"span status ERROR: {root.status_message or error_type or 'no message'}"[:200]
    found["unauthorized_actions"] = _unauthorized(spans, found["unauthorized_actions"], root, problem)
    tokens_input, tokens_output = _tokens(spans, root, problem)
    digest = digests[root.file]
    return found | {
        "record_id": trace_id,
        "system": system,
        "case_id": trace_id,
        "trial": 0,
        "failed_check": failed_check,
        "tokens_input": tokens_input,
        "tokens_output": tokens_output,
        "model_id": _model(spans, root, problem),
        "started_at": _timestamp(root.start_unix_nano),
        "ended_at": _timestamp(root.end_unix_nano),
        "source_note": f"{root.file.name}:{root.line} {root.where} (sha256 {digest})",
    }


def _records(rows: list[dict[str, Any]], files: Sequence[Path], run_set_id: str | None, source: str) -> pl.DataFrame:
    """Validated contract records whose ``record_id`` is the trace id (rows sorted by start, then id)."""
    frame = pl.DataFrame(rows, schema=_COLUMNS, orient="row").sort("started_at", "record_id", nulls_last=True)
    ids = frame.get_column("record_id")
    records = build_records(
        frame.drop("record_id"),
        source_file=files[0],
        run_set_id=run_set_id or f"observe-{file_digest(files[0])[:12]}",
        source=source,
    )
    return records.with_columns(ids.alias("record_id"))


def import_otel_observations(path: str | Path, *, system: str, run_set_id: str | None = None) -> pl.DataFrame:
    """Observations from OpenTelemetry GenAI spans in OTLP/JSON: one record per trace id.

    Parameters
    ----------
    path
        An OTLP/JSON file (one document, or one per line), or a directory of ``.json``/``.jsonl``
        files read together (the spans of one trace may be in several).
    system
        The watched release (every record's ``system``).
    run_set_id
        Default ``observe-<first 12 hex of the first file's sha256>``.

    Returns
    -------
    polars.DataFrame
        Validated contract records, ``record_id`` = ``case_id`` = the trace id (32 hex digits).

    Raises
    ------
    RecordFileError
        A file cannot be read or is not strict OTLP/JSON, or a trace has no single root span, no
        GenAI span, the same span id twice, or an observation attribute of the wrong type
        (file, line and field with the span's index named); nothing is returned.
    """
    files = observation_files(path, (".json", ".jsonl"))
    spans = [span for file in files for span in read_otlp_spans(file)]
    digests = {file: file_digest(file) for file in files}
    traces: dict[str, list[OtlpSpan]] = defaultdict(list)
    for span in spans:
        traces[span.trace_id].append(span)
    problems = ProblemList()
    rows: list[dict[str, Any]] = []
    for trace_id, members in traces.items():

        def problem(name: str, message: str, first: OtlpSpan = members[0]) -> None:
            problems.add(RecordProblem(file=str(first.file), field=name, message=message, line=first.line))

        if (row := _otel_row(trace_id, members, system, digests, problem)) is not None:
            rows.append(row)
    problems.raise_if_any()
    return _records(rows, files, run_set_id, "gatestats watch observe --from otel (OTLP/JSON GenAI spans)")


def _trace_cost(cost: Any, problem: Problem) -> tuple[float | None, int | None, int | None]:
    if cost is None:
        return None, None, None
    if not isinstance(cost, dict):
        problem("cost", f"expected an object (got {describe(cost)})")
        return None, None, None
    usd = cost.get("usd")
    if usd is not None and (isinstance(usd, bool) or not isinstance(usd, int | float) or usd < 0):
        problem("cost.usd", f"expected a number >= 0 (got {describe(usd)})")
        usd = None
    tokens: list[int | None] = []
    for name in ("input_tokens", "output_tokens"):
        value = cost.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            problem(f"cost.{name}", f"expected an integer >= 0 (got {describe(value)})")
            value = None
        tokens.append(value)
    return (None if usd is None else float(usd)), tokens[0], tokens[1]


def _trace_row(file: Path, raw: Mapping[str, Any], system: str, problem: Problem) -> dict[str, Any] | None:
    """The observation of one ``gatestats-trace/1`` object (None after reporting why it cannot be made)."""
    unknown = sorted(set(raw) - TRACE_KEYS)
    if unknown:
        problem(unknown[0], f"unknown field (expected one of {', '.join(sorted(TRACE_KEYS))})")
    if raw.get("format") != TRACE_FORMAT:
        problem("format", f"must be {TRACE_FORMAT!r} (got {describe(raw.get('format'))})")
    trace_id, outcome = raw.get("trace_id"), raw.get("outcome")
    if not isinstance(trace_id, str) or not trace_id.strip() or name_problem(trace_id) is not None:
        why = name_problem(trace_id) if isinstance(trace_id, str) and trace_id.strip() else None
        problem("trace_id", why or f"expected a non-empty string (got {describe(trace_id)})")
        trace_id = None
    if outcome not in _OBSERVED_OUTCOMES:
        expected = ", ".join(_OBSERVED_OUTCOMES)
        problem("outcome", f"an observation needs one of {expected} (got {describe(outcome)})")
    model, started = raw.get("model"), raw.get("started_at")
    for name, value in (("model", model), ("started_at", started)):
        if value is not None and not isinstance(value, str):
            problem(name, f"expected a string (got {describe(value)})")
    usd, tokens_input, tokens_output = _trace_cost(raw.get("cost"), problem)
    if trace_id is None or outcome not in _OBSERVED_OUTCOMES:
        return None
    return {
        "record_id": trace_id,
        "system": system,
        "case_id": trace_id,
        "trial": 0,
        "outcome": outcome,
        "cost_usd": usd,
        "tokens_input": tokens_input,
        "tokens_output": tokens_output,
        "model_id": model if isinstance(model, str) else None,
        "started_at": started if isinstance(started, str) else None,
        "source_note": f"{file.name} (sha256 {file_digest(file)})",
    }


def import_trace_observations(path: str | Path, *, system: str, run_set_id: str | None = None) -> pl.DataFrame:
    """Observations from ``gatestats-trace/1`` production traces: one record per file.

    Parameters
    ----------
    path
        A trace file, or a directory of ``.json`` trace files.
    system
        The watched release (every record's ``system``).
    run_set_id
        Default ``observe-<first 12 hex of the first file's sha256>``.

    Returns
    -------
    polars.DataFrame
        Validated contract records, ``record_id`` = ``case_id`` = the trace's ``trace_id``.

    Raises
    ------
    RecordFileError
        A file is not strict JSON or not a ``gatestats-trace/1`` object, its ``outcome`` is not
        ``passed``/``failed``/``infra_error``, a field has the wrong type, an id holds a control
        character, or two files carry the same ``trace_id``; nothing is returned.
    """
    files = observation_files(path, (".json",))
    problems = ProblemList()
    rows: list[dict[str, Any]] = []
    first_file: dict[str, Path] = {}
    for file in files:

        def problem(name: str, message: str, file: Path = file) -> None:
            problems.add(RecordProblem(file=str(file), field=name, message=message))

        raw, why = decode_json(read_regular_file(file, limit=MAX_TRACE_BYTES, what="trace"), max_bytes=MAX_TRACE_BYTES)
        if why is not None:
            problems.add(RecordProblem(file=str(file), field=why.field, message=why.message, line=why.line))
        elif not isinstance(raw, dict):
            problem("<file>", f"expected a {TRACE_FORMAT} object (got {describe(raw)})")
        elif (row := _trace_row(file, raw, system, problem)) is not None:
            if row["record_id"] in first_file:
                problem("trace_id", f"{row['record_id']!r:.80} is also the trace of {first_file[row['record_id']]}")
                continue
            first_file[row["record_id"]] = file
            rows.append(row)
    problems.raise_if_any()
    return _records(rows, files, run_set_id, f"gatestats watch observe --from trace ({TRACE_FORMAT})")
