r"""Case-level bootstrap of a ratio of sums and of a ratio of two such ratios.

The unit of resampling is the case (or the ``case_group`` cluster): each unit carries column sums
(numerator and denominator of one or two ratios) and a resample draws ``U`` units with replacement,
sums their columns and evaluates the statistic on the sums. This is the bootstrap of a *ratio of
sums* (Cochran 1977, ch. 6; Efron & Tibshirani 1993, ch. 6), not of a mean of per-case ratios.

Statistics are evaluated in the extended reals: a resample with no accepted outcome has an
infinite cost per accepted outcome (``x/0 = inf`` for ``x > 0``), and a paired ratio whose baseline
side is infinite is ``0``. A resample whose statistic is undefined (``0/0``, ``inf/inf``) is *kept*
and counted against every bound and every p-value: it is placed below the lower bound and above
the upper bound, and on the wrong side of each one-sided test.

References
----------
Cochran, W. G. (1977). Sampling Techniques, 3rd ed. Wiley, ch. 6 (ratio estimators).
Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171-185.
Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their Application. Cambridge
    University Press, ch. 4 (bootstrap tests).
Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall, ch. 13-14.
"""

from __future__ import annotations

import importlib
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from gatestats._typing import JSONObject
from gatestats.errors import InsufficientEvidenceError
from gatestats.vocabulary import Status, check_confidence_level

__all__ = [
    "MIN_UNITS_INTERVAL",
    "MIN_UNITS_RATIO",
    "BootstrapKind",
    "CostInterval",
    "IntervalRule",
    "RatioBootstrap",
    "RebuildableInterval",
    "bootstrap_interval",
    "cpa_statistic",
    "paired_ratio_statistic",
    "ratio_bootstrap",
]

#: Levels this close (times B + 1) to a rank's edge are computed again with scipy (:meth:`RatioBootstrap.bounds`):
#: a million times the largest disagreement between the standard library's normal distribution and scipy's.
_LEVEL_MARGIN: Final = 1e-9
#: BCa denominators ``1 - a (z0 + z)`` below this are computed with scipy (an error in ``z`` grows as 1/denom^2).
_DENOMINATOR_FLOOR: Final = 0.1
_NORMAL: Final = statistics.NormalDist()


def _quantile(p: float, *, exact: bool = False) -> float:
    """The standard normal quantile: scipy's ``ndtri`` when ``exact``, else the standard library's (AS 241)."""
    if exact:
        return float(importlib.import_module("scipy.special").ndtri(p))
    return _NORMAL.inv_cdf(p)


def _cdf(x: float, *, exact: bool = False) -> float:
    """The standard normal CDF: scipy's ``ndtr`` when ``exact``, else the standard library's (``erfc``)."""
    if exact:
        return float(importlib.import_module("scipy.special").ndtr(x))
    return _NORMAL.cdf(x)


#: Interval construction from the bootstrap draws.
BootstrapKind: TypeAlias = Literal["bca", "percentile"]

#: Fewest independent units (cases, or case groups) for which an interval of the cost per accepted
#: outcome is given: below, the simulated coverage fell under 93% (docs/cost.md).
MIN_UNITS_INTERVAL: Final = 30
#: Fewest paired independent units for the interval and p-values of the paired cost ratio: with 30
#: the simulated coverage of the percentile interval was 0.918 (docs/cost.md).
MIN_UNITS_RATIO: Final = 50

_BLOCK = 4_000_000  # resamples x units cells per block (bounds memory)
_TIE_TOLERANCE = 1e-12

Statistic: TypeAlias = Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]]


