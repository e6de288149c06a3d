"""Exact and mid-p McNemar tests (``gatestats.paired.mcnemar``).

Sources of the expected values
------------------------------
- Bentur et al. (2009) airway hyper-responsiveness, n = 21, a = 1, b = 1, c = 7, d = 12: exact conditional
  p = 0.070, mid-p = 0.039 (Fagerland, Lydersen & Laake 2013, BMC Med Res Methodol 13:91, worked example).
- Cavo et al. (2012) complete response, n = [[59, 6], [16, 80]]: exact conditional P = 0.052479, mid-P =
  0.034690 (Fagerland, Lydersen & Laake 2017, ch. 8, as asserted in the R package contingencytables'
  tests/testthat/test-ch8.R).
- Armitage & Berry (1994, p. 127), culture media, a = 20, b = 12, c = 2, d = 16: exact two-sided P = 0.0129
  (StatsDirect's worked example of the exact McNemar / Liddell test).
- R exact2x2 ``mcnemar.exact`` help example (Agresti 1990 presidential approval: b = 150, c = 86): our value
  is checked against scipy's ``binomtest(150, 236)`` (independent code), not a printed figure.
- Properties: statsmodels ``mcnemar(table, exact=True)`` on random tables; swap symmetry.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from gatestats.paired import mcnemar_pvalues, mcnemar_test
from gatestats.paired.mcnemar import min_discordant_for, min_exact_pvalue


def test_exact_and_midp_match_fagerland_2013_bentur_example() -> None:
    # Fagerland et al. (2013): exact conditional p = 0.070, mid-p = 0.039 (printed to 3 decimals).
    t = mcnemar_test(1, 7)
    assert round(t.pvalue_exact, 3) == 0.070
    assert round(t.pvalue_midp, 3) == 0.039
    assert t.pvalue == t.pvalue_midp  # mid-p is the default
    assert t.statistic == 7
    # Exactly: 2 * P(X <= 1 | 8, 1/2) = 18/256 and 18/256 - 8/256 = 10/256.
    assert t.pvalue_exact == pytest.approx(18 / 256, abs=1e-15)
    assert t.pvalue_midp == pytest.approx(10 / 256, abs=1e-15)


def test_exact_and_midp_match_fagerland_2017_cavo_example() -> None:
    # contingencytables test-ch8.R: "exact conditional test: P = 0.052479", "mid-P test: P = 0.034690".
    t = mcnemar_test(16, 6)  # baseline-only n21 = 16, candidate-only n12 = 6
    assert round(t.pvalue_exact, 6) == 0.052479
    assert round(t.pvalue_midp, 6) == 0.034690


def test_exact_matches_statsdirect_armitage_berry_example() -> None:
    # StatsDirect: "F = 4, P (two sided) = 0.0129" for b = 12, c = 2.
    assert round(mcnemar_test(2, 12, method="exact").pvalue, 4) == 0.0129


def test_exact2x2_presidential_example_matches_scipy_binomtest() -> None:
    # exact2x2 example x <- matrix(c(794, 86, 150, 570), 2, 2): b = 150, c = 86.
    ours = mcnemar_test(150, 86).pvalue_exact
    assert ours == pytest.approx(stats.binomtest(150, 236, 0.5).pvalue, rel=1e-12)
    assert ours < 1e-4


def test_no_discordant_pair_gives_pvalue_one() -> None:
    for alternative in ("two-sided", "less", "greater"):
        t = mcnemar_test(0, 0, alternative=alternative)
        assert (t.pvalue_exact, t.pvalue_midp) == (1.0, 1.0)


def test_equal_counts_use_minimum_likelihood_midp() -> None:
    # b = c: mid-p = 1 - f(b)/2 (Fagerland et al. R code); exact = 1.
    t = mcnemar_test(3, 3)
    assert t.pvalue_exact == 1.0
    assert t.pvalue_midp == pytest.approx(1 - 0.5 * stats.binom.pmf(3, 6, 0.5))


@given(st.integers(0, 60), st.integers(0, 60))
def test_two_sided_exact_matches_statsmodels(b: int, c: int) -> None:
    expected = mcnemar([[10, b], [c, 10]], exact=True).pvalue
    assert mcnemar_test(b, c).pvalue_exact == pytest.approx(min(1.0, expected), rel=1e-10, abs=1e-15)


@given(st.integers(0, 80), st.integers(0, 80))
def test_one_sided_pvalues_are_binomial_tails(b: int, c: int) -> None:
    m = b + c
    less = mcnemar_test(b, c, alternative="less")
    greater = mcnemar_test(b, c, alternative="greater")
    if m == 0:
        return
    assert less.pvalue_exact == pytest.approx(stats.binomtest(c, m, 0.5, alternative="less").pvalue, rel=1e-10)
    assert greater.pvalue_exact == pytest.approx(stats.binomtest(c, m, 0.5, alternative="greater").pvalue, rel=1e-10)
    # mid-p: subtract half the probability of the observed count.
    half = 0.5 * stats.binom.pmf(c, m, 0.5)
    assert less.pvalue_midp == pytest.approx(less.pvalue_exact - half, abs=1e-12)
    assert less.pvalue_midp + greater.pvalue_midp == pytest.approx(1.0, abs=1e-12)


@given(st.integers(0, 80), st.integers(0, 80))
def test_two_sided_is_swap_symmetric_and_midp_below_exact(b: int, c: int) -> None:
    t, swapped = mcnemar_test(b, c), mcnemar_test(c, b)
    assert (t.pvalue_exact, t.pvalue_midp) == pytest.approx(
        (swapped.pvalue_exact, swapped.pvalue_midp), rel=1e-12, abs=1e-15
    )
    assert 0 < t.pvalue_midp <= t.pvalue_exact <= 1
    assert mcnemar_test(b, c, alternative="less").pvalue_exact == pytest.approx(
        mcnemar_test(c, b, alternative="greater").pvalue_exact, rel=1e-12, abs=1e-15
    )


def test_vectorised_pvalues_equal_scalar_ones() -> None:
    rng = np.random.default_rng(3)
    b, c = rng.integers(0, 40, 50), rng.integers(0, 40, 50)
    exact, midp = mcnemar_pvalues(b, c, alternative="greater")
    for i in range(50):
        t = mcnemar_test(int(b[i]), int(c[i]), alternative="greater")
        assert (exact[i], midp[i]) == pytest.approx((t.pvalue_exact, t.pvalue_midp), abs=1e-15)


def test_smallest_reachable_pvalues_and_discordant_needed() -> None:
    assert min_exact_pvalue(6) == 2**-5
    assert min_exact_pvalue(6, alternative="greater") == 2**-6
    assert min_exact_pvalue(0) == 1.0
    assert mcnemar_test(0, 6, method="exact").pvalue == min_exact_pvalue(6)
    assert (min_discordant_for(0.05), min_discordant_for(0.05, method="midp")) == (6, 5)
    assert min_discordant_for(0.01) == 8  # 2^-7 = 0.0078 <= 0.01 < 2^-6


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((-1, 2), "b must be a non-negative integer (got -1)"),
        ((1.5, 2), "b must be a non-negative integer (got 1.5)"),
        ((1, True), "c must be a non-negative integer (got True)"),
    ],
)
def test_bad_counts_are_refused(args: tuple[object, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        mcnemar_test(*args)  # type: ignore[arg-type]


def test_bad_alternative_is_refused() -> None:
    with pytest.raises(ValueError, match=r"alternative must be one of two-sided, less, greater \(got 'worse'\)"):
        mcnemar_test(1, 2, alternative="worse")  # type: ignore[arg-type]


def test_method_chooses_the_reported_pvalue_of_armitage_berry_1994() -> None:
    # Armitage & Berry (1994, p. 127): exact two-sided P = 0.0129 (see the module docstring).
    exact, midp = mcnemar_test(2, 12, method="exact"), mcnemar_test(2, 12, method="midp")
    assert (exact.method, round(exact.pvalue, 4)) == ("exact", 0.0129)
    assert (midp.method, midp.pvalue) == ("midp", midp.pvalue_midp)
    assert mcnemar_test(2, 12).method == "midp"  # mid-p stays the default (Fagerland et al. 2013)


@pytest.mark.parametrize(("midp", "method"), [(False, "exact"), (True, "midp")])
def test_deprecated_midp_switch_warns_and_gives_the_same_numbers(midp: bool, method: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"mcnemar_test\(midp={midp}\) is deprecated .* use method='{method}'"):
        old = mcnemar_test(2, 12, midp=midp)
    assert old == mcnemar_test(2, 12, method=method)  # type: ignore[arg-type]
    with pytest.warns(DeprecationWarning, match=r"McNemarTest.midp is deprecated; read McNemarTest.method"):
        assert old.midp is midp


def test_deprecated_midp_accepts_what_worked_before_numpy_booleans_and_0_1() -> None:
    with pytest.warns(DeprecationWarning, match=r"mcnemar_test\(midp=False\) is deprecated"):
        assert mcnemar_test(2, 12, midp=np.False_).method == "exact"  # type: ignore[arg-type]
    with pytest.warns(DeprecationWarning, match=r"mcnemar_test\(midp=True\) is deprecated"):
        assert mcnemar_test(2, 12, midp=1).method == "midp"  # type: ignore[arg-type]


def test_contradicting_midp_and_method_and_unknown_methods_are_refused() -> None:
    with (
        pytest.warns(DeprecationWarning, match="deprecated"),
        pytest.raises(ValueError, match=r"midp=True contradicts method='exact'"),
    ):
        mcnemar_test(2, 12, method="exact", midp=True)
    with pytest.raises(TypeError, match=r"midp must be True or False \(got 'no'\)"):
        mcnemar_test(2, 12, midp="no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"midp must be True or False \(got \[\]\)"):
        mcnemar_test(2, 12, midp=[])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"method must be one of midp, exact \(got 'mid-p'\)"):
        mcnemar_test(2, 12, method="mid-p")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"method must be one of midp, exact \(got True\)"):
        min_exact_pvalue(3, method=True)  # type: ignore[arg-type]


def test_min_discordant_for_checks_alpha_with_the_vocabulary() -> None:
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 0.5\] \(got 0.6\)"):
        min_discordant_for(0.6)
    with pytest.raises(TypeError, match=r"alpha must be a number in \(0, 0.5\] \(got '0.05'\)"):
        min_discordant_for("0.05")  # type: ignore[arg-type]
