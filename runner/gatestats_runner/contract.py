"""The run-record contract v1, readable with the standard library alone.

The single source of truth is ``run_record.v1.schema.json`` beside this module (JSON Schema,
draft 2020-12). This module loads it and checks one record against it without third-party
packages, so that the sandbox runner can validate every record before it appends it, and the
statistics core can explain exactly which line and field of a record file is wrong.

Only the JSON Schema keywords the contract file uses are implemented: ``type``, ``enum``,
``const``, ``required``, ``additionalProperties: false``, ``properties``, ``items``,
``minLength``, ``minimum`` and ``format: date-time``. A test checks that the contract file
uses no other keyword and that this checker agrees with the reference ``jsonschema`` package,
except where this checker is deliberately stricter than JSON Schema: an ``integer`` must be
written as an integer (``1.0`` is refused: no reader coerces it), integers must fit in 64 bits,
and numbers must be finite (NaN and infinities, which Parquet and CSV can hold, are refused).

:func:`decode_line` is the one strict way to turn a line of a record file into a record: UTF-8
without a byte-order mark, one JSON object, no duplicate keys (readers disagree on which one
wins), no ``NaN``/``Infinity`` literals, no number that overflows, no nesting deeper than
:data:`MAX_DEPTH`, no line longer than :data:`MAX_LINE_BYTES`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, TypedDict, cast

__all__ = [
    "BOUNDS",
    "CONTRACT_VERSION",
    "FIELDS",
    "GRADER_VERDICTS",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "OBSERVATION_FIELDS",
    "OUTCOMES",
    "PASSED",
    "RECORD_KEY",
    "REQUIRED_FIELDS",
    "RESOURCE_KILLED",
    "RFC3339_PATTERN",
    "SCHEMA_PATH",
    "STAGES",
    "ContractViolation",
    "RunRecord",
    "SchemaNode",
    "decode_json",
    "decode_line",
    "load_schema",
    "validate_field",
    "validate_record",
]

SCHEMA_PATH = Path(__file__).with_name("run_record.v1.schema.json")
CONTRACT_VERSION = 1
#: Columns that identify one trial attempt; unique within a record set.
RECORD_KEY = ("system", "case_id", "case_version", "trial", "attempt")
#: The contract's integers are 64-bit signed (what Parquet, polars and the JSON readers agree on).
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: The longest line a record file may hold (a record is a few kilobytes; evidence lives in files).
MAX_LINE_BYTES = 1 << 20
#: The deepest nesting a decoded line may have (the contract itself nests three levels).
MAX_DEPTH = 32


class SchemaNode(TypedDict, total=False):
    """A node of ``run_record.v1.schema.json`` as this checker reads it: only the keywords it implements.

    The file is the package's own, and a test checks that it uses no other keyword (``$schema`` and
    ``$id`` are annotations, never read); :func:`load_schema` gives it this type without a copy.
    """

    type: str | list[str]
    enum: list[str | None]
    const: int | str
    required: list[str]
    additionalProperties: bool
    properties: dict[str, SchemaNode]
    items: SchemaNode
    minLength: int
    minimum: float
    format: str
    title: str
    description: str


class RunRecord(TypedDict, total=False):
    """A run record as the runner builds, writes and reads it back (after :func:`validate_record`).

    One key per property of ``run_record.v1.schema.json``, in its order (a test keeps the two equal);
    the enums (``outcome``, ``bound``, ``layer``, ``stage``, a grader's ``kind`` and ``verdict``) are checked by
    the contract, not by this type. Every key is optional here: a record in the making lacks its
    ``checksum``, and the contract, not mypy, decides which keys a complete record needs.
    """

    schema_version: int
    record_id: str
    run_set_id: str
    system: str
    case_id: str
    case_version: str | None
    case_group: str | None
    trial: int
    attempt: int
    candidate_digest: str | None
    system_digest: str | None
    model_id: str | None
    prompt_version: str | None
    tools_digest: str | None
    orchestration_version: str | None
    sandbox_image: str | None
    verifier_version: str | None
    retry_policy: str | None
    task_set_version: str | None
    outcome: str
    bound: str | None
    exit_code: int | None
    failed_check: str | None
    missing_artifacts: list[str] | None
    graders: list[dict[str, str | None]] | None
    slices: list[str] | None
    severity: str | None
    failure_class: str | None
    split: str | None
    cost_usd: float | None
    cost_model_usd: float | None
    cost_tool_usd: float | None
    cost_execution_usd: float | None
    tokens_input: int | None
    tokens_output: int | None
    machine_seconds: float | None
    started_at: str | None
    ended_at: str | None
    reviewer: str | None
    review_started_at: str | None
    review_ended_at: str | None
    correction_started_at: str | None
    correction_ended_at: str | None
    stdout_path: str | None
    stdout_digest: str | None
    stderr_path: str | None
    stderr_digest: str | None
    artifacts: list[dict[str, str | int | None]] | None
    source: str | None
    checksum: str | None
    parent_candidate_digest: str | None
    correction_round: int | None
    feedback_digest: str | None
    layer: str | None
    stage: str | None
    cohort: str | None
    accepted: bool | None
    review_minutes: float | None
    unauthorized_actions: int | None


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


@cache
def load_schema() -> SchemaNode:
    """Return the contract as a JSON Schema dictionary (read once, never mutated).

    Returns
    -------
    dict
        ``run_record.v1.schema.json``, shared: do not modify it.
    """
    with SCHEMA_PATH.open(encoding="utf-8") as handle:
        schema = cast(SchemaNode, json.load(handle))  # the package's own file (see SchemaNode)
    return schema


FIELDS: tuple[str, ...] = tuple(load_schema()["properties"])
REQUIRED_FIELDS: tuple[str, ...] = tuple(load_schema()["required"])
OUTCOMES: tuple[str, ...] = tuple(o for o in load_schema()["properties"]["outcome"]["enum"] if o is not None)
#: The outcomes by name, for code that must not import ``gatestats.vocabulary`` (which imports polars):
#: a worker of the JSONL line pass. Checked against the schema's enum at import.
PASSED, RESOURCE_KILLED = "passed", "resource_killed"
if not {PASSED, RESOURCE_KILLED} <= set(OUTCOMES):  # pragma: no cover - a schema without them
    msg = f"the contract's outcomes {OUTCOMES} lack {PASSED!r} or {RESOURCE_KILLED!r}"
    raise ImportError(msg)
#: A grader's verdict on a trial (``graders[].verdict``).
GRADER_VERDICTS: tuple[str, ...] = tuple(
    v for v in load_schema()["properties"]["graders"]["items"]["properties"]["verdict"]["enum"] if v is not None
)
BOUNDS: tuple[str, ...] = tuple(b for b in load_schema()["properties"]["bound"]["enum"] if b is not None)
#: The rollout stages a production observation names (``stage``), in rollout order.
STAGES: tuple[str, ...] = tuple(s for s in load_schema()["properties"]["stage"]["enum"] if s is not None)
#: The fields of a production observation (issue 25), added to contract v1 after its first records:
#: optional, nullable, and omitted from a written line when null (:func:`gatestats_runner.store.encode_record`),
#: so that a record without them keeps its bytes and its checksum.
OBSERVATION_FIELDS: tuple[str, ...] = ("stage", "cohort", "accepted", "review_minutes", "unauthorized_actions")


@dataclass(frozen=True, slots=True, kw_only=True)
class ContractViolation:
    """One way a record breaks the contract: the field (dotted path) and what is wrong."""

    field: str
    message: str
    #: The 1-based line of a JSON document where the problem is, when it is known (``decode_json``).
    line: int | None = None

    def __str__(self) -> str:
        return f"field '{self.field}': {self.message}"


def _type_ok(value: Any, types: list[str]) -> bool:
    for name in types:
        expected = _JSON_TYPES[name]
        if isinstance(value, bool) and name in {"integer", "number"}:
            continue  # JSON true/false is not a number
        if isinstance(value, expected):
            return True
    return False


def _number_problem(value: Any) -> str | None:
    """Why a number cannot be stored (NaN, an infinity, an integer beyond 64 bits), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"expected a finite number (got {value!r})"
    if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        return f"integer out of the 64-bit range (got {len(str(abs(value)))} digits)"
    return None


#: An RFC 3339 ``date-time`` (section 5.6): date, ``T``, time, optional fraction, and an offset.
RFC3339_PATTERN = (
    r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)"
    r"(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
)
_RFC3339 = re.compile(RFC3339_PATTERN)


