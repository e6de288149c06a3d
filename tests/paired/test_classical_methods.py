"""Classical paired methods offered for reference: continuity-corrected McNemar, the SCAS interval,
the transformed-Wilson interval of the conditional odds ratio.

Sources of the reference values:

- R ``stats::mcnemar.test`` help page example (presidential approval, Agresti 2002 table 10.1):
  ``McNemar's chi-squared = 16.818, df = 1, p-value = 4.115e-05``; uncorrected 17.36 (Agresti).
- statsmodels ``mcnemar(table, exact=False, correction=True)`` (computed in the tests).
- ratesci paired-contrasts vignette (Laud; ``scorepairci(x = c(1, 1, 7, 12))``,
  ``rdpairci(...)$estimates``, ``orpairci(...)$estimates``) for the Bentur et al. (2009) data used by
  Fagerland, Lydersen & Laake (2014): SCAS -0.5281 to -0.0184, SCASu -0.5229 to -0.0262, AS(N-1)
  -0.5226 to -0.0183, AS(Tango) -0.5172 to -0.0260, score statistic at 0 = -2.070197 with
  two-sided p 0.03843393; transformed Wilson for b/c = 1/7: 0.02293156 to 0.8899597. ratesci's
  difference is condition 1 minus condition 2 with b = 1 the condition-1-only cell, i.e.
  baseline-minus-candidate here, so the signs flip and the odds ratio inverts.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from gatestats.paired import (
    compare,
    conditional_odds_ratio,
    mcnemar_asymptotic_test,
    scas_interval,
    scas_statistic,
    tango_interval,
)
from tests.paired.conftest import AsFrame, table_records

# --- continuity-corrected McNemar (Edwards 1948) ------------------------------------------------


def test_continuity_corrected_mcnemar_matches_r_mcnemar_test_example() -> None:
    # R: mcnemar.test(matrix(c(794, 86, 150, 570), nrow = 2)) -> 16.818, p-value = 4.115e-05
    t = mcnemar_asymptotic_test(86, 150)
    assert t.method == "continuity_corrected"
    assert t.statistic == pytest.approx(16.818, abs=5e-4)
    assert t.pvalue == pytest.approx(4.115e-05, rel=5e-4)
    assert t.z == pytest.approx(math.sqrt(63**2 / 236))
    # Agresti (2002, section 10.1): uncorrected z^2 = 17.36
    plain = mcnemar_asymptotic_test(86, 150, correction=False)
    assert (plain.method, round(plain.statistic or 0, 2)) == ("asymptotic", 17.36)


@pytest.mark.parametrize(("b", "c"), [(1, 7), (6, 16), (86, 150), (0, 3), (12, 2), (40, 41)])
@pytest.mark.parametrize("correction", [True, False])
def test_asymptotic_mcnemar_matches_statsmodels(b: int, c: int, correction: bool) -> None:
    reference = sm_mcnemar([[10, b], [c, 10]], exact=False, correction=correction)
    t = mcnemar_asymptotic_test(b, c, correction=correction)
    assert t.statistic == pytest.approx(float(reference.statistic), rel=1e-12)
    assert t.pvalue == pytest.approx(float(reference.pvalue), rel=1e-10)


def test_continuity_correction_is_not_applied_when_b_equals_c_as_in_r() -> None:
    # R applies no correction when x == t(x) (statistic 0, p 1); statsmodels subtracts 1 anyway.
    assert (mcnemar_asymptotic_test(5, 5).statistic, mcnemar_asymptotic_test(5, 5).pvalue) == (0.0, 1.0)
    assert float(sm_mcnemar([[1, 5], [5, 1]], exact=False, correction=True).pvalue) < 1


def test_one_sided_continuity_corrected_pvalues_correct_toward_the_null() -> None:
    greater = mcnemar_asymptotic_test(3, 12, alternative="greater")
    less = mcnemar_asymptotic_test(3, 12, alternative="less")
    assert greater.pvalue == pytest.approx(stats.norm.sf((12 - 3 - 1) / math.sqrt(15)))
    assert less.pvalue == pytest.approx(stats.norm.cdf((12 - 3 + 1) / math.sqrt(15)))
    # one-sided in the observed direction is half the two-sided p-value
    assert greater.pvalue == pytest.approx(mcnemar_asymptotic_test(3, 12).pvalue / 2)


def test_continuity_corrected_mcnemar_is_swap_symmetric_and_conservative_against_uncorrected() -> None:
    for b, c in [(1, 9), (4, 11), (20, 35)]:
        assert mcnemar_asymptotic_test(b, c).pvalue == mcnemar_asymptotic_test(c, b).pvalue
        assert (mcnemar_asymptotic_test(b, c).pvalue or 0) > (
            mcnemar_asymptotic_test(b, c, correction=False).pvalue or 0
        )


def test_asymptotic_mcnemar_without_discordant_units_is_insufficient_evidence() -> None:
    t = mcnemar_asymptotic_test(0, 0)
    assert (t.status, t.statistic, t.pvalue) == ("insufficient_evidence", None, None)
    assert t.reason == "no discordant unit (b = c = 0): the asymptotic McNemar statistic is undefined (0/0)"
    assert t.to_dict()["n_discordant"] == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"b": -1, "c": 2}, "b must be a non-negative integer (got -1)"),
        ({"b": 1, "c": 2.5}, "c must be a non-negative integer (got 2.5)"),
        ({"b": 1, "c": 2, "alternative": "both"}, "alternative must be one of"),
        ({"b": 1, "c": 2, "correction": "yes"}, "correction must be True or False (got 'yes')"),
    ],
)
def test_asymptotic_mcnemar_rejects_bad_input(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        mcnemar_asymptotic_test(**kwargs)  # type: ignore[arg-type]


# --- SCAS interval (Laud 2017; ratesci::pairbinci) ----------------------------------------------


@pytest.mark.parametrize(
    ("skew", "bcf", "expected"),
    [
        (True, True, (0.0184, 0.5281)),  # SCAS
        (True, False, (0.0262, 0.5229)),  # SCASu
        (False, True, (0.0183, 0.5226)),  # AS(N-1)
        (False, False, (0.0260, 0.5172)),  # AS(Tango)
    ],
)
def test_scas_variants_match_ratesci_vignette_bentur_example(
    skew: bool, bcf: bool, expected: tuple[float, float]
) -> None:
    low, high = scas_interval(1, 7, 21, skewness_correction=skew, variance_correction=bcf)
    assert (round(low, 4), round(high, 4)) == expected


def test_scas_score_at_zero_matches_ratesci_test_statistic() -> None:
    # scorepairci(c(1, 1, 7, 12))$pval: scorenull -2.070197, chisq 4.285714, pval2sided 0.03843393
    z = scas_statistic(1, 7, 21, 0.0)
    assert z == pytest.approx(2.070197, abs=1e-6)
    assert 2 * stats.norm.sf(z) == pytest.approx(0.03843393, abs=1e-8)
    # at delta0 = 0 the skewness term vanishes: the 'N-1' McNemar statistic (c - b)/sqrt((b + c) n/(n - 1))
    assert z == pytest.approx(6 / math.sqrt(8 * 21 / 20))


@pytest.mark.parametrize("n", [5, 12, 40])
def test_scas_without_corrections_is_tangos_interval(n: int) -> None:
    for b in range(0, n + 1, max(1, n // 5)):
        for c in range(0, n + 1 - b, max(1, n // 4)):
            plain = scas_interval(b, c, n, skewness_correction=False, variance_correction=False)
            assert plain == pytest.approx(tango_interval(b, c, n), abs=1e-9)


def test_scas_bounds_are_where_the_corrected_deviate_equals_the_quantile() -> None:
    z = stats.norm.isf(0.025)
    for b, c, n in [(1, 7, 21), (6, 16, 161), (0, 5, 30), (9, 2, 15)]:
        low, high = scas_interval(b, c, n)
        assert low <= (c - b) / n <= high
        if low > -1:
            assert scas_statistic(b, c, n, low) == pytest.approx(z, abs=1e-6)
        if high < 1:
            assert scas_statistic(b, c, n, high) == pytest.approx(-z, abs=1e-6)


def test_scas_is_antisymmetric_in_swapping_the_discordant_cells() -> None:
    for b, c, n in [(1, 7, 21), (3, 0, 10), (12, 30, 100)]:
        low, high = scas_interval(b, c, n)
        swapped = scas_interval(c, b, n)
        assert swapped == pytest.approx((-high, -low), abs=1e-9)


def test_scas_one_sided_bound_is_the_two_sided_bound_at_twice_alpha() -> None:
    low, high = scas_interval(6, 16, 161, confidence_level=0.90)
    assert scas_interval(6, 16, 161, confidence_level=0.95, alternative="greater") == pytest.approx((low, 1.0))
    assert scas_interval(6, 16, 161, confidence_level=0.95, alternative="less") == pytest.approx((-1.0, high))


def test_scas_stays_in_range_and_covers_the_estimate_for_every_small_table() -> None:
    for n in (2, 3, 7):
        for b in range(n + 1):
            for c in range(n + 1 - b):
                low, high = scas_interval(b, c, n)
                assert -1 <= low <= (c - b) / n <= high <= 1


def test_scas_needs_two_units_for_its_variance_correction() -> None:
    with pytest.raises(ValueError, match=r"needs at least 2 units \(got n=1\)"):
        scas_interval(0, 1, 1)
    assert scas_interval(0, 1, 1, variance_correction=False)[1] == 1.0


def test_scas_exact_coverage_is_near_nominal_with_balanced_tails() -> None:
    """Exact coverage by enumerating every table of N = 40 pairs (multinomial in b, c, rest)."""
    n = 40
    tables = [(b, c) for b in range(n + 1) for c in range(n + 1 - b)]
    bounds = {t: scas_interval(t[0], t[1], n) for t in tables}
    b_arr = np.array([t[0] for t in tables])
    c_arr = np.array([t[1] for t in tables])
    low = np.array([bounds[t][0] for t in tables])
    high = np.array([bounds[t][1] for t in tables])
    worst, misses = 1.0, []
    for p_b, p_c in [(0.05, 0.15), (0.1, 0.1), (0.2, 0.05), (0.15, 0.3), (0.3, 0.3)]:
        probs = stats.multinomial.pmf(np.stack([b_arr, c_arr, n - b_arr - c_arr], axis=1), n, [p_b, p_c, 1 - p_b - p_c])
        delta = p_c - p_b
        coverage = float(probs[(low <= delta) & (delta <= high)].sum())
        worst = min(worst, coverage)
        misses.append((float(probs[low > delta].sum()), float(probs[high < delta].sum())))
    assert worst > 0.93
    assert max(max(m) for m in misses) < 0.03  # neither tail misses much more than its 2.5% (max 0.0261)


def test_compare_offers_the_scas_interval_and_keeps_tango_as_default(as_frame: AsFrame) -> None:
    records = as_frame(table_records(1, 1, 7, 12))
    default = compare(records, baseline="base", candidate="cand")
    scas = compare(records, baseline="base", candidate="cand", interval="scas")
    assert default.interval.method == "tango"
    assert scas.interval.method == "scas"
    assert (round(scas.diff_ci_low or 0, 4), round(scas.diff_ci_high or 0, 4)) == (0.0184, 0.5281)
    assert scas.pvalue == default.pvalue  # the decision test does not change
    again = scas.confidence_interval(0.90)
    assert (again.method, again.ci_low) == ("scas", pytest.approx(scas_interval(1, 7, 21, confidence_level=0.9)[0]))


def test_compare_refuses_scas_with_several_trials_per_case() -> None:
    from tests.paired.conftest import trial_records

    records = trial_records({"base": [[1, 0], [0, 0], [1, 1]], "cand": [[1, 1], [0, 1], [1, 1]]})
    with pytest.raises(ValueError, match="interval 'scas' needs one trial per independent case"):
        compare(records, baseline="base", candidate="cand", interval="scas")


# --- transformed Wilson interval of the conditional odds ratio -----------------------------------


def test_transformed_wilson_matches_ratesci_vignette_bentur_example() -> None:
    r = conditional_odds_ratio(1, 7, method="transformed_wilson")
    assert (r.method, r.estimate) == ("transformed_wilson", 7.0)
    assert r.ci_low == pytest.approx(1 / 0.8899597, rel=1e-6)
    assert r.ci_high == pytest.approx(1 / 0.02293156, rel=1e-6)


@pytest.mark.parametrize(("b", "c"), [(2, 25), (6, 16), (10, 3), (40, 41)])
@pytest.mark.parametrize("level", [0.90, 0.95, 0.99])
def test_transformed_wilson_is_statsmodels_wilson_interval_mapped_to_odds(b: int, c: int, level: float) -> None:
    low, high = proportion_confint(c, b + c, alpha=1 - level, method="wilson")
    r = conditional_odds_ratio(b, c, confidence_level=level, method="transformed_wilson")
    assert r.ci_low == pytest.approx(low / (1 - low), rel=1e-9)
    assert r.ci_high == pytest.approx(high / (1 - high), rel=1e-9)


def test_transformed_wilson_is_shorter_than_the_exact_interval() -> None:
    for b, c in [(2, 25), (6, 16), (1, 7)]:
        exact = conditional_odds_ratio(b, c)
        wilson = conditional_odds_ratio(b, c, method="transformed_wilson")
        assert (exact.ci_low or 0) < (wilson.ci_low or 0)
        assert (wilson.ci_high or 0) < (exact.ci_high or 0)


def test_transformed_wilson_edges_are_explicit() -> None:
    none = conditional_odds_ratio(0, 0, method="transformed_wilson")
    assert (none.status, none.estimate, none.method) == ("insufficient_evidence", None, "transformed_wilson")
    unbounded = conditional_odds_ratio(0, 4, method="transformed_wilson")
    assert (unbounded.estimate, unbounded.ci_high, unbounded.upper_unbounded) == (None, None, True)
    assert unbounded.ci_low == pytest.approx(1.041271, abs=1e-6)  # Wilson lower of 4/4 is 0.51008
    zero = conditional_odds_ratio(4, 0, method="transformed_wilson")
    assert (zero.estimate, zero.ci_low) == (0.0, 0.0)
    with pytest.raises(ValueError, match=r"method must be one of exact, transformed_wilson \(got 'wilson'\)"):
        conditional_odds_ratio(1, 2, method="wilson")  # type: ignore[arg-type]


def test_compare_json_reports_the_classical_methods_beside_the_decision(as_frame: AsFrame) -> None:
    result = compare(as_frame(table_records(1, 1, 7, 12)), baseline="base", candidate="cand")
    out = result.to_dict()
    assert out["odds_ratio"]["method"] == "exact"
    reference = out["reference_methods"]
    assert reference["mcnemar_continuity_corrected"]["method"] == "continuity_corrected"
    assert reference["mcnemar_continuity_corrected"]["statistic"] == pytest.approx(25 / 8)  # (|7 - 1| - 1)^2 / 8
    assert reference["odds_ratio_transformed_wilson"]["ci_low"] == pytest.approx(1 / 0.8899597, rel=1e-6)
    assert out["pvalue"] == result.pvalue_midp  # the decision p-value is still mid-p


def test_compare_reports_no_classical_methods_with_several_trials_per_case() -> None:
    from tests.paired.conftest import trial_records

    records = trial_records({"base": [[1, 0], [0, 0], [1, 1]], "cand": [[1, 1], [0, 1], [1, 1]]})
    result = compare(records, baseline="base", candidate="cand")
    assert result.to_dict()["reference_methods"] is None


def test_asymptotic_mcnemar_pvalues_agree_with_scipy_within_1e_12() -> None:
    # Since session 40 the p-values are math.erfc (no scipy on compare's path): P(chi2_1 >= x) = erfc(sqrt(x/2)),
    # 1 - Phi(z) = erfc(z/sqrt 2)/2. Against scipy's chi2.sf / norm.sf / norm.cdf (the code before): at most
    # 4.2e-14 relative measured on this grid; 1e-12 asserted.
    from scipy import stats

    for b in range(0, 300, 7):
        for c in range(0, 300, 5):
            if b + c == 0:
                continue
            m = b + c
            for correction, k in ((True, 1.0), (False, 0.0)):
                two = mcnemar_asymptotic_test(b, c, correction=correction)
                assert two.pvalue == pytest.approx(
                    min(1.0, float(stats.chi2.sf(two.statistic, 1))), rel=1e-12, abs=1e-300
                )
                up = mcnemar_asymptotic_test(b, c, correction=correction, alternative="greater").pvalue
                assert up == pytest.approx(float(stats.norm.sf((c - b - k) / m**0.5)), rel=1e-12, abs=1e-300)
                down = mcnemar_asymptotic_test(b, c, correction=correction, alternative="less").pvalue
                assert down == pytest.approx(float(stats.norm.cdf((c - b + k) / m**0.5)), rel=1e-12, abs=1e-300)
