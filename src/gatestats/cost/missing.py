r"""Cost per accepted outcome when some attempts carry no cost: the known part and bounds for the rest.

When :math:`m` of a group's attempts carry no cost, the cost per accepted outcome is not
identified, but it is bounded. With :math:`K` the known spend (every attempt that has a cost, plus
priced human time), :math:`A` the accepted outcomes (known for every attempt: only the cost is
missing) and :math:`c` an upper cost per attempt, each missing cost lies in :math:`[0, c]`, so

.. math::

    \frac{K}{A} \;\le\; \mathrm{CPA} \;\le\; \frac{K + m c}{A}

(worst-case, Manski-style partial identification: nothing is assumed about *which* attempts lost
their cost). ``c`` is stated: the largest observed cost per attempt in the group by default
(an assumption, said so in the result), or a value the user or the policy gives.

The interval of the bounds is the union of two case bootstraps with the same resamples: the
lower end is the lower bound of the interval with every missing cost at 0, the upper end the upper
bound of the interval with every missing cost at :math:`c`. If :math:`\theta_L \le \theta \le
\theta_U` (the population values at the two imputations), then
:math:`P(\theta < \hat L) \le P(\theta_L < \hat L) \approx \alpha/2` and likewise above, so the
union covers :math:`\theta` with probability at least about :math:`1 - \alpha` whatever the
missingness (Imbens & Manski 2004 give a narrower interval; the union is the conservative one).

The complete-case estimate (the attempts that have a cost, with their own accepted outcomes) is
given too, labelled: it assumes the lost costs are like the others (missing completely at
random) and is biased when the dear attempts are the ones whose cost was lost (docs/cost.md,
simulation).

References
----------
Manski, C. F. (2003). Partial Identification of Probability Distributions. Springer, ch. 1-2.
Imbens, G. W. & Manski, C. F. (2004). Confidence intervals for partially identified parameters.
    Econometrica 72(6), 1845-1857.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from gatestats._typing import JSONObject
from gatestats.cost._bootstrap import CostInterval, IntervalRule, RatioBootstrap
from gatestats.cost._frames import check_rate, prepare, record_ids_text
from gatestats.errors import InsufficientEvidenceError
from gatestats.vocabulary import FrameLike, Status, check_confidence_level

__all__ = [
    "CAP_SOURCES",
    "CapSource",
    "MissingCosts",
    "attempts_without_cost",
    "check_max_cost_per_attempt",
    "missing_costs",
]

#: Where the upper cost per attempt of the bounds comes from.
CapSource = Literal["largest observed", "given", "policy"]
CAP_SOURCES: Final[Mapping[CapSource, str]] = {
    "largest observed": "the largest observed cost per attempt in the group (an assumption: a lost cost may be larger)",
    "given": "the given maximum cost per attempt (--max-cost-per-attempt)",
    "policy": "the policy's max_cost_per_attempt_usd",
}


def check_max_cost_per_attempt(value: float | None) -> None:
    """``None`` or a finite number >= 0 (USD per attempt).

    Parameters
    ----------
    value
        The upper cost per attempt.

    Raises
    ------
    ValueError
        Not ``None`` and not a finite number >= 0.
    """
    check_rate("max_cost_per_attempt_usd", value, unit="USD")


def attempts_without_cost(
    records: FrameLike, *, review_rate_usd_per_hour: float | None, machine_rate_usd_per_hour: float | None
) -> pl.DataFrame:
    """The attempts whose spend is unknown, as :func:`gatestats.cost.cost_per_accepted` decides it.

    Parameters
    ----------
    records
        Run records (checked as by :func:`gatestats.cost.cost_per_accepted`).
    review_rate_usd_per_hour, machine_rate_usd_per_hour
        As there (an attempt with only ``machine_seconds`` has a cost when a machine rate is given).

    Returns
    -------
    polars.DataFrame
        ``system``, ``record_id`` of every attempt without a cost, sorted.

    Raises
    ------
    ReviewRateRequiredError, ValueError
        As :func:`gatestats.cost.cost_per_accepted`.
    """
    frame, _ = prepare(
        records, by=("system",), review_rate=review_rate_usd_per_hour, machine_rate=machine_rate_usd_per_hour
    )
    return frame.filter(pl.col("__spend").is_null()).select("system", "record_id").sort("system", "record_id")


@dataclass(frozen=True, slots=True, kw_only=True)
class MissingCosts:
    """What is known of a group's spend when some attempts carry no cost, and bounds for the rest.

    ``estimate_low``/``estimate_high`` bound the cost per accepted outcome (missing costs at 0 and at
    ``cap_usd_per_attempt``); ``ci_low``/``ci_high`` are the interval of the bounds (``None`` with
    ``interval_status == "insufficient_evidence"``, ``interval_reason`` says why). ``None`` bounds:
    no accepted outcome, unknown human time, or no cap (no cost observed and none given).
    """

    n_attempts_missing: int
    attempts_with_cost: int
    record_ids: tuple[str, ...]
    known_spend_usd: float | None
    known_total_usd: float | None
    cap_usd_per_attempt: float | None
    cap_source: CapSource
    missing_spend_high_usd: float | None
    estimate_low: float | None
    estimate_high: float | None
    complete_case_estimate: float | None
    complete_case_accepted: int
    ci_low: float | None
    ci_high: float | None
    interval_status: Status
    interval_reason: str | None
    confidence_level: float
    _low: RatioBootstrap | None = field(default=None, repr=False, compare=False)
    _high: RatioBootstrap | None = field(default=None, repr=False, compare=False)
    _rule: IntervalRule | None = field(default=None, repr=False, compare=False)
    _seed: int = field(default=0, repr=False, compare=False)
    _clustered: bool = field(default=False, repr=False, compare=False)

    @property
    def ids_text(self) -> str:
        """The ids of the attempts lacking a cost as the cost messages show them: ``'r-1', 'r-2' and 3 more``."""
        return record_ids_text(self.record_ids, self.n_attempts_missing)

    def confidence_interval(self, confidence_level: float = 0.95) -> CostInterval:
        """The interval of the bounds at another level (same resamples): the union of both imputations'.

        Parameters
        ----------
        confidence_level
            Two-sided level, in (0, 1).

        Returns
        -------
        CostInterval
            ``ci_low`` from the imputation at 0, ``ci_high`` from the one at the cap, or
            ``insufficient_evidence`` when either is refused.

        Raises
        ------
        InsufficientEvidenceError
            The bounds are undefined (nothing was resampled).
        ValueError
            ``confidence_level`` outside (0, 1).
        """
        if self._low is None or self._high is None or self._rule is None:
            msg = f"cost with missing parts: no interval: {self.interval_reason}"
            raise InsufficientEvidenceError(msg)
        check_confidence_level(confidence_level)
        return _union(self._rule, self._low, self._high, confidence_level, seed=self._seed, clustered=self._clustered)

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (``missing_costs`` of a group in ``gatestats cost --json``)."""
        return {
            "n_attempts_missing": self.n_attempts_missing,
            "attempts_with_cost": self.attempts_with_cost,
            "record_ids": list(self.record_ids),
            "known_spend_usd": self.known_spend_usd,
            "known_total_usd": self.known_total_usd,
            "cap_usd_per_attempt": self.cap_usd_per_attempt,
            "cap_source": self.cap_source,
            "cap_meaning": CAP_SOURCES[self.cap_source],
            "missing_spend_usd": {"low": 0.0, "high": self.missing_spend_high_usd},
            "cost_per_accepted": {
                "low": self.estimate_low,
                "high": self.estimate_high,
                "ci_low": self.ci_low,
                "ci_high": self.ci_high,
                "interval_status": self.interval_status,
                "interval_reason": self.interval_reason,
                "interval": "union of the case-bootstrap intervals with the missing costs at 0 and at the cap",
                "confidence_level": self.confidence_level,
            },
            "complete_case": {
                "estimate": self.complete_case_estimate,
                "accepted": self.complete_case_accepted,
                "assumes": "the lost costs are like the known ones (missing completely at random)",
            },
        }


