"""``--where`` of ``import``, ``analyze``, ``compare`` and ``cost``: the option, its check and the filtered records."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from gatestats.cli._common import load_cli_records, usage_error

if TYPE_CHECKING:
    import polars as pl

__all__ = ["WhereOption", "checked_where", "paired_columns", "where_records"]

#: ``--where`` of ``analyze``, ``compare``, ``cost`` and ``import`` (docs/importers.md, "Filters").
WhereOption = Annotated[
    list[str] | None,
    typer.Option(
        "--where",
        metavar="SQL",
        help="Keep records where this SQL predicate holds, e.g. \"system = 'a'\" (repeatable: all must hold).",
    ),
]


def checked_where(texts: Sequence[str] | None, columns: Sequence[str] | None = None) -> tuple[str, ...] | None:
    """Check ``--where`` before any file is read (a usage error, exit 2); the columns to read for it.

    Parameters
    ----------
    texts
        The ``--where`` expressions (None or empty: none given).
    columns
        The columns the command reads (None: every column).

    Returns
    -------
    tuple of str or None
        ``columns`` with the filters' fields added (see :func:`gatestats.records.where.where_columns`).

    Raises
    ------
    typer.Exit
        An expression refused (exit 2, the message names ``--where``).
    """
    if not texts:
        return None if columns is None else tuple(columns)
    from gatestats.records.where import WhereError, where_columns

    try:
        return where_columns(columns, texts)
    except WhereError as exc:
        raise usage_error(str(exc)) from None


def where_records(
    paths: Sequence[str | os.PathLike[str]], texts: Sequence[str] | None, *, columns: Sequence[str] | None = None
) -> pl.DataFrame:
    """The records of ``paths`` that every ``--where`` keeps; the count kept said on standard error.

    Without ``--where``: exactly ``load_cli_records(paths, columns=columns)``.

    Parameters
    ----------
    paths
        The record files.
    texts
        The ``--where`` expressions.
    columns
        The columns the command reads (None: every column).

    Returns
    -------
    polars.DataFrame
        The records kept, with ``columns`` only.

    Raises
    ------
    typer.Exit
        An expression refused (exit 2).
    WhereError
        No record kept, or a trial split (exit 1 through ``reports_errors``).
    """
    if not texts:
        unfiltered: pl.DataFrame = load_cli_records(paths, columns=columns)[0]
        return unfiltered
    wanted = checked_where(texts, columns)
    from gatestats.records.where import apply_where

    frame = load_cli_records(paths, columns=wanted)[0]
    source = ", ".join(str(path) for path in paths)
    kept = apply_where(frame, texts, source=source, columns=columns)
    print(kept.message, file=sys.stderr)
    return kept.records


def paired_columns(by: str) -> tuple[str, ...] | None:
    """The record columns ``compare`` and ``rank`` read (``--by BY`` names the system), for :func:`where_records`.

    The paired tables read the system column, the trial key and the outcome only
    (:func:`gatestats.paired.pairing.build_case_table`): the columns of ``analyze``
    (:func:`gatestats.cli.analyze.analysis_columns`). With them named, a file whose every block the line
    pass proved is read once, its columns taken from the bytes it proved (docs/integrity.md), where a
    read of every column had polars parse the whole file again (issue 28 item 2: 0.3 CPU-s of
    ``compare`` on the bundled SWE-bench file). Every record is still checked on every column.

    Parameters
    ----------
    by
        The ``--by`` option.

    Returns
    -------
    tuple of str or None
        The columns; ``None`` (every column) when ``by`` is not a field of the contract.
    """
    from gatestats.cli.analyze import analysis_columns  # the command modules import this one

    return analysis_columns(by)
