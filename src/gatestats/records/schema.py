"""Validation of a frame of run records against the contract v1: schema *and* data.

Unlike pandera's default for LazyFrames, :func:`validate_records` always checks the data
(values, cross-field rules, duplicate keys), not just column names and types: a release gate
must never read unchecked records.

The value checks run as one polars query (:func:`value_checks`: one boolean per rule, the
same rules as the pandera schema, built from the same contract file). Only when a rule fails
is every failing row and field named, by a second polars query over pandera's own check
expressions (:func:`_value_problems`: the problems pandera's lazy validation reported, in its
order and words, without importing pandera, which cost about 1.5 s once and 60-100 ms a call).
The pandera schema (:data:`RECORD_SCHEMA`, imported on first use) stays the declared model;
tests/records/test_value_problems.py holds pandera's explanation as the oracle. A rule that
fails is always reported: the columnar rules are exactly pandera's, with a null counted as a
failure wherever pandera would not ignore it, and a failure nothing names still refuses the frame.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import polars as pl

from gatestats.errors import RecordFileError, RecordProblem
from gatestats.records.contract import (
    DATETIME_FIELDS,
    NESTED_FIELDS,
    POLARS_SCHEMA,
    RECORD_KEY,
    REQUIRED_FIELDS,
    rfc3339_timestamp,
)
from gatestats.vocabulary import PASSED, RESOURCE_KILLED, FrameLike
from gatestats_runner.contract import load_schema, validate_field

if TYPE_CHECKING:
    import pandera.polars as pa

    from gatestats_runner.contract import SchemaNode

    #: The pandera schema of a frame of run records (contract v1); imported on first use.
    RECORD_SCHEMA: pa.DataFrameSchema

__all__ = ["RECORD_SCHEMA", "duplicate_problems", "validate_records", "value_checks"]


def __getattr__(name: str) -> Any:
    if name == "RECORD_SCHEMA":
        from gatestats.records._pandera_schema import RECORD_SCHEMA  # noqa: PLC0415 - pandera costs ~0.5 s to import

        return RECORD_SCHEMA
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def _column_checks(name: str, spec: SchemaNode) -> list[tuple[pl.Expr, str]]:
    """The value rules of one column, each with what pandera says it expects: pandera's column checks.

    Each rule is as pandera evaluates it on a value (null where the value is null: pandera ignores a
    null there; not-null is its own rule, :func:`_column_rules`). The one source of both the rules
    (:func:`value_checks`) and their explanation (:func:`_explained_checks`).
    """
    column = pl.col(name)
    checks: list[tuple[pl.Expr, str]] = []
    if "enum" in spec:
        allowed = [v for v in spec["enum"] if v is not None]
        checks.append((column.is_in(allowed), "must be one of " + str(allowed).strip("[]")))
    if "const" in spec:
        checks.append((column == spec["const"], f"must be {spec['const']}"))
    if isinstance(POLARS_SCHEMA[name], pl.Float64):
        checks.append((column.is_finite(), "expected a finite number"))
    if "minimum" in spec:
        checks.append((column >= spec["minimum"], f"must be >= {spec['minimum']}"))
    if spec.get("minLength"):
        checks.append((column.str.len_chars() >= spec["minLength"], "must not be empty"))
    if name in DATETIME_FIELDS:
        checks.append((rfc3339_timestamp(column), "expected an RFC 3339 timestamp with offset"))
    return checks


def _column_rules(name: str, spec: SchemaNode) -> list[pl.Expr]:
    """The value rules of one column, as pandera's column checks (a null passes them; not-null is its own rule)."""
    column = pl.col(name)
    required = [column.is_not_null()] if name in REQUIRED_FIELDS else []
    return [*required, *(column.is_null() | rule for rule, _ in _column_checks(name, spec))]


def _record_rules() -> list[pl.Expr]:
    """The rules across fields of one record (pandera's frame-wide checks)."""
    killed = pl.col("outcome") == RESOURCE_KILLED
    passed = pl.col("outcome") == PASSED
    missing = pl.col("missing_artifacts").list.len().fill_null(0) > 0
    parts = pl.any_horizontal(
        pl.col(p).is_not_null() for p in ("cost_model_usd", "cost_tool_usd", "cost_execution_usd")
    )
    return [
        (killed & pl.col("bound").is_not_null()) | (~killed & pl.col("bound").is_null()),
        ~passed | (pl.col("failed_check").is_null() & ~missing),
        pl.col("cost_usd").is_null() | ~parts,
    ]


