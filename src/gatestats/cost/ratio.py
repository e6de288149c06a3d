r"""Candidate over baseline cost per accepted outcome, paired on the cases both ran: :func:`cost_ratio`.

.. math::

    R = \frac{\mathrm{CPA}_c}{\mathrm{CPA}_b}
      = \frac{\sum_u Y_{c,u} / \sum_u A_{c,u}}{\sum_u Y_{b,u} / \sum_u A_{b,u}}

over the units :math:`u` (cases, or ``case_group`` clusters) that both systems ran. The interval
and the p-values come from a *paired* case bootstrap: every resample draws the same units for
both systems, so what the two share (hard cases are dear for both) cancels in the ratio.

Each resample draws :math:`U` of the paired units with replacement and evaluates :math:`R^*`
in the extended reals: no accepted outcome for the candidate gives :math:`+\infty`, for the
baseline 0, for both an undefined value that counts against every bound and p-value. The
percentile interval (Efron & Tibshirani 1993, ch. 13) is refused below
:data:`MIN_UNITS_RATIO` paired units or when a bound is unbounded.

**Decisions** (the gate's cost rows) use :meth:`CostRatio.decision_pvalues`, not the raw
percentile p-values. When spend per case is heavy-tailed a few dear cases carry the sums, the ratio
of sums is skewed, and the percentile test is liberal: at a true ratio exactly at the limit it said
"within" in 0.10-0.12 of replications at a nominal 0.05 with 50-200 cases of log-normal spend
(sigma 1.5-2; ``docs/size_study.md``, section D), and the bootstrap-t on the log ratio was no
better. The size follows the *effective* number of units, Kish's
:math:`U_\text{eff} = (\sum_u Y_u)^2 / \sum_u Y_u^2` of each side's per-unit spend (the smaller
of the two), not their count. The decision p-values are therefore offered from
:data:`MIN_EFFECTIVE_UNITS` effective units on and are the percentile p-values times
:data:`DECISION_PVALUE_FACTOR` (capped at 1): a calibration chosen from the size study, where it
kept every cell within alpha + 2 SE (alpha 0.01-0.10, 50-1,000 cases, spend sigma 0.5-2). It costs
the power of testing at alpha / 3 (a factor of 2 left the size at 0.012-0.014 for a nominal 0.01 at
1,000 cases with log-sd 1.5 in a re-check of the worst cell).

References
----------
Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall,
    ch. 13 and 16 (percentile intervals; bootstrap tests).
Kish, L. (1965). Survey Sampling. Wiley (effective sample size).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, TypeAlias, TypedDict

import numpy as np
import polars as pl

from gatestats._typing import JSONObject
from gatestats.cost._bootstrap import (
    MIN_UNITS_RATIO,
    BootstrapKind,
    IntervalRule,
    RebuildableInterval,
    paired_ratio_statistic,
)
from gatestats.cost._frames import SLICE, CostOptions, OptionsEcho, explode_groups, prepare
from gatestats.cost.missing import check_max_cost_per_attempt
from gatestats.cost.per_accepted import group_statistics, insufficiency
from gatestats.errors import InsufficientEvidenceError
from gatestats.publish.notebook import Presentable
from gatestats.vocabulary import FrameLike

if TYPE_CHECKING:
    from gatestats.paired import PairedCases
    from gatestats.publish import Labels, PublishedTable

__all__ = [
    "DECISION_PVALUE_FACTOR",
    "MIN_EFFECTIVE_UNITS",
    "RATIO_INTERVAL_METHOD",
    "CostRatio",
    "MissingCostFill",
    "cost_ratio",
]

#: Which extreme of the ratio the attempts without a cost are filled to: ``upper`` counts the
#: candidate's at the cap and the baseline's at 0 (the largest ratio the data allow), ``lower`` the
#: reverse.
MissingCostFill: TypeAlias = Literal["upper", "lower"]

#: Interval construction for the paired ratio, chosen by the coverage simulation (docs/cost.md):
#: the percentile interval covered better than BCa (whose jackknife acceleration is noisy here).
RATIO_INTERVAL_METHOD: Final[BootstrapKind] = "percentile"
_INFINITE = "had no accepted outcome on one side (cost ratio 0 or infinite)"
#: Fewest effective paired units (Kish, from each side's per-unit spend) for decision p-values.
MIN_EFFECTIVE_UNITS: Final = 50
#: Decision p-values are the percentile-bootstrap p-values times this factor (size study, section D).
DECISION_PVALUE_FACTOR: Final = 3.0
_RULE: Final = IntervalRule(
    statistic=paired_ratio_statistic,
    kind=RATIO_INTERVAL_METHOD,
    cases="paired cases",
    groups="paired case groups",
    infinite_means=_INFINITE,
    positive=True,
    min_units=MIN_UNITS_RATIO,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CostRatio(RebuildableInterval, Presentable):
    """Candidate over baseline cost per accepted outcome on their shared cases.

    ``ratio`` (and the interval) are ``None`` with ``status == "insufficient_evidence"`` when a
    side has unknown spend or human time, no accepted outcome, or zero spend (the ratio is
    undefined); ``reason`` says which. Spend and accepted counts are those of the paired cases.
    """

    baseline: str
    candidate: str
    slice: str | None
    ratio: float | None
    n_resamples_infinite: int | None
    n_resamples_undefined: int | None
    baseline_cpa: float | None
    candidate_cpa: float | None
    baseline_accepted: int
    candidate_accepted: int
    baseline_spend_usd: float | None
    candidate_spend_usd: float | None
    n_cases: int
    n_units: int
    unpaired_baseline: tuple[str, ...]
    unpaired_candidate: tuple[str, ...]
    excluded_versions: tuple[str, ...]
    review_rate_usd_per_hour: float | None
    machine_rate_usd_per_hour: float | None
    #: Kish's effective number of paired units (the smaller side); ``None`` without a ratio.
    effective_units: float | None = None
    #: Attempts without a cost filled by ``fill_missing_costs``: ``(system, count, USD each)``.
    missing_costs_filled: tuple[tuple[str, int, float], ...] = ()
    _rule: ClassVar[IntervalRule] = _RULE

    def pvalues(self, limit_ratio: float) -> tuple[float, float]:
        r"""One-sided paired-bootstrap p-values against ``limit_ratio``: ``(p_within, p_above)``.

        ``p_within`` tests H0: ratio >= limit (small: evidence the candidate's cost per accepted
        outcome is within the limit); ``p_above`` tests H0: ratio <= limit (small: evidence it is
        above). Each is :math:`(1 + \#\{\text{resamples on the wrong side}\})/(B + 1)` (resamples
        equal to the limit, and undefined ones, count as wrong for both), the inversion of the
        percentile interval.

        Parameters
        ----------
        limit_ratio
            The ratio tested against, a finite number > 0.

        Returns
        -------
        tuple of float
            ``(p_within, p_above)``.

        Raises
        ------
        InsufficientEvidenceError
            The ratio is undefined, or fewer than :data:`MIN_UNITS_RATIO` paired units.
        ValueError
            ``limit_ratio`` is not a finite number > 0.
        """
        if isinstance(limit_ratio, bool) or not isinstance(limit_ratio, int | float):
            msg = f"limit_ratio must be a number > 0 (got {limit_ratio!r})"
            raise ValueError(msg)
        if not (math.isfinite(limit_ratio) and limit_ratio > 0):
            msg = f"limit_ratio must be a finite number > 0 (got {limit_ratio})"
            raise ValueError(msg)
        if self._bootstrap is None:
            msg = f"cost ratio {self.candidate!r}/{self.baseline!r}: no p-values: {self.reason}"
            raise InsufficientEvidenceError(msg)
        if self.n_units < MIN_UNITS_RATIO:
            msg = (
                f"cost ratio {self.candidate!r}/{self.baseline!r}: p-values need at least {MIN_UNITS_RATIO} "
                f"paired independent units (got {self.n_units}; docs/cost.md)"
            )
            raise InsufficientEvidenceError(msg)
        return self._bootstrap.pvalues(float(limit_ratio))

    def decision_pvalues(self, limit_ratio: float) -> tuple[float, float]:
        """Calibrated p-values for a gate decision: :meth:`pvalues` times :data:`DECISION_PVALUE_FACTOR`.

        Parameters
        ----------
        limit_ratio
            As in :meth:`pvalues`.

        Returns
        -------
        tuple of float
            ``(p_within, p_above)``, each capped at 1.

        Raises
        ------
        InsufficientEvidenceError
            As :meth:`pvalues`, or fewer than :data:`MIN_EFFECTIVE_UNITS` effective units (the
            message gives about how many paired cases would be needed at this spread of spend).
        """
        p_within, p_above = self.pvalues(limit_ratio)
        eff = self.effective_units
        if eff is None or eff < MIN_EFFECTIVE_UNITS:
            got = "unknown" if eff is None else f"{eff:.1f}"
            needed = None if not eff else math.ceil(MIN_EFFECTIVE_UNITS * self.n_units / eff)
            msg = (
                f"cost ratio {self.candidate!r}/{self.baseline!r}: a decision needs at least {MIN_EFFECTIVE_UNITS} "
                f"effective paired units (Kish, from the spread of spend per case; got {got} of {self.n_units} "
                "units: a few dear cases carry the sums and the bootstrap test is liberal there, docs/size_study.md)"
                + (f"; about {needed} paired cases are needed" if needed is not None else "")
            )
            raise InsufficientEvidenceError(msg)
        return min(1.0, DECISION_PVALUE_FACTOR * p_within), min(1.0, DECISION_PVALUE_FACTOR * p_above)

    def _what(self) -> str:
        return f"cost ratio {self.candidate!r}/{self.baseline!r}"

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping."""
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "slice": self.slice,
            "status": self.status,
            "reason": self.reason,
            "ratio": {
                "estimate": self.ratio,
                **self._interval_entries(),
                "n_resamples_infinite": self.n_resamples_infinite,
                "n_resamples_undefined": self.n_resamples_undefined,
            },
            "baseline_cpa": self.baseline_cpa,
            "candidate_cpa": self.candidate_cpa,
            "baseline_accepted": self.baseline_accepted,
            "candidate_accepted": self.candidate_accepted,
            "baseline_spend_usd": self.baseline_spend_usd,
            "candidate_spend_usd": self.candidate_spend_usd,
            "n_cases": self.n_cases,
            "n_units": self.n_units,
            "clustered": self.clustered,
            "unpaired_baseline": list(self.unpaired_baseline),
            "unpaired_candidate": list(self.unpaired_candidate),
            "excluded_versions": list(self.excluded_versions),
            "review_rate_usd_per_hour": self.review_rate_usd_per_hour,
            "machine_rate_usd_per_hour": self.machine_rate_usd_per_hour,
            "effective_units": self.effective_units,
        } | (
            {}
            if not self.missing_costs_filled
            else {
                "missing_costs_filled": [
                    {"system": system, "n_attempts": n, "usd_per_attempt": usd}
                    for system, n, usd in self.missing_costs_filled
                ]
            }
        )

    def to_frame(self) -> pl.DataFrame:
        """One row with fixed columns."""
        return pl.DataFrame(
            [
                {
                    "baseline": self.baseline,
                    "candidate": self.candidate,
                    "slice": self.slice,
                    "status": self.status,
                    "ratio": self.ratio,
                    "ci_low": self.ci_low,
                    "ci_high": self.ci_high,
                    "interval_status": self.interval_status,
                    "baseline_cpa": self.baseline_cpa,
                    "candidate_cpa": self.candidate_cpa,
                    "baseline_accepted": self.baseline_accepted,
                    "candidate_accepted": self.candidate_accepted,
                    "n_cases": self.n_cases,
                    "n_units": self.n_units,
                    "reason": self.reason,
                    "interval_reason": self.interval_reason,
                }
            ],
            schema={
                "baseline": pl.String,
                "candidate": pl.String,
                "slice": pl.String,
                "status": pl.String,
                "ratio": pl.Float64,
                "ci_low": pl.Float64,
                "ci_high": pl.Float64,
                "interval_status": pl.String,
                "baseline_cpa": pl.Float64,
                "candidate_cpa": pl.Float64,
                "baseline_accepted": pl.Int64,
                "candidate_accepted": pl.Int64,
                "n_cases": pl.Int64,
                "n_units": pl.Int64,
                "reason": pl.String,
                "interval_reason": pl.String,
            },
        )

    def table(self, labels: Labels | None = None) -> PublishedTable:
        """The result as a published table (:func:`gatestats.cost.published.cost_ratio_table`).

        Parameters
        ----------
        labels
            Display names of the ids shown (None: the ids).

        Returns
        -------
        PublishedTable
            The table (render it with :func:`gatestats.publish.render`).
        """
        from gatestats.cost.published import cost_ratio_table  # noqa: PLC0415 - the tables on first use

        return cost_ratio_table(self, labels)


