"""The rollback triggers of ``gatestats.sequential.monitor`` and the layer comparison (issue 25)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from statsmodels.stats.proportion import confint_proportions_2indep

from gatestats.sequential import (
    cost_per_accepted_values,
    count_trigger,
    layer_comparison,
    mean_trigger,
    one_sided_log_mixture,
    rate_trigger,
    vs_reference_level,
)
from gatestats.sequential.confseq import log_eprocess, lower_bound
from gatestats.sequential.eprocess import bernoulli_log_mixture
from tests.hypothesis_counts import examples

T_OPT, ALPHA = 500.0, 0.05


# --- the one-sided mixture e-process ---------------------------------------------------------------


@pytest.mark.parametrize(("s", "t", "p0"), [(0, 0, 0.3), (3, 10, 0.1), (12, 40, 0.5), (1, 200, 0.02), (190, 200, 0.9)])
def test_the_one_sided_mixture_is_the_core_mixture_restricted_to_the_alternative(s: int, t: int, p0: float) -> None:
    # sequential.eprocess's two-sided mixture, its prior truncated to [p0, 1] and renormalised:
    # the integral computed here by quadrature, independently of the closed form
    log_a = math.log(1 / ALPHA)
    rho = T_OPT * p0 * (1 - p0) / (2 * log_a + math.log(1 + 2 * log_a))
    r = max(rho - p0 * (1 - p0), 1e-3 * p0 * (1 - p0))
    prior = stats.beta(r / (1 - p0), r / p0)

    def ratio(q: float) -> float:
        return float(math.exp(s * math.log(q / p0) + (t - s) * math.log((1 - q) / (1 - p0))) * prior.pdf(q))

    integral, _ = integrate.quad(ratio, p0, 1, limit=200, points=[min(0.999, s / t if t else p0)])
    expected = math.log(integral / prior.sf(p0))
    got = float(one_sided_log_mixture(s, t, p0, t_opt=T_OPT, alpha_opt=ALPHA))
    assert got == pytest.approx(expected, abs=1e-6)
    two_sided = float(bernoulli_log_mixture(s, t, p0, t_opt=T_OPT, alpha_opt=ALPHA))
    tails = stats.beta.logsf(p0, r / (1 - p0) + s, r / p0 + t - s) - prior.logsf(p0)
    assert got == pytest.approx(two_sided + tails, abs=1e-9)


@pytest.mark.parametrize(("p0", "t"), [(0.02, 60), (0.5, 40), (0.9, 50)])
def test_the_one_sided_mixture_has_expectation_one_at_the_boundary_and_below_one_inside_the_null(
    p0: float, t: int
) -> None:
    # E_p[E_t] = sum_s Binom(s; t, p) E(s, t): exactly 1 at p = p0 (a mixture of martingales), < 1 below
    s = np.arange(t + 1)
    e = np.exp(one_sided_log_mixture(s, t, p0, t_opt=T_OPT, alpha_opt=ALPHA))
    assert float(np.sum(stats.binom.pmf(s, t, p0) * e)) == pytest.approx(1.0, abs=1e-9)
    assert float(np.sum(stats.binom.pmf(s, t, p0 * 0.8) * e)) < 1.0


def test_the_one_sided_mixture_never_decreases_with_one_more_event() -> None:
    # the late-label argument of docs/rollout.md: a label that adds an event never lowers the path
    for p0, t in [(0.02, 300), (0.5, 80), (0.9, 120)]:
        e = one_sided_log_mixture(np.arange(t + 1), t, p0, t_opt=T_OPT, alpha_opt=ALPHA)
        assert np.all(np.diff(e) >= -1e-9)


def test_the_two_sided_mixture_alone_would_fire_on_a_rate_far_below_the_level() -> None:
    # why the core's mixture is restricted: no event in 300 observations against 0.5
    assert float(bernoulli_log_mixture(0, 300, 0.5, t_opt=T_OPT, alpha_opt=ALPHA)) > math.log(20)
    assert float(one_sided_log_mixture(0, 300, 0.5, t_opt=T_OPT, alpha_opt=ALPHA)) < 0
    assert not rate_trigger(np.zeros(300), level=0.5, direction="above", alpha=ALPHA).fired


# --- rate_trigger -------------------------------------------------------------------------------------


def test_rate_trigger_above_is_the_one_sided_mixture_of_the_running_counts() -> None:
    x = (np.random.default_rng(3).random(120) < 0.1).astype(float)
    path = rate_trigger(x, level=0.04, direction="above", alpha=ALPHA)
    t = np.arange(1, 121)
    expected = one_sided_log_mixture(np.cumsum(x), t, 0.04, t_opt=T_OPT, alpha_opt=ALPHA)
    np.testing.assert_allclose(path.log_evalue, expected)
    assert path.n == 120
    assert path.estimate == pytest.approx(float(x.mean()))
    assert path.threshold == pytest.approx(math.log(20))


def test_rate_trigger_below_is_above_on_the_non_events() -> None:
    x = (np.random.default_rng(4).random(150) < 0.7).astype(float)
    below = rate_trigger(x, level=0.85, direction="below", alpha=ALPHA)
    above = rate_trigger(1 - x, level=0.15, direction="above", alpha=ALPHA)
    np.testing.assert_allclose(below.log_evalue, above.log_evalue)
    np.testing.assert_allclose(below.bound, 1 - above.bound)
    assert below.first_crossing == above.first_crossing is not None
    assert below.estimate == pytest.approx(float(x.mean()))
    assert below.to_dict()["bound_side"] == "upper"


def test_rate_trigger_fires_exactly_when_its_bound_crosses_the_level() -> None:
    rng = np.random.default_rng(5)
    for level, direction, p in [(0.02, "above", 0.06), (0.5, "above", 0.6), (0.9, "below", 0.8), (0.98, "below", 0.95)]:
        for _ in range(3):
            path = rate_trigger((rng.random(300) < p).astype(float), level=level, direction=direction, alpha=ALPHA)
            crossed = np.flatnonzero(path.bound > level if direction == "above" else path.bound < level)
            assert path.first_crossing == (int(crossed[0]) if crossed.size else None)


@pytest.mark.slow  # a coverage simulation (issue 28, item 3: out of the fast loop)
def test_the_rate_bound_contains_the_truth_in_a_seeded_simulation() -> None:
    rng = np.random.default_rng(20261204)
    reps, misses = 60, 0
    for _ in range(reps):
        path = rate_trigger((rng.random(200) < 0.3).astype(float), level=0.1, direction="above", alpha=ALPHA)
        misses += bool(np.any(path.bound > 0.3))
    assert misses / reps <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def test_rate_trigger_fires_on_a_clear_breach_and_stays_fired() -> None:
    path = rate_trigger([0] * 50 + [1] * 10, level=0.02, direction="above", alpha=ALPHA)
    assert path.fired
    assert path.first_crossing == 55
    assert np.all(path.log_evalue[path.first_crossing :] >= 0)
    assert np.all(np.diff(path.bound) >= 0)  # intersected over time


def test_rate_trigger_reads_bools_and_numpy_arrays_as_events() -> None:
    x = np.random.default_rng(9).random(80) < 0.3
    a = rate_trigger(x, level=0.1, direction="above", alpha=ALPHA)
    b = rate_trigger([int(v) for v in x], level=0.1, direction="above", alpha=ALPHA)
    np.testing.assert_array_equal(a.log_evalue, b.log_evalue)  # type: ignore[arg-type]
    assert a.first_crossing == b.first_crossing


def test_an_empty_stream_is_insufficient_evidence_not_zero() -> None:
    for path in (
        rate_trigger([], level=0.5, direction="above", alpha=ALPHA),
        mean_trigger([], level=1.0, lower=0.0, upper=2.0, direction="below", alpha=ALPHA),
        count_trigger([]),
    ):
        assert path.n == 0
        assert path.estimate is None
        assert not path.fired
        assert path.bound.size == 0
        doc = path.to_dict()
        assert doc["estimate"] is None
        assert doc["fired"] is False
        json.dumps(doc, allow_nan=False)


def test_a_paths_arrays_are_read_only() -> None:
    path = rate_trigger([0, 1, 1], level=0.2, direction="above", alpha=ALPHA)
    with pytest.raises(ValueError, match="read-only"):
        path.bound[0] = 0.9
    with pytest.raises(ValueError, match="read-only"):
        path.log_evalue[0] = 9.0  # type: ignore[index]


def test_to_dict_is_json_ready() -> None:
    path = rate_trigger(np.zeros(2000), level=0.5, direction="above", alpha=ALPHA)  # log E floored, not -inf
    assert np.all(np.isfinite(path.log_evalue))
    doc = path.to_dict()
    text = json.dumps(doc, allow_nan=False)
    assert json.loads(text)["kind"] == "rate"
    keys = "kind direction level alpha method n estimate fired first_crossing threshold bound_side log_evalue bound"
    assert set(doc) == set(keys.split())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"events": [0, 1, float("nan")]}, "events[2]: expected 0 or 1 (got nan)"),
        ({"events": [0, 2]}, "events[1]: expected 0 or 1 (got 2.0)"),
        ({"events": [0, float("inf")]}, "events[1]: expected 0 or 1 (got inf)"),
        ({"events": ["a", 1]}, "events: expected a sequence of numbers"),
        ({"events": [[0, 1]]}, "events: expected a one-dimensional sequence"),
        ({"level": 0.0}, "is refuted by a single event: that is a count, not a rate; use count_trigger"),
        ({"level": 1.0, "direction": "below"}, "is refuted by a single non-event"),
        ({"level": 1.0}, "can never fire"),
        ({"level": 0.0, "direction": "below"}, "can never fire"),
        ({"level": -0.05, "direction": "below"}, "the gate's lower bound minus delta is not above 0"),
        ({"level": -0.1}, "level: expected a number in [0, 1] (got -0.1)"),
        ({"level": float("nan")}, "level: expected a finite number (got nan)"),
        ({"level": True}, "level: expected a finite number (got True)"),
        ({"alpha": 0.0}, "alpha: expected a number in (0, 1)"),
        ({"alpha": 1}, "alpha: expected a number in (0, 1)"),
        ({"direction": "up"}, "direction: expected 'above' or 'below' (got 'up')"),
        ({"t_opt": 0.5}, "t_opt: expected a number >= 1"),
    ],
)
def test_rate_trigger_refuses_bad_input_with_a_clear_error(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"events": [0, 1, 0], "level": 0.5, "direction": "above", "alpha": ALPHA}
    args.update(kwargs)
    with pytest.raises(ValueError, match=re.escape(message)):
        rate_trigger(**args)  # type: ignore[arg-type]


# --- mean_trigger ------------------------------------------------------------------------------------


def test_mean_trigger_is_the_betting_eprocess_of_confseq_on_the_rescaled_values() -> None:
    x = np.random.default_rng(6).uniform(0, 30, 80)
    path = mean_trigger(x, level=12.0, lower=0.0, upper=30.0, direction="above", alpha=ALPHA)
    np.testing.assert_allclose(path.log_evalue, log_eprocess(x / 30, 0.4, alpha=ALPHA, method="betting"))
    lb = lower_bound(x / 30, np.arange(80), alpha=ALPHA, method="betting")
    np.testing.assert_allclose(path.bound, 30 * np.maximum.accumulate(lb))
    below = mean_trigger(x, level=12.0, lower=0.0, upper=30.0, direction="below", alpha=ALPHA)
    np.testing.assert_allclose(below.log_evalue, log_eprocess(1 - x / 30, 0.6, alpha=ALPHA, method="betting"))
    assert np.all(below.bound >= path.bound - 1e-9)


def test_the_mean_bound_contains_the_truth_in_a_seeded_simulation() -> None:
    rng = np.random.default_rng(20261205)
    reps, misses = 60, 0
    for _ in range(reps):
        minutes = 60 * rng.beta(1.0, 3.0, 200)  # mean 15
        path = mean_trigger(minutes, level=5.0, lower=0.0, upper=60.0, direction="above", alpha=ALPHA)
        misses += bool(np.any(path.bound > 15.0))
    assert misses / reps <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def test_cost_per_accepted_reduction_fires_when_the_cpa_is_above_c0_and_not_below() -> None:
    # x = cost - c0 * accepted in [-c0, cap]; E[x] > 0 <=> E[cost] / P(accepted) > c0
    rng = np.random.default_rng(7)
    c0, cap, n = 1.0, 5.0, 1500
    accepted = (rng.random(n) < 0.5).astype(float)
    for cost_mean, fires in [(0.8, True), (0.3, False)]:  # CPA 1.6 and 0.6 against c0 = 1
        cost = np.clip(rng.exponential(cost_mean, n), 0, cap)
        r = cost_per_accepted_values(cost, accepted, reference_cpa=c0, cost_cap=cap)
        np.testing.assert_allclose(r.values, cost - c0 * accepted)
        assert (r.lower, r.upper) == (-c0, cap)
        path = mean_trigger(r.values, level=0.0, lower=r.lower, upper=r.upper, direction="above", alpha=ALPHA)
        assert path.fired is fires


@pytest.mark.parametrize(
    ("costs", "accepted", "kwargs", "message"),
    [
        ([1.0, 6.0], [1, 0], {}, "costs[1]: expected a finite number in [0, 5.0] (got 6.0)"),
        ([1.0, float("nan")], [1, 0], {}, "costs[1]: expected a finite number in [0, 5.0] (got nan)"),
        ([-0.1], [1], {}, "costs[0]: expected a finite number in [0, 5.0] (got -0.1)"),
        ([1.0], [2], {}, "accepted[0]: expected 0 or 1 (got 2.0)"),
        ([1.0, 2.0], [1], {}, "costs, accepted: expected the same length (got 2 and 1)"),
        ([1.0], [1], {"reference_cpa": 0.0}, "reference_cpa: expected a number > 0 (got 0.0)"),
        ([1.0], [1], {"cost_cap": float("inf")}, "cost_cap: expected a finite number (got inf)"),
    ],
)
def test_cost_per_accepted_values_refuses_bad_input(
    costs: list[float], accepted: list[float], kwargs: dict[str, float], message: str
) -> None:
    args = {"reference_cpa": 1.0, "cost_cap": 5.0} | kwargs
    with pytest.raises(ValueError, match=re.escape(message)):
        cost_per_accepted_values(costs, accepted, **args)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": [1.0, float("nan")]}, "values[1]: expected a finite number in [0.0, 10.0] (got nan)"),
        ({"values": [11.0]}, "values[0]: expected a finite number in [0.0, 10.0] (got 11.0)"),
        ({"values": [-0.5]}, "values[0]: expected a finite number in [0.0, 10.0] (got -0.5)"),
        ({"lower": 10.0}, "lower, upper: expected lower < upper, a finite range apart (got 10.0, 10.0)"),
        ({"lower": -1e308, "upper": 1e308}, "lower, upper: expected lower < upper, a finite range apart"),
        ({"upper": float("inf")}, "upper: expected a finite number (got inf)"),
        ({"level": 12.0}, "level: expected a number in [lower, upper] = [0.0, 10.0] (got 12.0)"),
        ({"level": 10.0}, "can never fire"),
        ({"level": 0.0, "direction": "below"}, "can never fire"),
        ({"method": "magic"}, "method: expected one of"),
    ],
)
def test_mean_trigger_refuses_bad_input_with_a_clear_error(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {
        "values": [1.0, 2.0],
        "level": 5.0,
        "lower": 0.0,
        "upper": 10.0,
        "direction": "above",
        "alpha": ALPHA,
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=re.escape(message)):
        mean_trigger(**args)  # type: ignore[arg-type]


def test_a_long_mean_stream_carries_its_bound_forward_from_checkpoints() -> None:
    x = np.random.default_rng(8).uniform(0, 1, 1200)
    path = mean_trigger(x, level=0.3, lower=0.0, upper=1.0, direction="above", alpha=ALPHA)
    last = lower_bound(x, [1199], alpha=ALPHA, method="betting")[0]
    assert path.bound[-1] == pytest.approx(max(last, float(path.bound[-2])))
    assert np.all(np.diff(path.bound) >= 0)
    assert path.log_evalue is not None
    assert path.log_evalue.size == 1200


# --- count_trigger -------------------------------------------------------------------------------------


def test_count_trigger_fires_at_the_first_count_above_the_tolerance() -> None:
    path = count_trigger([0, 0, 0, 1, 0, 2])
    assert (path.first_crossing, path.estimate, path.alpha, path.log_evalue, path.threshold) == (
        3,
        3.0,
        None,
        None,
        None,
    )
    np.testing.assert_array_equal(path.bound, [0, 0, 0, 1, 1, 3])
    assert count_trigger([0, 1, 0, 1, 1], tolerated=2).first_crossing == 4
    assert not count_trigger([0] * 100).fired
    json.dumps(path.to_dict(), allow_nan=False)


@pytest.mark.parametrize(
    ("counts", "tolerated", "message"),
    [
        ([0, -1], 0, "counts[1]: expected a whole number >= 0 (got -1.0)"),
        ([0.5], 0, "counts[0]: expected a whole number >= 0 (got 0.5)"),
        ([float("nan")], 0, "counts[0]: expected a whole number >= 0 (got nan)"),
        ([float("inf")], 0, "counts[0]: expected a whole number >= 0 (got inf)"),
        ([0], -1, "tolerated: expected a whole number >= 0 (got -1)"),
        ([0], 1.5, "tolerated: expected a whole number >= 0 (got 1.5)"),
        ([0], True, "tolerated: expected a whole number >= 0 (got True)"),
    ],
)
def test_count_trigger_refuses_bad_input(counts: list[float], tolerated: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        count_trigger(counts, tolerated=tolerated)  # type: ignore[arg-type]


# --- the vs_gate level -----------------------------------------------------------------------------------


def test_vs_reference_level_is_the_lower_bound_minus_delta() -> None:
    assert vs_reference_level(0.82, 0.10) == pytest.approx(0.72)
    assert vs_reference_level(0.05, 0.10) == pytest.approx(-0.05)  # rate_trigger then refuses: can never fire
    for args, message in [
        ((1.2, 0.1), "reference_lower: expected a number in [0, 1] (got 1.2)"),
        ((0.8, -0.1), "delta: expected a number >= 0 (got -0.1)"),
        ((float("nan"), 0.1), "reference_lower: expected a finite number (got nan)"),
        ((0.8, float("inf")), "delta: expected a finite number (got inf)"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            vs_reference_level(*args)


@pytest.mark.slow  # a false-rollback simulation (issue 28, item 3: out of the fast loop)
def test_the_vs_gate_trigger_pays_for_the_golden_sets_uncertainty() -> None:
    # golden set: 100 cases, true rate 0.8; the gate's one-sided 95% Wilson-type lower bound;
    # production exactly delta below the truth (the null boundary): false rollback <= alpha + alpha_gate
    rng = np.random.default_rng(11)
    reps, fired = 60, 0
    for _ in range(reps):
        gold = rng.binomial(100, 0.8)
        low = float(stats.beta.ppf(0.05, gold, 100 - gold + 1))  # Clopper-Pearson one-sided 95% lower bound
        level = vs_reference_level(low, 0.1)
        events = (rng.random(400) < 0.7).astype(float)
        fired += rate_trigger(events, level=level, direction="below", alpha=ALPHA).fired
    bound = 2 * ALPHA
    assert fired / reps <= bound + 2 * math.sqrt(bound * (1 - bound) / reps)


# --- layer_comparison ---------------------------------------------------------------------------------------

#: Newcombe (1998), Table II, method 10 (hybrid score, no continuity correction): (k1, n1, k2, n2) and the
#: interval for p1 - p2, to 4 decimals; checked also against statsmodels 0.15
#: confint_proportions_2indep(method="newcomb") below.
NEWCOMBE = [
    ((56, 70, 48, 80), (0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.1705, 0.8090)),
    ((6, 7, 2, 7), (0.0582, 0.8062)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ((0, 10, 0, 20), (-0.1611, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0000)),
]


@pytest.mark.parametrize(("counts", "interval"), NEWCOMBE)
def test_layer_comparison_with_one_trial_per_case_is_newcombes_hybrid_score(
    counts: tuple[int, int, int, int], interval: tuple[float, float]
) -> None:
    k1, n1, k2, n2 = counts  # 1: production, 2: golden
    c = layer_comparison([1] * k2 + [0] * (n2 - k2), [1] * k1 + [0] * (n1 - k1), alpha=0.05)
    assert (round(c.lower, 4), round(c.upper, 4)) == interval
    reference = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=0.05)
    assert (c.lower, c.upper) == pytest.approx(tuple(float(v) for v in reference), abs=1e-10)
    assert c.method == "newcombe_hybrid_score"
    assert c.golden_effective_n == n2
    assert c.decision == ("consistent" if interval[0] < 0 < interval[1] else "higher")
    json.dumps(c.to_dict(), allow_nan=False)


@settings(max_examples=examples(40), deadline=None)
@given(k1=st.integers(0, 30), n1=st.integers(1, 30), k2=st.integers(0, 30), n2=st.integers(1, 30))
def test_swapping_the_layers_negates_the_interval(k1: int, n1: int, k2: int, n2: int) -> None:
    k1, k2 = min(k1, n1), min(k2, n2)
    a = layer_comparison([1] * k2 + [0] * (n2 - k2), [1] * k1 + [0] * (n1 - k1))
    b = layer_comparison([1] * k1 + [0] * (n1 - k1), [1] * k2 + [0] * (n2 - k2))
    assert a.lower is not None
    assert b.upper is not None
    assert a.lower == pytest.approx(-b.upper, abs=1e-12)
    assert -1 <= a.lower <= a.difference <= a.upper <= 1  # type: ignore[operator]


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), [(0, 1, 27, 27), (1, 1, 0, 27), (0, 30, 30, 30), (30, 30, 0, 30)])
def test_the_interval_stays_within_minus_one_and_one_at_the_extremes(k1: int, n1: int, k2: int, n2: int) -> None:
    """Production 0/1 against golden 27/27: the Wilson end at p = 1 rounds to 1 - 2**-53, which pushed the
    lower end to -1.0000000000000002 (found by hypothesis in CI, session 39)."""
    c = layer_comparison([1] * k2 + [0] * (n2 - k2), [1] * k1 + [0] * (n1 - k1))
    assert c.lower is not None
    assert c.upper is not None
    assert -1 <= c.lower <= c.difference <= c.upper <= 1  # type: ignore[operator]
    reference = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=0.05)
    assert (c.lower, c.upper) == pytest.approx(tuple(float(v) for v in reference), abs=1e-10)


def test_layer_comparison_counts_a_case_once_when_its_trials_agree() -> None:
    # 40 cases, 5 trials each, every case all-pass or all-fail: 40 units, not 200
    rates = np.array([1.0] * 30 + [0.0] * 10)
    c = layer_comparison(rates, [1] * 150 + [0] * 50, trials_per_case=5)
    assert c.golden_effective_n == pytest.approx(40.0)
    assert c.method == "newcombe_hybrid_score_effective_n"
    as_independent = layer_comparison(np.repeat(rates, 5), [1] * 150 + [0] * 50)
    assert (c.upper - c.lower) > (as_independent.upper - as_independent.lower)
    # cases whose rates vary no more than binomially: the binomial size (design effect 1)
    flat = layer_comparison(np.full(40, 0.6), [1] * 120 + [0] * 80, trials_per_case=5)
    assert flat.golden_effective_n == pytest.approx(200.0)


def test_layer_comparison_decides_lower_and_insufficient() -> None:
    assert layer_comparison([1] * 90 + [0] * 10, [1] * 60 + [0] * 40).decision == "lower"
    empty = layer_comparison([1, 0, 1], [])
    assert (empty.decision, empty.difference, empty.lower, empty.production_rate) == (
        "insufficient_evidence",
        None,
        None,
        None,
    )
    assert layer_comparison([], [1, 0]).golden_rate is None


def test_layer_comparison_covers_with_heterogeneous_cases_where_counting_trials_does_not() -> None:
    # golden: 30 cases x 10 trials, case rates ~ Beta(2, 1) (mean 2/3); production: 500 Bernoulli(2/3)
    rng = np.random.default_rng(12)
    reps, wrong, wrong_naive = 400, 0, 0
    for _ in range(reps):
        case_p = rng.beta(2, 1, 30)
        rates = rng.binomial(10, case_p) / 10
        events = (rng.random(500) < 2 / 3).astype(float)
        wrong += layer_comparison(rates, events, trials_per_case=10).decision != "consistent"
        k = int(np.rint(rates.sum() * 10))
        trials = np.array([1.0] * k + [0.0] * (300 - k))
        naive = layer_comparison(trials, events)
        wrong_naive += naive.decision != "consistent"
    assert wrong / reps <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert wrong_naive / reps > 2 * ALPHA  # treating the 300 trials as independent is liberal


@pytest.mark.parametrize(
    ("golden", "events", "trials", "message"),
    [
        ([0.5, 1.5], [1], 1, "golden_case_rates[1]: expected a number in [0, 1] (got 1.5)"),
        ([0.5, float("nan")], [1], 1, "golden_case_rates[1]: expected a number in [0, 1] (got nan)"),
        ([1.0], [1, 0.5], 1, "production_events[1]: expected 0 or 1 (got 0.5)"),
        ([0.5, 0.5], [1], [1, 0], "trials_per_case[1]: expected a whole number >= 1 (got 0.0)"),
        ([0.5], [1], 2.5, "trials_per_case[0]: expected a whole number >= 1 (got 2.5)"),
        (
            [0.5, 1.0],
            [1],
            [2, 2, 2],
            "trials_per_case: expected one whole number, or one per case (2) (got shape (3,))",
        ),
        ([0.5, 1.0], [1], 1, "golden_case_rates[0]: 0.5 is not a whole number of passes out of 1 trial(s)"),
        ([1 / 3], [1], 2, "golden_case_rates[0]: 0.3333333333333333 is not a whole number of passes out of 2"),
    ],
)
def test_layer_comparison_refuses_bad_input(
    golden: list[float], events: list[float], trials: object, message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        layer_comparison(golden, events, trials_per_case=trials)  # type: ignore[arg-type]


# --- property: more observations never un-fire a trigger ------------------------------------------------------

_EVENTS = st.lists(st.integers(0, 1), min_size=0, max_size=60)


@settings(max_examples=examples(25), deadline=None)
@given(
    first=_EVENTS, more=_EVENTS, level=st.sampled_from([0.05, 0.3, 0.7]), direction=st.sampled_from(["above", "below"])
)
def test_more_observations_never_unfire_a_rate_trigger(
    first: list[int], more: list[int], level: float, direction: str
) -> None:
    a = rate_trigger(first, level=level, direction=direction, alpha=0.2)  # type: ignore[arg-type]
    b = rate_trigger(first + more, level=level, direction=direction, alpha=0.2)  # type: ignore[arg-type]
    if a.fired:
        assert b.first_crossing == a.first_crossing
    else:
        assert b.first_crossing is None or b.first_crossing >= len(first)
    np.testing.assert_allclose(b.log_evalue[: len(first)], a.log_evalue)  # type: ignore[index]


@settings(max_examples=examples(25), deadline=None)
@given(
    first=st.lists(st.floats(0, 10), max_size=40),
    more=st.lists(st.floats(0, 10), max_size=40),
    direction=st.sampled_from(["above", "below"]),
)
def test_more_observations_never_unfire_a_mean_or_count_trigger(
    first: list[float], more: list[float], direction: str
) -> None:
    a = mean_trigger(first, level=4.0, lower=0.0, upper=10.0, direction=direction, alpha=0.2)  # type: ignore[arg-type]
    b = mean_trigger(first + more, level=4.0, lower=0.0, upper=10.0, direction=direction, alpha=0.2)  # type: ignore[arg-type]
    if a.fired:
        assert b.first_crossing == a.first_crossing
    else:
        assert b.first_crossing is None or b.first_crossing >= len(first)
    ca, cb = (
        count_trigger([round(v) for v in first], tolerated=20),
        count_trigger([round(v) for v in first + more], tolerated=20),
    )
    if ca.fired:
        assert cb.first_crossing == ca.first_crossing
