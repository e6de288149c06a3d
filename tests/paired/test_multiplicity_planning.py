"""Many comparisons with adjusted p-values, and planning (``gatestats.paired``).

Sources of the expected values
------------------------------
- Adjusted p-values: R's ``p.adjust`` definitions (holm, bonferroni, hochberg, BH) worked by hand for
  p = (0.01, 0.02, 0.03, 0.04, 0.05); property tests against statsmodels ``multipletests`` on random p-values.
- Connor (1987, p. 209) example as given by powerandsamplesize.com's McNemar calculator (Chow, Shao & Wang):
  p01 = 0.45, p10 = 0.05, alpha = 0.05 two-sided, power 0.80 -> 23 pairs; one-sided alpha 0.05, power 0.90 -> 23.
- Exact power: checked against complete enumeration of the trinomial (b, c, concordant) distribution.
- False blocks: the closed form 1 - (1 - e)^(N k) and scipy's binomial quantile.
"""

from __future__ import annotations

import gc
import math
from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests as _multipletests

from gatestats.paired import (
    adjust_pvalues,
    cases_needed,
    compare,
    compare_many,
    exact_power,
    false_block,
    mcnemar_pvalues,
    minimum_detectable_effect,
    power_curve,
)
from gatestats.paired.planning import _PowerAt, connor_cases
from tests.hypothesis_counts import examples
from tests.paired.conftest import SCHEMA, AsFrame, trial_records

P = [0.01, 0.02, 0.03, 0.04, 0.05]


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("holm", [0.05, 0.08, 0.09, 0.09, 0.09]),
        ("bonferroni", [0.05, 0.10, 0.15, 0.20, 0.25]),
        ("hochberg", [0.05, 0.05, 0.05, 0.05, 0.05]),
        ("bh", [0.05, 0.05, 0.05, 0.05, 0.05]),
    ],
)
def test_adjusted_pvalues_match_p_adjust_definitions(method: str, expected: list[float]) -> None:
    assert adjust_pvalues(P, method=method).tolist() == pytest.approx(expected, abs=1e-12)  # type: ignore[arg-type]


def multipletests(p: list[float], *, method: str) -> tuple[object, np.ndarray]:
    """statsmodels' ``multipletests``, without the full garbage collection its Holm step runs at every call.

    ``gc.collect()`` changes no value, and in a test process that has imported the whole suite it took
    ~0.1-0.3 s a call (issue 28, item 3: 8.9 CPU-s of the fast loop for the property test below).
    """
    with mock.patch.object(gc, "collect", return_value=0):
        return _multipletests(p, method=method)  # type: ignore[no-any-return]


@settings(max_examples=examples(30))
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_adjusted_pvalues_match_statsmodels_and_are_not_below_raw(p: list[float]) -> None:
    for ours, theirs in (
        ("holm", "holm"),
        ("bonferroni", "bonferroni"),
        ("hochberg", "simes-hochberg"),
        ("bh", "fdr_bh"),
    ):
        adjusted = adjust_pvalues(p, method=ours)  # type: ignore[arg-type]
        assert adjusted == pytest.approx(np.minimum(1, multipletests(p, method=theirs)[1]), abs=1e-12)
        assert (adjusted >= np.array(p) - 1e-15).all()
    assert (adjust_pvalues(p, method="holm") <= adjust_pvalues(p, method="bonferroni") + 1e-15).all()


def test_adjust_none_returns_the_raw_pvalues_as_a_copy() -> None:
    # R: p.adjust(p, "none") is the identity.
    raw = np.array([0.04, 0.001, 0.5, 1.0])
    adjusted = adjust_pvalues(raw, method="none")
    assert adjusted.tolist() == [0.04, 0.001, 0.5, 1.0]
    adjusted[0] = 0.9
    assert raw[0] == 0.04
    with pytest.raises(ValueError, match=r"p-values must lie in \[0, 1\] without NaN"):
        adjust_pvalues([0.1, float("nan")], method="none")


def test_adjust_refuses_bad_input() -> None:
    with pytest.raises(
        ValueError, match=r"correction must be one of holm, bonferroni, hochberg, bh, none \(got 'BH'\)"
    ):
        adjust_pvalues(P, method="BH")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"p-values must lie in \[0, 1\] without NaN"):
        adjust_pvalues([0.1, 1.5])


def _three_systems() -> pl.DataFrame:
    rng = np.random.default_rng(11)
    ease = rng.random(80)
    outcomes = {
        s: [[int(rng.random() < min(1, e + shift))] for e in ease] for s, shift in (("A", 0), ("B", 0.1), ("C", 0.3))
    }
    return trial_records(outcomes)


