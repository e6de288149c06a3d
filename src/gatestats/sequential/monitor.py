"""Rollback triggers: one-sided anytime-valid tests of a stream against a level (issue 25).

Each trigger reads observations in arrival order and gives, after every observation, the evidence
against its null hypothesis and a confidence-sequence bound on the side that matters. A trigger
*fires* at the first observation where the evidence crosses its threshold; by Ville's inequality the
probability that it ever fires when the null holds is at most ``alpha``, however often the stream is
read (after every batch, at any time). docs/rollout.md ("The statistics") states what each trigger
tests, the reductions and the limits.

- :func:`rate_trigger`: a Bernoulli rate above (or below) a level. The e-process is the
  beta-binomial mixture of :func:`~gatestats.sequential.eprocess.bernoulli_log_mixture` (Howard et
  al. 2021) with its prior *restricted to the alternative side*:

  .. math::

      E_t = M_t(p_0) \\cdot \\frac{P(Q \\ge p_0 \\mid S_t, t)}{P(Q \\ge p_0)},

  :math:`M_t(p_0)` the two-sided mixture, :math:`Q` the mixing success probability (prior and
  posterior). Every component :math:`q' \\ge p_0` of the mixture is a likelihood ratio whose
  factor has conditional mean :math:`p q'/p_0 + (1-p)(1-q')/(1-p_0) \\le 1` for every
  :math:`p \\le p_0`, so :math:`E_t` is a nonnegative supermartingale under the composite null
  :math:`H_0: p \\le p_0` (the two-sided :math:`M_t(p_0)` is not: it also grows when the rate is far
  *below* :math:`p_0`). The bound is the dual sequence :math:`\\inf\\{p: E_t(p) < 1/\\alpha\\}`.
- :func:`mean_trigger`: a bounded mean above (or below) a level, with the betting e-process of
  :func:`~gatestats.sequential.confseq.log_eprocess` (Waudby-Smith & Ramdas 2024) on the values
  rescaled to [0, 1].
- :func:`count_trigger`: zero (or ``tolerated``) tolerance for a count: a fact, not an estimate.
- :func:`vs_reference_level`: the level of a "vs gate" trigger (the gate's lower bound minus
  delta). The fixed-sample comparison of a layer's rate with the golden set's is
  :func:`gatestats.sequential.compare_layers.layer_comparison`.

References
----------
Howard, S. R., Ramdas, A., McAuliffe, J. and Sekhon, J. (2021). Time-uniform, nonparametric,
nonasymptotic confidence sequences. *The Annals of Statistics* 49(2), 1055-1080.

Waudby-Smith, I. and Ramdas, A. (2024). Estimating means of bounded random variables by betting.
*Journal of the Royal Statistical Society, Series B* 86(1), 1-27.

Johari, R., Koomen, P., Pekelis, L. and Walsh, D. (2017). Peeking at A/B tests: why it matters, and
what to do about it. *Proceedings of KDD 2017*, 1517-1525.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

from gatestats._typing import JSONObject
from gatestats.sequential.confseq import as_numbers, check_method, log_eprocess, lower_bound
from gatestats.sequential.design import SequentialMethod
from gatestats.sequential.eprocess import bernoulli_log_mixture, bernoulli_mixture_prior
from gatestats.vocabulary import check_open_unit

__all__ = [
    "CostReduction",
    "TriggerDirection",
    "TriggerKind",
    "TriggerPath",
    "cost_per_accepted_values",
    "count_trigger",
    "mean_trigger",
    "one_sided_log_mixture",
    "one_sided_log_mixture_reaches",
    "rate_trigger",
    "vs_reference_level",
]

#: ``above``: the null is "at most the level" (fire on evidence the value is above it);
#: ``below``: the null is "at least the level".
TriggerDirection: TypeAlias = Literal["above", "below"]
TriggerKind: TypeAlias = Literal["rate", "mean", "count"]

_Array: TypeAlias = NDArray[np.float64]
_EDGE = 1e-12
_BISECTIONS = 40
#: A bisection step is decided by the approximate mixture only this far from the target, relative to the
#: size of its terms (its error is a few units in the last place); nearer, by the exact mixture.
_SURE = 1e-10
#: A beta cdf above this is read as the survival of the swapped beta (``log1p(-cdf)`` would lose precision).
_CDF_CAP = 0.9
#: log E is floored here (e^-700): a stream far on the null side underflows the posterior tail.
_LOG_FLOOR = -700.0
#: A bound is a bisection per checkpoint (the betting bound costs ~ checkpoints x n): beyond this
#: many observations it is computed at this many evenly spaced checkpoints (the last observation
#: always one) and carried forward, which is still a valid confidence sequence.
_MAX_CHECKPOINTS = 500


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerPath:
    """A trigger's evidence after each observation.

    ``log_evalue[i]`` is the log e-value after observation ``i + 1`` (``None`` for a count: a
    count is a fact, not evidence); ``bound[i]`` the confidence-sequence bound on the side that
    matters (the lower bound for ``above``, the upper for ``below``; intersected over time; beyond
    500 observations computed at 500 evenly spaced checkpoints and carried forward), or for a
    count the cumulative count itself. ``first_crossing`` is the 0-based index of the
    observation at which the trigger first fired (``None``: not fired). ``estimate`` is ``None``
    with no observation: insufficient evidence, never 0.
    """

    kind: TriggerKind
    direction: TriggerDirection
    level: float
    alpha: float | None
    method: str
    n: int
    estimate: float | None
    log_evalue: _Array | None
    bound: _Array
    first_crossing: int | None

    def __post_init__(self) -> None:
        """Make the paths read-only, as the rest of the frozen object is."""
        self.bound.setflags(write=False)
        if self.log_evalue is not None:
            self.log_evalue.setflags(write=False)

    @property
    def fired(self) -> bool:
        """Whether the trigger has fired (once fired, more observations never un-fire it)."""
        return self.first_crossing is not None

    @property
    def threshold(self) -> float | None:
        """:math:`\\log(1/\\alpha)`, the log e-value at which the trigger fires (``None`` for a count)."""
        return None if self.alpha is None else math.log(1 / self.alpha)

    def to_dict(self) -> JSONObject:
        """JSON-ready form.

        Returns
        -------
        JSONObject
            The fields by name, ``fired``, ``threshold``, ``bound_side`` and the paths as lists.
        """
        return {
            "kind": self.kind,
            "direction": self.direction,
            "level": self.level,
            "alpha": self.alpha,
            "method": self.method,
            "n": self.n,
            "estimate": self.estimate,
            "fired": self.fired,
            "first_crossing": self.first_crossing,
            "threshold": self.threshold,
            "bound_side": "lower" if self.direction == "above" else "upper",
            "log_evalue": None if self.log_evalue is None else [float(v) for v in self.log_evalue],
            "bound": [float(v) for v in self.bound],
        }


def _first_crossing(log_e: _Array, threshold: float) -> int | None:
    crossed = np.flatnonzero(log_e >= threshold)
    return int(crossed[0]) if crossed.size else None


def _check_alpha(alpha: object) -> float:
    return check_open_unit(alpha, "alpha")


def _check_direction(direction: object) -> TriggerDirection:
    if direction == "above":
        return "above"
    if direction == "below":
        return "below"
    msg = f"direction: expected 'above' or 'below' (got {direction!r})"
    raise ValueError(msg)


def _finite_number(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        msg = f"{name}: expected a finite number (got {value!r})"
        raise ValueError(msg)
    return float(value)


def one_dimensional(name: str, values: ArrayLike) -> _Array:
    """``values`` as a one-dimensional float array, or a :class:`ValueError` naming ``name``."""
    xs = as_numbers(name, values)
    if xs.ndim != 1:
        msg = f"{name}: expected a one-dimensional sequence (got shape {xs.shape})"
        raise ValueError(msg)
    return xs


def one_sided_log_mixture(
    successes: ArrayLike, trials: ArrayLike, level: ArrayLike, *, t_opt: float, alpha_opt: float
) -> _Array:
    """The log of the one-sided beta-binomial mixture e-process against :math:`H_0: p \\le p_0`.

    :func:`~gatestats.sequential.eprocess.bernoulli_log_mixture` plus the log of the posterior
    tail :math:`P(Q \\ge p_0 \\mid S_t, t)` minus the log of the prior tail (module docstring);
    floored at -700.

    Parameters
    ----------
    successes
        :math:`S_t`, events so far.
    trials
        :math:`t`, observations so far.
    level
        :math:`p_0`, in (0, 1).
    t_opt
        The number of observations the mixture is tuned for.
    alpha_opt
        The level the mixture is tuned for.

    Returns
    -------
    numpy.ndarray
        :math:`\\log E_t(p_0)`, broadcast over the arguments.

    Examples
    --------
    >>> float(one_sided_log_mixture(0, 0, 0.3, t_opt=100, alpha_opt=0.05))
    0.0
    """
    s = np.asarray(successes, dtype=np.float64)
    t = np.asarray(trials, dtype=np.float64)
    p = np.asarray(level, dtype=np.float64)
    two_sided = bernoulli_log_mixture(s, t, p, t_opt=t_opt, alpha_opt=alpha_opt)
    on_successes, on_failures = bernoulli_mixture_prior(p, t_opt=t_opt, alpha_opt=alpha_opt)
    with np.errstate(divide="ignore"):
        posterior = stats.beta.logsf(p, on_successes + s, on_failures + t - s)
        prior = stats.beta.logsf(p, on_successes, on_failures)
    return np.asarray(np.maximum(two_sided + posterior - prior, _LOG_FLOOR), dtype=np.float64)


def one_sided_log_mixture_reaches(
    successes: ArrayLike, trials: ArrayLike, level: ArrayLike, threshold: float, *, t_opt: float, alpha_opt: float
) -> NDArray[np.bool_]:
    """Whether :func:`one_sided_log_mixture` is at least ``threshold``, computed exactly only near it.

    The same booleans as ``one_sided_log_mixture(successes, trials, level, t_opt=t_opt,
    alpha_opt=alpha_opt) >= threshold``, at a fraction of the cost where most values are far from
    the threshold (a simulation reading only whether a trigger fired): away from the threshold the
    mixture is read from ``betainc`` alone, near it (within 1e-10 of the size of its terms) the exact
    mixture decides (tests/sequential/test_monitor_oracle.py compares the two on random counts,
    levels and thresholds, ties included).

    Parameters
    ----------
    successes
        :math:`S_t`, events so far.
    trials
        :math:`t`, observations so far.
    level
        :math:`p_0`, in (0, 1).
    threshold
        The log e-value compared with, e.g. :math:`\\log(1/\\alpha)`.
    t_opt
        The number of observations the mixture is tuned for.
    alpha_opt
        The level the mixture is tuned for.

    Returns
    -------
    numpy.ndarray
        Booleans, broadcast over the arguments.

    Examples
    --------
    >>> one_sided_log_mixture_reaches([0, 10], [50, 60], 0.02, math.log(20), t_opt=500, alpha_opt=0.05).tolist()
    [False, True]
    """
    s, t, p = np.broadcast_arrays(
        np.asarray(successes, dtype=np.float64),
        np.asarray(trials, dtype=np.float64),
        np.asarray(level, dtype=np.float64),
    )
    value = _log_mixture_sided(s.ravel(), t.ravel(), p.ravel(), float(threshold), t_opt=t_opt, alpha=alpha_opt)
    return np.asarray(value >= threshold).reshape(s.shape)


def _check_rate_level(level: object, direction: TriggerDirection) -> float:
    p = _finite_number(level, "level")
    never = (direction == "above" and p >= 1) or (direction == "below" and p <= 0)
    if never:
        side = "<=" if direction == "above" else ">="
        msg = (
            f"level: {p!r} with direction {direction!r} can never fire (the null 'rate {side} {p!r}' always "
            "holds; for a vs_gate trigger: the gate's lower bound minus delta is not above 0)"
        )
        raise ValueError(msg)
    if not 0 <= p <= 1:
        msg = f"level: expected a number in [0, 1] (got {p!r})"
        raise ValueError(msg)
    if p in (0, 1):
        which = "event" if p == 0 else "non-event"
        msg = (
            f"level: {p!r} with direction {direction!r} is refuted by a single {which}: that is a count, "
            f"not a rate; use count_trigger on the {which}s (tolerated=0)"
        )
        raise ValueError(msg)
    return p


def check_events(events: ArrayLike, name: str = "events") -> _Array:
    """``events`` as a float array of 0/1, or a :class:`ValueError` naming ``name`` and the first bad index."""
    x = one_dimensional(name, events)
    bad = np.flatnonzero((x != 0) & (x != 1))
    if bad.size:
        msg = f"{name}[{int(bad[0])}]: expected 0 or 1 (got {float(x[bad[0]])!r})"
        raise ValueError(msg)
    return x


def _log_survival(cdf: _Array, x: _Array, a: _Array, b: _Array) -> tuple[_Array, _Array]:
    """:math:`\\log P(Q > x)`, :math:`Q \\sim \\mathrm{Beta}(a, b)`, from ``betainc(a, b, x)``; and its error bound.

    ``log1p(-cdf)`` where ``cdf <= 0.9`` (nothing lost; the bound is 0 beyond boost's accuracy, which
    ``_SURE`` covers); above, ``log(betainc(b, a, 1 - x))``, whose ``1 - x`` is rounded by at most
    :math:`2^{-54}` (exact from 0.5): the bound is that shift times the density over the survival,
    times 1000.
    """
    upper = cdf > _CDF_CAP
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log1p(-cdf)
        bound = np.zeros_like(value)
        if upper.any():
            xu, au, bu = x[upper], a[upper], b[upper]
            tail = np.log(special.betainc(bu, au, 1 - xu))
            log_density = (au - 1) * np.log(xu) + (bu - 1) * np.log1p(-xu) - special.betaln(au, bu)
            value[upper] = tail
            bound[upper] = 1e3 * 2.0**-54 * np.exp(log_density - tail)
    return value, bound


def _log_mixture_sided(s: _Array, t: _Array, p: _Array, target: float, *, t_opt: float, alpha: float) -> _Array:
    """:func:`one_sided_log_mixture` where it is near ``target``; elsewhere a value on the same side of it.

    The exact mixture's two beta log-survivals go through scipy's ``beta.logsf``: a beta median per
    element and, above it, ``betaincc`` (~20 us an element, ~60 times ``betainc``). The same mixture
    with each log-survival read from ``betainc`` (:func:`_log_survival`) differs from it by a few
    units in the last place of its terms (the old code takes exactly ``log1p(-betainc)`` below the
    median; above it ``betaincc`` and ``1 - betainc`` agree to boost's accuracy) plus the bound
    :func:`_log_survival` states. Where that approximation (floored at -700 as the exact one is) is
    further from ``target`` than ``_SURE`` times the size of its terms plus those bounds, it is
    returned; elsewhere (near the target, NaN, an infinite term) the exact mixture is. Compared with
    ``target`` (``>=`` or ``<``) it decides as the exact mixture does, so every bisection step and
    bound is the exact mixture's (tests/sequential/test_monitor_oracle.py compares them with the old
    code, which evaluated the exact mixture at every step).
    """
    two_sided = bernoulli_log_mixture(s, t, p, t_opt=t_opt, alpha_opt=alpha)
    on_successes, on_failures = bernoulli_mixture_prior(p, t_opt=t_opt, alpha_opt=alpha)
    a, b = on_successes + s, on_failures + t - s
    posterior, posterior_bound = _log_survival(special.betainc(a, b, p), p, a, b)
    prior, prior_bound = _log_survival(special.betainc(on_successes, on_failures, p), p, on_successes, on_failures)
    with np.errstate(invalid="ignore"):
        value = np.asarray(np.maximum(two_sided + posterior - prior, _LOG_FLOOR), dtype=np.float64)
        slack = _SURE * (1 + np.abs(two_sided) + np.abs(posterior) + np.abs(prior)) + posterior_bound + prior_bound
        sure = np.abs(value - target) > slack
    at = np.flatnonzero(~sure)
    if at.size:
        value[at] = one_sided_log_mixture(s[at], t[at], p[at], t_opt=t_opt, alpha_opt=alpha)
    return value


def _rate_lower_bound(s: _Array, t: _Array, target: float, *, t_opt: float, alpha: float) -> _Array:
    """:math:`\\inf\\{p : E_t(p) < 1/\\alpha\\}` by bisection below :math:`S_t/t` (0 when no event).

    40 halvings of :math:`[10^{-12}, S_t/t]`, each step deciding :math:`E_t(\\text{mid}) \\ge
    1/\\alpha` by :func:`_log_mixture_sided`; only the checkpoints with an event whose bound is above the
    edge are bisected (the others are 0).
    """
    inner = np.clip(s / np.maximum(t, 1), _EDGE, 1 - _EDGE)
    outer = np.full_like(inner, _EDGE)
    inside = _log_mixture_sided(s, t, outer, target, t_opt=t_opt, alpha=alpha) < target
    live = np.flatnonzero(~(inside | (s == 0)))
    s_live, t_live, inner_live, outer_live = s[live], t[live], inner[live], outer[live]
    for _ in range(_BISECTIONS):
        mid = (inner_live + outer_live) / 2
        rejected = _log_mixture_sided(s_live, t_live, mid, target, t_opt=t_opt, alpha=alpha) >= target
        outer_live = np.where(rejected, mid, outer_live)
        inner_live = np.where(rejected, inner_live, mid)
    bound = np.zeros_like(inner)
    bound[live] = outer_live
    return bound


def rate_trigger(
    events: ArrayLike,
    *,
    level: float,
    direction: TriggerDirection,
    alpha: float,
    t_opt: float = 500.0,
) -> TriggerPath:
    """The one-sided anytime-valid test of a Bernoulli rate against a level.

    ``above`` tests :math:`H_0: p \\le` ``level`` (fire on evidence the rate is above it: an
    escaped-defect rate); ``below`` tests :math:`H_0: p \\ge` ``level`` (an accepted-outcome rate),
    as ``above`` on the non-events. The e-process is :func:`one_sided_log_mixture`; the bound is its
    dual confidence sequence, intersected over time (computed at every observation up to 500, then
    at 500 evenly spaced checkpoints and carried forward; the e-value is at every observation).
    The e-process rises only at an event of the tested side, so the trigger fires at one.

    Parameters
    ----------
    events
        0/1 per observation, in arrival order (1: the event, e.g. an accepted outcome).
    level
        The level, in (0, 1). At 0 (``above``) or 1 (``below``) a single event refutes the null:
        refused, use :func:`count_trigger`; at 1 (``above``) or 0 (``below``) the trigger could
        never fire: refused.
    direction
        ``"above"`` or ``"below"``.
    alpha
        :math:`P(\\text{ever fires} \\mid H_0) \\le \\alpha`, in (0, 1).
    t_opt
        The number of observations the mixture's boundary is tuned for (valid whatever it is).

    Returns
    -------
    TriggerPath
        ``estimate`` is the event rate; ``bound`` its lower (``above``) or upper (``below``) bound.

    Raises
    ------
    ValueError
        An event is not 0 or 1 (NaN included), the level is refused (above), ``alpha`` is not in
        (0, 1), ``t_opt`` is below 1, or ``direction`` is unknown.

    Examples
    --------
    >>> path = rate_trigger([0] * 50 + [1] * 10, level=0.02, direction="above", alpha=0.05)
    >>> path.fired, path.first_crossing, round(path.estimate, 3)
    (True, 55, 0.167)
    """
    side = _check_direction(direction)
    p0 = _check_rate_level(level, side)
    alpha = _check_alpha(alpha)
    t_opt = _finite_number(t_opt, "t_opt")
    if t_opt < 1:
        msg = f"t_opt: expected a number >= 1 (got {t_opt!r})"
        raise ValueError(msg)
    x = check_events(events)
    tested, null = (x, p0) if side == "above" else (1 - x, 1 - p0)
    t = np.arange(1, x.size + 1, dtype=np.float64)
    s = np.cumsum(tested)
    log_e = one_sided_log_mixture(s, t, null, t_opt=t_opt, alpha_opt=alpha)
    target = math.log(1 / alpha)
    at = _checkpoints(x.size)
    bound = _carried(x.size, at, _rate_lower_bound(s[at], t[at], target, t_opt=t_opt, alpha=alpha))
    return TriggerPath(
        kind="rate",
        direction=side,
        level=p0,
        alpha=alpha,
        method="one_sided_beta_binomial_mixture",
        n=int(x.size),
        estimate=float(np.mean(x)) if x.size else None,
        log_evalue=log_e,
        bound=bound if side == "above" else 1 - bound,
        first_crossing=_first_crossing(log_e, target),
    )


def _check_bounded(values: ArrayLike, lower: float, upper: float) -> _Array:
    x = one_dimensional("values", values)
    bad = np.flatnonzero(~np.isfinite(x) | (x < lower) | (x > upper))
    if bad.size:
        msg = f"values[{int(bad[0])}]: expected a finite number in [{lower!r}, {upper!r}] (got {float(x[bad[0]])!r})"
        raise ValueError(msg)
    return x


def _mean_bounds(
    lower: object, upper: object, level: object, direction: TriggerDirection
) -> tuple[float, float, float]:
    lo, hi = _finite_number(lower, "lower"), _finite_number(upper, "upper")
    if not (lo < hi and math.isfinite(hi - lo)):
        msg = f"lower, upper: expected lower < upper, a finite range apart (got {lo!r}, {hi!r})"
        raise ValueError(msg)
    m = _finite_number(level, "level")
    if not lo <= m <= hi:
        msg = f"level: expected a number in [lower, upper] = [{lo!r}, {hi!r}] (got {m!r})"
        raise ValueError(msg)
    if (direction == "above" and m == hi) or (direction == "below" and m == lo):
        msg = f"level: {m!r} with direction {direction!r} can never fire (every mean is on the null side)"
        raise ValueError(msg)
    return lo, hi, m


def _checkpoints(n: int) -> NDArray[np.intp]:
    """Every index up to ``_MAX_CHECKPOINTS`` observations, then that many evenly spaced (last included)."""
    if n <= _MAX_CHECKPOINTS:
        return np.arange(n, dtype=np.intp)
    return np.unique(np.linspace(0, n - 1, _MAX_CHECKPOINTS).round()).astype(np.intp)


def _carried(n: int, at: NDArray[np.intp], bounds: _Array) -> _Array:
    """Lower bounds at the checkpoints ``at`` (0 among them), intersected over time at every index."""
    full = np.full(n, -np.inf)
    full[at] = bounds
    return np.asarray(np.maximum.accumulate(full)) if n else np.zeros(0)


def mean_trigger(
    values: ArrayLike,
    *,
    level: float,
    lower: float,
    upper: float,
    direction: TriggerDirection,
    alpha: float,
    method: SequentialMethod = "betting",
) -> TriggerPath:
    """The one-sided anytime-valid test of a bounded mean against a level.

    The values are rescaled to [0, 1] (:math:`y = (x - \\text{lower}) / (\\text{upper} -
    \\text{lower})`) and tested with :func:`~gatestats.sequential.confseq.log_eprocess`: ``above``
    against :math:`H_0: \\mu \\le` ``level``, ``below`` against :math:`H_0: \\mu \\ge` ``level`` (as
    ``above`` on :math:`1 - y`). Valid when each value's conditional mean given the past is on the
    null side (independence is not needed).

    Cost per accepted outcome against :math:`c_0` (docs/rollout.md, "The statistics"): pass
    :math:`x_i = \\text{cost}_i - c_0 \\cdot \\text{accepted}_i` in :math:`[-c_0, \\text{cost cap}]`,
    ``level=0``, ``direction="above"``: with an accepted rate :math:`a > 0`,
    :math:`E[x] > 0 \\iff E[\\text{cost}] / a > c_0`.

    Parameters
    ----------
    values
        The observations in arrival order, each in [``lower``, ``upper``] (NaN refused).
    level
        The level, in [``lower``, ``upper``] (``upper`` with ``above``, ``lower`` with ``below``:
        refused, the trigger could never fire).
    lower, upper
        The known range of one value (``lower < upper``: a cap, not an observed extreme).
    direction
        ``"above"`` or ``"below"``.
    alpha
        :math:`P(\\text{ever fires} \\mid H_0) \\le \\alpha`, in (0, 1).
    method
        The e-process of :mod:`~gatestats.sequential.confseq`: ``"betting"`` (default),
        ``"empirical_bernstein"`` or ``"hoeffding"``.

    Returns
    -------
    TriggerPath
        ``estimate``: the mean; ``bound``: its lower (``above``) or upper bound, on the values' scale.

    Raises
    ------
    ValueError
        A value is NaN, infinite or outside [lower, upper]; the range or the level is refused;
        ``alpha`` is not in (0, 1); ``direction`` or ``method`` is unknown.

    Examples
    --------
    >>> path = mean_trigger([9.0, 10.0] * 40, level=5.0, lower=0.0, upper=30.0, direction="above", alpha=0.05)
    >>> path.fired, round(path.estimate, 2), bool(path.bound[-1] > 5.0)
    (True, 9.5, True)
    """
    side = _check_direction(direction)
    method = check_method(method)
    lo, hi, m = _mean_bounds(lower, upper, level, side)
    alpha = _check_alpha(alpha)
    x = _check_bounded(values, lo, hi)
    y, null = (x - lo) / (hi - lo), (m - lo) / (hi - lo)
    tested, tested_null = (y, null) if side == "above" else (1 - y, 1 - null)
    log_e = log_eprocess(tested, tested_null, alpha=alpha, method=method)
    at = _checkpoints(x.size)
    scaled = _carried(x.size, at, lower_bound(tested, at, alpha=alpha, method=method))
    bound = lo + (hi - lo) * (scaled if side == "above" else 1 - scaled)
    return TriggerPath(
        kind="mean",
        direction=side,
        level=m,
        alpha=alpha,
        method=method,
        n=int(x.size),
        estimate=float(np.mean(x)) if x.size else None,
        log_evalue=np.asarray(log_e, dtype=np.float64),
        bound=np.asarray(bound, dtype=np.float64),
        first_crossing=_first_crossing(log_e, math.log(1 / alpha)),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CostReduction:
    """The values and range :func:`mean_trigger` tests for "cost per accepted outcome above ``reference_cpa``"."""

    values: _Array
    lower: float
    upper: float


def cost_per_accepted_values(
    costs: ArrayLike, accepted: ArrayLike, *, reference_cpa: float, cost_cap: float
) -> CostReduction:
    """:math:`x_i = \text{cost}_i - c \\cdot \text{accepted}_i` in :math:`[-c, \text{cap}]`, for the CPA trigger.

    ``mean_trigger(r.values, level=0.0, lower=r.lower, upper=r.upper, direction="above", alpha=a)``
    tests :math:`H_0: \text{CPA} \\le c` (docs/rollout.md: :math:`E[x] > 0 \\iff E[\text{cost}] /
    P(\text{accepted}) > c` when :math:`P(\text{accepted}) > 0`).

    Parameters
    ----------
    costs
        The cost of every attempt (failed ones included), in [0, ``cost_cap``], in arrival order.
    accepted
        0/1 per attempt, aligned with ``costs``.
    reference_cpa
        :math:`c` (e.g. the ratio times the previous release's CPA), ``> 0``.
    cost_cap
        The most one attempt may cost, ``> 0``.

    Returns
    -------
    CostReduction
        The values and their range ``[-reference_cpa, cost_cap]``.

    Raises
    ------
    ValueError
        A cost outside [0, cap] or NaN, an acceptance not 0/1, different lengths, a non-positive
        ``reference_cpa`` or ``cost_cap``.
    """
    c = _finite_number(reference_cpa, "reference_cpa")
    cap = _finite_number(cost_cap, "cost_cap")
    for name, value in (("reference_cpa", c), ("cost_cap", cap)):
        if value <= 0:
            msg = f"{name}: expected a number > 0 (got {value!r})"
            raise ValueError(msg)
    cost = one_dimensional("costs", costs)
    bad = np.flatnonzero(~np.isfinite(cost) | (cost < 0) | (cost > cap))
    if bad.size:
        msg = f"costs[{int(bad[0])}]: expected a finite number in [0, {cap!r}] (got {float(cost[bad[0]])!r})"
        raise ValueError(msg)
    acc = check_events(accepted, "accepted")
    if acc.size != cost.size:
        msg = f"costs, accepted: expected the same length (got {cost.size} and {acc.size})"
        raise ValueError(msg)
    return CostReduction(values=np.asarray(cost - c * acc, dtype=np.float64), lower=-c, upper=cap)


def count_trigger(counts: ArrayLike, *, tolerated: int = 0) -> TriggerPath:
    """Zero (or ``tolerated``) tolerance: fire at the first observation where the running total exceeds it.

    A count is a fact, not an estimate: no α, no e-value. With ``tolerated=0`` the trigger fires at
    the first observation with any count (an unauthorised-action attempt); with ``tolerated=k`` at
    the first observation that brings the total above ``k``.

    Parameters
    ----------
    counts
        Non-negative whole numbers per observation, in arrival order.
    tolerated
        The total tolerated (a whole number ``>= 0``).

    Returns
    -------
    TriggerPath
        ``kind="count"``, ``direction="above"``, ``level=tolerated``, ``alpha=None``,
        ``log_evalue=None``; ``bound`` is the running total; ``estimate`` the total (``None`` with
        no observation).

    Raises
    ------
    ValueError
        A count is negative, fractional, NaN or infinite; ``tolerated`` is not a whole number ``>= 0``.

    Examples
    --------
    >>> count_trigger([0, 0, 0, 1, 0]).first_crossing
    3
    """
    if isinstance(tolerated, bool) or not isinstance(tolerated, int) or tolerated < 0:
        msg = f"tolerated: expected a whole number >= 0 (got {tolerated!r})"
        raise ValueError(msg)
    c = one_dimensional("counts", counts)
    bad = np.flatnonzero(~np.isfinite(c) | (c < 0) | (c != np.round(c)))
    if bad.size:
        msg = f"counts[{int(bad[0])}]: expected a whole number >= 0 (got {float(c[bad[0]])!r})"
        raise ValueError(msg)
    total = np.cumsum(c)
    crossed = np.flatnonzero(total > tolerated)
    return TriggerPath(
        kind="count",
        direction="above",
        level=float(tolerated),
        alpha=None,
        method="count",
        n=int(c.size),
        estimate=float(total[-1]) if c.size else None,
        log_evalue=None,
        bound=np.asarray(total, dtype=np.float64),
        first_crossing=int(crossed[0]) if crossed.size else None,
    )


def vs_reference_level(reference_lower: float, delta: float) -> float:
    """The level of a "vs gate" trigger: the gate's lower confidence bound for the rate minus ``delta``.

    With the trigger ``rate_trigger(..., level=reference_lower - delta, direction="below",
    alpha=alpha)`` against :math:`H_0: p_{prod} \\ge p_{gold} - \\delta` (:math:`p_{gold}` the golden
    set's true rate): when the gate's bound holds (:math:`L \\le p_{gold}`, probability at least
    :math:`1 - \\alpha_{gate}`) the trigger's level is at most :math:`p_{gold} - \\delta`, so under
    :math:`H_0` it fires with probability at most α; hence a false rollback has probability at most
    :math:`\\alpha + \\alpha_{gate}` (the golden set's own uncertainty is paid for, not ignored).

    Parameters
    ----------
    reference_lower
        The gate's lower confidence bound for the rate, in [0, 1].
    delta
        The tolerated drop, ``>= 0``.

    Returns
    -------
    float
        ``reference_lower - delta`` (it may be ``<= 0``: such a trigger can never fire, and
        :func:`rate_trigger` refuses it with that reason).

    Raises
    ------
    ValueError
        ``reference_lower`` is not in [0, 1] or ``delta`` is negative (NaN or infinite refused).

    Examples
    --------
    >>> round(vs_reference_level(0.82, 0.10), 2)
    0.72
    """
    low = _finite_number(reference_lower, "reference_lower")
    if not 0 <= low <= 1:
        msg = f"reference_lower: expected a number in [0, 1] (got {low!r})"
        raise ValueError(msg)
    d = _finite_number(delta, "delta")
    if d < 0:
        msg = f"delta: expected a number >= 0 (got {d!r})"
        raise ValueError(msg)
    return low - d
