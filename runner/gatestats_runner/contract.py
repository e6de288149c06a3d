"""The run-record contract v1, readable with the standard library alone.

The single source of truth is ``run_record.v1.schema.json`` beside this module (JSON Schema,
draft 2020-12). This module loads it and checks one record against it without third-party
packages, so that the sandbox runner can validate every record before it appends it, and the
statistics core can explain exactly which line and field of a record file is wrong.

Only the JSON Schema keywords the contract file uses are implemented: ``type``, ``enum``,
``const``, ``required``, ``additionalProperties: false``, ``properties``, ``items``,
``minLength``, ``minimum`` and ``format: date-time``. A test checks that the contract file
uses no other keyword and that this checker agrees with the reference ``jsonschema`` package.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "BOUNDS",
    "CONTRACT_VERSION",
    "FIELDS",
    "OUTCOMES",
    "RECORD_KEY",
    "REQUIRED_FIELDS",
    "SCHEMA_PATH",
    "ContractViolation",
    "load_schema",
    "validate_record",
]

SCHEMA_PATH = Path(__file__).with_name("run_record.v1.schema.json")
CONTRACT_VERSION = 1
#: Columns that identify one trial attempt; unique within a record set.
RECORD_KEY = ("system", "case_id", "case_version", "trial", "attempt")

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
def load_schema() -> dict[str, Any]:
    """Return the contract as a JSON Schema dictionary (read once, never mutated)."""
    with SCHEMA_PATH.open(encoding="utf-8") as handle:
        schema: dict[str, Any] = json.load(handle)
    return schema


FIELDS: tuple[str, ...] = tuple(load_schema()["properties"])
REQUIRED_FIELDS: tuple[str, ...] = tuple(load_schema()["required"])
OUTCOMES: tuple[str, ...] = tuple(load_schema()["properties"]["outcome"]["enum"])
BOUNDS: tuple[str, ...] = tuple(b for b in load_schema()["properties"]["bound"]["enum"] if b is not None)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContractViolation:
    """One way a record breaks the contract: the field (dotted path) and what is wrong."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"field '{self.field}': {self.message}"


def _type_ok(value: Any, types: list[str]) -> bool:
    for name in types:
        expected = _JSON_TYPES[name]
        if isinstance(value, bool) and name in {"integer", "number"}:
            continue  # JSON true/false is not a number
        if isinstance(value, expected):
            return True
        if name == "integer" and isinstance(value, float) and value.is_integer():
            return True
    return False


def _is_datetime(value: str) -> bool:
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    if "T" not in text and "t" not in text:
        return False
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return False
    return parsed.tzinfo is not None


def _check(value: Any, schema: dict[str, Any], path: str, out: list[ContractViolation]) -> None:
    types = schema.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else list(types)
        if not _type_ok(value, types):
            expected = " or ".join(types)
            out.append(
                ContractViolation(
                    field=path,
                    message=f"expected {expected} (got {type(value).__name__} {value!r})",
                )
            )
            return
    if "const" in schema and value != schema["const"]:
        out.append(ContractViolation(field=path, message=f"must be {schema['const']!r} (got {value!r})"))
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"] if v is not None)
        out.append(ContractViolation(field=path, message=f"must be one of {allowed} (got {value!r})"))
    if value is None:
        return
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            out.append(ContractViolation(field=path, message=f"must not be empty (got {value!r})"))
        if schema.get("format") == "date-time" and not _is_datetime(value):
            out.append(
                ContractViolation(
                    field=path,
                    message=f"expected an RFC 3339 timestamp with offset (got {value!r})",
                )
            )
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and "minimum" in schema
        and value < schema["minimum"]
    ):
        out.append(ContractViolation(field=path, message=f"must be >= {schema['minimum']} (got {value!r})"))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _check(item, schema["items"], f"{path}[{i}]", out)
    if isinstance(value, dict):
        _check_object(value, schema, path, out)


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str, out: list[ContractViolation]) -> None:
    prefix = f"{path}." if path else ""
    props: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            out.append(ContractViolation(field=prefix + name, message="required field is missing"))
    for name, item in value.items():
        if name in props:
            _check(item, props[name], prefix + name, out)
        elif schema.get("additionalProperties") is False:
            out.append(ContractViolation(field=prefix + name, message="unknown field"))


_COST_PARTS = ("cost_model_usd", "cost_tool_usd", "cost_execution_usd")


def validate_record(record: Any) -> list[ContractViolation]:
    """Check one decoded JSON record against the contract; return every violation found.

    Besides the JSON Schema, the contract's cross-field rules are checked: ``bound`` is set
    exactly when ``outcome`` is ``resource_killed``, and the undivided ``cost_usd`` is null
    when any cost part is set.

    >>> validate_record({"schema_version": 1, "record_id": "r1", "run_set_id": "s",
    ...                  "system": "base", "case_id": "c1", "trial": 0, "attempt": 0,
    ...                  "outcome": "passed"})
    []
    >>> [str(v) for v in validate_record({"schema_version": 1, "record_id": "r1",
    ...   "run_set_id": "s", "system": "base", "case_id": "c1", "trial": 0, "attempt": 0,
    ...   "outcome": "crashed"})]
    ["field 'outcome': must be one of 'passed', 'failed', 'resource_killed', 'infra_error' (got 'crashed')"]
    """
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
    return out
