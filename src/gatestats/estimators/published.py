"""The published table of an analysis (``Analysis.table()``): one row per system and k.

Each metric (pass^k, pass@k) is one cell with its interval (``0.512 [0.468, 0.556]``) and one cell
with the exact sum over the cases beside it (``(51/2)/100``: the sum of per-case estimates over the
number of cases). An estimate that cannot be made says ``insufficient evidence`` (never 0), and the
notes say why. The numeric frame is :meth:`Analysis.to_frame` (one row per system, k and metric)
with the system's label beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from gatestats.estimators.analyze import METRICS
from gatestats.publish.cells import MISSING, estimate_cell
from gatestats.publish.labels import Labels
from gatestats.vocabulary import metric_spec

if TYPE_CHECKING:
    from gatestats.estimators.analyze import Analysis, MetricEstimate, SystemAnalysis
    from gatestats.publish.formats import PublishedTable

__all__ = ["analysis_table", "method_note", "system_counts", "system_notes"]

_INSUFFICIENT = "insufficient evidence"


def _counts(e: MetricEstimate) -> str:
    if e.numerator is None:
        return MISSING
    numerator = f"({e.numerator})" if "/" in e.numerator else e.numerator
    return f"{numerator}/{e.denominator}"


def _cells(e: MetricEstimate) -> tuple[str, str]:
    if e.status != "ok" or e.estimate is None:
        return _INSUFFICIENT, _counts(e)
    return estimate_cell(e.estimate, e.ci_low, e.ci_high), _counts(e)


def _rows(result: Analysis, system: SystemAnalysis, labels: Labels) -> list[tuple[str, ...]]:
    rows = []
    for k in result.ks:
        found = [system.get(metric, k) for metric in METRICS]
        methods = sorted({e.method for e in found if e.method})
        cells = [c for e in found for c in _cells(e)]
        rows.append((labels(system.system), str(k), str(system.n_cases), *cells, ", ".join(methods) or MISSING))
    return rows


def system_counts(system: SystemAnalysis, name: str) -> str:
    """What a system's estimates rest on: ``gpt-4o: 50 cases, 200 trials (200 valid, 84 passed, ...)``.

    Parameters
    ----------
    system
        The system's analysis.
    name
        Its name as shown (a label or the id).

    Returns
    -------
    str
        The line (the terminal's table title and a note of the published table).
    """
    return (
        f"{name}: {system.n_cases} cases, {system.n_trials} trials ({system.n_valid_trials} valid, "
        f"{system.n_passed} passed, {system.n_resource_killed} resource-killed, {system.n_infra_errors} infra errors)"
    )


def system_notes(system: SystemAnalysis, name: str) -> list[str]:
    """The notes under a system's estimates, in every rendering: why an estimate is missing, what infra
    errors mean for them, and the variance split of pass@1.

    Parameters
    ----------
    system
        The system's analysis.
    name
        Its name as shown.

    Returns
    -------
    list of str
        The notes, each starting with ``name``.
    """
    notes = [f"{name}: {_INSUFFICIENT}: {reason}" for reason in _reasons(system)]
    if system.n_infra_errors:
        notes.append(
            f"{name}: {system.n_infra_errors} infra error(s) left out: the estimates use the valid trials, which "
            "assumes the lost trials are like them (the gate bounds them instead, docs/gate.md)"
        )
    v = system.variance
    if v.status == "ok":
        notes.append(
            f"{name}: variance of pass@1: between cases {v.between_case_variance:.4f}, within cases (trials) "
            f"{v.within_case_variance:.4f}; {v.advice}"
        )
    else:
        notes.append(f"{name}: variance split: {_INSUFFICIENT}: {v.reason}")
    return notes


def method_note(result: Analysis) -> str:
    """What an interval is and what the sums mean (the last note of every rendering).

    Parameters
    ----------
    result
        The analysis.

    Returns
    -------
    str
        The note.
    """
    return (
        "Intervals treat cases (case groups where records have one) as the unit; bootstrap seed "
        f"{result.seed}, {result.n_resamples} resamples where used; sum/cases is the exact sum of the per-case "
        "estimates over the number of cases."
    )


def _reasons(system: SystemAnalysis) -> list[str]:
    return [r for r in dict.fromkeys(e.reason for e in system.estimates if e.status != "ok") if r]


def _notes(result: Analysis, labels: Labels) -> tuple[str, ...]:
    notes = []
    for system in result.systems:
        name = labels(system.system)
        notes += [system_counts(system, name), *system_notes(system, name)]
    return (*notes, method_note(result))


def analysis_table(result: Analysis, labels: Labels | None = None) -> PublishedTable:
    """One row per system and k: pass^k and pass@k with their intervals and exact sums.

    Parameters
    ----------
    result
        The analysis.
    labels
        Display names of the systems (every labelled name must be one of them).

    Returns
    -------
    PublishedTable
        The table; its ``data`` is ``result.to_frame()`` with a ``system_label`` column.

    Raises
    ------
    LabelsError
        A labelled name that is none of the systems.
    """
    from gatestats.publish.formats import Column, PublishedTable  # noqa: PLC0415 - not on the terminal's path

    chosen = labels or Labels()
    chosen.check_known(s.system for s in result.systems)
    level = f"{result.confidence_level:.0%}"
    headers = ["system", "k", "cases"]
    for metric in METRICS:
        headers += [f"{metric_spec(metric).short.format(k='k')} [{level} CI]", "sum/cases"]
    headers.append("interval")
    frame = result.to_frame()
    return PublishedTable(
        title=f"pass^k and pass@k of {len(result.systems)} system(s) by {result.by}",
        columns=tuple(Column(header=h, numeric=h not in ("system", "interval")) for h in headers),
        rows=tuple(row for system in result.systems for row in _rows(result, system, chosen)),
        data=frame.with_columns(pl.Series("system_label", [chosen(s) for s in frame["system"]], dtype=pl.String)),
        notes=_notes(result, chosen),
    )
