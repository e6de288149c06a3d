"""Confidence sequences for a bounded mean: reference values from the authors' package, properties.

Reference values: confseq 0.0.11 (Howard & Waudby-Smith, https://github.com/gostevehoward/confseq),
installed in a scratch venv (Python 3.11, numpy 1.26.4; it needed Boost headers and a newer
pybind11 to build), never a dependency of gatestats. Each expected value names the call that
produced it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.sequential.confseq import confidence_sequence, log_eprocess, lower_bound
from tests.hypothesis_counts import examples

X = np.array([0.9, 0.1, 0.7, 1.0, 0.4, 0.6, 0.8, 0.3, 1.0, 0.5] * 5)
AT = [9, 24, 49]  # after 10, 25 and 50 observations


def test_hoeffding_matches_confseq_predmix_hoeffding_cs() -> None:
    # confseq.predmix.predmix_hoeffding_cs(X, alpha=0.05)  (truncation 1, no running intersection)
    lower = [0.13611205458860642, 0.34582836539660206, 0.4257861576829307]
    upper = [1.0, 0.910087470782236, 0.833129222528612]
    cs = confidence_sequence(X, alpha=0.05, method="hoeffding", running_intersection=False)
    np.testing.assert_allclose(cs.lower[AT], lower, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cs.upper[AT], upper, rtol=0, atol=1e-12)


def test_empirical_bernstein_matches_confseq_predmix_lower_cs_with_the_papers_centering() -> None:
    # The paper's PrPl-EB (Waudby-Smith & Ramdas 2024, Theorem 2): v_i = 4 (x_i - mu_hat_{i-1})^2 with the
    # regularised mu_hat of their eq. (26). Computed with the authors' generic predictable-mixture bound:
    #   t = arange(1, 51); mu = (0.5 + cumsum(y)) / (t + 1); mu_prev = append(0.5, mu[:-1])
    #   confseq.predmix.predmix_lower_cs(y, v=4 * (y - mu_prev) ** 2,
    #       lambdas_fn=lambda z: confseq.betting_strategies.lambda_predmix_eb(z, truncation=0.5, alpha=0.025),
    #       psi_fn=lambda lam: (-log(1 - lam) - lam) / 4, alpha=0.025)
    # with y = X for the lower bound and y = 1 - X (then 1 - bound) for the upper one.
    # (confseq's own predmix_empbern_twosided_cs centres v on the plain running mean started at 0; both are valid.)
    lower = [0.0, 0.29232607834444874, 0.44648697467221077]
    upper = [1.0, 0.9636739216555512, 0.8135130253277894]
    cs = confidence_sequence(X, alpha=0.05, method="empirical_bernstein", running_intersection=False)
    np.testing.assert_allclose(cs.lower[AT], lower, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cs.upper[AT], upper, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("x", "alpha", "at", "lower", "upper"),
    [
        # confseq.betting.betting_cs(X, alpha=0.05, breaks=1000)  (theta 1/2, trunc_scale 1/2, hedged max)
        (X, 0.05, AT, [0.305, 0.439, 0.506], [0.871, 0.787, 0.746]),
        # confseq.betting.betting_cs(array([1, 1, 0, 1, 1, 1, 0, 1, 1, 1] * 4), alpha=0.1, breaks=1000)
        (
            np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 1] * 4, dtype=float),
            0.1,
            [4, 19, 39],
            [0.248, 0.529, 0.613],
            [1.0, 0.970, 0.935],
        ),
    ],
)
def test_betting_matches_confseq_betting_cs_within_its_grid(
    x: np.ndarray, alpha: float, at: list[int], lower: list[float], upper: list[float]
) -> None:
    # confseq searches a grid of 1/1000 and widens by one step; our bisection is exact, so ours lies in
    # [theirs, theirs + 2/1000] (lower) and [theirs - 2/1000, theirs] (upper).
    cs = confidence_sequence(x, alpha=alpha, method="betting", running_intersection=False)
    assert np.all(cs.lower[at] >= np.array(lower) - 1e-9)
    assert np.all(cs.lower[at] <= np.array(lower) + 2e-3)
    assert np.all(cs.upper[at] <= np.array(upper) + 1e-9)
    assert np.all(cs.upper[at] >= np.array(upper) - 2e-3)


def test_the_bounds_shrink_and_betting_is_tightest_on_low_variance_data() -> None:
    rng = np.random.default_rng(7)
    x = rng.beta(45, 5, size=2000)  # mean 0.9, small variance
    widths = {}
    for method in ("hoeffding", "empirical_bernstein", "betting"):
        cs = confidence_sequence(x, alpha=0.05, method=method)
        width = cs.upper - cs.lower
        assert np.all(np.diff(width) <= 1e-12)  # running intersection: never wider
        assert width[1999] < width[199] < width[19]
        assert cs.lower[-1] < 0.9 < cs.upper[-1]
        widths[method] = width[-1]
    assert widths["betting"] < widths["empirical_bernstein"] < widths["hoeffding"]
    assert widths["betting"] < 0.02


@pytest.mark.parametrize("method", ["hoeffding", "empirical_bernstein", "betting"])
def test_the_lower_bound_crosses_m_exactly_when_the_e_process_reaches_one_over_alpha(method: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(0.3, 1.0, size=60)
    at = np.arange(60)
    bound = lower_bound(x, at, alpha=0.05, method=method)  # type: ignore[arg-type]
    for m in (0.4, 0.5, 0.55, 0.6, 0.7):
        crossed = log_eprocess(x, m, alpha=0.05, method=method) >= math.log(20)  # type: ignore[arg-type]
        clear = np.abs(bound - m) > 1e-9
        assert np.array_equal(crossed[clear], (bound > m)[clear])


@pytest.mark.parametrize("method", ["hoeffding", "empirical_bernstein", "betting"])
@pytest.mark.parametrize("mean", [0.02, 0.3, 0.5, 0.97])
def test_time_uniform_coverage_over_500_observations(method: str, mean: float) -> None:
    # P(exists t <= 500: the lower sequence at alpha excludes the true mean) <= alpha, Bernoulli data
    # (the extreme case of a bounded variable). Monte Carlo: 2000 replications, SE <= 0.0067 at alpha 0.1.
    rng = np.random.default_rng(11)
    x = (rng.random((2000, 500)) < mean).astype(float)
    alpha = 0.1
    missed = (log_eprocess(x, mean, alpha=alpha, method=method) >= math.log(1 / alpha)).any(axis=1)  # type: ignore[arg-type]
    assert missed.mean() <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / 2000)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=40), st.sampled_from(["hoeffding", "empirical_bernstein", "betting"])
)
def test_bounds_stay_in_the_unit_interval_and_ordered(values: list[float], method: str) -> None:
    cs = confidence_sequence(values, alpha=0.05, method=method)  # type: ignore[arg-type]
    assert np.all((cs.lower >= 0) & (cs.lower <= cs.upper) & (cs.upper <= 1))
    assert np.all(np.diff(cs.lower) >= 0)
    assert np.all(np.diff(cs.upper) <= 0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"x": [0.5, float("nan")]}, "x[1]: expected a finite number in [0, 1] (got nan)"),
        ({"x": [0.5, 1.5]}, "x[1]: expected a finite number in [0, 1] (got 1.5)"),
        ({"x": [0.5], "alpha": 1.0}, "alpha: expected a number in (0, 1) (got 1.0)"),
        (
            {"x": [0.5], "method": "bayes"},
            "method: expected one of 'betting', 'empirical_bernstein', 'hoeffding' (got 'bayes')",
        ),
        ({"x": [0.5], "alternative": "up"}, "alternative: expected 'two-sided', 'greater' or 'less' (got 'up')"),
    ],
)
def test_bad_input_is_named(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match="^" + __import__("re").escape(message) + "$"):
        confidence_sequence(**kwargs)  # type: ignore[arg-type]
