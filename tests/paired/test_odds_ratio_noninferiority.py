"""Conditional odds ratio, non-inferiority and resolution (``gatestats.paired``).

Sources of the expected values
------------------------------
- Ezra et al. (2010), n = [[7, 25], [2, 68]]: conditional OR n12/n21 = 12.5, transformed Clopper-Pearson
  exact CI (3.1169, 108.8892) (Fagerland, Lydersen & Laake 2017, ch. 8; contingencytables' test-ch8.R).
- Armitage & Berry (1994), b = 12, c = 2: R' = 6, exact 95% CI 1.335744 to 55.197091 (StatsDirect).
- R exact2x2 ``mcnemar.exact`` help example (b = 150, c = 86): checked against scipy's
  ``binomtest(150, 236).proportion_ci(method="exact")`` mapped to the odds scale (independent code).
- Non-inferiority: Tango (1998) states that his score test at delta0 = 0 is McNemar's test; at the
  lower bound of the two-sided 1 - 2 alpha Tango interval the one-sided p-value equals alpha
  (test-interval duality); both are checked, with an independent restricted MLE for the statistic.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from gatestats.paired import (
    conditional_odds_ratio,
    noninferiority_test,
    resolution,
    tango_interval,
    tango_statistic,
)
from gatestats.paired.noninferiority import noninferiority_case_level


def test_odds_ratio_matches_fagerland_2017_ezra_example() -> None:
    r = conditional_odds_ratio(2, 25)  # baseline-only n21 = 2, candidate-only n12 = 25
    assert r.estimate == 12.5
    assert (round(r.ci_low, 4), round(r.ci_high, 4)) == (3.1169, 108.8892)
    assert r.status == "ok"


def test_odds_ratio_matches_statsdirect_armitage_berry_example() -> None:
    r = conditional_odds_ratio(2, 12)
    assert r.estimate == 6.0
    assert (round(r.ci_low, 6), round(r.ci_high, 6)) == (1.335744, 55.197091)


def test_odds_ratio_matches_scipy_exact_binomial_interval() -> None:
    r = conditional_odds_ratio(86, 150)
    ci = stats.binomtest(150, 236).proportion_ci(confidence_level=0.95, method="exact")
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low / (1 - ci.low), ci.high / (1 - ci.high)), rel=1e-10)
    assert r.estimate == pytest.approx(150 / 86)


def test_odds_ratio_edges_are_explicit() -> None:
    none = conditional_odds_ratio(0, 0)
    assert (none.status, none.estimate, none.ci_low, none.ci_high) == ("insufficient_evidence", None, None, None)
    assert "not estimable" in (none.reason or "")
    unbounded = conditional_odds_ratio(0, 4)
    assert unbounded.upper_unbounded
    assert unbounded.estimate is None
    assert unbounded.ci_high is None
    assert unbounded.ci_low is not None
    assert unbounded.ci_low > 0
    zero = conditional_odds_ratio(4, 0)
    assert zero.estimate == 0.0
    assert zero.ci_low == 0.0
    assert zero.ci_high is not None


@pytest.mark.parametrize(
    ("b", "c", "level", "alternative", "method", "near"),
    [
        # z = 0 (a one-sided level of 0.5): the Wilson bound of c / (b + c) is the estimate, 1 when b = 0.
        (0, 17, 0.5, "greater", "transformed_wilson", (1, 17)),
        (0, 1, 0.5, "greater", "transformed_wilson", (1, 1)),
        # a level so low that c / (c + z^2) rounds to 1.
        (0, 17, 1e-9, "two-sided", "transformed_wilson", (1, 17)),
        # counts so large that the Clopper-Pearson bound 0.5^(1/c) rounds to 1 (at 10^15 it does not).
        (0, 10**17, 0.5, "greater", "exact", (0, 10**15)),
    ],
)
def test_odds_ratio_without_a_finite_lower_bound_is_insufficient_evidence(
    b: int, c: int, level: float, alternative: str, method: str, near: tuple[int, int]
) -> None:
    # Found in session 48 (h48-compare): `compare --confidence-level 0.5 --alternative greater` with no baseline-only
    # case ended in a ZeroDivisionError traceback (the lower bound mu/(1 - mu) at mu = 1).
    r = conditional_odds_ratio(b, c, confidence_level=level, alternative=alternative, method=method)  # type: ignore[arg-type]
    assert r.status == "insufficient_evidence"
    assert (r.ci_low, r.ci_high) == (None, None)
    assert "no finite lower bound" in (r.reason or "")
    # one step away from the edge the bound is finite
    ok = conditional_odds_ratio(*near, confidence_level=level, alternative=alternative, method=method)  # type: ignore[arg-type]
    assert ok.status == "ok"
    assert ok.ci_low is not None
    assert math.isfinite(ok.ci_low)


def _restricted_p_b(b: int, c: int, n: int, delta: float) -> float:
    from scipy import optimize

    def nll(p_b: float) -> float:
        return -(b * math.log(p_b) + c * math.log(p_b + delta) + (n - b - c) * math.log(1 - 2 * p_b - delta))

    low, high = max(0.0, -delta) + 1e-12, (1 - delta) / 2 - 1e-12
    return float(optimize.minimize_scalar(nll, bounds=(low, high), method="bounded", options={"xatol": 1e-14}).x)


def test_noninferiority_statistic_matches_independent_restricted_mle() -> None:
    b, c, n, margin = 16, 6, 161, 0.1
    p_b = _restricted_p_b(b, c, n, -margin)
    expected = (c - b + n * margin) / math.sqrt(n * (2 * p_b - margin * (1 + margin)))
    # Issue 12: ``auto`` is now the exact unconditional test; Tango's asymptotic p-value is asked for.
    t = noninferiority_test(b, c, n, margin=margin, method="tango_score")
    assert t.statistic == pytest.approx(expected, rel=1e-6)
    assert t.pvalue == pytest.approx(stats.norm.sf(expected), rel=1e-5)


@given(st.integers(0, 30), st.integers(0, 30), st.integers(1, 60))
def test_noninferiority_is_dual_to_tango_interval(b: int, c: int, concordant: int) -> None:
    n = b + c + concordant
    low, _ = tango_interval(b, c, n, confidence_level=0.95)
    if low <= -0.999 or -low < 1 / n:
        return
    # The duality holds for Tango's asymptotic test (``auto`` is the exact unconditional test since issue 12).
    at_bound = noninferiority_test(b, c, n, margin=-low, alpha=0.025, method="tango_score")
    assert at_bound.pvalue == pytest.approx(0.025, abs=1e-6)
    wider = noninferiority_test(b, c, n, margin=min(0.999, -low + 0.01), alpha=0.025, method="tango_score")
    assert wider.non_inferior is True


def test_noninferiority_decisions_and_resolution() -> None:
    assert noninferiority_test(16, 6, 161, margin=0.15).non_inferior is True
    assert noninferiority_test(16, 6, 161, margin=0.05).non_inferior is False
    fine = noninferiority_test(1, 1, 100, margin=0.005)  # 1/100 = 0.01 > 0.005
    assert (fine.status, fine.non_inferior) == ("cannot_resolve", None)
    assert fine.reason is not None
    assert "at least 200 cases" in fine.reason
    assert tango_statistic(5, 5, 100, 0.0) == 0.0


def test_case_level_noninferiority() -> None:
    t = noninferiority_case_level(-0.01, 0.01, 100, margin=0.05)
    assert t.statistic == pytest.approx(4.0)
    assert t.pvalue == pytest.approx(stats.t.sf(4.0, 99))
    assert t.non_inferior is True
    none = noninferiority_case_level(0.0, 0.0, 100, margin=0.05)
    assert (none.status, none.pvalue, none.non_inferior) == ("insufficient_evidence", None, None)


@pytest.mark.parametrize("margin", [0.0, 1.0, -0.1, 1.5, True])
def test_margin_outside_unit_interval_is_refused(margin: float) -> None:
    with pytest.raises(ValueError, match=rf"margin must be a number strictly between 0 and 1 \(got {margin!r}\)"):
        noninferiority_test(1, 2, 10, margin=margin)


def test_resolution_of_too_few_discordant_cases() -> None:
    # Bentur: 8 discordant cases resolve; 4 do not for the exact test (2^-3 = 0.125 > 0.05).
    assert resolution(21, 8, method="exact").status == "ok"
    r = resolution(21, 4, method="exact")
    assert r.status == "cannot_resolve"
    assert (r.discordant_needed, r.min_pvalue, r.cases_needed) == (6, 0.125, 32)
    assert "can reach at best p = 0.125" in (r.reason or "")
    zero = resolution(50, 0)
    assert zero.cases_needed == math.ceil(5 * 50 / 3)  # mid-p needs 5 discordant; rate < 3/50
    assert resolution(10, 5, method="midp").status == "ok"  # mid-p: 2^-5 = 0.031 <= 0.05


def test_resolution_of_a_margin_finer_than_one_case() -> None:
    r = resolution(400, 40, margin=0.002)
    assert (r.status, r.cases_needed) == ("cannot_resolve", 500)
    assert "finer than one case's weight 1/400" in (r.reason or "")
    assert resolution(400, 40, margin=0.0025).status == "ok"  # exactly one case's weight
