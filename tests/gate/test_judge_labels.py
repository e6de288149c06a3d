"""A judge rule on human labels (``[judges.NAME] labels``): PPI / PPI++ over cases in the gate.

The boundary simulation: a judge that passes 10% of the failing cases, a candidate whose people's
pass rate is exactly the threshold (the boundary of "the rule is violated"). The raw judge rule
passes it far more often than alpha; the prediction-powered rule at most alpha + 2 SE.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.errors import RecordFileError
from gatestats.gate import (
    PolicyError,
    evaluate_gate,
    load_judge_calibrations,
    load_policy,
    load_record_set,
    read_verdict,
)
from gatestats.gate import judge_labels as judge_labels_module
from gatestats.gate.judge_labels import label_blocks, load_judge_labels, ppi_threshold_evidence, read_case_labels
from gatestats.gate.policy import Rule, parse_policy
from gatestats.gate.rules import threshold_evidence
from gatestats.judges.ppi import MIN_LABELS
from tests.gate.factory import policy_text, rewrite_records, write_run_set
from tests.gate.test_judge_rules import JUDGE, _calibration
from tests.hypothesis_counts import draws
from tests.simulations import reps

SEED = 20261204
RULE = Rule(
    name="judged",
    metric="pass_rate",
    slice="all",
    direction="higher",
    threshold=0.8,
    test="none",
    margin=None,
    alpha=0.05,
    action="block",
    k=1,
    grader="helpful",
)


def _biased_run(
    rng: np.random.Generator, n_cases: int, n_labels: int, rate: float = 0.8
) -> tuple[pl.DataFrame, dict[str, float]]:
    """People pass a case with probability ``rate``; the judge passes every case they pass and 10% of the others."""
    truth = rng.random(n_cases) < rate
    judge = np.where(truth, 1.0, (rng.random(n_cases) < 0.10).astype(np.float64))
    ids = [f"c{i}" for i in range(n_cases)]
    labelled = rng.choice(n_cases, n_labels, replace=False)
    return pl.DataFrame({"case_id": ids, "value": judge}), {ids[i]: float(truth[i]) for i in labelled}


def _passes(n_labels: int, reps: int, seed: int, *, raw: bool = False, rate: float = 0.8) -> float:
    rng = np.random.default_rng(seed)
    passed = 0
    for _ in range(reps):
        values, labels = _biased_run(rng, 1000, n_labels, rate)
        if raw:
            f = values["value"].to_numpy()
            ev = threshold_evidence(f, None, rule=RULE, alpha=0.05, confidence_level=0.95, seed=seed)
        else:
            ev = ppi_threshold_evidence(values, labels, rule=RULE, grouped=False, confidence_level=0.95, seed=seed)
        passed += ev.status == "ok" and ev.pvalue_pass is not None and ev.pvalue_pass <= RULE.alpha
    return passed / reps


#: Replications per number of labels (issue 28, item 3). The full run (1,000 each) is
#: ``benchmarks/judge_labels_boundary.py``. The planted break: the human labels ignored in the betting units
#: (``label_blocks`` given the judge's values as labels). Only the 300-label cell sees it (40 and 100 labels pass
#: 0 of 150 with and without it: PPI at lambda = 1 is conservative there, so they keep their size); at this seed it
#: fails at 75 (8/75 = 0.107 > 0.100; session 41), 300 (0.083 > 0.075) and 1,000 (0.078 > 0.064), not at 100
#: (0.080 < 0.094) or 200 (0.080 < 0.081). Full size: ``benchmarks/simulations_full.py``.
BOUNDARY_REPS_40 = reps(suite=150, full=150)
BOUNDARY_REPS_100 = reps(suite=150, full=150)
BOUNDARY_REPS_300 = reps(suite=75, full=300)
BOUNDARY_REPS = {40: BOUNDARY_REPS_40, 100: BOUNDARY_REPS_100, 300: BOUNDARY_REPS_300}
#: The raw judge rule's replications (it passes 0.50 of 60, 0.445 of 200: > 0.25 either way).
RAW_REPS = reps(suite=60, full=200)


@pytest.mark.slow
def test_at_the_boundary_the_biased_judge_passes_often_and_ppi_at_most_alpha_plus_2se() -> None:
    # 1,000 cases, people's pass probability exactly the threshold 0.8, the judge's 0.82
    raw = _passes(100, RAW_REPS, SEED, raw=True)
    assert raw > 0.25, raw  # measured: see docs/gate.md
    for n_labels, seed in ((40, SEED + 1), (100, SEED + 2), (300, SEED + 3)):
        reps = BOUNDARY_REPS[n_labels]
        found = _passes(n_labels, reps, seed)
        assert found <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps), (n_labels, found)


#: Replications of the two not-slow checks below: the whole suite runs these, the inner loop a quarter
#: (tests/hypothesis_counts.py); the limits are computed from the replications run.
POWER_REPS = draws(100)
REDUCED_RAW_REPS = draws(60)
REDUCED_PPI_REPS = draws(150)


def test_ppi_has_power_when_people_pass_clearly_more_than_the_threshold() -> None:
    assert _passes(100, POWER_REPS, SEED + 4, rate=0.9) > 0.6  # measured 0.79 over 200 replications (docs/gate.md)


def test_a_reduced_boundary_check_runs_in_every_suite() -> None:
    assert _passes(100, REDUCED_RAW_REPS, SEED, raw=True) > 0.2
    found = _passes(100, REDUCED_PPI_REPS, SEED + 5)
    assert found <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / REDUCED_PPI_REPS), found


def test_too_few_labels_or_no_unlabelled_case_is_insufficient_evidence() -> None:
    values, labels = _biased_run(np.random.default_rng(1), 200, MIN_LABELS - 1)
    ev = ppi_threshold_evidence(values, labels, rule=RULE, grouped=False, confidence_level=0.95, seed=1)
    assert ev.status == "insufficient_evidence"
    assert ev.pvalue_pass is None
    assert "29 human label(s) among the rule's 200 cases: at least 30 needed" in (ev.reason or "")
    everything = dict.fromkeys(values["case_id"], 1.0)
    ev = ppi_threshold_evidence(values, everything, rule=RULE, grouped=False, confidence_level=0.95, seed=1)
    assert ev.status == "insufficient_evidence"
    assert "no case is left without a label" in (ev.reason or "")
    assert ppi_threshold_evidence(values, None, rule=RULE, grouped=False, confidence_level=0.95, seed=1).status != "ok"
    grouped = ppi_threshold_evidence(values, labels, rule=RULE, grouped=True, confidence_level=0.95, seed=1)
    assert "grouped cases" in (grouped.reason or "")


def test_the_row_names_the_estimator_the_labels_and_the_interval() -> None:
    values, labels = _biased_run(np.random.default_rng(2), 400, 120)
    ev = ppi_threshold_evidence(values, labels, rule=RULE, grouped=False, confidence_level=0.95, seed=1)
    assert ev.test == "PPI (λ = 1), betting test on 120 human labels of 400 cases"
    assert ev.ci_low is not None
    assert ev.ci_high is not None
    assert ev.ci_low < (ev.observed or 0) < ev.ci_high
    # the interval is the test inverted: at the policy's 0.95, a threshold just under its low end passes at 0.025
    below = replace(RULE, threshold=ev.ci_low - 1e-3, alpha=0.025)
    again = ppi_threshold_evidence(values, labels, rule=below, grouped=False, confidence_level=0.95, seed=1)
    assert again.pvalue_pass is not None
    assert again.pvalue_pass <= 0.025
    above = replace(RULE, threshold=ev.ci_low + 1e-3)
    again = ppi_threshold_evidence(values, labels, rule=above, grouped=False, confidence_level=0.95, seed=1)
    assert again.pvalue_pass is not None
    assert again.pvalue_pass > 0.025


def test_label_blocks_have_the_ppi_mean_with_equal_blocks() -> None:
    f = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    labelled = np.array([True, False, False, True, False, False])
    units = label_blocks(f, labelled, np.array([0.0, 1.0]), seed=3)
    # PPI: the judge's mean over the 4 unlabelled (0.5) + the labelled rectifiers' mean ((-1 + 0) / 2)
    assert units.size == 2
    assert units.mean() == pytest.approx(0.0)
    assert set(units.round(6)) <= {-1.0, -0.5, 0.0, 0.5, 1.0}


# --- hostile label files -------------------------------------------------------------------------

CASES = {"a", "b", "c"}


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("case_id,label\na,1\na,0\n", "labels.csv:3: field 'case_id': duplicate case id 'a' (first at line 2)"),
        ("case_id,label\na,NaN\n", "labels.csv:2: field 'label': expected a finite number"),
        ("case_id,label\na,0.5\n", "labels.csv:2: field 'label': expected 0 or 1 (got 0.5)"),
        ("case_id,label\na,yes\n", "labels.csv:2: field 'label'"),
        ("case_id,label\na,\n", "labels.csv:2: field 'label': expected 0 or 1 (got None)"),
        ("case_id,label\nzz,1\n", "labels.csv:2: field 'case_id': 'zz' is not a case of the candidate's run set"),
        ("case_id,label\n,1\n", "labels.csv:2: field 'case_id'"),
        ("case_id,label\n", "no labelled case (the table is empty)"),
        ("case_id,verdict\na,1\n", "labels.csv:1: field 'label': mapped column not in the table"),
    ],
)
def test_a_hostile_csv_labels_file_is_refused_with_file_line_and_field(tmp_path: Path, text: str, found: str) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(text)
    with pytest.raises(RecordFileError) as info:
        read_case_labels(path, CASES)
    assert found in str(info.value)


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ('{"case_id": "a", "label": true}', "expected a finite number (got boolean True)"),
        ('{"case_id": "a", "label": "1"}', "expected a finite number (got string '1')"),
        ('{"case_id": "a", "label": NaN}', "labels.jsonl:1"),
        ('{"case_id": "a", "label": 1, "label": 0}', "labels.jsonl:1"),
        ('{"case_id": "a", "label": 2}', "expected 0 or 1 (got 2.0)"),
    ],
)
def test_a_hostile_jsonl_labels_file_is_refused(tmp_path: Path, line: str, found: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(RecordFileError) as info:
        read_case_labels(path, CASES)
    assert found in str(info.value)


def test_a_good_labels_file_reads_ids_written_as_integers(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"case_id": 7, "label": 1}\n{"case_id": "a", "label": 0.0}\n')
    assert read_case_labels(path, {"7", "a"}) == {"7": 1.0, "a": 0.0}


# --- the policy check ----------------------------------------------------------------------------

JUDGE_TABLE = """
[judges.helpful]
calibrations = ["cal.json"]
judge_model = "judge-1"
rubric_digest = "sha256:rubric"
max_false_pass_rate = 0.1
labels = "labels.csv"
"""


def _problems(rules: str, extra: str = "") -> list[str]:
    with pytest.raises(PolicyError) as info:
        parse_policy(policy_text(rules + JUDGE_TABLE, extra=extra, k=2, min_trials=2).encode(), path="p.toml")
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize(
    ("rules", "extra", "found"),
    [
        (
            '[[rules]]\nname = "r"\nmetric = "pass_hat_k"\ngrader = "helpful"\nthreshold = 0.5\n',
            "",
            "human labels decide only a pass_rate threshold rule",
        ),
        (
            '[[rules]]\nname = "r"\nmetric = "pass_rate"\ngrader = "helpful"\ntest = "paired"\nmargin = 0.05\n',
            "",
            "human labels decide only a pass_rate threshold rule",
        ),
        (
            '[[rules]]\nname = "r"\nmetric = "pass_rate"\ngrader = "helpful"\nthreshold = 0.5\n',
            'case_grouping = "case_group"',
            "human labels with case_grouping",
        ),
        (
            '[[rules]]\nname = "r"\nmetric = "pass_rate"\ngrader = "helpful"\nthreshold = 0.5\n'
            "\n[sequential]\nmax_cases = 200\ntrials = 2\nbatch_cases = 20\n",
            "",
            "human labels with [sequential]",
        ),
    ],
)
def test_the_policy_refuses_labels_where_ppi_is_not_built(rules: str, extra: str, found: str) -> None:
    problems = _problems(rules, extra)
    assert any("judges.helpful.labels" in p and found in p for p in problems), problems


def test_a_policy_with_labels_on_a_pass_rate_threshold_rule_is_read(tmp_path: Path) -> None:
    rules = '[[rules]]\nname = "r"\nmetric = "pass_rate"\ngrader = "helpful"\nthreshold = 0.5\n'
    policy = parse_policy(policy_text(rules + JUDGE_TABLE).encode(), path=tmp_path / "p.toml")
    assert policy.judges["helpful"].labels == tmp_path / "labels.csv"


# --- the gate end to end ---------------------------------------------------------------------------


def _judged_run_sets(tmp_path: Path, *, labels: str | None) -> tuple[Path, Path, Path]:
    """100 cases, people pass 90; the judge passes every case (it passes the 10 failing ones too)."""
    cal = _calibration(tmp_path)
    version = json.loads(cal.read_text())["version"]
    text = JUDGE.format(calibration=cal.name, rubric="sha256:rubric", limit=0.1).replace("0.6", "0.85")
    text += "" if labels is None else f'labels = "{labels}"\n'
    (tmp_path / "policy.toml").write_text(policy_text(text, min_cases=50))
    policy = load_policy(tmp_path / "policy.toml")
    outcomes = {f"c{i:03d}": ["failed" if i % 10 == 0 else "passed"] for i in range(100)}
    b = write_run_set(tmp_path / "b", system="baseline", outcomes=outcomes)
    c = write_run_set(tmp_path / "c", system="candidate", outcomes=outcomes, policy=policy)
    for run_set in (b, c):
        rows = [json.loads(line) for line in (run_set / "records.jsonl").read_text().splitlines()]
        for row in rows:
            row["graders"] = [{"name": "helpful", "kind": "judge", "verdict": "passed", "calibration_version": version}]
        rewrite_records(run_set, rows)
    return tmp_path / "policy.toml", b, c


def _write_labels(path: Path, ids: range) -> None:
    path.write_text("case_id,label\n" + "".join(f"c{i:03d},{0 if i % 10 == 0 else 1}\n" for i in ids))


def test_the_gate_decides_a_judge_rule_on_the_labels_and_names_the_estimator(tmp_path: Path) -> None:
    policy_path, b, c = _judged_run_sets(tmp_path, labels="labels.csv")
    _write_labels(tmp_path / "labels.csv", range(0, 100, 2))  # 50 labelled cases, the 10 failing ones among them
    policy = load_policy(policy_path)
    base, cand = load_record_set(b), load_record_set(c)
    labels = load_judge_labels(policy, set(cand.records["case_id"].to_list()))
    v = evaluate_gate(policy, base, cand, calibrations=load_judge_calibrations(policy), labels=labels)
    (row,) = v.rules
    assert row.test == "PPI (λ = 1), betting test on 50 human labels of 100 cases"
    assert row.observed == pytest.approx(0.8)  # the judge's 1.0 + the labelled errors' mean (-10 / 50)
    assert row.decision != "pass"
    missing = evaluate_gate(policy, base, cand, calibrations=load_judge_calibrations(policy))
    assert missing.rules[0].decision == "insufficient_evidence"
    assert "were not given to the gate" in (missing.rules[0].reason or "")
    # the same run without the key: the raw judge's 1.0 passes the rule
    raw_policy, b2, c2 = _judged_run_sets(tmp_path / "raw", labels=None)
    raw = load_policy(raw_policy)
    w = evaluate_gate(raw, load_record_set(b2), load_record_set(c2), calibrations=load_judge_calibrations(raw))
    assert w.rules[0].test == "case-level interval inversion"
    assert w.rules[0].decision == "pass"


def test_the_gate_command_exits_2_on_a_label_that_is_not_a_case(tmp_path: Path) -> None:
    policy_path, b, c = _judged_run_sets(tmp_path, labels="labels.csv")
    (tmp_path / "labels.csv").write_text("case_id,label\nc001,1\nnot-a-case,0\n")
    result = CliRunner().invoke(
        app, ["gate", "--policy", str(policy_path), "--baseline", str(b), "--candidate", str(c)], catch_exceptions=False
    )
    assert result.exit_code == 2, result.output
    assert "labels.csv:3: field 'case_id': 'not-a-case' is not a case of the candidate's run set" in result.output


# --- the labels file bound into the verdict ------------------------------------------------------------------


def _gate_to_file(tmp_path: Path, policy_path: Path, b: Path, c: Path) -> tuple[dict[str, Any], Path]:
    out = tmp_path / "verdict.json"
    args = ["gate", "--policy", str(policy_path), "--baseline", str(b), "--candidate", str(c), "-o", str(out)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code in (0, 10, 11, 12), result.output
    return json.loads(out.read_text()), out


def test_the_verdict_binds_the_labels_file_and_verify_refuses_an_edited_one(tmp_path: Path) -> None:
    policy_path, b, c = _judged_run_sets(tmp_path, labels="labels.csv")
    labels = tmp_path / "labels.csv"
    _write_labels(labels, range(0, 100, 2))
    body, verdict = _gate_to_file(tmp_path, policy_path, b, c)
    (bound,) = body["judge_labels"]
    assert bound == {
        "judge": "helpful",
        "path": str(labels),
        "digest": "sha256:" + hashlib.sha256(labels.read_bytes()).hexdigest(),
        "n_labels": 50,
    }
    assert read_verdict(verdict).verdict.judge_labels[0].n_labels == 50  # read back strictly, typed
    ok = CliRunner().invoke(app, ["verify", str(verdict)], catch_exceptions=False)
    assert ok.exit_code == 0, ok.output
    assert "labels of judge helpful" not in ok.output or "failed" not in ok.output
    # one person's label turned after the gate: the verdict no longer rests on this file
    labels.write_text(labels.read_text().replace("c000,0", "c000,1"))
    bad = CliRunner().invoke(app, ["verify", str(verdict)], catch_exceptions=False)
    assert bad.exit_code != 0, bad.output
    assert "judge_labels[0].digest" in bad.output
    assert "edited after the gate decided on it" in bad.output


def test_a_verdict_without_labels_has_no_judge_labels_key(tmp_path: Path) -> None:
    policy_path, b, c = _judged_run_sets(tmp_path, labels=None)
    body, _ = _gate_to_file(tmp_path, policy_path, b, c)
    assert "judge_labels" not in body


def test_a_labels_file_that_changes_while_the_gate_reads_it_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy_path, b, c = _judged_run_sets(tmp_path, labels="labels.csv")
    labels = tmp_path / "labels.csv"
    _write_labels(labels, range(0, 100, 2))
    real = judge_labels_module.load_judge_labels

    def read_then_edit(policy: Any, case_ids: Any) -> Any:
        out = real(policy, case_ids)
        labels.write_text(labels.read_text() + "c001,1\n")  # a second writer appends after the read
        return out

    monkeypatch.setattr(judge_labels_module, "load_judge_labels", read_then_edit)
    args = ["gate", "--policy", str(policy_path), "--baseline", str(b), "--candidate", str(c)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert "changed while the gate read it" in result.output