def test_all_pairs_and_vs_baseline_families(as_frame: AsFrame) -> None:
    records = _three_systems()
    many = compare_many(as_frame(records))
    assert [(x.baseline, x.candidate) for x in many.comparisons] == [("A", "B"), ("A", "C"), ("B", "C")]
    raw = [x.pvalue for x in many.comparisons]
    assert [x.pvalue_adjusted for x in many.comparisons] == pytest.approx(multipletests(raw, method="holm")[1])
    single = compare(as_frame(records), baseline="A", candidate="C")
    assert many.get("A", "C").pvalue == single.pvalue
    assert many.get("A", "C").diff == single.diff
    versus = compare_many(as_frame(records), family="vs_baseline", baseline="C", correction="bonferroni")
    assert [(x.baseline, x.candidate) for x in versus.comparisons] == [("C", "A"), ("C", "B")]
    assert all(x.correction == "bonferroni" for x in versus.comparisons)
    payload = versus.to_dict()
    assert isinstance(payload, list)
    assert {"baseline", "candidate", "pvalue_adjusted"} <= set(payload[0])
    assert versus.to_frame().height == 2


def test_many_comparisons_without_correction_keep_the_raw_pvalues() -> None:
    many = compare_many(_three_systems(), correction="none")
    assert all(x.correction == "none" for x in many.comparisons)
    assert [x.pvalue_adjusted for x in many.comparisons] == [x.pvalue for x in many.comparisons]


def test_many_comparisons_refuse_bad_requests() -> None:
    records = _three_systems()
    with pytest.raises(ValueError, match=r"family 'vs_baseline' needs a baseline \(got none\)"):
        compare_many(records, family="vs_baseline")
    with pytest.raises(ValueError, match=r"no records for system 'Z'"):
        compare_many(records, family="vs_baseline", baseline="Z")
    with pytest.raises(ValueError, match=r"at least two systems are needed for a comparison \(got \['A'\]\)"):
        compare_many(records, systems=["A"])
    with pytest.raises(
        ValueError, match=r"correction must be one of holm, bonferroni, hochberg, bh, none \(got 'fdr'\)"
    ):
        compare_many(records, correction="fdr")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"family must be one of all_pairs, vs_baseline \(got 'pairs'\)"):
        compare_many(records, family="pairs")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"family 'all_pairs' takes no baseline \(got 'A'\)"):
        compare_many(records, baseline="A")


def test_undefined_comparison_counts_in_the_family_with_pvalue_one() -> None:
    records = pl.concat(
        [
            trial_records({"A": [[1, 1]] * 30, "B": [[0, 0]] * 30}),
            pl.DataFrame(
                [("C", f"case-{i}", None, None, 0, 0, "passed") for i in range(30)], schema=SCHEMA, orient="row"
            ),
        ]
    )
    many = compare_many(records, k=2, metric="pass_hat_k")
    undefined = [x for x in many.comparisons if x.status == "insufficient_evidence" and x.pvalue is None]
    assert len(undefined) == 2
    assert all(x.pvalue_adjusted is None for x in undefined)
    defined = many.get("A", "B")
    assert defined.pvalue_adjusted == pytest.approx(min(1.0, 3 * (defined.pvalue or 0)))


def test_connor_sample_size_reproduces_published_example() -> None:
    assert math.ceil(connor_cases(-0.40, 0.50)) == 23  # p10 - p01 = 0.05 - 0.45 (sign irrelevant two-sided)
    assert math.ceil(connor_cases(0.40, 0.50, power=0.9, alternative="greater")) == 23
    plan = cases_needed(0.40, 0.50, test="exact")
    assert plan.n_connor == 23
    assert plan.exact_power_at_n_connor == pytest.approx(exact_power(23, 0.40, 0.50, test="exact"))
    assert (
        exact_power(plan.n_exact, 0.40, 0.50, test="exact")
        >= 0.8
        > exact_power(plan.n_exact - 1, 0.40, 0.50, test="exact")
    )


def _enumerated_power(n: int, delta: float, psi: float, alternative: str, test: str) -> float:
    p01, p10 = (psi + delta) / 2, (psi - delta) / 2
    total = 0.0
    for b in range(n + 1):
        c = np.arange(n + 1 - b)
        probs = stats.multinomial.pmf(np.stack([np.full(c.size, b), c, n - b - c], axis=1), n, [p10, p01, 1 - psi])
        exact, midp = mcnemar_pvalues(np.full(c.size, b), c, alternative=alternative)  # type: ignore[arg-type]
        total += float(probs[(midp if test == "midp" else exact) <= 0.05].sum())
    return total


@pytest.mark.parametrize(
    ("n", "delta", "psi", "alternative", "test"),
    [
        (23, 0.4, 0.5, "two-sided", "exact"),
        (30, -0.1, 0.3, "less", "midp"),
        (40, 0.1, 0.2, "two-sided", "midp"),
        (25, 0.15, 0.25, "greater", "exact"),
    ],
)
def test_exact_power_matches_complete_enumeration(
    n: int, delta: float, psi: float, alternative: str, test: str
) -> None:
    assert exact_power(n, delta, psi, alternative=alternative, test=test) == pytest.approx(  # type: ignore[arg-type]
        _enumerated_power(n, delta, psi, alternative, test), abs=1e-12
    )


