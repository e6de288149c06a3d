"""The gate's anti-patterns, each through the CLI with its verdict and exit code."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import EXIT_CODES, evaluate_gate, load_policy, load_record_set, parse_policy
from tests.gate.factory import policy_text, prepared_never_ran, write_run_set

RULES = """
[[rules]]
name = "pass rate non-inferior"
metric = "pass_rate"
test = "paired"
margin = 0.05

[[rules]]
name = "pass rate floor"
metric = "pass_rate"
threshold = 0.6
"""


def _outcomes(n: int, failing: set[int], trials: int = 1) -> dict[str, list[str]]:
    return {f"c{i:03d}": ["failed" if i in failing else "passed"] * trials for i in range(n)}


def _setup(
    tmp_path: Path,
    *,
    base: dict[str, list[str]],
    cand: dict[str, list[str]],
    rules: str = RULES,
    extra: str = "",
    k: int = 1,
    min_cases: int = 10,
    slices: dict[str, list[str]] | None = None,
    cand_kwargs: dict[str, object] | None = None,
    base_kwargs: dict[str, object] | None = None,
) -> tuple[Path, Path, Path]:
    policy_path = tmp_path / "policy.toml"
    policy_path.write_text(policy_text(rules, k=k, min_trials=k, min_cases=min_cases, extra=extra))
    policy = load_policy(policy_path)
    b = write_run_set(tmp_path / "base", system="baseline", outcomes=base, slices=slices, **(base_kwargs or {}))  # type: ignore[arg-type]
    c = write_run_set(
        tmp_path / "cand",
        system="candidate",
        outcomes=cand,
        policy=policy,
        slices=slices,
        **(cand_kwargs or {}),  # type: ignore[arg-type]
    )
    return policy_path, b, c


def _gate(policy: Path, base: Path, cand: Path, *extra: str) -> tuple[int, dict[str, object] | None, str]:
    result = CliRunner().invoke(
        app, ["gate", "--policy", str(policy), "--baseline", str(base), "--candidate", str(cand), "--json", *extra]
    )
    try:
        body = json.loads(result.stdout)
    except json.JSONDecodeError:
        body = None
    return result.exit_code, body, result.output


def test_an_honest_improvement_on_enough_cases_passes(tmp_path: Path) -> None:
    base = _outcomes(200, set(range(0, 200, 4)))  # 75%
    cand = _outcomes(200, set(range(0, 200, 16)))  # 93.75%, no case lost
    policy, b, c = _setup(tmp_path, base=base, cand=cand)
    code, body, out = _gate(policy, b, c)
    assert body is not None, out
    assert (code, body["verdict"]) == (0, "pass"), body["reasons"]
    assert [r["decision"] for r in body["rules"]] == ["pass", "pass"]
    assert len(body["flips"]["fail_to_pass"]) == 50 - 13
    assert body["flips"]["pass_to_fail"] == []


def test_96_percent_with_one_severe_slice_failure_fails(tmp_path: Path) -> None:
    base = _outcomes(50, {3})
    cand = _outcomes(50, {7, 49})  # 96% pass rate; c049 is the one security case that failed
    slices = {"c049": ["security"], "c048": ["security"]}
    policy, b, c = _setup(
        tmp_path,
        base=base,
        cand=cand,
        slices=slices,
        rules=RULES.replace("0.6", "0.5"),
        extra='severe_slices = ["security"]',
    )
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert (code, body["verdict"]) == (EXIT_CODES["fail"], "fail")
    (severe,) = body["severe_slices"]
    assert severe["decision"] == "fail"
    assert severe["failures"] == [{"case_id": "c049", "trial": 0, "outcome": "failed", "bound": None}]
    # the reason names the slice once, as the slice's own reason does (issue 29: no "severe slice security: severe slice")
    assert [r for r in body["reasons"] if "security" in r] == [severe["reason"]]
    assert severe["reason"].startswith("severe slice 'security': ")
    # the severe case is not averaged into the other rules: they see 48 cases
    assert {r["n_cases"] for r in body["rules"]} == {48}


def test_a_policy_edited_after_the_run_is_refused(tmp_path: Path) -> None:
    policy, b, c = _setup(tmp_path, base=_outcomes(50, set()), cand=_outcomes(50, set()))
    policy.write_text(policy.read_text().replace("margin = 0.05", "margin = 0.20"))
    out_file = tmp_path / "verdict.json"
    code, body, out = _gate(policy, b, c, "-o", str(out_file))
    assert code == 2
    assert body is None
    assert "is not the one registered before execution" in out
    assert not out_file.exists()


def test_a_policy_registered_after_the_first_record_is_refused(tmp_path: Path) -> None:
    policy, b, c = _setup(
        tmp_path,
        base=_outcomes(50, set()),
        cand=_outcomes(50, set()),
        cand_kwargs={"registered_at": "2026-11-02T00:00:00Z"},
    )
    code, _, out = _gate(policy, b, c)
    assert code == 2
    assert "after the first record started" in out


def test_a_candidate_without_registration_is_refused(tmp_path: Path) -> None:
    policy, b, _ = _setup(tmp_path, base=_outcomes(50, set()), cand=_outcomes(50, set()))
    unregistered = write_run_set(tmp_path / "other", system="candidate", outcomes=_outcomes(50, set()))
    code, _, out = _gate(policy, b, unregistered)
    assert code == 2
    assert "no policy was registered before execution" in out


def test_a_run_on_the_wrong_model_is_insufficient_evidence(tmp_path: Path) -> None:
    base = _outcomes(200, set(range(0, 200, 4)))
    cand = _outcomes(200, set(range(0, 200, 16)))
    policy, b, c = _setup(tmp_path, base=base, cand=cand, cand_kwargs={"model_id": "model-old"})
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert (code, body["verdict"]) == (EXIT_CODES["insufficient_evidence"], "insufficient_evidence")
    assert any(
        "pinned:model_id (candidate): model_id is model-old; the policy pins 'model-new'" in r for r in body["reasons"]
    )


def test_an_unpinned_model_is_insufficient_evidence(tmp_path: Path) -> None:
    policy, b, c = _setup(
        tmp_path, base=_outcomes(200, set()), cand=_outcomes(200, set()), cand_kwargs={"model_id": None}
    )
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert code == 12
    assert any("do not name model_id (unpinned" in r for r in body["reasons"])


def test_thirty_cases_and_a_two_point_rule_is_insufficient_evidence(tmp_path: Path) -> None:
    rules = RULES.replace("margin = 0.05", "margin = 0.02")
    policy, b, c = _setup(tmp_path, base=_outcomes(30, {1, 2}), cand=_outcomes(30, {1}), rules=rules)
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert (code, body["verdict"]) == (12, "insufficient_evidence")
    paired = body["rules"][0]
    assert paired["decision"] == "insufficient_evidence"
    assert "finer than one case's weight 1/30" in paired["reason"]
    assert paired["cases_needed"] == 50


def test_a_crashed_run_set_is_insufficient_evidence(tmp_path: Path) -> None:
    base = _outcomes(200, set(range(0, 200, 4)))
    cand = _outcomes(200, set(range(0, 200, 16)))
    policy, b, c = _setup(tmp_path, base=base, cand=cand, cand_kwargs={"complete": False})
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert (code, body["verdict"]) == (12, "insufficient_evidence")
    assert any("run_complete (candidate): " in r and "incomplete" in r for r in body["reasons"])


def test_a_run_set_prepared_but_never_run_is_insufficient_evidence(tmp_path: Path) -> None:
    policy, b, c = _setup(tmp_path, base=_outcomes(50, set()), cand=_outcomes(50, set()))
    prepared_never_ran(c)
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert (code, body["verdict"]) == (12, "insufficient_evidence")
    assert any("the record set is empty" in r for r in body["reasons"])


def test_emptying_the_records_of_a_complete_run_set_is_refused(tmp_path: Path) -> None:
    policy, b, c = _setup(tmp_path, base=_outcomes(50, set()), cand=_outcomes(50, set()))
    (c / "records.jsonl").write_text("")
    code, body, output = _gate(policy, b, c)
    assert (code, body) == (1, None)
    assert f"{c / 'records.jsonl'}: field 'records_seal': records.jsonl is not the file the run set sealed" in output


def test_missing_cases_and_mismatched_versions_are_insufficient_evidence(tmp_path: Path) -> None:
    base = _outcomes(60, set())
    cand = {k: v for k, v in _outcomes(60, set()).items() if k != "c010"}
    policy, b, c = _setup(
        tmp_path,
        base=base,
        cand=cand,
        cand_kwargs={"case_versions": {"c020": "v-other"}, "extra_cases": ["c010"]},
    )
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert code == 12
    reasons = " | ".join(body["reasons"])  # type: ignore[arg-type]
    assert "1 cases of the case set have no record: c010" in reasons
    assert "case versions differ between baseline and candidate: c020" in reasons
    assert "missing from the candidate: c010" in reasons


def test_fewer_valid_trials_than_k_is_insufficient_evidence(tmp_path: Path) -> None:
    base = _outcomes(60, set(), trials=4)
    cand = _outcomes(60, set(), trials=4)
    cand["c005"] = ["passed", "passed", "infra_error", "infra_error"]
    rules = RULES.replace('metric = "pass_rate"\nthreshold', 'metric = "pass_hat_k"\nthreshold')
    policy, b, c = _setup(tmp_path, base=base, cand=cand, k=4, rules=rules)
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert code == 12
    assert any(
        "1 cases have fewer than 4 valid trials (infra errors do not count): c005 (2)" in r for r in body["reasons"]
    )


def test_an_infra_error_rate_above_the_limit_is_insufficient_evidence(tmp_path: Path) -> None:
    cand = _outcomes(60, set())
    retries = {(f"c{i:03d}", 0): 1 for i in range(10)}  # 10 infra attempts of 70 = 14% > 10%
    policy, b, c = _setup(tmp_path, base=_outcomes(60, set()), cand=cand, cand_kwargs={"retries": retries})
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert code == 12
    assert any("10/70 attempts were infra errors (14.3%; limit 10.0%)" in r for r in body["reasons"])


def test_too_few_cases_is_insufficient_evidence(tmp_path: Path) -> None:
    policy, b, c = _setup(tmp_path, base=_outcomes(8, set()), cand=_outcomes(8, set()))
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert code == 12
    assert any("min_cases (candidate): 8 cases; the policy needs at least 10" in r for r in body["reasons"])


def test_a_judge_graded_rule_without_a_valid_calibration_is_insufficient_evidence(tmp_path: Path) -> None:
    rules = (
        RULES
        + """
