"""A judge-graded rule: it counts only when the judge's calibration is valid, current and within limits."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from gatestats.gate import evaluate_gate, load_judge_calibrations, load_policy, load_record_set
from gatestats.judges import calibrate, write_calibration
from tests.gate.factory import policy_text, rewrite_records, write_run_set

JUDGE = """
[[rules]]
name = "judged helpfulness"
metric = "pass_rate"
grader = "helpful"
threshold = 0.6

[judges.helpful]
calibrations = ["{calibration}"]
judge_model = "judge-1"
rubric_digest = "{rubric}"
max_false_pass_rate = {limit}
"""


def _calibration(tmp_path: Path) -> Path:
    # 400 labelled items; the judge is wrong on 4 of 200 true fails and 6 of 200 true passes
    labels = ["pass"] * 200 + ["fail"] * 200
    verdicts = ["pass"] * 194 + ["fail"] * 6 + ["pass"] * 4 + ["fail"] * 196
    frame = pl.DataFrame({"item": [f"i{i}" for i in range(400)], "label": labels, "verdict": verdicts})
    cal = calibrate(frame, positive="pass", negative="fail", judge_model="judge-1", rubric_digest="sha256:rubric")
    return write_calibration(cal, tmp_path / "cal.json")


def _add_judge(run_set: Path, version: str) -> None:
    path = run_set / "records.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        verdict = row["outcome"] if row["outcome"] in {"passed", "failed"} else "unparseable"
        row["graders"] = [{"name": "helpful", "kind": "judge", "verdict": verdict, "calibration_version": version}]
    rewrite_records(run_set, rows)


def _verdict(
    tmp_path: Path, *, limit: float, rubric: str = "sha256:rubric"
) -> tuple[str, list[str], dict[str, object]]:
    cal = _calibration(tmp_path)
    version = json.loads(cal.read_text())["version"]
    text = policy_text(JUDGE.format(calibration=cal.name, rubric=rubric, limit=limit), min_cases=50)
    (tmp_path / "policy.toml").write_text(text)
    policy = load_policy(tmp_path / "policy.toml")
    outcomes = {f"c{i:03d}": ["failed" if i % 10 == 0 else "passed"] for i in range(100)}
    b = write_run_set(tmp_path / "b", system="baseline", outcomes=outcomes)
    c = write_run_set(tmp_path / "c", system="candidate", outcomes=outcomes, policy=policy)
    _add_judge(c, version)
    _add_judge(b, version)
    v = evaluate_gate(policy, load_record_set(b), load_record_set(c), calibrations=load_judge_calibrations(policy))
    assert v.judges is not None
    return v.verdict, list(v.reasons), v.judges["helpful"]


def test_a_calibrated_judge_within_its_limit_votes(tmp_path: Path) -> None:
    verdict, reasons, status = _verdict(tmp_path, limit=0.1)
    assert status.can_vote is True
    assert verdict == "pass", reasons


def test_a_judge_whose_false_pass_bound_exceeds_the_limit_cannot_vote(tmp_path: Path) -> None:
    verdict, reasons, status = _verdict(tmp_path, limit=0.02)  # observed 4/200 = 0.02, upper bound above
    assert status.can_vote is False
    assert verdict == "insufficient_evidence"
    assert any(r.startswith("judge:helpful (candidate): ") and "false" in r for r in reasons)


def test_a_judge_calibrated_on_another_rubric_is_stale(tmp_path: Path) -> None:
    verdict, reasons, status = _verdict(tmp_path, limit=0.1, rubric="sha256:new-rubric")
    assert status.can_vote is False
    assert verdict == "insufficient_evidence"
    assert any("rubric" in r for r in reasons)


def test_the_engine_reads_no_calibration_file_a_judge_without_given_calibrations_cannot_vote(tmp_path: Path) -> None:
    verdict, _, _ = _verdict(tmp_path, limit=0.1)
    assert verdict == "pass"  # with the calibrations given, the same judge votes
    policy = load_policy(tmp_path / "policy.toml")
    b, c = tmp_path / "b", tmp_path / "c"
    v = evaluate_gate(policy, load_record_set(b), load_record_set(c))  # no calibrations given
    assert v.verdict == "insufficient_evidence"
    assert any("no calibration of judge 'helpful' was given to the gate" in r for r in v.reasons)
    unreadable = evaluate_gate(policy, load_record_set(b), load_record_set(c), calibrations={"helpful": "cal.json: x"})
    assert any("cal.json: x" in r for r in unreadable.reasons)
