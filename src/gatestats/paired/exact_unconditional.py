r"""The exact unconditional test of non-inferiority for paired binary outcomes (one trial per case).

Tables are ordered by Tango's (1998) score statistic :math:`T(-\Delta)` and the p-value is the largest
tail probability over the nuisance parameter on the boundary of :math:`H_0` (Hsueh, Liu & Chen 2001):
:func:`exact_unconditional_pvalues`. :func:`rejection_cut`, :func:`region_probability` and
:func:`boundary_size` give the rejection region and its exact size, which the size study and the
worst-cell tests read. The method, its cost and its size are described in
:mod:`gatestats.paired.noninferiority`, which decides with it.

References
----------
Hsueh, H.-M., Liu, J.-P. & Chen, J. J. (2001). Unconditional exact tests for equivalence or
    noninferiority for paired binary endpoints. Biometrics 57(2), 478-483.
Tango, T. (1998). Equivalence test and confidence interval for the difference in proportions for
    the paired-sample design. Statistics in Medicine 17(8), 891-908.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

from gatestats._lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from gatestats.paired._common import FloatArray

stats = lazy_module("scipy.stats")

__all__ = [
    "boundary_size",
    "check_margin",
    "exact_unconditional_pvalues",
    "region_probability",
    "rejection_cut",
    "tango_statistics",
]

#: The grid over the nuisance parameter, the points refined around its maximum, and the tolerance.
_GRID = 201
_REFINE = 41
_TOL = 1e-9
#: The most terms (b values over all (p_b, p_c)) one call of the binomial kernels computes.
_CHUNK = 1 << 20


def check_margin(margin: object) -> float:
    """Check a non-inferiority margin: a number strictly between 0 and 1.

    Parameters
    ----------
    margin
        The margin given, on the scale of the difference of pass rates.

    Returns
    -------
    float
        The margin.

    Raises
    ------
    ValueError
        Not a number (a bool is not one), or outside (0, 1).
    """
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 < margin < 1:
        msg = f"margin must be a number strictly between 0 and 1 (got {margin!r})"
        raise ValueError(msg)
    return float(margin)


def tango_statistics(b: npt.ArrayLike, c: npt.ArrayLike, n: int, delta0: float) -> FloatArray:
    r"""Tango's score statistic :math:`T(\delta_0)` for arrays of tables (``b``, ``c`` of ``n`` units).

    The vectorised form of :func:`gatestats.paired.intervals.tango_statistic` (same closed-form
    restricted MLE); :math:`\pm\infty` where the restricted variance is 0.

    Parameters
    ----------
    b, c
        Units passed by the baseline only and by the candidate only (arrays of one shape).
    n
        All units of each table.
    delta0
        The difference under the null.

    Returns
    -------
    numpy.ndarray
        The statistic of each table.

    Examples
    --------
    >>> tango_statistics([16], [6], 161, 0.0).round(4).tolist()  # Cavo et al. (2012): McNemar's z
    [-2.132]
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    bb = np.asarray(b, dtype=np.float64)
    cc = np.asarray(c, dtype=np.float64)
    a_coef = 2.0 * n
    b_coef = -bb - cc + (2.0 * n - cc + bb) * delta0
    c_coef = -bb * delta0 * (1.0 - delta0)
    p_b = (np.sqrt(np.maximum(b_coef * b_coef - 4.0 * a_coef * c_coef, 0.0)) - b_coef) / (2.0 * a_coef)
    numerator = cc - bb - n * delta0
    variance = n * (2.0 * p_b + delta0 * (1.0 - delta0))
    positive = variance > 1e-300
    safe = np.where(positive, variance, 1.0)
    edge = np.where(numerator > 0, np.inf, np.where(numerator < 0, -np.inf, 0.0))
    out: FloatArray = np.where(positive, numerator / np.sqrt(safe), edge)
    return out


