"""The result of a paired comparison (:class:`Comparison`) and its validated options.

See :func:`gatestats.paired.compare` for what every field means and how it is computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict, get_args

import polars as pl

from gatestats._typing import JSONObject
from gatestats.paired.intervals import (
    DifferenceInterval,
    _no_interval,
    newcombe_interval,
    scas_interval,
    tango_interval,
)
from gatestats.paired.mcnemar import AsymptoticMcNemarTest, check_alternative, mcnemar_asymptotic_test
from gatestats.paired.noninferiority import NonInferiorityTest, bounded_mean_pvalues, check_margin
from gatestats.paired.odds_ratio import OddsRatioEstimate, conditional_odds_ratio
from gatestats.paired.resolution import Resolution
from gatestats.paired.trials import case_difference_interval, unit_sums
from gatestats.publish.notebook import Presentable
from gatestats.vocabulary import (
    Alternative,
    ComparisonStatus,
    Correction,
    Metric,
    PairedDesign,
    PairedIntervalMethod,
    PairedTest,
    check_alpha,
    check_choice,
    check_confidence_level,
    check_n_resamples,
    check_seed,
)

if TYPE_CHECKING:
    import altair as alt
    import numpy as np
    import numpy.typing as npt

    from gatestats.publish import Labels, PublishedTable

__all__ = ["FRAME_SCHEMA", "Comparison", "ComparisonOptions", "comparisons_frame", "difference_interval"]


class IntervalLevel(TypedDict):
    """``confidence_level`` and ``alternative``, as keyword arguments of the interval functions."""

    confidence_level: float
    alternative: Alternative


@dataclass(frozen=True, slots=True, kw_only=True)
class ComparisonOptions:
    r"""The options of a comparison, validated once (shared by :func:`compare` and :func:`compare_many`).

    Attributes
    ----------
    margin
        Non-inferiority margin :math:`\Delta \in (0, 1)` on the difference of pass rates: tests
        :math:`H_0: \delta \le -\Delta` at the one-sided level :attr:`noninferiority_alpha`.
    alternative
        Of the tests and the interval: ``two-sided``; ``less`` (the candidate is worse);
        ``greater`` (the candidate is better).
    confidence_level
        Of the interval shown, and only of it.
    alpha
        Significance level of the decisions the comparison makes (the non-inferiority test,
        one-sided, and the resolution check of the conditional test under ``alternative``), in
        (0, 0.5] (:func:`gatestats.vocabulary.check_alpha`). The gate passes its rule's alpha here.
        ``None`` (default, for a caller who states only the interval's level): the levels at which
        the tests agree with the interval, ``1 - confidence_level`` for the resolution check and
        ``(1 - confidence_level) / 2`` for the one-sided non-inferiority test
        (:attr:`test_alpha`, :attr:`noninferiority_alpha`).
    test
        The p-value reported as ``pvalue``: ``auto`` (default: ``midp`` for a two-sided test with
        one trial per independent case, Fagerland et al. 2013; ``exact`` otherwise), ``midp``,
        ``exact`` (conditional McNemar / sign test) or ``permutation`` (sign-flip on per-case
        differences). ``midp`` is offered only where its A/A size was shown to stay within the
        level (two-sided, one trial per independent case; ``docs/paired.md``); ``pvalue_midp`` is
        reported everywhere for reference.
    interval
        ``auto`` (Tango with one trial per independent case; else the t interval with Miller's
        clustered SE), ``tango``, ``scas``, ``newcombe``, ``bootstrap`` (from 200 units) or ``clt``.
    n_resamples, n_permutations, seed
        Bootstrap resamples (at least 100), Monte Carlo permutations (at least 99), and the seed
        of both (recorded).

    Raises
    ------
    ValueError
        An option outside its domain (the message names it and what was got).
    """

    margin: float | None = None
    alternative: Alternative = "two-sided"
    confidence_level: float = 0.95
    test: PairedTest = "auto"
    interval: PairedIntervalMethod = "auto"
    n_resamples: int = 2000
    n_permutations: int = 9999
    seed: int = 0
    alpha: float | None = None

    def __post_init__(self) -> None:
        if self.margin is not None:
            check_margin(self.margin)
        check_alternative(self.alternative)
        check_confidence_level(self.confidence_level)
        check_choice(self.test, get_args(PairedTest), "test")
        check_choice(self.interval, get_args(PairedIntervalMethod), "interval")
        check_n_resamples(self.n_resamples)
        check_n_resamples(self.n_permutations, "n_permutations", minimum=99)
        check_seed(self.seed)
        if self.alpha is not None:
            check_alpha(self.alpha)

    @property
    def level(self) -> IntervalLevel:
        """``confidence_level`` and ``alternative``, as keyword arguments of the interval functions."""
        return {"confidence_level": self.confidence_level, "alternative": self.alternative}

    @property
    def test_alpha(self) -> float:
        """Level of the resolution check: ``alpha``, or without it ``1 - confidence_level`` (rounded: 1 - 0.95 is 0.05).

        Returns
        -------
        float
            The level, given or derived here once (never converted again downstream).
        """
        return self.alpha if self.alpha is not None else round(1 - self.confidence_level, 12)

    @property
    def noninferiority_alpha(self) -> float:
        """One-sided level of the non-inferiority test: ``alpha``, or without it ``(1 - confidence_level) / 2``.

        Returns
        -------
        float
            The level (0.025 at the default 95% interval: the test agrees with the interval's lower bound).
        """
        return self.alpha if self.alpha is not None else round(1 - self.confidence_level, 12) / 2


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison(Presentable):
    """A paired comparison of ``candidate`` against ``baseline``.

    ``diff`` is :math:`p_\\text{candidate} - p_\\text{baseline}` (mean over paired cases of the
    per-case difference); ``b`` counts the cases the baseline does better on (with one trial:
    passed by the baseline only), ``c`` those the candidate does better on; ``flips_pass_to_fail``
    and ``flips_fail_to_pass`` name them. ``pvalue`` is the one chosen by ``test``. With
    ``status == "insufficient_evidence"`` the statistics that cannot be computed are ``None`` and
    ``reason`` says why; with ``cannot_resolve`` they are reported but cannot decide (see
    ``resolution``). ``pvalue_adjusted`` is set by :func:`gatestats.paired.compare_many`.
    """

    baseline: str
    candidate: str
    metric: Metric
    k: int
    design: PairedDesign
    alternative: Alternative
    confidence_level: float
    test: PairedTest
    status: ComparisonStatus
    reason: str | None
    n_pairs: int
    n_units: int
    clustered: bool
    a: int | None
    b: int
    c: int
    d: int | None
    n_ties: int
    statistic: int | None
    pvalue: float | None
    pvalue_exact: float | None
    pvalue_midp: float | None
    pvalue_permutation: float | None
    permutation_exact: bool | None
    p_baseline: float | None
    p_candidate: float | None
    diff: float | None
    interval: DifferenceInterval
    odds_ratio: OddsRatioEstimate | None
    noninferiority: NonInferiorityTest | None
    resolution: Resolution | None
    flips_pass_to_fail: tuple[str, ...] = field(repr=False)
    flips_fail_to_pass: tuple[str, ...] = field(repr=False)
    unpaired_baseline: tuple[str, ...] = field(repr=False)
    unpaired_candidate: tuple[str, ...] = field(repr=False)
    excluded_versions: tuple[str, ...] = field(repr=False)
    undefined_cases: tuple[str, ...] = field(repr=False)
    seed: int
    n_resamples: int
    n_permutations: int | None
    correction: Correction | None = None
    pvalue_adjusted: float | None = None
    #: The per-case differences: numpy's array, or on compare's and rank's one-trial paths in Python numbers
    #: (paired/small.py) the same values in a tuple (numpy's array is built from it when a method needs one).
    _diffs: npt.NDArray[np.float64] | tuple[float, ...] | None = field(default=None, repr=False, compare=False)
    _groups: npt.NDArray[np.int64] | None = field(default=None, repr=False, compare=False)
    _interval_method: PairedIntervalMethod = field(default="auto", repr=False, compare=False)

    @property
    def diff_ci_low(self) -> float | None:
        """Lower bound of the paired-difference interval."""
        return self.interval.ci_low

    @property
    def diff_ci_high(self) -> float | None:
        """Upper bound of the paired-difference interval."""
        return self.interval.ci_high

    def confidence_interval(self, confidence_level: float = 0.95) -> DifferenceInterval:
        """The paired-difference interval at another level (same method, alternative and seed).

        Parameters
        ----------
        confidence_level
            The level, in (0, 1).

        Returns
        -------
        DifferenceInterval
            The interval at that level.

        Raises
        ------
        ValueError
            The comparison has no interval (its reason is given), or a level outside (0, 1).
        """
        if self._diffs is None:
            msg = f"{self.baseline!r} vs {self.candidate!r} has no interval: {self.reason}"
            raise ValueError(msg)
        options = ComparisonOptions(
            alternative=self.alternative,
            confidence_level=confidence_level,
            interval=self.interval.method or self._interval_method,
            n_resamples=self.n_resamples,
            seed=self.seed,
        )
        return difference_interval(self._diffs, self._groups, self.a, self.b, self.c, self.d, options)

    def mean_difference_pvalues(self, margin: float = 0.0) -> tuple[float, float]:
        r"""One-sided p-values of the bounded-mean betting test on the per-unit differences.

        The test the gate uses for "candidate better" with several trials per case or grouped
        cases: the mean of the per-case differences :math:`d_i \in [-1, 1]` (summed per case group
        when cases share a group) tested with :func:`~gatestats.paired.noninferiority.bounded_mean_pvalues`
        (valid for any distribution of the differences; the sign test tests a median instead).

        Parameters
        ----------
        margin
            :math:`\Delta \in [0, 1)`: tests :math:`H_0: \delta \le -\Delta` and
            :math:`H_0: \delta \ge -\Delta` (0: "candidate better" and "candidate worse").

        Returns
        -------
        tuple[float, float]
            ``(p_pass, p_worse)``: small ``p_pass`` shows :math:`\delta > -\Delta`, small
            ``p_worse`` shows :math:`\delta < -\Delta`.

        Raises
        ------
        ValueError
            The comparison has no per-case differences (some are undefined; its reason is given),
            or a margin outside [0, 1).
        """
        if self._diffs is None:
            msg = f"{self.baseline!r} vs {self.candidate!r} has no per-case differences: {self.reason}"
            raise ValueError(msg)
        import numpy as np  # noqa: PLC0415 - on first use (compare's one-trial path runs without numpy)

        sums, sizes = unit_sums(np.asarray(self._diffs, dtype=np.float64), self._groups)
        return bounded_mean_pvalues(sums, sizes, margin=margin)

    @property
    def mcnemar_asymptotic_cc(self) -> AsymptoticMcNemarTest | None:
        """Edwards' continuity-corrected asymptotic McNemar test (reference only; one trial per
        independent case, else ``None``)."""
        if self.odds_ratio is None:
            return None
        return mcnemar_asymptotic_test(self.b, self.c, alternative=self.alternative)

    @property
    def odds_ratio_transformed_wilson(self) -> OddsRatioEstimate | None:
        """The conditional odds ratio with the transformed Wilson interval (reference only; one trial
        per independent case, else ``None``)."""
        if self.odds_ratio is None:
            return None
        return conditional_odds_ratio(
            self.b,
            self.c,
            confidence_level=self.confidence_level,
            alternative=self.alternative,
            method="transformed_wilson",
        )

    def to_dict(self) -> JSONObject:
        """The documented ``gatestats compare --json`` object of one comparison."""
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "status": self.status,
            "reason": self.reason,
            "metric": self.metric,
            "k": self.k,
            "design": self.design,
            "alternative": self.alternative,
            "confidence_level": self.confidence_level,
            "test": self.test,
            "n_pairs": self.n_pairs,
            "n_units": self.n_units,
            "clustered": self.clustered,
            "a": self.a,
            "b": self.b,
            "c": self.c,
            "d": self.d,
            "n_ties": self.n_ties,
            "statistic": self.statistic,
            "pvalue": self.pvalue,
            "pvalue_exact": self.pvalue_exact,
            "pvalue_midp": self.pvalue_midp,
            "pvalue_permutation": self.pvalue_permutation,
            "permutation_exact": self.permutation_exact,
            "n_permutations": self.n_permutations,
            "correction": self.correction,
            "pvalue_adjusted": self.pvalue_adjusted,
            "p_baseline": self.p_baseline,
            "p_candidate": self.p_candidate,
            "diff": self.diff,
            "diff_ci_low": self.diff_ci_low,
            "diff_ci_high": self.diff_ci_high,
            "interval": self.interval.to_dict(),
            "odds_ratio": None if self.odds_ratio is None else self.odds_ratio.to_dict(),
            "reference_methods": _reference_methods(self),
            "noninferiority": None if self.noninferiority is None else self.noninferiority.to_dict(),
            "resolution": None if self.resolution is None else self.resolution.to_dict(),
            "flips": {"pass_to_fail": list(self.flips_pass_to_fail), "fail_to_pass": list(self.flips_fail_to_pass)},
            "unpaired_baseline": list(self.unpaired_baseline),
            "unpaired_candidate": list(self.unpaired_candidate),
            "excluded_versions": list(self.excluded_versions),
            "undefined_cases": list(self.undefined_cases),
            "seed": self.seed,
            "n_resamples": self.n_resamples,
        }

    def to_frame(self) -> pl.DataFrame:
        """One row with fixed columns (see :data:`FRAME_SCHEMA`)."""
        return comparisons_frame([self])

    def table(self, labels: Labels | None = None) -> PublishedTable:
        """The comparison as a published table (:func:`gatestats.paired.published.comparison_table`).

        Parameters
        ----------
        labels
            Display names of the systems (None: their ids).

        Returns
        -------
        PublishedTable
            The table (render it with :func:`gatestats.publish.render`).
        """
        from gatestats.paired.published import comparison_table  # noqa: PLC0415 - the tables on first use

        return comparison_table(self, labels)

    def plot(self, labels: Labels | None = None) -> alt.LayerChart:
        """The difference with its interval and the zero line (a one-row forest plot; altair).

        Parameters
        ----------
        labels
            Display names of the systems (None: their ids).

        Returns
        -------
        altair.LayerChart
            The chart (:func:`gatestats.publish.charts.forest`).
        """
        from gatestats.paired.charts_frame import forest_frame  # noqa: PLC0415 - the charts on first use (issue 28 item 2)
        from gatestats.publish.charts import forest  # noqa: PLC0415

        alpha = round(1 - self.confidence_level, 12)
        shown = labels or str
        title = f"{shown(self.candidate)} − {shown(self.baseline)}"
        frame = forest_frame([self], adjusted=False, labels=labels or None)
        return forest(frame, title=title, decision=f"decision at α = {alpha:g}")


def _reference_methods(x: Comparison) -> JSONObject | None:
    """Classical methods reported beside the decision (one trial per independent case only)."""
    test, odds = x.mcnemar_asymptotic_cc, x.odds_ratio_transformed_wilson
    if test is None or odds is None:
        return None
    return {"mcnemar_continuity_corrected": test.to_dict(), "odds_ratio_transformed_wilson": odds.to_dict()}


FRAME_SCHEMA = {
    "baseline": pl.String,
    "candidate": pl.String,
    "status": pl.String,
    "design": pl.String,
    "n_pairs": pl.Int64,
    "b": pl.Int64,
    "c": pl.Int64,
    "diff": pl.Float64,
    "diff_ci_low": pl.Float64,
    "diff_ci_high": pl.Float64,
    "interval_method": pl.String,
    "pvalue": pl.Float64,
    "pvalue_exact": pl.Float64,
    "pvalue_midp": pl.Float64,
    "pvalue_adjusted": pl.Float64,
    "non_inferior": pl.Boolean,
    "reason": pl.String,
}


def comparisons_frame(comparisons: list[Comparison] | tuple[Comparison, ...]) -> pl.DataFrame:
    """One row per comparison with the fixed columns of :data:`FRAME_SCHEMA`.

    Parameters
    ----------
    comparisons
        The comparisons.

    Returns
    -------
    polars.DataFrame
        One row per comparison.
    """
    rows = [
        {
            "baseline": x.baseline,
            "candidate": x.candidate,
            "status": x.status,
            "design": x.design,
            "n_pairs": x.n_pairs,
            "b": x.b,
            "c": x.c,
            "diff": x.diff,
            "diff_ci_low": x.diff_ci_low,
            "diff_ci_high": x.diff_ci_high,
            "interval_method": x.interval.method,
            "pvalue": x.pvalue,
            "pvalue_exact": x.pvalue_exact,
            "pvalue_midp": x.pvalue_midp,
            "pvalue_adjusted": x.pvalue_adjusted,
            "non_inferior": None if x.noninferiority is None else x.noninferiority.non_inferior,
            "reason": x.reason,
        }
        for x in comparisons
    ]
    return pl.DataFrame(rows, schema=FRAME_SCHEMA, orient="row")


def difference_interval(
    diffs: npt.NDArray[np.float64] | tuple[float, ...],
    groups: npt.NDArray[np.int64] | None,
    a: int | None,
    b: int,
    c: int,
    d: int | None,
    options: ComparisonOptions,
) -> DifferenceInterval:
    """The paired-difference interval requested by ``options`` (``auto`` resolved here).

    Parameters
    ----------
    diffs
        Per-case differences (a tuple: numpy's array is built from it for an interval from the differences; the
        2x2 table's intervals need none, so rank's one-trial path runs without numpy).
    groups
        Group code per case when cases are clustered, else ``None``.
    a, b, c, d
        The 2x2 table (``a`` and ``d`` are ``None`` unless there is one trial per independent case).
    options
        The comparison's options (``interval``, ``confidence_level``, ``alternative``, resamples).

    Returns
    -------
    DifferenceInterval
        Tango, SCAS or Newcombe from the 2x2 table; otherwise from the per-case differences.

    Raises
    ------
    ValueError
        A 2x2-table interval asked for where there is no 2x2 table.
    """
    table = a is not None and d is not None and groups is None
    method = options.interval
    if method in ("tango", "scas", "newcombe") and not table:
        why = "cases share a case_group" if groups is not None else "cases have several trials"
        msg = f"interval {method!r} needs one trial per independent case (here {why}); use 'bootstrap', 'clt' or 'auto'"
        raise ValueError(msg)
    if a is not None and d is not None and groups is None and method in ("auto", "tango", "scas", "newcombe"):
        return _table_interval(a, b, c, d, options)
    import numpy as np  # noqa: PLC0415 - on first use (compare's and rank's one-trial paths run without numpy)

    return case_difference_interval(
        np.asarray(diffs, dtype=np.float64),
        groups=groups,
        method=method,
        n_resamples=options.n_resamples,
        seed=options.seed,
        **options.level,
    )


def _table_interval(a: int, b: int, c: int, d: int, options: ComparisonOptions) -> DifferenceInterval:
    """Tango's (``auto``), the SCAS or Newcombe's interval from the 2x2 table."""
    method = options.interval
    n = a + b + c + d
    if method == "scas" and n < 2:
        return _no_interval(
            f"the SCAS interval needs at least 2 paired cases (got {n})",
            estimate=(c - b) / n,
            method="scas",
            n_units=n,
            **options.level,
        )
    if method == "scas":
        low, high = scas_interval(b, c, n, **options.level)
    elif method == "newcombe":
        low, high = newcombe_interval(a, b, c, d, **options.level)
    else:
        low, high = tango_interval(b, c, n, **options.level)
    return DifferenceInterval(
        estimate=(c - b) / n,
        ci_low=low,
        ci_high=high,
        method="tango" if method == "auto" else method,
        status="ok",
        reason=None,
        n_units=n,
        **options.level,
    )