def _is_datetime(value: str) -> bool:
    if not _RFC3339.match(value):
        return False
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    text = text.replace(":60", ":59") if text[17:19] == "60" else text  # a leap second is a valid RFC 3339 time
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return False
    return parsed.tzinfo is not None


def _check(value: Any, schema: SchemaNode, path: str, out: list[ContractViolation]) -> None:
    """Append to ``out`` every way ``value`` breaks ``schema`` (recursing into lists and objects)."""
    number = _number_problem(value)
    if number is not None:
        out.append(ContractViolation(field=path, message=number))
        return
    if not _check_type(value, schema, path, out):
        return
    if "const" in schema and value != schema["const"]:
        out.append(ContractViolation(field=path, message=f"must be {schema['const']!r} (got {value!r})"))
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"] if v is not None)
        out.append(ContractViolation(field=path, message=f"must be one of {allowed} (got {value!r})"))
    if value is None:
        return
    _check_scalar(value, schema, path, out)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _check(item, schema["items"], f"{path}[{i}]", out)
    if isinstance(value, dict):
        _check_object(value, schema, path, out)


def _check_type(value: Any, schema: SchemaNode, path: str, out: list[ContractViolation]) -> bool:
    """False (and a violation appended) when ``value`` is not of the schema's type."""
    types = schema.get("type")
    if types is None:
        return True
    types = [types] if isinstance(types, str) else list(types)
    if _type_ok(value, types):
        return True
    expected = " or ".join(types)
    out.append(ContractViolation(field=path, message=f"expected {expected} (got {type(value).__name__} {value!r})"))
    return False


