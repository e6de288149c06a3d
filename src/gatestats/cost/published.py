"""Published tables of cost results (``CostAnalysis.table()``, ``CostRatio.table()``).

``CostAnalysis``: one row per group (system, slice ...): the cost per accepted outcome with its
interval in one cell, accepted outcomes beside the trials (``12/40``), attempts with the infra
errors among them, the spend and its parts, and the hours. ``CostRatio``: one row, the candidate's
cost per accepted outcome over the baseline's on their shared cases, with each side beside it. A
group without an estimate says ``insufficient evidence`` (never 0); the notes say why. A group with
attempts lacking a cost shows what is known (docs/cost.md, "Missing costs"): the bounds on its cost
per accepted outcome with the interval of the bounds, the known spend as a lower bound (``≥``), the
count in a ``no cost`` column, and a note with the cap and where it came from (the largest observed
cost is an assumption, and the note says so). The numeric frame is the result's ``to_frame()`` with
a label column beside each id column (and, when a group lacks costs, the bounds beside it).

These builders are the only ones: ``gatestats cost`` draws its terminal table from
:func:`cost_analysis_table` too, so the terminal and every published format say the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import polars as pl

from gatestats.cost.missing import CAP_SOURCES
from gatestats.publish.cells import count_cell, hours_cell, money_bounds_cell, money_cell
from gatestats.publish.formats import Column, PublishedTable
from gatestats.publish.labels import Labels

if TYPE_CHECKING:
    from gatestats.cost.per_accepted import CostAnalysis, CostEstimate
    from gatestats.cost.ratio import CostRatio

__all__ = ["cost_analysis_table", "cost_ratio_table"]

_INSUFFICIENT = "insufficient evidence"


def _with_interval(estimate: float | None, low: float | None, high: float | None, status: str) -> str:
    if status != "ok" or estimate is None:
        return _INSUFFICIENT
    if low is None or high is None:
        return f"{money_cell(estimate)} [no interval]"
    return f"{money_cell(estimate)} [{money_cell(low)}, {money_cell(high)}]"


def _shows_bounds(g: CostEstimate) -> bool:
    """Whether the group's cell shows the bounds of missing costs (then its note says why there is no estimate)."""
    m = g.missing_costs
    return m is not None and m.estimate_low is not None and m.estimate_high is not None


def _per_accepted_cell(g: CostEstimate) -> str:
    """The estimate with its interval; with missing costs the bounds with the interval of the bounds."""
    m = g.missing_costs
    if m is not None and _shows_bounds(g):
        return money_bounds_cell(m.estimate_low, m.estimate_high, m.ci_low, m.ci_high)
    return _with_interval(g.estimate, g.ci_low, g.ci_high, g.status)


def _spend_cell(g: CostEstimate) -> str:
    """The total spend; with missing costs the known part as a lower bound (``≥``), never the total."""
    missing = g.missing_costs
    if missing is None:
        return money_cell(g.total_spend_usd)
    return money_cell(missing.known_total_usd, missing=missing.n_attempts_missing)


def _group_row(g: CostEstimate, labels: Labels, *, missing_column: bool) -> tuple[str, ...]:
    ids = tuple("(none)" if v is None else labels(str(v)) for _, v in g.group)
    return (
        *ids,
        _per_accepted_cell(g),
        count_cell(g.accepted, g.trials),
        f"{g.attempts} ({g.attempts_infra_error})",
        _spend_cell(g),
        *(money_cell(v) for v in (g.model_usd, g.tool_usd, g.execution_usd, g.review_usd)),
        *([str(g.n_attempts_cost_unknown)] if missing_column else []),
        hours_cell(g.human_hours),
        hours_cell(g.machine_hours, g.n_attempts_missing_machine_seconds),
        hours_cell(g.calendar_hours),
    )


