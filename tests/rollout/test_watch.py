"""One reading of a rollout (gatestats.rollout.watch): per stage continue, advance or roll back, and why.

The statistics are gatestats.sequential.monitor's (tested, with their simulations, in
tests/sequential); here: that the reading feeds each trigger the right stream and level, in arrival
order, with late labels applied, and that every refusal is named.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import read_verdict
from gatestats.rollout.labels import add_labels
from gatestats.rollout.log import WatchError, add_batch, init_log
from gatestats.rollout.record import decision_files, read_decision, write_decision
from gatestats.rollout.watch import watch
from gatestats.sequential.monitor import rate_trigger, vs_reference_level
from tests.rollout.conftest import PLAN, observations

LATER = datetime(2026, 12, 1, tzinfo=UTC)
FIXED_DEFECTS = """
[[rollout.triggers]]
name = "escaped defects"
stage = "shadow"
metric = "escaped_defect_rate"
kind = "fixed"
level = 0.02
"""


@pytest.fixture
def log(tmp_path: Path, plan_path: Path, verdict_path: Path) -> Path:
    root = tmp_path / "WATCH"
    init_log(root, plan_path=plan_path, verdict_path=verdict_path)
    return root


def _stage(decision: object, name: str):  # type: ignore[no-untyped-def]
    return next(s for s in decision.stages if s.stage == name)  # type: ignore[attr-defined]


def _trigger(stage: object, metric: str):  # type: ignore[no-untyped-def]
    return next(t for t in stage.triggers if t.metric == metric)  # type: ignore[attr-defined]


def test_a_log_without_observations_continues_and_no_trigger_is_read(log: Path, plan_path: Path) -> None:
    decision = watch(log, plan_path=plan_path, now=LATER)
    assert (decision.action, decision.exit_code, decision.current_stage) == ("continue", 0, None)
    shadow = _stage(decision, "shadow")
    assert shadow.action == "continue"
    assert {t.status for t in shadow.triggers} == {"insufficient_evidence"}  # never "quiet" on no data
    assert all(t.estimate is None for t in shadow.triggers)  # too little data is no number, never 0.0


def test_the_current_stage_advances_once_its_minimum_is_met_and_nothing_fired(log: Path, plan_path: Path) -> None:
    add_batch(log, observations(19), stage="shadow", plan_path=plan_path)
    early = watch(log, plan_path=plan_path, now=LATER)
    assert (early.action, _stage(early, "shadow").reason) == ("continue", "19 of the 20 observations needed")
    add_batch(log, observations(1, start=19), stage="shadow", plan_path=plan_path)
    ready = watch(log, plan_path=plan_path, now=LATER)
    assert (ready.action, ready.exit_code, ready.current_stage) == ("advance", 20, "shadow")
    assert _stage(ready, "pilot").action == "not_started"


def test_one_unauthorised_action_rolls_back_at_that_observation(log: Path, plan_path: Path) -> None:
    add_batch(log, observations(20), stage="shadow", plan_path=plan_path)
    add_batch(log, observations(5, start=20), stage="pilot", plan_path=plan_path)
    add_batch(log, observations(1, start=25, unauthorized_actions=1), stage="pilot", plan_path=plan_path)
    decision = watch(log, plan_path=plan_path, now=LATER)
    pilot = _stage(decision, "pilot")
    fired = _trigger(pilot, "unauthorized_actions")
    assert (decision.action, decision.exit_code, pilot.action) == ("roll_back", 21, "roll_back")
    assert (fired.status, fired.fired_record, fired.fired_batch, fired.fired_at_observation) == (
        "fired",
        "obs-25",
        3,
        5,
    )
    assert fired.alpha is None  # a count is a fact, not an estimate
    assert _stage(decision, "shadow").action == "advanced"


def test_the_vs_gate_level_is_the_gates_lower_end_minus_delta(log: Path, plan_path: Path, verdict_path: Path) -> None:
    add_batch(log, observations(20), stage="shadow", plan_path=plan_path)
    add_batch(log, observations(60, start=20, accepted=False), stage="pilot", plan_path=plan_path)
    decision = watch(log, plan_path=plan_path, now=LATER)
    trigger = _trigger(_stage(decision, "pilot"), "accepted_rate")
    point = next(
        p for p in read_verdict(verdict_path).verdict.curves if p.side == "candidate" and p.metric == "pass_hat_k"
    )
    assert point.ci_low is not None
    assert trigger.level == pytest.approx(vs_reference_level(point.ci_low, 0.1))
    confidence = read_verdict(verdict_path).verdict.policy.confidence_level
    assert trigger.alpha_total == pytest.approx(0.05 + (1 - confidence) / 2)  # the gate's own error is paid for
    expected = rate_trigger(np.zeros(60), level=trigger.level, direction="below", alpha=0.05)
    assert (trigger.status, trigger.fired_at_observation) == ("fired", expected.first_crossing)
    assert decision.action == "roll_back"


def test_late_labels_roll_back_a_stage_without_changing_a_record(
    tmp_path: Path, plan_path: Path, verdict_path: Path
) -> None:
    plan_path.write_text(PLAN + FIXED_DEFECTS, encoding="utf-8")
    root = tmp_path / "W"
    init_log(root, plan_path=plan_path, verdict_path=verdict_path)
    add_batch(root, observations(90, accepted=True), stage="shadow", plan_path=plan_path)
    before = watch(root, plan_path=plan_path, now=LATER)
    assert _trigger(_stage(before, "shadow"), "escaped_defect_rate").status == "quiet"
    batch = sorted((root / "batches").iterdir())[0] / "records.jsonl"
    bytes_before = batch.read_bytes()
    rows = "".join(f"obs-{i},escaped_defect,2026-11-20T10:00:00Z,found later\n" for i in range(0, 90, 6))
    table = tmp_path / "labels.csv"
    table.write_text("record_id,label,observed_at,note\n" + rows, encoding="utf-8")
    add_labels(root, table)
    after = watch(root, plan_path=plan_path, now=LATER)
    trigger = _trigger(_stage(after, "shadow"), "escaped_defect_rate")
    assert (trigger.status, after.action) == ("fired", "roll_back")
    assert trigger.estimate == pytest.approx(15 / 90)
    assert batch.read_bytes() == bytes_before  # labels are appended beside the records, never into them
    assert len(after.escaped_defects) == 15
    assert after.n_labels == 15


def test_a_label_never_lowers_the_evidence_of_an_above_trigger(
    tmp_path: Path, plan_path: Path, verdict_path: Path
) -> None:
    # Why reading before every label arrived keeps the guarantee (docs/rollout.md, "Late labels and validity").
    rng = np.random.default_rng(7)
    events = (rng.random(200) < 0.03).astype(float)
    full = rate_trigger(events, level=0.02, direction="above", alpha=0.05)
    for _ in range(20):
        partial = events * (rng.random(200) < 0.5)  # some labels not yet known
        seen = rate_trigger(partial, level=0.02, direction="above", alpha=0.05)
        assert seen.log_evalue is not None
        assert full.log_evalue is not None
        assert np.all(seen.log_evalue <= full.log_evalue + 1e-12)


def test_a_plan_edited_after_registration_is_refused(log: Path, plan_path: Path) -> None:
    plan_path.write_text(PLAN.replace("min_observations = 20", "min_observations = 2"), encoding="utf-8")
    with pytest.raises(Exception, match="digest"):
        watch(log, plan_path=plan_path, now=LATER)


def test_an_edited_verdict_is_refused(tmp_path: Path, plan_path: Path, verdict_path: Path) -> None:
    copy = tmp_path / "verdict.json"
    copy.write_bytes(verdict_path.read_bytes())
    root = tmp_path / "W"
    init_log(root, plan_path=plan_path, verdict_path=copy)
    body = json.loads(copy.read_text())
    body["reasons"] = ["rewritten after the rollout began"]
    copy.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(Exception, match=str(copy)):
        watch(root, plan_path=plan_path, now=LATER)


def test_readings_are_numbered_never_overwritten_and_an_edit_is_found(log: Path, plan_path: Path) -> None:
    add_batch(log, observations(20), stage="shadow", plan_path=plan_path)
    first = write_decision(log, watch(log, plan_path=plan_path, now=LATER))
    second = write_decision(log, watch(log, plan_path=plan_path, now=LATER))
    assert [p.name for p in decision_files(log)] == ["0001.json", "0002.json"] == [first.name, second.name]
    body = read_decision(second)
    assert (body["number"], body["action"], body["exit_code"]) == (2, "advance", 20)
    edited = json.loads(second.read_text())
    edited["action"] = "continue"
    second.chmod(0o644)
    second.write_text(json.dumps(edited), encoding="utf-8")
    with pytest.raises(WatchError, match="digest"):
        read_decision(second)


def test_status_prints_the_reading_and_exits_with_its_code(log: Path, plan_path: Path) -> None:
    add_batch(log, observations(20), stage="shadow", plan_path=plan_path)
    add_batch(log, observations(1, start=20, unauthorized_actions=2), stage="pilot", plan_path=plan_path)
    result = CliRunner().invoke(app, ["watch", "status", str(log), "--json"])
    assert result.exit_code == 21, result.output
    body = json.loads(result.stdout)
    assert body["action"] == "roll_back"
    assert body["decision_file"].endswith("0001.json")
    table = CliRunner().invoke(app, ["watch", "status", str(log), "--no-record"])
    assert table.exit_code == 21
    assert "rollout: ROLL BACK (exit 21)" in table.stdout
    assert len(decision_files(log)) == 1  # --no-record wrote nothing


def test_status_refuses_an_edited_plan_with_exit_2_and_writes_nothing(log: Path, plan_path: Path) -> None:
    plan_path.write_text(PLAN + "\n# a comment changes nothing\n", encoding="utf-8")
    assert CliRunner().invoke(app, ["watch", "status", str(log), "--no-record"]).exit_code == 0
    plan_path.write_text(PLAN.replace("delta = 0.1", "delta = 0.5"), encoding="utf-8")
    result = CliRunner().invoke(app, ["watch", "status", str(log)])
    assert result.exit_code == 2
    assert "digest" in result.output
    assert decision_files(log) == []


def test_defects_lists_each_escaped_defect_with_its_promote_command(
    tmp_path: Path, plan_path: Path, verdict_path: Path
) -> None:
    root = tmp_path / "W"
    init_log(root, plan_path=plan_path, verdict_path=verdict_path)
    add_batch(root, observations(4, accepted=True), stage="shadow", plan_path=plan_path)
    table = tmp_path / "labels.csv"
    table.write_text(
        "record_id,label,observed_at,note\nobs-2,escaped_defect,2026-11-20T10:00:00Z,x\n", encoding="utf-8"
    )
    add_labels(root, table)
    result = CliRunner().invoke(app, ["watch", "defects", str(root)])
    assert result.exit_code == 0, result.output
    assert "gatestats promote TRACE.json --case-id escaped-obs-2 --failure-class escaped_defect" in result.stdout
    assert f"production record obs-2 ({root / 'batches' / '0001'})" in result.stdout


VS_PREVIOUS = """
[[rollout.triggers]]
name = "cost per accepted outcome"
stage = "shadow"
metric = "cost_per_accepted"
kind = "vs_previous"
ratio = 1.25
"""


def _release(tmp_path: Path, name: str, plan: Path, verdict: Path, cost: float, n: int = 300) -> Path:
    root = tmp_path / name
    init_log(root, plan_path=plan, verdict_path=verdict)
    add_batch(root, observations(n, cost_usd=cost, accepted=True), stage="shadow", plan_path=plan)
    return root


def test_vs_previous_compares_with_an_upper_bound_of_the_previous_release(
    tmp_path: Path, plan_path: Path, verdict_path: Path
) -> None:
    plan_path.write_text(PLAN + VS_PREVIOUS, encoding="utf-8")
    previous = _release(tmp_path, "old", plan_path, verdict_path, cost=0.02)
    same = _release(tmp_path, "same", plan_path, verdict_path, cost=0.02)
    dearer = _release(tmp_path, "dearer", plan_path, verdict_path, cost=0.5)  # the cap is $5: the bound is wide
    quiet = _trigger(
        _stage(watch(same, plan_path=plan_path, previous=previous, now=LATER), "shadow"), "cost_per_accepted"
    )
    assert quiet.status == "quiet"
    assert quiet.alpha == pytest.approx(0.025)  # half to the monitor, half to the reference (docs/rollout.md)
    assert quiet.alpha_total == pytest.approx(0.05)
    assert quiet.level is not None
    assert quiet.level > 1.25 * 0.02  # an upper bound of the previous CPA, never its point estimate
    assert quiet.estimate == pytest.approx(0.02)
    fired = _trigger(
        _stage(watch(dearer, plan_path=plan_path, previous=previous, now=LATER), "shadow"), "cost_per_accepted"
    )
    assert fired.status == "fired"
    assert fired.estimate == pytest.approx(0.5)
    assert fired.level is not None
    assert fired.level < 0.5
    alone = _trigger(_stage(watch(same, plan_path=plan_path, now=LATER), "shadow"), "cost_per_accepted")
    assert alone.status == "insufficient_evidence"  # no previous release: no level, never a silent pass
    assert "previous release" in alone.reason


COST_FIXED = """
[[rollout.triggers]]
name = "cost"
stage = "shadow"
metric = "cost_per_accepted"
kind = "fixed"
level = 0.1
"""


def test_an_unknown_cost_is_insufficient_evidence_never_a_zero(
    tmp_path: Path, plan_path: Path, verdict_path: Path
) -> None:
    plan_path.write_text(PLAN + COST_FIXED, encoding="utf-8")
    root = tmp_path / "W"
    init_log(root, plan_path=plan_path, verdict_path=verdict_path)
    add_batch(root, observations(30, accepted=True), stage="shadow", plan_path=plan_path)
    add_batch(root, observations(1, start=30, accepted=True, cost_usd=None), stage="shadow", plan_path=plan_path)
    decision = watch(root, plan_path=plan_path, now=LATER)
    cost = _trigger(_stage(decision, "shadow"), "cost_per_accepted")
    assert cost.status == "insufficient_evidence"
    assert cost.reason == "1 of 31 observations have no cost: the cost of every attempt is needed"
    assert _stage(decision, "shadow").action == "continue"  # an unreadable trigger never lets a stage advance


def test_hostile_ids_are_shown_inert(tmp_path: Path, plan_path: Path, verdict_path: Path) -> None:
    root = tmp_path / "W"
    init_log(root, plan_path=plan_path, verdict_path=verdict_path)
    hostile = observations(20)
    add_batch(root, hostile, stage="shadow", plan_path=plan_path)
    evil = observations(1, start=20, unauthorized_actions=1).with_columns(
        record_id=pl.lit("<script>alert(1)</script>`x`|y")
    )
    add_batch(root, evil, stage="pilot", plan_path=plan_path)
    result = CliRunner().invoke(app, ["watch", "status", str(root), "--no-record"])
    assert result.exit_code == 21
    assert "<script>alert(1)</script>`x`|y" in result.stdout  # shown as text in a terminal, one line
    decision = watch(root, plan_path=plan_path, now=LATER)
    from gatestats.report._release_rollout import _trigger_rows

    rows = _trigger_rows([s.to_dict() for s in decision.stages])
    cells = " ".join(" ".join(r) for r in rows)
    assert "<script>" not in cells
    assert "&lt;script&gt;" in cells


def test_a_log_made_with_relative_paths_is_read_from_any_working_directory(
    tmp_path: Path, plan_path: Path, verdict_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "rollout.toml").write_bytes(plan_path.read_bytes())
    (work / "verdict.json").write_bytes(verdict_path.read_bytes())
    monkeypatch.chdir(work)
    assert (
        CliRunner().invoke(app, ["watch", "init", "W", "--plan", "rollout.toml", "--verdict", "verdict.json"]).exit_code
        == 0
    )
    add_batch(work / "W", observations(20), stage="shadow", plan_path=work / "rollout.toml")
    monkeypatch.chdir(tmp_path)  # a scheduler elsewhere
    result = CliRunner().invoke(app, ["watch", "status", str(work / "W"), "--no-record"])
    assert result.exit_code == 20, result.output