def cpa_statistic(sums: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Spend over accepted outcomes from column sums ``(..., 2)``: ``(spend, accepted)``.

    Parameters
    ----------
    sums
        Column sums, last axis ``(spend, accepted)``.

    Returns
    -------
    numpy.ndarray
        The cost per accepted outcome (``inf`` without an accepted outcome, NaN for 0/0).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        value: npt.NDArray[np.float64] = sums[..., 0] / sums[..., 1]
    return value


def paired_ratio_statistic(sums: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Candidate over baseline cost per accepted outcome from sums ``(..., 4)``.

    Parameters
    ----------
    sums
        Column sums, last axis ``(spend_b, accepted_b, spend_c, accepted_c)``.

    Returns
    -------
    numpy.ndarray
        The ratio in the extended reals (NaN where undefined).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        value: npt.NDArray[np.float64] = (sums[..., 2] / sums[..., 3]) / (sums[..., 0] / sums[..., 1])
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class RatioBootstrap:
    """Bootstrap draws of a ratio statistic, with what BCa needs (never shown to users as is)."""

    estimate: float
    draws: npt.NDArray[np.float64]
    #: Jackknife acceleration, ``None`` when a leave-one-unit-out value is not finite.
    acceleration: float | None
    n_units: int

    @property
    def n_undefined(self) -> int:
        """Resamples whose statistic is undefined (0/0 or inf/inf)."""
        return int(np.isnan(self.draws).sum())

    @property
    def n_infinite(self) -> int:
        """Resamples whose statistic is infinite (e.g. no accepted outcome)."""
        return int(np.isinf(self.draws).sum())

    def z0(self, *, exact: bool = False) -> float:
        """BCa bias correction: share of resamples below the estimate, ties counted half (Efron 1987).

        Undefined resamples count half below and half above (they carry no direction).

        Parameters
        ----------
        exact
            Use scipy's ``ndtri`` (the reference); otherwise the standard library's normal quantile,
            within about 1e-15 of it (see :meth:`bounds` for why that is enough).

        Returns
        -------
        float
            The bias correction :math:`z_0`.
        """
        b = self.draws.size
        tol = _TIE_TOLERANCE * max(1.0, abs(self.estimate))
        below = float((self.draws < self.estimate - tol).sum())
        ties = float((np.abs(self.draws - self.estimate) <= tol).sum()) + float(np.isnan(self.draws).sum())
        frac = (below + 0.5 * ties) / b
        return _quantile(min(max(frac, 0.5 / b), 1 - 0.5 / b), exact=exact)

    def levels(
        self, confidence_level: float, kind: BootstrapKind, *, exact: bool = False
    ) -> tuple[float, float] | None:
        """Quantile levels of the lower and upper bound.

        Parameters
        ----------
        confidence_level
            Two-sided level of the interval.
        kind
            ``bca`` or ``percentile``.
        exact
            Compute the normal quantiles and CDF with scipy (``ndtri``, ``ndtr``), the reference;
            otherwise with :class:`statistics.NormalDist`, which agrees to about 1e-15 and spares
            ``gatestats cost`` the import of ``scipy.special`` (issue 28, item 2).

        Returns
        -------
        tuple of float or None
            ``(q_low, q_high)``; ``None`` when BCa is undefined (no acceleration).
        """
        alpha = 1 - confidence_level
        if kind == "percentile":
            return alpha / 2, 1 - alpha / 2
        if self.acceleration is None:
            return None
        found = self._bca_levels(alpha, exact=exact)
        return found[0] if found is not None else None

    def _bca_levels(self, alpha: float, *, exact: bool) -> tuple[tuple[float, float], float] | None:
        """The BCa levels and the smaller of their denominators ``|1 - a (z0 + z)|`` (None: no acceleration)."""
        if self.acceleration is None:
            return None
        z0, a = self.z0(exact=exact), self.acceleration
        out, smallest = [], math.inf
        for z in (_quantile(alpha / 2, exact=exact), _quantile(1 - alpha / 2, exact=exact)):
            w = z0 + z
            denom = 1 - a * w
            smallest = min(smallest, abs(denom))
            out.append(_cdf(z0 + w / denom, exact=exact) if denom > 0 else (0.0 if w < 0 else 1.0))
        return (out[0], out[1]), smallest

    def _on_a_rank_edge(self, levels: tuple[float, float]) -> bool:
        """Whether a level within :data:`_LEVEL_MARGIN` of ``levels`` could give another rank."""
        b = self.draws.size
        return any(abs(q * (b + 1) - round(q * (b + 1))) <= _LEVEL_MARGIN * (b + 1) for q in levels)

    def bounds(self, confidence_level: float, kind: BootstrapKind) -> tuple[float, float] | None:
        """Lower and upper bound (order statistics, undefined resamples outside both), or ``None``.

        The lower bound is the ``floor(q_lo (B + 1))``-th smallest draw and the upper bound the
        ``ceil(q_hi (B + 1))``-th, with ranks clipped to ``[1, B]`` (Efron & Tibshirani 1993,
        sec. 13.3). Either may be infinite; the caller decides what that means.

        Only the integer ranks depend on the levels. They are computed with the standard library's
        normal distribution, and again with scipy's (the reference) when a level lies within
        :data:`_LEVEL_MARGIN` of a rank's edge or the acceleration's denominator is small: the
        bounds are scipy's to the last bit (tests/cost/test_bca_levels.py), without importing
        ``scipy.special`` on ``gatestats cost``'s usual path.

        Parameters
        ----------
        confidence_level, kind
            As in :meth:`levels`.

        Returns
        -------
        tuple of float or None
            ``(low, high)``; ``None`` when BCa is undefined.
        """
        alpha = 1 - confidence_level
        if kind == "percentile":
            levels = (alpha / 2, 1 - alpha / 2)
        else:
            fast = self._bca_levels(alpha, exact=False)
            if fast is None:
                return None
            levels, smallest_denominator = fast
            # The standard library agrees with scipy to about 1e-15; the acceleration's denominator
            # amplifies an error in z by 1 / denom**2, so a small one is left to scipy too.
            if self._on_a_rank_edge(levels) or smallest_denominator < _DENOMINATOR_FLOOR:
                exact = self._bca_levels(alpha, exact=True)
                assert exact is not None  # the same acceleration
                levels = exact[0]
        b = self.draws.size
        low_rank = min(max(math.floor(levels[0] * (b + 1)), 1), b)
        high_rank = min(max(math.ceil(levels[1] * (b + 1)), 1), b)
        undefined = np.isnan(self.draws)
        low_sorted = np.sort(np.where(undefined, -np.inf, self.draws))
        high_sorted = np.sort(np.where(undefined, np.inf, self.draws))
        return float(low_sorted[low_rank - 1]), float(high_sorted[high_rank - 1])

    def pvalues(self, limit: float) -> tuple[float, float]:
        r"""One-sided percentile-bootstrap p-values against ``limit``: ``(p_below, p_above)``.

        ``p_below`` tests H0: statistic >= limit (small: evidence it is below), ``p_above`` tests
        H0: statistic <= limit, each :math:`(1 + \#\{\text{resamples on the wrong side}\})/(B + 1)`
        (Davison & Hinkley 1997, eq. 4.11); a resample equal to the limit, and an undefined one,
        is on the wrong side of both. Rejecting when ``p <= alpha`` is (up to the rank rule)
        rejecting when the percentile bound at one-sided level ``1 - alpha`` excludes the limit.

        Parameters
        ----------
        limit
            The value tested against.

        Returns
        -------
        tuple of float
            ``(p_below, p_above)``.
        """
        b = self.draws.size
        undefined = int(np.isnan(self.draws).sum())
        at_or_above = int((self.draws >= limit).sum()) + undefined
        at_or_below = int((self.draws <= limit).sum()) + undefined
        return (1 + at_or_above) / (b + 1), (1 + at_or_below) / (b + 1)


def _resample_sums(
    columns: npt.NDArray[np.float64], *, n_resamples: int, rng: np.random.Generator
) -> npt.NDArray[np.float64]:
    units = columns.shape[0]
    block = max(1, _BLOCK // max(units, 1))
    out = np.empty((n_resamples, columns.shape[1]))
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        idx = rng.integers(0, units, size=(rows, units))
        flat = (np.arange(rows)[:, None] * units + idx).ravel()
        counts = np.bincount(flat, minlength=rows * units).reshape(rows, units).astype(np.float64)
        # Not ``counts @ columns``: a BLAS matrix product's rounding depends on its thread count
        # (up to 4e-14 between 1 and 2 OpenBLAS threads at 2,000 x 1,000 x 4), so the same seed gave
        # other last digits on another machine. einsum without optimisation sums in a fixed order.
        out[start : start + rows] = np.einsum("ru,um->rm", counts, columns, optimize=False)
    return out


def ratio_bootstrap(
    columns: npt.NDArray[np.float64],
    statistic: Statistic,
    *,
    n_resamples: int,
    rng: np.random.Generator,
) -> RatioBootstrap:
    """Draw ``n_resamples`` unit resamples of ``columns`` (units x m) and evaluate ``statistic``.

    The acceleration comes from the leave-one-unit-out jackknife (Efron & Tibshirani 1993,
    eq. 14.15); it is ``None`` when a jackknife value is not finite.

    Parameters
    ----------
    columns
        Per-unit column sums, units x m.
    statistic
        Maps column sums (last axis m) to the statistic.
    n_resamples
        Number of resamples.
    rng
        The generator the resamples are drawn from.

    Returns
    -------
    RatioBootstrap
        The estimate on all units, the draws and the acceleration.
    """
    units = columns.shape[0]
    total = columns.sum(axis=0)
    estimate = float(statistic(total))
    draws = statistic(_resample_sums(columns, n_resamples=n_resamples, rng=rng))
    jack = statistic(total[None, :] - columns)
    acceleration: float | None = None
    if units >= 2 and np.isfinite(jack).all():
        u = jack.mean() - jack
        u2 = float((u**2).sum())
        acceleration = float((u**3).sum() / (6 * u2**1.5)) if u2 > 0 else 0.0
    return RatioBootstrap(estimate=estimate, draws=draws, acceleration=acceleration, n_units=units)


#: The names of :class:`CostInterval`'s ``status`` and ``reason`` in a cost result and its JSON.
_RESULT_NAMES: Final = {"status": "interval_status", "reason": "interval_reason"}


@dataclass(frozen=True, slots=True, kw_only=True)
class CostInterval:
    """A bootstrap interval of a cost statistic, or an explicit statement that there is none.

    ``ci_low``/``ci_high`` are ``None`` when ``status == "insufficient_evidence"``; ``reason`` says
    why. ``n_resamples_infinite`` counts resamples with an infinite statistic (no accepted
    outcome on a side), ``n_resamples_undefined`` those with an undefined one (0/0, inf/inf): both
    are kept, never dropped (see :mod:`gatestats.cost`).
    """

    status: Status
    reason: str | None
    ci_low: float | None
    ci_high: float | None
    confidence_level: float
    method: BootstrapKind
    n_resamples: int
    seed: int
    n_units: int
    n_resamples_infinite: int
    n_resamples_undefined: int

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping, with the names of a cost result's JSON.

        The bounds, then ``status`` and ``reason`` as ``interval_status`` and ``interval_reason``,
        then the other fields in order.
        """
        named = {_RESULT_NAMES.get(name, name): getattr(self, name) for name in self.__dataclass_fields__}
        return {key: named[key] for key in ("ci_low", "ci_high", "interval_status", "interval_reason")} | named


def bootstrap_interval(
    boot: RatioBootstrap,
    *,
    confidence_level: float,
    kind: BootstrapKind,
    seed: int,
    unit: str,
    infinite_means: str,
    positive: bool,
    min_units: int,
) -> CostInterval:
    """Decide the interval from the draws: refused below ``min_units`` units, when BCa is undefined,
    when a bound is unbounded (``positive``: also a lower bound of 0) or the width is 0.

    Parameters
    ----------
    boot
        The bootstrap draws.
    confidence_level
        Two-sided level of the interval.
    kind
        ``bca`` or ``percentile``.
    seed
        Seed the draws came from (recorded).
    unit
        Plural name of the resampling unit in messages, e.g. ``cases``.
    infinite_means
        What an infinite resample means, for the message.
    positive
        Whether a lower bound of 0 (or below) is refused too.
    min_units
        Fewest units for which an interval is given.

    Returns
    -------
    CostInterval
        The interval, or ``insufficient_evidence`` with the reason.
    """
    bounds = boot.bounds(confidence_level, kind)
    reason = _refusal(
        boot, bounds, confidence_level, unit=unit, infinite_means=infinite_means, positive=positive, min_units=min_units
    )
    shown = bounds if reason is None else None
    return CostInterval(
        status="ok" if shown is not None else "insufficient_evidence",
        reason=reason,
        ci_low=None if shown is None else shown[0],
        ci_high=None if shown is None else shown[1],
        confidence_level=confidence_level,
        method=kind,
        n_resamples=int(boot.draws.size),
        seed=seed,
        n_units=boot.n_units,
        n_resamples_infinite=boot.n_infinite,
        n_resamples_undefined=boot.n_undefined,
    )


def _refusal(
    boot: RatioBootstrap,
    bounds: tuple[float, float] | None,
    confidence_level: float,
    *,
    unit: str,
    infinite_means: str,
    positive: bool,
    min_units: int,
) -> str | None:
    """Why the interval is refused (too few units, BCa undefined, unbounded, reaching 0, zero width), or ``None``."""
    if boot.n_units < min_units:
        return (
            f"an interval needs at least {min_units} independent {unit} (got {boot.n_units}); below that "
            "the simulated coverage of the case bootstrap fell under 93% (docs/cost.md)"
        )
    if bounds is None:
        return (
            f"the BCa interval is undefined: leaving out one of the {boot.n_units} {unit} leaves no accepted "
            "outcome (the accepted outcomes sit in a single unit)"
        )
    low, high = bounds
    counts = (
        f"{boot.n_infinite} of {boot.draws.size} resamples {infinite_means} and {boot.n_undefined} were undefined (0/0)"
    )
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"the {confidence_level:.0%} interval is unbounded: {counts}"
    if positive and low <= 0:
        return f"the {confidence_level:.0%} interval reaches 0 (a side may be free or never accepted): {counts}"
    if not low < high:
        return f"the resampled values do not vary (all {low:g}): the interval would have zero width"
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class IntervalRule:
    """How the interval of one cost statistic is built and when it is refused.

    One rule per statistic (the cost per accepted outcome, the paired cost ratio): the estimate
    and its later :meth:`confidence_interval` calls resample and decide the same way.
    """

    statistic: Statistic
    kind: BootstrapKind
    #: Plural names of the resampling unit, without and with ``case_group`` clusters.
    cases: str
    groups: str
    infinite_means: str
    positive: bool
    min_units: int

    def interval(self, boot: RatioBootstrap, *, confidence_level: float, seed: int, clustered: bool) -> CostInterval:
        """The interval of ``boot`` under this rule (see :func:`bootstrap_interval`).

        Parameters
        ----------
        boot, confidence_level, seed
            As in :func:`bootstrap_interval`.
        clustered
            Whether the units are ``case_group`` clusters (for the messages).

        Returns
        -------
        CostInterval
            The interval, or ``insufficient_evidence`` with the reason.
        """
        return bootstrap_interval(
            boot,
            confidence_level=confidence_level,
            kind=self.kind,
            seed=seed,
            unit=self.groups if clustered else self.cases,
            infinite_means=self.infinite_means,
            positive=self.positive,
            min_units=self.min_units,
        )

    def interval_again(
        self,
        boot: RatioBootstrap | None,
        *,
        what: str,
        reason: str | None,
        confidence_level: float,
        seed: int,
        clustered: bool,
    ) -> CostInterval:
        """The interval of stored draws at another level, for a result's ``confidence_interval``.

        Parameters
        ----------
        boot
            The result's draws; ``None`` when its statistic was undefined (nothing was drawn).
        what
            The result in the message, e.g. ``group {'system': 'a'}``.
        reason
            Why the statistic was undefined, for the message.
        confidence_level, seed, clustered
            As in :meth:`interval`.

        Returns
        -------
        CostInterval
            The interval, or ``insufficient_evidence`` with the reason.

        Raises
        ------
        InsufficientEvidenceError
            ``boot`` is ``None``.
        TypeError, ValueError
            ``confidence_level`` is not a number in (0, 1).
        """
        if boot is None:
            msg = f"{what}: no interval: {reason}"
            raise InsufficientEvidenceError(msg)
        check_confidence_level(confidence_level)
        return self.interval(boot, confidence_level=confidence_level, seed=seed, clustered=clustered)

    def resample(
        self,
        columns: npt.NDArray[np.float64],
        *,
        confidence_level: float,
        n_resamples: int,
        seed: int,
        clustered: bool,
    ) -> tuple[RatioBootstrap, CostInterval]:
        """Bootstrap the units (a generator seeded with ``seed``) and decide the interval.

        Parameters
        ----------
        columns
            Per-unit column sums, units x m (the statistic's columns).
        confidence_level
            Two-sided level of the interval.
        n_resamples
            Number of resamples.
        seed
            Seed of the generator (recorded).
        clustered
            Whether the units are ``case_group`` clusters.

        Returns
        -------
        tuple of RatioBootstrap and CostInterval
            The draws (kept for other levels and p-values) and the interval.
        """
        boot = ratio_bootstrap(
            np.ascontiguousarray(columns, dtype=np.float64),
            self.statistic,
            n_resamples=n_resamples,
            rng=np.random.default_rng(seed),
        )
        return boot, self.interval(boot, confidence_level=confidence_level, seed=seed, clustered=clustered)


#: The fields of a cost result that describe its interval, in the order of its JSON.
_INTERVAL_ENTRIES: Final = (
    "ci_low",
    "ci_high",
    "interval_status",
    "interval_reason",
    "method",
    "confidence_level",
    "n_resamples",
    "seed",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RebuildableInterval:
    """A cost result whose interval can be rebuilt at another level from its stored draws.

    Holds the fields every cost result shares (status, interval, bootstrap options); the result
    (a frozen dataclass deriving from it) names its :class:`IntervalRule` in ``_rule`` and says in
    ``_what`` how the messages name it.
    """

    status: Status
    reason: str | None
    ci_low: float | None
    ci_high: float | None
    interval_status: Status
    interval_reason: str | None
    method: BootstrapKind
    confidence_level: float
    n_resamples: int
    seed: int
    clustered: bool
    _rule: ClassVar[IntervalRule]
    _bootstrap: RatioBootstrap | None = field(default=None, repr=False, compare=False)

    def _what(self) -> str:
        """The result in a message, e.g. ``group {'system': 'a'}``."""
        raise NotImplementedError

    def _interval_entries(self) -> JSONObject:
        """The interval's entries of the result's JSON, ``ci_low`` to ``seed``."""
        return {name: getattr(self, name) for name in _INTERVAL_ENTRIES}

    def confidence_interval(self, confidence_level: float = 0.95) -> CostInterval:
        """The interval at another confidence level (same resamples, same seed).

        Parameters
        ----------
        confidence_level
            Two-sided level, in (0, 1); the draws are those behind the estimate.

        Returns
        -------
        CostInterval
            The interval at ``confidence_level``, or ``insufficient_evidence`` with the reason.

        Raises
        ------
        InsufficientEvidenceError
            The statistic is undefined (no resamples were drawn).
        ValueError
            ``confidence_level`` outside (0, 1).
        """
        return self._rule.interval_again(
            self._bootstrap,
            what=self._what(),
            reason=self.reason,
            confidence_level=confidence_level,
            seed=self.seed,
            clustered=self.clustered,
        )
