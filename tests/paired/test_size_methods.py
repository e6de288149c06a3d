"""The valid tests of issue 12: exact unconditional NI, the bounded-mean betting test, weighted Holm.

Sources of the expected values
------------------------------
- Exact unconditional NI (Hsueh, Liu & Chen 2001): no R package at hand here computes the paired
  exact unconditional NI test (R ``exact2x2`` has the conditional McNemar only), so the p-values
  are checked against a brute-force computation by separate code: every (b, c) table of n units
  enumerated with the trinomial pmf written out, Tango's statistic from
  :func:`gatestats.paired.tango_statistic` (the scalar, independently tested form), and the
  supremum over a 2,001-point nuisance grid.
- Tango's asymptotic test at N = 20, margin 0.2, one-sided 0.05: exact size 0.0692, the issue's
  independent figure (0.069).
- Bounded-mean e-values: the product formula written out by hand for three units;
  ``Comparison.mean_difference_pvalues`` (the gate's test at margin 0 with several trials) against
  :func:`bounded_mean_pvalues` on the same per-case differences and its doctest value (7.6e-05).
- Weighted Holm: equal alphas reproduce R ``p.adjust(p, "holm")`` (via :func:`adjust_pvalues`,
  itself checked against statsmodels); unequal alphas by hand from the step-down rule.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from gatestats.paired import adjust_pvalues, compare, tango_statistic
from gatestats.paired.exact_unconditional import (
    boundary_size,
    exact_unconditional_pvalues,
    rejection_cut,
    tango_statistics,
)
from gatestats.paired.multiplicity import adjust_pvalues_weighted
from gatestats.paired.noninferiority import (
    bounded_mean_evalues,
    bounded_mean_pvalues,
    noninferiority_bounded_mean,
    noninferiority_test,
)
from tests.paired.conftest import trial_records


def _brute_force_eu(b_obs: int, c_obs: int, n: int, margin: float) -> float:
    t_obs = tango_statistic(b_obs, c_obs, n, -margin)
    tables = [(b, c) for b in range(n + 1) for c in range(n + 1 - b)]
    region = [(b, c) for b, c in tables if tango_statistic(b, c, n, -margin) >= t_obs - 1e-9]
    bs = np.array([b for b, _ in region])
    cs = np.array([c for _, c in region])
    log_coef = np.array([math.lgamma(n + 1) - math.lgamma(b + 1) - math.lgamma(c + 1) - math.lgamma(n - b - c + 1)
                         for b, c in region])  # fmt: skip
    best = 0.0
    for theta in np.linspace(0.0, (1 - margin) / 2, 2001):
        p_b, p_c = theta + margin, theta
        p_a = 1 - p_b - p_c
        with np.errstate(divide="ignore"):
            logs = log_coef + bs * math.log(p_b) + np.where(cs > 0, cs * np.log(max(p_c, 1e-300)), 0.0)
            logs = logs + np.where(n - bs - cs > 0, (n - bs - cs) * np.log(max(p_a, 1e-300)), 0.0)
        best = max(best, float(np.exp(logs).sum()))
    return best


@pytest.mark.parametrize(
    ("b", "c", "n", "margin"), [(1, 3, 12, 0.2), (0, 0, 15, 0.2), (2, 1, 20, 0.1), (5, 2, 25, 0.15)]
)
def test_exact_unconditional_pvalue_matches_brute_force_enumeration(b: int, c: int, n: int, margin: float) -> None:
    p, _ = exact_unconditional_pvalues(b, c, n, margin=margin)
    assert p == pytest.approx(_brute_force_eu(b, c, n, margin), abs=2e-5)


def test_tango_statistic_is_monotone_in_each_discordant_count() -> None:
    # The O(n) tail sum relies on T rising in c and falling in b (here on every table up to n = 60).
    for n in (7, 30, 60):
        for margin in (0.02, 0.1, 0.3):
            b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
            t = np.where(b + c <= n, tango_statistics(b, c, n, -margin), np.nan)
            for row in range(n + 1):
                assert (np.diff(t[row, : n - row + 1]) >= -1e-12).all()
                assert (np.diff(t[: n - row + 1, row]) <= 1e-12).all()


@pytest.mark.slow  # a size study (issue 28, item 3: out of the fast loop)
def test_tango_asymptotic_size_reaches_the_issue_figure_and_exact_test_stays_within_alpha() -> None:
    cut = rejection_cut(20, 0.2, float(stats.norm.isf(0.05)))
    assert boundary_size(20, 0.2, cut) == pytest.approx(0.0692, abs=5e-5)  # issue 12: 0.069
    # The exact test's region at alpha: every table whose exact p-value is at most alpha.
    n, margin, alpha = 10, 0.2, 0.05
    pvalues = {(b, c): exact_unconditional_pvalues(b, c, n, margin=margin)[0]
               for b in range(n + 1) for c in range(n + 1 - b)}  # fmt: skip
    t_min = min(tango_statistic(b, c, n, -margin) for (b, c), p in pvalues.items() if p <= alpha)
    size = boundary_size(n, margin, rejection_cut(n, margin, t_min))
    assert size <= alpha
    assert size > 0.01  # not vacuous


def test_auto_noninferiority_is_exact_unconditional_and_says_cases_needed() -> None:
    t = noninferiority_test(16, 6, 161, margin=0.15)
    assert (t.method, round(t.pvalue or 0, 4), t.non_inferior) == ("exact_unconditional", 0.0041, True)
    assert t.pvalue_worse is not None
    assert t.pvalue_worse > 0.99
    small = noninferiority_test(0, 0, 10, margin=0.15, alpha=0.05)
    assert (small.status, small.non_inferior) == ("cannot_resolve", None)
    assert small.cases_needed is not None
    assert small.reason is not None
    assert small.reason.startswith("even with no case worse (b = c = 0) the exact test cannot show non-inferiority")
    assert noninferiority_test(0, 0, small.cases_needed, margin=0.15, alpha=0.05).non_inferior is True


def test_bounded_mean_evalue_is_the_mixture_of_betting_products() -> None:
    y = np.array([0.3, -0.2, 0.1])
    lower, grid = 0.9, 3
    lams = [0.95 * j / (grid * lower) for j in (1, 2, 3)]
    expected = sum(math.prod(1 + lam * v for v in y) for lam in lams) / grid
    assert float(bounded_mean_evalues(y, lower=lower, n_grid=grid)) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match=r"units must be at least -lower with lower > 0 \(got lower=0.5, min=-0.6\)"):
        bounded_mean_evalues([-0.6], lower=0.5)


def test_bounded_mean_test_keeps_its_level_when_one_case_in_twenty_breaks() -> None:
    # Least favourable shape: a share `margin` of units at -1, the rest 0 (mean exactly -margin).
    rng = np.random.default_rng(7)
    margin, alpha, n, reps = 0.05, 0.05, 150, 6000
    d = -(rng.random((reps, n)) < margin).astype(float)
    p = np.minimum(1.0, 1 / bounded_mean_evalues(d + margin, lower=1 - margin))
    rate = float((p <= alpha).mean())
    assert rate <= alpha + 2 * math.sqrt(alpha * (1 - alpha) / reps)
    clean = noninferiority_bounded_mean(np.zeros(n), margin=margin, alpha=alpha)
    assert clean.non_inferior is True  # a sample with nothing worse does pass at 150 cases


def test_bounded_mean_test_refuses_unresolvable_margins_and_bad_units() -> None:
    r = noninferiority_bounded_mean(np.zeros(40), margin=0.05, alpha=0.05)
    assert (r.status, r.cases_needed, r.non_inferior) == ("cannot_resolve", 91, None)
    assert r.reason == (
        "even if no case were worse (all differences 0) the bounded-mean test cannot show non-inferiority by 0.05 "
        "at alpha 0.05 with 40 independent cases: at least 91 are needed"
    )
    with pytest.raises(ValueError, match=r"sums must be non-empty, one per unit, within \[-size, size\]"):
        noninferiority_bounded_mean([1.5], margin=0.1)
    with pytest.raises(ValueError, match=r"margin must be a number in \[0, 1\) \(got -0.1\)"):
        bounded_mean_pvalues([0.1], margin=-0.1)


def test_bounded_mean_pvalues_at_margin_zero_show_a_clear_improvement_only() -> None:
    better, worse = bounded_mean_pvalues(np.full(60, 0.3), margin=0.0)
    assert better < 0.001
    assert worse == 1.0
    same = bounded_mean_pvalues(np.zeros(500), margin=0.0)
    assert same == (1.0, 1.0)


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8))
def test_weighted_holm_with_equal_alphas_is_holm(p: list[float]) -> None:
    assert np.allclose(adjust_pvalues_weighted(p, [0.05] * len(p)), adjust_pvalues(p, method="holm"))
    assert np.allclose(adjust_pvalues_weighted(p, [0.05] * len(p), method="bonferroni"),
                       adjust_pvalues(p, method="bonferroni"))  # fmt: skip


def test_weighted_holm_unequal_alphas_by_hand() -> None:
    # alphas (0.05, 0.01): step 1 tests 0.004 against 0.01 * 0.05 / 0.06; step 2 tests 0.03 against 0.05.
    assert adjust_pvalues_weighted([0.03, 0.004], [0.05, 0.01]).round(6).tolist() == [0.03, 0.0048]
    # The strict rule alone is never tested above its own alpha.
    assert adjust_pvalues_weighted([0.0001, 0.02], [0.05, 0.01]).round(6).tolist() == [0.00012, 0.02]
    with pytest.raises(ValueError, match=r"one alpha per p-value is needed \(got 2 p-values and 1 alphas\)"):
        adjust_pvalues_weighted([0.1, 0.2], [0.05])


def test_weighted_holm_controls_family_and_own_levels_under_the_global_null() -> None:
    rng = np.random.default_rng(11)
    alphas = np.array([0.05, 0.05, 0.01, 0.01])
    p = rng.random((40_000, alphas.size))
    rejected = np.array([adjust_pvalues_weighted(row, alphas) <= alphas for row in p])
    se = math.sqrt(0.05 * 0.95 / p.shape[0])
    assert rejected.any(axis=1).mean() <= 0.05 + 2 * se
    strict = rejected[:, 2:].mean(axis=0)
    assert (strict <= 0.01 + 2 * math.sqrt(0.01 * 0.99 / p.shape[0])).all()


def test_comparison_mean_difference_pvalues_is_the_bounded_mean_test_on_its_cases() -> None:
    # 30 cases, the baseline passes 1 of 2 trials and the candidate 2 of 2: per-case difference 0.5,
    # the doctest of bounded_mean_pvalues ([0.5] * 30 at margin 0: 7.6e-05 and 1.0).
    records = trial_records({"base": [[1, 0]] * 30, "cand": [[1, 1]] * 30})
    cmp = compare(records, baseline="base", candidate="cand")
    assert [round(p, 6) for p in cmp.mean_difference_pvalues()] == [7.6e-05, 1.0]
    assert cmp.mean_difference_pvalues() == bounded_mean_pvalues([0.5] * 30, margin=0.0)
    assert cmp.mean_difference_pvalues(margin=0.1) == bounded_mean_pvalues([0.5] * 30, margin=0.1)


def test_comparison_mean_difference_pvalues_sums_differences_per_case_group() -> None:
    # Three groups of two cases: the unit sums are (1.0, 1.0, 0.5) with two cases each.
    base = [[0, 1], [0, 1], [0, 1], [0, 1], [1, 1], [0, 1]]
    cand = [[1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1]]
    records = trial_records({"base": base, "cand": cand}, groups=["g1", "g1", "g2", "g2", "g3", "g3"])
    cmp = compare(records, baseline="base", candidate="cand")
    assert cmp.clustered
    assert cmp.mean_difference_pvalues() == bounded_mean_pvalues([1.0, 1.0, 0.5], [2, 2, 2], margin=0.0)


def test_comparison_mean_difference_pvalues_refuses_undefined_cases_and_bad_margins() -> None:
    records = trial_records({"base": [[1, 0], [1]], "cand": [[1, 1], [0, 1]]})
    undefined = compare(records, baseline="base", candidate="cand", k=2)
    assert undefined.status == "insufficient_evidence"
    with pytest.raises(ValueError, match=r"'base' vs 'cand' has no per-case differences: the per-case estimate"):
        undefined.mean_difference_pvalues()
    fine = compare(trial_records({"base": [[1, 0]] * 5, "cand": [[1, 1]] * 5}), baseline="base", candidate="cand")
    with pytest.raises(ValueError, match=r"margin must be a number in \[0, 1\) \(got 1.0\)"):
        fine.mean_difference_pvalues(margin=1.0)
