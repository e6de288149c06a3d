"""The vocabulary module: the words every layer reads, the metric table, which attempt counts, option checks."""

from __future__ import annotations

import math
import re
from typing import get_args

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from gatestats import vocabulary
from gatestats.vocabulary import (
    CORRECTIONS,
    GATE_CORRECTIONS,
    GATE_METRICS,
    METRICS,
    OUTCOMES,
    VALID_OUTCOMES,
    check_alpha,
    check_choice,
    check_confidence_level,
    check_n_resamples,
    check_seed,
    final_attempts,
    is_final_attempt,
    is_valid_outcome,
    metric_spec,
)
from gatestats_runner import contract

# ---------------------------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------------------------


def test_runner_contract_outcomes_equal_the_vocabulary_outcomes() -> None:
    # One source: the vocabulary's tuple is the runner's, read from the contract's JSON Schema;
    # the Literal types and the named words are its static mirror for mypy.
    assert vocabulary.OUTCOMES is contract.OUTCOMES
    assert OUTCOMES == ("passed", "failed", "resource_killed", "infra_error")
    assert get_args(vocabulary.Outcome) == OUTCOMES
    named = (vocabulary.PASSED, vocabulary.FAILED, vocabulary.RESOURCE_KILLED, vocabulary.INFRA_ERROR)
    assert named == OUTCOMES
    assert vocabulary.GRADER_VERDICTS is contract.GRADER_VERDICTS
    assert get_args(vocabulary.GraderVerdict) == vocabulary.GRADER_VERDICTS == ("passed", "failed", "unparseable")
    assert vocabulary.UNPARSEABLE == "unparseable"
    assert vocabulary.FAILING_OUTCOMES == ("failed", "resource_killed")


def test_the_metric_lists_derive_from_the_metric_table() -> None:
    assert vocabulary.METRICS_WITHOUT_K == ("pass_rate", "cost_per_accepted")
    assert all(not METRICS[m].takes_k for m in vocabulary.METRICS_WITHOUT_K)
    assert sorted(vocabulary.ESTIMANDS) == sorted(get_args(vocabulary.Metric))
    assert vocabulary.WEIGHTED_CORRECTIONS == ("holm", "bonferroni")
    assert set(vocabulary.WEIGHTED_CORRECTIONS) <= set(GATE_CORRECTIONS)


def test_valid_outcomes_are_every_outcome_but_infra_error() -> None:
    assert VALID_OUTCOMES == ("passed", "failed", "resource_killed")
    frame = pl.DataFrame({"outcome": list(OUTCOMES)})
    assert frame.filter(is_valid_outcome()).get_column("outcome").to_list() == list(VALID_OUTCOMES)
    renamed = frame.rename({"outcome": "result"})
    assert renamed.filter(is_valid_outcome("result")).height == 3


def test_gate_corrections_are_the_family_wise_corrections() -> None:
    assert CORRECTIONS == ("holm", "bonferroni", "hochberg", "bh", "none")
    assert GATE_CORRECTIONS == ("holm", "bonferroni", "hochberg", "none")
    assert get_args(vocabulary.GateMetric) == GATE_METRICS


# ---------------------------------------------------------------------------------------------
# The metric table
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "estimand", "takes_k", "better", "label_at_4", "words_at_4"),
    [
        ("pass_rate", "pass_hat_k", False, "higher", "pass rate", "pass rate"),
        ("pass_hat_k", "pass_hat_k", True, "higher", "pass^4", "reliability (pass^4: all 4 trials of a case pass)"),
        (
            "pass_at_k",
            "pass_at_k",
            True,
            "higher",
            "pass@4",
            "capability (pass@4: at least one of 4 trials passes)",
        ),
        ("cost_per_accepted", None, False, "lower", "cost per accepted", "cost per accepted outcome"),
    ],
)
def test_metric_spec_gives_each_metric_its_estimand_direction_and_words(
    name: str, estimand: str | None, takes_k: bool, better: str, label_at_4: str, words_at_4: str
) -> None:
    spec = metric_spec(name)
    assert spec is METRICS[name]  # type: ignore[index]
    assert (spec.name, spec.estimand, spec.takes_k, spec.better) == (name, estimand, takes_k, better)
    assert spec.label(4) == label_at_4
    assert spec.words(4) == words_at_4