def _cut(n: int, delta0: float, t: float, *, upper: bool) -> npt.NDArray[np.int64]:
    """Per ``b = 0..n``: the smallest ``c`` with ``T >= t`` (upper) or the largest with ``T <= t``.

    ``n - b + 1`` (upper) or ``-1`` (lower) where no ``c`` qualifies. Binary search per ``b``
    (``T`` increases in ``c``).
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    b = np.arange(n + 1)
    top = n - b
    if upper:
        lo, hi = np.zeros(n + 1, dtype=np.int64), top + 1  # answer in [lo, hi]
        for _ in range(max(1, math.ceil(math.log2(n + 2)) + 1)):
            mid = (lo + hi) // 2
            ok = (tango_statistics(b, np.minimum(mid, top), n, delta0) >= t - _TOL) & (mid <= top)
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid + 1)
        return hi
    lo, hi = np.full(n + 1, -1, dtype=np.int64), top.astype(np.int64)  # answer in [lo, hi]
    for _ in range(max(1, math.ceil(math.log2(n + 2)) + 1)):
        mid = (lo + hi + 1) // 2
        ok = (tango_statistics(b, np.maximum(mid, 0), n, delta0) <= t + _TOL) & (mid >= 0)
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid - 1)
    return lo


def _binom_tail(k: npt.NDArray[np.int64], m: npt.NDArray[np.int64], q: npt.ArrayLike, *, upper: bool) -> FloatArray:
    """``scipy.stats.binom.sf(k - 1, m, q)`` (upper) or ``binom.cdf(k, m, q)``, to the last bit, for ``0 <= q <= 1``.

    The distribution's own kernels (``binom._sf`` / ``binom._cdf``) with the edges of scipy's
    generic wrappers (``rv_discrete.sf`` / ``cdf``: 1 or 0 outside the support, the kernel clipped
    to [0, 1] inside), without their argument parsing, which was most of the exact test's time (a
    few thousand calls a test). ``q`` is one number or one per element (the kernels are element-wise
    ufuncs). ``tests/paired/test_exact_unconditional_fast.py`` checks it against
    ``scipy.stats.binom`` bit for bit, so a scipy that changes either fails there.
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    x = k - 1 if upper else k
    inside = (x >= 0) & (x < m)
    out = np.where(x < 0, 1.0 if upper else 0.0, 0.0 if upper else 1.0)
    if inside.any():
        kernel = stats.binom._sf if upper else stats.binom._cdf  # binom's own kernels
        qs = np.broadcast_to(np.asarray(q, dtype=np.float64), x.shape)
        out[inside] = np.clip(kernel(x[inside], m[inside], qs[inside]), 0, 1)
    return out


def _binom_pmf(b: npt.NDArray[np.int64], n: int, p: npt.ArrayLike) -> FloatArray:
    """``scipy.stats.binom.pmf(b, n, p)`` for integers ``0 <= b <= n`` and ``0 <= p <= 1`` (its kernel, clipped;
    ``p`` one number or one per element)."""
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    out: FloatArray = np.clip(stats.binom._pmf(b, n, p), 0, 1)
    return out


def region_probability(
    n: int, cut: npt.NDArray[np.int64], p_b: npt.ArrayLike, p_c: npt.ArrayLike, *, upper: bool
) -> FloatArray:
    """Probability of the region ``C >= cut[b]`` (upper) or ``C <= cut[b]`` under each ``(p_b, p_c)``.

    ``p_b``/``p_c``: probabilities that a unit is passed by the baseline only / the candidate only
    (arrays of the same shape). Only the ``b`` within 12 standard deviations of ``n p_b`` are
    summed (the rest carries less than 1e-30).

    Parameters
    ----------
    n
        Units per table.
    cut
        The region's boundary on ``c`` for each ``b = 0..n``.
    p_b, p_c
        Cell probabilities (arrays of one shape).
    upper
        The region lies above the cut (else below).

    Returns
    -------
    numpy.ndarray
        The region's probability under each ``(p_b, p_c)``.
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    pbs = np.atleast_1d(np.asarray(p_b, dtype=np.float64)).ravel()
    pcs = np.atleast_1d(np.asarray(p_c, dtype=np.float64)).ravel()
    out = np.zeros(pbs.size)
    spans = [_span(n, pb, pc) for pb, pc in zip(pbs.tolist(), pcs.tolist(), strict=True)]
    first = 0
    while first < len(spans):  # the values of as many (p_b, p_c) as fit in _CHUNK elements, in one call per kernel
        last, size = first + 1, spans[first][1] - spans[first][0] + 1
        while last < len(spans) and size + spans[last][1] - spans[last][0] + 1 <= _CHUNK:
            size += spans[last][1] - spans[last][0] + 1
            last += 1
        out[first:last] = _region_sums(n, cut, pbs[first:last], spans[first:last], upper=upper)
        first = last
    return out


def _span(n: int, pb: float, pc: float) -> tuple[int, int, float]:
    """The ``b`` summed for one ``(p_b, p_c)`` (within 12 standard deviations of ``n p_b``), and ``p_c / (1 - p_b)``."""
    sd = math.sqrt(n * pb * (1 - pb))
    lo = max(0, math.floor(n * pb - 12 * sd) - 1)
    hi = min(n, math.ceil(n * pb + 12 * sd) + 1)
    rest = 1.0 - pb
    q = min(1.0, max(0.0, pc / rest)) if rest > 0 else 1.0
    return lo, hi, q


def _region_sums(
    n: int, cut: npt.NDArray[np.int64], pbs: FloatArray, spans: list[tuple[int, int, float]], *, upper: bool
) -> FloatArray:
    """Per ``(p_b, span)``: the sum over its ``b = lo..hi`` of ``P(B = b) P(C beyond cut[b] | b)``.

    The terms of every span are computed in one call of each binomial kernel (element-wise ufuncs,
    so each term is the float a call per span gave) and each span's terms summed on their own, as
    a fresh array of the span's length: the sums are the per-span sums bit for bit.
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    lengths = np.array([hi - lo + 1 for lo, hi, _ in spans], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    b = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts, lengths)
    b += np.repeat(np.array([lo for lo, _, _ in spans], dtype=np.int64), lengths)
    m = n - b
    q = np.repeat(np.array([q for _, _, q in spans], dtype=np.float64), lengths)
    k = cut[b]
    if upper:
        cond = np.where(k > m, 0.0, _binom_tail(k, m, q, upper=True))
    else:
        cond = np.where(k < 0, 0.0, _binom_tail(k, m, q, upper=False))
    terms = _binom_pmf(b, n, np.repeat(pbs, lengths)) * cond
    ends = (starts + lengths).tolist()
    return np.array([float(terms[s:e].copy().sum()) for s, e in zip(starts.tolist(), ends, strict=True)])