[[rules]]
name = "judged helpfulness"
metric = "pass_rate"
grader = "helpful"
threshold = 0.5

[judges.helpful]
calibrations = ["missing-judge-cal.json"]
judge_model = "judge-1"
rubric_digest = "sha256:abc"
max_false_pass_rate = 0.1
"""
    )
    base = _outcomes(200, set(range(0, 200, 4)))
    cand = _outcomes(200, set(range(0, 200, 16)))
    policy, b, c = _setup(tmp_path, base=base, cand=cand, rules=rules)
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert code == 12
    assert any(r.startswith("judge:helpful (candidate): ") for r in body["reasons"])


def test_a_candidate_shown_worse_fails_and_a_warn_rule_warns(tmp_path: Path) -> None:
    base = _outcomes(200, set(range(0, 200, 16)))
    cand = _outcomes(200, set(range(0, 200, 3)))  # much worse
    policy, b, c = _setup(tmp_path, base=base, cand=cand)
    code, body, _ = _gate(policy, b, c)
    assert body is not None
    assert (code, body["verdict"]) == (11, "fail")
    assert body["rules"][0]["decision"] == "fail"
    warn_rules = RULES.replace("margin = 0.05", 'margin = 0.05\naction = "warn"').replace("0.6", "0.5")
    (tmp_path / "w").mkdir()
    policy2, b2, c2 = _setup(tmp_path / "w", base=base, cand=cand, rules=warn_rules)
    code, body, _ = _gate(policy2, b2, c2)
    assert body is not None
    assert (code, body["verdict"]) == (10, "warn")
    code, _, _ = _gate(policy2, b2, c2, "--warn-exit-zero")
    assert code == 0


def test_the_verdict_file_is_immutable_and_binds_the_digests(tmp_path: Path) -> None:
    base = _outcomes(200, set(range(0, 200, 4)))
    cand = _outcomes(200, set(range(0, 200, 16)))
    policy, b, c = _setup(tmp_path, base=base, cand=cand)
    out, md, junit = tmp_path / "verdict.json", tmp_path / "summary.md", tmp_path / "gate.xml"
    code, _, output = _gate(policy, b, c, "-o", str(out), "--markdown", str(md), "--junit", str(junit))
    assert code == 0, output
    body = json.loads(out.read_text())
    assert body["policy"]["digest"] == load_policy(policy).digest
    assert body["candidate"]["digest"] == load_record_set(c).digest
    assert body["baseline"]["files"][0]["digest"].startswith("sha256:")
    assert body["tool_version"].startswith("gatestats ")
    from gatestats.gate import verdict_digest

    assert body["digest"] == verdict_digest(body)
    assert "## ✅ gatestats gate: `pass`" in md.read_text()
    xml = junit.read_text()
    assert xml.count("<testcase ") == len(body["checks"]) + 2
    before = out.read_bytes()
    code, _, output = _gate(policy, b, c, "-o", str(out))
    assert code == 2
    assert "verdicts are immutable" in output
    assert out.read_bytes() == before


def test_bad_records_exit_1_with_file_and_line(tmp_path: Path) -> None:
    policy, b, c = _setup(tmp_path, base=_outcomes(50, set()), cand=_outcomes(50, set()))
    lines = (c / "records.jsonl").read_text().splitlines()
    lines[3] = lines[3].replace('"passed"', '"maybe"')
    (c / "records.jsonl").write_text("\n".join(lines) + "\n")
    code, _, out = _gate(policy, b, c)
    assert code == 1
    assert "records.jsonl:4: field 'outcome': must be one of" in out


def test_evaluate_gate_reproduces_with_the_same_inputs(tmp_path: Path) -> None:
    base = _outcomes(100, set(range(0, 100, 5)))
    cand = _outcomes(100, set(range(0, 100, 9)))
    policy, b, c = _setup(tmp_path, base=base, cand=cand)
    p = load_policy(policy)
    one = evaluate_gate(p, load_record_set(b), load_record_set(c), now="t").to_dict()
    two = evaluate_gate(p, load_record_set(b), load_record_set(c), now="t").to_dict()
    assert one == two


@pytest.mark.parametrize("seed", [1, 2])
def test_holm_adjusted_p_values_are_at_least_the_raw_ones(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    base = {f"c{i:03d}": ["passed" if rng.random() < 0.7 else "failed"] for i in range(120)}
    cand = {f"c{i:03d}": ["passed" if rng.random() < 0.8 else "failed"] for i in range(120)}
    policy, b, c = _setup(tmp_path, base=base, cand=cand)
    v = evaluate_gate(parse_policy(policy.read_bytes(), path=policy), load_record_set(b), load_record_set(c))
    for r in v.rules:
        assert r.pvalue_pass_adjusted is not None
        assert r.pvalue_pass is not None
        assert r.pvalue_pass_adjusted >= r.pvalue_pass
        assert r.pvalue_fail_adjusted is not None
        assert r.pvalue_fail is not None
        assert r.pvalue_fail_adjusted >= r.pvalue_fail


def test_retries_that_raise_cost_per_accepted_beyond_the_limit_fail_while_pass_at_k_rises(tmp_path: Path) -> None:
    rules = """
