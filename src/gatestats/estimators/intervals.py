r"""Confidence intervals for a mean over cases, with the case (or case group) as the unit.

Repeated trials of one case are not new cases: every method works on the case-level estimates
:math:`s_1, \dots, s_N` (per-case pass@k or pass^k, each in [0, 1]) and, when cases carry a group,
on sums over groups. :math:`U` is the number of independent units: cases, or groups.

Methods
-------
``wilson``
    The continuity-corrected Wilson score interval (Newcombe 1998, method 4; R's
    ``prop.test(x, n)``) at an effective sample size :math:`n^*`, the Wilson analogue of Korn &
    Graubard's (1998) interval for survey proportions:

    .. math::

        \mathrm{deff} = \frac{\mathrm{SE}^2}{\bar s (1 - \bar s) / (N - 1)}, \quad
        n_\text{eff} = \begin{cases} N / \mathrm{deff} & U \ge U_d \\
                                     \min(N / \mathrm{deff},\ U_w) & U < U_d \end{cases}, \quad
        n^* = \min(n_\text{eff}, n_\text{max}) \left(\frac{z_{1-\alpha/2}}{t_{U-1,\,1-\alpha/2}}\right)^2

    with SE from Miller (2024) eq. 1 (eq. 4 with groups), :math:`n_\text{max}` =
    ``max_effective_n``, :math:`U_d` = :data:`DESIGN_EFFECT_FROM_UNITS` and :math:`U_w = (\sum_g
    m_g)^2 / \sum_g m_g^2` the units weighted by their case counts (:math:`N` without groups). The
    last factor is Korn & Graubard's degrees-of-freedom adjustment. For 0/1 case values without
    groups :math:`n_\text{eff} = N`: the continuity-corrected Wilson interval for the proportion
    of passing cases, at :math:`N (z/t_{N-1})^2`. :math:`U_w` is the Bhatia-Davis bound: a unit
    mean in [0, 1] has variance at most :math:`\mu(1-\mu)`. An estimated design effect below it
    (several trials per case, little spread) is trusted only from :math:`U_d` units on: when a few
    hard (or easy) units carry the spread, smaller samples often miss them and would claim
    precision the data do not hold. Case values that do not vary give :math:`n^* = \min(U_w,
    n_\text{max})` (no variance estimated, no df factor): the bound for "0 of U", never a
    zero-width interval.
``bootstrap``
    Nonparametric bootstrap over cases (groups, when cases carry one; each resample then takes the
    ratio of summed values to summed case counts), bias-corrected and accelerated (BCa; Efron 1987;
    Efron & Tibshirani 1993, ch. 14): jackknife acceleration over the same units, resamples equal
    to the estimate counted half below it (case values are discrete). ``n_resamples`` resamples
    from a seeded ``numpy.random.Generator``, drawn as multinomial counts over the distinct (unit
    sum, unit size) pairs: the same distribution as drawing units.
``clt``
    :math:`\bar s \pm z_{1-\alpha/2}\,\mathrm{SE}`, SE of Miller (2024) eq. 1, or eq. 4 with groups:
    :math:`\mathrm{SE}^2_{cl} = \mathrm{SE}^2 + \frac{1}{N^2}\sum_g \sum_{i \ne j \in g}
    (s_i - \bar s)(s_j - \bar s)`.
``auto`` (default)
    ``wilson`` below :data:`CLT_FROM_CASES` units or when all case values are equal, else ``clt``.

Every threshold comes from the coverage simulation in ``docs/coverage.md``
(``benchmarks/coverage_simulation.py``: nominal 95%, 10 to 1000 cases and 2000 to 10000 for the
CLT, true values 0.02 to 0.98, pass^k and pass@k, homogeneous, heterogeneous and clustered cases).
A method is *not offered* where it fell under 93% there: ``bootstrap`` below
:data:`MIN_CASES_BOOTSTRAP` units, ``clt`` below :data:`MIN_CASES_CLT` (skewed case values need
that many units before an interval built on their observed spread covers). Such a request returns
``status="insufficient_evidence"`` with the reason, as do fewer than two units and a ``bootstrap``
or ``clt`` request on values that do not vary. ``wilson`` and ``auto`` are offered from two units
and covered at least 93% in every simulated cell. No interval ever has zero width.

References
----------
Bhatia, R. & Davis, C. (2000). A better bound on the variance. Amer. Math. Monthly 107(4), 353-357.
Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171-185.
Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall, ch. 14.
Kish, L. (1965). Survey Sampling. Wiley (design effect, effective sample size).
Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected
    number of positive counts estimated from survey data. Survey Methodology 24(2), 193-201.
Miller, E. (2024). Adding Error Bars to Evals: A Statistical Approach to Language Model
    Evaluations. arXiv:2411.00640, eqs. 1 and 4.
Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion: comparison of
    seven methods. Statistics in Medicine 17(8), 857-872.
Vollset, S. E. (1993). Confidence intervals for a binomial proportion. Statistics in Medicine
    12(9), 809-824 (recommends the continuity-corrected score interval).
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
    JASA 22(158), 209-212.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from gatestats.estimators.distinct import distinct_pairs
from gatestats.estimators.interval_rules import (
    _RESOLVED,
    CLT_FROM_CASES,
    DESIGN_EFFECT_FROM_UNITS,
    MIN_CASES_BOOTSTRAP,
    MIN_CASES_CLT,
    MIN_UNITS,
    OK,
    REFUSED_CONSTANT,
    REFUSED_DEGENERATE,
    REFUSED_FEW_UNITS,
    REFUSED_NOT_OFFERED,
    CaseMeanInterval,
    _check_options,
    _reason,
    _wilson_root,
    _WilsonAtLevels,
)
from gatestats.estimators.quantiles import two_sided_t, two_sided_z
from gatestats.vocabulary import (
    IntervalMethod,
    check_confidence_level,
    check_seed,
)

__all__ = [
    "CLT_FROM_CASES",
    "DESIGN_EFFECT_FROM_UNITS",
    "MIN_CASES_BOOTSTRAP",
    "MIN_CASES_CLT",
    "CaseMeanInterval",
    "case_mean_interval",
    "case_mean_interval_at",
    "clustered_standard_error",
    "wilson_interval",
]

_BOOTSTRAP_BLOCK = 4_000_000  # resample x sample x support cells per block (bounds memory)
_TIE_TOLERANCE = 1e-12


def _special() -> ModuleType:
    """``scipy.special``, imported on first use: only the bootstrap needs it (see :mod:`.quantiles`)."""
    return importlib.import_module("scipy.special")  # ~0.13-0.3 s of import that most analyses never use


def _wilson_bounds(
    p_hat: npt.NDArray[np.float64],
    n: npt.NDArray[np.float64],
    z: float,
    *,
    continuity_correction: bool,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Vectorised Wilson bounds; with the correction, the limits of Newcombe's method 4.

    Newcombe's closed form equals the Wilson lower (upper) root evaluated at
    :math:`\\hat p - 1/(2n)` (:math:`\\hat p + 1/(2n)`), 0 (1) when that shifted value leaves
    (0, 1): this is how R's ``prop.test`` computes it.
    """
    shift = 0.5 / n if continuity_correction else np.zeros_like(n)
    z2n = z * z / n

    def root(p: npt.NDArray[np.float64], sign: float) -> npt.NDArray[np.float64]:
        return _wilson_root(np.clip(p, 0.0, 1.0), n, z, z2n, sign, np.sqrt)

    p_low, p_high = p_hat - shift, p_hat + shift
    low = np.where(p_low <= 0.0, 0.0, np.maximum(root(p_low, -1.0), 0.0))
    high = np.where(p_high >= 1.0, 1.0, np.minimum(root(p_high, 1.0), 1.0))
    return low, high


