r"""One gate rule's evidence: the observed values and two one-sided p-values.

Every statistical row of a verdict answers two questions with one-sided tests:

* ``pvalue_pass`` — :math:`H_0`: the rule is violated. Small means the data *show* the rule holds.
* ``pvalue_fail`` — :math:`H_0`: the rule holds. Small means the data *show* the rule is violated.

After the policy's multiplicity correction (applied to each family across the rules) a row passes
when its adjusted ``pvalue_pass`` is at most the rule's ``alpha``, fails when its adjusted
``pvalue_fail`` is, and is otherwise inconclusive: insufficient evidence, never a pass.

The tests:

* **Absolute threshold** :math:`T` on the candidate's pass rate, pass^k or pass@k (mean over
  cases of per-case unbiased estimates; the case is the unit): the p-values come from inverting
  the case-level interval of :func:`gatestats.estimators.case_mean_interval` (continuity-corrected
  Wilson at the effective n, at every N: :data:`THRESHOLD_METHOD`): :math:`p` is the smallest
  :math:`\alpha` at which the one-sided :math:`1-\alpha` bound excludes :math:`T`, found by
  bisection. The test agrees with the interval the verdict shows.
* **Paired** comparison with the baseline on the same cases (:func:`gatestats.paired.compare`):
  with margin :math:`\Delta > 0`, at the rule's alpha, the exact unconditional test ordered by
  Tango's score statistic (one trial per independent case; Hsueh, Liu & Chen 2001) or the
  bounded-mean betting test on per-case (per-group) differences (several trials, or groups) for
  :math:`H_0: \delta \le -\Delta`, and the same test's other tail for
  :math:`H_0: \delta \ge -\Delta`; with :math:`\Delta = 0`, the exact one-sided McNemar tests
  (one trial per independent case) or the bounded-mean test at margin 0 (several trials, or
  groups: the case-level sign test tests a median, and passed a candidate whose mean is no better
  in 96% of replications at 100 cases, ``docs/size_study.md``). Each stays within alpha in the size study.
* **Resolution**: a threshold no sample of this size could demonstrate (even if every case passed)
  or a margin finer than one case's weight :math:`1/N` cannot be resolved; the row says how many
  cases would be needed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, Literal, TypeAlias, TypedDict

import numpy as np
import numpy.typing as npt
import polars as pl

from gatestats._typing import JSONObject
from gatestats.estimators import case_mean_interval
from gatestats.estimators.intervals import case_mean_interval_at
from gatestats.gate.policy import Rule
from gatestats.gate.verdict import RuleResult
from gatestats.paired import Comparison, ComparisonOptions, PairedCases, compare_pair, pair_cases
from gatestats.paired.search import fewest
from gatestats.vocabulary import Metric, metric_spec

__all__ = [
    "Bounds",
    "RuleEvidence",
    "bisect_pvalue",
    "interval_pvalues",
    "paired_cases_evidence",
    "paired_evidence",
    "paired_metric",
    "rule_result",
    "rule_row",
    "threshold_evidence",
    "threshold_resolution",
]

Kind = Literal["threshold", "paired", "cost_threshold", "cost_increase"]

#: Interval the threshold rows invert, at every N: ``auto`` switches to the CLT interval from 5,000
#: cases, whose false-pass rate at the threshold reached 0.067 at a nominal 0.05 there (skewed case
#: values near 0.98; docs/size_study.md, section C); the continuity-corrected Wilson interval stayed
#: within the level at every N.
THRESHOLD_METHOD: Final = "wilson"
#: The test named on a threshold row.
_THRESHOLD_TEST: Final = "case-level interval inversion"


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleEvidence:
    """Observed values and unadjusted one-sided p-values of one verdict row (before multiplicity).

    ``status`` is ``ok`` (the p-values can decide), ``cannot_resolve`` (the sample could not
    decide even in the best case; ``cases_needed`` says how many) or ``insufficient_evidence``
    (nothing can be computed; ``reason`` says why).
    """

    kind: Kind
    observed: float | None
    baseline: float | None
    ci_low: float | None
    ci_high: float | None
    test: str
    threshold: float | None
    pvalue_pass: float | None
    pvalue_fail: float | None
    status: Literal["ok", "cannot_resolve", "insufficient_evidence"]
    reason: str | None
    n_cases: int
    cases_needed: int | None = None
    flips_pass_to_fail: tuple[str, ...] = ()
    flips_fail_to_pass: tuple[str, ...] = ()
    details: JSONObject | None = None

    @classmethod
    def insufficient(
        cls, kind: Kind, *, test: str, threshold: float | None, reason: str, n_cases: int, observed: float | None = None
    ) -> RuleEvidence:
        """The evidence of a row nothing can be computed for: ``insufficient_evidence`` with the reason.

        Parameters
        ----------
        kind, test, threshold
            The row's kind, the test it would have used, and its threshold.
        reason
            Why nothing can be computed.
        n_cases
            The cases the row looked at.
        observed
            The observed value, when there is one.

        Returns
        -------
        RuleEvidence
            No baseline, interval or p-value.
        """
        return cls(
            kind=kind,
            observed=observed,
            baseline=None,
            ci_low=None,
            ci_high=None,
            test=test,
            threshold=threshold,
            pvalue_pass=None,
            pvalue_fail=None,
            status="insufficient_evidence",
            reason=reason,
            n_cases=n_cases,
        )


def bisect_pvalue(excludes: Callable[[float], bool]) -> float:
    """Smallest alpha in (1e-12, 0.5) at which ``excludes(alpha)`` holds (monotone); 1.0 when it never does.

    Parameters
    ----------
    excludes
        Whether the one-sided ``1 - alpha`` bound excludes the null value at ``alpha`` (monotone in alpha).

    Returns
    -------
    float
        The p-value (to the bisection's precision), 1.0 when no alpha below 0.5 excludes it.
    """
    if not excludes(0.4999):
        return 1.0
    lo, hi = 1e-12, 0.4999
    if excludes(lo):
        return lo
    for _ in range(60):
        mid = math.sqrt(lo * hi) if hi / lo > 10 else (lo + hi) / 2
        if excludes(mid):
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-7 * hi:
            break
    return hi


#: An interval's ``(low, high)``, each end ``None`` where there is none.
Bounds: TypeAlias = tuple[float | None, float | None]


def interval_pvalues(bounds: Callable[[float], Bounds], threshold: float) -> tuple[float, float]:
    """One-sided p-values of "above ``threshold``" and "below ``threshold``" by inverting an interval.

    Parameters
    ----------
    bounds
        The ``(low, high)`` interval at level ``1 - 2 * alpha`` for a given ``alpha`` (each end ``None``
        where there is none), so each end is a one-sided ``1 - alpha`` bound.
    threshold
        The value tested.

    Returns
    -------
    tuple[float, float]
        The smallest alpha at which the lower bound is above ``threshold``, and the smallest at which
        the upper bound is below it (:func:`bisect_pvalue`; 1.0 when none below 0.5 is).
    """

    def above(alpha: float) -> bool:
        low = bounds(alpha)[0]
        return low is not None and low > threshold

    def below(alpha: float) -> bool:
        high = bounds(alpha)[1]
        return high is not None and high < threshold

    return bisect_pvalue(above), bisect_pvalue(below)


def _one_sided_bounds(
    values: npt.NDArray[np.float64], groups: npt.NDArray[Any] | None, alpha: float, seed: int
) -> Bounds:
    r = case_mean_interval(values, groups=groups, method=THRESHOLD_METHOD, confidence_level=1 - 2 * alpha, seed=seed)
    if r.status != "ok" or r.ci_low is None or r.ci_high is None:
        return None, None
    return r.ci_low, r.ci_high


def _threshold_pvalues(
    values: npt.NDArray[np.float64], groups: npt.NDArray[Any] | None, threshold: float, seed: int
) -> tuple[float, float]:
    """(p_pass, p_fail) for ``mean > threshold`` by inverting the case-level interval.

    The interval of ``values`` at each level of the search is :func:`_one_sided_bounds`'
    (:func:`~gatestats.estimators.intervals.case_mean_interval_at`: what does not depend on the
    level computed once, not at each step).
    """
    at = case_mean_interval_at(values, groups=groups, method=THRESHOLD_METHOD, seed=seed)

    def bounds(alpha: float) -> Bounds:
        r = at(1 - 2 * alpha)
        if r.status != "ok" or r.ci_low is None or r.ci_high is None:
            return None, None
        return r.ci_low, r.ci_high

    return interval_pvalues(bounds, threshold)


def _cases_needed_for_threshold(n: int, threshold: float, alpha: float, seed: int) -> int | None:
    """Fewest cases with which an all-pass sample would show ``mean > threshold`` at ``alpha``."""
    if threshold >= 1:
        return None

    def ok(m: int) -> bool:
        low = _one_sided_bounds(np.ones(m), None, alpha, seed)[0]
        return low is not None and low > threshold

    return fewest(ok, n, limit=10_000_000)


def threshold_resolution(
    n: int, threshold: float, alpha: float, seed: int
) -> tuple[Literal["ok", "cannot_resolve"], str | None, int | None]:
    """Whether ``n`` cases could show a value above ``threshold`` at ``alpha``; if not, why and how many could.

    The answer depends on the arguments only and is kept (by value, type and sign, up to 1,024 of
    them): a gate asks again for the same ones at each end of its bounds, in its search of
    ``to_decide`` and for its families, and a simulation at every replication.

    Parameters
    ----------
    n
        The cases (or groups) the row has.
    threshold
        The rule's threshold.
    alpha
        The rule's alpha.
    seed
        The policy's seed (for the betting test's resampling).

    Returns
    -------
    tuple[Literal["ok", "cannot_resolve"], str | None, int | None]
        ``ok`` (no reason, no count), or ``cannot_resolve`` with the reason in words and the
        cases that could resolve it (``None``: none could).
    """
    return _resolution(n, threshold, alpha, seed, repr(threshold), repr(alpha))


@lru_cache(maxsize=1024, typed=True)
def _resolution(
    n: int, threshold: float, alpha: float, seed: int, _threshold_text: str, _alpha_text: str
) -> tuple[Literal["ok", "cannot_resolve"], str | None, int | None]:
    """:func:`threshold_resolution`, kept by its arguments (their texts tell ``-0.0`` from ``0.0``)."""
    best = _threshold_pvalues(np.ones(n), None, threshold, seed)[0]
    if best <= alpha:
        return "ok", None, None
    needed = _cases_needed_for_threshold(n, threshold, alpha, seed)
    grid = 1 / n
    finer = f"; the threshold {threshold:g} is finer than one case's weight 1/{n}" if 1 - threshold < grid else ""
    reason = (
        f"even if all {n} cases passed every trial, the data could not show a value above {threshold:g} "
        f"at alpha {alpha:g}{finer}"
        + (f": about {needed} cases are needed" if needed is not None else ": no sample size can")
    )
    return "cannot_resolve", reason, needed


def threshold_evidence(
    values: npt.NDArray[np.float64],
    groups: npt.NDArray[Any] | None,
    *,
    rule: Rule,
    alpha: float,
    confidence_level: float,
    seed: int,
) -> RuleEvidence:
    """Evidence that the candidate's mean of per-case ``values`` is above ``rule.threshold``.

    ``alpha`` is the level the resolution check uses (the rule's, before multiplicity).

    Parameters
    ----------
    values
        The candidate's per-case values (pass rate, pass^k or pass@k estimates).
    groups
        The independent group of each case (``None``: every case is its own group).
    rule
        The threshold rule (its metric, k and threshold).
    alpha
        The rule's alpha, for the resolution check.
    confidence_level
        The level of the interval the row shows.
    seed
        Seed of the resampling of the resolution check.

    Returns
    -------
    RuleEvidence
        The row's evidence: observed mean, interval, both one-sided p-values and the resolution.
    """
    threshold = float(rule.threshold if rule.threshold is not None else math.nan)
    n = int(values.size)
    if n == 0:
        why = "no case of this slice has enough valid trials"
        return RuleEvidence.insufficient("threshold", test=_THRESHOLD_TEST, threshold=threshold, reason=why, n_cases=0)
    shown = case_mean_interval(
        values, groups=groups, method=THRESHOLD_METHOD, confidence_level=confidence_level, seed=seed
    )
    p_pass, p_fail = _threshold_pvalues(values, groups, threshold, seed)
    status, reason, needed = threshold_resolution(n, threshold, alpha, seed)
    return RuleEvidence(
        kind="threshold",
        baseline=None,
        test=_THRESHOLD_TEST,
        observed=float(values.mean()),
        ci_low=shown.ci_low,
        ci_high=shown.ci_high,
        threshold=threshold,
        pvalue_pass=p_pass,
        pvalue_fail=p_fail,
        status=status,
        reason=reason,
        n_cases=n,
        cases_needed=needed,
        details={"interval_method": shown.method, "interval_status": shown.status, "interval_reason": shown.reason},
    )


_NI_TESTS = {
    "exact_unconditional": "exact unconditional test (Tango-ordered)",
    "tango_score": "Tango score test",
    "bounded_mean": "bounded-mean betting test",
    "case_t": "case-level t test",
}


class _CompareOptions(TypedDict):
    """The options of :func:`gatestats.paired.compare_pair` a paired row fixes: levels and seed."""

    confidence_level: float
    alpha: float
    seed: int


def _compare(
    paired: PairedCases,
    options: _CompareOptions,
    *,
    margin: float | None = None,
    alternative: Literal["two-sided", "less", "greater"] = "two-sided",
    test: Literal["auto", "exact"] = "auto",
) -> Comparison:
    """:func:`gatestats.paired.compare` on cases paired once (its other options at their defaults)."""
    return compare_pair(paired, ComparisonOptions(margin=margin, alternative=alternative, test=test, **options))


@dataclass(frozen=True, slots=True, kw_only=True)
class _PairedTest:
    """What one of the paired tests found, before the row's status is decided."""

    cmp: Comparison  # the comparison whose counts, estimates and interval (the policy's level) the row reports
    test: str
    blocked: bool
    p_pass: float | None
    p_fail: float | None
    resolution_status: Literal["ok", "cannot_resolve", "insufficient_evidence"]
    reason: str | None
    needed: int | None


def _noninferiority(paired: PairedCases, options: _CompareOptions, *, margin: float) -> _PairedTest:
    """The non-inferiority test at margin ``margin > 0``, at the rule's alpha (``options["alpha"]``)."""
    cmp = _compare(paired, options, margin=margin)
    ni = cmp.noninferiority
    resolution_status = "ok" if ni is None else ni.status
    needed = None if ni is None else ni.cases_needed
    if resolution_status == "cannot_resolve" and needed is None:
        needed = math.ceil(1 / margin)
    return _PairedTest(
        cmp=cmp,
        test=_NI_TESTS.get(ni.method if ni is not None else "", "non-inferiority test"),
        # Only the test's own status blocks: a refused interval (e.g. per-case differences that do
        # not vary) is a display matter, and the test stays valid there.
        blocked=ni is None or ni.status == "insufficient_evidence",
        p_pass=None if ni is None else ni.pvalue,
        p_fail=None if ni is None else ni.pvalue_worse,
        resolution_status=resolution_status,
        reason=cmp.reason if ni is None else ni.reason,
        needed=needed,
    )


def _not_worse(paired: PairedCases, options: _CompareOptions) -> _PairedTest:
    """The test at margin 0: exact McNemar (one trial per independent case), else the bounded-mean test.

    Both run at the rule's alpha (``options["alpha"]``): the McNemar row's resolution check asks
    whether its discordant units could reach that alpha, not ``1 - confidence_level``.
    """
    better = _compare(paired, options, alternative="greater", test="exact")
    if better.design == "one_trial" and not better.clustered:
        worse = _compare(paired, options, alternative="less", test="exact")
        res = better.resolution
        unresolved = res is not None and res.status == "cannot_resolve"
        return _PairedTest(
            cmp=better,
            test="exact McNemar",
            blocked=better.status == "insufficient_evidence",
            p_pass=better.pvalue,
            p_fail=worse.pvalue,
            resolution_status="cannot_resolve" if unresolved else "ok",
            reason=res.reason if res is not None and unresolved else better.reason,
            needed=res.cases_needed if res is not None else None,
        )
    # The sign test is a test of exchangeability (a median), not of the mean difference the
    # rule is about: with several trials or groups the bounded-mean test decides (it needs
    # no resolution check: a clear gain shows at any number of units).
    blocked = bool(better.undefined_cases)
    p_pass = p_fail = None
    if not blocked:
        p_pass, p_fail = better.mean_difference_pvalues(margin=0.0)
    return _PairedTest(
        cmp=better,
        test="bounded-mean betting test",
        blocked=blocked,
        p_pass=p_pass,
        p_fail=p_fail,
        resolution_status="ok",
        reason=better.reason,
        needed=None,
    )


def paired_evidence(
    records: pl.DataFrame,
    *,
    rule: Rule,
    baseline: str,
    candidate: str,
    alpha: float,
    confidence_level: float,
    seed: int,
) -> RuleEvidence:
    """Evidence that the candidate is not worse than the baseline by more than ``rule.margin``.

    The cases are paired once (:func:`gatestats.paired.pair_cases`, the rule's metric and k) and
    every test of the row reads that pairing (:func:`paired_cases_evidence`).

    Parameters
    ----------
    records
        Both systems' records of the rule's cases only.
    rule
        The paired rule (its metric, k and margin; no margin means 0).
    baseline
        The baseline's system label in ``records``.
    candidate
        The candidate's system label in ``records``.
    alpha
        The rule's alpha, passed as it is to :func:`gatestats.paired.compare`: the level of the
        one-sided non-inferiority test and of the resolution check (never turned into a confidence level).
    confidence_level
        The level of the interval the row shows (and only of it).
    seed
        Seed of the comparison's resampling, recorded in the verdict.

    Returns
    -------
    RuleEvidence
        The paired row's evidence: both one-sided p-values, the interval of the difference and
        the flips; ``insufficient_evidence`` or ``cannot_resolve`` with a reason where it cannot decide.

    Raises
    ------
    GatestatsError, ValueError
        The cases cannot be paired (:func:`gatestats.paired.pair_cases`).
    """
    paired = pair_cases(records, baseline=baseline, candidate=candidate, metric=paired_metric(rule), k=rule.k)
    return paired_cases_evidence(paired, rule=rule, alpha=alpha, confidence_level=confidence_level, seed=seed)


def paired_metric(rule: Rule) -> Metric:
    """The per-case estimate a paired ``rule`` compares (its metric's estimand; pass@k for the others).

    Parameters
    ----------
    rule
        The paired rule.

    Returns
    -------
    Metric
        The metric :func:`gatestats.paired.pair_cases` tabulates for it.
    """
    return metric_spec(rule.metric).estimand or "pass_at_k"


def paired_cases_evidence(
    paired: PairedCases, *, rule: Rule, alpha: float, confidence_level: float, seed: int
) -> RuleEvidence:
    """:func:`paired_evidence` on cases already paired (:func:`gatestats.paired.pair_cases` at :func:`paired_metric`).

    Parameters
    ----------
    paired
        The rule's cases of both systems, paired on the rule's metric and k.
    rule
        The paired rule (its metric, k and margin; no margin means 0).
    alpha
        The rule's alpha (as in :func:`paired_evidence`).
    confidence_level
        The level of the interval the row shows (and only of it).
    seed
        Seed of the comparison's resampling, recorded in the verdict.

    Returns
    -------
    RuleEvidence
        As :func:`paired_evidence`.
    """
    margin = float(rule.margin or 0.0)
    options: _CompareOptions = {"confidence_level": confidence_level, "alpha": alpha, "seed": seed}
    found = _noninferiority(paired, options, margin=margin) if margin > 0 else _not_worse(paired, options)
    cmp, reason = found.cmp, found.reason
    status: Literal["ok", "cannot_resolve", "insufficient_evidence"]
    if found.blocked or found.p_pass is None or found.p_fail is None:
        status = "insufficient_evidence"
        reason = cmp.reason or reason or "the paired test could not be computed"
    elif found.resolution_status == "cannot_resolve":
        status = "cannot_resolve"
    else:
        status = "ok"
        reason = None
    return RuleEvidence(
        kind="paired",
        threshold=-margin,
        observed=cmp.p_candidate,
        baseline=cmp.p_baseline,
        ci_low=cmp.diff_ci_low,
        ci_high=cmp.diff_ci_high,
        test=found.test,
        pvalue_pass=found.p_pass,
        pvalue_fail=found.p_fail,
        status=status,
        reason=reason,
        n_cases=cmp.n_pairs,
        cases_needed=found.needed,
        flips_pass_to_fail=cmp.flips_pass_to_fail,
        flips_fail_to_pass=cmp.flips_fail_to_pass,
        details={"difference": cmp.diff, "b": cmp.b, "c": cmp.c, "design": cmp.design, "n_units": cmp.n_units},
    )


def rule_row(rule: Rule, **row: Any) -> RuleResult:
    """A verdict row of ``rule``: the rule's own fields (name, metric, slice, k, action, alpha, grader) and ``row``.

    Parameters
    ----------
    rule
        The policy's rule.
    **row
        The row's other :class:`~gatestats.gate.verdict.RuleResult` fields (its label, evidence and decision).

    Returns
    -------
    RuleResult
        The verdict row.
    """
    return RuleResult(
        rule=rule.name,
        metric=rule.metric,
        slice=rule.slice,
        k=rule.k,
        action=rule.action,
        alpha=rule.alpha,
        grader=rule.grader,
        **row,
    )


#: The fields a verdict row copies from its :class:`RuleEvidence`.
_EVIDENCE_FIELDS = (
    "kind",
    "observed",
    "baseline",
    "ci_low",
    "ci_high",
    "threshold",
    "test",
    "pvalue_pass",
    "pvalue_fail",
    "n_cases",
    "reason",
    "cases_needed",
)


def rule_result(rule: Rule, row: str, ev: RuleEvidence, *, margin: float | None) -> RuleResult:
    """The verdict row of ``ev`` before multiplicity (decided later: ``pass`` stands for "decidable").

    Parameters
    ----------
    rule
        The policy's rule.
    row
        The row's label in the verdict.
    ev
        The row's evidence.
    margin
        The non-inferiority margin shown in the row (``None`` for thresholds).

    Returns
    -------
    RuleResult
        The verdict row, its decision to be set after the multiplicity correction.
    """
    return rule_row(
        rule,
        row=row,
        margin=margin,
        pvalue_pass_adjusted=None,
        pvalue_fail_adjusted=None,
        decision="insufficient_evidence" if ev.status != "ok" else "pass",
        **{name: getattr(ev, name) for name in _EVIDENCE_FIELDS},
    )
