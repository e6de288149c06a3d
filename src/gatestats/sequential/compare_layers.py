"""Does production look like the golden set? The comparison of a layer's rate with the gate's (issue 25).

:func:`layer_comparison` gives an interval for production minus golden and a decision
(``consistent`` / ``lower`` / ``higher``): Newcombe's (1998) hybrid score interval (his method 10,
the square-and-add of two Wilson intervals) with, on the golden side, the mean of the case-level
rates (the gate's estimate: the case as the unit) and its Wilson interval at the effective sample
size of Korn & Graubard (1998), so that repeated trials of one case are not counted as independent
observations. With one trial per case it is Newcombe's interval exactly (checked against his
published examples and statsmodels' ``confint_proportions_2indep(method="newcomb")``).

It is a fixed-sample interval, for the report: read once per report, not after every batch (the
anytime-valid rollback on the same question is :func:`gatestats.sequential.monitor.rate_trigger` at
:func:`gatestats.sequential.monitor.vs_reference_level`).

References
----------
Newcombe, R. G. (1998). Interval estimation for the difference between independent proportions:
comparison of eleven methods. *Statistics in Medicine* 17(8), 873-890.

Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected
number of positive counts estimated from survey data. *Survey Methodology* 24(2), 193-201.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from gatestats._typing import JSONObject
from gatestats.sequential.confseq import as_numbers
from gatestats.sequential.monitor import check_events, one_dimensional
from gatestats.vocabulary import check_open_unit

__all__ = ["LayerComparison", "LayerDecision", "layer_comparison"]

#: Production minus golden: ``lower`` / ``higher`` when the interval excludes 0.
LayerDecision: TypeAlias = Literal["consistent", "lower", "higher", "insufficient_evidence"]
_Array: TypeAlias = NDArray[np.float64]


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerComparison:
    """Production minus golden: the difference of rates, its interval and the decision.

    ``golden_effective_n`` is the golden side's effective sample size (the number of cases times
    trials when the cases' rates vary no more than binomially; fewer when they vary more).
    ``difference``, ``lower`` and ``upper`` are ``None`` when a side has no observation
    (``decision="insufficient_evidence"``).
    """

    method: str
    alpha: float
    golden_cases: int
    golden_rate: float | None
    golden_effective_n: float
    production_n: int
    production_rate: float | None
    difference: float | None
    lower: float | None
    upper: float | None
    decision: LayerDecision

    def to_dict(self) -> JSONObject:
        """JSON-ready form.

        Returns
        -------
        JSONObject
            The fields by name.
        """
        return {
            "method": self.method,
            "alpha": self.alpha,
            "golden_cases": self.golden_cases,
            "golden_rate": self.golden_rate,
            "golden_effective_n": self.golden_effective_n,
            "production_n": self.production_n,
            "production_rate": self.production_rate,
            "difference": self.difference,
            "lower": self.lower,
            "upper": self.upper,
            "decision": self.decision,
        }


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """The Wilson score interval for a proportion ``p`` of ``n`` (``n`` may be an effective size)."""
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _golden_side(rates: _Array, trials: _Array) -> tuple[float, float]:
    """The golden rate (mean of case rates) and its effective sample size (Korn & Graubard 1998).

    :math:`n_{eff} = \\hat p (1 - \\hat p) / \\widehat{\\mathrm{var}}`, with
    :math:`\\widehat{\\mathrm{var}} = \\sum (r_i - \\bar r)^2 / n^2` (the case as the unit), capped at
    the binomial size :math:`n^2 / \\sum 1/m_i` (design effect at least 1; the cap also when the
    variance is 0). With one trial per case it is exactly :math:`n`.
    """
    n = rates.size
    rate = float(np.mean(rates))
    if np.all(trials == 1):
        return rate, float(n)
    binomial = n * n / float(np.sum(1 / trials))
    var = float(np.sum((rates - rate) ** 2)) / (n * n)
    if var <= 0:
        return rate, binomial
    return rate, min(binomial, rate * (1 - rate) / var)


def _check_golden(case_rates: ArrayLike, trials_per_case: ArrayLike | int) -> tuple[_Array, _Array]:
    rates = one_dimensional("golden_case_rates", case_rates)
    bad = np.flatnonzero(~np.isfinite(rates) | (rates < 0) | (rates > 1))
    if bad.size:
        msg = f"golden_case_rates[{int(bad[0])}]: expected a number in [0, 1] (got {float(rates[bad[0]])!r})"
        raise ValueError(msg)
    given = as_numbers("trials_per_case", trials_per_case)
    if given.ndim > 1 or (given.ndim == 1 and given.size != rates.size):
        msg = f"trials_per_case: expected one whole number, or one per case ({rates.size}) (got shape {given.shape})"
        raise ValueError(msg)
    trials = np.broadcast_to(given, rates.shape).astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(trials) | (trials < 1) | (trials != np.round(trials)))
    if bad.size:
        msg = f"trials_per_case[{int(bad[0])}]: expected a whole number >= 1 (got {float(trials[bad[0]])!r})"
        raise ValueError(msg)
    passes = rates * trials
    bad = np.flatnonzero(np.abs(passes - np.round(passes)) > 1e-9)
    if bad.size:
        i = int(bad[0])
        msg = (
            f"golden_case_rates[{i}]: {float(rates[i])!r} is not a whole number of passes out of "
            f"{int(trials[i])} trial(s) (give trials_per_case)"
        )
        raise ValueError(msg)
    return rates, trials


def _insufficient(method: str, alpha: float, rates: _Array, events: _Array) -> LayerComparison:
    """The comparison when a side has no observation: no difference, no interval."""
    return LayerComparison(
        method=method,
        alpha=alpha,
        golden_cases=int(rates.size),
        golden_rate=float(np.mean(rates)) if rates.size else None,
        golden_effective_n=0.0,
        production_n=int(events.size),
        production_rate=float(np.mean(events)) if events.size else None,
        difference=None,
        lower=None,
        upper=None,
        decision="insufficient_evidence",
    )


def layer_comparison(
    golden_case_rates: ArrayLike,
    production_events: ArrayLike,
    *,
    alpha: float = 0.05,
    trials_per_case: ArrayLike | int = 1,
) -> LayerComparison:
    """Does production look like the golden set? An interval for production minus golden.

    Newcombe's (1998) hybrid score interval (his method 10): with Wilson intervals
    :math:`(l_1, u_1)` for production and :math:`(l_2, u_2)` for golden, the difference
    :math:`d = \\hat p_1 - \\hat p_2` has :math:`[d - \\sqrt{(\\hat p_1 - l_1)^2 + (u_2 - \\hat p_2)^2},\\
    d + \\sqrt{(u_1 - \\hat p_1)^2 + (\\hat p_2 - l_2)^2}]`. The golden side is the mean of the case
    rates (the gate's estimate, the case as the unit) with its Wilson interval at the effective
    sample size of Korn & Graubard (1998), so repeated trials of one case are not counted as
    independent; with one trial per case it is Newcombe's interval exactly.

    A fixed-sample interval, for the report: read once, not after every batch (the anytime-valid
    rollback on the same question is :func:`rate_trigger` at :func:`vs_reference_level`).

    Parameters
    ----------
    golden_case_rates
        The gate's case-level rates, each in [0, 1] (one per case).
    production_events
        0/1 per production (or shadow, pilot) observation.
    alpha
        The two-sided error level of the interval, in (0, 1).
    trials_per_case
        The trials behind each case rate (a whole number, or one per case).

    Returns
    -------
    LayerComparison
        ``decision``: ``lower`` (the interval is below 0), ``higher``, ``consistent``, or
        ``insufficient_evidence`` when a side is empty.

    Raises
    ------
    ValueError
        A rate outside [0, 1], an event not 0/1, a trial count below 1 or fractional, NaN anywhere,
        ``alpha`` outside (0, 1).

    Examples
    --------
    >>> c = layer_comparison([1] * 56 + [0] * 14, [1] * 48 + [0] * 32)  # Newcombe's example (a)
    >>> round(c.lower, 4), round(c.upper, 4), c.decision
    (-0.3339, -0.0524, 'lower')
    """
    alpha = check_open_unit(alpha, "alpha")
    rates, trials = _check_golden(golden_case_rates, trials_per_case)
    events = check_events(production_events, "production_events")
    method = "newcombe_hybrid_score" if np.all(trials == 1) else "newcombe_hybrid_score_effective_n"
    if rates.size == 0 or events.size == 0:
        return _insufficient(method, alpha, rates, events)
    z = float(special.ndtri(1 - alpha / 2))
    p2, n2 = _golden_side(rates, trials)
    p1 = float(np.mean(events))
    l1, u1 = _wilson(p1, float(events.size), z)
    l2, u2 = _wilson(p2, n2, z)
    d = p1 - p2
    # within [-1, 1] in exact arithmetic; a Wilson end rounded off 0 or 1 (u = 1 - 2**-53 at p = 1) must not push it out
    low = max(-1.0, d - math.hypot(p1 - l1, u2 - p2))
    high = min(1.0, d + math.hypot(u1 - p1, p2 - l2))
    decision: LayerDecision = "lower" if high < 0 else "higher" if low > 0 else "consistent"
    return LayerComparison(
        method=method,
        alpha=alpha,
        golden_cases=int(rates.size),
        golden_rate=p2,
        golden_effective_n=n2,
        production_n=int(events.size),
        production_rate=p1,
        difference=d,
        lower=low,
        upper=high,
        decision=decision,
    )