def _missing_costs_note(name: str, g: CostEstimate) -> str | None:
    """The known spend, the missing count with ids, the cap with its source, and the bounds of a group lacking costs."""
    m = g.missing_costs
    if m is None:
        return None
    text = (
        f"{name}: {m.n_attempts_missing} of {g.attempts} attempt(s) carry no cost (e.g. record(s) {m.ids_text}; "
        f"a missing cost is never counted as 0); known spend {money_cell(m.known_spend_usd)} USD"
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
    return text


def _group_notes(result: CostAnalysis, labels: Labels) -> list[str]:
    notes: list[str] = []
    for g in result.groups:
        name = ", ".join(f"{k}={'(none)' if v is None else labels(str(v))}" for k, v in g.group)
        if _shows_bounds(g):
            pass  # no estimate because costs are missing: the note of the bounds below says so, once
        elif g.status != "ok":
            notes.append(f"{name}: {_INSUFFICIENT}: {g.reason}")
        elif g.interval_status != "ok":
            notes.append(f"{name}: no interval: {g.interval_reason}")
        missing = _missing_costs_note(name, g)
        if missing is not None:
            notes.append(missing)
        if g.n_resamples_no_accepted:
            notes.append(
                f"{name}: {g.n_resamples_no_accepted} of {g.n_resamples} resamples had no accepted outcome "
                "(kept as infinite cost)"
            )
        if g.n_attempts_imputed:
            notes.append(
                f"{name}: execution spend of {g.n_attempts_imputed} attempt(s) imputed from machine_seconds at "
                f"{result.machine_rate_usd_per_hour} USD/h ({money_cell(g.imputed_execution_usd)} USD)"
            )
        if g.n_attempts_missing_machine_seconds and g.machine_hours is not None:
            notes.append(
                f"{name}: {g.n_attempts_missing_machine_seconds} attempt(s) lack machine_seconds "
                "(machine hours are a lower bound)"
            )
    return notes


def _method_note(result: CostAnalysis) -> str:
    """What the spend counts and how the interval is built (the line under every cost table)."""
    review = (
        f"review at {result.review_rate_usd_per_hour} USD/h"
        if result.review_rate_usd_per_hour is not None
        else "no review time recorded"
    )
    cap = (
        ""
        if result.max_cost_per_attempt_usd is None
        else f"; a missing cost is bounded by {money_cell(result.max_cost_per_attempt_usd)} USD per attempt (given)"
    )
    return (
        f"spend in USD = every attempt (failed, retried, infra-errored) + merged human time x rate ({review}); "
        f"interval: {result.method} bootstrap over cases (case groups), {result.n_resamples} resamples, "
        f"seed {result.seed}{cap}"
    )


#: The columns the published frame adds when a group lacks costs (``MissingCosts`` field, column name).
_MISSING_COLUMNS: Final = (
    ("known_total_usd", "known_total_usd", pl.Float64),
    ("estimate_low", "bounds_low", pl.Float64),
    ("estimate_high", "bounds_high", pl.Float64),
    ("ci_low", "bounds_ci_low", pl.Float64),
    ("ci_high", "bounds_ci_high", pl.Float64),
    ("cap_usd_per_attempt", "cap_usd_per_attempt", pl.Float64),
    ("cap_source", "cap_source", pl.String),
)


def _with_missing_costs(frame: pl.DataFrame, result: CostAnalysis) -> pl.DataFrame:
    """``frame`` with the bounds of missing costs beside each group (only when a group lacks costs)."""
    if all(g.missing_costs is None for g in result.groups):
        return frame
    return frame.with_columns(
        pl.Series(
            column,
            [None if g.missing_costs is None else getattr(g.missing_costs, name) for g in result.groups],
            dtype=dtype,
        )
        for name, column, dtype in _MISSING_COLUMNS
    )


def _labelled(frame: pl.DataFrame, columns: tuple[str, ...], labels: Labels) -> pl.DataFrame:
    """``frame`` with ``<column>_label`` beside each id column (null stays null)."""
    return frame.with_columns(
        pl.Series(f"{c}_label", [None if v is None else labels(str(v)) for v in frame[c]], dtype=pl.String)
        for c in columns
    )


def cost_analysis_table(result: CostAnalysis, labels: Labels | None = None) -> PublishedTable:
    """One row per group: cost per accepted outcome with its interval, counts, spend and hours.

    Parameters
    ----------
    result
        The cost analysis.
    labels
        Display names of the group values (systems, slices ...; each labelled name must be one).

    Returns
    -------
    PublishedTable
        The table; its ``data`` is ``result.to_frame()`` with a ``<by>_label`` column per ``by`` column.

    Raises
    ------
    LabelsError
        A labelled name that is none of the group values.
    """
    chosen = labels or Labels()
    chosen.check_known(str(v) for g in result.groups for _, v in g.group if v is not None)
    level = f"{result.confidence_level:.0%}"
    missing = any(g.missing_costs is not None for g in result.groups)
    headers = [*result.by, f"per accepted (USD) [{level} CI]", "accepted/trials", "attempts (infra)", "spend"]
    headers += ["model", "tool", "execution", "review", *(["no cost"] if missing else [])]
    headers += ["human h", "machine h", "calendar h"]
    return PublishedTable(
        title=f"Cost per accepted outcome (USD) by {', '.join(result.by)}",
        columns=tuple(Column(header=h, numeric=h not in result.by) for h in headers),
        rows=tuple(_group_row(g, chosen, missing_column=missing) for g in result.groups),
        data=_labelled(_with_missing_costs(result.to_frame(), result), result.by, chosen),
        notes=(*_group_notes(result, chosen), _method_note(result)),
    )


def cost_ratio_table(ratio: CostRatio, labels: Labels | None = None) -> PublishedTable:
    """One row: the candidate's cost per accepted outcome over the baseline's, each side beside it.

    Parameters
    ----------
    ratio
        The cost ratio.
    labels
        Display names of the two systems.

    Returns
    -------
    PublishedTable
        The table; its ``data`` is ``ratio.to_frame()`` with ``baseline_label`` and ``candidate_label``.

    Raises
    ------
    LabelsError
        A labelled name that is neither system.
    """
    chosen = labels or Labels()
    chosen.check_known((ratio.baseline, ratio.candidate))
    level = f"{ratio.confidence_level:.0%}"
    headers = ["baseline", "candidate", "paired cases", "baseline per accepted", "candidate per accepted"]
    headers += ["accepted baseline / candidate", f"ratio candidate/baseline [{level} CI]"]
    row = (
        chosen(ratio.baseline),
        chosen(ratio.candidate),
        str(ratio.n_cases),
        money_cell(ratio.baseline_cpa),
        money_cell(ratio.candidate_cpa),
        f"{ratio.baseline_accepted} / {ratio.candidate_accepted}",
        _with_interval(ratio.ratio, ratio.ci_low, ratio.ci_high, ratio.status),
    )
    notes = [
        f"Interval: paired bootstrap over shared cases, seed {ratio.seed}; a ratio below 1: the candidate is cheaper."
    ]
    if ratio.status != "ok":
        notes.append(f"{_INSUFFICIENT}: {ratio.reason}")
    return PublishedTable(
        title=f"Cost per accepted outcome: {chosen(ratio.candidate)} over {chosen(ratio.baseline)}"
        + (f" (slice {ratio.slice})" if ratio.slice else ""),
        columns=tuple(Column(header=h, numeric=h not in ("baseline", "candidate")) for h in headers),
        rows=(row,),
        data=_labelled(ratio.to_frame(), ("baseline", "candidate"), chosen),
        notes=tuple(notes),
    )