def _kish(spend: np.ndarray[Any, np.dtype[np.float64]]) -> float:
    """Kish's effective number of units of per-unit spends: (sum)^2 / sum of squares."""
    squares = float((spend**2).sum())
    return float(spend.sum()) ** 2 / squares if squares > 0 else 0.0


class _RequestEcho(OptionsEcho):
    """The fields of :class:`CostRatio` that repeat the request."""

    baseline: str
    candidate: str
    slice: str | None
    method: BootstrapKind


class _Names(TypedDict):
    """The systems and slice of a :func:`cost_ratio` call."""

    baseline: str
    candidate: str
    slice: str | None


class _RatioFields(_RequestEcho):
    """The fields of :class:`CostRatio` known before its interval: the request, the sides' sums, the pairing."""

    baseline_accepted: int
    candidate_accepted: int
    baseline_spend_usd: float | None
    candidate_spend_usd: float | None
    n_cases: int
    n_units: int
    clustered: bool
    unpaired_baseline: tuple[str, ...]
    unpaired_candidate: tuple[str, ...]
    excluded_versions: tuple[str, ...]
    missing_costs_filled: tuple[tuple[str, int, float], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Request(CostOptions):
    """The options of one :func:`cost_ratio` call, checked."""

    baseline: str
    candidate: str
    slice: str | None
    fill: MissingCostFill | None = None
    cap: float | None = None

    def echo(self) -> _RequestEcho:
        """The fields of :class:`CostRatio` that repeat the request."""
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "slice": self.slice,
            "method": RATIO_INTERVAL_METHOD,
            **CostOptions.echo(self),
        }