def test_metric_table_covers_every_gate_metric_and_nothing_else() -> None:
    assert tuple(METRICS) == GATE_METRICS


def test_metric_spec_labels_default_to_k_of_one() -> None:
    assert metric_spec("pass_hat_k").label() == "pass^1"
    assert metric_spec("pass_at_k").words() == "capability (pass@1: at least one of 1 trials passes)"


@pytest.mark.parametrize("name", ["pass_k", "PASS_RATE", "", "cost"])
def test_metric_spec_refuses_an_unknown_metric_naming_the_known_ones(name: str) -> None:
    expected = f"unknown metric {name!r}; expected one of pass_rate, pass_hat_k, pass_at_k, cost_per_accepted"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        metric_spec(name)


# ---------------------------------------------------------------------------------------------
# Which attempt counts
# ---------------------------------------------------------------------------------------------


def _attempts() -> pl.DataFrame:
    """Trials with retries, in an order that is not sorted by attempt.

    Trial (a, x, null, 0) has attempts 0, 1, 2 (2 counts); (a, x, null, 1) one attempt; (a, x,
    "v2", 0) is another trial (another case version) with attempts 0 and 1; (b, x, null, 0) another
    system's trial with only attempt 0.
    """
    return pl.DataFrame(
        {
            "system": ["a", "a", "a", "a", "a", "a", "b"],
            "case_id": ["x"] * 7,
            "case_version": [None, None, None, "v2", None, "v2", None],
            "trial": [0, 0, 1, 0, 0, 0, 0],
            "attempt": [1, 0, 0, 1, 2, 0, 0],
            "outcome": ["infra_error", "infra_error", "failed", "passed", "passed", "failed", "failed"],
        },
        schema_overrides={"case_version": pl.String},
    )


def test_final_attempts_keeps_the_highest_attempt_of_each_trial_with_a_null_case_version() -> None:
    frame = _attempts()
    kept = final_attempts(frame).collect()
    # Input rows 2 (trial 1), 3 ("v2" attempt 1), 4 (attempt 2 of trial 0), 6 (system b), in input order.
    expected = frame[[2, 3, 4, 6]]
    assert_frame_equal(kept, expected)
    assert (
        kept.filter(pl.col("trial") == 0, pl.col("system") == "a", pl.col("case_version").is_null()).row(0, named=True)[
            "attempt"
        ]
        == 2
    )


def test_final_attempts_accepts_a_lazy_frame_and_returns_the_same_rows() -> None:
    frame = _attempts()
    assert_frame_equal(final_attempts(frame.lazy()).collect(), final_attempts(frame).collect())


def test_final_attempts_of_trials_without_retries_is_every_row() -> None:
    frame = _attempts().filter(pl.col("attempt") == 0)
    assert_frame_equal(final_attempts(frame).collect(), frame)


def test_is_final_attempt_selects_the_same_rows_as_final_attempts() -> None:
    frame = _attempts()
    assert_frame_equal(frame.filter(is_final_attempt()), final_attempts(frame).collect())
    flagged = frame.with_columns(final=is_final_attempt()).get_column("final").to_list()
    assert flagged == [False, False, True, True, True, False, True]


def test_final_attempts_and_is_final_attempt_take_another_trial_key() -> None:
    frame = _attempts()
    key = ("system", "case_id", "trial")  # case_version ignored: (a, x, 0) is one trial, attempts 0..2
    kept = final_attempts(frame, key).collect()
    assert kept.get_column("attempt").to_list() == [0, 2, 0]
    assert_frame_equal(frame.filter(is_final_attempt(key)), kept)


# ---------------------------------------------------------------------------------------------
# Option checks
# ---------------------------------------------------------------------------------------------


def test_check_confidence_level_returns_a_level_inside_the_unit_interval() -> None:
    assert check_confidence_level(0.95) == 0.95
    assert isinstance(check_confidence_level(0.95), float)


