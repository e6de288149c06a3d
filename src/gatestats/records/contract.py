"""The run-record contract v1 as polars types, derived from the runner's JSON Schema.

The JSON Schema file in ``gatestats_runner`` is the single source of truth; nothing here
restates a field by hand.
"""

from __future__ import annotations

import polars as pl

from gatestats_runner.contract import (
    BOUNDS,
    CONTRACT_VERSION,
    FIELDS,
    OUTCOMES,
    RECORD_KEY,
    REQUIRED_FIELDS,
    RFC3339_PATTERN,
    SchemaNode,
    load_schema,
)

__all__ = [
    "BOUNDS",
    "CONTRACT_VERSION",
    "DATETIME_FIELDS",
    "FIELDS",
    "NESTED_FIELDS",
    "OUTCOMES",
    "POLARS_SCHEMA",
    "RECORD_KEY",
    "REQUIRED_FIELDS",
    "SYSTEM_PARTS",
    "polars_dtype",
    "rfc3339_timestamp",
]


def _non_null_type(spec: SchemaNode) -> str:
    types = spec["type"]
    types = [types] if isinstance(types, str) else [t for t in types if t != "null"]
    if len(types) != 1:
        msg = f"contract field type must be one JSON type plus optional null (got {spec['type']!r})"
        raise ValueError(msg)
    return str(types[0])


def polars_dtype(spec: SchemaNode) -> pl.DataType:
    """Map one JSON Schema property of the contract to a polars dtype.

    Parameters
    ----------
    spec
        The property's JSON Schema.

    Returns
    -------
    polars.DataType
        The column type that holds it.

    Raises
    ------
    ValueError
        The property's JSON type has no polars type.
    """
    kind = _non_null_type(spec)
    if kind == "string":
        return pl.String()
    if kind == "integer":
        return pl.Int64()
    if kind == "number":
        return pl.Float64()
    if kind == "boolean":
        return pl.Boolean()
    if kind == "array":
        return pl.List(polars_dtype(spec["items"]))
    if kind == "object":
        return pl.Struct({name: polars_dtype(sub) for name, sub in spec["properties"].items()})
    msg = f"contract uses a JSON type gatestats cannot map to polars (got {kind!r})"
    raise ValueError(msg)


_PROPERTIES: dict[str, SchemaNode] = load_schema()["properties"]

#: Column name -> polars dtype, in contract order.
POLARS_SCHEMA: pl.Schema = pl.Schema({name: polars_dtype(spec) for name, spec in _PROPERTIES.items()})

#: The system parts (model id, prompt version, ...): the fields the contract describes as "System part".
SYSTEM_PARTS: tuple[str, ...] = tuple(
    name for name, spec in _PROPERTIES.items() if str(spec.get("description", "")).startswith("System part:")
)

#: Fields that hold RFC 3339 timestamps (kept as strings, checked to parse).
DATETIME_FIELDS: tuple[str, ...] = tuple(
    name for name, spec in _PROPERTIES.items() if spec.get("format") == "date-time"
)

#: List/struct fields: representable in JSONL and Parquet, not in CSV.
NESTED_FIELDS: tuple[str, ...] = tuple(
    name for name, dtype in POLARS_SCHEMA.items() if isinstance(dtype, pl.List | pl.Struct)
)


def rfc3339_timestamp(column: pl.Expr) -> pl.Expr:
    """Whether each string of ``column`` is an RFC 3339 timestamp with offset on a real calendar day.

    The same test as the JSONL line pass (:func:`gatestats_runner.contract.validate_record`, which
    parses with :meth:`datetime.fromisoformat`), as one polars expression for Parquet and frames:
    the pattern :data:`~gatestats_runner.contract.RFC3339_PATTERN` (hours 00-23, minutes 00-59,
    seconds 00-60: RFC 3339 section 5.7 allows a leap second), then a year from 0001 and a day that
    its month has (February 29 only in a Gregorian leap year). A null gives null.

    Parameters
    ----------
    column
        A string column.

    Returns
    -------
    polars.Expr
        Boolean.

    Examples
    --------
    >>> import polars as pl
    >>> stamps = ["2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2024-02-30T23:59:60+01:00", "0000-01-01T00:00:00Z"]
    >>> pl.DataFrame({"t": stamps}).select(rfc3339_timestamp(pl.col("t")))["t"].to_list()
    [True, False, False, False]
    """
    year = column.str.slice(0, 4).cast(pl.Int32, strict=False)
    month = column.str.slice(5, 2).cast(pl.Int32, strict=False)
    day = column.str.slice(8, 2).cast(pl.Int32, strict=False)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    days = (
        pl.when(month == 2)
        .then(pl.when(leap).then(29).otherwise(28))
        .when(month.is_in([4, 6, 9, 11]))
        .then(30)
        .otherwise(31)
    )
    return column.str.contains(RFC3339_PATTERN) & (year >= 1) & (day <= days)