def _check_names(baseline: object, candidate: object, slice: object) -> None:
    for name, value in (("baseline", baseline), ("candidate", candidate)):
        if not isinstance(value, str) or not value:
            msg = f"{name} must name a system (got {value!r})"
            raise ValueError(msg)
    if slice is not None and not isinstance(slice, str):
        msg = f"slice must be a slice name or None (got {slice!r})"
        raise ValueError(msg)


def _check_fill(fill: object, cap: float | None) -> None:
    """``fill_missing_costs`` is ``None``, ``upper`` or ``lower``; the cap ``None`` or a number >= 0."""
    check_max_cost_per_attempt(cap)
    if fill not in (None, "upper", "lower"):
        msg = f"fill_missing_costs must be None, 'upper' or 'lower' (got {fill!r})"
        raise ValueError(msg)


def _paired_attempts(
    records: FrameLike, request: _Request, *, shared_versions_only: bool
) -> tuple[pl.DataFrame, PairedCases, int]:
    """The prepared attempts of both systems on the cases both ran, the pairing, and the case count."""
    # gatestats.paired imports every paired test and scipy.stats: ``gatestats cost`` never pairs (issue 28).
    from gatestats.paired import pair_cases  # noqa: PLC0415

    by = ("system",) if request.slice is None else ("system", SLICE)
    frame, _ = prepare(records, by=by, review_rate=request.review_rate, machine_rate=request.machine_rate)
    if request.slice is not None:
        frame = explode_groups(frame, by).filter(pl.col(SLICE) == request.slice)
    two = frame.filter(pl.col("system").is_in([request.baseline, request.candidate]))
    pairs = pair_cases(
        frame.select("system", "case_id", "case_version", "case_group", "trial", "attempt", "outcome"),
        baseline=request.baseline,
        candidate=request.candidate,
        shared_versions_only=shared_versions_only,
    )
    keys = ["case_id", "case_version"]
    shared = (
        two.filter(pl.col("system") == request.baseline)
        .select(keys)
        .unique()
        .join(two.filter(pl.col("system") == request.candidate).select(keys).unique(), on=keys, nulls_equal=True)
    )
    return two.join(shared, on=keys, how="semi", nulls_equal=True), pairs, shared.height


