"""``gatestats cost``: cost per accepted outcome per system (or slice), with spend and time columns."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from gatestats.cli._common import (
    BootstrapSeedOption,
    ConfidenceLevelOption,
    RecordFilesArgument,
    ResamplesOption,
    checked_bootstrap_options,
    comma_separated,
    reports_errors,
)
from gatestats.cli._publish import FormatOption, LabelOption, LabelsFileOption, OutputOption, checked_publishing, emit
from gatestats.cli._where import WhereOption, checked_where, where_records

if TYPE_CHECKING:
    from rich.console import Console

    from gatestats.cost import CostAnalysis
    from gatestats.publish.labels import Labels

__all__ = ["cost_columns", "cost_command", "render_cost"]


def render_cost(result: CostAnalysis, console: Console, *, labels: Labels | None = None) -> None:
    """Print the published table of ``result`` (:meth:`CostAnalysis.table`) with every reason and note below it.

    The terminal shows what ``--format markdown`` (or any format) shows: one builder,
    :func:`gatestats.cost.published.cost_analysis_table`.

    Parameters
    ----------
    result
        The cost per accepted outcome of every group.
    console
        Where to print.
    labels
        Display names of the group values (None: the values).
    """
    from gatestats.publish.formats import render

    text = render(result.table(labels), "terminal", width=console.width)
    console.print(text, end="", markup=False, highlight=False, soft_wrap=True)


def _rate(value: float | None, hint: str) -> None:
    if value is not None and not (math.isfinite(value) and value >= 0):
        msg = f"must be a finite number >= 0 (got {value})"
        raise typer.BadParameter(msg, param_hint=hint)


def cost_columns(by: Sequence[str]) -> tuple[str, ...] | None:
    """The record columns ``gatestats cost --by BY`` reads, for ``load_records(columns=...)``.

    Every record is still checked on every column; only these are kept in memory:
    :data:`gatestats.cost.RECORD_COLUMNS` (what the estimate reads), ``slices`` for the
    grouping ``slice``, and the other ``by`` columns.

    Parameters
    ----------
    by
        The grouping columns of ``--by``.

    Returns
    -------
    tuple of str or None
        The columns; ``None`` (every column) when a ``by`` name is neither a field of the
        contract nor ``slice``, so that the analysis refuses it with the list of every column,
        exactly as it always has.

    Examples
    --------
    >>> from gatestats.cost import RECORD_COLUMNS
    >>> cost_columns(["system"]) == RECORD_COLUMNS
    True
    >>> cost_columns(["slice", "model_id"])[-2:], cost_columns(["team"])
    (('slices', 'model_id'), None)
    """
    from gatestats.cost import RECORD_COLUMNS
    from gatestats.records.contract import POLARS_SCHEMA

    named = ["slices" if name == "slice" else name for name in by]
    if any(name not in POLARS_SCHEMA for name in named):
        return None
    return tuple(dict.fromkeys((*RECORD_COLUMNS, *named)))


# The options whose declaration does not fit on one line of the signature.
_ByOption = Annotated[
    str, typer.Option(help="Grouping columns, comma-separated; 'slice' explodes each record's slices.")
]
_ReviewRateOption = Annotated[
    float | None,
    typer.Option("--review-rate", metavar="USD_PER_HOUR", help="Price of an hour of human review/correction."),
]
_MachineRateOption = Annotated[
    float | None,
    typer.Option(
        "--machine-rate",
        metavar="USD_PER_HOUR",
        help="Impute execution spend from machine_seconds where an attempt has none.",
    ),
]
_MaxCostOption = Annotated[
    float | None,
    typer.Option(
        "--max-cost-per-attempt",
        metavar="USD",
        help="Upper cost of one attempt for the bounds of missing costs (default: the largest observed).",
    ),
]


@reports_errors
def cost_command(
    records: RecordFilesArgument,
    by: _ByOption = "system",
    review_rate: _ReviewRateOption = None,
    machine_rate: _MachineRateOption = None,
    confidence_level: ConfidenceLevelOption = 0.95,
    n_resamples: ResamplesOption = 2000,
    seed: BootstrapSeedOption = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of the table.")] = False,
    where: WhereOption = None,
    fmt: FormatOption = "terminal",
    output: OutputOption = None,
    label: LabelOption = None,
    labels: LabelsFileOption = None,
    max_cost_per_attempt: _MaxCostOption = None,
) -> None:
    """Cost per accepted outcome: spend of every attempt plus review time, over accepted outcomes.

    \f
    Parameters
    ----------
    records
        Record files.
    by
        Grouping columns, comma-separated.
    review_rate, machine_rate
        ``review_rate_usd_per_hour`` and ``machine_rate_usd_per_hour`` of
        :func:`gatestats.cost.cost_per_accepted`.
    confidence_level, n_resamples, seed
        As in :func:`gatestats.cost.cost_per_accepted`.
    as_json, where
        Print the JSON object instead of the table; ``--where`` filters (all must hold), applied first.
    fmt, output, label, labels
        The publishing options of :mod:`gatestats.cli._publish`.
    max_cost_per_attempt
        ``max_cost_per_attempt_usd`` of :func:`gatestats.cost.cost_per_accepted`.

    Raises
    ------
    typer.BadParameter
        An invalid option (exit 2).
    """
    columns = comma_separated(by)
    if not columns:
        msg = f"expected one or more column names, comma-separated (got {by!r})"
        raise typer.BadParameter(msg, param_hint="--by")
    checked_bootstrap_options(confidence_level, n_resamples, seed)
    _rate(review_rate, "--review-rate")
    _rate(machine_rate, "--machine-rate")
    _rate(max_cost_per_attempt, "--max-cost-per-attempt")
    checked_where(where)
    publishing = checked_publishing(
        fmt=fmt, as_json=as_json, output=output, label=label, labels_file=labels, inputs=records
    )
    from gatestats.cost import cost_per_accepted

    result = cost_per_accepted(
        where_records(records, where, columns=cost_columns(columns)),
        by=columns,
        review_rate_usd_per_hour=review_rate,
        machine_rate_usd_per_hour=machine_rate,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
        max_cost_per_attempt_usd=max_cost_per_attempt,
    )
    emit(
        publishing,
        table=result.table,
        payload=lambda: {**result.to_dict(), "records": [str(p) for p in records]},
        terminal=functools.partial(render_cost, result, labels=publishing.labels),
        width=160,
    )
