"""Strict input: bad traces, duplicate ids, unknown splits, hostile ids, approval by no one — nothing written."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from gatestats.golden import (
    GoldenSetError,
    approve,
    case_states,
    check_split_use,
    diff_sets,
    events,
    failure_class_trends,
    judges_without_calibration,
    promote,
    propose_revision,
    read_expect,
    read_trace,
    reclassify,
    retire,
    stale,
)
from gatestats_runner.runsets import MANIFEST_FORMAT
from tests.conftest import DATA

EXAMPLE = DATA / "golden_refund"
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _promote(golden: Path, case_id: str, split: str = "development", trace: str = "refund-41-days.json") -> None:
    promote(
        golden,
        read_trace(EXAMPLE / trace),
        case_id=case_id,
        failure_class="policy_misread",
        severity="high",
        split=split,
        expectation=read_expect(EXAMPLE / "refund-expect.json"),
        by="Dana Reviewer",
        now=NOW,
    )


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) if root.exists() else []


def test_a_duplicate_case_id_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    golden = tmp_path / "g"
    _promote(golden, "refund")
    before = _files(golden)
    with pytest.raises(GoldenSetError, match=r"case id 'refund' is already used \(proposed\); choose another id"):
        _promote(golden, "refund", split="holdout", trace="refund-35-days.json")
    assert _files(golden) == before


def test_an_unknown_split_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    golden = tmp_path / "g"
    with pytest.raises(
        GoldenSetError, match=re.escape("--split: must be one of development, validation, test, holdout (got 'train')")
    ):
        _promote(golden, "refund", split="train")
    assert not golden.exists()


@pytest.mark.parametrize(
    "hostile", ["<script>alert(1)</script>", "a\nb", "a\x1b[31mb", "../escape", ".hidden", "a b", "é", "x" * 129, ""]
)
def test_hostile_case_ids_are_refused_and_shown_escaped(tmp_path: Path, hostile: str) -> None:
    golden = tmp_path / "g"
    with pytest.raises(GoldenSetError, match=r"--case-id: expected a case id matching") as info:
        _promote(golden, hostile)
    assert "\n" not in str(info.value)
    assert "\x1b" not in str(info.value)
    assert not golden.exists()


def test_an_approval_by_no_one_or_by_a_control_character_name_is_refused(tmp_path: Path) -> None:
    golden = tmp_path / "g"
    _promote(golden, "refund")
    for name in ["", "   ", None, "Dana\nApproved-by: CEO"]:
        with pytest.raises(GoldenSetError, match=r"--by: "):
            approve(golden, "refund", by=name)
    assert not (golden / "cases").exists()
    assert [e["event"] for e in events(golden)] == ["proposed"]


def test_a_proposal_edited_after_proposing_cannot_be_approved(tmp_path: Path) -> None:
    golden = tmp_path / "g"
    _promote(golden, "refund")
    (golden / "proposed" / "refund" / "verifier" / "expected.json").write_text('{"properties": []}', encoding="utf-8")
    with pytest.raises(GoldenSetError, match=r"changed since Dana Reviewer proposed it at 2026-12-01T09:00:00Z"):
        approve(golden, "refund", by="Dana Reviewer")


def _manifest(path: Path, case_ids: list[str], *, policy: str | None) -> Path:
    path.mkdir(parents=True)
    cases = [{"case_id": c, "verifier_digest": "sha256:0"} for c in case_ids]
    body = {"format": MANIFEST_FORMAT, "run_set_id": path.name, "cases": cases, "policy_digest": policy}
    (path / "manifest.json").write_text(json.dumps(body), encoding="utf-8")
    return path


def test_a_test_case_used_outside_a_gate_run_is_flagged_then_reclassified(tmp_path: Path) -> None:
    golden = tmp_path / "g"
    _promote(golden, "refund", split="test")
    approve(golden, "refund", by="Dana Reviewer", now=NOW)
    gate_run = _manifest(tmp_path / "gate-run", ["refund"], policy="sha256:abc")
    tuning = _manifest(tmp_path / "tuning", ["refund"], policy=None)
    (flag,) = check_split_use(golden, [gate_run, tuning])
    assert (flag.case_id, flag.kind) == ("refund", "test_used_outside_gate")
    assert "tuning" in flag.message
    event = reclassify(golden, "refund", split="development", reason="seen by tuning run", by="Dana Reviewer")
    assert (event["from"], event["to"], event["reason"]) == ("test", "development", "seen by tuning run")
    assert case_states(golden)["refund"].split == "development"
    assert check_split_use(golden, [tuning]) == ()


def test_retirement_makes_a_new_set_version_and_diff_shows_it(tmp_path: Path) -> None:
    golden = tmp_path / "g"
    _promote(golden, "refund")
    _promote(golden, "refund-35", split="holdout", trace="refund-35-days.json")
    approve(golden, "refund", by="Dana Reviewer", now=NOW)
    approve(golden, "refund-35", by="Dana Reviewer", now=NOW)
    old = tmp_path / "release-1"
    shutil.copytree(golden / "cases", old)
    with pytest.raises(GoldenSetError, match=r"--reason: a reason is required"):
        retire(golden, "refund-35", reason="", by="Dana Reviewer")
    event = retire(golden, "refund-35", reason="workload gone: kettles discontinued", by="Dana Reviewer")
    diff = diff_sets(old, golden)
    assert (diff.added, diff.retired, diff.changed) == ((), ("refund-35",), ())
    assert diff.new_version == event["set_version"] != diff.old_version
    assert case_states(golden)["refund-35"].status == "retired"


def test_stale_lists_cases_past_their_review_date(tmp_path: Path) -> None:
    golden = tmp_path / "g"
    _promote(golden, "refund")
    approve(golden, "refund", by="Dana Reviewer", review_by=date(2027, 1, 1), now=NOW)
    assert stale(golden, today=date(2027, 1, 1)) == ()
    assert [s.case_id for s in stale(golden, today=date(2027, 1, 2))] == ["refund"]


def test_trends_count_each_promoted_case_once_with_a_wilson_interval(tmp_path: Path) -> None:
    golden = tmp_path / "g"
    _promote(golden, "refund")
    _promote(golden, "refund-35", split="holdout", trace="refund-35-days.json")
    trends = failure_class_trends(events(golden), last=10)
    (row,) = trends.rows
    # R: prop.test(2, 2, correct = FALSE)$conf.int -> 0.3423802 1.0000000
    assert (row.failure_class, row.count, row.n) == ("policy_misread", 2, 2)
    assert row.low == pytest.approx(0.3423802, abs=1e-6)
    assert row.high == pytest.approx(1.0)
    assert trends.to_frame().columns == ["source", "failure_class", "count", "n", "share", "low", "high"]


def test_a_judge_without_calibration_is_written_but_flagged_as_unable_to_vote(tmp_path: Path) -> None:
    body = json.loads((EXAMPLE / "refund-expect.json").read_text(encoding="utf-8"))
    body["judges"][0]["calibration"] = None
    expect = tmp_path / "expect.json"
    expect.write_text(json.dumps(body), encoding="utf-8")
    golden = tmp_path / "g"
    promote(
        golden,
        read_trace(EXAMPLE / "refund-41-days.json"),
        case_id="refund",
        failure_class="policy_misread",
        severity="high",
        split="development",
        expectation=read_expect(expect),
        by="Dana Reviewer",
    )
    assert events(golden)[0]["judges_without_calibration"] == ["tone_and_escalation"]
    (finding,) = judges_without_calibration(golden)
    assert str(finding) == "case 'refund': judge 'tone_and_escalation' names no calibration: it cannot vote"


def test_an_expectation_without_a_code_property_is_refused(tmp_path: Path) -> None:
    expect = tmp_path / "expect.json"
    expect.write_text(json.dumps({"format": "gatestats-expect/1", "properties": [], "judges": []}), encoding="utf-8")
    with pytest.raises(GoldenSetError, match=re.escape(f"{expect}: field 'properties': code first: at least one")):
        read_expect(expect)


def test_a_symlink_planted_in_an_approved_case_is_refused_on_revision(tmp_path: Path) -> None:
    golden = tmp_path / "g"
    _promote(golden, "refund")
    approve(golden, "refund", by="Dana Reviewer", now=NOW)
    (golden / "cases" / "refund" / "snapshot" / "secrets").symlink_to("/etc/hostname")
    with pytest.raises(GoldenSetError, match=r"secrets: a case holds regular files and directories only"):
        propose_revision(golden, "refund", {}, by="agent-7", why="refresh")
    assert not (golden / "proposed" / "refund").exists()


def test_a_hand_edited_event_log_is_an_error_naming_the_manifest(tmp_path: Path) -> None:
    golden = tmp_path / "g"
    _promote(golden, "refund")
    body = json.loads((golden / "golden.json").read_text(encoding="utf-8"))
    del body["events"][0]["split"]
    (golden / "golden.json").write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(GoldenSetError, match=re.escape(f"{golden / 'golden.json'}: an event lacks a field")):
        case_states(golden)