def _side(stats: pl.DataFrame, system: str, rate: float) -> tuple[Mapping[str, Any], float | None]:
    row = stats.filter(pl.col("system") == system).row(0, named=True)
    spend = None
    if row["n_cost_unknown"] == 0 and row["n_human_unknown"] == 0:
        spend = float(row["attempt_spend"]) + row["human_s"] / 3600 * rate
    return row, spend


def _unit_sums(paired: pl.DataFrame, request: _Request) -> pl.DataFrame:
    """Per paired unit: each side's spend and accepted outcomes (columns ``spend_b, acc_b, spend_c, acc_c``)."""
    sides = (("b", request.baseline), ("c", request.candidate))
    spend = pl.col("__spend") + pl.col("__human_s") / 3600 * request.rate
    return (
        paired.group_by("__unit")
        .agg(
            *[
                expr
                for side, system in sides
                for expr in (
                    spend.filter(pl.col("system") == system).sum().alias(f"spend_{side}"),
                    pl.col("__accepted").filter(pl.col("system") == system).sum().cast(pl.Float64).alias(f"acc_{side}"),
                )
            ]
        )
        .sort("__unit")
        .select("spend_b", "acc_b", "spend_c", "acc_c")
    )


def _fill_missing(paired: pl.DataFrame, request: _Request) -> tuple[pl.DataFrame, tuple[tuple[str, int, float], ...]]:
    """Fill the attempts without a cost to one extreme (``request.fill``): one side at 0, the other at its cap.

    A side's cap is ``request.cap``, else its largest observed cost per attempt on the paired cases;
    a side with no observed cost and no cap stays unfilled (its spend stays unknown).
    """
    if request.fill is None:
        return paired, ()
    high = request.candidate if request.fill == "upper" else request.baseline
    filled: list[tuple[str, int, float]] = []
    spend = pl.col("__spend")
    for system in (request.baseline, request.candidate):
        side = paired.filter(pl.col("system") == system)["__spend"]
        n = side.null_count()
        observed = side.max()
        value = 0.0 if system != high else (request.cap if request.cap is not None else observed)
        if not n or value is None:
            continue
        usd = float(value)  # type: ignore[arg-type]
        spend = pl.when(pl.col("__spend").is_null() & (pl.col("system") == system)).then(usd).otherwise(spend)
        filled.append((system, n, usd))
    return paired.with_columns(spend.alias("__spend")), tuple(filled)


