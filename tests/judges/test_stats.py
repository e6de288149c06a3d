"""Reference values for the small procedures: intervals, kappa, sign test, paired difference."""

from __future__ import annotations

import re
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from gatestats.errors import InsufficientEvidenceError
from gatestats.judges import (
    clopper_pearson_interval,
    cohens_kappa,
    paired_difference_interval,
    proportion,
    sign_test,
)

# Newcombe (1998a), Statistics in Medicine 17, 857-872, Table II: method 3 (Wilson score, no
# continuity correction; R prop.test(x, n, correct = FALSE)) and method 5 (Clopper-Pearson; R
# binom.test(x, n)$conf.int), to 4 decimals.
NEWCOMBE_TABLE_II = [
    # x, n, wilson, clopper-pearson
    (81, 263, (0.2553, 0.3662), (0.2527, 0.3676)),
    (15, 148, (0.0624, 0.1605), (0.0578, 0.1617)),
    (0, 20, (0.0, 0.1611), (0.0, 0.1684)),
    (1, 29, (0.0061, 0.1718), (0.0009, 0.1776)),
]


@pytest.mark.parametrize(("x", "n", "wilson", "exact"), NEWCOMBE_TABLE_II)
def test_intervals_match_newcombe_1998_table_2(
    x: int, n: int, wilson: tuple[float, float], exact: tuple[float, float]
) -> None:
    w = proportion(x, n)
    cp = proportion(x, n, method="clopper-pearson")
    assert w.ci_low is not None
    assert w.ci_high is not None
    assert cp.ci_low is not None
    assert cp.ci_high is not None
    assert (round(w.ci_low, 4), round(w.ci_high, 4)) == wilson
    assert (round(cp.ci_low, 4), round(cp.ci_high, 4)) == exact
    assert w.estimate == cp.estimate == x / n
    assert (w.numerator, w.n, w.status) == (x, n, "ok")


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))), st.sampled_from([0.8, 0.95]))
def test_intervals_agree_with_statsmodels(xn: tuple[int, int], level: float) -> None:
    x, n = xn
    for method, sm_method in (("wilson", "wilson"), ("clopper-pearson", "beta")):
        p = proportion(x, n, method=method, confidence_level=level)  # type: ignore[arg-type]
        low, high = proportion_confint(x, n, alpha=1 - level, method=sm_method)
        assert p.ci_low == pytest.approx(low, abs=1e-9)
        assert p.ci_high == pytest.approx(high, abs=1e-9)
        assert p.ci_low is not None
        assert p.ci_high is not None
        assert p.ci_low < p.ci_high


def test_zero_denominator_is_insufficient_evidence_not_zero() -> None:
    p = proportion(0, 0, undefined_reason="no items labelled fail")
    assert (p.estimate, p.ci_low, p.ci_high, p.status, p.reason) == (
        None,
        None,
        None,
        "insufficient_evidence",
        "no items labelled fail",
    )
    with pytest.raises(InsufficientEvidenceError, match=r"^no items labelled fail$"):
        p.confidence_interval(0.9)