def value_checks() -> list[pl.Expr]:
    """One boolean expression per rule of the contract: true when every record keeps the rule.

    The rules are those of :data:`RECORD_SCHEMA` (enums, constants, finite numbers, minimums,
    non-empty strings, RFC 3339 timestamps, required values, and the three rules across
    fields); a null result counts as a broken rule. Evaluated over a frame, or a streaming scan,
    of the contract's columns.

    Returns
    -------
    list of polars.Expr
        Scalar boolean expressions.
    """
    properties = load_schema()["properties"]
    rules = [rule for name, spec in properties.items() for rule in _column_rules(name, spec)]
    rules += _record_rules()
    return [rule.fill_null(value=False).all().alias(f"rule_{i}") for i, rule in enumerate(rules)]


@dataclass(frozen=True, slots=True)
class _Explained:
    """One check of the pandera schema as a polars expression: true on a row that fails it."""

    field: str
    failed: pl.Expr
    expected: str
    #: Whether the message shows the value got (pandera's failure case); not for a null or a record rule.
    shows_value: bool


@cache
def _explained_checks() -> tuple[_Explained, ...]:
    """pandera's checks of :data:`RECORD_SCHEMA` in its order: per column (in the contract's order) not-null,
    then the column's checks, then the three checks across fields.

    Each is pandera's own expression (a built-in check's ``pl.col(...).is_in/eq/ge``, ``str.len_chars``; the
    schema's own ``finite`` and ``rfc3339_timestamp_with_offset``; the record rules of :func:`_record_rules`,
    which are the schema's), failed where it is false: a null result passes, as pandera's ``ignore_na``.
    """
    checks: list[_Explained] = []
    for name, spec in load_schema()["properties"].items():
        column = pl.col(name)
        if name in REQUIRED_FIELDS:  # pandera counts NaN as null in a float column
            is_float = isinstance(POLARS_SCHEMA[name], pl.Float64)
            missing = column.is_null() | column.is_nan() if is_float else column.is_null()
            checks.append(_Explained(name, missing, "required value is null", shows_value=False))
        checks += [
            _Explained(name, ~(column.is_null() | rule), expected, shows_value=True)
            for rule, expected in _column_checks(name, spec)
        ]
    record = zip(_RECORD_RULE_FIELDS, _RECORD_RULE_MESSAGES, _record_rules(), strict=True)
    checks += [_Explained(field, ~rule, message, shows_value=False) for field, message, rule in record]
    return tuple(checks)


#: The field each rule across fields of :func:`_record_rules` is reported under, and its message (pandera's).
_RECORD_RULE_FIELDS = ("bound", "failed_check", "cost_usd")
_RECORD_RULE_MESSAGES = (
    "bound must be set exactly when outcome is 'resource_killed'",
    "a passed trial names no failed check and no missing artifact",
    "cost_usd must be null when a cost part is set",
)
#: A value that looks like a number is shown bare, anything else quoted (pandera's failure cases are text).
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def _shown(expected: str, got: str | None) -> str:
    if got is None:
        return expected
    return f"{expected} (got {got if _NUMBER.fullmatch(got) else repr(got)})"


def _value_problems(data: pl.DataFrame, source: str) -> list[RecordProblem]:
    """Every failure of the value checks of ``data`` (contract columns and types): row (0-based), field, message.

    The problems pandera's lazy validation of :data:`RECORD_SCHEMA` gave, in its order (check by check, rows
    ascending) and words: a value shown is the failing value cast to text by polars, as pandera's failure case.
    One polars query for every check, then only the failing checks' rows.
    """
    checks = _explained_checks()
    failed = data.select(check.failed.fill_null(value=False).alias(f"c{i}") for i, check in enumerate(checks))
    problems: list[RecordProblem] = []
    for i, hit in enumerate(failed.select(pl.all().any()).row(0)):
        if not hit:
            continue
        check = checks[i]
        rows = failed.get_column(f"c{i}").arg_true()
        got: list[str | None] = (
            data.get_column(check.field).gather(rows).cast(pl.String).to_list()
            if check.shows_value
            else [None] * len(rows)
        )
        problems.extend(
            RecordProblem(file=source, field=check.field, message=_shown(check.expected, text), row=row)
            for row, text in zip(rows.to_list(), got, strict=True)
        )
    return problems


def _structural_problems(schema: pl.Schema, source: str) -> list[RecordProblem]:
    problems: list[RecordProblem] = []
    for name, dtype in POLARS_SCHEMA.items():
        if name not in schema:
            problems.append(RecordProblem(file=source, field=name, message="required column is missing"))
        elif schema[name] != dtype and schema[name] != pl.Null():
            problems.append(
                RecordProblem(
                    file=source,
                    field=name,
                    message=f"wrong type: expected {dtype} (got {schema[name]})",
                )
            )
    problems.extend(
        RecordProblem(file=source, field=name, message="unknown column (not in the run-record contract v1)")
        for name in schema
        if name not in POLARS_SCHEMA
    )
    return problems