def _ratio(request: _Request, paired: pl.DataFrame, *, pairs: PairedCases, n_cases: int) -> CostRatio:
    """The ratio and its bootstrap on the paired attempts, or why there is none."""
    paired, filled = _fill_missing(paired, request)
    stats = group_statistics(paired, ("system",))
    row_b, spend_b = _side(stats, request.baseline, request.rate)
    row_c, spend_c = _side(stats, request.candidate, request.rate)
    units = _unit_sums(paired, request)
    clustered = bool(paired["case_group"].is_not_null().any())
    common: _RatioFields = {
        **request.echo(),
        "baseline_accepted": row_b["accepted"],
        "candidate_accepted": row_c["accepted"],
        "baseline_spend_usd": spend_b,
        "candidate_spend_usd": spend_c,
        "n_cases": n_cases,
        "n_units": units.height,
        "clustered": clustered,
        "unpaired_baseline": pairs.unpaired_baseline,
        "unpaired_candidate": pairs.unpaired_candidate,
        "excluded_versions": pairs.excluded_versions,
        "missing_costs_filled": filled,
    }
    problems = [f"baseline {request.baseline!r}: {p}" for p in insufficiency(row_b)]
    problems += [f"candidate {request.candidate!r}: {p}" for p in insufficiency(row_c)]
    if not problems and spend_b == 0:
        problems.append(f"baseline {request.baseline!r} spent nothing on the paired cases: the cost ratio is undefined")
    if problems or spend_b is None or spend_c is None:
        reason = "; ".join(problems)
        cpa_b = spend_b / row_b["accepted"] if spend_b is not None and row_b["accepted"] else None
        cpa_c = spend_c / row_c["accepted"] if spend_c is not None and row_c["accepted"] else None
        return CostRatio(
            status="insufficient_evidence",
            reason=reason,
            ratio=None,
            ci_low=None,
            ci_high=None,
            interval_status="insufficient_evidence",
            interval_reason=reason,
            n_resamples_infinite=None,
            n_resamples_undefined=None,
            baseline_cpa=cpa_b,
            candidate_cpa=cpa_c,
            **common,
        )
    cpa_b, cpa_c = spend_b / row_b["accepted"], spend_c / row_c["accepted"]
    columns = units.to_numpy().astype(np.float64)
    boot, interval = _RULE.resample(
        columns,
        confidence_level=request.confidence_level,
        n_resamples=request.n_resamples,
        seed=request.seed,
        clustered=clustered,
    )
    return CostRatio(
        status="ok",
        reason=None,
        ratio=cpa_c / cpa_b,
        ci_low=interval.ci_low,
        ci_high=interval.ci_high,
        interval_status=interval.status,
        interval_reason=interval.reason,
        n_resamples_infinite=interval.n_resamples_infinite,
        n_resamples_undefined=interval.n_resamples_undefined,
        baseline_cpa=cpa_b,
        candidate_cpa=cpa_c,
        effective_units=min(_kish(columns[:, 0]), _kish(columns[:, 2])),
        _bootstrap=boot,
        **common,
    )


