"""Published tables of cost results (``CostAnalysis.table()``, ``CostRatio.table()``).

``CostAnalysis``: one row per group (system, slice ...): the cost per accepted outcome with its
interval in one cell, accepted outcomes beside the trials (``12/40``), attempts with the infra
errors among them, the spend and its parts, and the hours. ``CostRatio``: one row, the candidate's
cost per accepted outcome over the baseline's on their shared cases, with each side beside it. A
group without an estimate says ``insufficient evidence`` (never 0); the notes say why. The numeric
frame is the result's ``to_frame()`` with a label column beside each id column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from gatestats.publish.cells import count_cell, hours_cell, money_cell
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


def _group_row(g: CostEstimate, labels: Labels) -> tuple[str, ...]:
    ids = tuple("(none)" if v is None else labels(str(v)) for _, v in g.group)
    return (
        *ids,
        _with_interval(g.estimate, g.ci_low, g.ci_high, g.status),
        count_cell(g.accepted, g.trials),
        f"{g.attempts} ({g.attempts_infra_error})",
        *(money_cell(v) for v in (g.total_spend_usd, g.model_usd, g.tool_usd, g.execution_usd, g.review_usd)),
        hours_cell(g.human_hours),
        hours_cell(g.machine_hours, g.n_attempts_missing_machine_seconds),
        hours_cell(g.calendar_hours),
    )


def _group_notes(result: CostAnalysis, labels: Labels) -> list[str]:
    notes = []
    for g in result.groups:
        name = ", ".join(f"{k}={'(none)' if v is None else labels(str(v))}" for k, v in g.group)
        if g.status != "ok":
            notes.append(f"{name}: {_INSUFFICIENT}: {g.reason}")
        elif g.interval_status != "ok":
            notes.append(f"{name}: no interval: {g.interval_reason}")
        if g.n_attempts_missing_machine_seconds and g.machine_hours is not None:
            notes.append(
                f"{name}: {g.n_attempts_missing_machine_seconds} attempt(s) lack machine_seconds (a lower bound)"
            )
    return notes


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
    headers = [*result.by, f"per accepted (USD) [{level} CI]", "accepted/trials", "attempts (infra)", "spend"]
    headers += ["model", "tool", "execution", "review", "human h", "machine h", "calendar h"]
    notes = [
        f"Interval: {result.method} bootstrap over cases (case groups), seed {result.seed}, "
        f"{result.n_resamples} resamples; spend in USD.",
        *_group_notes(result, chosen),
    ]
    return PublishedTable(
        title=f"Cost per accepted outcome (USD) by {', '.join(result.by)}",
        columns=tuple(Column(header=h, numeric=h not in result.by) for h in headers),
        rows=tuple(_group_row(g, chosen) for g in result.groups),
        data=_labelled(result.to_frame(), result.by, chosen),
        notes=tuple(notes),
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