def _key_text(row: Mapping[str, object]) -> str:
    return ", ".join(f"{name}={row.get(name)!r}" for name in RECORD_KEY)


def duplicate_problems(data: pl.DataFrame, source: str) -> list[RecordProblem]:
    """Every record whose key (system, case, version, trial, attempt) an earlier row already has (rows 0-based).

    Parameters
    ----------
    data
        The records.
    source
        The file they come from (the problems name it).

    Returns
    -------
    list of RecordProblem
        One per duplicate, naming its row and the first row with its key.
    """
    # Fast path: equal keys have equal hashes, so as many distinct key hashes as rows proves
    # there is no duplicate; only a hash collision or a real duplicate takes the exact path.
    if data.select(pl.struct(RECORD_KEY).hash(seed=0).n_unique()).item() == data.height:
        return []
    indexed = data.select(RECORD_KEY).with_row_index("__row")
    dupes = indexed.filter(pl.len().over(RECORD_KEY) > 1)
    if dupes.is_empty():
        return []
    first = dupes.group_by(RECORD_KEY, maintain_order=True).agg(pl.col("__row").min().alias("__first"))
    later = dupes.join(first, on=RECORD_KEY, nulls_equal=True).filter(pl.col("__row") != pl.col("__first"))
    return [
        RecordProblem(
            file=source,
            field=",".join(RECORD_KEY),
            message=f"duplicate record ({_key_text(row)})",
            row=int(row["__row"]),
            first_row=int(row["__first"]),
        )
        for row in later.iter_rows(named=True)
    ]


def _nested_problems(data: pl.DataFrame, source: str) -> list[RecordProblem]:
    """List and struct values checked at every depth by the contract's own checker (rows that hold any)."""
    problems: list[RecordProblem] = []
    for name in NESTED_FIELDS:
        column = data.get_column(name)
        if column.null_count() == data.height:
            continue
        dtype = POLARS_SCHEMA[name]
        if isinstance(dtype, pl.List) and not isinstance(dtype.inner, pl.List | pl.Struct):
            # A list of scalars already has the element type; only a null element can be wrong (columnar).
            holes = data.select(pl.col(name).list.eval(pl.element().is_null()).list.any().fill_null(False)).to_series()
            problems.extend(
                RecordProblem(file=source, field=f"{name}[{i}]", message="expected string (got null)", row=row)
                for row in holes.arg_true().to_list()
                for i, value in enumerate(column[row])
                if value is None
            )
            continue
        for row, value in enumerate(column.to_list()):
            if value is None:
                continue
            problems.extend(
                RecordProblem(file=source, field=v.field, message=v.message, row=row)
                for v in validate_field(name, _without_absent(value))
            )
    return problems


def _without_absent(value: Any) -> Any:
    """polars fills a struct field the data did not have with null; the contract's optional fields may be null."""
    if isinstance(value, list):
        return [_without_absent(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_absent(v) for k, v in value.items() if v is not None}
    return value


def validate_records(frame: FrameLike, *, source: str = "<frame>") -> pl.DataFrame:
    """Validate a frame of run records against the contract, schema *and* data; return it collected.

    Parameters
    ----------
    frame
        Records as a polars ``DataFrame`` or ``LazyFrame`` with the contract's columns.
    source
        Name used in error messages (a file path, usually).

    Returns
    -------
    polars.DataFrame
        The validated records.

    Raises
    ------
    RecordFileError
        Every problem found, each with its row (0-based) and field.
    """
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        msg = f"frame must be a polars DataFrame or LazyFrame (got {type(frame).__name__})"
        raise TypeError(msg)
    lazy = frame.lazy()
    structural = _structural_problems(lazy.collect_schema(), source)
    if structural:
        raise RecordFileError(structural)
    data = lazy.select(pl.col(name).cast(dtype) for name, dtype in POLARS_SCHEMA.items()).collect()
    problems: list[RecordProblem] = []
    checked = data.select(value_checks()).row(0, named=True)
    if not all(checked.values()):
        explained = _value_problems(data, source)
        if not explained:  # fail closed: a rule broken that the schema cannot name is still a problem
            broken = ", ".join(name for name, ok in checked.items() if not ok)
            msg = f"breaks the contract's value rule(s) {broken} (value_checks), which the schema did not explain"
            explained = [RecordProblem(file=source, field="<records>", message=msg)]
        problems.extend(explained)
    problems.extend(_nested_problems(data, source))
    problems.extend(duplicate_problems(data, source))
    if problems:
        problems.sort(key=lambda p: (p.row is None, p.row or 0, p.field))
        raise RecordFileError(problems)
    return data
