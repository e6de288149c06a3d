"""The binomial at p = 1/2 in exact arithmetic (``gatestats.paired.binomial``) and the McNemar p-values built on it.

Since session 40 the reference of the exact and mid-p McNemar p-values (and of the sign tests built on them)
is the exact rational value rounded once to the nearest double (the lead's decision, issue 28 item 2): the
p-values are compared for equality with ``float(Fraction(...))`` computed here from the definition (a sum of
``Fraction`` terms, no symmetry, no shortcut). scipy's ``binom`` (Boost's incomplete beta, the reference
before) is not correctly rounded; it must agree within ``SCIPY_RTOL`` (relative). Published values (Fagerland
et al. 2013 and 2017, Armitage & Berry 1994) are in ``test_mcnemar.py`` and still pass.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from gatestats.paired.binomial import BOUND_MAX_TRIALS, EXACT_MAX_TRIALS, clopper_pearson_bound, half_binomial_sums
from gatestats.paired.mcnemar import _scipy_pvalues, mcnemar_pvalues
from gatestats.paired.trials import permutation_test
from tests.hypothesis_counts import draws

#: scipy's binom against the exact value, relative: measured at most 3.2e-14 for m <= 300 and 4.9e-13 for
#: m <= 5,000 (benchmarks/RESULTS.md, session 39); the bound leaves room for Boost's error growing with m.
SCIPY_RTOL = 2e-12


@functools.cache
def _coefficients(m: int) -> tuple[int, ...]:
    return tuple(math.comb(m, i) for i in range(m + 1))


def _definition(b: int, c: int, alternative: str) -> tuple[float, float]:
    """The exact and mid-p values from their definitions (module docstring of mcnemar), in Fractions, rounded once.

    Sums from 0 to k directly (no symmetry, unlike ``half_binomial_sums``).
    """
    m = b + c
    if m == 0:
        return 1.0, 1.0
    counts = _coefficients(m)

    def pmf(k: int) -> Fraction:
        return Fraction(counts[k], 2**m)

    def cdf(k: int) -> Fraction:
        return Fraction(sum(counts[: k + 1]), 2**m)

    if alternative == "less":
        exact, midp = cdf(c), cdf(c) - pmf(c) / 2
    elif alternative == "greater":
        exact = 1 - cdf(c - 1) if c > 0 else Fraction(1)
        midp = exact - pmf(c) / 2
    else:
        low = min(b, c)
        exact = min(Fraction(1), 2 * cdf(low))
        midp = 1 - pmf(b) / 2 if b == c else 2 * cdf(low) - pmf(low)
    return float(exact), float(midp)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_every_table_up_to_60_discordant_units_is_the_exact_value_rounded_once(alternative: str) -> None:
    b, c = np.meshgrid(np.arange(61), np.arange(61), indexing="ij")
    keep = b + c <= 60
    exact, midp = mcnemar_pvalues(b[keep], c[keep], alternative=alternative)  # type: ignore[arg-type]
    expected = [_definition(int(x), int(y), alternative) for x, y in zip(b[keep], c[keep], strict=True)]
    assert exact.tolist() == [e for e, _ in expected]
    assert midp.tolist() == [p for _, p in expected]


@pytest.mark.parametrize("m", [61, 199, 200, 1001, 4096])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_larger_tables_are_the_exact_value_rounded_once(m: int, alternative: str) -> None:
    # Both tails of the sum (half_binomial_sums switches to the other tail past m/2), the middle and the ends.
    for c in sorted({0, 1, 2, m // 3, m // 2 - 1, m // 2, (m + 1) // 2, m // 2 + 1, m - m // 3, m - 1, m}):
        exact, midp = mcnemar_pvalues(m - c, c, alternative=alternative)
        assert (float(exact), float(midp)) == _definition(m - c, c, alternative), (m, c)


def test_half_binomial_sums_are_the_integer_sums_at_every_k() -> None:
    for m in range(40):
        running = 0
        for k in range(-2, m + 3):
            if 0 <= k <= m:
                running += math.comb(m, k)
            term = math.comb(m, k) if 0 <= k <= m else 0
            assert half_binomial_sums(k, m) == (running if k >= 0 else 0, term), (k, m)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_agrees_with_scipy_binom_within_a_stated_relative_tolerance(alternative: str) -> None:
    rng = np.random.default_rng(40)
    m = np.concatenate([np.arange(1, 301), rng.integers(301, EXACT_MAX_TRIALS + 1, size=200)])
    c = (rng.random(m.size) * (m + 1)).astype(np.int64)
    b = m - c
    ours = mcnemar_pvalues(b, c, alternative=alternative)
    scipys = _scipy_pvalues(b, c, alternative)  # type: ignore[arg-type]
    for mine, theirs in zip(ours, scipys, strict=True):
        normal = theirs > 1e-300
        np.testing.assert_allclose(mine[normal], theirs[normal], rtol=SCIPY_RTOL, atol=0)


def test_above_the_exact_limit_the_values_are_scipys_own() -> None:
    m = EXACT_MAX_TRIALS + 1
    c = np.array([0, 3, m // 2 - 50, m // 2, m])
    for alternative in ("two-sided", "less", "greater"):
        ours = mcnemar_pvalues(m - c, c, alternative=alternative)  # type: ignore[arg-type]
        low = np.minimum(m - c, c)
        if alternative == "two-sided":
            old = np.minimum(1.0, 2.0 * stats.binom.cdf(low, m, 0.5))
        elif alternative == "less":
            old = stats.binom.cdf(c, m, 0.5)
        else:
            old = stats.binom.sf(c - 1, m, 0.5)
        assert ours[0].tolist() == old.tolist()


def test_a_mixed_array_takes_each_table_by_its_own_size() -> None:
    b = np.array([3, EXACT_MAX_TRIALS, 7])
    c = np.array([9, 5, 7])
    exact, midp = mcnemar_pvalues(b, c)
    alone = [mcnemar_pvalues(int(x), int(y)) for x, y in zip(b, c, strict=True)]
    assert exact.tolist() == [float(e) for e, _ in alone]
    assert midp.tolist() == [float(p) for _, p in alone]
    assert exact.dtype == np.float64
    assert exact.shape == (3,)


def test_the_exact_sign_test_with_several_trials_is_the_exact_binomial() -> None:
    # All |u| equal: the sign test; 9 positive of 23 (two-sided), 2 * P(C <= 9) for C ~ Bin(23, 1/2).
    sums = np.array([0.5] * 9 + [-0.5] * 14)
    assert permutation_test(sums) == (float(Fraction(2 * sum(math.comb(23, i) for i in range(10)), 2**23)), True)
    assert permutation_test(sums, alternative="greater")[0] == _definition(14, 9, "greater")[0]
    assert permutation_test(sums, alternative="less")[0] == _definition(14, 9, "less")[0]


def test_clopper_pearson_matches_r_binom_test() -> None:
    # R: binom.test(2, 10)$conf.int = 0.02521073 0.55609546 (as in tests/judges/test_rates.py).
    low = clopper_pearson_bound(2, 10, 0.025, upper=False)
    high = clopper_pearson_bound(2, 10, 0.025, upper=True)
    assert (low, high) == pytest.approx((0.02521073, 0.55609546), abs=1e-8)


#: clopper_pearson_bound against scipy's beta.ppf / beta.isf, relative: measured at most 1.1e-14 on the grid below.
BOUND_RTOL = 1e-12
#: The grid's table sizes m in 1..60 (every k of each): all 60 in the whole suite; in the inner loop a quarter of them,
#: every fourth (1, 5, ..., 57; tests/hypothesis_counts.py).
GRID_TABLES = draws(60)
GRID_SIZES = range(1, 61, 60 // GRID_TABLES)


@pytest.mark.parametrize("tail", [(1 - 0.95) / 2, 1 - 0.95, (1 - 0.99) / 2, (1 - 0.8) / 2, 0.3])
def test_clopper_pearson_agrees_with_scipy_beta_quantiles(tail: float) -> None:
    grid = [(k, m) for m in GRID_SIZES for k in range(m + 1)]
    grid += [(k, m) for m in (100, 333, 1000) for k in (0, 1, 2, m // 7, m // 2, m - 2, m - 1, m)]
    # scipy's quantiles in one call per side: its ufuncs are elementwise, the same doubles as one call per
    # table (checked on this grid at every tail: 18,510 of 18,510 equal; issue 28, item 3, session 46).
    k_all, m_all = np.array(grid).T
    lower_expected = stats.beta.ppf(tail, k_all, m_all - k_all + 1)
    upper_expected = stats.beta.isf(tail, k_all + 1, m_all - k_all)
    for (k, m), low, high in zip(grid, lower_expected.tolist(), upper_expected.tolist(), strict=True):
        if k >= 1:
            assert clopper_pearson_bound(k, m, tail, upper=False) == pytest.approx(low, rel=BOUND_RTOL, abs=0)
        if k < m:
            bound = clopper_pearson_bound(k, m, tail, upper=True)
            assert bound == pytest.approx(high, rel=BOUND_RTOL, abs=0)
            # the odds ratio divides by 1 - bound: that too stays within the tolerance
            assert 1 - bound == pytest.approx(1 - high, rel=BOUND_RTOL * 100, abs=0), (k, m)


def test_clopper_pearson_above_its_limit_is_scipys() -> None:
    m = BOUND_MAX_TRIALS + 1
    assert clopper_pearson_bound(7, m, 0.025, upper=False) == float(stats.beta.ppf(0.025, 7, m - 6))
    assert clopper_pearson_bound(7, m, 0.025, upper=True) == float(stats.beta.isf(0.025, 8, m - 7))
