"""The worked example (docs/golden.md): a refund outside a 30-day policy becomes a protected case."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from gatestats.golden import (
    GoldenSetError,
    approve,
    case_states,
    check_graders,
    events,
    promote,
    propose_revision,
    read_expect,
    read_trace,
    set_version,
    twins_of,
)
from gatestats_runner.cases import load_case, load_case_set
from gatestats_runner.runsets import MANIFEST_FORMAT
from tests.conftest import DATA

EXAMPLE = DATA / "golden_refund"
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
CASE = "refund-outside-window"
TWIN = "refund-outside-window-35"


def _promote(golden: Path, trace: str, case_id: str, split: str, **kw: str) -> object:
    return promote(
        golden,
        read_trace(EXAMPLE / trace),
        case_id=case_id,
        failure_class="policy_misread",
        severity="high",
        split=split,
        expectation=read_expect(EXAMPLE / "refund-expect.json"),
        by=kw.pop("by", "Dana Reviewer"),
        why="customer complaint #8812",
        now=NOW,
        **kw,
    )


def _grade(case_dir: Path, transcript: Path, tmp_path: Path) -> tuple[int, dict[str, object]]:
    work = tmp_path / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    shutil.copy(transcript, work / "transcript.json")
    done = subprocess.run(
        [sys.executable, str(case_dir / "verifier" / "grade.py")], cwd=work, capture_output=True, text=True, check=False
    )
    return done.returncode, json.loads((work / "grades.json").read_text(encoding="utf-8"))


def test_the_41_day_refund_becomes_a_proposed_case_with_two_code_graders_and_a_judge(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    _promote(golden, "refund-41-days.json", CASE, "development")
    case_dir = golden / "proposed" / CASE
    case = load_case(case_dir)  # the runner reads it as an ordinary case
    assert case.severity == "high"
    assert case.split == "development"
    assert case.slices == ("policy_misread",)
    assert case.tools == ("issue_refund", "lookup_order")
    meta = json.loads((case_dir / "golden.json").read_text(encoding="utf-8"))
    assert (meta["failure_class"], meta["severity"], meta["split"]) == ("policy_misread", "high", "development")
    prov = meta["provenance"]
    assert prov["source_id"] == "prod-2026-11-28-0193"
    assert prov["source_digest"].startswith("sha256:")
    assert (prov["by"], prov["at"], prov["why"]) == (
        "Dana Reviewer",
        "2026-12-01T09:00:00Z",
        "customer complaint #8812",
    )
    code = json.loads((case_dir / "verifier" / "expected.json").read_text(encoding="utf-8"))["properties"]
    assert [p["kind"] for p in code] == ["no_tool_call", "reply_figures"]
    judges = json.loads((case_dir / "verifier" / "judges.json").read_text(encoding="utf-8"))["judges"]
    assert [(j["name"], j["calibration"][:7]) for j in judges] == [("tone_and_escalation", "sha256:")]
    assert json.loads((case_dir / "snapshot" / "orders.json").read_text())["A-1009"]["delivered_days_ago"] == 41
    assert case_states(golden)[CASE].status == "proposed"
    assert not (golden / "cases").exists()  # proposed, not in the set


def test_the_case_grader_fails_the_bad_transcript_and_passes_the_good_one(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    _promote(golden, "refund-41-days.json", CASE, "development")
    case_dir = golden / "proposed" / CASE
    code, grades = _grade(case_dir, EXAMPLE / "transcripts" / "bad.json", tmp_path)
    assert code == 1
    assert [(g["name"], g["verdict"]) for g in grades["graders"]] == [  # type: ignore[index, union-attr]
        ("no_refund_call", "fail"),
        ("policy_figure_is_30", "fail"),
    ]
    code, grades = _grade(case_dir, EXAMPLE / "transcripts" / "good.json", tmp_path)
    assert code == 0
    assert {g["verdict"] for g in grades["graders"]} == {"pass"}  # type: ignore[index, union-attr]


def test_the_35_day_twin_is_refused_in_development_and_accepted_in_holdout(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    _promote(golden, "refund-41-days.json", CASE, "development")
    with pytest.raises(
        GoldenSetError, match=r"near-duplicate of 'refund-outside-window' \(proposed, Jaccard 0\.\d\d\) "
    ):
        _promote(golden, "refund-35-days.json", TWIN, "development")
    assert not (golden / "proposed" / TWIN).exists()
    assert len(events(golden)) == 1
    done = _promote(golden, "refund-35-days.json", TWIN, "holdout")
    assert [t.case_id for t in done.twins] == [CASE]  # type: ignore[attr-defined]
    assert done.twins[0].jaccard > 0.6  # type: ignore[attr-defined]
    assert twins_of(golden, CASE) == {TWIN}
    assert twins_of(golden, TWIN) == {CASE}
    assert load_case(golden / "proposed" / TWIN).split == "holdout"


def test_an_override_puts_a_twin_in_the_same_split_and_records_the_reason(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    _promote(golden, "refund-41-days.json", CASE, "development")
    _promote(golden, "refund-35-days.json", TWIN, "development", override_twin="two stores, two policies")
    assert events(golden)[-1]["override_twin"] == "two stores, two policies"


def test_approval_moves_the_case_into_the_set_whose_version_is_the_runners(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    _promote(golden, "refund-41-days.json", CASE, "development")
    with pytest.raises(GoldenSetError, match=r"--by: a name is required \(got ''\)"):
        approve(golden, CASE, by="")
    with pytest.raises(GoldenSetError, match=r"--by: a name is required \(got None\)"):
        approve(golden, CASE, by=None)
    assert (golden / "proposed" / CASE).is_dir()
    event = approve(golden, CASE, by="Dana Reviewer", now=NOW)
    assert (golden / "cases" / CASE).is_dir()
    assert not (golden / "proposed" / CASE).exists()
    assert event["set_version"] == set_version(golden) == load_case_set(golden / "cases").version
    assert (event["owner"], event["review_by"]) == ("Dana Reviewer", date(2027, 5, 30).isoformat())
    state = case_states(golden)[CASE]
    assert (state.status, state.approved_by) == ("approved", "Dana Reviewer")


def _run_manifest(run_set: Path, cases_dir: Path, case_id: str, *, policy: str | None = None) -> Path:
    run_set.mkdir(parents=True, exist_ok=True)
    case = load_case(cases_dir / case_id)
    manifest = {
        "format": MANIFEST_FORMAT,
        "run_set_id": "rs-test",
        "cases_dir": str(cases_dir),
        "cases": [{"case_id": case_id, "case_version": case.version, "verifier_digest": case.verifier_digest}],
        "policy_digest": policy,
    }
    (run_set / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return run_set


def test_an_agent_edit_of_an_approved_grader_blocks_the_run_and_names_the_case(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    _promote(golden, "refund-41-days.json", CASE, "development")
    approve(golden, CASE, by="Dana Reviewer", now=NOW)
    clean = _run_manifest(tmp_path / "run-clean", golden / "cases", CASE)
    assert check_graders(golden, clean) == ()
    expected = golden / "cases" / CASE / "verifier" / "expected.json"
    body = json.loads(expected.read_text(encoding="utf-8"))
    body["properties"][1]["allowed"] = [30, 45]  # the agent widens the grader to pass itself
    expected.write_text(json.dumps(body), encoding="utf-8")
    run = _run_manifest(tmp_path / "run-edited", golden / "cases", CASE)
    findings = check_graders(golden, run)
    assert [(f.case_id, f.kind) for f in findings] == [
        ("refund-outside-window", "grader_changed"),
        ("refund-outside-window", "edited_after_approval"),
    ]
    assert "approved by Dana Reviewer at 2026-12-01T09:00:00Z" in findings[0].message
    assert "expected.json changed by " in findings[0].message


def test_a_proposed_grader_revision_names_its_author_until_approved(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    _promote(golden, "refund-41-days.json", CASE, "development")
    approve(golden, CASE, by="Dana Reviewer", now=NOW)
    body = json.loads((golden / "cases" / CASE / "verifier" / "expected.json").read_text(encoding="utf-8"))
    body["properties"].pop(0)  # drop the refund check
    revision = propose_revision(
        golden, CASE, {"verifier/expected.json": json.dumps(body).encode()}, by="agent-7", why="flaky", now=NOW
    )
    run = _run_manifest(tmp_path / "run", revision.parent, CASE)
    (finding,) = check_graders(golden, run)
    assert finding.case_id == CASE
    assert "proposed by agent-7 at 2026-12-01T09:00:00Z, not approved" in finding.message
    approve(golden, CASE, by="Dana Reviewer", now=NOW)  # a person accepts the revision
    assert check_graders(golden, _run_manifest(tmp_path / "run2", golden / "cases", CASE)) == ()
    assert len(list((golden / "retired").iterdir())) == 1  # the old version is kept