def cost_ratio(
    records: FrameLike,
    *,
    baseline: str,
    candidate: str,
    slice: str | None = None,
    shared_versions_only: bool = False,
    review_rate_usd_per_hour: float | None = None,
    machine_rate_usd_per_hour: float | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
    fill_missing_costs: MissingCostFill | None = None,
    max_cost_per_attempt_usd: float | None = None,
) -> CostRatio:
    r"""Candidate over baseline cost per accepted outcome, with a paired case bootstrap.

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``) of at least the two systems. Human time is
        merged and attributed over *all* records passed in (a reviewer's time shared with another
        system's outcomes is shared, not counted twice).
    baseline, candidate
        The two systems (values of ``system``).
    slice
        Restrict to the cases in this slice (of the records' ``slices`` lists); ``None``: all.
    shared_versions_only
        Pair only the case versions both ran; otherwise a case id run at different versions is a
        :class:`gatestats.paired.CaseVersionMismatchError` (as in :func:`gatestats.paired.compare`).
    review_rate_usd_per_hour, machine_rate_usd_per_hour
        As in :func:`gatestats.cost.cost_per_accepted`.
    confidence_level, n_resamples, seed
        The paired bootstrap's two-sided level, resamples (>= 100) and seed (recorded), as in
        :func:`gatestats.cost.cost_per_accepted`; :meth:`CostRatio.pvalues` uses the same resamples.
    fill_missing_costs, max_cost_per_attempt_usd
        ``None``: a missing cost leaves the ratio ``insufficient_evidence``; ``upper``/``lower``: see
        :data:`MissingCostFill` (cap: ``max_cost_per_attempt_usd``, else the side's largest observed).

    Returns
    -------
    CostRatio
        The ratio with its interval and the sums behind it, or ``insufficient_evidence`` with the
        reason.

    Raises
    ------
    gatestats.paired.UnknownSystemError
        ``baseline`` or ``candidate`` has no records (in the slice).
    gatestats.paired.NoPairedCasesError
        The two systems share no case.
    ReviewRateRequiredError, ValueError
        As in :func:`gatestats.cost.cost_per_accepted`.

    See the module docstring for the resampling, the interval and the decision p-values.

    Examples
    --------
    >>> import polars as pl
    >>> records = pl.DataFrame({"record_id": [f"r{i}" for i in range(4)], "system": ["a", "a", "b", "b"],
    ...     "case_id": ["x", "y", "x", "y"], "trial": 0, "attempt": 0,
    ...     "outcome": ["passed", "passed", "passed", "failed"], "cost_usd": [1.0, 1.0, 1.5, 1.5]})
    >>> r = cost_ratio(records, baseline="a", candidate="b")
    >>> r.baseline_cpa, r.candidate_cpa, r.ratio, r.interval_status
    (1.0, 3.0, 3.0, 'insufficient_evidence')
    """
    options = CostOptions.checked(
        review_rate_usd_per_hour, machine_rate_usd_per_hour, confidence_level, n_resamples, seed
    )
    _check_names(baseline, candidate, slice)
    _check_fill(fill_missing_costs, max_cost_per_attempt_usd)
    names = _Names(baseline=baseline, candidate=candidate, slice=slice)
    request = _Request(**names, fill=fill_missing_costs, cap=max_cost_per_attempt_usd, **asdict(options))
    paired, pairs, n_cases = _paired_attempts(records, request, shared_versions_only=shared_versions_only)
    return _ratio(request, paired, pairs=pairs, n_cases=n_cases)
