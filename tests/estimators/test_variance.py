"""Tests of ``gatestats.estimators.variance_decomposition`` (between- vs within-case variance).

Model (Miller 2024, arXiv:2411.00640, section 3): case i has success probability θ_i; with
n_i trials, Var(p̂_i) = Var(θ) + E[θ(1-θ)]/n_i. Unbiased per-case within estimate
c(n-c)/(n(n-1)) (E[c(n-c)] = n(n-1)θ(1-θ) for c ~ Binomial(n, θ)), and
between = s²(p̂_i) - mean(within_i / n_i), floored at 0.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

from gatestats.estimators import variance_decomposition

AsFrame = Callable[[pl.DataFrame], pl.DataFrame | pl.LazyFrame]
FRAME_KINDS: dict[str, AsFrame] = {
    "DataFrame": lambda frame: frame,
    "LazyFrame": lambda frame: frame.lazy(),
}


@pytest.fixture(params=list(FRAME_KINDS), ids=list(FRAME_KINDS))
def as_frame(request: pytest.FixtureRequest) -> AsFrame:
    """Hand the function under test a DataFrame, then a LazyFrame (STYLE.md: both modes)."""
    return FRAME_KINDS[request.param]


def test_hand_computed_three_case_example(as_frame: AsFrame) -> None:
    # Cases (n, c) = (4, 1), (4, 2), (4, 4); p̂ = 1/4, 1/2, 1; mean 7/12.
    #   s²(p̂)       = ((-4/12)² + (-1/12)² + (5/12)²) / 2 = (42/144) / 2 = 7/48
    #   within_i     = c(n-c)/(n(n-1)) = 3/12, 4/12, 0          -> mean 7/36
    #   within_i / n = 1/16, 1/12, 0                             -> mean 7/144
    #   between      = 7/48 - 7/144 = 7/72
    #   total        = between + within / 4 = 7/72 + 7/144 = 7/48; share = (7/144) / (7/48) = 1/3
    summary = pl.DataFrame({"case_id": ["a", "b", "c"], "n": [4, 4, 4], "c": [1, 2, 4]})
    d = variance_decomposition(as_frame(summary))
    assert d.status == "ok"
    assert d.reason is None
    assert d.n_cases == 3
    assert d.mean_trials_per_case == 4.0
    assert d.between_case_variance == pytest.approx(float(Fraction(7, 72)), rel=1e-12)
    assert d.within_case_variance == pytest.approx(float(Fraction(7, 36)), rel=1e-12)
    assert d.share_from_trials == pytest.approx(1 / 3, rel=1e-12)
    assert d.advice == (
        "33% of the variance comes from trial-to-trial noise: more trials per case "
        "narrow the interval noticeably (more cases always help)"
    )


def test_deterministic_cases_have_no_within_case_variance(
    as_frame: AsFrame,
) -> None:
    # p̂ = 1, 0, 1, 0: s² = 1/3, within = 0, so between = 1/3 and no share from trials.
    d = variance_decomposition(as_frame(pl.DataFrame({"n": [4, 4, 4, 4], "c": [4, 0, 4, 0]})))
    assert d.status == "ok"
    assert d.within_case_variance == 0.0
    assert d.between_case_variance == pytest.approx(1 / 3, rel=1e-12)
    assert d.share_from_trials == 0.0
    assert d.advice == "only 0% of the variance comes from trial-to-trial noise: add cases, not trials"


def test_no_variation_at_all_says_so(as_frame: AsFrame) -> None:
    d = variance_decomposition(as_frame(pl.DataFrame({"n": [3, 5, 2], "c": [3, 5, 2]})))
    assert d.status == "ok"
    assert (d.between_case_variance, d.within_case_variance, d.share_from_trials) == (0.0, 0.0, 0.0)
    assert d.advice == "no variation observed; add cases to learn more"


def test_homogeneous_cases_give_between_case_variance_near_zero(
    as_frame: AsFrame,
) -> None:
    # Every case has θ = 0.3: Var(θ) = 0, E[θ(1-θ)] = 0.21. With 4000 cases x 10 trials the
    # sampling sd of s²(p̂) is about sqrt(2/N) * 0.021 ≈ 7e-4, so |between| < 0.003 is ~4 sd.
    rng = np.random.default_rng(20241101)
    n = np.full(4000, 10)
    c = rng.binomial(n, 0.3)
    d = variance_decomposition(as_frame(pl.DataFrame({"n": n, "c": c})))
    assert d.status == "ok"
    assert d.between_case_variance is not None
    assert 0.0 <= d.between_case_variance < 0.003
    assert d.within_case_variance == pytest.approx(0.21, abs=0.005)
    assert d.share_from_trials is not None
    assert d.share_from_trials > 0.85


def test_heterogeneous_cases_recover_the_variance_of_theta(
    as_frame: AsFrame,
) -> None:
    # θ ~ Beta(2, 3): Var(θ) = ab/((a+b)²(a+b+1)) = 6/150 = 0.04, E[θ(1-θ)] = 0.4 - 0.2 = 0.2.
    # Unequal trial counts (2..12) exercise the per-case n_i.
    rng = np.random.default_rng(7)
    theta = rng.beta(2.0, 3.0, size=6000)
    n = rng.integers(2, 13, size=6000)
    c = rng.binomial(n, theta)
    d = variance_decomposition(as_frame(pl.DataFrame({"n": n, "c": c})))
    assert d.status == "ok"
    assert d.between_case_variance == pytest.approx(0.04, abs=0.006)
    assert d.within_case_variance == pytest.approx(0.2, abs=0.006)
    assert d.mean_trials_per_case == pytest.approx(float(n.mean()))


def test_a_case_with_fewer_than_two_valid_trials_is_insufficient(
    as_frame: AsFrame,
) -> None:
    d = variance_decomposition(as_frame(pl.DataFrame({"n": [4, 1, 4, 0], "c": [2, 1, 3, 0]})))
    assert d.status == "insufficient_evidence"
    assert d.reason == "2 case(s) have fewer than 2 valid trials; within-case variance needs repeats"
    assert d.between_case_variance is None
    assert d.within_case_variance is None
    assert d.share_from_trials is None
    assert d.mean_trials_per_case == pytest.approx(9 / 4)
    assert d.advice == "run at least 2 trials of every case to split case and trial variance"


@pytest.mark.parametrize("n_cases", [0, 1])
def test_fewer_than_two_cases_is_insufficient(as_frame: AsFrame, n_cases: int) -> None:
    summary = pl.DataFrame({"n": [5] * n_cases, "c": [2] * n_cases}, schema={"n": pl.Int64, "c": pl.Int64})
    d = variance_decomposition(as_frame(summary))
    assert d.status == "insufficient_evidence"
    assert d.reason == f"needs at least 2 cases (got {n_cases})"
    assert d.n_cases == n_cases
    assert d.between_case_variance is None
    assert d.within_case_variance is None
