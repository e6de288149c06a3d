"""The pandera (polars) schema of the run-record contract v1.

Imported only when :data:`gatestats.records.RECORD_SCHEMA` is asked for (pandera costs about
1.5 s to import). :func:`gatestats.records.schema.validate_records` never imports it: it names a
failing row and field with pandera's own check expressions run as one polars query
(``schema._value_problems``), checked against pandera's lazy validation of this schema by
tests/records/test_value_problems.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandera.polars as pa
import polars as pl

from gatestats.records.contract import DATETIME_FIELDS, POLARS_SCHEMA, REQUIRED_FIELDS, rfc3339_timestamp
from gatestats.vocabulary import PASSED, RESOURCE_KILLED
from gatestats_runner.contract import load_schema

if TYPE_CHECKING:
    from gatestats_runner.contract import SchemaNode

__all__ = ["RECORD_SCHEMA"]


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
