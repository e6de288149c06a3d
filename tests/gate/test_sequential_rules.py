"""The sequential gate: the seeded order, decisions recomputed from the records, what it refuses, the binding."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from gatestats.gate import RecordSet, Verdict, evaluate_gate, load_policy, load_record_set, read_verdict, write_verdict
from gatestats.gate.sequential_rules import case_order
from gatestats.sequential.run import PATH_FILE
from gatestats_runner.launch import RunSetOptions, run_run_set
from tests.conftest import copy_sequential_example
from tests.sequential.run.conftest import EXAMPLE

POLICY = EXAMPLE / "policy.toml"
IDS = [f"product-{i:02d}" for i in range(1, 49)]


def test_the_order_is_the_ids_sorted_by_their_seeded_sha256() -> None:
    def key(c: str) -> str:  # the definition in gatestats.gate.sequential_rules, written out again
        return hashlib.sha256(f"gatestats-sequential-order/1\0{0}\0{c}".encode()).hexdigest()

    assert case_order(["a", "b", "c", "d"], 0) == ("d", "c", "a", "b") == tuple(sorted("abcd", key=key))
    assert case_order(["d", "b", "a", "c"], 0) == ("d", "c", "a", "b")
    assert case_order(["a", "b", "c", "d"], 1) == ("b", "a", "c", "d")
    full = case_order(IDS, 2026)
    assert [c for c in full if c != "product-07"] == list(case_order(set(IDS) - {"product-07"}, 2026))


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory, sequential_example_run: Path) -> Path:
    return copy_sequential_example(sequential_example_run, tmp_path_factory.mktemp("gate-sequential") / "out")


def _copy(example: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(example, out, ignore=shutil.ignore_patterns(".lock"))
    return out


def _gate(out: Path) -> Verdict:
    return evaluate_gate(
        load_policy(POLICY),
        load_record_set(out / "baseline"),
        load_record_set(out / "candidate"),
        now="2026-12-01T00:00:00Z",
    )


def _more(out: Path, side: str, cases: tuple[str, ...]) -> None:
    """Run ``cases`` into one side's run set, as a controller that broke the design would."""
    run_run_set(
        RunSetOptions(
            cases=EXAMPLE / "cases",
            candidate=EXAMPLE / "candidates" / side,
            out=out / side,
            trials=2,
            resume=True,
            system="released" if side == "baseline" else "new",
            isolation="none",
            workspace="dir-copy",
            policy_digest=load_policy(POLICY).digest,
            batch_cases=cases,
        )
    )


def test_every_rule_is_decided_by_its_sequence_and_the_verdict_binds_the_stop(example: Path) -> None:
    verdict = _gate(example)
    assert verdict.verdict == "pass"
    rows = verdict.rules
    assert [(r.test, r.decision, r.n_cases) for r in rows] == [
        ("sequential (betting)", "pass", 16),
        ("sequential (betting)", "pass", 32),
    ]
    assert rows[1].observed == 1.0
    assert rows[1].baseline == 0.75
    s = verdict.sequential
    assert s is not None
    assert (s.stopped_at, s.checkpoints, s.decided) == (32, (8, 16, 24, 32), True)
    assert (s.trials_used, s.trials_fixed, s.trials_saved) == (128, 192, 64)
    assert s.order == case_order(IDS, 2026)
    assert [(r.status, r.decided_at, len(r.path)) for r in s.rules] == [("pass", 16, 2), ("pass", 32, 4)]
    assert s.rules[0].alpha_pass == pytest.approx(0.0125)  # 0.5 x 0.05 / 2 rows
    assert s.rules[1].path[-1].e_pass >= 1 / 0.0125 > s.rules[1].path[-2].e_pass
    names = [c.name for c in verdict.checks]
    assert names[0] == "sequential_order"
    assert "run_complete" not in names
    assert "cases_present" not in names


def test_the_verdict_file_round_trips_and_a_fixed_size_verdict_has_no_sequential_key(
    example: Path, tmp_path: Path
) -> None:
    verdict = _gate(example)
    path = write_verdict(verdict, tmp_path / "verdict.json")
    assert read_verdict(path).verdict == verdict
    assert json.loads(path.read_text())["sequential"]["trials_saved"] == 64
    fixed = dataclasses.replace(verdict, sequential=None)
    assert "sequential" not in fixed.to_dict()


def test_the_gate_never_reads_the_path_file(example: Path, tmp_path: Path) -> None:
    out = _copy(example, tmp_path)
    (out / PATH_FILE).write_text('{"stop": {"n_cases": 48, "verdict": "fail"}}\n')
    assert _gate(out).sequential == _gate(example).sequential


def test_a_partial_batch_is_left_out_and_its_trials_still_count_as_used(example: Path, tmp_path: Path) -> None:
    out = _copy(example, tmp_path)
    _more(out, "candidate", case_order(IDS, 2026)[32:40])  # the baseline of this batch never ran (killed)
    verdict = _gate(out)
    s = verdict.sequential
    assert s is not None
    assert (s.stopped_at, s.trials_used, verdict.verdict) == (32, 144, "pass")
    assert verdict.checks[0].status == "ok"


