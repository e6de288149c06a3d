"""The grader in the agent's reach, at the gate: a policy's ``golden_set`` blocks a run whose graders were changed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import PolicyError, evaluate_gate, load_policy, load_record_set, parse_policy
from gatestats.gate.graders import GraderFinding
from gatestats.golden import approve, promote, read_expect, read_trace
from gatestats_runner.cases import load_case
from tests.conftest import DATA
from tests.gate.factory import policy_text, write_run_set

EXAMPLE = DATA / "golden_refund"
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
CASE = "refund-outside-window"
RULE = """
[[rules]]
name = "pass rate floor"
metric = "pass_rate"
threshold = 0.5
"""


def _approved_set(root: Path) -> Path:
    """The worked example's 41-day refund case, promoted and approved by a person."""
    golden = root / "golden"
    promote(
        golden,
        read_trace(EXAMPLE / "refund-41-days.json"),
        case_id=CASE,
        failure_class="policy_misread",
        severity="high",
        split="development",
        expectation=read_expect(EXAMPLE / "refund-expect.json"),
        by="Dana Reviewer",
        why="customer complaint #8812",
        now=NOW,
    )
    approve(golden, CASE, by="Dana Reviewer", now=NOW)
    return golden


def _candidate(root: Path, name: str, golden: Path, policy_path: Path) -> Path:
    """A candidate run set of the set's case, its manifest naming the verifier it ran (as the runner writes it)."""
    case = load_case(golden / "cases" / CASE)
    run = write_run_set(
        root / name,
        system="candidate",
        outcomes={CASE: ["passed"] * 3},
        policy=load_policy(policy_path),
        case_versions={CASE: case.version},
    )
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest["cases_dir"] = str(golden / "cases")
    manifest["cases"] = [{"case_id": CASE, "case_version": case.version, "verifier_digest": case.verifier_digest}]
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return run


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    golden = _approved_set(tmp_path)
    policy_path = tmp_path / "policy.toml"
    policy_path.write_text(policy_text(RULE, min_cases=1, extra='golden_set = "golden"'), encoding="utf-8")
    case = load_case(golden / "cases" / CASE)
    base = write_run_set(
        tmp_path / "base", system="baseline", outcomes={CASE: ["passed"] * 3}, case_versions={CASE: case.version}
    )
    return golden, policy_path, base


def _gate(policy: Path, base: Path, cand: Path) -> tuple[int, dict[str, object]]:
    result = CliRunner().invoke(
        app, ["gate", "--policy", str(policy), "--baseline", str(base), "--candidate", str(cand), "--json"]
    )
    return result.exit_code, json.loads(result.stdout)


def _checks(body: dict[str, object]) -> dict[str, dict[str, str]]:
    return {c["name"]: c for c in body["checks"]}  # type: ignore[attr-defined, index]


def test_the_golden_set_is_a_policy_key_relative_to_the_policy_file_and_bound_in_the_verdict(tmp_path: Path) -> None:
    golden, policy_path, base = _setup(tmp_path)
    policy = load_policy(policy_path)
    assert policy.golden_set == tmp_path / "golden"
    cand = _candidate(tmp_path, "cand", golden, policy_path)
    code, body = _gate(policy_path, base, cand)
    assert [n for n, c in _checks(body).items() if c["status"] != "ok"] == []
    assert code == 12  # one case: only the rule is undecided
    assert body["policy"]["golden_set"] == str(tmp_path / "golden")  # type: ignore[index]
    check = _checks(body)["golden_set"]
    assert (check["status"], check["detail"]) == (
        "ok",
        f"every case's grader is the one approved in golden set {tmp_path / 'golden'}",
    )


