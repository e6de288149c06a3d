r"""How many cases does a decision need? Sample size, detectable effect and false blocks.

Paired difference :math:`\delta = p_\text{candidate} - p_\text{baseline} = p_{01} - p_{10}` and
discordance :math:`\psi = p_{01} + p_{10}` (the share of cases whose outcome differs between the
two systems; :math:`|\delta| \le \psi`). A pilot comparison estimates :math:`\psi` by
:math:`(b + c)/N`.

Cases needed (Connor 1987)
    .. math:: N = \left(\frac{z_{1-\alpha/2}\sqrt{\psi} + z_{1-\beta}\sqrt{\psi - \delta^2}}{\delta}\right)^2

    (:math:`z_{1-\alpha}` one-sided), the normal approximation for McNemar's test. The conditional
    exact and mid-p tests are discrete, so their power is also computed *exactly*: conditional on
    :math:`m` discordant cases, :math:`C \sim \mathrm{Bin}(m, \pi)` with
    :math:`\pi = (\psi + \delta)/(2\psi)`, and unconditionally
    :math:`m \sim \mathrm{Bin}(N, \psi)`:

    .. math:: \text{power}(N) = \sum_{m=0}^{N} \binom{N}{m}\psi^m(1-\psi)^{N-m}\,
        P(C \in R_m \mid m),

    with :math:`R_m` the rejection region of the test at level :math:`\alpha` given :math:`m`.
    ``n_exact`` is the smallest :math:`N` whose exact power reaches the target (found by bisection;
    the unconditional power is smooth in :math:`N` because it averages over :math:`m`).
Minimum detectable effect
    The smallest :math:`|\delta|` with the target power for a given :math:`N` and :math:`\psi`, from
    Connor's formula and from the exact power (bisection on :math:`\delta`). If even
    :math:`|\delta| = \psi` (every discordant case favouring one side) cannot reach it, the
    effect *cannot be resolved* with :math:`N` cases, and the cases needed for :math:`|\delta| = \psi`
    are reported.
False blocks of a strict all-k rule
    A gate that requires all :math:`k` runs of all :math:`N` cases to pass, with an evaluator
    (or infrastructure) that wrongly fails a run with probability :math:`e`, blocks a perfect
    candidate with probability :math:`1 - (1 - e)^{Nk}`. Tolerating :math:`t` failed runs, with
    :math:`t` the :math:`1 - \alpha` quantile of :math:`\mathrm{Bin}(Nk, e)`, keeps the false-block
    probability :math:`P(\mathrm{Bin}(Nk, e) > t) \le \alpha`.

References
----------
Connor, R. J. (1987). Sample size for testing differences in proportions for the paired-sample
    design. Biometrics 43(1), 207-211.
Miettinen, O. S. (1968). The matched pairs design in the case of all-or-none responses.
    Biometrics 24(2), 339-352.
Fagerland, M. W., Lydersen, S. & Laake, P. (2013). BMC Med. Res. Methodol. 13:91 (exact power of
    the conditional tests by enumeration).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Literal, TypedDict, get_args

import numpy as np
import numpy.typing as npt
import polars as pl

from gatestats._lazy import lazy_module
from gatestats.paired._common import FieldsAsDict
from gatestats.paired.mcnemar import check_alternative
from gatestats.vocabulary import Alternative, PlanTest, check_alpha, check_choice

optimize = lazy_module("scipy.optimize")
stats = lazy_module("scipy.stats")

__all__ = [
    "DetectableEffectPlan",
    "FalseBlockPlan",
    "SampleSizePlan",
    "cases_needed",
    "connor_cases",
    "exact_power",
    "false_block",
    "minimum_detectable_effect",
    "power_curve",
]

_MAX_CASES = 10_000_000


def _z_alpha(alpha: float, alternative: Alternative) -> float:
    return float(stats.norm.isf(alpha / 2 if alternative == "two-sided" else alpha))


def _z_alpha_beta(alpha: float, power: float, alternative: Alternative) -> tuple[float, float]:
    """The normal quantiles of the level and of the power in Connor's formula."""
    return _z_alpha(alpha, alternative), float(stats.norm.isf(1 - power))