[[rules]]
name = "pass@k not worse"
metric = "pass_at_k"
test = "paired"
margin = 0.05
"""
    base = {f"c{i:03d}": ["failed", "failed"] if i % 4 == 0 else ["passed", "passed"] for i in range(200)}
    cand = {f"c{i:03d}": ["failed", "failed"] if i % 16 == 0 else ["passed", "passed"] for i in range(200)}
    # the candidate's harness retries: two failed attempts before each final one (3x the spend per trial)
    retries = {(c, t): 2 for c in cand for t in range(2)}
    policy, b, c = _setup(
        tmp_path,
        base=base,
        cand=cand,
        rules=rules,
        k=2,
        extra="max_cost_increase = 0.15",
        cand_kwargs={"retries": retries, "retry_outcome": "failed"},
    )
    code, body, out = _gate(policy, b, c)
    assert body is not None, out
    assert (code, body["verdict"]) == (11, "fail"), body["reasons"]
    pass_at_k, cost = body["rules"]
    assert pass_at_k["decision"] == "pass"
    assert pass_at_k["observed"] > pass_at_k["baseline"]
    assert cost["kind"] == "cost_increase"
    assert cost["decision"] == "fail"
    # hand-computed: baseline 400 attempts x $0.01 / 300 accepted; candidate 1200 x $0.01 / 374 accepted
    assert cost["observed"] == pytest.approx((1200 * 0.01 / 374) / (400 * 0.01 / 300), rel=1e-9)
    assert body["cost"]["per_system"] is not None


def test_a_cost_row_that_cannot_decide_still_counts_the_cases_it_looked_at(tmp_path: Path) -> None:
    # 12 cases: too few paired units for the cost ratio's p-values (50), so the row is undecided;
    # it must still say it looked at 12 cases, not 0 (the release report showed "cases 0").
    base = {f"c{i:03d}": ["passed", "failed"] for i in range(12)}
    policy, b, c = _setup(tmp_path, base=base, cand=base, min_cases=10, extra="max_cost_increase = 0.15")
    code, body, out = _gate(policy, b, c)
    assert code == 12
    assert body is not None, out
    cost = next(r for r in body["rules"] if r["kind"] == "cost_increase")
    assert cost["decision"] == "insufficient_evidence"
    assert cost["n_cases"] == 12


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("margin = 0.05", "margn = 0.05"), "key 'rules[0].margn': unknown key"),
        (("k = 1", 'k = "one"'), "key 'k': expected an integer (got a string 'one')"),
        (('[baseline]\nsystem = "baseline"\n', ""), "key 'baseline': required key is missing"),
    ],
)
def test_a_bad_policy_is_a_usage_error_with_key_and_line_and_no_verdict(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    policy, b, c = _setup(tmp_path, base=_outcomes(50, set()), cand=_outcomes(50, set()))
    policy.write_text(policy.read_text().replace(*edit))
    out = tmp_path / "verdict.json"
    code, body, output = _gate(policy, b, c, "-o", str(out))
    assert code == 2
    assert body is None
    assert message in output
    assert f"{policy}:" in output
    assert not out.exists()