def wilson_interval(
    p_hat: float,
    n: float,
    *,
    confidence_level: float = 0.95,
    continuity_correction: bool = False,
) -> tuple[float, float]:
    """Wilson score interval for a proportion ``p_hat`` observed on ``n`` (possibly effective) trials.

    .. math::

        \\frac{\\hat p + \\frac{z^2}{2n} \\pm z\\sqrt{\\frac{\\hat p(1-\\hat p)}{n} + \\frac{z^2}{4n^2}}}
        {1 + \\frac{z^2}{n}}

    With ``continuity_correction=True`` the lower (upper) limit is this lower (upper) root at
    :math:`\\hat p - 1/(2n)` (:math:`\\hat p + 1/(2n)`), and 0 (1) when that leaves (0, 1):
    Newcombe's (1998) method 4, the interval of R's ``prop.test(x, n)``.

    Parameters
    ----------
    p_hat
        Observed proportion, in [0, 1].
    n
        Number of (effective) trials, positive; need not be an integer.
    confidence_level
        In (0, 1).
    continuity_correction
        Apply Yates' continuity correction (Newcombe 1998, method 4).

    Returns
    -------
    tuple of float
        ``(low, high)``, within [0, 1].

    Raises
    ------
    TypeError
        ``confidence_level`` is not a number.
    ValueError
        ``p_hat`` outside [0, 1], ``n`` not positive and finite, or ``confidence_level`` outside (0, 1).

    References
    ----------
    Wilson, E. B. (1927). JASA 22(158), 209-212.
    Newcombe, R. G. (1998). Statistics in Medicine 17(8), 857-872, methods 3 and 4.

    Examples
    --------
    >>> [round(x, 4) for x in wilson_interval(0.42, 50)]
    [0.2938, 0.5577]
    >>> [round(x, 4) for x in wilson_interval(15 / 148, 148, continuity_correction=True)]
    [0.0598, 0.1644]
    """
    if not 0.0 <= p_hat <= 1.0:
        msg = f"p_hat must lie in [0, 1] (got {p_hat})"
        raise ValueError(msg)
    if not 0 < n < math.inf:
        msg = f"n must be positive and finite (got {n})"
        raise ValueError(msg)
    check_confidence_level(confidence_level)
    low, high = _wilson_bounds(
        np.array([p_hat], dtype=np.float64),
        np.array([n], dtype=np.float64),
        two_sided_z(confidence_level),
        continuity_correction=continuity_correction,
    )
    return float(low[0]), float(high[0])