def _check(
    *,
    alpha: float,
    power: float | None = None,
    discordance: float | None = None,
    alternative: Alternative,
    test: PlanTest = "auto",
) -> Literal["midp", "exact"]:
    """Check the options of a plan; the test that ``test`` stands for (:func:`_resolve`)."""
    check_alternative(alternative)
    check_alpha(alpha)
    if power is not None and not 0 < power < 1:
        msg = f"power must lie strictly between 0 and 1 (got {power})"
        raise ValueError(msg)
    if discordance is not None and not 0 < discordance <= 1:
        msg = f"discordance must lie in (0, 1] (got {discordance})"
        raise ValueError(msg)
    check_choice(test, get_args(PlanTest), "test")
    return _resolve(test, alternative)


def _check_cases(n_cases: object) -> None:
    if isinstance(n_cases, bool) or not isinstance(n_cases, int) or not 1 <= n_cases <= _MAX_CASES:
        msg = f"n_cases must be an integer in [1, {_MAX_CASES}] (got {n_cases!r})"
        raise ValueError(msg)


def _connor_mde(n_cases: int, discordance: float, za: float, zb: float) -> float | None:
    """Connor's (1987) detectable difference with ``n_cases`` cases, if any is detectable."""

    def connor_gap(delta: float) -> float:
        return math.sqrt(n_cases) * delta - za * math.sqrt(discordance) - zb * math.sqrt(discordance - delta * delta)

    return float(optimize.brentq(connor_gap, 1e-12, discordance)) if connor_gap(discordance) > 0 else None


class _DetectableInputs(TypedDict):
    """The fields of a :class:`DetectableEffectPlan` that restate its inputs."""

    n_cases: int
    discordance: float
    power: float
    alpha: float
    alternative: Alternative
    test: PlanTest


def _nothing_detectable(sign: float, base: _DetectableInputs) -> DetectableEffectPlan:
    """The plan when even the largest difference (``|delta| = discordance``) is out of reach."""
    n_cases, discordance, power = base["n_cases"], base["discordance"], base["power"]
    need = cases_needed(
        sign * discordance,
        discordance,
        power=power,
        alpha=base["alpha"],
        alternative=base["alternative"],
        test=base["test"],
    )
    reason = (
        f"with {n_cases} cases no difference can be detected with power {power:g}: even |delta| = "
        f"discordance = {discordance:g} (every discordant case favouring one side) needs {need.n_exact} cases"
    )
    return DetectableEffectPlan(
        status="cannot_resolve",
        reason=reason,
        mde_connor=None,
        mde_exact=None,
        cases_needed_at_max_effect=need.n_exact,
        **base,
    )


def _resolve(test: PlanTest, alternative: Alternative) -> Literal["midp", "exact"]:
    """``auto``: mid-p two-sided, exact one-sided (the decision test of :func:`compare`)."""
    if test == "auto":
        return "midp" if alternative == "two-sided" else "exact"
    return test


def _check_delta(delta: float, discordance: float, alternative: Alternative) -> None:
    if delta == 0 or abs(delta) > discordance:
        msg = f"delta must satisfy 0 < |delta| <= discordance (got delta={delta}, discordance={discordance})"
        raise ValueError(msg)
    if (alternative == "less" and delta > 0) or (alternative == "greater" and delta < 0):
        msg = f"delta={delta} points away from alternative {alternative!r} (less: delta < 0; greater: delta > 0)"
        raise ValueError(msg)


def connor_cases(
    delta: float,
    discordance: float,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
) -> float:
    """Connor's (1987) number of cases (not rounded) to detect ``delta`` with McNemar's test.

    The example of Connor (1987, p. 209) as used by Chow, Shao & Wang: p01 = 0.45, p10 = 0.05,
    alpha = 0.05 two-sided, power 0.8: 23 cases (powerandsamplesize.com's calculator gives 23).

    Parameters
    ----------
    delta
        :math:`p_\\text{candidate} - p_\\text{baseline}` to detect.
    discordance
        The expected share of cases whose outcome differs, in (0, 1].
    power, alpha, alternative
        Target power, level and alternative of the test.

    Returns
    -------
    float
        The cases needed, not rounded.

    Raises
    ------
    ValueError
        ``delta``, ``discordance``, ``power``, ``alpha`` or ``alternative`` outside its domain (the message
        names it and what was got).

    Examples
    --------
    >>> round(connor_cases(0.40, 0.50), 2)
    22.01
    """
    _check(alpha=alpha, power=power, discordance=discordance, alternative=alternative)
    _check_delta(delta, discordance, alternative)
    za, zb = _z_alpha_beta(alpha, power, alternative)
    return ((za * math.sqrt(discordance) + zb * math.sqrt(discordance - delta * delta)) / delta) ** 2


