"""Cost per accepted outcome: hand-computed examples, statuses, errors, groups and time columns."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gatestats.cost import MIN_UNITS_INTERVAL, RECORD_COLUMNS, ReviewRateRequiredError, cost_per_accepted
from gatestats.errors import InsufficientEvidenceError
from gatestats.records import load_records
from tests.conftest import make_record
from tests.cost.conftest import frame, many_cases

LAZY = pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])


def _records(rows: list[dict[str, Any]], lazy: bool) -> pl.DataFrame | pl.LazyFrame:
    data = frame(rows)
    return data.lazy() if lazy else data


@LAZY
def test_every_attempt_is_paid_for_retries_and_infra_errors_included(lazy: bool) -> None:
    rows = [
        # case x, trial 0: two infrastructure errors, then a failure -> not accepted
        {"case_id": "x", "trial": 0, "attempt": 0, "outcome": "infra_error", "cost_usd": 0.5},
        {"case_id": "x", "trial": 0, "attempt": 1, "outcome": "infra_error", "cost_usd": 0.5},
        {"case_id": "x", "trial": 0, "attempt": 2, "outcome": "failed", "cost_usd": 1.0},
        # case x, trial 1: passed at once
        {"case_id": "x", "trial": 1, "attempt": 0, "outcome": "passed", "cost_usd": 1.0},
        # case y: failed, then the correction (attempt 1) passed
        {"case_id": "y", "trial": 0, "attempt": 0, "outcome": "failed", "cost_usd": 2.0},
        {"case_id": "y", "trial": 0, "attempt": 1, "outcome": "passed", "cost_usd": 1.5},
    ]
    g = cost_per_accepted(_records(rows, lazy)).group(system="baseline")
    # by hand: (0.5 + 0.5 + 1.0 + 1.0 + 2.0 + 1.5) / 2 accepted = 6.5 / 2
    assert (g.status, g.estimate, g.total_spend_usd) == ("ok", 3.25, 6.5)
    assert (g.accepted, g.trials, g.attempts, g.attempts_infra_error, g.n_cases) == (2, 3, 6, 2, 2)
    assert g.undivided_usd == 6.5
    assert (g.model_usd, g.tool_usd, g.execution_usd, g.review_usd) == (0.0, 0.0, 0.0, 0.0)


def test_a_pass_superseded_by_a_later_failed_attempt_is_not_accepted() -> None:
    rows = [
        {"case_id": "x", "attempt": 0, "outcome": "passed", "cost_usd": 1.0},
        {"case_id": "x", "attempt": 1, "outcome": "failed", "cost_usd": 1.0},
        {"case_id": "y", "attempt": 0, "outcome": "passed", "cost_usd": 1.0},
    ]
    g = cost_per_accepted(frame(rows)).group(system="baseline")
    assert (g.accepted, g.estimate) == (1, 3.0)


def test_infra_error_spend_raises_the_cost_per_accepted_outcome() -> None:
    clean = [
        {"case_id": "x", "outcome": "passed", "cost_model_usd": 1.0},
        {"case_id": "y", "outcome": "passed", "cost_model_usd": 1.0},
    ]
    infra = {"case_id": "y", "trial": 1, "outcome": "infra_error", "cost_execution_usd": 0.6}
    before = cost_per_accepted(frame(clean)).group(system="baseline")
    after = cost_per_accepted(frame([*clean, infra])).group(system="baseline")
    assert (before.estimate, after.estimate) == (1.0, 1.3)  # (2 + 0.6) / 2
    assert (after.execution_usd, after.attempts_infra_error, after.trials) == (0.6, 1, 3)


def test_cost_parts_sum_and_null_parts_count_zero_when_one_is_set() -> None:
    rows = [
        {"case_id": "x", "cost_model_usd": 1.0, "cost_tool_usd": 0.25, "cost_execution_usd": 0.5},
        {"case_id": "y", "cost_model_usd": 2.0},  # tool and execution null: counted 0
    ]
    g = cost_per_accepted(frame(rows)).group(system="baseline")
    assert (g.model_usd, g.tool_usd, g.execution_usd, g.attempt_spend_usd, g.estimate) == (3.0, 0.25, 0.5, 3.75, 1.875)


@LAZY
def test_overlapping_review_of_one_reviewer_is_counted_once(lazy: bool) -> None:
    rows = [
        # ann: 10:00-10:45 and 10:30-11:00 overlap by 15 minutes -> 1 h, not 1.25 h
        {"case_id": "x", "reviewer": "ann", "review_started_at": "2024-05-01T10:00:00Z",
         "review_ended_at": "2024-05-01T10:45:00Z", "cost_usd": 1.0},
        {"case_id": "y", "reviewer": "ann", "review_started_at": "2024-05-01T12:30:00+02:00",
         "review_ended_at": "2024-05-01T11:00:00Z", "cost_usd": 1.0},
        # bob works the same hour: a different reviewer, never merged with ann
        {"case_id": "z", "outcome": "failed", "reviewer": "bob", "review_started_at": "2024-05-01T10:00:00Z",
         "review_ended_at": "2024-05-01T11:00:00Z", "cost_usd": 1.0},
    ]  # fmt: skip
    result = cost_per_accepted(_records(rows, lazy), review_rate_usd_per_hour=60.0)
    g = result.group(system="baseline")
    # by hand: human 1 h (ann) + 1 h (bob) = 2 h; review 2 h x 60 = 120; (3 + 120) / 2 accepted
    assert g.human_hours == pytest.approx(2.0)
    assert g.review_usd == pytest.approx(120.0)
    assert g.estimate == pytest.approx(61.5)
    assert result.human_hours_total == pytest.approx(2.0)


def test_review_and_correction_of_one_reviewer_merge_and_unknown_reviewers_do_not() -> None:
    rows = [
        # one record: review 10:00-10:30, correction 10:15-10:45 by ann -> 45 minutes
        {"case_id": "x", "reviewer": "ann", "review_started_at": "2024-05-01T10:00:00Z",
         "review_ended_at": "2024-05-01T10:30:00Z", "correction_started_at": "2024-05-01T10:15:00Z",
         "correction_ended_at": "2024-05-01T10:45:00Z", "cost_usd": 0.0},
        # two overlapping intervals without a reviewer: cannot be merged -> 1 h + 1 h
        {"case_id": "y", "review_started_at": "2024-05-01T10:00:00Z", "review_ended_at": "2024-05-01T11:00:00Z",
         "cost_usd": 0.0},
        {"case_id": "z", "review_started_at": "2024-05-01T10:00:00Z", "review_ended_at": "2024-05-01T11:00:00Z",
         "cost_usd": 0.0},
        # touching intervals of one reviewer: 11:00-11:30 and 11:30-12:00 -> 1 h
        {"case_id": "u", "reviewer": "cy", "review_started_at": "2024-05-01T11:00:00Z",
         "review_ended_at": "2024-05-01T11:30:00Z", "cost_usd": 0.0},
        {"case_id": "v", "reviewer": "cy", "review_started_at": "2024-05-01T11:30:00Z",
         "review_ended_at": "2024-05-01T12:00:00Z", "cost_usd": 0.0},
    ]  # fmt: skip
    g = cost_per_accepted(frame(rows), review_rate_usd_per_hour=100.0).group(system="baseline")
    assert g.human_hours == pytest.approx(0.75 + 2.0 + 1.0)
    assert g.estimate == pytest.approx(375.0 / 5)


def test_a_reviewers_time_shared_between_systems_is_split_not_doubled() -> None:
    review = {"reviewer": "ann", "review_started_at": "2024-05-01T10:00:00Z", "review_ended_at": "2024-05-01T11:00:00Z"}
    rows = [
        {"system": "a", "case_id": "x", "cost_usd": 1.0, **review},
        {"system": "b", "case_id": "x", "cost_usd": 1.0, **review},
    ]
    result = cost_per_accepted(frame(rows), review_rate_usd_per_hour=10.0)
    assert [g.human_hours for g in result.groups] == [pytest.approx(0.5), pytest.approx(0.5)]
    assert [g.estimate for g in result.groups] == [pytest.approx(6.0), pytest.approx(6.0)]
    assert result.human_hours_total == pytest.approx(1.0)


def test_human_time_without_a_review_rate_is_an_error_and_zero_is_allowed() -> None:
    rows = [
        {"case_id": "x", "cost_usd": 1.0, "reviewer": "ann", "review_started_at": "2024-05-01T10:00:00Z",
         "review_ended_at": "2024-05-01T10:30:00Z"},
    ]  # fmt: skip
    expected = (
        "review_rate_usd_per_hour is required (CLI: --review-rate USD_PER_HOUR): human review or correction time "
        "is recorded on 1 record(s), e.g. 'r-0', and cannot be priced without an hourly rate; pass 0 explicitly "
        "to leave it unpriced"
    )
    with pytest.raises(ReviewRateRequiredError, match=f"^{re.escape(expected)}$"):
        cost_per_accepted(frame(rows))
    g = cost_per_accepted(frame(rows), review_rate_usd_per_hour=0).group(system="baseline")
    assert (g.human_hours, g.review_usd, g.estimate) == (0.5, 0.0, 1.0)


@LAZY
def test_machine_rate_imputes_execution_spend_only_where_there_is_none(lazy: bool) -> None:
    rows = [
        # no execution spend, 1 h of machine time at 2 USD/h -> 2.0 imputed
        {"case_id": "x", "cost_model_usd": 1.0, "machine_seconds": 3600.0},
        # execution spend recorded: kept, not imputed
        {"case_id": "y", "cost_model_usd": 1.0, "cost_execution_usd": 0.5, "machine_seconds": 7200.0},
        # undivided cost_usd already holds execution: not imputed
        {"case_id": "z", "cost_usd": 3.0, "machine_seconds": 1800.0},
        # machine time only: its execution spend is the imputed part
        {"case_id": "w", "outcome": "failed", "machine_seconds": 900.0},
    ]
    g = cost_per_accepted(_records(rows, lazy), machine_rate_usd_per_hour=2.0).group(system="baseline")
    # by hand: 1 + 2 | 1 + 0.5 | 3 | 0.5  -> 8.0 over 3 accepted
    assert (g.n_attempts_imputed, g.imputed_execution_usd, g.execution_usd) == (2, 2.5, 3.0)
    assert g.total_spend_usd == pytest.approx(8.0)
    assert g.estimate == pytest.approx(8.0 / 3)
    assert g.machine_hours == pytest.approx(3.75)
    without = cost_per_accepted(_records(rows, lazy)).group(system="baseline")
    assert (without.status, without.n_attempts_cost_unknown, without.n_attempts_imputed) == (
        "insufficient_evidence",
        1,
        0,
    )


@LAZY
def test_missing_cost_makes_the_estimate_insufficient_evidence_naming_the_records(lazy: bool) -> None:
    rows = [
        {"case_id": "x", "cost_usd": 1.0},
        {"case_id": "y", "record_id": "no-cost-1"},
        {"case_id": "z", "record_id": "no-cost-2", "tokens_input": 10},
    ]
    g = cost_per_accepted(_records(rows, lazy)).group(system="baseline")
    assert g.status == "insufficient_evidence"
    assert (g.estimate, g.ci_low, g.total_spend_usd, g.model_usd) == (None, None, None, None)
    assert g.reason == (
        "spend unknown: 2 of 3 attempt(s) carry no cost (cost_usd and the parts cost_model_usd, cost_tool_usd, "
        "cost_execution_usd all null), e.g. record(s) 'no-cost-1', 'no-cost-2'; missing cost is never counted as 0"
    )
    assert g.cost_unknown_record_ids == ("no-cost-1", "no-cost-2")
    assert (g.accepted, g.attempts) == (3, 3)


@LAZY
def test_zero_accepted_outcomes_is_insufficient_evidence_not_infinity(lazy: bool) -> None:
    rows = [
        {"case_id": "x", "outcome": "failed", "cost_usd": 1.0},
        {"case_id": "y", "outcome": "infra_error", "cost_usd": 1.0},
    ]
    g = cost_per_accepted(_records(rows, lazy)).group(system="baseline")
    assert (g.status, g.estimate, g.total_spend_usd) == ("insufficient_evidence", None, 2.0)
    assert g.reason == (
        "no accepted outcome: none of the 2 trial(s) ended (final attempt) in 'passed'; "
        "cost per accepted outcome is undefined"
    )
    with pytest.raises(InsufficientEvidenceError, match="no accepted outcome"):
        g.confidence_interval(0.9)


def test_a_review_interval_with_one_end_missing_makes_human_time_unknown() -> None:
    rows = [{"case_id": "x", "cost_usd": 1.0, "reviewer": "ann", "review_started_at": "2024-05-01T10:00:00Z"}]
    g = cost_per_accepted(frame(rows), review_rate_usd_per_hour=50.0).group(system="baseline")
    assert (g.status, g.human_hours, g.review_usd, g.total_spend_usd) == ("insufficient_evidence", None, None, None)
    assert g.reason == (
        "human time unknown: 1 record(s) have a review or correction interval with one end missing, e.g. 'r-0'"
    )


def test_time_columns_are_separate_and_computed_by_hand() -> None:
    rows = [
        {"case_id": "x", "cost_usd": 1.0, "machine_seconds": 1800.0, "started_at": "2024-05-01T10:00:00Z",
         "ended_at": "2024-05-01T10:30:00Z", "reviewer": "ann", "review_started_at": "2024-05-01T11:00:00Z",
         "review_ended_at": "2024-05-01T11:15:00Z"},
        {"case_id": "y", "cost_usd": 1.0, "started_at": "2024-05-01T10:05:00Z", "ended_at": "2024-05-01T10:20:00Z"},
    ]  # fmt: skip
    g = cost_per_accepted(frame(rows), review_rate_usd_per_hour=0).group(system="baseline")
    # calendar: 10:00 (first start) to 11:15 (review end); machine: 1800 s of the one attempt that has it
    assert (g.calendar_hours, g.machine_hours, g.human_hours) == (1.25, 0.5, 0.25)
    assert (g.n_attempts_missing_machine_seconds, g.n_attempts_missing_timestamps) == (1, 0)
    rows[1]["ended_at"] = None
    g = cost_per_accepted(frame(rows), review_rate_usd_per_hour=0).group(system="baseline")
    assert (g.calendar_hours, g.n_attempts_missing_timestamps) == (None, 1)
    g = cost_per_accepted(frame([rows[1]])).group(system="baseline")
    assert g.machine_hours is None


def test_slices_are_exploded_and_cases_without_slice_form_their_own_group() -> None:
    rows = [
        {"case_id": "x", "cost_usd": 1.0, "slices": ["easy", "tools"]},
        {"case_id": "y", "cost_usd": 3.0, "outcome": "failed", "slices": ["tools", "tools"]},
        {"case_id": "z", "cost_usd": 5.0, "slices": None},
        {"case_id": "w", "cost_usd": 7.0, "slices": []},
    ]
    result = cost_per_accepted(frame(rows), by=("slice",))
    assert [(g.key["slice"], g.estimate, g.attempts) for g in result.groups] == [
        ("easy", 1.0, 1),
        ("tools", 4.0, 2),  # (1 + 3) / 1; y listed 'tools' twice: counted once
        (None, 6.0, 2),  # (5 + 7) / 2
    ]
    table = result.to_frame()
    assert table.columns[:3] == ["slice", "status", "estimate"]
    assert table["slice"].to_list() == ["easy", "tools", None]


def test_groups_by_any_scalar_column_and_by_several() -> None:
    rows = [
        {"system": "a", "model_id": "m1", "case_id": "x", "cost_usd": 1.0},
        {"system": "a", "model_id": "m2", "case_id": "y", "cost_usd": 2.0},
        {"system": "b", "model_id": "m1", "case_id": "x", "cost_usd": 4.0},
    ]
    by_model = cost_per_accepted(frame(rows), by=("model_id",))
    assert [(g.key, g.estimate) for g in by_model.groups] == [({"model_id": "m1"}, 2.5), ({"model_id": "m2"}, 2.0)]
    both = cost_per_accepted(frame(rows), by=("system", "model_id"))
    assert both.group(system="b", model_id="m1").estimate == 4.0
    assert both.to_frame().columns[:2] == ["system", "model_id"]


@LAZY
def test_interval_needs_the_minimum_number_of_cases_and_keeps_the_estimate(lazy: bool) -> None:
    small = cost_per_accepted(_records(many_cases(MIN_UNITS_INTERVAL - 1), lazy)).group(system="a")
    assert (small.status, small.interval_status) == ("ok", "insufficient_evidence")
    assert small.estimate is not None
    assert small.ci_low is None
    assert small.interval_reason == (
        "an interval needs at least 30 independent cases (got 29); below that the simulated coverage of the "
        "case bootstrap fell under 93% (docs/cost.md)"
    )
    big = cost_per_accepted(_records(many_cases(MIN_UNITS_INTERVAL), lazy), seed=3).group(system="a")
    assert big.interval_status == "ok"
    assert big.ci_low is not None
    assert big.ci_high is not None
    assert big.estimate
    assert big.ci_low < big.estimate < big.ci_high
    assert (big.method, big.seed, big.n_resamples) == ("bca", 3, 2000)
    narrower = big.confidence_interval(0.8)
    assert narrower.ci_low is not None
    assert narrower.ci_high is not None
    assert big.ci_low < narrower.ci_low < narrower.ci_high < big.ci_high


def test_case_groups_are_the_resampling_unit() -> None:
    rows = many_cases(120, group_size=4)
    g = cost_per_accepted(frame(rows)).group(system="a")
    assert (g.n_cases, g.n_units, g.clustered, g.interval_status) == (120, 30, True, "ok")
    g = cost_per_accepted(frame(many_cases(80, group_size=4))).group(system="a")
    assert g.interval_reason is not None
    assert "at least 30 independent case groups (got 20)" in g.interval_reason


def test_resamples_without_accepted_outcome_are_counted_and_bound_the_interval() -> None:
    rows = many_cases(40, pass_rate=0.0)
    rows[0]["outcome"] = rows[1]["outcome"] = "passed"
    g = cost_per_accepted(frame(rows)).group(system="a")
    # P(no accepted among 40 draws) = (38/40)^40 = 0.129 > 2.5%: the upper bound is unbounded
    assert g.status == "ok"
    assert g.interval_status == "insufficient_evidence"
    assert g.n_resamples_no_accepted is not None
    assert 200 < g.n_resamples_no_accepted < 330
    assert g.interval_reason is not None
    assert g.interval_reason.startswith(f"the 95% interval is unbounded: {g.n_resamples_no_accepted} of 2000 resamples")


def test_all_accepted_outcomes_in_one_case_leave_bca_undefined() -> None:
    rows = many_cases(40, pass_rate=0.0)
    rows[0]["outcome"] = "passed"
    g = cost_per_accepted(frame(rows)).group(system="a")
    assert g.interval_reason is not None
    assert g.interval_reason.startswith("the BCa interval is undefined")


def test_free_outcomes_give_no_zero_width_interval() -> None:
    rows = [{**row, "cost_model_usd": 0.0} for row in many_cases(40)]
    g = cost_per_accepted(frame(rows)).group(system="a")
    assert (g.estimate, g.interval_status) == (0.0, "insufficient_evidence")
    assert g.interval_reason == "the resampled values do not vary (all 0): the interval would have zero width"


@pytest.mark.parametrize(
    ("rows", "kwargs", "message"),
    [
        ([{"cost_usd": -1.0}], {}, "records: record 'r-0': field 'cost_usd': expected a number >= 0 (got -1.0)"),
        (
            [{"cost_usd": 1.0, "cost_model_usd": 1.0}],
            {},
            "records: record 'r-0': field 'cost_usd': expected null when a cost part is set (spend would be "
            "counted twice) (got 1.0)",
        ),
        (
            [{"review_started_at": "2024-05-01T10:00:00Z", "review_ended_at": "2024-05-01T09:00:00Z"}],
            {"review_rate_usd_per_hour": 1.0},
            "records: record 'r-0': field 'review_ended_at': expected a time at or after review_started_at "
            "(got '2024-05-01T09:00:00Z')",
        ),
        (
            [{"started_at": "yesterday"}],
            {},
            "records: record 'r-0': field 'started_at': expected an RFC 3339 timestamp with offset (got 'yesterday')",
        ),
        ([{}, {"record_id": "dup"}], {}, "records: duplicate key (system, case_id, case_version, trial, attempt)"),
        ([{}], {"by": ("nope",)}, "by: no column 'nope' in the records"),
        ([{}], {"by": ("slices",)}, "by: group by 'slice'"),
        ([{}], {"by": "system"}, "by must be a non-empty tuple of column names"),
        ([{}], {"review_rate_usd_per_hour": -5.0}, "review_rate_usd_per_hour must be a finite number >= 0"),
        ([{}], {"n_resamples": 10}, "n_resamples must be an integer >= 100 (got 10)"),
        ([{}], {"confidence_level": 1.5}, "confidence_level must lie strictly between 0 and 1 (got 1.5)"),
        (
            [{"case_group": "g1"}, {"trial": 1, "case_group": "g2"}],
            {},
            "records: case 'case-1' carries several case_group values (got ['g1', 'g2'])",
        ),
    ],
)
def test_invalid_input_is_refused_with_a_message_naming_record_and_field(
    rows: list[dict[str, Any]], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        cost_per_accepted(frame(rows), **kwargs)


def test_records_without_required_columns_or_of_the_wrong_type_are_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("records lack required column(s) ['record_id']")):
        cost_per_accepted(pl.DataFrame({"system": ["a"], "case_id": ["x"], "trial": [0], "attempt": [0],
                                        "outcome": ["passed"]}))  # fmt: skip
    with pytest.raises(TypeError, match="records must be a polars DataFrame or LazyFrame"):
        cost_per_accepted([make_record()])  # type: ignore[arg-type]


def test_loaded_record_files_work_end_to_end(write_jsonl: Callable[..., Path]) -> None:
    path = write_jsonl(
        [
            make_record(record_id="a", case_id="x", cost_model_usd=0.25, cost_tool_usd=0.05, slices=["s"],
                        started_at="2024-05-01T10:00:00Z", ended_at="2024-05-01T10:10:00Z", machine_seconds=600.0),
            make_record(record_id="b", case_id="y", outcome="failed", cost_usd=0.3),
        ]
    )  # fmt: skip
    records = load_records(path)
    g = cost_per_accepted(records, by=("system", "slice")).group(system="baseline", slice="s")
    assert (g.estimate, g.machine_hours) == (pytest.approx(0.3), pytest.approx(1 / 6))
    none = cost_per_accepted(records, by=("slice",)).group(slice=None)
    assert (none.accepted, none.estimate, none.total_spend_usd) == (0, None, pytest.approx(0.3))
    assert none.reason is not None
    assert none.reason.startswith("no accepted outcome")


def test_to_dict_carries_the_documented_fields() -> None:
    payload = cost_per_accepted(frame(many_cases(30)), seed=5).to_dict()
    assert set(payload) == {
        "by", "review_rate_usd_per_hour", "machine_rate_usd_per_hour", "confidence_level", "method",
        "n_resamples", "seed", "human_hours_total", "groups",
    }  # fmt: skip
    (group,) = payload["groups"]
    assert set(group["cost_per_accepted"]) >= {"estimate", "ci_low", "ci_high", "interval_status", "method", "seed"}
    assert set(group["spend_usd"]) == {"attempts", "model", "tool", "execution", "undivided", "review"}
    assert {"accepted", "attempts", "total_spend_usd", "human_hours", "machine_hours", "calendar_hours"} <= set(group)
    assert (group["group"], group["cost_per_accepted"]["seed"], payload["seed"]) == ({"system": "a"}, 5, 5)


def test_an_empty_record_frame_is_refused_and_all_null_slices_form_the_none_group() -> None:
    with pytest.raises(ValueError, match=r"^records: no records \(got an empty frame\)"):
        cost_per_accepted(frame([{}]).clear())
    data = frame([{"case_id": "x", "cost_usd": 1.0}, {"case_id": "y", "cost_usd": 2.0}])
    data = data.with_columns(pl.lit(None).alias("slices"))  # dtype Null: no slice anywhere
    table = cost_per_accepted(data, by=("slice",)).to_frame()
    assert table.select("slice", "estimate").rows() == [(None, 1.5)]
    assert table.schema["slice"] == pl.String


def test_record_columns_are_all_the_estimate_reads() -> None:
    # Records cut to RECORD_COLUMNS give the same estimate and interval as the full records.
    full = frame(many_cases(30, seed=3))
    cut = full.select([c for c in RECORD_COLUMNS if c in full.columns])
    assert RECORD_COLUMNS[:6] == ("record_id", "system", "case_id", "trial", "attempt", "outcome")
    assert {"cost_usd", "machine_seconds", "review_ended_at"} <= set(RECORD_COLUMNS)
    assert set(full.columns) - set(RECORD_COLUMNS)  # something really is left out
    a, b = cost_per_accepted(full).group(system="a"), cost_per_accepted(cut).group(system="a")
    assert (b.estimate, b.ci_low, b.ci_high) == (a.estimate, a.ci_low, a.ci_high)
    assert b.estimate is not None


def test_interval_to_dict_uses_the_result_names_bounds_first() -> None:
    g = cost_per_accepted(frame(many_cases(30)), seed=5).group(system="a")
    ci = g.confidence_interval(0.9)
    assert list(ci.to_dict()) == [
        "ci_low", "ci_high", "interval_status", "interval_reason", "confidence_level", "method",
        "n_resamples", "seed", "n_units", "n_resamples_infinite", "n_resamples_undefined",
    ]  # fmt: skip
    assert ci.to_dict()["interval_status"] == ci.status == "ok"
    assert (ci.to_dict()["ci_low"], ci.to_dict()["n_units"]) == (ci.ci_low, 30)
