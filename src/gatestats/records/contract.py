"""The run-record contract v1 as polars types, derived from the runner's JSON Schema.

The JSON Schema file in ``gatestats_runner`` is the single source of truth; nothing here
restates a field by hand.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from gatestats_runner.contract import (
    BOUNDS,
    CONTRACT_VERSION,
    FIELDS,
    OUTCOMES,
    RECORD_KEY,
    REQUIRED_FIELDS,
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
]


def _non_null_type(spec: dict[str, Any]) -> str:
    types = spec["type"]
    types = [types] if isinstance(types, str) else [t for t in types if t != "null"]
    if len(types) != 1:
        msg = f"contract field type must be one JSON type plus optional null (got {spec['type']!r})"
        raise ValueError(msg)
    return str(types[0])


def polars_dtype(spec: dict[str, Any]) -> pl.DataType:
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


_PROPERTIES: dict[str, Any] = load_schema()["properties"]

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
