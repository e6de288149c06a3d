r"""Simultaneous intervals for a family of paired comparisons, compatible with its multiplicity correction.

:func:`compare_many` adjusts p-values for multiplicity, but each comparison's own interval is at the
per-comparison level: with many pairs some of those intervals exclude 0 while the adjusted p-value is
not significant. The intervals here hold *jointly*: with probability at least :math:`1 - \alpha`
every one of the :math:`m` intervals covers its difference
:math:`\delta_i = p_\text{candidate} - p_\text{baseline}`. Each is built from the comparison's own
interval method (Tango's score interval with one trial per case, the paired bootstrap or the
clustered t interval otherwise), evaluated at other levels (:meth:`Comparison.confidence_interval`).

``bonferroni``
    Each interval at level :math:`1 - \alpha/m`. It excludes 0 exactly when the Bonferroni
    procedure run on the *interval's own test* (the test dual to it: at :math:`\delta = 0`
    Tango's score statistic is McNemar's uncorrected asymptotic statistic :math:`(c - b)/\sqrt{b + c}`)
    rejects.
``holm``
    The intervals compatible with Holm's step-down procedure of Strassburger & Bretz (2008,
    Stat. Med. 27:4914, sec. 3) and Guilbaud (2008, Biometrical J. 50:678). That construction is
    for **one-sided** hypotheses :math:`H_i: \delta_i \le 0`. With :math:`R` the hypotheses Holm
    rejects at level :math:`\alpha` (the step-down run on the one-sided bounds: at a step with
    :math:`k` hypotheses left, reject those whose one-sided bound at level :math:`1 - \alpha/k`
    exceeds 0), the lower bounds

    .. math::

        L_i = \begin{cases} 0 & i \in R \ne I \\ L_i(\alpha / (m - |R|)) & i \notin R \\
        \max(0, L_i(\alpha/m)) & R = I \end{cases}

    hold jointly with probability at least :math:`1 - \alpha`. A rejected hypothesis gets the
    bound 0 itself (the difference is positive, and nothing more is claimed) unless all are
    rejected: that is the price of the step-down's power and is why these bounds are called
    non-informative for the rejected hypotheses. No published construction gives step-down
    compatible *two-sided* intervals of this kind, so a two-sided family is split into its two
    one-sided families, each run at :math:`\alpha/2` (lower bounds for "candidate better", upper
    bounds for "candidate worse"); by Bonferroni over the two, all :math:`2m` bounds hold jointly
    with probability at least :math:`1 - \alpha`. The two-sided Bonferroni interval at
    :math:`1 - \alpha/m` is exactly these two one-sided families at :math:`\alpha/(2m)` each, so the
    split Holm intervals are never wider than Bonferroni's on a side that is not rejected. Their
    decisions (a side rejected) are Holm's at :math:`\alpha/2` per direction, which can reject a
    little less than the two-sided Holm on p-values when both directions reject in one family.

The decision of an interval (:attr:`SimultaneousInterval.decision`) is the interval's own: the
Bonferroni interval rejects when it excludes 0; the Holm bound rejects when its side is in
:math:`R` (its bound is then 0, read as "above 0"; :attr:`SimultaneousInterval.open_at_zero`).
The family's p-value decision (``decision`` of :class:`~gatestats.paired.MultipleComparison`) is
made by the reported test (mid-p or exact McNemar by default) and can differ from it in a few
borderline pairs; docs/paired.md measures how often on real data.

A comparison without an interval (insufficient evidence) still counts in :math:`m`, as it does in
the p-value correction, and is never rejected.

References
----------
Guilbaud, O. (2008). Simultaneous confidence regions corresponding to Holm's step-down procedure
    and other closed-testing procedures. Biometrical Journal 50(5), 678-692.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
    Statistics 6(2), 65-70.
Strassburger, K. & Bretz, F. (2008). Compatible simultaneous lower confidence bounds for the Holm
    procedure and other Bonferroni-based closed tests. Statistics in Medicine 27(24), 4914-4927.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from gatestats._typing import JSONObject
from gatestats.paired.compare import compare
from gatestats.paired.result import Comparison
from gatestats.vocabulary import FAILED, PASSED, SIMULTANEOUS_METHODS, Alternative, SimultaneousMethod, check_choice

__all__ = [
    "PairDecision",
    "SimultaneousInterval",
    "SimultaneousMethod",
    "pvalue_decision",
    "simultaneous_intervals",
]

PairDecision = Literal["candidate better", "baseline better", "no significant difference", "insufficient evidence"]
_Side = Literal["low", "high"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SimultaneousInterval:
    """One comparison's interval in a family of simultaneous intervals.

    Attributes
    ----------
    ci_low, ci_high
        The bounds (``None``: no interval, the comparison has insufficient evidence).
    method
        ``bonferroni`` or ``holm`` (module docstring).
    confidence_level
        The family-wise level: all the family's intervals hold together with at least this probability.
    decision
        The interval's own decision: ``candidate better`` (the lower side rejected), ``baseline
        better`` (the upper side rejected), ``no significant difference`` or ``insufficient evidence``.
    open_at_zero
        A Holm bound of a rejected side is 0 itself, meaning "beyond 0" (the interval is
        ``(0, high]`` or ``[low, 0)``); always ``False`` for Bonferroni.
    """

    ci_low: float | None
    ci_high: float | None
    method: SimultaneousMethod
    confidence_level: float
    decision: PairDecision
    open_at_zero: bool

    def to_dict(self) -> JSONObject:
        """The JSON object of the interval."""
        return {
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "method": self.method,
            "confidence_level": self.confidence_level,
            "decision": self.decision,
            "open_at_zero": self.open_at_zero,
        }


def pvalue_decision(comparison: Comparison, alpha: float) -> PairDecision:
    """The decision of an adjusted p-value at ``alpha``: which system is better, if either.

    Parameters
    ----------
    comparison
        A comparison of a family (its ``pvalue_adjusted`` set; else its ``pvalue`` is used).
    alpha
        The family's level.

    Returns
    -------
    PairDecision
        ``insufficient evidence`` without a p-value or when the comparison cannot resolve a
        difference at its level; otherwise the direction of the difference when the p-value is at
        most ``alpha``, else ``no significant difference``.
    """
    p = comparison.pvalue_adjusted if comparison.pvalue_adjusted is not None else comparison.pvalue
    if p is None or comparison.status != "ok":
        return "insufficient evidence"
    if p > alpha:
        return "no significant difference"
    if comparison.alternative != "two-sided":
        return "candidate better" if comparison.alternative == "greater" else "baseline better"
    # The direction the test measured: the mean difference for the permutation test, the flips
    # (c against b) for the exact, mid-p and sign tests.
    if comparison.test == "permutation" and comparison.diff is not None:
        better = comparison.diff > 0
    else:
        better = comparison.c > comparison.b
    return "candidate better" if better else "baseline better"


def simultaneous_intervals(
    comparisons: Sequence[Comparison], *, method: SimultaneousMethod = "holm"
) -> tuple[SimultaneousInterval, ...]:
    r"""Intervals for every comparison of a family that hold jointly at the comparisons' level.

    Parameters
    ----------
    comparisons
        The family (all at one ``confidence_level`` and ``alternative``): the family-wise level is
        their ``confidence_level``, :math:`\alpha = 1 - ` it.
    method
        ``holm`` (Strassburger & Bretz 2008, split into two one-sided families when two-sided) or
        ``bonferroni`` (each at :math:`1 - \alpha/m`).

    Returns
    -------
    tuple[SimultaneousInterval, ...]
        One per comparison, in order.

    Raises
    ------
    ValueError
        An unknown method, or comparisons at different levels or alternatives.

    Examples
    --------
    Three comparisons on 200 cases (b, c discordant counts), at 95% family-wise:

    >>> from gatestats.paired.simultaneous import _example_family
    >>> family = _example_family([(10, 40), (20, 22), (30, 12)])
    >>> [(round(x.ci_low, 3), round(x.ci_high, 3), x.decision) for x in simultaneous_intervals(family)]
    [(0.0, 0.229, 'candidate better'), (-0.065, 0.085, 'no significant difference'), (-0.165, 0.0, 'baseline better')]
    >>> [(round(x.ci_low, 3), round(x.ci_high, 3)) for x in simultaneous_intervals(family, method="bonferroni")]
    [(0.069, 0.235), (-0.07, 0.091), (-0.17, -0.013)]
    """
    check_choice(method, SIMULTANEOUS_METHODS, "simultaneous interval method")
    if not comparisons:
        return ()
    level, alternative = _family_level(comparisons)
    alpha = round(1 - level, 12)
    sides = _sides(alternative, alpha)
    bounds = {side: _side_bounds(comparisons, side, side_alpha, method) for side, side_alpha in sides.items()}
    out = []
    for i, x in enumerate(comparisons):
        if not _has_interval(x):
            out.append(_none(method, level))
            continue
        low, low_rejected = bounds["low"][i] if "low" in bounds else (-1.0, False)
        high, high_rejected = bounds["high"][i] if "high" in bounds else (1.0, False)
        decision: PairDecision = "no significant difference"
        if low_rejected:
            decision = "candidate better"
        elif high_rejected:
            decision = "baseline better"
        open_at_zero = method == "holm" and ((low_rejected and low == 0.0) or (high_rejected and high == 0.0))
        out.append(
            SimultaneousInterval(
                ci_low=low,
                ci_high=high,
                method=method,
                confidence_level=level,
                decision=decision,
                open_at_zero=open_at_zero,
            )
        )
    return tuple(out)


def _family_level(comparisons: Sequence[Comparison]) -> tuple[float, Alternative]:
    levels = {x.confidence_level for x in comparisons}
    alternatives = {x.alternative for x in comparisons}
    if len(levels) != 1 or len(alternatives) != 1:
        msg = f"a family needs one confidence level and one alternative (got {sorted(levels)}, {sorted(alternatives)})"
        raise ValueError(msg)
    return levels.pop(), alternatives.pop()


def _sides(alternative: Alternative, alpha: float) -> dict[_Side, float]:
    """The one-sided families of bounds and the level of each (two-sided: both sides at alpha/2)."""
    if alternative == "two-sided":
        return {"low": alpha / 2, "high": alpha / 2}
    return {"low": alpha} if alternative == "greater" else {"high": alpha}


def _has_interval(x: Comparison) -> bool:
    return x._diffs is not None and x.interval.status == "ok"


def _none(method: SimultaneousMethod, level: float) -> SimultaneousInterval:
    return SimultaneousInterval(
        ci_low=None,
        ci_high=None,
        method=method,
        confidence_level=level,
        decision="insufficient evidence",
        open_at_zero=False,
    )


def _one_sided_bound(x: Comparison, gamma: float, side: _Side) -> float:
    """The comparison's one-sided bound at error ``gamma`` on ``side``, from its own interval method."""
    level = 1 - 2 * gamma if x.alternative == "two-sided" else 1 - gamma
    interval = x.confidence_interval(level)
    bound = interval.ci_low if side == "low" else interval.ci_high
    if bound is None:  # the method gave no interval at this level: nothing excluded
        return -1.0 if side == "low" else 1.0
    return float(bound)


