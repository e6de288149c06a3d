"""The exact unconditional test's binomial kernels, called without scipy.stats' wrappers, to the last bit.

Issue 28, item 3: ``region_probability`` called ``scipy.stats.binom`` a few thousand times per
test, and the wrappers' argument parsing was most of a small gate call. It now calls the kernels
those wrappers call (``scipy.stats.binom._sf`` / ``_cdf`` / ``_pmf``) with the wrappers' edges;
these tests hold it to ``scipy.stats.binom`` bit for bit, so that a scipy whose wrappers or kernels change fails
here and not as a silently different p-value in a verdict.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from scipy import stats

from gatestats.paired import exact_unconditional as eu
from gatestats.paired.noninferiority import noninferiority_test


def _reference_region(
    n: int, cut: npt.NDArray[np.int64], p_b: npt.ArrayLike, p_c: npt.ArrayLike, *, upper: bool
) -> npt.NDArray[np.float64]:
    """``region_probability`` as it was before issue 28 (scipy.stats.binom), the reference."""
    pbs = np.atleast_1d(np.asarray(p_b, dtype=np.float64)).ravel()
    pcs = np.atleast_1d(np.asarray(p_c, dtype=np.float64)).ravel()
    out = np.zeros(pbs.size)
    for i, (pb, pc) in enumerate(zip(pbs.tolist(), pcs.tolist(), strict=True)):
        sd = math.sqrt(n * pb * (1 - pb))
        lo = max(0, math.floor(n * pb - 12 * sd) - 1)
        hi = min(n, math.ceil(n * pb + 12 * sd) + 1)
        b = np.arange(lo, hi + 1)
        m = n - b
        rest = 1.0 - pb
        q = min(1.0, max(0.0, pc / rest)) if rest > 0 else 1.0
        k = cut[lo : hi + 1]
        if upper:
            cond = np.where(k > m, 0.0, stats.binom.sf(k - 1, m, q))
        else:
            cond = np.where(k < 0, 0.0, stats.binom.cdf(k, m, q))
        out[i] = float((stats.binom.pmf(b, n, pb) * cond).sum())
    return out


@pytest.mark.parametrize("q", [0.0, 1.0, 0.5, 1e-12, 1 - 1e-12, 0.0371, 0.93])
def test_the_tails_and_the_pmf_are_scipy_stats_bit_for_bit(q: float) -> None:
    rng = np.random.default_rng(2836)
    m = rng.integers(0, 400, 2000)
    k = np.concatenate([rng.integers(-2, m + 3), np.array([-1, 0, 1, 400, 401])])
    m = np.concatenate([m, np.array([0, 0, 0, 399, 400])])
    assert np.array_equal(eu._binom_tail(k, m, q, upper=True), stats.binom.sf(k - 1, m, q))
    assert np.array_equal(eu._binom_tail(k, m, q, upper=False), stats.binom.cdf(k, m, q))
    for n in (1, 7, 200, 1000):
        b = np.arange(n + 1)
        assert np.array_equal(eu._binom_pmf(b, n, q), stats.binom.pmf(b, n, q))


@pytest.mark.parametrize(("n", "margin"), [(1, 0.5), (20, 0.2), (50, 0.05), (161, 0.15), (400, 0.03)])
def test_region_probability_is_the_scipy_stats_sum_bit_for_bit(n: int, margin: float) -> None:
    theta = np.linspace(0.0, (1 - margin) / 2, 37)
    for t in (-3.0, -1.2, 0.0, 0.7, 2.5):
        for upper in (True, False):
            cut = eu.rejection_cut(n, margin, t, upper=upper)
            found = eu.region_probability(n, cut, theta + margin, theta, upper=upper)
            assert np.array_equal(found, _reference_region(n, cut, theta + margin, theta, upper=upper))


@pytest.mark.parametrize("chunk", [1, 300, eu._CHUNK])
def test_region_probability_of_many_cells_in_one_call_is_the_sum_per_cell_bit_for_bit(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 28, item 3 (session 45): every cell's terms go through one call of each kernel, in chunks of at most
    # ``_CHUNK`` terms, and each cell's terms are summed on their own. Random cells, cells at 0 and 1, and chunks
    # of one cell, of a few cells and of all of them must give the scipy.stats sum of each cell, to the last bit.
    monkeypatch.setattr(eu, "_CHUNK", chunk)
    rng = np.random.default_rng(4528)
    for n in (1, 13, 120, 700):
        p_b = np.concatenate([rng.random(40), [0.0, 1.0, 0.5, 1e-12, 1 - 1e-12, 0.0]])
        p_c = np.concatenate([rng.random(40) * (1 - p_b[:40]), [0.0, 0.0, 0.5, 1e-12, 0.0, 1.0]])
        for t, upper in ((-1.5, True), (0.4, True), (-0.4, False), (1.5, False)):
            cut = eu.rejection_cut(n, 0.1, t, upper=upper)
            found = eu.region_probability(n, cut, p_b, p_c, upper=upper)
            assert np.array_equal(found, _reference_region(n, cut, p_b, p_c, upper=upper)), (n, t, upper)


def test_published_values_are_unchanged() -> None:
    # Cavo et al. (2012), b = 16, c = 6, n = 161 (the module's doctest): exact p 0.0041 at a margin of 0.15
    assert round(eu.exact_unconditional_pvalues(16, 6, 161, margin=0.15)[0], 4) == 0.0041
    p, q = eu.exact_unconditional_pvalues(0, 0, 20, margin=0.2)
    assert (round(p, 4), round(q, 4)) == (0.021, 1.0)


def test_kept_results_are_the_computed_ones_and_bad_counts_still_raise() -> None:
    eu._pvalues.cache_clear()
    first = eu.exact_unconditional_pvalues(3, 10, 50, margin=0.05)
    again = eu.exact_unconditional_pvalues(np.int64(3), np.int64(10), np.int64(50), margin=0.05)
    assert first == again
    assert eu._pvalues.cache_info().hits == 1
    with pytest.raises(ValueError, match="b \\+ c <= n"):
        eu.exact_unconditional_pvalues(30, 30, 50, margin=0.05)
    with pytest.raises(ValueError, match="margin"):
        eu.exact_unconditional_pvalues(3, 10, 50, margin=1.5)
    # a test that cannot resolve says so the same way the second time (its search is kept)
    assert noninferiority_test(0, 0, 20, margin=0.05) == noninferiority_test(0, 0, 20, margin=0.05)
    assert noninferiority_test(0, 0, 20, margin=0.05).status == "cannot_resolve"