@pytest.mark.parametrize(
    ("value", "error", "shown"),
    [
        (0, ValueError, "must lie strictly between 0 and 1 (got 0)"),
        (1, ValueError, "must lie strictly between 0 and 1 (got 1)"),
        (math.nan, ValueError, "must lie strictly between 0 and 1 (got nan)"),
        (True, TypeError, "must be a number strictly between 0 and 1 (got True)"),
        ("0.9", TypeError, "must be a number strictly between 0 and 1 (got '0.9')"),
    ],
)
def test_check_confidence_level_refuses_bounds_nan_bools_and_strings(
    value: object, error: type[Exception], shown: str
) -> None:
    with pytest.raises(error) as caught:
        check_confidence_level(value)
    assert str(caught.value) == f"confidence_level {shown}"


def test_check_confidence_level_names_the_option_it_is_given() -> None:
    with pytest.raises(ValueError, match=r"^--confidence-level must lie strictly between 0 and 1 \(got 1\.5\)$"):
        check_confidence_level(1.5, "--confidence-level")


def test_check_alpha_accepts_up_to_its_upper_bound() -> None:
    assert check_alpha(0.05) == 0.05
    assert check_alpha(0.5) == 0.5
    assert check_alpha(1, upper=1.0) == 1.0


@pytest.mark.parametrize(
    ("value", "upper", "error", "message"),
    [
        (0, 0.5, ValueError, "alpha must lie in (0, 0.5] (got 0)"),
        (0.51, 0.5, ValueError, "alpha must lie in (0, 0.5] (got 0.51)"),
        (0.2, 0.1, ValueError, "alpha must lie in (0, 0.1] (got 0.2)"),
        (math.nan, 0.5, ValueError, "alpha must lie in (0, 0.5] (got nan)"),
        (False, 0.5, TypeError, "alpha must be a number in (0, 0.5] (got False)"),
        ("0.05", 0.5, TypeError, "alpha must be a number in (0, 0.5] (got '0.05')"),
    ],
)
def test_check_alpha_refuses_levels_outside_its_interval(
    value: object, upper: float, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        check_alpha(value, upper=upper)
    assert str(caught.value) == message


def test_check_n_resamples_accepts_integers_from_its_minimum() -> None:
    assert check_n_resamples(100) == 100
    assert check_n_resamples(9999) == 9999
    assert check_n_resamples(1, minimum=1) == 1


@pytest.mark.parametrize(
    ("value", "shown"),
    [(99, "99"), (0, "0"), (1000.0, "1000.0"), (True, "True"), ("1000", "'1000'"), (None, "None")],
)
def test_check_n_resamples_refuses_too_few_and_non_integers(value: object, shown: str) -> None:
    expected = f"--n-resamples must be an integer >= 100 (got {shown})"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        check_n_resamples(value, "--n-resamples")


def test_check_seed_accepts_zero_and_large_integers() -> None:
    assert check_seed(0) == 0
    assert check_seed(2**64) == 2**64


@pytest.mark.parametrize(("value", "shown"), [(-1, "-1"), (1.0, "1.0"), (False, "False"), ("7", "'7'")])
def test_check_seed_refuses_negative_and_non_integer_seeds(value: object, shown: str) -> None:
    expected = f"seed must be an integer >= 0 (got {shown})"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        check_seed(value)


def test_check_choice_returns_a_word_of_the_vocabulary() -> None:
    assert check_choice("holm", CORRECTIONS, "correction") == "holm"
    assert check_choice("bh", CORRECTIONS, "correction") == "bh"


@pytest.mark.parametrize(("value", "shown"), [("Holm", "'Holm'"), ("bh", "'bh'"), (None, "None"), (1, "1")])
def test_check_choice_refuses_a_word_outside_the_vocabulary_listing_the_choices(value: object, shown: str) -> None:
    expected = f"--correction must be one of holm, bonferroni, hochberg, none (got {shown})"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        check_choice(value, GATE_CORRECTIONS, "--correction")


def test_check_open_unit_returns_a_float_strictly_between_0_and_1() -> None:
    assert vocabulary.check_open_unit(0.025, "alpha") == 0.025
    assert type(vocabulary.check_open_unit(0.5, "share")) is float


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0, "0"), (1.0, "1.0"), (float("nan"), "nan"), (math.inf, "inf"), (True, "True"), ("0.1", "'0.1'")],
)
def test_check_open_unit_refuses_the_ends_nan_bools_and_strings_naming_the_argument(value: object, shown: str) -> None:
    expected = f"alpha_pass: expected a number in (0, 1) (got {shown})"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        vocabulary.check_open_unit(value, "alpha_pass")