def clustered_standard_error(values: npt.ArrayLike, groups: npt.ArrayLike | None = None) -> float:
    """Standard error of the mean over cases: Miller (2024) eq. 1, or eq. 4 with ``groups``.

    .. math::

        \\mathrm{SE}^2 = \\frac{1}{N(N-1)}\\sum_i (s_i - \\bar s)^2 + \\frac{1}{N^2}
        \\sum_g \\sum_{i \\ne j \\in g} (s_i - \\bar s)(s_j - \\bar s)

    (the second term only with ``groups``).

    Parameters
    ----------
    values
        One value per case.
    groups
        Optional group label per case.

    Returns
    -------
    float
        The standard error.

    Raises
    ------
    ValueError
        Fewer than 2 cases.

    Examples
    --------
    >>> round(clustered_standard_error([0, 1, 1, 0]), 6)
    0.288675
    >>> round(clustered_standard_error([0, 1, 1, 0], ["a", "a", "b", "b"]), 6)
    0.144338
    """
    s = np.asarray(values, dtype=np.float64)
    n = s.size
    if n < 2:
        msg = f"a standard error needs at least 2 cases (got {n})"
        raise ValueError(msg)
    inverse = None if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1]
    return float(_standard_errors(s[None, :], inverse)[0])


def _standard_errors(values: npt.NDArray[np.float64], inverse: npt.NDArray[np.intp] | None) -> npt.NDArray[np.float64]:
    """Row-wise Miller (2024) eq. 1 / eq. 4 standard errors of a (samples, cases) array."""
    n = values.shape[1]
    d = values - values.mean(axis=1, keepdims=True)
    ss = np.einsum("ij,ij->i", d, d)
    var = ss / (n - 1) / n
    if inverse is not None:
        group_sums = _unit_sums(d, inverse)
        var = var + (np.einsum("ij,ij->i", group_sums, group_sums) - ss) / (n * n)
    se: npt.NDArray[np.float64] = np.sqrt(np.maximum(var, 0.0))
    return se


