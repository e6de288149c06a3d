"""pandera (polars) schema of the run-record contract v1, built from the contract file.

Unlike pandera's default for LazyFrames, :func:`validate_records` always checks the data
(values, cross-field rules, duplicate keys), not just column names and types: a release gate
must never read unchecked records.
"""

from __future__ import annotations

import re
from typing import Any

import pandera.polars as pa
import polars as pl
from pandera.config import ValidationDepth, config_context
from pandera.errors import SchemaError, SchemaErrors

from gatestats.errors import RecordFileError, RecordProblem
from gatestats.records.contract import DATETIME_FIELDS, NESTED_FIELDS, POLARS_SCHEMA, RECORD_KEY, REQUIRED_FIELDS
from gatestats.vocabulary import FrameLike
from gatestats_runner.contract import RFC3339_PATTERN, load_schema, validate_field

__all__ = ["RECORD_SCHEMA", "duplicate_problems", "validate_records"]


def _column_checks(name: str, spec: dict[str, Any]) -> list[pa.Check]:
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
                lambda data: data.lazyframe.select(
                    pl.col(data.key).is_null() | pl.col(data.key).str.contains(RFC3339_PATTERN)
                ),
                name="rfc3339_timestamp_with_offset",
                error="expected an RFC 3339 timestamp with offset",
            )
        )
    return checks


def _bound_iff_resource_killed(data: Any) -> pl.LazyFrame:
    killed = pl.col("outcome") == "resource_killed"
    lazy: pl.LazyFrame = data.lazyframe
    return lazy.select((killed & pl.col("bound").is_not_null()) | (~killed & pl.col("bound").is_null()))


def _cost_not_double_counted(data: Any) -> pl.LazyFrame:
    parts = pl.any_horizontal(
        pl.col(p).is_not_null() for p in ("cost_model_usd", "cost_tool_usd", "cost_execution_usd")
    )
    lazy: pl.LazyFrame = data.lazyframe
    return lazy.select(pl.col("cost_usd").is_null() | ~parts)


def _passed_has_no_failure(data: Any) -> pl.LazyFrame:
    passed = pl.col("outcome") == "passed"
    lazy: pl.LazyFrame = data.lazyframe
    missing = pl.col("missing_artifacts").list.len().fill_null(0) > 0
    return lazy.select(~passed | (pl.col("failed_check").is_null() & ~missing))


def _build_schema() -> pa.DataFrameSchema:
    properties: dict[str, Any] = load_schema()["properties"]
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


def _key_text(row: dict[str, Any]) -> str:
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
    with config_context(validation_enabled=True, validation_depth=ValidationDepth.SCHEMA_AND_DATA):
        try:
            RECORD_SCHEMA.validate(data, lazy=True)
        except (SchemaErrors, SchemaError) as exc:
            problems.extend(_problems(exc, source))
    problems.extend(_nested_problems(data, source))
    problems.extend(duplicate_problems(data, source))
    if problems:
        problems.sort(key=lambda p: (p.row is None, p.row or 0, p.field))
        raise RecordFileError(problems)
    return data
