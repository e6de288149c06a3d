"""May a judge vote? Calibration present, current (judge model, rubric) and within the policy's limits."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gatestats.judges import (
    JudgeCalibration,
    JudgePolicy,
    calibrate,
    corrected_pass_rate,
    judge_eligibility,
    load_calibrations,
    write_calibration,
)
from gatestats.records import load_records
from tests.conftest import make_record

RUBRIC = "sha256:" + "ab" * 32


def _calibration(
    n_false_pass: int, n_fail: int = 200, *, judge: str = "gpt-4o", pairwise: bool = False
) -> JudgeCalibration:
    labels = ["pass"] * 200 + ["fail"] * n_fail
    verdicts = ["pass"] * 190 + ["fail"] * 10 + ["pass"] * n_false_pass + ["fail"] * (n_fail - n_false_pass)
    frame = pl.DataFrame({"item": [str(i) for i in range(len(labels))], "label": labels, "verdict": verdicts})
    if pairwise:
        frame = frame.with_columns(verdict_swapped=pl.col("verdict"))
    return calibrate(
        frame, positive="pass", negative="fail", judge_model=judge, rubric_digest=RUBRIC,
        kind="pairwise" if pairwise else "pointwise",
    )  # fmt: skip


def _records(write_jsonl: Callable[..., Path], graders: list[list[dict[str, Any]]]) -> pl.DataFrame:
    rows = [
        make_record(record_id=f"r{i}", case_id=f"case-{i}", graders=g, outcome="passed") for i, g in enumerate(graders)
    ]
    return load_records(write_jsonl(rows))


def _grader(version: str | None, verdict: str = "passed", name: str = "helpful") -> dict[str, Any]:
    return {"name": name, "kind": "judge", "verdict": verdict, "calibration_version": version}


POLICY = JudgePolicy(judge_model="gpt-4o", rubric_digest=RUBRIC, max_false_pass_rate=0.10)


def test_a_good_current_calibration_votes(write_jsonl: Callable[..., Path], tmp_path: Path) -> None:
    cal = _calibration(n_false_pass=4)  # 4/200 false passes: upper 95% bound 0.050
    path = write_calibration(cal, tmp_path / "cal.json")
    records = _records(
        write_jsonl,
        [[_grader(cal.version)], [_grader(cal.version, "failed")], [_grader(cal.version, "unparseable")],
         [{"name": "tests", "kind": "code", "verdict": "passed"}]],
    )  # fmt: skip
    for frame in (records, records.lazy()):
        e = judge_eligibility(frame, calibrations=load_calibrations([path]), policies={"helpful": POLICY})
        assert e.all_can_vote
        (vote,) = e.votes
        assert (vote.grader, vote.calibration_version, vote.n_verdicts) == ("helpful", cal.version, 3)
        assert (vote.n_passed, vote.n_failed, vote.n_unparseable, vote.reasons) == (1, 1, 1, ())
    # The vote's counts feed the correction of the production pass rate.
    corrected = corrected_pass_rate(vote.n_passed, vote.n_passed + vote.n_failed, calibration=cal)
    assert corrected.status == "ok"


def test_uncalibrated_unknown_and_unpoliced_judges_cannot_vote(write_jsonl: Callable[..., Path]) -> None:
    cal = _calibration(n_false_pass=4)
    records = _records(
        write_jsonl,
        [[_grader(None)], [_grader("judge-cal-0000000000000000")], [_grader(cal.version, name="other")]],
    )
    e = judge_eligibility(records, calibrations=[cal], policies={"helpful": POLICY})
    assert not e.all_can_vote
    reasons = {(v.grader, v.calibration_version): v.reasons for v in e.votes}
    assert reasons[("helpful", None)] == ("the records name no calibration version: an uncalibrated judge cannot vote",)
    assert reasons[("helpful", "judge-cal-0000000000000000")] == (
        "calibration 'judge-cal-0000000000000000' not found among the 1 calibration(s) given",
    )
    assert reasons[("other", cal.version)] == ("no judge policy for grader 'other' (policies: ['helpful'])",)
    assert e.to_frame().columns == [
        "grader", "calibration_version", "n_verdicts", "n_passed", "n_failed", "n_unparseable", "can_vote", "reasons",
    ]  # fmt: skip


def test_stale_calibration_cannot_vote(write_jsonl: Callable[..., Path]) -> None:
    cal = _calibration(n_false_pass=4, judge="gpt-4o-mini")
    records = _records(write_jsonl, [[_grader(cal.version)]])
    policy = JudgePolicy(judge_model="gpt-4o", rubric_digest="sha256:" + "cd" * 32, max_false_pass_rate=0.1)
    (vote,) = judge_eligibility(records, calibrations=[cal], policies={"helpful": policy}).votes
    assert vote.reasons == (
        f"calibration {cal.version} measured judge model 'gpt-4o-mini', the policy requires 'gpt-4o' (stale calibration)",
        f"calibration {cal.version} measured rubric {RUBRIC!r}, the policy requires 'sha256:{'cd' * 32}' (stale calibration)",
    )


def test_limits_use_the_upper_confidence_bound_by_default(write_jsonl: Callable[..., Path]) -> None:
    cal = _calibration(n_false_pass=3, n_fail=20)  # 3/20 = 0.15; also fails on the estimate
    close = _calibration(n_false_pass=8, n_fail=100)  # 8/100 = 0.08, upper bound 0.150
    records = _records(write_jsonl, [[_grader(cal.version)], [_grader(close.version)]])
    upper = judge_eligibility(records, calibrations=[cal, close], policies={"helpful": POLICY})
    by_version = {v.calibration_version: v for v in upper.votes}
    assert by_version[close.version].reasons == (
        "the false pass rate upper 95% confidence bound 0.1500 exceeds the limit 0.1 (estimate 0.0800, 8/100)",
    )
    lenient = JudgePolicy(judge_model="gpt-4o", rubric_digest=RUBRIC, max_false_pass_rate=0.10, criterion="estimate")
    by_version = {
        v.calibration_version: v
        for v in judge_eligibility(records, calibrations=[cal, close], policies={"helpful": lenient}).votes
    }
    assert by_version[close.version].can_vote
    assert by_version[cal.version].reasons == (
        "the false pass rate estimate 0.1500 exceeds the limit 0.1 (estimate 0.1500, 3/20)",
    )


def test_unknown_rates_never_meet_a_limit(write_jsonl: Callable[..., Path]) -> None:
    no_fails = _calibration(n_false_pass=0, n_fail=0)
    records = _records(write_jsonl, [[_grader(no_fails.version)]])
    policy = JudgePolicy(judge_model="gpt-4o", rubric_digest=RUBRIC, max_false_pass_rate=0.1, max_flip_rate=0.2)
    (vote,) = judge_eligibility(records, calibrations=[no_fails], policies={"helpful": policy}).votes
    assert vote.reasons == (
        "the false pass rate is unknown (no item labelled 'fail' has a parseable verdict (0 unparseable): the "
        "false-pass rate is undefined), so it cannot be shown to be within 0.1",
        "the policy limits the flip rate to 0.2 but the calibration did not measure it",
    )


def test_flip_rate_limit_for_pairwise_judges(write_jsonl: Callable[..., Path]) -> None:
    cal = _calibration(n_false_pass=4, pairwise=True)  # both orders agree: flip rate 0/400
    records = _records(write_jsonl, [[_grader(cal.version)]])
    policy = JudgePolicy(judge_model="gpt-4o", rubric_digest=RUBRIC, max_false_pass_rate=0.1, max_flip_rate=0.02)
    (vote,) = judge_eligibility(records, calibrations=[cal], policies={"helpful": policy}).votes
    assert vote.can_vote, vote.reasons


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_false_pass_rate": 1.5}, "JudgePolicy.max_false_pass_rate must lie in [0, 1] (got 1.5)"),
        (
            {"max_false_pass_rate": 0.1, "criterion": "mean"},
            "JudgePolicy.criterion must be one of upper_bound, estimate (got 'mean')",
        ),
        (
            {"max_false_pass_rate": 0.1, "rubric_digest": ""},
            "JudgePolicy needs a judge_model and a rubric_digest (got 'm', '')",
        ),
    ],
)
def test_policy_validation(kwargs: dict[str, Any], message: str) -> None:
    args = {"judge_model": "m", "rubric_digest": RUBRIC, **kwargs}
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        JudgePolicy(**args)


def test_records_without_graders_column() -> None:
    with pytest.raises(ValueError, match=r"^records: missing column 'graders'"):
        judge_eligibility(pl.DataFrame({"x": [1]}), calibrations=[], policies={})
