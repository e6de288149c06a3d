"""Shared checks of the judgment frames that the statistics take (DataFrame or LazyFrame)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from gatestats.vocabulary import FrameLike

__all__ = ["collect_checked", "slice_parts", "verdict_vocabulary"]

_SHOWN = 5


def verdict_vocabulary(positive: str, negative: str, tie: str | None) -> tuple[str, ...]:
    """The valid verdict values, checked to be distinct non-empty strings.

    Parameters
    ----------
    positive, negative, tie
        The verdict values (``tie`` optional).

    Returns
    -------
    tuple of str
        ``(positive, negative)``, with ``tie`` last when given.

    Raises
    ------
    ValueError
        Values that are not distinct non-empty strings.
    """
    values = (positive, negative) if tie is None else (positive, negative, tie)
    if any(not isinstance(v, str) or not v for v in values) or len(set(values)) != len(values):
        msg = f"positive, negative and tie must be distinct non-empty strings (got {values!r})"
        raise ValueError(msg)
    return values


def collect_checked(
    judgments: FrameLike,
    *,
    required: Sequence[str],
    optional: Sequence[str] = (),
    labels: Sequence[str] | None,
    verdicts: Sequence[str],
    verdict_columns: Sequence[str],
) -> pl.DataFrame:
    """Select ``required`` + present ``optional`` columns, collect once, and check their values.

    ``label`` (when required) must hold one of ``labels`` and no null; each verdict column one of
    ``verdicts`` or null (unparseable).

    Parameters
    ----------
    judgments
        A DataFrame or LazyFrame.
    required
        Columns that must be present.
    optional
        Columns kept when present.
    labels
        The valid labels (``None``: the labels are not checked).
    verdicts
        The valid verdict values.
    verdict_columns
        The columns, among those kept, that hold verdicts.

    Returns
    -------
    polars.DataFrame
        The kept columns (as strings, ``score`` as is), collected.

    Raises
    ------
    TypeError
        ``judgments`` is not a polars frame.
    ValueError
        A missing column, a column that does not hold strings, or a value outside the vocabulary
        (the message names the column, the first offending rows and the values found).
    """
    if not isinstance(judgments, pl.DataFrame | pl.LazyFrame):
        msg = f"judgments must be a polars DataFrame or LazyFrame (got {type(judgments).__name__})"
        raise TypeError(msg)
    lazy = judgments.lazy()
    schema = lazy.collect_schema()
    missing = [c for c in required if c not in schema]
    if missing:
        msg = f"judgments: missing column(s) {missing} (got columns {list(schema)})"
        raise ValueError(msg)
    columns = [*required, *(c for c in optional if c in schema and c not in required)]
    for column in columns:
        if column != "score" and schema[column] not in (pl.String(), pl.Categorical(), pl.Null()):
            msg = f"judgments: column {column!r} must hold strings (got {schema[column]})"
            raise ValueError(msg)
    frame = lazy.select(pl.col(c).cast(pl.String) if c != "score" else pl.col(c) for c in columns).collect()
    if labels is not None and "label" in frame.columns:
        _check_values(frame, "label", labels, allow_null=False)
    for column in verdict_columns:
        if column in frame.columns:
            _check_values(frame, column, verdicts, allow_null=True)
    return frame


def slice_parts(frame: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """The rows of each slice, slices in sorted order (a null slice is named ``""``).

    Parameters
    ----------
    frame
        A frame; without a ``slice`` column it has no slices.

    Returns
    -------
    list of (str, polars.DataFrame)
        Each slice's name and rows.
    """
    if "slice" not in frame.columns:
        return []
    names = sorted({s if s is not None else "" for s in frame["slice"].to_list()})
    return [(name, frame.filter(pl.col("slice").fill_null("") == name)) for name in names]


def _check_values(frame: pl.DataFrame, column: str, allowed: Sequence[str], *, allow_null: bool) -> None:
    bad = ~pl.col(column).is_in(list(allowed))
    mask = (pl.col(column).is_not_null() & bad) if allow_null else (pl.col(column).is_null() | bad)
    rows = frame.with_row_index("__row").filter(mask).head(_SHOWN)
    if rows.is_empty():
        return
    shown = ", ".join(f"row {r['__row']}: {r[column]!r}" for r in rows.iter_rows(named=True))
    null = " or null (unparseable)" if allow_null else ""
    msg = f"judgments: column {column!r} must hold {' / '.join(map(repr, allowed))}{null} (got {shown})"
    raise ValueError(msg)
