"""``gatestats cases``: approval by a named person, the grader check that blocks a run, diff, trends."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from gatestats.cli import app
from gatestats_runner.cases import load_case
from gatestats_runner.runsets import MANIFEST_FORMAT
from tests.conftest import DATA

EXAMPLE = DATA / "golden_refund"
CASE = "refund-outside-window"


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), terminal_width=200)
    return result.exit_code, result.stdout, result.stderr


def _proposed(tmp_path: Path) -> Path:
    golden = tmp_path / "golden"
    code, _, err = _invoke(
        "promote", str(EXAMPLE / "refund-41-days.json"), "--set", str(golden), "--case-id", CASE,
        "--failure-class", "policy_misread", "--severity", "high", "--split", "development",
        "--expect", str(EXAMPLE / "refund-expect.json"),
    )  # fmt: skip
    assert code == 0, err
    return golden


def test_approve_without_a_name_exits_1_and_leaves_the_proposal(tmp_path: Path) -> None:
    golden = _proposed(tmp_path)
    for by in ([], ["--by", ""], ["--by", "   "]):
        code, _, err = _invoke("cases", "approve", CASE, "--set", str(golden), *by)
        assert code == 1
        assert err.startswith("error: --by: a name is required")
    assert (golden / "proposed" / CASE).is_dir()
    assert not (golden / "cases").exists()


def _manifest(run_set: Path, cases_dir: Path) -> Path:
    case = load_case(cases_dir / CASE)
    run_set.mkdir()
    body = {
        "format": MANIFEST_FORMAT,
        "run_set_id": run_set.name,
        "cases_dir": str(cases_dir),
        "cases": [{"case_id": CASE, "case_version": case.version, "verifier_digest": case.verifier_digest}],
        "policy_digest": None,
    }
    (run_set / "manifest.json").write_text(json.dumps(body), encoding="utf-8")
    return run_set


def test_verify_graders_blocks_a_run_with_an_agent_edited_grader(tmp_path: Path) -> None:
    golden = _proposed(tmp_path)
    code, out, _ = _invoke("cases", "approve", CASE, "--set", str(golden), "--by", "Dana Reviewer")
    assert code == 0
    assert out.startswith(f"approved {CASE} by Dana Reviewer; owner Dana Reviewer, review by ")
    code, out, _ = _invoke("cases", "verify-graders", str(golden), str(_manifest(tmp_path / "ok", golden / "cases")))
    assert (code, out) == (0, "no finding\n")
    grader = golden / "cases" / CASE / "verifier" / "grade.py"
    grader.write_text("import sys\nsys.exit(0)\n", encoding="utf-8")  # the agent makes its own grader pass
    code, out, _ = _invoke("cases", "verify-graders", str(golden), str(_manifest(tmp_path / "bad", golden / "cases")))
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"case '{CASE}': the run's verifier sha256:")
    assert "(approved by Dana Reviewer at " in lines[0]
    assert "changes: grade.py changed by " in lines[0]
    assert lines[-1] == "2 finding(s): the run is blocked until each change is approved"


def test_diff_and_trends_after_a_retirement(tmp_path: Path) -> None:
    golden = _proposed(tmp_path)
    _invoke("cases", "approve", CASE, "--set", str(golden), "--by", "Dana Reviewer")
    old = tmp_path / "old"
    shutil.copytree(golden / "cases", old)
    code, _, err = _invoke("cases", "retire", CASE, "--set", str(golden), "--by", "Dana Reviewer")
    assert (code, err) == (1, "error: --reason: a reason is required (got '')\n")
    code, out, _ = _invoke("cases", "retire", CASE, "--set", str(golden), "--by", "Dana", "--reason", "policy changed")
    assert code == 0
    assert out.splitlines()[0] == f"retired {CASE}: policy changed"
    code, out, err = _invoke("cases", "diff", str(old), str(golden), "--json")
    assert code == 0, err
    body = json.loads(out)
    assert (body["added"], body["retired"], body["changed"]) == ([], [CASE], [])
    code, out, _ = _invoke("cases", "trends", str(golden))
    assert out.splitlines() == [
        "last 1 promotion(s); 0 failed case(s)",
        "promotions  policy_misread            1 of 1  [0.21, 1.00]",
    ]
