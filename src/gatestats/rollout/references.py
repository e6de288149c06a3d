"""The levels a trigger compares with when it is not a fixed number: the gate's estimate, the previous release.

- ``vs_gate`` (accepted-outcome rate): the level is the *lower* end of the gate's interval for the
  candidate's pass rate (pass^1, every case counted, as bound in the verdict) minus the plan's δ.
  With probability at least 1 − α_gate (one side of the gate's interval) the true golden-set rate is
  above that end, so a production rate at least δ below the golden rate is tested against a level
  at or below the true one: the false-rollback rate is at most the trigger's α plus the gate's
  one-sided α, and the decision file says so.
- ``vs_previous`` (cost per accepted outcome, review minutes): the previous release's value in the
  same stage, read from its observation log through the same door, enters as an *upper*
  confidence bound: a quarter of the trigger's α to each fixed-sample bound (Hoeffding for the mean
  cost or review minutes, bounded by the plan's cap; Wilson for the accepted rate, one-sided), half
  to the monitor. The sampling error of the reference then cannot raise a false rollback: in total
  at most the trigger's α.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gatestats.estimators.intervals import wilson_interval
from gatestats.gate import Verdict

__all__ = ["Reference", "gate_reference", "mean_upper_bound", "rate_lower_bound"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Reference:
    """A level taken from elsewhere, what it is, and the α it costs (``None`` when it could not be found)."""

    value: float | None
    source: str
    alpha_spent: float
    reason: str | None = None


def gate_reference(verdict: Verdict) -> Reference:
    """The lower end of the gate's interval for the candidate's pass rate (pass^1), from the verdict.

    Parameters
    ----------
    verdict
        The verdict the rollout follows.

    Returns
    -------
    Reference
        ``value`` the lower end (``None`` when the verdict binds no such interval: a verdict without
        curves, or a candidate pass rate the gate could not estimate); ``alpha_spent`` the gate's
        one-sided α (half of 1 − its confidence level).
    """
    level = verdict.policy.confidence_level
    spent = (1 - level) / 2
    for point in verdict.curves:
        if point.side == "candidate" and point.metric == "pass_hat_k" and point.k == 1:
            if point.status != "ok" or point.ci_low is None:
                return Reference(
                    value=None, source="the gate's candidate pass rate", alpha_spent=spent, reason=point.reason
                )
            source = (
                f"the gate's candidate pass rate {point.estimate:.4f}, lower end {point.ci_low:.4f} of its "
                f"{level:.0%} interval over {point.n_cases} cases"
            )
            return Reference(value=point.ci_low, source=source, alpha_spent=spent)
    why = "the verdict binds no pass-rate curve for the candidate (a verdict written before curves were bound)"
    return Reference(value=None, source="the gate's candidate pass rate", alpha_spent=spent, reason=why)


def mean_upper_bound(values: npt.NDArray[np.float64], *, cap: float, alpha: float) -> float | None:
    """Hoeffding's one-sided upper bound for the mean of values in ``[0, cap]`` (``None`` without values).

    Parameters
    ----------
    values
        The observations (each in ``[0, cap]``; larger ones are clipped to ``cap``).
    cap
        The bound of one value.
    alpha
        The bound's error level.

    Returns
    -------
    float or None
        :math:`\\bar x + \\text{cap}\\,\\sqrt{\\ln(1/\\alpha) / (2n)}` (Hoeffding 1963), at most ``cap``.
    """
    if values.size == 0:
        return None
    mean = float(np.mean(np.clip(values, 0.0, cap)))
    return min(cap, mean + cap * math.sqrt(math.log(1 / alpha) / (2 * values.size)))


def rate_lower_bound(successes: int, n: int, *, alpha: float) -> float | None:
    """The one-sided Wilson lower bound for a proportion (``None`` when ``n`` is 0).

    Parameters
    ----------
    successes
        The successes.
    n
        The trials.
    alpha
        The bound's error level (one-sided).

    Returns
    -------
    float or None
        The lower end of the two-sided Wilson interval at confidence 1 − 2α (Wilson 1927;
        :func:`gatestats.estimators.intervals.wilson_interval`).
    """
    if n == 0:
        return None
    return wilson_interval(successes / n, n, confidence_level=1 - 2 * alpha)[0]
