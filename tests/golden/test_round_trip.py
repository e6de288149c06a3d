"""The worked example through the real runner: run the approved set, promote a failed record, count classes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.golden import (
    check_graders,
    events,
    failure_class_of,
    failure_class_trends,
    promote,
    read_expect,
    read_run_record_trace,
)
from gatestats.records import load_records
from tests.conftest import DATA

EXAMPLE = DATA / "golden_refund"


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_approved_cases_run_in_the_runner_and_a_failed_record_becomes_a_case(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    expect = str(EXAMPLE / "refund-expect.json")
    for trace, case_id, split in [
        ("refund-41-days.json", "refund-41", "development"),
        ("refund-35-days.json", "refund-35", "holdout"),
    ]:
        _cli("promote", str(EXAMPLE / trace), "--set", str(golden), "--case-id", case_id, "--failure-class",
             "policy_misread", "--severity", "high", "--split", split, "--expect", expect, "--by", "Dana")  # fmt: skip
        _cli("cases", "approve", case_id, "--set", str(golden), "--by", "Dana")
    candidate = tmp_path / "candidate"
    for case_id, transcript in [("refund-41", "bad.json"), ("refund-35", "good.json")]:
        (candidate / case_id).mkdir(parents=True)
        shutil.copy(EXAMPLE / "transcripts" / transcript, candidate / case_id / "transcript.json")
    run = tmp_path / "run"
    _cli(
        "run",
        str(golden / "cases"),
        "--candidate",
        str(candidate),
        "--trials",
        "1",
        "--workers",
        "1",
        "--out",
        str(run),
    )
    records = load_records(run)
    outcomes = dict(zip(records["case_id"].to_list(), records["outcome"].to_list(), strict=True))
    assert outcomes == {"refund-41": "failed", "refund-35": "passed"}
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert check_graders(golden, run) == ()
    assert manifest["case_set_version"] == events(golden)[-1]["set_version"]

    failed = records.filter(records["outcome"] == "failed")["record_id"][0]
    trace = read_run_record_trace(run, failed)
    assert trace.request.startswith("Hi, I'd like a refund for order A-1009.")
    assert "no_refund_call: FAIL" in trace.output
    done = promote(golden, trace, case_id="refund-41-rerun", failure_class="policy_misread", severity="high",
                   split="validation", expectation=read_expect(expect), by="Dana")  # fmt: skip
    assert [t.case_id for t in done.twins][:1] == ["refund-41"]

    trends = failure_class_trends(events(golden), last=10, records=records, classes=failure_class_of(golden))
    assert [(r.source, r.failure_class, r.count, r.n) for r in trends.rows] == [
        ("promotions", "policy_misread", 3, 3),
        ("failures", "policy_misread", 1, 1),
    ]