def _end(
    rule: IntervalRule, boot: RatioBootstrap, level: float, *, seed: int, clustered: bool
) -> tuple[tuple[float, float] | None, CostInterval]:
    """One imputation's interval; a zero-width one is kept (inside a union it is an end, not the interval)."""
    ci = rule.interval(boot, confidence_level=level, seed=seed, clustered=clustered)
    if ci.status == "ok" and ci.ci_low is not None and ci.ci_high is not None:
        return (ci.ci_low, ci.ci_high), ci
    raw = boot.bounds(level, rule.kind)
    point = raw is not None and math.isfinite(raw[0]) and raw[0] == raw[1] and boot.n_units >= rule.min_units
    if point and raw is not None and not (rule.positive and raw[0] <= 0):
        return raw, ci
    return None, ci


def _union(
    rule: IntervalRule, low: RatioBootstrap, high: RatioBootstrap, level: float, *, seed: int, clustered: bool
) -> CostInterval:
    """The union of the interval with the missing costs at 0 (its lower end) and at the cap (its upper end)."""
    zero_ends, at_zero = _end(rule, low, level, seed=seed, clustered=clustered)
    cap_ends, at_cap = _end(rule, high, level, seed=seed, clustered=clustered)
    failed = {
        name: ci.reason
        for name, ends, ci in (
            ("missing costs at 0", zero_ends, at_zero),
            ("missing costs at the cap", cap_ends, at_cap),
        )
        if ends is None
    }
    if len(failed) == 2 and len(set(failed.values())) == 1:  # one reason for both: said once
        failed = {"missing costs at 0 and at the cap": failed["missing costs at 0"]}
    reasons = [f"{name}: {reason}" for name, reason in failed.items()]
    if not reasons and zero_ends is not None and cap_ends is not None and not zero_ends[0] < cap_ends[1]:
        reasons.append(f"the resampled values do not vary (all {zero_ends[0]:g}): the interval would have zero width")
    ok = not reasons and zero_ends is not None and cap_ends is not None
    return CostInterval(
        status="ok" if ok else "insufficient_evidence",
        reason="; ".join(reasons) if reasons else None,
        ci_low=zero_ends[0] if ok and zero_ends is not None else None,
        ci_high=cap_ends[1] if ok and cap_ends is not None else None,
        confidence_level=level,
        method=rule.kind,
        n_resamples=at_cap.n_resamples,
        seed=seed,
        n_units=at_cap.n_units,
        n_resamples_infinite=at_cap.n_resamples_infinite,
        n_resamples_undefined=at_cap.n_resamples_undefined + at_zero.n_resamples_undefined,
    )