def _critical(m: npt.NDArray[np.int64], alpha: float, *, two_sided: bool, midp: bool) -> npt.NDArray[np.int64]:
    """Largest k with the (one-tail) p-value of ``C = k`` at most alpha given m; -1 if none."""
    level = alpha / 2 if two_sided else alpha
    guess = stats.binom.ppf(level, m, 0.5).astype(np.int64)
    best = np.full(m.shape, -1, dtype=np.int64)
    for shift in (-2, -1, 0, 1, 2):
        k = guess + shift
        valid = (k >= 0) & (k <= m)
        tail = stats.binom.cdf(k, m, 0.5) - (0.5 * stats.binom.pmf(k, m, 0.5) if midp else 0.0)
        p = 2 * tail if two_sided else tail
        if two_sided:
            valid &= 2 * k < m
        ok = valid & (p <= alpha * (1 + 1e-12))
        best = np.where(ok, np.maximum(best, k), best)
    return best


def exact_power(
    n_cases: int,
    delta: float,
    discordance: float,
    *,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
    test: PlanTest = "auto",
) -> float:
    """Exact power of the conditional McNemar test (mid-p or exact) with ``n_cases`` paired cases.

    Parameters
    ----------
    n_cases
        Paired cases.
    delta, discordance
        The difference to detect and the expected share of discordant cases.
    alpha, alternative, test
        Level, alternative and test (as for :func:`cases_needed`).

    Returns
    -------
    float
        The probability that the test rejects.

    Raises
    ------
    ValueError
        ``n_cases``, ``delta`` (beyond ``discordance``), ``discordance``, ``alpha``, ``alternative`` or
        ``test`` outside its domain (the message names it and what was got).

    Examples
    --------
    >>> round(exact_power(23, 0.40, 0.50, test="exact"), 3)
    0.777
    """
    test = _check(alpha=alpha, discordance=discordance, alternative=alternative, test=test)
    _check_cases(n_cases)
    if not abs(delta) <= discordance:
        msg = f"need |delta| <= discordance (got delta={delta}, discordance={discordance})"
        raise ValueError(msg)
    pi = _conditional_probability(delta, discordance)
    if n_cases <= _KEPT_CASES:
        reject = _kept_reject(n_cases, pi, alpha, alternative, test)
    else:
        reject = _reject_at(np.arange(n_cases + 1, dtype=np.int64), pi, alpha, alternative, test)
    return _unconditional(reject, n_cases, discordance)


def _reject_given(
    m: npt.NDArray[np.int64],
    delta: float,
    discordance: float,
    alpha: float,
    alternative: Alternative,
    test: Literal["midp", "exact"],
) -> npt.NDArray[np.float64]:
    """``P(C in R_m | m)`` for each number ``m`` of discordant cases (elementwise in ``m``)."""
    return _reject_at(m, _conditional_probability(delta, discordance), alpha, alternative, test)


def _conditional_probability(delta: float, discordance: float) -> float:
    """``pi = (psi + delta) / (2 psi)``, the probability that a discordant case favours the candidate."""
    return (discordance + delta) / (2 * discordance)


#: :func:`exact_power` keeps its rejection probabilities for ``m = 0..n_cases`` up to this many cases
#: (80 KB each at most, 64 kept: :func:`_kept_reject`).
_KEPT_CASES = 10_000


@functools.lru_cache(maxsize=64)
def _kept_reject(
    n_cases: int, pi: float, alpha: float, alternative: Alternative, test: Literal["midp", "exact"]
) -> npt.NDArray[np.float64]:
    """:func:`_reject_at` for ``m = 0..n_cases``, kept per exact inputs (read-only).

    It depends on the discordance only through ``pi``: an A/A study (``delta = 0``, ``pi = 0.5``) over
    many discordances computes the critical values and conditional tails once per ``n_cases``
    (issue 28, item 3: 1,604 :func:`exact_power` calls of the paired simulation, 50 discordances each).
    """
    reject = _reject_at(np.arange(n_cases + 1, dtype=np.int64), pi, alpha, alternative, test)
    reject.flags.writeable = False
    return reject