def _side_bounds(
    comparisons: Sequence[Comparison], side: _Side, alpha: float, method: SimultaneousMethod
) -> list[tuple[float, bool]]:
    """Each comparison's bound on ``side`` and whether its one-sided hypothesis is rejected (family level ``alpha``)."""
    m = len(comparisons)
    usable = [i for i, x in enumerate(comparisons) if _has_interval(x)]
    cache: dict[tuple[int, int], float] = {}

    def bound(i: int, k: int) -> float:  # the bound at error alpha / k, computed once
        if (i, k) not in cache:
            cache[(i, k)] = _one_sided_bound(comparisons[i], alpha / k, side)
        return cache[(i, k)]

    beyond: Callable[[float], bool] = (lambda b: b > 0) if side == "low" else (lambda b: b < 0)
    if method == "bonferroni":
        return [(bound(i, m), beyond(bound(i, m))) if i in usable else (0.0, False) for i in range(m)]
    rejected = _holm_rejections(usable, m, bound, beyond)
    out: list[tuple[float, bool]] = []
    for i in range(m):
        if i not in usable:
            out.append((0.0, False))
        elif len(rejected) == m:  # all rejected: the informative bound, cut at 0
            b = bound(i, m)
            out.append((max(0.0, b) if side == "low" else min(0.0, b), True))
        elif i in rejected:
            out.append((0.0, True))
        else:
            out.append((bound(i, m - len(rejected)), False))
    return out


