"""Time-uniform confidence sequences and e-processes for the mean of values in [0, 1].

Three one-sided e-processes against :math:`H_0: \\mu \\le m` for :math:`X_1, X_2, \\dots \\in [0, 1]`
with conditional mean :math:`\\mu` (Waudby-Smith & Ramdas 2024). Each is a nonnegative
supermartingale with initial value 1 under :math:`H_0`, so by Ville's inequality it reaches
:math:`1/\\alpha` with probability at most :math:`\\alpha`, at any stopping time; the set of
:math:`m` it does not reject is a one-sided :math:`(1-\\alpha)` confidence sequence.

Conventions (all three share the predictable plug-in estimates of their equation (26)):

.. math::

    \\hat\\mu_t = \\frac{1/2 + \\sum_{i \\le t} X_i}{t + 1}, \\qquad
    \\hat\\sigma_t^2 = \\frac{1/4 + \\sum_{i \\le t} (X_i - \\hat\\mu_i)^2}{t + 1},
    \\qquad \\hat\\mu_0 = 1/2,\\ \\hat\\sigma_0^2 = 1/4.

- ``hoeffding`` (their section 3.1, PrPl-H):
  :math:`\\lambda_t = \\min\\{\\sqrt{8\\log(1/\\alpha) / (t \\log(1+t))}, 1\\}`,
  :math:`\\log K_t(m) = \\sum_{i \\le t} \\lambda_i (X_i - m) - \\lambda_i^2 / 8`.
- ``empirical_bernstein`` (section 3.2, PrPl-EB):
  :math:`\\lambda_t = \\min\\{\\sqrt{2\\log(1/\\alpha) / (\\hat\\sigma_{t-1}^2 t \\log(1+t))}, c\\}`,
  :math:`c = 1/2`,
  :math:`\\log K_t(m) = \\sum_{i \\le t} \\lambda_i (X_i - m) - v_i \\psi_E(\\lambda_i)` with
  :math:`v_i = 4 (X_i - \\hat\\mu_{i-1})^2` and :math:`\\psi_E(\\lambda) = (-\\log(1-\\lambda) - \\lambda)/4`.
- ``betting`` (section 4, the "+" half of the hedged capital process):
  :math:`K_t(m) = \\prod_{i \\le t} (1 + \\lambda_i(m) (X_i - m))` with
  :math:`\\lambda_i(m) = \\min\\{\\dot\\lambda_i, c / m\\}`, :math:`c = 1/2`, and
  :math:`\\dot\\lambda_i` the PrPl-EB rate above (untruncated).

The paper's two-sided sequences spend :math:`\\alpha/2` on each side (``log(2/alpha)`` in the rates;
the hedged process with :math:`\\theta = 1/2`); here each side is one-sided at its own
:math:`\\alpha`, so the paper's two-sided sequence at :math:`\\alpha` is the intersection of the lower
and upper sequences here at :math:`\\alpha/2` (:func:`confidence_sequence` with
``alternative="two-sided"``). The upper side is the lower side of :math:`1 - X`.

References
----------
Waudby-Smith, I. and Ramdas, A. (2024). Estimating means of bounded random variables by betting.
*Journal of the Royal Statistical Society, Series B* 86(1), 1-27. doi:10.1093/jrsssb/qkad009.

Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gatestats.sequential.design import SEQUENTIAL_METHODS, SequentialMethod
from gatestats.vocabulary import check_open_unit

__all__ = [
    "TRUNCATION",
    "Alternative",
    "ConfidenceSequence",
    "as_numbers",
    "check_method",
    "confidence_sequence",
    "expected_cases_to_cross",
    "log_eprocess",
    "lower_bound",
]

Alternative: TypeAlias = Literal["two-sided", "greater", "less"]

#: The truncation :math:`c` of the empirical-Bernstein rate and of the betting fraction (times 1/m).
TRUNCATION = 0.5
_BISECTIONS = 40
#: Elements of one block of the betting bisection (checkpoints x observations).
_BLOCK = 2_000_000
_Array: TypeAlias = NDArray[np.float64]


def check_method(method: object) -> SequentialMethod:
    """``method`` if it is a :data:`~gatestats.sequential.design.SequentialMethod`.

    Parameters
    ----------
    method
        The name to check.

    Returns
    -------
    SequentialMethod
        ``method`` itself.

    Raises
    ------
    ValueError
        ``method`` is not one of ``betting``, ``empirical_bernstein``, ``hoeffding``.
    """
    for known in SEQUENTIAL_METHODS:
        if method == known and isinstance(method, str):
            return known
    msg = f"method: expected one of {', '.join(repr(m) for m in SEQUENTIAL_METHODS)} (got {method!r})"
    raise ValueError(msg)


def as_numbers(name: str, values: ArrayLike) -> _Array:
    """``values`` as a float array, or a :class:`ValueError` naming ``name``.

    Parameters
    ----------
    name
        The argument's name, for the message.
    values
        The values to convert.

    Returns
    -------
    numpy.ndarray
        The values as float64.

    Raises
    ------
    ValueError
        A value is not a number (a string, ``None``, a ragged list).
    """
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        shown = repr(values) if len(repr(values)) <= 80 else repr(values)[:77] + "..."
        msg = f"{name}: expected a sequence of numbers (got {shown})"
        raise ValueError(msg) from None


def _plug_in(x: _Array) -> tuple[_Array, _Array, _Array]:
    """``(t, mu_hat_{t-1}, sigma2_hat_{t-1})`` along the last axis (predictable: known before X_t)."""
    n = x.shape[-1]
    t = np.arange(1, n + 1, dtype=np.float64)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    sigma2 = (0.25 + np.cumsum((x - mu) ** 2, axis=-1)) / (t + 1)
    pad = [(0, 0)] * (x.ndim - 1) + [(1, 0)]
    mu_prev = np.pad(mu[..., :-1], pad, constant_values=0.5)
    sigma2_prev = np.pad(sigma2[..., :-1], pad, constant_values=0.25)
    return t, mu_prev, sigma2_prev


def _eb_rate(t: _Array, sigma2_prev: _Array, alpha: float) -> _Array:
    """The untruncated PrPl-EB rate :math:`\\dot\\lambda_t` (Waudby-Smith & Ramdas 2024, eq. (26))."""
    return np.sqrt(2 * math.log(1 / alpha) / (sigma2_prev * t * np.log1p(t)))


def _log_increments(x: _Array, m: _Array | float, alpha: float, method: SequentialMethod) -> _Array:
    """The log of each factor of the e-process against :math:`\\mu \\le m` (``m`` broadcasts)."""
    t, mu_prev, sigma2_prev = _plug_in(x)
    if method == "hoeffding":
        lam = np.minimum(np.sqrt(8 * math.log(1 / alpha) / (t * np.log1p(t))), 1.0)
        return np.asarray(lam * (x - m) - lam**2 / 8)
    rate = _eb_rate(t, sigma2_prev, alpha)
    if method == "empirical_bernstein":
        lam = np.minimum(rate, TRUNCATION)
        v = 4 * (x - mu_prev) ** 2
        return np.asarray(lam * (x - m) - v * (-np.log1p(-lam) - lam) / 4)
    m_arr = np.asarray(m, dtype=np.float64)
    with np.errstate(divide="ignore"):
        cap = np.where(m_arr > 0, TRUNCATION / np.maximum(m_arr, 1e-300), np.inf)
    lam = np.minimum(rate, cap)
    return np.asarray(np.log1p(lam * (x - m)))


def log_eprocess(x: ArrayLike, m: ArrayLike | float, *, alpha: float, method: SequentialMethod) -> _Array:
    """The logarithm of the e-process against :math:`H_0: \\mu \\le m`, after each observation.

    Parameters
    ----------
    x
        Observations in [0, 1], in arrival order along the last axis (several independent
        sequences may be stacked along the leading axes).
    m
        The null boundary in [0, 1]: a number, or an array that broadcasts against ``x`` (e.g.
        shape ``(k, 1)`` for ``k`` boundaries at once).
    alpha
        The level the bets are tuned for (the rates use :math:`\\log(1/\\alpha)`); the e-process is
        valid whatever it is.
    method
        ``"betting"``, ``"empirical_bernstein"`` or ``"hoeffding"`` (see the module docstring).

    Returns
    -------
    numpy.ndarray
        :math:`\\log K_t(m)` for :math:`t = 1, \\dots, n` (same shape as the broadcast of ``x``).

    Examples
    --------
    >>> import numpy as np
    >>> e = log_eprocess(np.ones(30), 0.5, alpha=0.05, method="betting")
    >>> bool(e[-1] > np.log(20)), bool(np.all(np.diff(e) > 0))
    (True, True)
    """
    bound = np.asarray(m, dtype=np.float64)
    return np.cumsum(_log_increments(np.asarray(x, dtype=np.float64), bound, alpha, check_method(method)), axis=-1)


def lower_bound(x: ArrayLike, at: ArrayLike, *, alpha: float, method: SequentialMethod) -> _Array:
    """The one-sided :math:`(1-\\alpha)` lower confidence bound for :math:`\\mu` after ``at + 1`` values.

    .. math:: L_t = \\inf\\{m \\in [0, 1] : K_t(m) < 1/\\alpha\\}

    Closed form for ``hoeffding`` and ``empirical_bernstein``
    (:math:`L_t = (\\sum \\lambda_i X_i - \\log(1/\\alpha) - \\sum \\psi_i) / \\sum \\lambda_i`, clipped
    to [0, 1]); bisection to :math:`2^{-40}` for ``betting``, whose :math:`K_t(m)` is nonincreasing
    in :math:`m` (each factor is), returning the end of the bracket inside the set (conservative).
    These are the bounds at each time, not yet intersected over time.

    Parameters
    ----------
    x
        Observations in [0, 1], in arrival order (one-dimensional).
    at
        0-based indices of the times at which to give the bound.
    alpha
        The error level of the one-sided bound.
    method
        ``"betting"``, ``"empirical_bernstein"`` or ``"hoeffding"``.

    Returns
    -------
    numpy.ndarray
        The bound at each index of ``at``.
    """
    method = check_method(method)
    xs = np.asarray(x, dtype=np.float64)
    idx = np.asarray(at, dtype=np.intp)
    if idx.size == 0:
        return np.zeros(0)
    if method != "betting":
        zero = np.cumsum(_log_increments(xs, 0.0, alpha, method))[idx]
        one = np.cumsum(_log_increments(xs, 1.0, alpha, method))[idx]
        slope = zero - one  # log K is linear in m with slope -sum(lambda)
        bound = (zero - math.log(1 / alpha)) / slope
        return np.asarray(np.clip(bound, 0.0, 1.0))
    return _bisect(xs, idx, alpha)


def _bisect(x: _Array, idx: NDArray[np.intp], alpha: float) -> _Array:
    """Bisection for the betting lower bound at every index of ``idx``, in blocks of checkpoints.

    Each block evaluates :math:`\\log K_t(m)` only over the prefix its last index needs, so the cost
    is about ``_BISECTIONS`` times the sum of the indices.
    """
    t, _, sigma2_prev = _plug_in(x)
    rate = _eb_rate(t, sigma2_prev, alpha)
    out = np.empty(idx.size)
    order = np.argsort(idx, kind="stable")
    step = max(1, _BLOCK // (int(idx.max()) + 1))
    for start in range(0, idx.size, step):
        block = order[start : start + step]
        out[block] = _bisect_block(x, rate, idx[block], alpha)
    return out


def _bisect_block(x: _Array, rate: _Array, idx: NDArray[np.intp], alpha: float) -> _Array:
    target = math.log(1 / alpha)
    n = int(idx.max()) + 1
    xs, lam_dot = x[:n], rate[:n]
    rows = np.arange(idx.size)

    def log_k(m: _Array) -> _Array:
        cap = np.where(m > 0, TRUNCATION / np.maximum(m, 1e-300), np.inf)[:, None]
        terms = np.log1p(np.minimum(lam_dot, cap) * (xs - m[:, None]))
        return np.asarray(np.cumsum(terms, axis=-1)[rows, idx])

    below = np.zeros(idx.size)
    above = np.ones(idx.size)
    inside = log_k(below) < target
    for _ in range(_BISECTIONS):
        mid = (below + above) / 2
        rejected = log_k(mid) >= target
        below = np.where(rejected, mid, below)
        above = np.where(rejected, above, mid)
    return np.asarray(np.where(inside, 0.0, above))


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfidenceSequence:
    """A confidence sequence for the mean: the bounds after each observation.

    ``lower[t-1]`` and ``upper[t-1]`` bound the mean after ``t`` observations; with
    ``running_intersection`` they are the running maximum and minimum (still time-uniformly valid).
    """

    method: SequentialMethod
    alpha: float
    alternative: Alternative
    running_intersection: bool
    lower: _Array
    upper: _Array


def _check_unit(x: ArrayLike) -> _Array:
    xs = as_numbers("x", x)
    if xs.ndim != 1:
        msg = f"x: expected a one-dimensional sequence (got shape {xs.shape})"
        raise ValueError(msg)
    bad = np.flatnonzero(~np.isfinite(xs) | (xs < 0) | (xs > 1))
    if bad.size:
        msg = f"x[{int(bad[0])}]: expected a finite number in [0, 1] (got {float(xs[bad[0]])!r})"
        raise ValueError(msg)
    return xs


def confidence_sequence(
    x: ArrayLike,
    *,
    alpha: float = 0.05,
    method: SequentialMethod = "betting",
    alternative: Alternative = "two-sided",
    running_intersection: bool = True,
) -> ConfidenceSequence:
    """A time-uniform confidence sequence for the mean of values in [0, 1].

    Parameters
    ----------
    x
        Observations in [0, 1], in arrival order.
    alpha
        :math:`P(\\exists t: \\mu \\notin [L_t, U_t]) \\le \\alpha`; two-sided spends
        :math:`\\alpha/2` on each side (the paper's PrPl-H, PrPl-EB and hedged sequences).
    method
        ``"betting"`` (default), ``"empirical_bernstein"`` or ``"hoeffding"``.
    alternative
        ``"two-sided"``, ``"greater"`` (a lower bound; upper is 1) or ``"less"`` (an upper bound;
        lower is 0).
    running_intersection
        Intersect the sets over time (running max of the lower, min of the upper bound).

    Returns
    -------
    ConfidenceSequence
        The bounds after each observation.

    Raises
    ------
    ValueError
        An observation is NaN or outside [0, 1]; ``alpha`` is outside (0, 1); an option is unknown.

    Examples
    --------
    >>> cs = confidence_sequence([1, 0] * 50, alpha=0.05, method="empirical_bernstein")
    >>> bool(cs.lower[-1] < 0.5 < cs.upper[-1]), bool(cs.upper[-1] - cs.lower[-1] < cs.upper[9] - cs.lower[9])
    (True, True)
    """
    method = check_method(method)
    xs = _check_unit(x)
    alpha = check_open_unit(alpha, "alpha")
    if alternative not in ("two-sided", "greater", "less"):
        msg = f"alternative: expected 'two-sided', 'greater' or 'less' (got {alternative!r})"
        raise ValueError(msg)
    side = alpha / 2 if alternative == "two-sided" else alpha
    at = np.arange(xs.size)
    lower = lower_bound(xs, at, alpha=side, method=method) if alternative != "less" else np.zeros(xs.size)
    upper = 1 - lower_bound(1 - xs, at, alpha=side, method=method) if alternative != "greater" else np.ones(xs.size)
    if running_intersection:
        lower, upper = np.maximum.accumulate(lower), np.minimum.accumulate(upper)
    return ConfidenceSequence(
        method=method,
        alpha=alpha,
        alternative=alternative,
        running_intersection=running_intersection,
        lower=lower,
        upper=upper,
    )


def expected_cases_to_cross(
    y: ArrayLike, m: float, *, alpha_pass: float, alpha_fail: float, method: SequentialMethod, horizon: int = 1_000_000
) -> int | None:
    """An estimate of the further observations needed for the e-process to cross.

    The side is the one the estimate points to (pass when :math:`\\hat\\mu > m`). From the current
    :math:`\\log K_n`, the future increments are replaced by their approximate expectation were the
    observed mean :math:`\\hat\\mu` and variance :math:`\\hat\\sigma^2` to hold,
    :math:`\\lambda_t \\delta - \\lambda_t^2 / 8` (Hoeffding),
    :math:`\\lambda_t \\delta - \\hat\\sigma^2 (-\\log(1-\\lambda_t) - \\lambda_t)` (empirical Bernstein),
    :math:`\\lambda_t \\delta - \\lambda_t^2 (\\hat\\sigma^2 + \\delta^2) / 2` (betting), with
    :math:`\\delta = |\\hat\\mu - m|` and the method's own rates; the answer is the first :math:`t`
    at which the sum reaches :math:`\\log(1/\\alpha)`. It is a planning figure, not a guarantee.

    Parameters
    ----------
    y
        The observations so far, in [0, 1] (rescaled as for :func:`log_eprocess`).
    m
        The boundary in [0, 1].
    alpha_pass
        The pass side's level.
    alpha_fail
        The fail side's level.
    method
        ``"betting"``, ``"empirical_bernstein"`` or ``"hoeffding"``.
    horizon
        Give up (``None``) beyond this many further observations.

    Returns
    -------
    int | None
        Further observations needed (``>= 1``), or ``None`` with no data, an estimate exactly at
        the boundary, or no crossing within ``horizon``.
    """
    xs = np.asarray(y, dtype=np.float64)
    if xs.size == 0 or float(np.mean(xs)) == m:
        return None
    up = float(np.mean(xs)) > m
    data, bound, alpha = (xs, m, alpha_pass) if up else (1 - xs, 1 - m, alpha_fail)
    start = float(log_eprocess(data, bound, alpha=alpha, method=method)[-1])
    mean, var = float(np.mean(data)), float(np.var(data))
    t = np.arange(xs.size + 1, xs.size + horizon + 1, dtype=np.float64)
    delta = mean - bound
    sigma2 = (0.25 + var * xs.size) / (xs.size + 1)
    if method == "hoeffding":
        lam = np.minimum(np.sqrt(8 * math.log(1 / alpha) / (t * np.log1p(t))), 1.0)
        step = lam * delta - lam**2 / 8
    elif method == "empirical_bernstein":
        lam = np.minimum(_eb_rate(t, np.full_like(t, sigma2), alpha), TRUNCATION)
        step = lam * delta - var * (-np.log1p(-lam) - lam)
    else:
        lam = np.minimum(_eb_rate(t, np.full_like(t, sigma2), alpha), TRUNCATION / bound if bound > 0 else np.inf)
        step = lam * delta - lam**2 * (var + delta**2) / 2
    crossed = np.flatnonzero(start + np.cumsum(step) >= math.log(1 / alpha))
    return int(crossed[0]) + 1 if crossed.size else None
