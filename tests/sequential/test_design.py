"""The sequential design object and its table reader."""

from __future__ import annotations

import re

import pytest

from gatestats.sequential import SequentialDesign, parse_sequential_table, sequential_problems


def test_checkpoints_end_at_max_cases_with_a_shorter_last_batch() -> None:
    assert SequentialDesign(max_cases=200, trials=3, batch_cases=20).checkpoints() == tuple(range(20, 201, 20))
    assert SequentialDesign(max_cases=45, trials=1, batch_cases=20).checkpoints() == (20, 40, 45)
    assert SequentialDesign(max_cases=7, trials=1, batch_cases=7).checkpoints() == (7,)
    assert SequentialDesign(max_cases=3, trials=1, batch_cases=1).checkpoints() == (1, 2, 3)


def test_the_table_reader_fills_the_defaults_and_round_trips() -> None:
    design = parse_sequential_table({"max_cases": 100, "trials": 2, "batch_cases": 10})
    assert design == SequentialDesign(max_cases=100, trials=2, batch_cases=10, method="betting", alpha_pass_share=0.5)
    assert parse_sequential_table(design.to_dict()) == design


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"max_cases": 10, "trials": 1, "batch_cases": 11},
            "key 'batch_cases': must be at most max_cases = 10 (got 11)",
        ),
        (
            {"max_cases": 10, "trials": 1, "batch_cases": 5, "alpha_pass_share": 1},
            "key 'alpha_pass_share': expected a number in (0, 1) (got 1)",
        ),
        (
            {"max_cases": 10, "trials": 1, "batch_cases": 5, "alpha_pass_share": -0.1},
            "key 'alpha_pass_share': expected a number in (0, 1) (got -0.1)",
        ),
        (
            {"max_cases": 10, "trials": 1, "batch_cases": 5, "alpha_pass_share": True},
            "key 'alpha_pass_share': expected a number in (0, 1) (got bool True)",
        ),
        (
            {"max_cases": 10, "trials": 1, "batch_cases": 5, "method": "mixture"},
            "key 'method': expected one of 'betting', 'empirical_bernstein', 'hoeffding' (got 'mixture')",
        ),
        ({"max_cases": 10.0, "trials": 1, "batch_cases": 5}, "key 'max_cases': expected an integer (got float 10.0)"),
        ({"trials": 1, "batch_cases": 5}, "key 'max_cases': required key is missing"),
        ({"max_cases": 10, "trials": 0, "batch_cases": 5}, "key 'trials': expected an integer in [1, 10000] (got 0)"),
        (
            {"max_cases": 10, "trials": 1, "batch_cases": 5, "seed": 3},
            "key 'seed': unknown key (expected one of: max_cases, trials, batch_cases, method, alpha_pass_share)",
        ),
    ],
)
def test_a_bad_table_is_a_value_error_naming_the_key(table: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape("sequential design: " + message) + "$"):
        parse_sequential_table(table)


def test_every_problem_is_listed_in_key_order() -> None:
    found = sequential_problems({"max_cases": 0, "trials": "3", "batch_cases": 5, "alpha_pass_share": 2.0})
    assert [key for key, _ in found] == ["max_cases", "trials", "alpha_pass_share"]


def test_the_dataclass_refuses_what_the_table_refuses() -> None:
    with pytest.raises(ValueError, match=re.escape("key 'batch_cases': must be at most max_cases = 5 (got 6)")):
        SequentialDesign(max_cases=5, trials=1, batch_cases=6)


def test_a_table_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("sequential design: expected a table (got int 3)")):
        parse_sequential_table(3)  # type: ignore[arg-type]