def _cap(row: Mapping[str, Any], given: float | None, source: CapSource) -> tuple[float | None, CapSource]:
    if given is not None:
        return float(given), source
    observed = row["max_spend"]
    return (None if observed is None else float(observed)), "largest observed"


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundsRequest:
    """How the bounds of one group are computed: the interval rule, the cap and the bootstrap options."""

    rule: IntervalRule
    max_cost_per_attempt_usd: float | None
    cap_source: CapSource
    review_rate: float
    confidence_level: float
    n_resamples: int
    seed: int


def missing_costs(
    row: Mapping[str, Any],
    units: npt.NDArray[np.float64],
    *,
    request: BoundsRequest,
    undefined: str | None,
) -> MissingCosts:
    """The known part and the bounds of a group with attempts lacking a cost.

    Parameters
    ----------
    row
        The group's statistics (:func:`gatestats.cost.per_accepted.group_statistics`).
    units
        Per resampling unit: known spend (attempts and priced human time), accepted outcomes,
        attempts without cost (units x 3).
    request
        The rule, cap and bootstrap options.
    undefined
        Why the cost per accepted outcome is undefined whatever the missing costs (no accepted
        outcome, unknown human time), or ``None``.

    Returns
    -------
    MissingCosts
        The known spend, the bounds and their interval (or why there is none).
    """
    cap, source = _cap(row, request.max_cost_per_attempt_usd, request.cap_source)
    missing = int(row["n_cost_unknown"])
    known_spend = float(row["attempt_spend"])
    human = None if row["n_human_unknown"] else row["human_s"] / 3600 * request.review_rate
    known_total = None if human is None else known_spend + human
    accepted_cc = int(row["accepted_known"])
    cc = None
    if human is not None and accepted_cc:
        cc = (known_spend + row["human_s_known"] / 3600 * request.review_rate) / accepted_cc
    reason = undefined
    sums = (known_spend, known_total or 0.0, missing * (cap or 0.0))
    if not all(math.isfinite(v) for v in sums):
        reason = "the known spend or its bound overflows a 64-bit float (costs near 1e308): no bounds"
        known_spend, known_total, cc = math.nan, None, None
    if reason is None and cap is None:
        reason = (
            f"no attempt of the group has a cost, so there is no largest observed cost to bound the {missing} "
            "missing one(s): give a maximum cost per attempt"
        )
    common: dict[str, Any] = {
        "n_attempts_missing": missing,
        "attempts_with_cost": int(row["attempts"]) - missing,
        "record_ids": tuple(str(i) for i in row["cost_unknown_ids"][:5]),
        "known_spend_usd": known_spend if math.isfinite(known_spend) else None,
        "known_total_usd": known_total,
        "cap_usd_per_attempt": cap,
        "cap_source": source,
        "missing_spend_high_usd": None if cap is None or not math.isfinite(missing * cap) else missing * cap,
        "complete_case_estimate": cc,
        "complete_case_accepted": accepted_cc,
        "confidence_level": request.confidence_level,
    }
    if reason is not None or cap is None or known_total is None:
        return MissingCosts(
            **common,
            estimate_low=None,
            estimate_high=None,
            ci_low=None,
            ci_high=None,
            interval_status="insufficient_evidence",
            interval_reason=reason,
        )
    return _bounded(row, units, request=request, cap=cap, known_total=known_total, common=common)


