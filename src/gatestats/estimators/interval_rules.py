"""What every case-mean interval shares, without numpy: thresholds, the result, the option checks, the Wilson root.

:mod:`gatestats.estimators.intervals` computes the intervals on arrays; ``analyze``'s default path on a
small input computes Wilson's in floats (:mod:`gatestats.estimators.small`) and never imports numpy
(issue 28, item 2). Both read their thresholds, refusal codes and reasons, option checks and the
Wilson root from here, so the two cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar, get_args

from gatestats.estimators.quantiles import two_sided_t, two_sided_z
from gatestats.vocabulary import (
    IntervalMethod,
    ResolvedIntervalMethod,
    Status,
    check_choice,
    check_confidence_level,
    check_n_resamples,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "CLT_FROM_CASES",
    "DESIGN_EFFECT_FROM_UNITS",
    "MIN_CASES_BOOTSTRAP",
    "MIN_CASES_CLT",
    "MIN_UNITS",
    "CaseMeanInterval",
    "wilson_bounds_one",
]

# Every threshold below is set from the coverage simulation (docs/coverage.md).
#: Fewest independent units (cases or groups) for which the bootstrap is offered.
MIN_CASES_BOOTSTRAP = 500
#: Fewest independent units for which the CLT interval is offered.
MIN_CASES_CLT = 2000
#: From this many units on, ``auto`` uses the CLT interval instead of Wilson's.
CLT_FROM_CASES = 5000
#: From this many units on, the Wilson effective sample size may exceed the (size-weighted) number
#: of units, i.e. the estimated design effect may narrow the interval; below, it is capped there.
DESIGN_EFFECT_FROM_UNITS = 200
#: Fewest independent units for which any interval is computed.
MIN_UNITS: Final = 2

_METHODS: Final[tuple[IntervalMethod, ...]] = get_args(IntervalMethod)

# Codes of the batch kernel (see _IntervalBatch.code).
OK: Final = 0
REFUSED_FEW_UNITS: Final = 1
REFUSED_NOT_OFFERED: Final = 2
REFUSED_CONSTANT: Final = 3
REFUSED_DEGENERATE: Final = 4

_RESOLVED: Final[tuple[ResolvedIntervalMethod, ...]] = ("wilson", "bootstrap", "clt")


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseMeanInterval:
    """A mean over cases with its interval, or an explicit statement that there is none.

    ``estimate`` is the mean of the case-level values (always defined when ``n_cases >= 1``);
    ``ci_low``/``ci_high``/``se`` are ``None`` when ``status == "insufficient_evidence"``, with
    ``reason`` saying why. ``effective_n`` is the :math:`n^*` the Wilson interval was evaluated at
    (after the cap and the degrees-of-freedom factor); ``n_resamples`` and ``seed`` are those of
    the bootstrap.
    """

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    se: float | None
    status: Status
    reason: str | None
    method: ResolvedIntervalMethod | None
    requested_method: IntervalMethod
    confidence_level: float
    n_cases: int
    n_units: int
    clustered: bool
    effective_n: float | None = None
    n_resamples: int | None = None
    seed: int | None = None


#: A Wilson root's operand: one sample's float, or an array of samples.
_Number = TypeVar("_Number", float, "npt.NDArray[np.float64]")


def _wilson_root(
    q: _Number, n: _Number, z: float, z2n: _Number, sign: float, sqrt: Callable[[_Number], _Number]
) -> _Number:
    """The Wilson score root at ``q`` (already in [0, 1]).

    The one formula of :func:`gatestats.estimators.intervals._wilson_bounds` (arrays, ``np.sqrt``) and
    :func:`wilson_bounds_one` (floats, ``math.sqrt``): both compute the same operations in the same order.
    """
    center = (q + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * sqrt(q * (1 - q) / n + z2n / (4 * n))
    return center + sign * half


def wilson_bounds_one(p_hat: float, n: float, z: float, *, continuity_correction: bool = True) -> tuple[float, float]:
    """``intervals._wilson_bounds`` for one sample, in floats: the same operations and bounds, without numpy.

    Parameters
    ----------
    p_hat
        The proportion, in [0, 1].
    n
        The (effective) number of units, positive.
    z
        The two-sided critical value.
    continuity_correction
        Widen by the continuity shift ``0.5 / n`` (the case-level intervals), or not (``wilson_interval``'s default,
        judges' proportions).

    Returns
    -------
    tuple of float
        ``(low, high)``, clipped to [0, 1].

    Examples
    --------
    >>> [round(b, 4) for b in wilson_bounds_one(0.5, 20.0, 1.959963984540054, continuity_correction=False)]
    [0.2993, 0.7007]
    """
    shift = 0.5 / n if continuity_correction else 0.0
    z2n = z * z / n

    def root(p: float, sign: float) -> float:
        return _wilson_root(min(max(p, 0.0), 1.0), n, z, z2n, sign, math.sqrt)  # min(max()): np.clip(p, 0.0, 1.0)

    p_low, p_high = p_hat - shift, p_hat + shift
    low = 0.0 if p_low <= 0.0 else max(root(p_low, -1.0), 0.0)
    high = 1.0 if p_high >= 1.0 else min(root(p_high, 1.0), 1.0)
    return low, high


@dataclass(frozen=True, slots=True)
class _WilsonAtLevels:
    """One sample whose interval is Wilson's at every level: what ``intervals._level_batch`` and ``_single_result``
    compute from the level, in floats (the same operations on the same numbers: the same interval).

    Made from numpy's arrays by ``intervals._OneWilson.of`` (a level search, ``case_mean_interval_at``) and in floats
    by ``analyze``'s path without numpy (:mod:`gatestats.estimators.small`).
    """

    estimate: float
    se: float
    constant: bool
    capped: float
    n_units: int

    def at(self, confidence_level: float, n_cases: int, method: IntervalMethod, clustered: bool) -> CaseMeanInterval:
        """The sample's interval at ``confidence_level`` (as ``intervals._wilson_batch`` then ``_single_result``)."""
        z = two_sided_z(confidence_level)
        factor = 1.0 if self.constant else (z / two_sided_t(self.n_units - 1, confidence_level)) ** 2
        eff_n = self.capped * (1.0 if self.constant else factor)
        low, high = wilson_bounds_one(self.estimate, eff_n, z)
        return CaseMeanInterval(
            ci_low=low,
            ci_high=high,
            se=self.se,
            status="ok",
            reason=None,
            method="wilson",
            effective_n=eff_n,
            n_resamples=None,
            seed=None,
            estimate=self.estimate,
            requested_method=method,
            confidence_level=confidence_level,
            n_cases=n_cases,
            n_units=self.n_units,
            clustered=clustered,
        )


def _check_options(
    method: IntervalMethod, confidence_level: float, n_resamples: int, max_effective_n: float | None
) -> None:
    """The interval options' checks, in the order every entry point makes them (the first failing one raises)."""
    check_choice(method, _METHODS, "method")
    check_confidence_level(confidence_level)
    check_n_resamples(n_resamples)
    if max_effective_n is not None and not max_effective_n > 0:
        msg = f"max_effective_n must be positive (got {max_effective_n})"
        raise ValueError(msg)


def _reason(
    code: int, method: IntervalMethod, n_units: int, unit: str, values: Sequence[float] | npt.NDArray[np.float64]
) -> str:
    """Why an interval was refused (``code``, one of the refusal codes), as the result's ``reason`` says it."""
    if code == REFUSED_FEW_UNITS:
        return f"an interval needs at least {MIN_UNITS} independent {unit} (got {n_units})"
    if code == REFUSED_NOT_OFFERED:
        minimum = MIN_CASES_CLT if method == "clt" else MIN_CASES_BOOTSTRAP
        return (
            f"the {method} interval is not offered below {minimum} independent {unit} (got {n_units}; its "
            "simulated coverage falls under 93%, see docs/coverage.md); use method='wilson' or 'auto'"
        )
    if code == REFUSED_CONSTANT:
        what = f"all {len(values)} case values equal {values[0]:g}"
    else:
        what = "the bootstrap distribution of the mean is degenerate"
    return f"{what}: the {method} interval would have zero width; use method='wilson' or 'auto'"