def _reject_at(
    m: npt.NDArray[np.int64],
    pi: float,
    alpha: float,
    alternative: Alternative,
    test: Literal["midp", "exact"],
) -> npt.NDArray[np.float64]:
    """``P(C in R_m | m)`` with ``C ~ Bin(m, pi)``, elementwise in ``m``."""
    crit = _critical(m, alpha, two_sided=alternative == "two-sided", midp=test == "midp")
    return _reject_beyond(m, crit, pi, alternative)


def _reject_beyond(
    m: npt.NDArray[np.int64],
    crit: npt.NDArray[np.int64],
    pi: float,
    alternative: Alternative,
) -> npt.NDArray[np.float64]:
    """:func:`_reject_at` with the critical values ``crit`` of each ``m`` (they do not depend on ``pi``)."""
    has = crit >= 0
    if alternative == "two-sided":
        reject = np.where(has, stats.binom.cdf(crit, m, pi) + stats.binom.sf(m - crit - 1, m, pi), 0.0)
    elif alternative == "greater":
        reject = np.where(has, stats.binom.sf(m - crit - 1, m, pi), 0.0)
    else:
        reject = np.where(has, stats.binom.cdf(crit, m, pi), 0.0)
    return np.asarray(reject, dtype=np.float64)


def _unconditional(reject: npt.NDArray[np.float64], n_cases: int, discordance: float) -> float:
    """The power with ``n_cases`` cases: ``reject`` (for m = 0..n_cases) averaged over ``Bin(n_cases, psi)``."""
    return _averaged(reject, _discordant_weights(n_cases, discordance))


def _discordant_weights(n_cases: int, discordance: float) -> npt.NDArray[np.float64]:
    """``P(m discordant cases)`` for m = 0..n_cases: ``Bin(n_cases, psi)``."""
    weights: npt.NDArray[np.float64] = stats.binom.pmf(np.arange(n_cases + 1, dtype=np.int64), n_cases, discordance)
    return weights


def _averaged(reject: npt.NDArray[np.float64], weights: npt.NDArray[np.float64]) -> float:
    """``reject`` averaged with the weights of :func:`_discordant_weights`, clipped to [0, 1]."""
    return float(np.clip((weights * reject).sum(), 0.0, 1.0))


class _PowerAt:
    """:func:`exact_power` at many ``n`` for one difference, discordance, level, alternative and test.

    The rejection probability given ``m`` discordant cases does not depend on ``n``; it is computed once
    for every ``m`` up to the largest ``n`` asked (extended as needed, elementwise: the same values as
    :func:`exact_power` computes), so a search over ``n`` costs one binomial weighting per ``n`` instead
    of the critical values again (issue 28, item 3: 60 -> ~3 CPU-s for 340,877 cases).
    """

    def __init__(
        self, delta: float, discordance: float, alpha: float, alternative: Alternative, test: Literal["midp", "exact"]
    ) -> None:
        self._args = (delta, discordance, alpha, alternative, test)
        self._discordance = discordance
        self._reject: npt.NDArray[np.float64] = np.empty(0, dtype=np.float64)

    def __call__(self, n_cases: int) -> float:
        _check_cases(n_cases)
        have = self._reject.size
        if n_cases >= have:
            more = np.arange(have, n_cases + 1, dtype=np.int64)
            self._reject = np.concatenate([self._reject, _reject_given(more, *self._args)])
        return _unconditional(self._reject[: n_cases + 1], n_cases, self._discordance)


@dataclass(frozen=True, slots=True, kw_only=True)
class SampleSizePlan(FieldsAsDict):
    """Cases needed to detect ``delta`` at ``power``: Connor's formula and the exact test's."""

    delta: float
    discordance: float
    power: float
    alpha: float
    alternative: Alternative
    test: PlanTest
    n_connor: int
    n_exact: int
    exact_power_at_n_connor: float
    expected_discordant: float


