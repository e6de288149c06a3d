"""Records a statistic reads: the required columns, and the system column renamed ``system``."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

__all__ = ["require_columns", "system_records"]


def require_columns(lazy: pl.LazyFrame, required: Sequence[str]) -> pl.Schema:
    """The schema of ``lazy``, once it is known to hold every ``required`` column.

    Parameters
    ----------
    lazy
        The records.
    required
        The columns they must have.

    Returns
    -------
    polars.Schema
        Their schema.

    Raises
    ------
    ValueError
        A required column is missing (the message lists those missing and those there are).
    """
    schema = lazy.collect_schema()
    missing = [name for name in required if name not in schema]
    if missing:
        msg = f"records lack required column(s) {missing} (got {list(schema)})"
        raise ValueError(msg)
    return schema


def system_records(lazy: pl.LazyFrame, system_column: str, columns: Sequence[str]) -> pl.LazyFrame:
    """``columns`` of the records, with ``system_column`` first, as a string column ``system``.

    Parameters
    ----------
    lazy
        The records.
    system_column
        The column that names the system.
    columns
        The other columns to keep (all required).

    Returns
    -------
    polars.LazyFrame
        ``system`` and ``columns``.

    Raises
    ------
    ValueError
        A required column is missing (see :func:`require_columns`).
    """
    require_columns(lazy, (system_column, *columns))
    return lazy.select(pl.col(system_column).cast(pl.String).alias("system"), *columns)
