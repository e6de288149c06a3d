"""The levels a trigger compares with when it is not a fixed number: the gate's estimate, the previous release.

- ``vs_gate`` (accepted-outcome rate): the level is the *lower* end of the gate's interval for the
  candidate's pass rate (pass^1, every case counted, as bound in the verdict) minus the plan's δ.
  With probability at least 1 − α_gate (one side of the gate's interval) the true golden-set rate is
  above that end, so a production rate at least δ below the golden rate is tested against a level
  at or below the true one: the false-rollback rate is at most the trigger's α plus the gate's
  one-sided α, and the decision file says so.
- ``vs_previous`` (cost per accepted outcome, review minutes): the previous release's value in the
  same stage, read from its observation log through the same door, enters as an *upper*
  confidence bound: one-sided betting confidence sequences (the mean cost or review minutes, bounded
  by the plan's cap; the accepted rate from below), a quarter of the trigger's α to each of the
  cost's two bounds (half to the review minutes' one), half to the monitor. The sampling error of
  the reference then cannot raise a false rollback: in total at most the trigger's α. The bound is
  as wide as the plan's cap makes it: a cap far above the real costs costs power, never validity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gatestats.gate import Verdict
from gatestats.sequential import confidence_sequence

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
    """A one-sided upper confidence bound for the mean of values in ``[0, cap]`` (``None`` without values).

    The betting confidence sequence of :func:`gatestats.sequential.confidence_sequence` (Waudby-Smith &
    Ramdas 2024), one-sided, at its last observation: valid at a fixed size and while the previous
    release's log still grows, and tight when the values vary little (Hoeffding's bound is not: it
    pays for the whole range ``cap`` whatever the spread).

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
        The upper end, at most ``cap``.
    """
    if values.size == 0:
        return None
    scaled = np.clip(values, 0.0, cap) / cap
    return cap * float(confidence_sequence(scaled, alpha=alpha, alternative="less").upper[-1])


def rate_lower_bound(successes: npt.NDArray[np.float64], *, alpha: float) -> float | None:
    """A one-sided lower confidence bound for a proportion from its 0/1 observations (``None`` without any).

    Parameters
    ----------
    successes
        The 0/1 observations.
    alpha
        The bound's error level.

    Returns
    -------
    float or None
        The lower end of the betting confidence sequence (one-sided) at the last observation.
    """
    if successes.size == 0:
        return None
    return float(confidence_sequence(successes, alpha=alpha, alternative="greater").lower[-1])