def _check_scalar(value: Any, schema: SchemaNode, path: str, out: list[ContractViolation]) -> None:
    """The string rules (``minLength``, ``date-time``) and the number rule (``minimum``)."""
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            out.append(ContractViolation(field=path, message=f"must not be empty (got {value!r})"))
        if schema.get("format") == "date-time" and not _is_datetime(value):
            out.append(
                ContractViolation(field=path, message=f"expected an RFC 3339 timestamp with offset (got {value!r})")
            )
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and "minimum" in schema
        and value < schema["minimum"]
    ):
        out.append(ContractViolation(field=path, message=f"must be >= {schema['minimum']} (got {value!r})"))


def _check_object(value: dict[str, Any], schema: SchemaNode, path: str, out: list[ContractViolation]) -> None:
    prefix = f"{path}." if path else ""
    props: dict[str, SchemaNode] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            out.append(ContractViolation(field=prefix + name, message="required field is missing"))
    for name, item in value.items():
        if name in props:
            _check(item, props[name], prefix + name, out)
        elif schema.get("additionalProperties") is False:
            out.append(ContractViolation(field=prefix + name, message="unknown field"))


_COST_PARTS = ("cost_model_usd", "cost_tool_usd", "cost_execution_usd")


def validate_field(name: str, value: Any) -> list[ContractViolation]:
    """Check one field's value (at any depth below it) against the contract.

    >>> [str(v) for v in validate_field("graders", [{"name": "t", "kind": "code", "verdict": "maybe"}])]
    ["field 'graders[0].verdict': must be one of 'passed', 'failed', 'unparseable' (got 'maybe')"]

    Parameters
    ----------
    name
        A top-level field of the record contract, e.g. ``graders``.
    value
        Its value.

    Returns
    -------
    list of ContractViolation
        Every violation, each naming the field's path (empty when the value fits).
    """
    props: dict[str, SchemaNode] = load_schema()["properties"]
    if name not in props:
        return [ContractViolation(field=name, message="unknown field")]
    out: list[ContractViolation] = []
    _check(value, props[name], name, out)
    return out


def validate_record(record: Any) -> list[ContractViolation]:
    """Check one decoded JSON record against the contract; return every violation found.

    Besides the JSON Schema, the contract's cross-field rules are checked: ``bound`` is set
    exactly when ``outcome`` is ``resource_killed``, the undivided ``cost_usd`` is null
    when any cost part is set, and a ``passed`` trial names no failed check and no missing artifact.

    >>> validate_record({"schema_version": 1, "record_id": "r1", "run_set_id": "s",
    ...                  "system": "base", "case_id": "c1", "trial": 0, "attempt": 0,
    ...                  "outcome": "passed"})
    []
    >>> [str(v) for v in validate_record({"schema_version": 1, "record_id": "r1",
    ...   "run_set_id": "s", "system": "base", "case_id": "c1", "trial": 0, "attempt": 0,
    ...   "outcome": "crashed"})]
    ["field 'outcome': must be one of 'passed', 'failed', 'resource_killed', 'infra_error' (got 'crashed')"]

    Parameters
    ----------
    record
        A decoded JSON value (anything but an object is one violation).

    Returns
    -------
    list of ContractViolation
        Every violation, each naming the field's path (empty when the record fits).
    """
    if _record_ok(record):
        return []  # the compiled check proved it valid; the slow path below explains what is not
    return _explain(record)


