"""pass@k and pass^k per system, with case-level intervals and exact counts: :func:`analyze`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypedDict

import polars as pl

from gatestats._lazy import is_integer
from gatestats._typing import JSONObject
from gatestats.errors import find_by_key
from gatestats.estimators import small
from gatestats.estimators.interval_rules import CLT_FROM_CASES, CaseMeanInterval
from gatestats.estimators.passk import CasePairs, case_pairs, pair_values
from gatestats.estimators.summary import case_summary
from gatestats.estimators.variance import VarianceDecomposition, variance_decomposition
from gatestats.publish.notebook import Presentable
from gatestats.vocabulary import (
    ESTIMANDS,
    FrameLike,
    IntervalMethod,
    Metric,
    ResolvedIntervalMethod,
    Status,
    metric_spec,
)

if TYPE_CHECKING:
    import altair as alt
    import numpy as np
    import numpy.typing as npt

    from gatestats.publish import Labels, PublishedTable

__all__ = ["METRICS", "Analysis", "MetricEstimate", "SystemAnalysis", "analyze", "analyze_summary"]

#: The estimands :func:`analyze` reports at every k, in this order (names and labels:
#: :data:`gatestats.vocabulary.METRICS`).
METRICS: tuple[Metric, ...] = ESTIMANDS
_SHOWN_CASES = 20
#: The fields of a :class:`MetricEstimate` that are its :class:`CaseMeanInterval`'s, as they are
#: (``None`` when there is no interval).
_FROM_INTERVAL = ("ci_low", "ci_high", "se", "method", "effective_n", "n_resamples", "seed")


def _fraction_text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricEstimate:
    """pass@k or pass^k of one system at one k: estimate, interval and the counts behind them.

    ``numerator`` is the exact sum of the per-case estimates (a rational, as text) and
    ``denominator`` the number of cases, so ``estimate == numerator / denominator``.
    When ``status == "insufficient_evidence"``, estimate and interval are ``None`` and
    ``reason`` says why (for instance the cases with fewer valid trials than ``k``).
    """

    metric: Metric
    k: int
    status: Status
    reason: str | None
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    se: float | None
    method: ResolvedIntervalMethod | None
    confidence_level: float
    n_cases: int
    numerator: str | None
    denominator: int | None
    undefined_cases: tuple[str, ...]
    effective_n: float | None
    n_resamples: int | None
    seed: int | None
    _values: npt.NDArray[np.float64] | list[float] | None = field(default=None, repr=False, compare=False)
    _groups: npt.NDArray[Any] | None = field(default=None, repr=False, compare=False)
    _max_effective_n: float | None = field(default=None, repr=False, compare=False)
    _method: IntervalMethod = field(default="auto", repr=False, compare=False)

    def confidence_interval(self, confidence_level: float = 0.95) -> CaseMeanInterval:
        """Recompute the interval at another confidence level (same method, same seed).

        Parameters
        ----------
        confidence_level
            Two-sided level, in (0, 1).

        Returns
        -------
        CaseMeanInterval
            The interval by the estimate's method, or ``insufficient_evidence`` with the reason.

        Raises
        ------
        ValueError
            The estimate is undefined (no case values), or ``confidence_level`` is outside (0, 1).
        """
        if self._values is None:
            msg = f"{metric_spec(self.metric).short.format(k='k')} at k={self.k} has no interval: {self.reason}"
            raise ValueError(msg)
        from gatestats.estimators.intervals import case_mean_interval  # noqa: PLC0415 - numpy on first use

        return case_mean_interval(
            self._values,
            groups=self._groups,
            method=self._method,
            confidence_level=confidence_level,
            n_resamples=self.n_resamples or 2000,
            seed=self.seed,
            max_effective_n=self._max_effective_n,
        )

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (the ``--json`` shape of one metric)."""
        return {
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "status": self.status,
            "reason": self.reason,
            "method": self.method,
            "confidence_level": self.confidence_level,
            "se": self.se,
            "numerator": self.numerator,
            "denominator": self.denominator,
            "n_cases": self.n_cases,
            "undefined_cases": list(self.undefined_cases),
            "effective_n": self.effective_n,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemAnalysis:
    """Everything :func:`analyze` says about one system."""

    system: str
    n_cases: int
    n_trials: int
    n_valid_trials: int
    n_passed: int
    n_resource_killed: int
    n_infra_errors: int
    clustered: bool
    estimates: tuple[MetricEstimate, ...]
    variance: VarianceDecomposition
    cases: pl.DataFrame = field(repr=False, compare=False)

    def get(self, metric: Metric, k: int) -> MetricEstimate:
        """The estimate of ``metric`` at ``k``.

        Parameters
        ----------
        metric
            ``pass_hat_k`` or ``pass_at_k``.
        k
            One of the analysed k values.

        Returns
        -------
        MetricEstimate
            The estimate.

        Raises
        ------
        KeyError
            ``metric`` was not estimated at ``k``.
        """
        for estimate in self.estimates:
            if estimate.metric == metric and estimate.k == k:
                return estimate
        msg = f"no {metric} at k={k} for system {self.system!r}"
        raise KeyError(msg)

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping of this system."""
        ks = sorted({e.k for e in self.estimates})
        return {
            "system": self.system,
            "n_cases": self.n_cases,
            "n_trials": self.n_trials,
            "n_valid_trials": self.n_valid_trials,
            "n_passed": self.n_passed,
            "n_resource_killed": self.n_resource_killed,
            "n_infra_errors": self.n_infra_errors,
            "clustered": self.clustered,
            "k": {str(k): {m: self.get(m, k).to_dict() for m in METRICS} for k in ks},
            "variance": {
                "status": self.variance.status,
                "reason": self.variance.reason,
                "between_case_variance": self.variance.between_case_variance,
                "within_case_variance": self.variance.within_case_variance,
                "mean_trials_per_case": self.variance.mean_trials_per_case,
                "share_from_trials": self.variance.share_from_trials,
                "advice": self.variance.advice,
            },
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Analysis(Presentable):
    """Result of :func:`analyze`: one :class:`SystemAnalysis` per system."""

    systems: tuple[SystemAnalysis, ...]
    ks: tuple[int, ...]
    by: str
    confidence_level: float
    method: IntervalMethod
    n_resamples: int
    seed: int

    def system(self, name: str) -> SystemAnalysis:
        """The analysis of the system called ``name``.

        Parameters
        ----------
        name
            The system's name (its value of the ``by`` column).

        Returns
        -------
        SystemAnalysis
            That system's analysis.

        Raises
        ------
        KeyError
            No system of that name; the message lists the systems analysed.
        """
        return find_by_key(self.systems, lambda item: item.system, name, f"system {name!r}")

    def to_dict(self) -> JSONObject:
        """The documented ``gatestats analyze --json`` object."""
        return {
            "ks": list(self.ks),
            "by": self.by,
            "confidence_level": self.confidence_level,
            "method": self.method,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "systems": [s.to_dict() for s in self.systems],
        }

    def to_frame(self) -> pl.DataFrame:
        """One row per (system, k, metric) with fixed columns."""
        rows = [
            {
                "system": s.system,
                "k": e.k,
                "metric": e.metric,
                "status": e.status,
                "estimate": e.estimate,
                "ci_low": e.ci_low,
                "ci_high": e.ci_high,
                "method": e.method,
                "numerator": e.numerator,
                "denominator": e.denominator,
                "n_cases": e.n_cases,
                "reason": e.reason,
            }
            for s in self.systems
            for e in s.estimates
        ]
        schema = {
            "system": pl.String,
            "k": pl.Int64,
            "metric": pl.String,
            "status": pl.String,
            "estimate": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "method": pl.String,
            "numerator": pl.String,
            "denominator": pl.Int64,
            "n_cases": pl.Int64,
            "reason": pl.String,
        }
        return pl.DataFrame(rows, schema=schema, orient="row")

    def table(self, labels: Labels | None = None) -> PublishedTable:
        """The analysis as a published table (:func:`gatestats.estimators.published.analysis_table`).

        Parameters
        ----------
        labels
            Display names of the systems (None: their names).

        Returns
        -------
        PublishedTable
            The table (render it with :func:`gatestats.publish.render`).
        """
        from gatestats.estimators.published import analysis_table  # noqa: PLC0415 - the tables on first use

        return analysis_table(self, labels)

    def plot(self) -> alt.FacetChart:
        """pass@k and pass^k against k with their intervals, one line per system (altair)."""
        from gatestats.estimators.charts_frame import pass_curve_frame  # noqa: PLC0415 - charts on first use
        from gatestats.publish.charts import pass_curves  # noqa: PLC0415

        return pass_curves(pass_curve_frame(self.to_frame()), level=self.confidence_level)


def _case_label(row: Mapping[str, object]) -> str:
    version = row["case_version"]
    return str(row["case_id"]) if version is None else f"{row['case_id']}@{version}"


def _natural_key(label: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", label) if part]


class _EstimateBasis(TypedDict):
    """The fields of a metric estimate that do not depend on its interval."""

    metric: Metric
    k: int
    confidence_level: float
    n_cases: int
    undefined_cases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Pending:
    """An estimate whose cases are all defined: its basis, values and exact sum, its interval still to compute."""

    base: _EstimateBasis
    values: npt.NDArray[np.float64] | list[float]
    total: Fraction
    max_effective_n: float


def _basis(
    cases: pl.DataFrame, *, pairs: CasePairs | small.SmallPairs, metric: Metric, k: int, confidence_level: float
) -> MetricEstimate | _Pending:
    """One estimate up to its interval: finished when undefined (no case, or cases with ``n < k``)."""
    values: npt.NDArray[np.float64] | list[float]
    if isinstance(pairs, CasePairs):
        computed = pair_values(pairs, k=k, metric=metric)
        values, exact_sum = computed.values, computed.exact_sum
    else:
        values, exact_sum = pairs.values(k=k, metric=metric)
    short = pairs.case_n < k  # the cases' n, in their order: no query when every case is defined
    undefined = cases.filter(pl.Series(short)) if short.any() else None
    labels = (
        tuple(
            sorted(
                (_case_label(r) for r in undefined.select("case_id", "case_version").iter_rows(named=True)),
                key=_natural_key,
            )
        )
        if undefined is not None
        else ()
    )
    base = _EstimateBasis(
        metric=metric, k=k, confidence_level=confidence_level, n_cases=cases.height, undefined_cases=labels
    )
    empty: dict[str, Any] = dict.fromkeys(("estimate", "numerator", "denominator", *_FROM_INTERVAL))
    name = metric_spec(metric).label(k)
    if cases.height == 0:
        return MetricEstimate(status="insufficient_evidence", reason="no cases", **base, **empty)
    if labels and undefined is not None:
        shown = ", ".join(labels[:_SHOWN_CASES]) + (" ..." if len(labels) > _SHOWN_CASES else "")
        min_n = int(undefined["n"].min())  # type: ignore[arg-type]
        reason = (
            f"{name} is undefined for {len(labels)} of {cases.height} case(s) with fewer than {k} valid "
            f"trials (fewest: {min_n}): {shown}"
        )
        return MetricEstimate(status="insufficient_evidence", reason=reason, **base, **empty)
    return _Pending(base, values, exact_sum, float(cases["n"].sum()) / k)


def _finished(
    found: _Pending, interval: CaseMeanInterval, *, groups: npt.NDArray[Any] | None, method: IntervalMethod
) -> MetricEstimate:
    """The estimate of ``found`` with its interval."""
    n_cases = found.base["n_cases"]
    return MetricEstimate(
        status=interval.status,
        reason=interval.reason,
        estimate=float(found.total / n_cases) if interval.status == "ok" else None,
        numerator=_fraction_text(found.total),
        denominator=n_cases,
        **{name: getattr(interval, name) for name in _FROM_INTERVAL},
        _values=found.values,
        _groups=groups,
        _max_effective_n=found.max_effective_n,
        _method=method,
        **found.base,
    )


def _estimates(
    cases: pl.DataFrame,
    *,
    pairs: CasePairs | small.SmallPairs,
    ks: tuple[int, ...],
    groups: npt.NDArray[Any] | None,
    method: IntervalMethod,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> tuple[MetricEstimate, ...]:
    """Every metric at every k of one system's cases (k by k, metric by metric).

    The intervals of the defined estimates are computed in one batch
    (:func:`~gatestats.estimators.intervals._case_mean_intervals`: each the same as
    :func:`~gatestats.estimators.case_mean_interval` on its values, its cap ``sum(n) / k``;
    :func:`~gatestats.estimators.small.wilson_intervals`, the same in floats, for :class:`~.small.SmallPairs`).
    """
    found = [
        _basis(cases, pairs=pairs, metric=metric, k=k, confidence_level=confidence_level)
        for k in ks
        for metric in METRICS
    ]
    pending = [f for f in found if isinstance(f, _Pending)]
    batch: Callable[..., list[CaseMeanInterval]]
    if isinstance(pairs, CasePairs):
        from gatestats.estimators.intervals import _case_mean_intervals as batch  # noqa: PLC0415 - numpy's path
    else:
        batch = small.wilson_intervals
    intervals = iter(
        batch(
            [f.values for f in pending],
            groups=groups,
            method=method,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=seed,
            max_effective_n=[f.max_effective_n for f in pending],
        )
    )
    return tuple(
        _finished(f, next(intervals), groups=groups, method=method) if isinstance(f, _Pending) else f for f in found
    )


def _parse_ks(ks: int | Iterable[int]) -> tuple[int, ...]:
    items = (ks,) if isinstance(ks, int) else tuple(ks)
    if not items:
        msg = "ks must name at least one k"
        raise ValueError(msg)
    for k in items:
        if isinstance(k, bool) or not is_integer(k) or k < 1:
            msg = f"every k must be an integer >= 1 (got {k!r})"
            raise ValueError(msg)
    return tuple(sorted({int(k) for k in items}))


def analyze(
    records: FrameLike,
    *,
    ks: int | Sequence[int] = (1,),
    by: str = "system",
    confidence_level: float = 0.95,
    method: IntervalMethod = "auto",
    n_resamples: int = 2000,
    seed: int = 0,
) -> Analysis:
    """pass^k and pass@k per system for each k, with intervals that treat the case as the unit.

    Parameters
    ----------
    records
        Validated run records (see :func:`gatestats.records.load_records`), ``DataFrame`` or
        ``LazyFrame``.
    ks
        The k values.
    by
        Column that names the system (default ``system``); any string column of the records.
    confidence_level
        Two-sided confidence level of every interval.
    method
        Interval method (see :func:`gatestats.estimators.case_mean_interval`).
    n_resamples, seed
        Bootstrap resamples and the seed of its generator (recorded in the result; the same
        seed is used for every k and metric, so intervals are comparable across k).

    Returns
    -------
    Analysis
        One :class:`SystemAnalysis` per system, sorted by name.

    Raises
    ------
    TypeError, ValueError, gatestats.estimators.CaseSetError
        ``records`` not a polars frame; no k or a k below 1; an unknown or partly null ``by``
        column; an invalid interval option; a case id at several versions or in two groups.

    Examples
    --------
    >>> import polars as pl
    >>> records = pl.DataFrame({"system": "s", "case_id": ["a", "a", "b", "b"],
    ...     "case_version": None, "case_group": None, "trial": [0, 1, 0, 1], "attempt": 0,
    ...     "outcome": ["passed", "passed", "passed", "failed"]})
    >>> result = analyze(records, ks=[1, 2])
    >>> e = result.system("s").get("pass_hat_k", 2)
    >>> e.estimate, e.numerator, e.denominator, e.status
    (0.5, '1', 2, 'ok')
    """
    if not isinstance(records, pl.DataFrame | pl.LazyFrame):
        msg = f"records must be a polars DataFrame or LazyFrame (got {type(records).__name__})"
        raise TypeError(msg)
    k_values = _parse_ks(ks)
    summary = case_summary(_by_system(records.lazy(), by))
    if summary["system"].null_count():
        msg = f"by: column {by!r} is null for some records; every record needs a system"
        raise ValueError(msg)
    return _summary_analysis(
        summary,
        ks=k_values,
        by=by,
        confidence_level=confidence_level,
        method=method,
        n_resamples=n_resamples,
        seed=seed,
    )


def analyze_summary(
    summary: pl.DataFrame,
    *,
    ks: int | Sequence[int] = (1,),
    confidence_level: float = 0.95,
    method: IntervalMethod = "auto",
    n_resamples: int = 2000,
    seed: int = 0,
) -> Analysis:
    """:func:`analyze` of records already reduced to their :func:`~gatestats.estimators.case_summary`.

    For a caller that holds the summary of its records (the gate): the same analysis as
    ``analyze(records, ks=..., ...)`` with ``by = "system"``, without reading the records again.

    Parameters
    ----------
    summary
        ``case_summary(records)`` (one version per case id and system; ``system`` never null).
    ks, confidence_level, method, n_resamples, seed
        As :func:`analyze`.

    Returns
    -------
    Analysis
        As :func:`analyze` (``by``: ``system``).

    Raises
    ------
    ValueError
        No k or a k below 1; an invalid interval option.
    """
    return _summary_analysis(
        summary,
        ks=_parse_ks(ks),
        by="system",
        confidence_level=confidence_level,
        method=method,
        n_resamples=n_resamples,
        seed=seed,
    )


def _summary_analysis(
    summary: pl.DataFrame,
    *,
    ks: tuple[int, ...],
    by: str,
    confidence_level: float,
    method: IntervalMethod,
    n_resamples: int,
    seed: int,
) -> Analysis:
    """:func:`analyze`'s analysis of each system of ``summary`` (checked ``ks``).

    Without numpy loaded, a small Wilson analysis computes in floats (:mod:`gatestats.estimators.small`).
    """
    floats = method in ("auto", "wilson") and small.without_numpy(summary.height * len(ks) * len(METRICS))
    systems = [
        _system_analysis(
            str(name),
            cases,
            ks=ks,
            floats=floats,
            method=method,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=seed,
        )
        # partition_by: the frames group_by's iteration gives, without its two queries (issue 28)
        for (name,), cases in summary.partition_by("system", maintain_order=True, as_dict=True).items()
    ]
    return Analysis(
        systems=tuple(sorted(systems, key=lambda s: s.system)),
        ks=ks,
        by=by,
        confidence_level=confidence_level,
        method=method,
        n_resamples=n_resamples,
        seed=seed,
    )


def _by_system(lazy: pl.LazyFrame, by: str) -> pl.LazyFrame:
    """The records with ``by`` as their ``system`` column (trials keep their original system apart)."""
    schema = lazy.collect_schema()
    if by not in schema:
        msg = f"by: no column {by!r} in the records (got {list(schema)})"
        raise ValueError(msg)
    if by == "system":
        return lazy
    # Trials of different original systems stay different trials under the new label.
    origin = pl.col("system").cast(pl.String).fill_null("") if "system" in schema else pl.lit("")
    return lazy.with_columns(
        pl.concat_str([origin, pl.lit("\x00"), pl.col("trial").cast(pl.String)]).alias("trial"),
        pl.col(by).cast(pl.String).alias("system"),
    )


def _unit_labels(cases: pl.DataFrame) -> npt.NDArray[Any] | None:
    """Each case's resampling unit: its ``case_group``, or the case itself; ``None`` without groups."""
    if cases["case_group"].null_count() == cases.height:
        return None
    return (
        cases.select(
            pl.when(pl.col("case_group").is_null())
            .then(pl.lit("\x00case:") + pl.col("case_id") + pl.lit("@") + pl.col("case_version").fill_null(""))
            .otherwise(pl.col("case_group"))
        )
        .to_series()
        .to_numpy()
    )


def _system_analysis(
    name: str,
    cases: pl.DataFrame,
    *,
    ks: tuple[int, ...],
    floats: bool = False,
    method: IntervalMethod,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> SystemAnalysis:
    """Every estimate, the counts and the variance split of one system's cases.

    ``floats``: the cases' values and Wilson intervals in floats when they have no groups and fewer than
    ``CLT_FROM_CASES`` cases (:mod:`gatestats.estimators.small`), else numpy's.
    """
    pairs: CasePairs | small.SmallPairs
    if floats and cases.height < CLT_FROM_CASES and cases["case_group"].null_count() == cases.height:
        groups, pairs = None, small.SmallPairs.of(cases["n"], cases["c"])
    else:
        groups = _unit_labels(cases)
        pairs = case_pairs(cases["n"].to_numpy(), cases["c"].to_numpy())
    estimates = _estimates(
        cases,
        pairs=pairs,
        ks=ks,
        groups=groups,
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
    )
    return SystemAnalysis(
        system=name,
        n_cases=cases.height,
        n_trials=int(cases["n_trials"].sum()),
        n_valid_trials=int(cases["n"].sum()),
        n_passed=int(cases["c"].sum()),
        n_resource_killed=int(cases["n_resource_killed"].sum()),
        n_infra_errors=int(cases["n_infra_errors"].sum()),
        clustered=groups is not None,
        estimates=estimates,
        variance=variance_decomposition(cases),
        cases=cases,
    )
