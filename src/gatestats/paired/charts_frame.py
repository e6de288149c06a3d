"""The forest frame of paired comparisons (docs/publish.md, "Frames the charts read").

One row per comparison and interval kind: ``label`` (``candidate − baseline``), ``estimate`` (the
difference of pass rates), ``ci_low``, ``ci_high`` (null when the comparison has no interval),
``interval`` (``per-comparison``, or a simultaneous kind given by the caller) and ``significant``:
the decision at ``1 − confidence_level`` on the adjusted p-value where the family adjusted it, on the
raw p-value for a single comparison, null when there is no p-value (insufficient evidence).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import polars as pl

from gatestats.publish.charts import FOREST_SCHEMA, INTERVAL_KINDS

if TYPE_CHECKING:
    from gatestats.paired.result import Comparison

__all__ = ["comparison_label", "forest_frame"]

#: ``(baseline, candidate)`` → ``(ci_low, ci_high)`` of one simultaneous interval kind.
SimultaneousIntervals = Mapping[tuple[str, str], tuple[float | None, float | None]]


def comparison_label(comparison: Comparison, labels: Callable[[str], str] | None = None) -> str:
    """``candidate − baseline``, the row label of a comparison in charts.

    Parameters
    ----------
    comparison
        The comparison.
    labels
        Display names of the systems (None: their ids).

    Returns
    -------
    str
        Its label.
    """
    shown = labels or str
    return f"{shown(comparison.candidate)} − {shown(comparison.baseline)}"


def _significant(comparison: Comparison, *, adjusted: bool) -> bool | None:
    p = comparison.pvalue_adjusted if adjusted else comparison.pvalue
    if p is None:
        return None
    return bool(p <= round(1 - comparison.confidence_level, 12))


def forest_frame(
    comparisons: Sequence[Comparison],
    *,
    adjusted: bool,
    simultaneous: Mapping[str, SimultaneousIntervals] | None = None,
    labels: Callable[[str], str] | None = None,
) -> pl.DataFrame:
    """The forest frame of ``comparisons``: their per-comparison intervals, and simultaneous ones if given.

    Parameters
    ----------
    comparisons
        The comparisons, in the order drawn (top to bottom).
    adjusted
        Decide on ``pvalue_adjusted`` (a family) rather than ``pvalue`` (one comparison).
    simultaneous
        Interval kind (``simultaneous (bonferroni)`` or ``simultaneous (holm)``) → the interval of
        each ``(baseline, candidate)``; a pair left out has no row of that kind.
    labels
        Display names of the systems (None: their ids).

    Returns
    -------
    polars.DataFrame
        The frame :func:`gatestats.publish.charts.forest` reads.

    Raises
    ------
    ValueError
        An unknown interval kind.
    """
    rows = []
    for x in comparisons:
        label, decision = comparison_label(x, labels), _significant(x, adjusted=adjusted)
        common = {"label": label, "estimate": x.diff, "significant": decision}
        rows.append({**common, "ci_low": x.diff_ci_low, "ci_high": x.diff_ci_high, "interval": INTERVAL_KINDS[0]})
        for kind, intervals in (simultaneous or {}).items():
            if kind not in INTERVAL_KINDS[1:]:
                msg = f"simultaneous interval kind: expected one of {list(INTERVAL_KINDS[1:])} (got {kind!r})"
                raise ValueError(msg)
            if (x.baseline, x.candidate) in intervals:
                low, high = intervals[x.baseline, x.candidate]
                rows.append({**common, "ci_low": low, "ci_high": high, "interval": kind})
    return pl.DataFrame(rows, schema=dict(FOREST_SCHEMA), orient="row")