def _explain(record: Any) -> list[ContractViolation]:
    """The reference checker: every violation, with its field and what was got (the slow path)."""
    out: list[ContractViolation] = []
    if not isinstance(record, dict):
        return [ContractViolation(field="<record>", message=f"expected a JSON object (got {type(record).__name__})")]
    _check_object(record, load_schema(), "", out)
    outcome, bound = record.get("outcome"), record.get("bound")
    if outcome == "resource_killed" and bound is None:
        out.append(ContractViolation(field="bound", message="required when outcome is 'resource_killed' (got null)"))
    if outcome in OUTCOMES and outcome != "resource_killed" and bound is not None:
        out.append(
            ContractViolation(
                field="bound",
                message=f"must be null unless outcome is 'resource_killed' (got {bound!r})",
            )
        )
    if record.get("cost_usd") is not None and any(record.get(part) is not None for part in _COST_PARTS):
        out.append(
            ContractViolation(
                field="cost_usd",
                message="must be null when cost_model_usd, cost_tool_usd or cost_execution_usd is set",
            )
        )
    if outcome == "passed" and record.get("failed_check") is not None:
        out.append(
            ContractViolation(
                field="failed_check",
                message=f"must be null when outcome is 'passed' (got {record['failed_check']!r})",
            )
        )
    if outcome == "passed" and record.get("missing_artifacts"):
        out.append(
            ContractViolation(
                field="missing_artifacts",
                message=f"must be empty when outcome is 'passed' (got {record['missing_artifacts']!r})",
            )
        )
    return out


# A compiled form of the same rules, for speed: one closure per schema node that only answers
# "valid or not". It never explains; :func:`_check` does that (and a test checks they agree).
_Pred = Callable[[Any], bool]


def _type_pred(types: list[str]) -> _Pred:
    kinds: set[type] = {kind for name in types for kind in _JSON_TYPES[name]}
    numeric = bool(kinds & {int, float})
    if not numeric:
        return lambda value: type(value) in kinds

    def ok(value: Any) -> bool:
        kind = type(value)
        if kind not in kinds:
            return False
        if numeric and kind is not bool and kind in (int, float):
            return _number_problem(value) is None
        return True

    return ok


def _value_preds(schema: SchemaNode) -> list[_Pred]:
    """The predicates of the schema's value rules: type, const, enum, minLength, date-time, minimum."""
    preds: list[_Pred] = []
    if "type" in schema:
        types = schema["type"]
        preds.append(_type_pred([types] if isinstance(types, str) else list(types)))
    if "const" in schema:
        const = schema["const"]
        preds.append(lambda v: v == const and type(v) is type(const))
    if "enum" in schema:
        allowed = frozenset(schema["enum"])
        preds.append(lambda v: v in allowed)
    if "minLength" in schema:
        least = schema["minLength"]
        preds.append(lambda v: not isinstance(v, str) or len(v) >= least)
    if schema.get("format") == "date-time":
        preds.append(lambda v: not isinstance(v, str) or _is_datetime(v))
    if "minimum" in schema:
        low = schema["minimum"]
        preds.append(lambda v: v is None or isinstance(v, bool) or not isinstance(v, int | float) or v >= low)
    return preds


def _items_pred(item: _Pred) -> _Pred:
    """A list's predicate: every item satisfies ``item`` (anything but a list passes)."""

    def items_ok(value: Any) -> bool:
        # map, not a generator expression: no Python frame per item on this hot path
        return type(value) is not list or all(map(item, value))

    return items_ok


def _compile(schema: SchemaNode) -> _Pred:
    """One predicate for a schema: the conjunction of its rules' predicates."""
    preds = _value_preds(schema)
    if "items" in schema:
        preds.append(_items_pred(_compile(schema["items"])))
    if "properties" in schema:
        preds.append(_compile_object(schema))
    if len(preds) == 1:
        return preds[0]
    first, *rest = preds

    def ok(value: Any) -> bool:
        if not first(value):
            return False
        for pred in rest:  # noqa: SIM110 - a loop, not a generator per value: this is the hot path
            if not pred(value):
                return False
        return True

    return ok


