"""``gatestats cost``: cost per accepted outcome per system (or slice), with spend and time columns."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

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
from gatestats.publish.cells import hours_cell, money_cell

if TYPE_CHECKING:
    from gatestats.cost import CostAnalysis, CostEstimate
    from gatestats.publish.labels import Labels

__all__ = ["cost_columns", "cost_command", "render_cost"]


def _label(value: object, labels: Labels | None = None) -> str:
    return "(none)" if value is None else labels(str(value)) if labels else str(value)


def _cpa_cell(g: CostEstimate) -> Text:
    bounds = g.missing_costs
    if bounds is not None and bounds.estimate_low is not None and bounds.estimate_high is not None:
        interval = (
            "no interval"
            if bounds.ci_low is None or bounds.ci_high is None
            else (f"{money_cell(bounds.ci_low)}, {money_cell(bounds.ci_high)}")
        )
        return Text(f"{money_cell(bounds.estimate_low)}–{money_cell(bounds.estimate_high)}\n[{interval}]")
    if g.status != "ok" or g.estimate is None:
        return Text("insufficient evidence")
    if g.ci_low is None or g.ci_high is None:
        return Text(f"{money_cell(g.estimate)} [no interval]")
    return Text(f"{money_cell(g.estimate)} [{money_cell(g.ci_low)}, {money_cell(g.ci_high)}]")


def _spend_cell(g: CostEstimate) -> str:
    """The total spend, or the known part with the count of attempts lacking a cost beside it."""
    missing = g.missing_costs
    if missing is None or missing.known_total_usd is None:
        return money_cell(g.total_spend_usd)
    return f"≥{money_cell(missing.known_total_usd)}"


def _missing_note(name: str, g: CostEstimate, console: Console) -> None:
    """The known spend, the missing count with ids, and the bounds of a group lacking costs."""
    from gatestats.cost.missing import CAP_SOURCES

    m = g.missing_costs
    if m is None:
        return
    text = (
        f"  {name}: {m.n_attempts_missing} of {g.attempts} attempt(s) carry no cost (e.g. record(s) {m.ids_text}); "
        f"known spend {money_cell(m.known_spend_usd)} USD"
    )
    if m.cap_usd_per_attempt is not None:
        text += (
            f"; the missing could add 0 to {money_cell(m.missing_spend_high_usd)} USD ({m.n_attempts_missing} x "
            f"{money_cell(m.cap_usd_per_attempt)} USD, {CAP_SOURCES[m.cap_source]})"
        )
    if m.estimate_low is not None and m.estimate_high is not None:
        text += f"; cost per accepted outcome between {money_cell(m.estimate_low)} and {money_cell(m.estimate_high)}"
        if m.ci_low is not None and m.ci_high is not None:
            text += (
                f", {m.confidence_level:.0%} interval of the bounds [{money_cell(m.ci_low)}, {money_cell(m.ci_high)}] "
                "(union of the intervals with the missing costs at 0 and at the cap)"
            )
        else:
            text += f"; no interval: {m.interval_reason}"
    else:
        text += f"; no bounds: {m.interval_reason}"
    if m.complete_case_estimate is not None:
        text += (
            f"; over the attempts with a cost alone {money_cell(m.complete_case_estimate)} per accepted outcome "
            "(assumes the lost costs are like the known ones)"
        )
    console.print(text, highlight=False, markup=False)


def _table(result: CostAnalysis, labels: Labels | None = None) -> Table:
    level = f"{result.confidence_level:.0%}"
    title = f"Cost per accepted outcome (USD) by {', '.join(result.by)}"
    table = Table(title=title, title_justify="left")
    for name in result.by:
        table.add_column(name)
    table.add_column(f"per accepted [{level} CI]", justify="right", no_wrap=True)
    for name in ("accepted/trials", "attempts (infra)", "spend", "model", "tool", "execution", "review"):
        table.add_column(name, justify="right", no_wrap=True)
    missing = any(g.missing_costs is not None for g in result.groups)
    if missing:
        table.add_column("no cost", justify="right", no_wrap=True)
    for name in ("human h", "machine h", "calendar h"):
        table.add_column(name, justify="right", no_wrap=True)
    for g in result.groups:
        table.add_row(
            *(Text(_label(v, labels)) for _, v in g.group),
            _cpa_cell(g),
            f"{g.accepted}/{g.trials}",
            f"{g.attempts} ({g.attempts_infra_error})",
            _spend_cell(g),
            money_cell(g.model_usd),
            money_cell(g.tool_usd),
            money_cell(g.execution_usd),
            money_cell(g.review_usd),
            *([str(g.n_attempts_cost_unknown)] if missing else []),
            hours_cell(g.human_hours),
            hours_cell(g.machine_hours, g.n_attempts_missing_machine_seconds),
            hours_cell(g.calendar_hours),
        )
    return table


def render_cost(result: CostAnalysis, console: Console, *, labels: Labels | None = None) -> None:
    """Print the table and, below it, every reason and note behind it.

    Parameters
    ----------
    result
        The cost per accepted outcome of every group.
    console
        Where to print.
    labels
        Display names of the group values (None: the values).
    """
    console.print(_table(result, labels))
    for g in result.groups:
        name = ", ".join(f"{k}={_label(v, labels)}" for k, v in g.group)
        if g.status != "ok":
            console.print(f"  {name}: insufficient evidence: {g.reason}", highlight=False, markup=False)
        elif g.interval_status != "ok":
            console.print(f"  {name}: no interval: {g.interval_reason}", highlight=False, markup=False)
        _missing_note(name, g, console)
        if g.n_resamples_no_accepted:
            console.print(
                f"  {name}: {g.n_resamples_no_accepted} of {g.n_resamples} resamples had no accepted outcome "
                "(kept as infinite cost)",
                highlight=False,
                markup=False,
            )
        if g.n_attempts_imputed:
            console.print(
                f"  {name}: execution spend of {g.n_attempts_imputed} attempt(s) imputed from machine_seconds at "
                f"{result.machine_rate_usd_per_hour} USD/h ({money_cell(g.imputed_execution_usd)} USD)",
                highlight=False,
                markup=False,
            )
        if g.n_attempts_missing_machine_seconds and g.machine_hours is not None:
            console.print(
                f"  {name}: {g.n_attempts_missing_machine_seconds} attempt(s) lack machine_seconds "
                "(machine hours are a lower bound)",
                highlight=False,
                markup=False,
            )
    review = (
        f"review at {result.review_rate_usd_per_hour} USD/h"
        if result.review_rate_usd_per_hour is not None
        else "no review time recorded"
    )
    console.print(
        f"  spend = every attempt (failed, retried, infra-errored) + merged human time x rate ({review}); "
        f"{result.method} bootstrap over cases, {result.n_resamples} resamples, seed {result.seed}"
        + (
            ""
            if result.max_cost_per_attempt_usd is None
            else f"; a missing cost is bounded by {money_cell(result.max_cost_per_attempt_usd)} USD per attempt (given)"
        ),
        highlight=False,
        markup=False,
    )


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
