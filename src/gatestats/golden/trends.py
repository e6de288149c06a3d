"""Failure-class trends: which classes the recent promotions and failures fall into, case by case.

"8 of the last 10 promoted cases are policy_misread" is one prompt bug, not eight: each class is
counted once per case (a case with five failed trials is one failed case), out of the cases, with
a Wilson score interval (Wilson 1927) on the share.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from gatestats.estimators import wilson_interval
from gatestats.vocabulary import FAILING_OUTCOMES, UNCLASSIFIED

__all__ = ["TrendRow", "Trends", "failed_case_rows", "failure_class_trends"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TrendRow:
    """One failure class in one source: ``count`` of ``n`` cases, the share and its interval."""

    source: Literal["promotions", "failures"]
    failure_class: str
    count: int
    n: int
    share: float
    low: float
    high: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Trends:
    """Failure-class counts for the last promotions and for the failed cases, with intervals."""

    rows: tuple[TrendRow, ...]
    last: int
    promotions: int
    failed_cases: int
    confidence_level: float

    def to_frame(self) -> pl.DataFrame:
        """One row per (source, class): source, failure_class, count, n, share, low, high.

        Returns
        -------
        polars.DataFrame
            Those columns, in that order.
        """
        schema = {
            "source": pl.String,
            "failure_class": pl.String,
            "count": pl.Int64,
            "n": pl.Int64,
            "share": pl.Float64,
            "low": pl.Float64,
            "high": pl.Float64,
        }
        return pl.DataFrame([_row(r) for r in self.rows], schema=schema)


def _row(r: TrendRow) -> dict[str, object]:
    return {k: getattr(r, k) for k in ("source", "failure_class", "count", "n", "share", "low", "high")}


def _rows(
    source: Literal["promotions", "failures"], counts: Counter[str], n: int, confidence_level: float
) -> list[TrendRow]:
    rows = []
    for failure_class, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        low, high = wilson_interval(count / n, n, confidence_level=confidence_level)
        rows.append(
            TrendRow(source=source, failure_class=failure_class, count=count, n=n, share=count / n, low=low, high=high)
        )
    return rows


def failure_class_trends(
    events: Sequence[Mapping[str, Any]],
    *,
    last: int = 10,
    records: pl.DataFrame | pl.LazyFrame | None = None,
    classes: Mapping[str, str] | None = None,
    confidence_level: float = 0.95,
) -> Trends:
    """Count failure classes among the last ``last`` promotions and among the cases that failed.

    Parameters
    ----------
    events
        The golden set's events (``gatestats.golden.events``); revisions of a case are not promotions.
    last
        How many of the most recent promotions to count (positive).
    records
        Run records (optional): a case with at least one ``failed`` or ``resource_killed`` trial is
        a failed case; its class is the record's ``failure_class``, else ``classes[case_id]``.
    classes
        Case id -> failure class (``gatestats.golden.failure_class_of``).
    confidence_level
        Of the Wilson intervals, in (0, 1).

    Returns
    -------
    Trends
        Rows sorted by count within each source. With no promotion (no failed case) that source
        has no rows: there is nothing to estimate, and no share of 0 is invented.

    Raises
    ------
    ValueError
        ``last`` < 1, or ``confidence_level`` outside (0, 1) when a share is estimated.

    Examples
    --------
    >>> ev = [{"event": "proposed", "case_id": f"c{i}", "failure_class": "policy_misread"} for i in range(8)]
    >>> ev += [{"event": "proposed", "case_id": "t1", "failure_class": "tool_misuse"},
    ...        {"event": "proposed", "case_id": "t2", "failure_class": "tool_misuse"}]
    >>> row = failure_class_trends(ev, last=10).rows[0]
    >>> row.failure_class, row.count, row.n, round(row.low, 4), round(row.high, 4)
    ('policy_misread', 8, 10, 0.4902, 0.9433)
    """
    if last < 1:
        msg = f"last must be a positive number of promotions (got {last})"
        raise ValueError(msg)
    promotions = [e for e in events if e.get("event") == "proposed" and not e.get("revision_of")][-last:]
    promoted = Counter(str(e.get("failure_class") or UNCLASSIFIED) for e in promotions)
    rows = _rows("promotions", promoted, len(promotions), confidence_level) if promotions else []
    failed_cases = 0
    if records is not None:
        frame = records.lazy() if isinstance(records, pl.DataFrame) else records
        columns = frame.collect_schema().names()
        has_class = "failure_class" in columns
        per_case = (
            frame.filter(pl.col("outcome").is_in(FAILING_OUTCOMES))
            .group_by("case_id")
            .agg(
                pl.col("failure_class").drop_nulls().first()
                if has_class
                else pl.lit(None, dtype=pl.String).alias("failure_class")
            )
            .collect()
        )
        failed_cases = per_case.height
        rows += failed_case_rows(per_case, classes=classes, confidence_level=confidence_level)
    return Trends(
        rows=tuple(rows),
        last=last,
        promotions=len(promotions),
        failed_cases=failed_cases,
        confidence_level=confidence_level,
    )


def failed_case_rows(
    per_case: pl.DataFrame, *, classes: Mapping[str, str] | None = None, confidence_level: float = 0.95
) -> list[TrendRow]:
    """The ``failures`` rows of :func:`failure_class_trends` from its failed cases, one row each.

    Parameters
    ----------
    per_case
        One row per failed case: ``case_id`` and its records' first non-null ``failure_class``.
    classes
        Case id -> failure class, for a case whose records name none.
    confidence_level
        Of the Wilson intervals, in (0, 1).

    Returns
    -------
    list of TrendRow
        Sorted by count, then class; empty without a failed case (no share of 0 is invented).

    Raises
    ------
    ValueError
        ``confidence_level`` outside (0, 1) when a share is estimated.

    Examples
    --------
    >>> per_case = pl.DataFrame({"case_id": ["a", "b", "c"], "failure_class": ["x", None, "x"]})
    >>> [(r.failure_class, r.count, r.n) for r in failed_case_rows(per_case)]
    [('x', 2, 3), ('(unclassified)', 1, 3)]
    """
    if per_case.height == 0:
        return []
    lookup = classes or {}
    failed = Counter(
        str(fc or lookup.get(cid) or UNCLASSIFIED)
        for cid, fc in per_case.select("case_id", "failure_class").iter_rows()
    )
    return _rows("failures", failed, per_case.height, confidence_level)