def _compile_object(schema: SchemaNode) -> _Pred:
    props = {name: _compile(spec) for name, spec in schema["properties"].items()}
    required = frozenset(schema.get("required", ()))
    closed = schema.get("additionalProperties") is False
    # A field's predicate is a pure function of its value: for null (most of an imported record's fields)
    # it is answered once here, not once per record.
    null_ok = frozenset(name for name, pred in props.items() if pred(None))

    def ok(value: Any) -> bool:
        if not isinstance(value, dict):
            return True  # the type predicate answers for non-objects
        if not required <= value.keys() or (closed and not value.keys() <= props.keys()):
            return False
        for name, item in value.items():
            if item is None and name in null_ok:
                continue
            pred = props.get(name)
            if pred is not None and not pred(item):
                return False
        return True

    return ok


@cache
def _compiled_record() -> _Pred:
    return _compile_object(load_schema())


def _record_ok(record: Any) -> bool:
    """True when ``record`` satisfies the contract and its cross-field rules (fast; never explains)."""
    if type(record) is not dict or not _compiled_record()(record):
        return False
    outcome, bound = record.get("outcome"), record.get("bound")
    if (outcome == "resource_killed") != (bound is not None):
        return False
    if outcome == "passed" and (record.get("failed_check") is not None or record.get("missing_artifacts")):
        return False
    return record.get("cost_usd") is None or all(record.get(part) is None for part in _COST_PARTS)


class _DuplicateKeyError(ValueError):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKeyError(key)
            seen.add(key)
    return obj


class _BadNumberError(ValueError):
    """A number the contract cannot hold; ``text`` is the literal as written (to find its line)."""

    def __init__(self, text: str, message: str) -> None:
        super().__init__(message)
        self.text = text


def _refuse_constant(name: str) -> Any:
    raise _BadNumberError(name, f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadNumberError(text, f"number {text[:40]} overflows a 64-bit float")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > 20:
        raise _BadNumberError(text, f"integer of {len(text.lstrip('-'))} digits is out of the 64-bit range")
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise _BadNumberError(text, f"integer {text} is out of the 64-bit range")
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_object,
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    parse_int=_bounded_int,
)


#: A JSON string in a document's bytes, from its opening quote to its closing one (or to the end of an unterminated one,
#: as :func:`_too_deep` reads it). No byte of a multi-byte UTF-8 character is ASCII, so quotes, backslashes and brackets
#: are found in the bytes exactly where they are in the text.
_STRING_BYTES = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
#: Brackets of both kinds as ``[`` and ``]`` (the depth counts them alike); every other byte deleted.
_BRACKETS_ONLY = (bytes.maketrans(b"{}", b"[]"), bytes(set(range(256)) - set(b"[]{}")))


def _nests_within(raw: bytes, limit: int) -> bool:
    """Whether the brackets outside strings are proved to nest at most ``limit`` deep, in passes over whole strings.

    The strings are cut out and every byte but a bracket dropped (C loops, not a Python loop per character:
    :func:`_too_deep` costs 0.22 s of CPU on the bundled 4 MB τ-bench file, this 0.04 s). Then each pass deletes every
    adjacent ``[]``: a pass removes the deepest pairs and never their enclosing pair (not adjacent in that pass's
    input), so the brackets vanish within ``limit`` passes only if they are balanced and nest at most ``limit`` deep,
    as :func:`_too_deep`'s count then never exceeds ``limit``. False is "not proved" (too deep, unbalanced, or
    malformed): :func:`_too_deep` then finds where, character by character.
    """
    table, drop = _BRACKETS_ONLY
    brackets = _STRING_BYTES.sub(b"", raw).translate(table, drop)
    for _ in range(limit):
        if not brackets:
            return True
        brackets = brackets.replace(b"[]", b"")
    return not brackets


def _too_deep(text: str, limit: int) -> int | None:
    """The index where bracket nesting outside strings first exceeds ``limit``, or None."""
    depth = 0
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return index
        elif char in "]}":
            depth -= 1
    return None


