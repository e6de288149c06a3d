"""The pandera (polars) schema of the run-record contract v1, and its failures in plain words.

Imported only when it is needed: to explain a frame that failed the columnar checks of
:func:`gatestats.records.schema.validate_records` (a valid frame never imports pandera, which
costs about half a second), or when :data:`gatestats.records.RECORD_SCHEMA` is asked for.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pandera.polars as pa
import polars as pl
from pandera.config import ValidationDepth, config_context
from pandera.errors import SchemaError, SchemaErrors

from gatestats.errors import RecordProblem
from gatestats.records.contract import DATETIME_FIELDS, POLARS_SCHEMA, REQUIRED_FIELDS, rfc3339_timestamp
from gatestats.vocabulary import PASSED, RESOURCE_KILLED
from gatestats_runner.contract import load_schema

if TYPE_CHECKING:
    from gatestats_runner.contract import SchemaNode

__all__ = ["RECORD_SCHEMA", "pandera_problems"]


def _column_checks(name: str, spec: SchemaNode) -> list[pa.Check]:
    checks: list[pa.Check] = []
    if "enum" in spec:
        checks.append(pa.Check.isin([v for v in spec["enum"] if v is not None]))
    if "const" in spec:
        checks.append(pa.Check.equal_to(spec["const"]))
    if isinstance(POLARS_SCHEMA[name], pl.Float64):
        checks.append(
            pa.Check(
                lambda data: data.lazyframe.select(pl.col(data.key).is_null() | pl.col(data.key).is_finite()),
                name="finite",
                error="expected a finite number",
            )
        )
    if "minimum" in spec:
        checks.append(pa.Check.greater_than_or_equal_to(spec["minimum"]))
    if spec.get("minLength"):
        checks.append(pa.Check.str_length(min_value=spec["minLength"]))
    if name in DATETIME_FIELDS:
        checks.append(
            pa.Check(
                lambda data: data.lazyframe.select(pl.col(data.key).is_null() | rfc3339_timestamp(pl.col(data.key))),
                name="rfc3339_timestamp_with_offset",
                error="expected an RFC 3339 timestamp with offset",
            )
        )
    return checks


def _bound_iff_resource_killed(data: Any) -> pl.LazyFrame:
    killed = pl.col("outcome") == RESOURCE_KILLED
    lazy: pl.LazyFrame = data.lazyframe
    return lazy.select((killed & pl.col("bound").is_not_null()) | (~killed & pl.col("bound").is_null()))


def _cost_not_double_counted(data: Any) -> pl.LazyFrame:
    parts = pl.any_horizontal(
        pl.col(p).is_not_null() for p in ("cost_model_usd", "cost_tool_usd", "cost_execution_usd")
    )
    lazy: pl.LazyFrame = data.lazyframe
    return lazy.select(pl.col("cost_usd").is_null() | ~parts)


def _passed_has_no_failure(data: Any) -> pl.LazyFrame:
    passed = pl.col("outcome") == PASSED
    lazy: pl.LazyFrame = data.lazyframe
    missing = pl.col("missing_artifacts").list.len().fill_null(0) > 0
    return lazy.select(~passed | (pl.col("failed_check").is_null() & ~missing))


def _build_schema() -> pa.DataFrameSchema:
    properties = load_schema()["properties"]
    columns = {
        name: pa.Column(
            POLARS_SCHEMA[name],
            checks=_column_checks(name, spec),
            nullable=name not in REQUIRED_FIELDS,
            required=True,
        )
        for name, spec in properties.items()
    }
    return pa.DataFrameSchema(
        columns,
        checks=[
            pa.Check(
                _bound_iff_resource_killed,
                name="bound_set_exactly_when_resource_killed",
                error="bound must be set exactly when outcome is 'resource_killed'",
            ),
            pa.Check(
                _passed_has_no_failure,
                name="passed_names_no_failure",
                error="a passed trial names no failed check and no missing artifact",
            ),
            pa.Check(
                _cost_not_double_counted,
                name="cost_usd_null_when_parts_set",
                error="cost_usd must be null when a cost part is set",
            ),
        ],
        # duplicates: found once, by duplicate_problems (pandera's check would repeat it)
        strict=True,
        ordered=False,
        name="run_record_v1",
    )


#: The pandera schema of a frame of run records (contract v1).
RECORD_SCHEMA: pa.DataFrameSchema = _build_schema()


_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def _describe(check: str, got: object) -> str:
    """Plain-words version of a pandera check failure: what was expected, what was got."""
    if check == "not_nullable":
        return "required value is null"
    if check.startswith("isin("):
        expected = "must be one of " + check[len("isin(") : -1].strip("[]")
    elif check.startswith("greater_than_or_equal_to("):
        expected = "must be >= " + check[len("greater_than_or_equal_to(") : -1]
    elif check.startswith("str_length("):
        expected = "must not be empty"
    elif check.startswith("equal_to("):
        expected = "must be " + check[len("equal_to(") : -1]
    elif check == "finite":
        expected = "expected a finite number"
    elif check == "rfc3339_timestamp_with_offset":
        expected = "expected an RFC 3339 timestamp with offset"
    else:
        expected = check
    if got is None:
        return expected
    # pandera reports failure cases as text; show numbers as numbers.
    shown = got if isinstance(got, str) and _NUMBER.fullmatch(got) else repr(got)
    return f"{expected} (got {shown})"


def _problems(exc: SchemaErrors | SchemaError, source: str) -> list[RecordProblem]:
    cases = getattr(exc, "failure_cases", None)
    if not isinstance(cases, pl.DataFrame) or cases.is_empty():
        return [RecordProblem(file=source, field="<frame>", message=str(exc).strip())]
    problems: list[RecordProblem] = []
    for case in cases.iter_rows(named=True):
        check = str(case.get("check") or "schema")
        if "uniqueness" in check:
            continue  # reported by duplicate_problems with the key and the first row
        column = str(case.get("column") or "<record>")
        got = case.get("failure_case")
        index = case.get("index")
        if column == RECORD_SCHEMA.name:
            column = (
                "bound"
                if "bound" in check
                else "cost_usd"
                if "cost" in check
                else "failed_check"
                if "passed trial" in check
                else "<record>"
            )
            got = None
        message = _describe(check, got)
        problems.append(
            RecordProblem(
                file=source,
                field=column,
                message=message,
                row=None if index is None else int(index),
            )
        )
    return problems


def pandera_problems(data: pl.DataFrame, source: str) -> list[RecordProblem]:
    """Every failure of pandera's checks (values and cross-field rules) of ``data``, in plain words.

    Parameters
    ----------
    data
        Records with exactly the contract's columns and types.
    source
        The file they come from (the problems name it).

    Returns
    -------
    list of RecordProblem
        One per failing value, with its row (0-based) and field.
    """
    with config_context(validation_enabled=True, validation_depth=ValidationDepth.SCHEMA_AND_DATA):
        try:
            RECORD_SCHEMA.validate(data, lazy=True)
        except (SchemaErrors, SchemaError) as exc:
            return _problems(exc, source)
    return []