def _unit_sums(values: npt.NDArray[np.float64], inverse: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
    """Row-wise sums of a (samples, cases) array over the groups coded by ``inverse``."""
    units = int(inverse.max()) + 1
    rows = values.shape[0]
    flat = (np.arange(rows)[:, None] * units + inverse[None, :]).ravel()
    sums = np.bincount(flat, weights=values.ravel(), minlength=rows * units)
    return np.asarray(sums, dtype=np.float64).reshape(rows, units)


def _quantile_columns(sorted_draws: npt.NDArray[np.float64], q: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Column ``j``'s ``q[j]`` quantile of column-sorted draws (numpy's default 'linear' rule)."""
    b = sorted_draws.shape[0]
    position = np.clip(q, 0.0, 1.0) * (b - 1)
    lower = np.floor(position).astype(np.intp)
    upper = np.minimum(lower + 1, b - 1)
    frac = position - lower
    cols = np.arange(sorted_draws.shape[1])
    quantiles: npt.NDArray[np.float64] = sorted_draws[lower, cols] * (1 - frac) + sorted_draws[upper, cols] * frac
    return quantiles


def _jackknife_acceleration(
    counts: npt.NDArray[np.intp],
    sup_sum: npt.NDArray[np.float64],
    sup_size: npt.NDArray[np.float64],
    *,
    units: int,
    total_sum: npt.NDArray[np.float64],
    total_size: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """BCa acceleration per sample from the jackknife over units (Efron & Tibshirani 1993, eq. 14.15).

    ``counts`` (samples x support) says how many units of each sample hold each distinct
    (sum, size) pair of the support; leaving out one unit is evaluated once per pair.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        leave_out = (total_sum[:, None] - sup_sum[None, :]) / (total_size[:, None] - sup_size[None, :])
    leave_out = np.where(counts > 0, leave_out, 0.0)
    jack_mean = (counts * leave_out).sum(axis=1) / units
    u = np.where(counts > 0, jack_mean[:, None] - leave_out, 0.0)
    u2 = (counts * u**2).sum(axis=1)
    u3 = (counts * u**3).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        acceleration: npt.NDArray[np.float64] = np.where(u2 > 0, u3 / (6 * u2**1.5), 0.0)
    return acceleration


def _bootstrap_bounds(
    unit_sums: npt.NDArray[np.float64],
    unit_sizes: npt.NDArray[np.float64],
    *,
    n_resamples: int,
    rng: np.random.Generator,
    confidence_level: float,
    kind: Literal["bca", "percentile"] = "bca",
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """BCa (or percentile) bootstrap bounds and bootstrap SE of the ratio of unit sums to sizes.

    ``unit_sums`` is (samples, units); ``unit_sizes`` is (units,), shared by every sample. Each
    sample's resamples are multinomial counts over its distinct (sum, size) pairs.
    """
    rows, units = unit_sums.shape
    sizes = np.broadcast_to(unit_sizes, unit_sums.shape)
    pairs = np.stack([unit_sums.ravel(), sizes.ravel()], axis=1)
    support, code = distinct_pairs(pairs)
    code = code.reshape(rows, units)
    k = support.shape[0]
    counts = np.bincount((np.arange(rows)[:, None] * k + code).ravel(), minlength=rows * k).reshape(rows, k)
    sup_sum, sup_size = support[:, 0], support[:, 1]
    total_sum = counts @ sup_sum
    total_size = counts @ sup_size
    estimate = total_sum / total_size
    acceleration = _jackknife_acceleration(
        counts, sup_sum, sup_size, units=units, total_sum=total_sum, total_size=total_size
    )
    alpha = 1 - confidence_level
    special = _special()
    z_tails = np.array([special.ndtri(alpha / 2), special.ndtri(1 - alpha / 2)])
    low, high, boot_se = np.empty(rows), np.empty(rows), np.empty(rows)
    # Each sample's own distinct pairs, most frequent first (numpy's multinomial stops once all
    # units are allocated), padded with zero-probability pairs to a common width.
    order = np.argsort(-counts, axis=1, kind="stable")
    width = int((counts > 0).sum(axis=1).max())
    order = order[:, :width]
    own_counts = np.take_along_axis(counts, order, axis=1)
    own_sum, own_size = sup_sum[order], sup_size[order]
    pvals = own_counts / units
    block = max(1, _BOOTSTRAP_BLOCK // (n_resamples * width))
    for start in range(0, rows, block):
        sl = slice(start, min(rows, start + block))
        draws = rng.multinomial(units, pvals[sl], size=(n_resamples, sl.stop - sl.start)).astype(np.float64)
        means = np.einsum("brk,rk->br", draws, own_sum[sl]) / np.einsum("brk,rk->br", draws, own_size[sl])
        boot_se[sl] = means.std(axis=0, ddof=1)
        est = estimate[sl]
        if kind == "percentile":
            q = np.broadcast_to(np.array([alpha / 2, 1 - alpha / 2])[:, None], (2, means.shape[1]))
        else:
            tol = _TIE_TOLERANCE * np.maximum(1.0, np.abs(est))
            below = (means < est - tol).sum(axis=0)
            ties = (np.abs(means - est) <= tol).sum(axis=0)
            frac = (below + 0.5 * ties) / n_resamples
            z0 = special.ndtri(np.clip(frac, 0.5 / n_resamples, 1 - 0.5 / n_resamples))
            w = z0[None, :] + z_tails[:, None]
            denom = 1 - acceleration[sl][None, :] * w
            with np.errstate(divide="ignore", invalid="ignore"):
                adjusted = np.where(denom > 0, z0[None, :] + w / denom, np.sign(w) * np.inf)
            q = special.ndtr(adjusted)
        means.sort(axis=0)
        low[sl] = _quantile_columns(means, q[0])
        high[sl] = _quantile_columns(means, q[1])
    return low, high, boot_se


@dataclass(frozen=True, slots=True, kw_only=True)
class _IntervalBatch:
    """Intervals for many samples of one shape: the engine of :func:`case_mean_interval` and of the
    coverage simulation. ``code`` is :data:`OK` or a refusal code, ``method`` indexes ``_RESOLVED``
    (-1 when refused); refused entries are NaN (this type never reaches users)."""

    estimate: npt.NDArray[np.float64]
    se: npt.NDArray[np.float64]
    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    effective_n: npt.NDArray[np.float64]
    boot_se: npt.NDArray[np.float64]
    code: npt.NDArray[np.intp]
    method: npt.NDArray[np.intp]
    constant: npt.NDArray[np.bool_]
    n_units: int


def _choose_methods(
    method: IntervalMethod, *, rows: int, n_units: int, constant: npt.NDArray[np.bool_], offer_everywhere: bool
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Per sample, the method (index into ``_RESOLVED``) and :data:`OK` or the refusal code."""
    code = np.full(rows, OK, dtype=np.intp)
    chosen = np.full(rows, -1, dtype=np.intp)
    if method == "auto":
        chosen[:] = 2 if n_units >= CLT_FROM_CASES else 0
        chosen[constant] = 0
        return chosen, code
    chosen[:] = _RESOLVED.index(method)
    if method != "wilson":
        minimum = MIN_CASES_CLT if method == "clt" else MIN_CASES_BOOTSTRAP
        if n_units < minimum and not offer_everywhere:
            code[:] = REFUSED_NOT_OFFERED
        code[(code == OK) & constant] = REFUSED_CONSTANT
    return chosen, code


def _wilson_batch(
    p: npt.NDArray[np.float64],
    s: npt.NDArray[np.float64],
    constant: npt.NDArray[np.bool_],
    inverse: npt.NDArray[np.intp] | None,
    *,
    n_cases: int,
    n_units: int,
    confidence_level: float,
    max_effective_n: float | npt.NDArray[np.float64] | None,
    design_effect_from_units: int | None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Effective sample size and Wilson bounds of samples with means ``p`` and standard errors ``s``.

    ``max_effective_n``: one cap for every sample, or one per sample (an array as long as ``p``).
    """
    z = two_sided_z(confidence_level)
    # Only a sample with an estimated variance takes the degrees-of-freedom factor.
    factor = 1.0 if constant.all() else (z / two_sided_t(n_units - 1, confidence_level)) ** 2
    capped = _capped_kish(
        p,
        s,
        constant,
        inverse,
        n_cases=n_cases,
        n_units=n_units,
        max_effective_n=max_effective_n,
        design_effect_from_units=design_effect_from_units,
    )
    # The degrees-of-freedom factor accounts for an estimated variance; a constant sample
    # estimates none (it uses the Bhatia-Davis bound), so it keeps n* = min(U, cap).
    eff_n = capped * np.where(constant, 1.0, factor)
    low, high = _wilson_bounds(p, eff_n, z, continuity_correction=True)
    return eff_n, low, high


def _capped_kish(
    p: npt.NDArray[np.float64],
    s: npt.NDArray[np.float64],
    constant: npt.NDArray[np.bool_],
    inverse: npt.NDArray[np.intp] | None,
    *,
    n_cases: int,
    n_units: int,
    max_effective_n: float | npt.NDArray[np.float64] | None,
    design_effect_from_units: int | None,
) -> npt.NDArray[np.float64]:
    """Each sample's effective size before the degrees-of-freedom factor (:func:`_wilson_batch`): no level enters."""
    sizes = np.ones(n_cases) if inverse is None else np.bincount(inverse, minlength=n_units).astype(np.float64)
    # Bhatia-Davis: a unit mean in [0, 1] has variance at most mu (1 - mu), so the (size-weighted)
    # mean of the units is at least as precise as a proportion over this many units.
    units_bound = float(sizes.sum() ** 2 / (sizes @ sizes))
    with np.errstate(divide="ignore", invalid="ignore"):
        kish = np.where(constant, units_bound, n_cases * p * (1 - p) / ((n_cases - 1) * s * s))
    trusted = DESIGN_EFFECT_FROM_UNITS if design_effect_from_units is None else design_effect_from_units
    if n_units < trusted:
        kish = np.minimum(kish, units_bound)
    cap: float | npt.NDArray[np.float64]
    if max_effective_n is None:
        cap = float(n_cases)
    elif isinstance(max_effective_n, np.ndarray):
        cap = max_effective_n  # one per sample: the same minimum, element by element
    else:
        cap = float(max_effective_n)
    capped: npt.NDArray[np.float64] = np.minimum(kish, cap)
    return capped


def _interval_batch(
    values: npt.NDArray[np.float64],
    inverse: npt.NDArray[np.intp] | None,
    *,
    method: IntervalMethod,
    confidence_level: float,
    n_resamples: int,
    rng: np.random.Generator | int,
    max_effective_n: float | npt.NDArray[np.float64] | None,
    offer_everywhere: bool = False,
    bootstrap_kind: Literal["bca", "percentile"] = "bca",
    design_effect_from_units: int | None = None,
) -> _IntervalBatch:
    """Intervals for each row of ``values`` (samples x cases); ``inverse`` codes the groups.

    ``offer_everywhere`` lifts the minimum-units rules of ``bootstrap`` and ``clt`` (never the
    refusal of constant samples) so that the coverage simulation can show where they fail;
    ``bootstrap_kind="percentile"`` gives the plain percentile interval and
    ``design_effect_from_units`` overrides :data:`DESIGN_EFFECT_FROM_UNITS`, for the same
    comparison. ``rng`` is a generator, or the seed of the one the bootstrap makes when it runs
    (so that the other methods never import ``numpy.random``: issue 28, item 2).
    ``max_effective_n``: the Wilson cap of every row, or one per row (an array of ``rows``).
    """
    rows, n_cases = values.shape
    n_units = (int(inverse.max()) + 1 if n_cases else 0) if inverse is not None else n_cases
    nan = np.full(rows, np.nan)
    estimate = values.mean(axis=1) if n_cases else nan.copy()
    if n_units < MIN_UNITS:
        return _few_units_batch(estimate, nan, n_units=n_units)
    se = _standard_errors(values, inverse)
    constant = np.all(values == values[:, :1], axis=1)
    chosen, code = _choose_methods(
        method, rows=rows, n_units=n_units, constant=constant, offer_everywhere=offer_everywhere
    )
    return _level_batch(
        values,
        inverse,
        estimate,
        se,
        constant,
        chosen,
        code,
        n_units=n_units,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        rng=rng,
        max_effective_n=max_effective_n,
        bootstrap_kind=bootstrap_kind,
        design_effect_from_units=design_effect_from_units,
    )


def _level_batch(
    values: npt.NDArray[np.float64],
    inverse: npt.NDArray[np.intp] | None,
    estimate: npt.NDArray[np.float64],
    se: npt.NDArray[np.float64],
    constant: npt.NDArray[np.bool_],
    chosen: npt.NDArray[np.intp],
    code: npt.NDArray[np.intp],
    *,
    n_units: int,
    confidence_level: float,
    n_resamples: int,
    rng: np.random.Generator | int,
    max_effective_n: float | npt.NDArray[np.float64] | None,
    bootstrap_kind: Literal["bca", "percentile"],
    design_effect_from_units: int | None,
) -> _IntervalBatch:
    """The part of :func:`_interval_batch` that depends on the level: each row's bounds, effective n and bootstrap SE
    by its chosen method; a degenerate bootstrap and every refused row lose their method (``chosen`` and ``code``
    change in place)."""
    n_cases = values.shape[1]
    nan = np.full(len(estimate), np.nan)
    low, high, eff_n, boot_se = nan.copy(), nan.copy(), nan.copy(), nan.copy()

    wil = (code == OK) & (chosen == 0)
    if wil.any():
        eff_n[wil], low[wil], high[wil] = _wilson_batch(
            estimate[wil],
            se[wil],
            constant[wil],
            inverse,
            n_cases=n_cases,
            n_units=n_units,
            confidence_level=confidence_level,
            max_effective_n=max_effective_n[wil] if isinstance(max_effective_n, np.ndarray) else max_effective_n,
            design_effect_from_units=design_effect_from_units,
        )

    clt = (code == OK) & (chosen == 2)
    if clt.any():
        z = two_sided_z(confidence_level)
        low[clt] = np.maximum(0.0, estimate[clt] - z * se[clt])
        high[clt] = np.minimum(1.0, estimate[clt] + z * se[clt])

    boot = (code == OK) & (chosen == 1)
    if boot.any():
        low[boot], high[boot], boot_se[boot] = _unit_bootstrap(
            values[boot],
            inverse,
            n_units=n_units,
            n_resamples=n_resamples,
            rng=np.random.default_rng(rng) if isinstance(rng, int) else rng,
            confidence_level=confidence_level,
            kind=bootstrap_kind,
        )
        code[boot & ~(low < high)] = REFUSED_DEGENERATE

    refused = code != OK
    chosen[refused] = -1
    for array in (low, high, eff_n, boot_se):
        array[refused] = np.nan
    return _IntervalBatch(
        estimate=estimate,
        se=se,
        low=low,
        high=high,
        effective_n=eff_n,
        boot_se=boot_se,
        code=code,
        method=chosen,
        constant=constant,
        n_units=n_units,
    )


def _few_units_batch(
    estimate: npt.NDArray[np.float64], nan: npt.NDArray[np.float64], *, n_units: int
) -> _IntervalBatch:
    """Every row refused for too few units (fewer than :data:`MIN_UNITS`): no interval, only the estimate."""
    rows = len(estimate)
    return _IntervalBatch(
        estimate=estimate,
        se=nan,
        low=nan,
        high=nan,
        effective_n=nan,
        boot_se=nan,
        code=np.full(rows, REFUSED_FEW_UNITS, dtype=np.intp),
        method=np.full(rows, -1, dtype=np.intp),
        constant=np.ones(rows, dtype=np.bool_),
        n_units=n_units,
    )


def _unit_bootstrap(
    values: npt.NDArray[np.float64],
    inverse: npt.NDArray[np.intp] | None,
    *,
    n_units: int,
    n_resamples: int,
    rng: np.random.Generator,
    confidence_level: float,
    kind: Literal["bca", "percentile"],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Bootstrap bounds and SE of each row of ``values``, resampling its units (cases, or the groups of ``inverse``)."""
    if inverse is None:
        sums, sizes = values, np.ones(values.shape[1])
    else:
        sums = _unit_sums(values, inverse)
        sizes = np.bincount(inverse, minlength=n_units).astype(np.float64)
    return _bootstrap_bounds(
        sums, sizes, n_resamples=n_resamples, rng=rng, confidence_level=confidence_level, kind=kind
    )


def case_mean_interval(
    values: npt.ArrayLike,
    *,
    groups: npt.ArrayLike | None = None,
    method: IntervalMethod = "auto",
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = None,
    max_effective_n: float | None = None,
) -> CaseMeanInterval:
    """Mean of case-level values in [0, 1] with an interval that treats the case as the unit.

    Parameters
    ----------
    values
        One value per case (e.g. per-case pass^k); no NaN.
    groups
        Optional group label per case; intervals are then cluster-robust (groups are the unit).
    method
        ``auto``, ``bootstrap``, ``clt`` or ``wilson`` (see the module docstring for the
        formulas and for where each is offered).
    confidence_level
        In (0, 1).
    n_resamples
        Bootstrap resamples (at least 100).
    seed
        Seed of the bootstrap generator, recorded in the result; ``None`` means seed 0 (also
        recorded). Unused by ``wilson`` and ``clt``.
    max_effective_n
        Upper bound of the Wilson effective sample size (e.g. the number of independent
        k-trial blocks, :math:`\\sum_i n_i / k`); defaults to the number of cases.

    Returns
    -------
    CaseMeanInterval
        ``status="ok"`` with ``ci_low < ci_high``, or ``status="insufficient_evidence"`` with the
        reason and no interval.

    Raises
    ------
    TypeError
        ``confidence_level`` is not a number.
    ValueError
        On an unknown method, a confidence level outside (0, 1), fewer than 100 resamples, a
        negative seed, a non-positive ``max_effective_n``, values outside [0, 1] or NaN, or one group label per
        case missing.

    Examples
    --------
    >>> r = case_mean_interval([1.0] * 21 + [0.0] * 29, method="wilson")
    >>> r.method, round(r.estimate, 2), round(r.ci_low, 4), round(r.ci_high, 4)
    ('wilson', 0.42, 0.2817, 0.5712)
    >>> case_mean_interval([0.5], method="clt").status
    'insufficient_evidence'
    """
    _check_options(method, confidence_level, n_resamples, max_effective_n)
    s, inverse = _case_values(values, groups)
    used_seed = 0 if seed is None else check_seed(int(seed))
    batch = _interval_batch(
        s[None, :],
        inverse,
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        rng=used_seed,
        max_effective_n=max_effective_n,
    )
    return _single_result(
        batch,
        s,
        clustered=inverse is not None,
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=used_seed,
    )


def _case_mean_intervals(
    samples: list[npt.NDArray[np.float64]],
    *,
    groups: npt.ArrayLike | None = None,
    method: IntervalMethod = "auto",
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = None,
    max_effective_n: list[float | None] | None = None,
) -> list[CaseMeanInterval]:
    """:func:`case_mean_interval` of several samples of the same cases, in one batch: the same results.

    Result ``i`` equals ``case_mean_interval(samples[i], ..., max_effective_n=max_effective_n[i])``
    field for field: every step but the bootstrap works row by row on a (samples, cases) array; the
    bootstrap (one generator per call) computes each sample on its own. An interval per k and
    metric was most of a small gate's curves (issue 28, item 3).

    Parameters
    ----------
    samples
        The samples, each one value per case (the same number of cases in each).
    groups, method, confidence_level, n_resamples, seed
        As :func:`case_mean_interval`, the same for every sample.
    max_effective_n
        Each sample's cap of the Wilson effective sample size (``None``: none given for any).

    Returns
    -------
    list of CaseMeanInterval
        One per sample, in their order.

    Raises
    ------
    TypeError, ValueError
        As :func:`case_mean_interval` (the first sample that is refused names the error), or
        samples of different lengths, or not one cap per sample.

    Examples
    --------
    >>> rows = [np.array([1.0] * 21 + [0.0] * 29), np.array([1.0] * 30 + [0.0] * 20)]
    >>> found = _case_mean_intervals(rows, method="wilson", max_effective_n=[50.0, 25.0])
    >>> found == [case_mean_interval(r, method="wilson", max_effective_n=m) for r, m in zip(rows, [50.0, 25.0])]
    True
    """
    caps: list[float | None] = [None] * len(samples) if max_effective_n is None else list(max_effective_n)
    if len(caps) != len(samples):
        msg = f"max_effective_n must give one cap per sample (got {len(caps)} for {len(samples)} samples)"
        raise ValueError(msg)
    if not samples:
        return []
    if method == "bootstrap" or any(c is None for c in caps) != all(c is None for c in caps):
        one = {"groups": groups, "method": method, "confidence_level": confidence_level, "seed": seed}
        return [
            case_mean_interval(s, n_resamples=n_resamples, max_effective_n=c, **one)  # type: ignore[arg-type]
            for s, c in zip(samples, caps, strict=True)
        ]
    checked, used_seed = [], 0
    for i, (sample, cap) in enumerate(zip(samples, caps, strict=True)):  # each checked as case_mean_interval would
        _check_options(method, confidence_level, n_resamples, cap)
        checked.append(_case_values(sample, groups))
        used_seed = used_seed if i or seed is None else check_seed(int(seed))
    if len({s.size for s, _ in checked}) > 1:
        msg = f"every sample must hold one value per case of the same cases (got sizes {[s.size for s, _ in checked]})"
        raise ValueError(msg)
    return _stacked(
        checked, caps, method=method, confidence_level=confidence_level, n_resamples=n_resamples, seed=used_seed
    )


def _stacked(
    checked: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.intp] | None]],
    caps: list[float | None],
    *,
    method: IntervalMethod,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> list[CaseMeanInterval]:
    """The intervals of checked samples of the same cases (and group codes), by one :func:`_interval_batch`."""
    inverse = checked[0][1]
    batch = _interval_batch(
        np.stack([s for s, _ in checked]),
        inverse,
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        rng=seed,
        max_effective_n=None if caps[0] is None else np.array(caps, dtype=np.float64),
    )
    return [
        _single_result(
            _row_of(batch, i),
            s,
            clustered=inverse is not None,
            method=method,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=seed,
        )
        for i, (s, _) in enumerate(checked)
    ]


def _row_of(batch: _IntervalBatch, i: int) -> _IntervalBatch:
    """Row ``i`` of ``batch`` as a batch of one sample (what :func:`_single_result` reads)."""
    one = slice(i, i + 1)
    return _IntervalBatch(
        estimate=batch.estimate[one],
        se=batch.se[one],
        low=batch.low[one],
        high=batch.high[one],
        effective_n=batch.effective_n[one],
        boot_se=batch.boot_se[one],
        code=batch.code[one],
        method=batch.method[one],
        constant=batch.constant[one],
        n_units=batch.n_units,
    )


def case_mean_interval_at(
    values: npt.ArrayLike,
    *,
    groups: npt.ArrayLike | None = None,
    method: IntervalMethod = "auto",
    n_resamples: int = 2000,
    seed: int | None = None,
    max_effective_n: float | None = None,
) -> Callable[[float], CaseMeanInterval]:
    """:func:`case_mean_interval` of one sample as a function of the confidence level: the same results, faster.

    What does not depend on the level (checked values, group codes, mean, standard error, method; a Wilson
    sample's effective size before the level's factor) is kept from the first call; each call computes the bounds
    at its level as :func:`case_mean_interval` does (a Wilson sample's in floats: ``_OneWilson``). For a search
    over levels (a p-value by inverting the interval, :func:`gatestats.gate.rules.interval_pvalues`).

    Parameters
    ----------
    values, groups, method, n_resamples, seed, max_effective_n
        As :func:`case_mean_interval` (``values`` and ``groups`` are copied: later changes to the
        arrays given are not seen).

    Returns
    -------
    Callable[[float], CaseMeanInterval]
        ``at(level)`` equal to ``case_mean_interval(values, groups=groups, method=method,
        confidence_level=level, n_resamples=n_resamples, seed=seed, max_effective_n=max_effective_n)``,
        the same errors included.

    Examples
    --------
    >>> values = [1.0] * 21 + [0.0] * 29
    >>> at = case_mean_interval_at(values, method="wilson")
    >>> at(0.9) == case_mean_interval(values, method="wilson", confidence_level=0.9)
    True
    """
    given = np.array(values, dtype=np.float64)
    labels = None if groups is None else np.array(groups)
    kept: list[Any] = []

    def at(confidence_level: float) -> CaseMeanInterval:
        _check_options(method, confidence_level, n_resamples, max_effective_n)
        if not kept:
            s, inverse = _case_values(given, labels)
            used_seed = 0 if seed is None else check_seed(int(seed))
            kept.extend((s, inverse, used_seed, _free_of_levels(s, inverse, method, max_effective_n)))
        s, inverse, used_seed, free = kept
        if isinstance(free, _OneWilson):  # a Wilson interval: only its bounds depend on the level
            return free.at(confidence_level, s.size, method, inverse is not None)
        if isinstance(free, _IntervalBatch):  # too few units: no level enters
            batch = free
        else:
            estimate, se, constant, chosen, code, n_units = free
            batch = _level_batch(
                s[None, :],
                inverse,
                estimate,
                se,
                constant,
                chosen.copy(),
                code.copy(),
                n_units=n_units,
                confidence_level=confidence_level,
                n_resamples=n_resamples,
                rng=used_seed,
                max_effective_n=max_effective_n,
                bootstrap_kind="bca",
                design_effect_from_units=None,
            )
        return _single_result(
            batch,
            s,
            clustered=inverse is not None,
            method=method,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=used_seed,
        )

    return at


@dataclass(frozen=True, slots=True)
class _OneWilson(_WilsonAtLevels):
    """One sample whose interval is Wilson's at every level (:class:`~.interval_rules._WilsonAtLevels`), made from
    :func:`_level_free`'s arrays."""

    @staticmethod
    def of(
        free: Any, inverse: npt.NDArray[np.intp] | None, n_cases: int, max_effective_n: float | None
    ) -> _OneWilson | None:
        """The sample of :func:`_level_free`'s ``free`` when its method is Wilson and nothing refused it, else None."""
        if isinstance(free, _IntervalBatch):
            return None
        estimate, se, constant, chosen, code, n_units = free
        if int(code[0]) != OK or int(chosen[0]) != _RESOLVED.index("wilson"):
            return None
        capped = _capped_kish(
            estimate,
            se,
            constant,
            inverse,
            n_cases=n_cases,
            n_units=n_units,
            max_effective_n=max_effective_n,
            design_effect_from_units=None,
        )
        return _OneWilson(float(estimate[0]), float(se[0]), bool(constant[0]), float(capped[0]), n_units)


def _free_of_levels(
    s: npt.NDArray[np.float64],
    inverse: npt.NDArray[np.intp] | None,
    method: IntervalMethod,
    max_effective_n: float | None,
) -> Any:
    """What :func:`case_mean_interval_at` keeps of one sample: its :class:`_OneWilson`, else :func:`_level_free`'s."""
    free = _level_free(s[None, :], inverse, method)
    return _OneWilson.of(free, inverse, s.size, max_effective_n) or free


def _level_free(values: npt.NDArray[np.float64], inverse: npt.NDArray[np.intp] | None, method: IntervalMethod) -> Any:
    """What :func:`_interval_batch` computes before the level enters (its few-units batch when it stops there)."""
    rows, n_cases = values.shape
    n_units = (int(inverse.max()) + 1 if n_cases else 0) if inverse is not None else n_cases
    nan = np.full(rows, np.nan)
    estimate = values.mean(axis=1) if n_cases else nan.copy()
    if n_units < MIN_UNITS:
        return _few_units_batch(estimate, nan, n_units=n_units)
    se = _standard_errors(values, inverse)
    constant = np.all(values == values[:, :1], axis=1)
    chosen, code = _choose_methods(method, rows=rows, n_units=n_units, constant=constant, offer_everywhere=False)
    return estimate, se, constant, chosen, code, n_units


def _case_values(
    values: npt.ArrayLike, groups: npt.ArrayLike | None
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.intp] | None]:
    """The checked case values and the group code of each case (``None`` without groups)."""
    s = np.asarray(values, dtype=np.float64).ravel()
    if np.isnan(s).any() or (s.size and (s.min() < 0 or s.max() > 1)):
        msg = "values must be case-level estimates in [0, 1] without NaN"
        raise ValueError(msg)
    if groups is None:
        return s, None
    g = np.asarray(groups).ravel()
    if g.shape != s.shape:
        msg = f"groups must have one label per case (got {g.size} labels for {s.size} cases)"
        raise ValueError(msg)
    return s, np.unique(g, return_inverse=True)[1].astype(np.intp)


def _single_result(
    batch: _IntervalBatch,
    s: npt.NDArray[np.float64],
    *,
    clustered: bool,
    method: IntervalMethod,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> CaseMeanInterval:
    """The :class:`CaseMeanInterval` of a batch of one sample."""
    n_cases = int(s.size)
    code = int(batch.code[0])
    common = {
        "estimate": float(batch.estimate[0]) if n_cases else None,
        "requested_method": method,
        "confidence_level": confidence_level,
        "n_cases": n_cases,
        "n_units": batch.n_units,
        "clustered": clustered,
    }
    if code != OK:
        reason = _reason(code, method, batch.n_units, "groups" if clustered else "cases", s)
        none = {"ci_low": None, "ci_high": None, "se": None, "method": None}
        return CaseMeanInterval(status="insufficient_evidence", reason=reason, **none, **common)  # type: ignore[arg-type]
    resolved = _RESOLVED[int(batch.method[0])]
    bootstrap = resolved == "bootstrap"
    return CaseMeanInterval(
        ci_low=float(batch.low[0]),
        ci_high=float(batch.high[0]),
        se=float(batch.boot_se[0] if bootstrap else batch.se[0]),
        status="ok",
        reason=None,
        method=resolved,
        effective_n=float(batch.effective_n[0]) if resolved == "wilson" else None,
        n_resamples=n_resamples if bootstrap else None,
        seed=seed if bootstrap else None,
        **common,  # type: ignore[arg-type]
    )