def test_confidence_interval_method_reuses_the_stored_method() -> None:
    p = proportion(81, 263, method="clopper-pearson")
    assert p.confidence_interval(0.95) == (p.ci_low, p.ci_high)
    low90, high90 = p.confidence_interval(0.90)
    assert (p.ci_low or 0) < low90 < high90 < (p.ci_high or 1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: proportion(5, 4), "expected 0 <= x <= n and n >= 1 (got x=5, n=4)"),
        (
            lambda: proportion(1, 2, confidence_level=1.0),
            "confidence_level must lie strictly between 0 and 1 (got 1.0)",
        ),
        (lambda: proportion(1, 2, method="wald"), "method must be one of wilson, clopper-pearson (got 'wald')"),
        (lambda: clopper_pearson_interval(1.5, 3), "counts must be integers (got x=1.5, n=3)"),  # type: ignore[arg-type]
    ],
)
def test_proportion_rejects_bad_input(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()  # type: ignore[operator]


def test_kappa_matches_sas_agreement_example() -> None:
    # SAS/STAT PROC FREQ agreement example, as printed in statsmodels' test_inter_rater.py:
    # Kappa 0.4842, ASE 0.1380, 95% CL 0.2137-0.7547, ASE under H0 0.1484, Z 3.2626, two-sided p 0.0011.
    k = cohens_kappa([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    assert k.status == "ok"
    got = [k.estimate, k.se, k.ci_low, k.ci_high, k.se_null, k.z, k.pvalue]
    assert got == pytest.approx([0.4842, 0.1380, 0.2137, 0.7547, 0.1484, 3.2626, 0.0011], abs=6e-5)


def test_kappa_interval_at_another_level_reuses_the_standard_error() -> None:
    # SAS example: ASE 0.1380, so the 95% interval 0.2137-0.7547 narrows at 90% by z = 1.6449.
    k = cohens_kappa([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    assert k.confidence_interval(0.95) == (k.ci_low, k.ci_high)
    low, high = k.confidence_interval(0.90)
    assert (low, high) == pytest.approx((0.4842 - 1.6449 * 0.1380, 0.4842 + 1.6449 * 0.1380), abs=2e-4)
    refused = cohens_kappa([[3, 0, 0], [2, 0, 0], [1, 0, 0]])
    with pytest.raises(ValueError, match=r"^kappa has no interval: kappa is 0 by construction"):
        refused.confidence_interval()


@given(st.lists(st.integers(0, 40), min_size=4, max_size=4).filter(lambda c: min(c[0] + c[1], c[2] + c[3]) > 0))
def test_kappa_2x2_agrees_with_statsmodels(cells: list[int]) -> None:
    table = np.array(cells).reshape(2, 2)
    ours = cohens_kappa(table)
    if ours.status != "ok":  # undefined (p_e = 1) or perfect agreement: statsmodels returns NaN or SE 0
        assert ours.estimate is None
        assert ours.reason
        return
    theirs = sm_cohens_kappa(table)
    assert ours.estimate == pytest.approx(theirs.kappa, abs=1e-12)
    assert ours.se == pytest.approx(theirs.std_kappa, abs=1e-12)
    assert ours.se_null == pytest.approx(theirs.std_kappa0, abs=1e-12)


def test_kappa_is_undefined_when_everything_falls_in_one_category() -> None:
    k = cohens_kappa([[10, 0], [0, 0]])
    assert (k.status, k.estimate, k.ci_low) == ("insufficient_evidence", None, None)
    assert k.reason == "kappa is undefined: both ratings put all 10 items in one category (expected agreement 1)"


def test_kappa_with_one_constant_rater_is_zero_by_construction_without_interval() -> None:
    k = cohens_kappa([[0, 33], [0, 19]])  # the judge fails everything
    assert (k.status, k.estimate, k.se) == ("insufficient_evidence", None, None)
    assert k.reason == (
        "kappa is 0 by construction: the columns rating puts all 52 items in one category, so there is no "
        "agreement beyond chance to estimate and no interval"
    )


def test_kappa_with_perfect_agreement_has_no_zero_width_interval() -> None:
    k = cohens_kappa([[6, 0], [0, 4]])
    assert (k.status, k.ci_low, k.ci_high) == ("insufficient_evidence", None, None)
    assert k.reason == (
        "kappa = 1 on 10 items has asymptotic standard error 0 (no disagreement to estimate it from): "
        "no asymptotic interval"
    )


def _exact_two_sided(x: int, n: int) -> Fraction:
    tail = sum(comb(n, i) for i in range(min(x, n - x) + 1))
    return min(Fraction(1), Fraction(2 * tail, 2**n))


def test_sign_test_matches_zheng_2023_table_2_gpt4() -> None:
    # Zheng et al. (2023), Table 2, GPT-4 default prompt: 30.0% of 80 pairs biased to the first
    # position (24), 5.0% to the second (4). R: binom.test(24, 28)$p.value = 0.0001800.
    t = sign_test(24, 28)
    assert t.pvalue == pytest.approx(float(_exact_two_sided(24, 28)), rel=1e-12)
    assert t.pvalue == pytest.approx(0.00017999, abs=1e-8)
    assert t.midp_pvalue == pytest.approx(float(_exact_two_sided(24, 28) - Fraction(comb(28, 24), 2**28)), rel=1e-12)


@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_sign_test_is_exact_and_swap_symmetric(xn: tuple[int, int]) -> None:
    x, n = xn
    t, swapped = sign_test(x, n), sign_test(n - x, n)
    assert t.pvalue == pytest.approx(float(_exact_two_sided(x, n)), rel=1e-9, abs=1e-300)
    assert t.pvalue == swapped.pvalue
    assert t.midp_pvalue is not None
    assert t.pvalue is not None
    assert 0 <= t.midp_pvalue < t.pvalue <= 1


def test_sign_test_without_discordant_pairs_is_undefined() -> None:
    t = sign_test(0, 0, undefined_reason="nothing to test")
    assert (t.pvalue, t.midp_pvalue, t.status, t.reason) == (None, None, "insufficient_evidence", "nothing to test")


def test_paired_difference_matches_fagerland_2017_cavo_example() -> None:
    # Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency Tables, ch. 8,
    # Cavo et al. (2012): Newcombe square-and-add estimate -0.0621 (95% CI -0.1186 to -0.0046)
    # (R contingencytables::Newcombe_square_and_add_CI_paired_2x2).
    d = paired_difference_interval(59, 6, 16, 80)
    assert d.estimate is not None
    assert d.ci_low is not None
    assert d.ci_high is not None
    assert (round(d.estimate, 4), round(d.ci_low, 4), round(d.ci_high, 4)) == (-0.0621, -0.1186, -0.0046)


@given(st.lists(st.integers(0, 30), min_size=4, max_size=4).filter(lambda c: sum(c) > 0))
def test_paired_difference_interval_contains_estimate_and_flips_with_the_table(cells: list[int]) -> None:
    a, b, c, d = cells
    forward = paired_difference_interval(a, b, c, d)
    backward = paired_difference_interval(a, c, b, d)
    assert forward.ci_low is not None
    assert forward.ci_high is not None
    assert forward.estimate is not None
    assert -1 <= forward.ci_low <= forward.estimate <= forward.ci_high <= 1
    assert forward.ci_low < forward.ci_high
    assert backward.estimate == pytest.approx(-forward.estimate)
    assert backward.ci_low == pytest.approx(-forward.ci_high)


def test_kappa_pvalue_by_erfc_agrees_with_scipy_norm_sf() -> None:
    # Since session 40 the kappa test's p-value is erfc(|z| / sqrt 2) (calibrate imports no scipy): against
    # scipy's 2 * norm.sf(|z|), the code before, within 1e-12 relative (at most 5.7e-14 measured by h39 on a
    # grid of 37,000 points); z the same float in both.
    from scipy import stats as scipy_stats

    from gatestats.judges._stats import cohens_kappa

    rng = np.random.default_rng(40)
    for _ in range(300):
        table = rng.integers(0, 60, size=(2, 2)) + np.eye(2, dtype=np.int64) * rng.integers(0, 200)
        kappa = cohens_kappa(table)
        if kappa.z is None:
            continue
        expected = float(2 * scipy_stats.norm.sf(abs(kappa.z)))
        assert kappa.pvalue == pytest.approx(expected, rel=1e-12, abs=1e-300), table.tolist()