def _tail(n: int, margin: float, cut: npt.NDArray[np.int64], theta: FloatArray, *, upper: bool) -> FloatArray:
    """Probability of the region at each boundary nuisance value ``theta`` (``p_b = theta + margin``)."""
    return region_probability(n, cut, theta + margin, theta, upper=upper)


def _sup_tail(n: int, margin: float, cut: npt.NDArray[np.int64], *, upper: bool) -> float:
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    top = (1.0 - margin) / 2.0
    grid = np.linspace(0.0, top, _GRID)
    values = _tail(n, margin, cut, grid, upper=upper)
    k = int(np.argmax(values))
    fine = np.linspace(grid[max(k - 1, 0)], grid[min(k + 1, _GRID - 1)], _REFINE)
    best = max(float(values.max()), float(_tail(n, margin, cut, fine, upper=upper).max()))
    return min(1.0, best)


def rejection_cut(n: int, margin: float, critical: float, *, upper: bool = True) -> npt.NDArray[np.int64]:
    """Per ``b = 0..n`` the boundary of the region ``T(-margin) >= critical`` (or ``<=``, ``upper=False``).

    Parameters
    ----------
    n
        Units per table.
    margin
        :math:`\\Delta`.
    critical
        The critical value of Tango's statistic.
    upper
        The region lies above the cut (else below).

    Returns
    -------
    numpy.ndarray
        One cut on ``c`` per ``b``.
    """
    return _cut(n, -margin, critical, upper=upper)


def boundary_size(n: int, margin: float, cut: npt.NDArray[np.int64], *, upper: bool = True) -> float:
    """Largest probability of a region over the boundary :math:`\\delta = -\\Delta` of the null (exact).

    Parameters
    ----------
    n, margin, upper
        As for :func:`rejection_cut`.
    cut
        The region (:func:`rejection_cut`).

    Returns
    -------
    float
        The size of the region.
    """
    return _sup_tail(n, margin, cut, upper=upper)


def exact_unconditional_pvalues(b: int, c: int, n: int, *, margin: float) -> tuple[float, float]:
    r"""Exact unconditional p-values ``(p_noninferior, p_worse)`` for one trial per case.

    ``p_noninferior`` tests :math:`H_0: \delta \le -\Delta` (sup over the boundary of
    :math:`P(T \ge t_\text{obs})`), ``p_worse`` tests :math:`H_0: \delta \ge -\Delta` (sup of
    :math:`P(T \le t_\text{obs})`), with Tango's statistic :math:`T(-\Delta)`; Hsueh, Liu &
    Chen (2001). Each is at least the probability of the observed table under the least
    favourable nuisance value, so neither can be 0.

    Parameters
    ----------
    b, c, n
        Units passed by the baseline only, by the candidate only, and all units.
    margin
        :math:`\Delta`.

    Returns
    -------
    tuple of float
        ``(p_noninferior, p_worse)``.

    Raises
    ------
    ValueError
        Counts outside ``0 <= b, c``, ``b + c <= n``, ``n >= 1``.

    Examples
    --------
    >>> p, q = exact_unconditional_pvalues(0, 0, 20, margin=0.2)
    >>> round(p, 4), round(q, 4)  # at least 0.8**20 = 0.0115, the chance of b = 0 at theta = 0
    (0.021, 1.0)
    """
    margin = check_margin(margin)
    if n < 1 or b < 0 or c < 0 or b + c > n:
        msg = f"need 0 <= b, c and b + c <= n with n >= 1 (got b={b}, c={c}, n={n})"
        raise ValueError(msg)
    return _pvalues(int(b), int(c), int(n), margin)


@lru_cache(maxsize=4096)
def _pvalues(b: int, c: int, n: int, margin: float) -> tuple[float, float]:
    """:func:`exact_unconditional_pvalues` of checked counts, kept: a gate asks for the same table at
    each bound of its unresolved attempts and in its searches, and a simulation for the same ``n``."""
    t_obs = float(tango_statistics([b], [c], n, -margin)[0])
    p_pass = _sup_tail(n, margin, _cut(n, -margin, t_obs, upper=True), upper=True)
    p_worse = _sup_tail(n, margin, _cut(n, -margin, t_obs, upper=False), upper=False)
    return p_pass, p_worse