def _holm_rejections(
    usable: list[int], m: int, bound: Callable[[int, int], float], beyond: Callable[[float], bool]
) -> set[int]:
    """Holm's step-down on bounds: at each step reject every remaining bound beyond 0 at alpha / (m - |R|)."""
    rejected: set[int] = set()
    while len(rejected) < m:
        k = m - len(rejected)
        new = {i for i in usable if i not in rejected and beyond(bound(i, k))}
        if not new:
            break
        rejected |= new
    return rejected


def _example_family(counts: Sequence[tuple[int, int]], n: int = 200) -> list[Comparison]:
    """Comparisons on ``n`` cases with the discordant counts ``(b, c)`` given (for the examples and tests)."""
    rows = []
    for j, (b, c) in enumerate(counts):
        for i in range(n):
            base = 1 if i < b or i >= b + c + (n - b - c) // 2 else 0
            cand = 1 if b <= i < b + c or i >= b + c + (n - b - c) // 2 else 0
            rows += [(f"base{j}", f"c{i}", base), (f"cand{j}", f"c{i}", cand)]
    records = pl.DataFrame(rows, schema=["system", "case_id", "won"], orient="row").select(
        "system",
        "case_id",
        case_version=None,
        case_group=None,
        trial=0,
        attempt=0,
        outcome=pl.when(pl.col("won") == 1).then(pl.lit(PASSED)).otherwise(pl.lit(FAILED)),
    )
    return [compare(records, baseline=f"base{j}", candidate=f"cand{j}") for j in range(len(counts))]