def _line_at(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _token_line(text: str, token: str) -> int | None:
    """The line of the first ``token`` outside a JSON string (NaN, Infinity, a huge number)."""
    pattern = re.compile(r'"(?:[^"\\]|\\.)*"|' + re.escape(token))
    for match in pattern.finditer(text):
        if not match.group().startswith('"'):
            return _line_at(text, match.start())
    return None


def decode_json(raw: bytes, *, max_bytes: int, max_depth: int = MAX_DEPTH) -> tuple[Any, ContractViolation | None]:
    """Decode a JSON document strictly; return ``(value, None)`` or ``(None, why)``.

    Refused: more than ``max_bytes`` bytes, a UTF-8 byte-order mark, bytes that are not UTF-8, a
    duplicate key in any object, ``NaN``/``Infinity``, a float that overflows, an integer beyond
    64 bits, nesting deeper than ``max_depth``. The violation's field is ``<line>`` (or the
    duplicated key).

    Parameters
    ----------
    raw
        The document's bytes.
    max_bytes
        The largest document accepted.
    max_depth
        The deepest nesting of arrays and objects accepted.

    Returns
    -------
    tuple
        ``(value, None)``, or ``(None, violation)`` naming why and, where known, the line.
    """
    text, problem = _text(raw, max_bytes, max_depth)
    if problem is not None:
        return None, problem
    return _decode(text)


def _text(raw: bytes, max_bytes: int, max_depth: int) -> tuple[str, ContractViolation | None]:
    """The document as text, or why it is refused before parsing: size, byte-order mark, UTF-8, depth."""
    if len(raw) > max_bytes:
        return "", ContractViolation(
            field="<line>", message=f"{len(raw)} bytes is longer than the limit of {max_bytes} bytes"
        )
    if raw.startswith(b"\xef\xbb\xbf"):
        return "", ContractViolation(field="<line>", message="starts with a UTF-8 byte-order mark (not JSON)", line=1)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return "", ContractViolation(
            field="<line>", message=f"not valid UTF-8 at byte {exc.start} (column {column})", line=line
        )
    if text.count("[") + text.count("{") > max_depth and not _nests_within(raw, max_depth):
        deep = _too_deep(text, max_depth)
        if deep is not None:
            return "", ContractViolation(
                field="<line>", message=f"nested deeper than {max_depth} levels", line=_line_at(text, deep)
            )
    return text, None


def _decode(text: str) -> tuple[Any, ContractViolation | None]:
    """Parse checked text strictly (duplicate keys, non-finite and overflowing numbers refused)."""
    try:
        value = _DECODER.decode(text)
    except _DuplicateKeyError as exc:
        key = exc.args[0]
        return None, ContractViolation(
            field=str(key)[:80], message=f"duplicate key {key!r} (readers disagree on which value wins)"
        )
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}" if exc.lineno > 1 else f"column {exc.colno}"
        return None, ContractViolation(field="<line>", message=f"not valid JSON: {exc.msg} ({where})", line=exc.lineno)
    except _BadNumberError as exc:
        return None, ContractViolation(
            field="<line>", message=f"not valid JSON: {exc}", line=_token_line(text, exc.text)
        )
    except (ValueError, RecursionError) as exc:
        return None, ContractViolation(field="<line>", message=f"not valid JSON: {exc}")
    return value, None


def decode_line(raw: bytes) -> tuple[dict[str, Any] | None, ContractViolation | None]:
    """Decode one line of a record file strictly; return ``(record, None)`` or ``(None, why)``.

    The rules of :func:`decode_json`, with :data:`MAX_LINE_BYTES`, and the value must be an object.
    The record is not yet checked against the contract (use :func:`validate_record`).

    >>> decode_line(b'{"outcome": "passed", "outcome": "failed"}')[1].message
    "duplicate key 'outcome' (readers disagree on which value wins)"
    >>> decode_line(b'{"cost_usd": NaN}')[1].message
    'not valid JSON: NaN is not a JSON number'

    Parameters
    ----------
    raw
        One line, without its newline.

    Returns
    -------
    tuple
        ``(record, None)``, or ``(None, violation)``.
    """
    value, bad = decode_json(raw, max_bytes=MAX_LINE_BYTES)
    if bad is not None:
        if bad.message.endswith(f"limit of {MAX_LINE_BYTES} bytes"):
            bad = ContractViolation(field=bad.field, message=f"line of {bad.message}")
        return None, bad
    if not isinstance(value, dict):
        return None, ContractViolation(field="<line>", message=f"expected a JSON object (got {type(value).__name__})")
    return value, None