def cases_needed(
    delta: float,
    discordance: float,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
    test: PlanTest = "auto",
) -> SampleSizePlan:
    r"""Cases needed to detect a paired difference ``delta`` with probability ``power``.

    Parameters
    ----------
    delta
        :math:`p_\text{candidate} - p_\text{baseline}` to detect (negative: a regression).
    discordance
        :math:`\psi`, the expected share of cases whose outcome differs, :math:`|\delta| \le \psi \le 1`.
    power, alpha, alternative
        Target power, level and alternative of the test.
    test
        ``auto`` (default: ``midp`` two-sided, ``exact`` one-sided, as :func:`compare` decides),
        ``midp`` or ``exact``: the conditional McNemar test whose exact power is computed.

    Returns
    -------
    SampleSizePlan
        Connor's approximation and the exact cases needed.

    Raises
    ------
    ValueError
        An option outside its domain (as for :func:`connor_cases`, or an unknown ``test``), or more than
        10,000,000 cases would be needed.

    Examples
    --------
    >>> plan = cases_needed(0.40, 0.50)
    >>> plan.n_connor, plan.n_exact
    (23, 21)
    """
    connor = connor_cases(delta, discordance, power=power, alpha=alpha, alternative=alternative)
    test = _check(alpha=alpha, power=power, discordance=discordance, alternative=alternative, test=test)
    n_connor = max(1, math.ceil(connor - 1e-9))

    power_at = _PowerAt(delta, discordance, alpha, alternative, test)
    low, high = 1, max(2, n_connor)
    while power_at(high) < power:
        low, high = high, high * 2
        if high > _MAX_CASES:
            msg = f"more than {_MAX_CASES} cases would be needed (delta={delta}, discordance={discordance})"
            raise ValueError(msg)
    while high - low > 1:
        mid = (low + high) // 2
        if power_at(mid) >= power:
            high = mid
        else:
            low = mid
    n_exact = low if power_at(low) >= power else high
    return SampleSizePlan(
        delta=delta,
        discordance=discordance,
        power=power,
        alpha=alpha,
        alternative=alternative,
        test=test,
        n_connor=n_connor,
        n_exact=n_exact,
        exact_power_at_n_connor=power_at(n_connor),
        expected_discordant=n_exact * discordance,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class DetectableEffectPlan(FieldsAsDict):
    """Smallest detectable ``|delta|`` with ``n_cases`` cases, or why there is none."""

    n_cases: int
    discordance: float
    power: float
    alpha: float
    alternative: Alternative
    test: PlanTest
    status: Literal["ok", "cannot_resolve"]
    reason: str | None
    mde_connor: float | None
    mde_exact: float | None
    cases_needed_at_max_effect: int | None


def minimum_detectable_effect(
    n_cases: int,
    discordance: float,
    *,
    power: float = 0.8,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
    test: PlanTest = "auto",
) -> DetectableEffectPlan:
    r"""Smallest paired difference :math:`|\delta|` detectable with ``n_cases`` cases.

    Returned as a magnitude; for ``alternative="less"`` it is a regression of that size.

    Parameters
    ----------
    n_cases
        Paired cases.
    discordance
        The expected share of cases whose outcome differs, in (0, 1].
    power, alpha, alternative, test
        As for :func:`cases_needed`.

    Returns
    -------
    DetectableEffectPlan
        Connor's and the exact minimum detectable effect, or ``cannot_resolve``.

    Raises
    ------
    ValueError
        ``n_cases`` not an integer in [1, 10,000,000], or another option outside its domain (as for
        :func:`cases_needed`).

    Examples
    --------
    >>> plan = minimum_detectable_effect(500, 0.2)
    >>> round(plan.mde_connor, 4), round(plan.mde_exact, 4)
    (0.0559, 0.0557)
    >>> minimum_detectable_effect(5, 0.2).status
    'cannot_resolve'
    """
    test = _check(alpha=alpha, power=power, discordance=discordance, alternative=alternative, test=test)
    _check_cases(n_cases)
    sign = -1.0 if alternative == "less" else 1.0
    za, zb = _z_alpha_beta(alpha, power, alternative)

    # exact_power(n_cases, sign * delta, ...) - power, with what does not depend on delta computed once: the
    # critical values of every m and the binomial weights (the same arrays exact_power computes on every call).
    m = np.arange(n_cases + 1, dtype=np.int64)
    crit = _critical(m, alpha, two_sided=alternative == "two-sided", midp=test == "midp")
    weights = _discordant_weights(n_cases, discordance)

    def exact_gap(delta: float) -> float:
        if not abs(sign * delta) <= discordance:
            msg = f"need |delta| <= discordance (got delta={sign * delta}, discordance={discordance})"
            raise ValueError(msg)
        reject = _reject_beyond(m, crit, _conditional_probability(sign * delta, discordance), alternative)
        return _averaged(reject, weights) - power

    base: _DetectableInputs = {
        "n_cases": n_cases,
        "discordance": discordance,
        "power": power,
        "alpha": alpha,
        "alternative": alternative,
        "test": test,
    }
    if exact_gap(discordance) < 0:
        return _nothing_detectable(sign, base)
    mde_connor = _connor_mde(n_cases, discordance, za, zb)
    mde_exact = float(optimize.brentq(exact_gap, 1e-12, discordance, xtol=1e-7))
    return DetectableEffectPlan(
        status="ok",
        reason=None,
        mde_connor=mde_connor,
        mde_exact=mde_exact,
        cases_needed_at_max_effect=None,
        **base,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class FalseBlockPlan(FieldsAsDict):
    """False-block probability of a strict all-k rule, and the tolerance that bounds it."""

    n_cases: int
    k: int
    error_rate: float
    alpha: float
    n_runs: int
    false_block_all_k: float
    tolerated_failures: int
    false_block_with_tolerance: float


def false_block(n_cases: int, k: int, error_rate: float, *, alpha: float = 0.05) -> FalseBlockPlan:
    r"""False-block probability :math:`1 - (1 - e)^{Nk}` of a strict all-k rule, and a tolerance.

    ``tolerated_failures`` is the :math:`1 - \alpha` quantile :math:`t` of
    :math:`\mathrm{Bin}(Nk, e)`: allowing :math:`t` failed runs keeps the probability of blocking
    a perfect candidate at :math:`P(\mathrm{Bin}(Nk, e) > t) \le \alpha`.

    Parameters
    ----------
    n_cases, k
        Cases and runs per case of the all-k rule.
    error_rate
        Per-run evaluator error (false fail) rate :math:`e`, in [0, 1).
    alpha
        Tolerated probability of blocking a perfect candidate.

    Returns
    -------
    FalseBlockPlan
        The false-block probability with and without the tolerance.

    Raises
    ------
    ValueError
        ``n_cases`` or ``k`` not an integer >= 1, ``error_rate`` outside [0, 1), or ``alpha`` outside
        (0, 0.5] (:func:`gatestats.vocabulary.check_alpha`; TypeError when not a number).

    Examples
    --------
    >>> plan = false_block(200, 4, 0.001)
    >>> round(plan.false_block_all_k, 4), plan.tolerated_failures, round(plan.false_block_with_tolerance, 4)
    (0.5509, 2, 0.0473)
    """
    for name, value in (("n_cases", n_cases), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            msg = f"{name} must be an integer >= 1 (got {value!r})"
            raise ValueError(msg)
    if not 0 <= error_rate < 1:
        msg = f"error_rate must lie in [0, 1) (got {error_rate})"
        raise ValueError(msg)
    check_alpha(alpha)
    runs = n_cases * k
    all_k = -math.expm1(runs * math.log1p(-error_rate))
    tolerated = int(stats.binom.ppf(1 - alpha, runs, error_rate)) if error_rate > 0 else 0
    return FalseBlockPlan(
        n_cases=n_cases,
        k=k,
        error_rate=error_rate,
        alpha=alpha,
        n_runs=runs,
        false_block_all_k=all_k,
        tolerated_failures=tolerated,
        false_block_with_tolerance=float(stats.binom.sf(tolerated, runs, error_rate)),
    )


def power_curve(
    n_cases: list[int] | tuple[int, ...],
    deltas: list[float] | tuple[float, ...],
    discordance: float,
    *,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
    test: PlanTest = "auto",
) -> pl.DataFrame:
    """Exact power for every (n_cases, delta).

    Parameters
    ----------
    n_cases, deltas
        The numbers of cases and the differences to tabulate.
    discordance
        The expected share of cases whose outcome differs, in (0, 1].
    alpha, alternative, test
        As for :func:`cases_needed`.

    Returns
    -------
    polars.DataFrame
        Columns ``n_cases, delta, discordance, power``.

    Raises
    ------
    ValueError
        An entry of ``n_cases`` or ``deltas``, or an option, outside its domain (as for
        :func:`exact_power`).

    Examples
    --------
    >>> power_curve([100], [0.1], 0.2)["power"].round(3).to_list()
    [0.618]
    """
    rows = [
        (
            n,
            float(delta),
            discordance,
            exact_power(n, delta, discordance, alpha=alpha, alternative=alternative, test=test),
        )
        for n in n_cases
        for delta in deltas
    ]
    schema = {"n_cases": pl.Int64, "delta": pl.Float64, "discordance": pl.Float64, "power": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")
