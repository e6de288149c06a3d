r"""The binomial distribution at :math:`p = 1/2` in exact integer arithmetic, rounded once to the nearest double.

The exact and mid-p McNemar tests (:mod:`gatestats.paired.mcnemar`), the sign test of
:func:`gatestats.paired.permutation_test` and the position-bias sign test of the judges all
need :math:`C \sim \mathrm{Bin}(m, 1/2)`. At :math:`p = 1/2` every probability is a sum of
binomial coefficients over :math:`2^m`:

.. math:: P(C \le k) = 2^{-m} \sum_{i=0}^{k} \binom{m}{i}, \qquad P(C = k) = 2^{-m} \binom{m}{k},

and every p-value of those tests is an integer over a power of two (the mid-p value of
:math:`2F(k) - f(k)` is :math:`(2S - \binom{m}{k}) / 2^m` with :math:`S` the integer sum). Up to
:data:`EXACT_MAX_TRIALS` trials the numerator is summed in Python integers and divided once
(``int / int`` is correctly rounded in Python), so each p-value is **the exact value rounded once
to the nearest double**: checkable by anyone with a rational-arithmetic library, and the same on
every machine. scipy's ``binom`` (Boost's incomplete beta, used here before session 40) is
within :math:`5 \times 10^{-13}` relative of it for :math:`m \le 5000` but not correctly rounded
(it differs in the last bits in 44 % of the cdf values for :math:`m \le 300`: ``benchmarks/RESULTS.md``).

Above :data:`EXACT_MAX_TRIALS` the integer sum costs more than about 10 ms (it grows as
:math:`m^2`: 7 ms at :math:`m = 10{,}000` on the 2-core benchmark machine), so the callers use
scipy's ``binom`` there, imported only then.
"""

from __future__ import annotations

import math
from typing import Final

__all__ = ["EXACT_MAX_TRIALS", "half_binomial_sums", "ratio"]

#: The largest number of trials :math:`m` summed exactly (above it the callers use scipy's ``binom``).
EXACT_MAX_TRIALS: Final = 10_000


def half_binomial_sums(k: int, m: int) -> tuple[int, int]:
    r"""The integers :math:`\sum_{i \le k} \binom{m}{i}` and :math:`\binom{m}{k}`.

    At most about :math:`m/2` terms are summed: above the middle the sum is taken from the other
    tail, :math:`2^m - \sum_{i \le m - k - 1} \binom{m}{i}`.

    Parameters
    ----------
    k
        The upper end of the sum (any integer: below 0 the sum is empty, from ``m`` on it is :math:`2^m`).
    m
        The number of trials, non-negative.

    Returns
    -------
    tuple of int
        ``(sum, term)``: :math:`2^m P(C \le k)` and :math:`2^m P(C = k)` for :math:`C \sim \mathrm{Bin}(m, 1/2)`.

    Examples
    --------
    >>> half_binomial_sums(2, 5)  # 1 + 5 + 10, and C(5, 2)
    (16, 10)
    >>> half_binomial_sums(4, 5)  # 32 - 1
    (31, 5)
    """
    if k < 0:
        return 0, 0
    if k >= m:
        return 1 << m, 1 if k == m else 0
    if 2 * k > m:
        below, _ = half_binomial_sums(m - k - 1, m)
        return (1 << m) - below, math.comb(m, k)
    total = term = 1
    for i in range(k):
        term = term * (m - i) // (i + 1)
        total += term
    return total, term


def ratio(numerator: int, log2_denominator: int) -> float:
    r"""``numerator / 2**log2_denominator``, the exact quotient rounded once to the nearest double.

    Parameters
    ----------
    numerator
        A non-negative integer.
    log2_denominator
        The power of two below it (non-negative).

    Returns
    -------
    float
        The correctly rounded quotient (Python's ``int / int``).

    Examples
    --------
    >>> ratio(16, 5)
    0.5
    """
    return numerator / (1 << log2_denominator)


#: The largest ``m`` whose Clopper-Pearson bounds :func:`clopper_pearson_bound` finds itself (scipy above).
BOUND_MAX_TRIALS: Final = 1000


def _binomial_tail(x: float, k: int, m: int, *, upper: bool) -> float:
    r""":math:`P(X \ge k)` (``upper``) or :math:`P(X \le k)` for :math:`X \sim \mathrm{Bin}(m, x)`, in doubles.

    The term at ``k`` from logarithms (the binomial coefficient exact, ``log1p`` for :math:`1 - x`),
    the others by the ratio of consecutive terms, summed away from ``k`` until they no longer change the sum.
    """
    if x <= 0.0:
        return 1.0 if not upper or k <= 0 else 0.0
    if x >= 1.0:
        return 1.0 if upper or k >= m else 0.0
    term = math.exp(math.log(math.comb(m, k)) + k * math.log(x) + (m - k) * math.log1p(-x))
    odds = x / (1.0 - x)
    total = term
    if upper:
        for i in range(k, m):
            term *= (m - i) / (i + 1) * odds
            total += term
            if term <= total * 1e-17:
                break
    else:
        for i in range(k, 0, -1):
            term *= i / (m - i + 1) / odds
            total += term
            if term <= total * 1e-17:
                break
    return total


def clopper_pearson_bound(k: int, m: int, tail: float, *, upper: bool) -> float:
    r"""A Clopper-Pearson bound for a binomial proportion: the :math:`x` where a binomial tail equals ``tail``.

    The lower bound (``upper=False``) solves :math:`P(X \ge k \mid x) = \text{tail}` (``k >= 1``),
    the upper bound :math:`P(X \le k \mid x) = \text{tail}` (``k < m``), :math:`X \sim \mathrm{Bin}(m, x)`:
    ``scipy.stats.beta.ppf(tail, k, m - k + 1)`` and ``beta.isf(tail, k + 1, m - k)``. Up to
    :data:`BOUND_MAX_TRIALS` trials the tail is summed in doubles (:func:`_binomial_tail`) and the
    root found by Brent's method (:func:`gatestats.paired.roots.brent_root`, relative tolerance
    :math:`4\epsilon`); it agrees with scipy's (Boost's ``ibeta_inv``) within ``1e-12`` relative
    (``tests/paired/test_binomial.py``). Above, scipy's, imported then.

    Parameters
    ----------
    k
        The successes.
    m
        The trials.
    tail
        The tail probability, in (0, 1).
    upper
        The upper bound (else the lower).

    Returns
    -------
    float
        The bound.

    Examples
    --------
    R's ``binom.test(2, 10)$conf.int``, 0.02521073 0.55609546:

    >>> low = clopper_pearson_bound(2, 10, 0.025, upper=False)
    >>> round(low, 8), round(clopper_pearson_bound(2, 10, 0.025, upper=True), 8)
    (0.02521073, 0.55609546)
    """
    if m > BOUND_MAX_TRIALS:
        from scipy import stats  # noqa: PLC0415 - only above BOUND_MAX_TRIALS trials

        dist = stats.beta(k + 1, m - k) if upper else stats.beta(k, m - k + 1)
        return float(dist.isf(tail) if upper else dist.ppf(tail))
    from gatestats.paired.roots import brent_root  # noqa: PLC0415 - the intervals' module, not the tests'

    def excess(x: float) -> float:
        return _binomial_tail(x, k, m, upper=not upper) - tail

    return brent_root(excess, 0.0, 1.0, xtol=1e-300)