def _cases_needed_by_exact_power(
    delta: float, psi: float, power: float, alpha: float, alternative: str, test: str
) -> int:
    """The search of ``cases_needed`` before issue 28 item 3 (session 38): public ``exact_power`` at every step."""

    def power_at(n: int) -> float:
        return exact_power(n, delta, psi, alpha=alpha, alternative=alternative, test=test)  # type: ignore[arg-type]

    low, high = 1, max(2, math.ceil(connor_cases(delta, psi, power=power, alpha=alpha, alternative=alternative) - 1e-9))  # type: ignore[arg-type]
    while power_at(high) < power:
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if power_at(mid) >= power else (mid, high)
    return low if power_at(low) >= power else high


@pytest.mark.parametrize(
    ("delta", "psi", "power", "alpha", "alternative", "test"),
    [
        (0.4, 0.5, 0.8, 0.05, "two-sided", "auto"),
        (0.05, 0.3, 0.8, 0.05, "two-sided", "midp"),
        (-0.1, 0.6, 0.95, 0.01, "less", "exact"),
        (0.25, 0.3, 0.5, 0.2, "greater", "midp"),
        (0.1, 0.05 + 0.1, 0.9, 0.05, "two-sided", "exact"),
    ],
)
def test_cases_needed_is_the_search_over_the_public_exact_power(
    delta: float, psi: float, power: float, alpha: float, alternative: str, test: str
) -> None:
    """``cases_needed`` keeps the rejection probabilities given m across its search (issue 28, item 3):
    the same numbers as the search calling ``exact_power`` at every step, bit for bit (648 plans compared
    with the previous implementation when it changed; benchmarks/RESULTS.md)."""
    plan = cases_needed(delta, psi, power=power, alpha=alpha, alternative=alternative, test=test)  # type: ignore[arg-type]
    assert plan.n_exact == _cases_needed_by_exact_power(delta, psi, power, alpha, alternative, test)
    resolved = plan.test
    assert plan.exact_power_at_n_connor == exact_power(
        plan.n_connor, delta, psi, alpha=alpha, alternative=alternative, test=resolved
    )  # type: ignore[arg-type]
    power_at = _PowerAt(delta, psi, alpha, alternative, resolved)  # type: ignore[arg-type]
    for n in (plan.n_exact, 1, 2 * plan.n_exact + 3, 17, plan.n_exact - 1, 2 * plan.n_exact + 3):
        if n >= 1:
            assert power_at(n) == exact_power(n, delta, psi, alpha=alpha, alternative=alternative, test=resolved)  # type: ignore[arg-type]


def test_minimum_detectable_effect_inverts_power() -> None:
    plan = minimum_detectable_effect(500, 0.2)
    assert plan.status == "ok"
    assert plan.mde_exact is not None
    assert plan.mde_connor is not None
    assert exact_power(500, plan.mde_exact, 0.2) == pytest.approx(0.8, abs=1e-4)
    assert math.ceil(connor_cases(plan.mde_connor, 0.2)) in (500, 501)
    small = minimum_detectable_effect(5, 0.2)
    assert small.status == "cannot_resolve"
    assert small.cases_needed_at_max_effect is not None
    assert "no difference can be detected" in (small.reason or "")


def test_false_block_closed_form_and_tolerance() -> None:
    plan = false_block(200, 4, 0.001)
    assert plan.false_block_all_k == pytest.approx(1 - 0.999**800)
    assert plan.tolerated_failures == stats.binom.ppf(0.95, 800, 0.001)
    assert plan.false_block_with_tolerance <= 0.05 < stats.binom.sf(plan.tolerated_failures - 1, 800, 0.001)
    assert false_block(10, 1, 0.0).false_block_all_k == 0.0


def test_power_curve_is_monotone_in_effect_and_cases() -> None:
    curve = power_curve([100, 400], [0.02, 0.05, 0.1], 0.2)
    assert curve.height == 6
    for n in (100, 400):
        powers = curve.filter(pl.col("n_cases") == n)["power"].to_list()
        assert powers == sorted(powers)
    assert (
        curve.filter(pl.col("delta") == 0.05)["power"].to_list()[0]
        < curve.filter(pl.col("delta") == 0.05)["power"].to_list()[1]
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: cases_needed(0.3, 0.2),
            r"delta must satisfy 0 < \|delta\| <= discordance \(got delta=0.3, discordance=0.2\)",
        ),
        (lambda: cases_needed(0.1, 0.2, alternative="less"), r"delta=0.1 points away from alternative 'less'"),
        (lambda: cases_needed(0.1, 0.2, power=1.2), r"power must lie strictly between 0 and 1 \(got 1.2\)"),
        (lambda: minimum_detectable_effect(0, 0.2), r"n_cases must be an integer in \[1, 10000000\] \(got 0\)"),
        (lambda: false_block(10, 0, 0.01), r"k must be an integer >= 1 \(got 0\)"),
        (lambda: false_block(10, 2, 1.0), r"error_rate must lie in \[0, 1\) \(got 1.0\)"),
    ],
)
def test_planning_refuses_bad_input(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
