"""``gatestats recovery``: recovery within r rounds, rounds and cost per accepted outcome of a correction loop."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.cli.recovery import recovery_report
from gatestats.estimators.recovery import ROUND_COLUMNS
from tests.conftest import ROOT
from tests.runner.conftest import needs_sandbox


def _rounds(rows: list[tuple[str, int, str, float, float, float | None, float | None]]) -> pl.DataFrame:
    full = [
        {"case_id": c, "round": r, "verdict": v, "trials_usd": tu, "trials_seconds": ts, "reviser_usd": ru,
         "reviser_seconds": rs, "candidate_digest": None, "parent_candidate_digest": None,
         "feedback_digest": None, "stop_reason": None}
        for c, r, v, tu, ts, ru, rs in rows
    ]  # fmt: skip
    return pl.DataFrame(full, schema=ROUND_COLUMNS, orient="row")


def test_recovery_within_each_round_and_cost_with_and_without_correction() -> None:
    # a: fails, fails, passes in round 2; b: fails, passes in round 1; c: passes at once; d: fails twice, stops.
    rounds = _rounds([
        ("a", 0, "candidate_failure", 0.10, 1.0, 0.50, 2.0),
        ("a", 1, "candidate_failure", 0.10, 1.0, 0.50, 2.0),
        ("a", 2, "passed", 0.10, 1.0, None, None),
        ("b", 0, "candidate_failure", 0.10, 1.0, 0.50, 2.0),
        ("b", 1, "passed", 0.10, 1.0, None, None),
        ("c", 0, "passed", 0.10, 1.0, None, None),
        ("d", 0, "candidate_failure", 0.10, 1.0, 0.50, 2.0),
        ("d", 1, "candidate_failure", 0.10, 1.0, None, None),
    ])  # fmt: skip
    report = recovery_report(rounds)
    assert (report["cases"], report["failed_first"], report["passed_first"], report["accepted"]) == (4, 3, 1, 3)
    assert report["max_round"] == 2
    assert [(e["within"], e["recovered"], e["failed_first"]) for e in report["recovery"]] == [(1, 1, 3), (2, 2, 3)]
    # Wilson (1927) 95% interval of 1/3: center (1/3 + z²/6) / (1 + z²/3), z = 1.959964 -> [0.0615, 0.7923].
    assert report["recovery"][0]["low"] == pytest.approx(0.06149, abs=1e-4)
    assert report["recovery"][0]["high"] == pytest.approx(0.79234, abs=1e-4)
    assert report["recovery_any_round"]["rate"] == pytest.approx(2 / 3)
    assert report["rounds_per_accepted"] == pytest.approx(8 / 3)
    # With correction: 8 rounds x $0.10 + 4 reviser calls x $0.50 = $2.80 over 3 accepted;
    # without: round 0 only, $0.40 over the 1 case that passed it.
    assert report["with_correction"]["usd_per_accepted"] == pytest.approx(2.80 / 3)
    assert report["with_correction"]["seconds_per_accepted"] == pytest.approx((8 * 1.0 + 4 * 2.0) / 3)
    assert report["without_correction"]["usd_per_accepted"] == pytest.approx(0.40)
    assert report["without_correction"]["seconds_per_accepted"] == pytest.approx(4.0)


def test_undefined_numbers_carry_their_reason_never_zero() -> None:
    report = recovery_report(_rounds([("a", 0, "passed", 0.0, 1.0, None, None)]))
    assert report["recovery"] == [
        {"within": 1, "recovered": 0, "failed_first": 0, "rate": None, "low": None, "high": None,
         "reason": "no case failed its first round: recovery rate undefined"}
    ]  # fmt: skip
    report = recovery_report(_rounds([("a", 0, "candidate_failure", 0.0, 1.0, None, None)]))
    assert report["rounds_per_accepted"] is None
    assert report["with_correction"] == {"usd_per_accepted": None, "seconds_per_accepted": None}
    assert report["per_accepted_reason"] == "no accepted outcome in 1 cases: cost per accepted outcome undefined"


def test_a_directory_without_a_journal_is_invalid_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["recovery", str(tmp_path)])
    assert result.exit_code == 1
    assert "journal.jsonl: no correction journal (not a correction output directory)" in result.stderr


@needs_sandbox
def test_the_bundled_demo_prints_the_same_numbers_as_text_and_json(tmp_path: Path) -> None:
    example = ROOT / "examples" / "correction"
    out = tmp_path / "out"
    ran = CliRunner().invoke(
        app,
        ["correct", str(example / "cases"), "--candidate", str(example / "candidate"),
         "--reviser", f"{sys.executable} {example / 'reviser.py'}", "--out", str(out)],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    text = CliRunner().invoke(app, ["recovery", str(out)])
    assert text.exit_code == 0, text.output
    assert "  r = 1: 1 of 2 = 50.0% [9.5%, 90.5%]" in text.stdout  # title-case recovers, median does not
    assert "rounds per accepted outcome: 5 / 2 = 2.50" in text.stdout
    payload = json.loads(CliRunner().invoke(app, ["recovery", str(out), "--json"]).stdout)
    assert (payload["accepted"], payload["rounds_run"], payload["max_round"]) == (2, 5, 1)
    assert payload["recovery"][0]["rate"] == 0.5
    usd = payload["with_correction"]["usd_per_accepted"]
    assert usd > 0  # the reviser's simulated spend counts
    assert f"cost per accepted outcome with correction (every round and reviser call): ${usd:.4f}" in text.stdout