def test_an_agent_edit_of_an_approved_grader_blocks_the_gate_naming_the_case_file_and_who(tmp_path: Path) -> None:
    golden, policy_path, base = _setup(tmp_path)
    expected = golden / "cases" / CASE / "verifier" / "expected.json"
    body = json.loads(expected.read_text(encoding="utf-8"))
    body["properties"][1]["allowed"] = [30, 45]  # the agent widens the grader so its own reply passes
    expected.write_text(json.dumps(body), encoding="utf-8")
    cand = _candidate(tmp_path, "cand", golden, policy_path)  # the run used the edited verifier
    code, verdict = _gate(policy_path, base, cand)
    assert (code, verdict["verdict"]) == (12, "insufficient_evidence")
    blocking = {n: c for n, c in _checks(verdict).items() if c["status"] != "ok"}
    # the edit is a new case version too (the baseline ran the approved one)
    assert sorted(blocking) == [
        "case_versions",
        f"golden_set:edited_after_approval:{CASE}",
        f"golden_set:grader_changed:{CASE}",
    ]
    detail = blocking[f"golden_set:grader_changed:{CASE}"]["detail"]
    assert detail.startswith(f"case '{CASE}' (grader_changed): the run's verifier sha256:")
    assert "(approved by Dana Reviewer at 2026-12-01T09:00:00Z); changes: expected.json changed by " in detail
    reasons = verdict["reasons"]
    assert any(r.startswith(f"golden_set:grader_changed:{CASE} (candidate): case '{CASE}'") for r in reasons)  # type: ignore[attr-defined]


def test_a_golden_set_that_cannot_be_read_blocks_the_gate_with_the_reason(tmp_path: Path) -> None:
    golden, policy_path, base = _setup(tmp_path)
    cand = _candidate(tmp_path, "cand", golden, policy_path)
    policy = load_policy(policy_path)
    reason = "golden.json: not a golden set"
    verdict = evaluate_gate(
        policy, load_record_set(base), load_record_set(cand), golden=reason, now="2026-12-01T10:00:00Z"
    )
    (check,) = [c for c in verdict.checks if c.name == "golden_set"]
    assert check.status == "insufficient_evidence"
    assert (
        check.detail == f"golden set {tmp_path / 'golden'} could not be checked against the candidate's run: {reason}"
    )
    assert verdict.verdict == "insufficient_evidence"
    (tmp_path / "golden" / "golden.json").unlink()  # through the command: not a set any more
    code, body = _gate(policy_path, base, cand)
    check = _checks(body)["golden_set"]
    assert (code, check["status"]) == (12, "insufficient_evidence")
    assert check["detail"] == (
        f"golden set {golden} could not be checked against the candidate's run: "
        f"{golden}: not a golden set (no golden.json; the policy's golden_set)"
    )


def test_the_engine_blocks_on_each_finding_and_when_no_check_was_given(tmp_path: Path) -> None:
    golden, policy_path, base = _setup(tmp_path)
    cand = load_record_set(_candidate(tmp_path, "cand", golden, policy_path))
    policy = load_policy(policy_path)
    finding = GraderFinding(case_id=CASE, kind="grader_changed", message="changes: expected.json changed by agent-7")
    found = evaluate_gate(policy, load_record_set(base), cand, golden=(finding,), now="2026-12-01T10:00:00Z")
    assert [c.name for c in found.checks if c.status != "ok"] == [f"golden_set:grader_changed:{CASE}"]
    assert found.exit_code == 12
    missing = evaluate_gate(policy, load_record_set(base), cand, now="2026-12-01T10:00:00Z")
    (check,) = [c for c in missing.checks if c.name == "golden_set"]
    assert (
        check.detail == f"the graders of golden set {tmp_path / 'golden'} were not checked against the candidate's run"
    )
    assert missing.verdict == "insufficient_evidence"


@pytest.mark.parametrize("value", ['""', '"  "', '"a\\u0007b"', "3"])
def test_a_bad_golden_set_value_is_a_policy_error_naming_key_and_line(value: str) -> None:
    text = policy_text(RULE, extra=f"golden_set = {value}")
    line = text.splitlines().index(f"golden_set = {value}") + 1
    with pytest.raises(PolicyError) as info:
        parse_policy(text.encode(), path="p.toml")
    (problem,) = info.value.problems
    assert str(problem).startswith(f"p.toml:{line}: key 'golden_set': expected ")
