"""``gatestats promote``: the worked example on the command line; bad input exits 1 and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gatestats.cli import app
from tests.conftest import DATA

EXAMPLE = DATA / "golden_refund"


def _promote(golden: Path, trace: Path, case_id: str, split: str, *extra: str) -> tuple[int, str, str]:
    args = [
        "promote", str(trace), "--set", str(golden), "--case-id", case_id, "--failure-class", "policy_misread",
        "--severity", "high", "--split", split, "--expect", str(EXAMPLE / "refund-expect.json"), "--by", "Dana Reviewer",
        *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.stdout, result.stderr


def test_promote_writes_a_proposal_and_refuses_the_twin_in_development(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    code, out, _ = _promote(golden, EXAMPLE / "refund-41-days.json", "refund-outside-window", "development")
    assert code == 0
    assert (
        out.splitlines()[0]
        == f"proposed refund-outside-window (development) at {golden}/proposed/refund-outside-window"
    )
    code, _, err = _promote(golden, EXAMPLE / "refund-35-days.json", "refund-35", "development")
    assert code == 1
    assert err == (
        f"error: {golden}: case 'refund-35': near-duplicate of 'refund-outside-window' (proposed, Jaccard 0.61) "
        "already in split 'development'; twins must not share a split (put one in holdout), "
        "or pass --override-twin REASON to record why\n"
    )
    assert sorted(p.name for p in (golden / "proposed").iterdir()) == ["refund-outside-window"]
    code, out, _ = _promote(golden, EXAMPLE / "refund-35-days.json", "refund-35", "holdout")
    assert code == 0
    assert "near-duplicate: refund-outside-window (proposed, development, Jaccard 0.61)" in out


def test_a_trace_with_a_missing_field_exits_1_naming_file_and_field_and_writes_nothing(tmp_path: Path) -> None:
    body = json.loads((EXAMPLE / "refund-41-days.json").read_text(encoding="utf-8"))
    del body["output"]
    trace = tmp_path / "bad.json"
    trace.write_text(json.dumps(body), encoding="utf-8")
    golden = tmp_path / "golden"
    code, out, err = _promote(golden, trace, "refund", "development")
    assert (code, out) == (1, "")
    assert err == f"error: {trace}: field 'output': required field is missing\n"
    assert not golden.exists()


def test_an_unknown_split_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    code, _, err = _promote(golden, EXAMPLE / "refund-41-days.json", "refund", "staging")
    assert code == 1
    assert err == "error: --split: must be one of development, validation, test, holdout (got 'staging')\n"
    assert not golden.exists()


def test_a_hostile_case_id_is_refused_and_printed_escaped(tmp_path: Path) -> None:
    golden = tmp_path / "golden"
    code, _, err = _promote(golden, EXAMPLE / "refund-41-days.json", "<img src=x onerror=alert(1)>\n\x1b[2J", "test")
    assert code == 1
    assert err.count("\n") == 1
    assert "\x1b" not in err
    assert err.startswith("error: --case-id: expected a case id matching")
    assert not golden.exists()
