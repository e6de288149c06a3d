"""Tests of the per-case pass@k / pass^k estimators (``gatestats.estimators.passk``).

Reference oracles are re-derived here from their definitions with ``math.comb`` and exact
``fractions.Fraction`` arithmetic; nothing is imported from the package under test to compute
an expected value.

Sources
-------
- Chen, M. et al. (2021). Evaluating Large Language Models Trained on Code. arXiv:2107.03374,
  section 2.1: pass@k = E[1 - C(n-c, k) / C(n, k)]; its reference implementation is
  ``estimate_pass_at_k`` in openai/human-eval ``human_eval/evaluation.py``
  (https://github.com/openai/human-eval/blob/master/human_eval/evaluation.py), which returns 1.0
  when ``n - c < k`` and otherwise ``1 - prod(1 - k / i for i in n-c+1..n)``.
- Yao, S. et al. (2024). τ-bench. arXiv:2406.12045, section 4: pass^k = E[C(c, k) / C(n, k)];
  sierra-research/tau-bench ``tau_bench/run.py`` ``display_metrics`` sums
  ``comb(c, k) / comb(num_trials, k)`` over tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from itertools import pairwise
from math import comb

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.estimators import (
    case_pairs,
    case_values,
    exact_case_sum,
    pair_values,
    pass_at_k,
    pass_at_k_exact,
    pass_hat_k,
    pass_hat_k_exact,
    per_case_values,
)
from gatestats.vocabulary import Metric
from tests.hypothesis_counts import examples

AsFrame = Callable[[pl.DataFrame], pl.DataFrame | pl.LazyFrame]
FRAME_KINDS: dict[str, AsFrame] = {
    "DataFrame": lambda frame: frame,
    "LazyFrame": lambda frame: frame.lazy(),
}


@pytest.fixture(params=list(FRAME_KINDS), ids=list(FRAME_KINDS))
def as_frame(request: pytest.FixtureRequest) -> AsFrame:
    """Hand the function under test a DataFrame, then a LazyFrame (STYLE.md: both modes)."""
    return FRAME_KINDS[request.param]


def chen_oracle(n: int, c: int, k: int) -> Fraction:
    """Chen et al. (2021) eq. (1) per problem: 1 - C(n-c, k) / C(n, k), exactly."""
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def yao_oracle(n: int, c: int, k: int) -> Fraction:
    """Yao et al. (2024) pass^k per task: C(c, k) / C(n, k), exactly."""
    return Fraction(comb(c, k), comb(n, k))


@st.composite
def n_c_k(draw: st.DrawFn, max_n: int = 200) -> tuple[int, int, int]:
    n = draw(st.integers(min_value=1, max_value=max_n))
    c = draw(st.integers(min_value=0, max_value=n))
    k = draw(st.integers(min_value=1, max_value=n))
    return n, c, k


# --- reference values -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [
        (200, 13, 10),  # the scale of Chen et al.'s HumanEval runs (n=200 samples per problem)
        (200, 13, 1),
        (200, 13, 100),
        (200, 0, 100),
        (200, 200, 1),
        (100, 1, 50),
        (10, 3, 5),
        (10, 7, 4),  # n - c = 3 < k = 4: human-eval's early return of 1.0
        (4, 1, 2),
        (1, 1, 1),
        (1, 0, 1),
    ],
)
def test_pass_at_k_matches_human_eval_estimate_pass_at_k(n: int, c: int, k: int) -> None:
    # openai/human-eval human_eval/evaluation.py estimate_pass_at_k, re-derived with math.comb.
    assert pass_at_k(n, c, k) == pytest.approx(float(chen_oracle(n, c, k)), abs=1e-12)
    assert pass_at_k_exact(n, c, k) == chen_oracle(n, c, k)


def test_pass_at_k_n200_c13_k10_equals_comb_ratio_to_twelve_digits() -> None:
    # 1 - C(187, 10) / C(200, 10), computed with integers only.
    expected = 1 - comb(187, 10) / comb(200, 10)
    assert pass_at_k(200, 13, 10) == pytest.approx(expected, abs=1e-12)
    assert round(pass_at_k(200, 13, 10), 6) == 0.497551


@pytest.mark.parametrize(("n", "c", "k"), [(4, 1, 2), (5, 2, 4), (3, 1, 3), (10, 9, 2)])
def test_pass_at_k_is_exactly_one_when_fewer_failures_than_k(n: int, c: int, k: int) -> None:
    # human-eval: `if n - c < k: return 1.0` -- every k-subset contains a success.
    if n - c < k:
        assert pass_at_k(n, c, k) == 1.0
        assert pass_at_k_exact(n, c, k) == 1
    else:
        assert pass_at_k(n, c, k) < 1.0


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 3, 2, Fraction(1, 2)),  # C(3,2)/C(4,2) = 3/6
        (4, 2, 2, Fraction(1, 6)),  # C(2,2)/C(4,2) = 1/6
        (4, 4, 4, Fraction(1)),
        (4, 3, 4, Fraction(0)),
        (5, 3, 2, Fraction(3, 10)),  # C(3,2)/C(5,2) = 3/10
        (10, 7, 3, Fraction(35, 120)),  # C(7,3)/C(10,3)
    ],
)
def test_pass_hat_k_matches_tau_bench_comb_ratio(n: int, c: int, k: int, expected: Fraction) -> None:
    # sierra-research/tau-bench tau_bench/run.py display_metrics: comb(c, k) / comb(num_trials, k).
    assert pass_hat_k_exact(n, c, k) == expected
    assert pass_hat_k(n, c, k) == pytest.approx(float(expected), abs=1e-15)


def test_pass_at_k_exact_of_4_trials_1_success_at_k2_is_one_half() -> None:
    # 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert pass_at_k_exact(4, 1, 2) == Fraction(1, 2)


@pytest.mark.parametrize(
    ("function", "args", "error", "message"),
    [
        (
            pass_at_k,
            (4, 2, 5),
            ValueError,
            "pass@k and pass^k are undefined for k > n (got k=5, n=4 valid trials)",
        ),
        (
            pass_hat_k,
            (0, 0, 1),
            ValueError,
            "pass@k and pass^k are undefined for k > n (got k=1, n=0 valid trials)",
        ),
        (
            pass_at_k_exact,
            (4, 5, 2),
            ValueError,
            "successes c must satisfy 0 <= c <= n (got c=5, n=4)",
        ),
        (
            pass_hat_k_exact,
            (4, -1, 2),
            ValueError,
            "successes c must satisfy 0 <= c <= n (got c=-1, n=4)",
        ),
        (pass_hat_k, (4, 2, 0), ValueError, "k must be >= 1 (got 0)"),
        (pass_at_k, (4.0, 2, 1), TypeError, "n must be an integer (got 4.0)"),
        (pass_at_k, (4, True, 1), TypeError, "c must be an integer (got True)"),
    ],
)
def test_invalid_arguments_raise_with_exact_message(
    function: Callable[..., object], args: tuple[object, ...], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as excinfo:
        function(*args)
    assert str(excinfo.value) == message


# --- hypothesis properties ----------------------------------------------------------------------


@settings(max_examples=examples(300), deadline=None)
@given(n_c_k(max_n=60))
def test_pass_at_k_is_non_decreasing_in_k(args: tuple[int, int, int]) -> None:
    n, c, _ = args
    exact = [pass_at_k_exact(n, c, k) for k in range(1, n + 1)]
    assert all(a <= b for a, b in pairwise(exact))
    floats = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    assert all(a <= b + 1e-12 for a, b in pairwise(floats))


@settings(max_examples=examples(300), deadline=None)
@given(n_c_k(max_n=60))
def test_pass_hat_k_is_non_increasing_in_k(args: tuple[int, int, int]) -> None:
    n, c, _ = args
    exact = [pass_hat_k_exact(n, c, k) for k in range(1, n + 1)]
    assert all(a >= b for a, b in pairwise(exact))
    floats = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    assert all(a + 1e-12 >= b for a, b in pairwise(floats))


@settings(max_examples=examples(300), deadline=None)
@given(n_c_k())
def test_pass_at_1_equals_pass_hat_1_equals_c_over_n(args: tuple[int, int, int]) -> None:
    n, c, _ = args
    assert pass_at_k_exact(n, c, 1) == pass_hat_k_exact(n, c, 1) == Fraction(c, n)
    assert pass_at_k(n, c, 1) == pytest.approx(c / n, abs=1e-12)
    assert pass_hat_k(n, c, 1) == pytest.approx(c / n, abs=1e-12)


@settings(max_examples=examples(500), deadline=None)
@given(n_c_k())
def test_float_estimators_agree_with_exact_fractions_within_1e_12(
    args: tuple[int, int, int],
) -> None:
    n, c, k = args
    assert abs(pass_at_k(n, c, k) - float(chen_oracle(n, c, k))) <= 1e-12
    assert abs(pass_hat_k(n, c, k) - float(yao_oracle(n, c, k))) <= 1e-12
    assert pass_at_k_exact(n, c, k) == chen_oracle(n, c, k)
    assert pass_hat_k_exact(n, c, k) == yao_oracle(n, c, k)


@settings(max_examples=examples(300), deadline=None)
@given(n_c_k())
def test_pass_at_k_is_at_least_pass_hat_k(args: tuple[int, int, int]) -> None:
    n, c, k = args
    assert pass_at_k_exact(n, c, k) >= pass_hat_k_exact(n, c, k)
    assert pass_at_k(n, c, k) + 1e-12 >= pass_hat_k(n, c, k)


@settings(max_examples=examples(200), deadline=None)
@given(n_c_k())
def test_no_success_gives_zero_and_all_successes_give_one(args: tuple[int, int, int]) -> None:
    n, _, k = args
    assert pass_at_k(n, 0, k) == 0.0
    assert pass_hat_k(n, 0, k) == 0.0
    assert pass_at_k(n, n, k) == 1.0
    assert pass_hat_k(n, n, k) == pytest.approx(1.0, abs=1e-15)


# --- per_case_values and exact_case_sum (DataFrame and LazyFrame) ------------------------------


@pytest.mark.parametrize("metric", ["pass_at_k", "pass_hat_k"])
def test_per_case_values_attach_exact_values_and_null_where_n_below_k(as_frame: AsFrame, metric: str) -> None:
    summary = pl.DataFrame({"case_id": ["a", "b", "c", "d", "e"], "n": [4, 1, 4, 0, 3], "c": [2, 1, 2, 0, 3]})
    out = per_case_values(as_frame(summary), k=2, metric=metric)  # type: ignore[arg-type]
    assert isinstance(out, pl.DataFrame)
    assert out.columns == ["case_id", "n", "c", "value"]
    assert out["case_id"].to_list() == ["a", "b", "c", "d", "e"]  # row order kept
    oracle = chen_oracle if metric == "pass_at_k" else yao_oracle
    expected = [float(oracle(n, c, 2)) if n >= 2 else None for n, c in zip(summary["n"], summary["c"], strict=True)]
    assert out["value"].to_list() == expected
    # undefined is null, never 0.0 or NaN
    assert out.filter(pl.col("n") < 2)["value"].null_count() == 2


def test_per_case_values_accepts_narrow_integer_columns(
    as_frame: AsFrame,
) -> None:
    summary = pl.DataFrame({"n": [4, 1], "c": [2, 1]}, schema={"n": pl.Int32, "c": pl.Int32})
    out = per_case_values(as_frame(summary), k=2, metric="pass_hat_k")  # type: ignore[arg-type]
    assert out["value"].to_list() == [1 / 6, None]


def test_per_case_values_rejects_unknown_metric_with_exact_message(
    as_frame: AsFrame,
) -> None:
    with pytest.raises(ValueError, match=r"^metric must be one of pass_at_k, pass_hat_k \(got 'pass_k'\)$"):
        per_case_values(as_frame(pl.DataFrame({"n": [2], "c": [1]})), k=1, metric="pass_k")  # type: ignore[arg-type]


@st.composite
def case_counts(draw: st.DrawFn) -> list[tuple[int, int]]:
    cases = draw(st.lists(st.integers(min_value=0, max_value=8), min_size=1, max_size=30))
    return [(n, draw(st.integers(min_value=0, max_value=n))) for n in cases]


@settings(max_examples=examples(60), deadline=None)
@given(cases=case_counts(), k=st.integers(min_value=1, max_value=4), data=st.data())
def test_per_case_values_are_invariant_to_row_order(cases: list[tuple[int, int]], k: int, data: st.DataObject) -> None:
    summary = pl.DataFrame(
        {
            "case_id": [f"case-{i}" for i in range(len(cases))],
            "n": [n for n, _ in cases],
            "c": [c for _, c in cases],
        }
    )
    order = data.draw(st.permutations(range(summary.height)))
    shuffled = summary[list(order)]
    for metric in ("pass_at_k", "pass_hat_k"):
        original = per_case_values(summary, k=k, metric=metric).sort("case_id")  # type: ignore[arg-type]
        permuted = per_case_values(shuffled.lazy(), k=k, metric=metric)  # type: ignore[arg-type]
        # each row keeps its own value, in the order it was given
        assert permuted["case_id"].to_list() == shuffled["case_id"].to_list()
        assert permuted.sort("case_id").equals(original)


@pytest.mark.parametrize(("metric", "expected"), [("pass_hat_k", Fraction(7, 6)), ("pass_at_k", Fraction(7, 3))])
def test_exact_case_sum_of_four_cases_with_4_trials_at_k2(as_frame: AsFrame, metric: str, expected: Fraction) -> None:
    # Cases (n, c) = (4, 4), (4, 2), (4, 0), (4, 1); C(4, 2) = 6.
    # pass^2: 6/6 + 1/6 + 0 + 0 = 7/6
    # pass@2: 1 + (1 - 1/6) + (1 - 6/6) + (1 - 3/6) = 1 + 5/6 + 0 + 1/2 = 7/3
    summary = pl.DataFrame({"n": [4, 4, 4, 4], "c": [4, 2, 0, 1]})
    oracle = chen_oracle if metric == "pass_at_k" else yao_oracle
    independent = sum((oracle(n, c, 2) for n, c in summary.iter_rows()), Fraction(0))
    assert independent == expected
    assert exact_case_sum(as_frame(summary), k=2, metric=metric) == expected  # type: ignore[arg-type]


@settings(max_examples=examples(60), deadline=None)
@given(cases=case_counts(), k=st.integers(min_value=1, max_value=4))
def test_exact_case_sum_equals_fraction_sum_of_per_case_oracle(cases: list[tuple[int, int]], k: int) -> None:
    defined = [(n, c) for n, c in cases if n >= k]
    if not defined:
        return
    summary = pl.DataFrame({"n": [n for n, _ in defined], "c": [c for _, c in defined]})
    for metric, oracle in (("pass_at_k", chen_oracle), ("pass_hat_k", yao_oracle)):
        expected = sum((oracle(n, c, k) for n, c in defined), Fraction(0))
        assert exact_case_sum(summary, k=k, metric=metric) == expected  # type: ignore[arg-type]
        assert exact_case_sum(summary.lazy(), k=k, metric=metric) == expected  # type: ignore[arg-type]


def test_exact_case_sum_refuses_a_case_with_fewer_trials_than_k(
    as_frame: AsFrame,
) -> None:
    summary = pl.DataFrame({"n": [4, 1], "c": [2, 1]})
    with pytest.raises(ValueError, match=r"undefined for k > n \(got k=2, n=1 valid trials\)"):
        exact_case_sum(as_frame(summary), k=2, metric="pass_hat_k")  # type: ignore[arg-type]


# --- distinct (n, c) pairs, built once and reused for every k and metric ---------------------


def test_case_pairs_groups_cases_by_their_n_and_c() -> None:
    pairs = case_pairs([4, 4, 1, 4, 10], [4, 2, 1, 2, 0])
    assert pairs.n.tolist() == [1, 4, 4, 10]
    assert pairs.c.tolist() == [1, 2, 4, 0]
    assert pairs.counts.tolist() == [1, 2, 1, 1]
    assert pairs.inverse.tolist() == [2, 1, 0, 1, 3]


def test_case_pairs_refuses_arrays_of_different_lengths() -> None:
    with pytest.raises(ValueError, match=r"^n and c must have one value per case \(got 3 and 2\)$"):
        case_pairs([4, 4, 1], [4, 2])


@settings(max_examples=examples(100), deadline=None)
@given(
    cases=st.lists(st.integers(0, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))), max_size=40),
    k=st.integers(1, 12),
    metric=st.sampled_from(["pass_at_k", "pass_hat_k"]),
)
def test_pair_values_equal_the_exact_value_of_every_case(cases: list[tuple[int, int]], k: int, metric: Metric) -> None:
    # The reference is the exact rational formula case by case (Chen et al. 2021 for pass@k, the
    # hypergeometric pass^k of Yao et al. 2024), not the vectorised code checked against itself.
    n = [a for a, _ in cases]
    c = [b for _, b in cases]
    exact = pass_at_k_exact if metric == "pass_at_k" else pass_hat_k_exact
    reused = pair_values(case_pairs(n, c), k=k, metric=metric)
    np.testing.assert_array_equal(reused.defined, [a >= k for a in n])
    for got, (a, b), defined in zip(reused.values, cases, reused.defined, strict=True):
        if defined:
            assert got == pytest.approx(float(exact(a, b, k)), abs=1e-12)
    assert reused.exact_sum == sum(exact(a, b, k) for a, b in cases if a >= k)
    assert case_values(n, c, k=k, metric=metric).exact_sum == reused.exact_sum