def test_a_case_run_outside_the_seeded_order_blocks_the_gate(example: Path, tmp_path: Path) -> None:
    out = _copy(example, tmp_path)
    late = case_order(IDS, 2026)[45]
    _more(out, "candidate", (late,))
    verdict = _gate(out)
    assert verdict.verdict == "insufficient_evidence"
    check = verdict.checks[0]
    assert (check.name, check.status) == ("sequential_order", "insufficient_evidence")
    assert check.detail == (
        f"candidate: cases run outside the order drawn from the policy's seed (after the first 40 cases): {late}"
    )
    assert {r.decision for r in verdict.rules} == {"insufficient_evidence"}


def test_clustered_cases_are_refused_by_the_sequential_gate(example: Path) -> None:
    """Cases sharing a case_group are not independent units: the sequential gate is not offered there."""
    policy = load_policy(POLICY)
    first, second = case_order(IDS, 2026)[:2]
    grouped = {first: "repo <b>`x`</b>", second: "repo <b>`x`</b>"}

    def with_groups(side: str) -> RecordSet:
        rs = load_record_set(example / side)
        group = pl.col("case_id").replace_strict(grouped, default=None, return_dtype=pl.String)
        return dataclasses.replace(rs, records=rs.records.with_columns(case_group=group))

    verdict = evaluate_gate(policy, with_groups("baseline"), with_groups("candidate"), now="2026-12-01T00:00:00Z")
    assert verdict.verdict == "insufficient_evidence"
    check = verdict.checks[0]
    assert (check.name, check.status) == ("sequential_order", "insufficient_evidence")
    assert check.detail.startswith("cases share a case_group (repo <b>`x`</b>): anytime-valid sequences need")
    assert {r.decision for r in verdict.rules} == {"insufficient_evidence"}
    # one case per group is independent again: the same records decide as before
    alone = {first: "g1", second: "g2"}
    grouped.clear()
    grouped.update(alone)
    again = evaluate_gate(policy, with_groups("baseline"), with_groups("candidate"), now="2026-12-01T00:00:00Z")
    assert again.verdict == "pass"


def test_a_severe_slice_passes_only_when_every_case_of_the_design_ran(example: Path) -> None:
    """A stop after 32 of 48 cases may leave a severe failure unrun: no severe slice passes before the end."""
    from gatestats.gate.sequential_rules import sequential_stop, severe_after_stop
    from gatestats.gate.verdict import SevereSliceResult

    policy = load_policy(POLICY)
    stop = sequential_stop(policy, load_record_set(example / "baseline"), load_record_set(example / "candidate"))
    assert (stop.n_cases, len(stop.order)) == (32, 48)
    ok = SevereSliceResult(
        slice="refunds",
        n_cases=3,
        n_trials=6,
        n_passed=6,
        failures=(),
        baseline_failures=0,
        decision="pass",
        reason=None,
    )
    failed = dataclasses.replace(ok, slice="payments", n_passed=5, decision="fail", reason="1 of 6 trials did not pass")
    held, kept = severe_after_stop((ok, failed), stop)
    assert (held.decision, kept) == ("insufficient_evidence", failed)  # a failure seen is final
    assert held.reason == (
        "severe slice 'refunds': 32 of the design's 48 cases ran and none of this slice failed, but a severe case may "
        "be among the 16 not run yet: a severe slice passes only when every case ran"
    )
    complete = dataclasses.replace(stop, checkpoints=(*stop.checkpoints, 40, 48))
    assert severe_after_stop((ok,), complete) == (ok,)


def test_an_e_value_that_underflowed_to_zero_is_p_one_not_a_traceback() -> None:
    # At 10M records the fixed-size paired e-value underflowed to 0 and 1/e raised ZeroDivisionError
    # (tests/paired/test_evalue_underflow.py); a sequential row reads 1/max(e) the same way.
    from gatestats.gate.sequential_rules import _result, _Row
    from gatestats.sequential.decide import SequencePoint, SequentialDecision
    from tests.gate.test_judge_labels import RULE

    rule = dataclasses.replace(RULE, grader=None)
    point = SequencePoint(n_cases=100, estimate=0.5, lower=0.4, upper=0.6, e_pass=0.0, e_fail=0.0)
    decision = SequentialDecision(
        status="undecided",
        decided_at=None,
        method="betting",
        alpha_pass=0.025,
        alpha_fail=0.025,
        boundary=0.8,
        path=(point,),
        cases_needed=None,
    )
    row = _Row(label="r", kind="threshold", boundary=0.8, lo=0.0, hi=1.0, values=None, baseline_mean=None, why=None)
    result = _result(rule, row, decision, "betting")
    assert (result.pvalue_pass, result.pvalue_fail) == (1.0, 1.0)
    assert result.decision == "insufficient_evidence"
