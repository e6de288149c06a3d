"""The sequential decision of one rule: crossing, stopping, the path, the alpha split, bad input."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

from gatestats.sequential import decide_rule, split_alpha
from gatestats.sequential.confseq import confidence_sequence, log_eprocess

BASE: dict[str, Any] = {
    "checkpoints": [20, 40, 60, 80, 100],
    "boundary": 0.7,
    "higher_is_better": True,
    "lo": 0.0,
    "hi": 1.0,
    "alpha_pass": 0.025,
    "alpha_fail": 0.025,
    "method": "betting",
}


def test_split_alpha_is_bonferroni_over_rules_and_the_share() -> None:
    assert split_alpha(0.05, 1, 0.5) == (0.025, 0.025)
    assert split_alpha(0.05, 2, 0.2) == pytest.approx((0.005, 0.02))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0.0, 1, 0.5), "rule_alpha: expected a number in (0, 1) (got 0.0)"),
        ((0.05, 0, 0.5), "n_rules: expected an integer >= 1 (got 0)"),
        ((0.05, 1, 1.0), "share: expected a number in (0, 1) (got 1.0)"),
        ((0.05, 1, float("nan")), "share: expected a number in (0, 1) (got nan)"),
    ],
)
def test_split_alpha_refuses_out_of_range(args: tuple[float, int, float], message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        split_alpha(*args)


def test_a_clear_pass_stops_at_the_first_batch_and_the_path_ends_there() -> None:
    d = decide_rule([1.0] * 100, **BASE)
    assert (d.status, d.decided_at, len(d.path), d.cases_needed) == ("pass", 20, 1, None)
    point = d.path[0]
    assert point.e_pass >= 40
    assert point.e_fail < 1
    assert point.lower > 0.7
    assert point.estimate == 1.0


def test_a_clear_regression_fails_and_e_fail_crosses_one_over_alpha_fail() -> None:
    values = [0.0, 1.0, 0.0, 0.0, 1.0] * 20  # mean 0.4 against 0.7
    d = decide_rule(values, **BASE)
    assert d.status == "fail"
    assert d.path[-1].e_fail >= 1 / 0.025
    assert all(p.e_fail < 40 for p in d.path[:-1])
    assert d.path[-1].upper < 0.7


def test_the_decision_is_the_e_value_read_at_the_checkpoints_only() -> None:
    rng = np.random.default_rng(1)
    values = rng.binomial(3, 0.85, size=100) / 3
    d = decide_rule(values, **BASE)
    log_e = log_eprocess(values, 0.7, alpha=0.025, method="betting")
    first = next((c for c in BASE["checkpoints"] if log_e[c - 1] >= math.log(40)), None)
    assert d.decided_at == first
    assert d.status == ("pass" if first else "undecided")
    for p in d.path:
        assert p.e_pass == pytest.approx(math.exp(log_e[p.n_cases - 1]), rel=1e-12)


def test_bounds_are_the_running_intersection_of_the_one_sided_sequences() -> None:
    rng = np.random.default_rng(2)
    values = rng.uniform(0.5, 0.9, size=100)
    d = decide_rule(values, **{**BASE, "boundary": 0.7, "method": "empirical_bernstein"})
    assert d.status == "undecided"
    lower = confidence_sequence(
        values, alpha=0.025, method="empirical_bernstein", alternative="greater", running_intersection=False
    ).lower
    upper = confidence_sequence(
        values, alpha=0.025, method="empirical_bernstein", alternative="less", running_intersection=False
    ).upper
    at = np.array(BASE["checkpoints"]) - 1
    assert [p.lower for p in d.path] == pytest.approx(np.maximum.accumulate(lower[at]).tolist())
    assert [p.upper for p in d.path] == pytest.approx(np.minimum.accumulate(upper[at]).tolist())
    assert d.cases_needed is not None
    assert d.cases_needed > 0


def test_a_paired_rule_on_minus_one_to_one_at_the_margin() -> None:
    # candidate minus baseline per case; non-inferiority margin 0.05 -> boundary -0.05
    better = [0.0] * 80 + [1 / 3] * 20  # mean +0.067
    d = decide_rule(
        better * 3, **{**BASE, "boundary": -0.05, "lo": -1.0, "hi": 1.0, "checkpoints": [50, 100, 150, 200, 250, 300]}
    )
    assert d.status == "pass"
    assert d.path[-1].lower > -0.05
    worse = [-1.0] * 30 + [0.0] * 70
    d = decide_rule(worse * 3, **{**BASE, "boundary": -0.05, "lo": -1.0, "hi": 1.0, "checkpoints": [100, 200, 300]})
    assert d.status == "fail"


def test_lower_is_better_mirrors_higher_is_better() -> None:
    rng = np.random.default_rng(4)
    values = rng.uniform(0.0, 0.5, size=100)
    up = decide_rule(1 - values, **{**BASE, "boundary": 0.6})
    down = decide_rule(values, **{**BASE, "boundary": 0.4, "higher_is_better": False})
    assert (up.status, up.decided_at) == (down.status, down.decided_at)
    assert [p.e_pass for p in up.path] == pytest.approx([p.e_pass for p in down.path])
    assert [1 - p.upper for p in up.path] == pytest.approx([p.lower for p in down.path])


def test_only_checkpoints_reached_are_evaluated_and_no_data_is_undecided_without_an_estimate() -> None:
    d = decide_rule([0.8] * 30, **BASE)
    assert [p.n_cases for p in d.path] == [20]
    empty = decide_rule([], **BASE)
    assert (empty.status, empty.path, empty.cases_needed) == ("undecided", (), None)
    at_boundary = decide_rule([0.7] * 20, **BASE)
    assert (at_boundary.status, at_boundary.cases_needed) == ("undecided", None)


def test_cases_needed_is_roughly_where_the_sequence_later_crosses() -> None:
    rng = np.random.default_rng(6)
    values = rng.binomial(3, 0.8, size=2000) / 3  # mean 0.8 against 0.7
    first = decide_rule(values[:40], **{**BASE, "checkpoints": [40]})
    assert first.status == "undecided"
    assert first.cases_needed is not None
    full = decide_rule(values, **{**BASE, "checkpoints": list(range(10, 2001, 10))})
    assert full.status == "pass"
    assert full.decided_at is not None
    assert 0.33 < (40 + first.cases_needed) / full.decided_at < 3


def test_to_dict_is_json_ready() -> None:
    d = decide_rule([1.0] * 20, **BASE).to_dict()
    assert d["status"] == "pass"
    assert d["path"][0]["n_cases"] == 20
    assert set(d) == {"status", "decided_at", "method", "alpha_pass", "alpha_fail", "boundary", "path", "cases_needed"}


def test_e_values_are_capped_not_infinite() -> None:
    d = decide_rule([1.0] * 5000, **{**BASE, "boundary": 0.01, "checkpoints": [5000]})
    assert d.path[0].e_pass == 1e300 or math.isfinite(d.path[0].e_pass)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"values": [0.5, float("nan")]}, "values[1]: expected a finite number in [0, 1] (got nan)"),
        ({"values": [0.5, 1.2]}, "values[1]: expected a finite number in [0, 1] (got 1.2)"),
        ({"values": ["a"]}, "values: expected a sequence of numbers (got ['a'])"),
        ({"values": [[0.5]]}, "values: expected a one-dimensional sequence (got shape (1, 1))"),
        ({"alpha_pass": 0.0}, "alpha_pass: expected a number in (0, 1) (got 0.0)"),
        ({"alpha_fail": float("nan")}, "alpha_fail: expected a number in (0, 1) (got nan)"),
        ({"boundary": 1.5}, "boundary: expected a number in [0, 1] (got 1.5)"),
        ({"boundary": float("nan")}, "boundary: expected a number in [0, 1] (got nan)"),
        ({"checkpoints": [20, 20]}, "checkpoints: expected increasing integers >= 1 (got [20, 20])"),
        ({"checkpoints": []}, "checkpoints: expected increasing integers >= 1 (got [])"),
        ({"checkpoints": [0, 10]}, "checkpoints: expected increasing integers >= 1 (got [0, 10])"),
        ({"method": "bayes"}, "method: expected one of 'betting', 'empirical_bernstein', 'hoeffding' (got 'bayes')"),
        ({"lo": 1.0}, "lo, hi: expected lo < hi (got lo=1.0, hi=1.0)"),
        ({"hi": float("inf")}, "hi: expected a finite number (got inf)"),
    ],
)
def test_bad_input_is_named(change: dict[str, Any], message: str) -> None:
    args = {"values": [0.5] * 20, **BASE, **change}
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        decide_rule(**args)