def _bounded(
    row: Mapping[str, Any],
    units: npt.NDArray[np.float64],
    *,
    request: BoundsRequest,
    cap: float,
    known_total: float,
    common: dict[str, Any],
) -> MissingCosts:
    """Bounds and their interval (both imputations resampled with the same seed: the same draws)."""
    accepted = int(row["accepted"])
    at_zero = np.ascontiguousarray(units[:, :2], dtype=np.float64)
    at_cap = at_zero.copy()
    at_cap[:, 0] += units[:, 2] * cap
    clustered = bool(row["clustered"])
    low, high = (
        request.rule.resample(
            columns,
            confidence_level=request.confidence_level,
            n_resamples=request.n_resamples,
            seed=request.seed,
            clustered=clustered,
        )[0]
        for columns in (at_zero, at_cap)
    )
    ci = _union(request.rule, low, high, request.confidence_level, seed=request.seed, clustered=clustered)
    return MissingCosts(
        **common,
        estimate_low=known_total / accepted,
        estimate_high=(known_total + common["n_attempts_missing"] * cap) / accepted,
        ci_low=ci.ci_low,
        ci_high=ci.ci_high,
        interval_status=ci.status,
        interval_reason=ci.reason,
        _low=low,
        _high=high,
        _rule=request.rule,
        _seed=request.seed,
        _clustered=clustered,
    )
