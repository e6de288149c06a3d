"""The multiplicity family the policy declares (issue 30, item 3), on the real τ-bench data.

The issue's A/A policy on τ-bench airline (gpt-4o, 50 tasks x 4 trials, the same run as baseline and
candidate): a blocking floor, a warn-only capability row and a cost row that cannot be decided (the
records carry no cost). Before issue 30 the three rows were one Holm family with the cost row at
p = 1: the floor (raw p 0.028) was inconclusive (adjusted 0.057) and the capability row's p (interval
[0.42, 0.71] above its 0.40 threshold) was tripled. Now the blocking rows are their own family, the warn-only
row its own, and the cost row is removed before the data.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from gatestats.gate import RecordSet, Registration, Verdict, evaluate_gate, parse_policy
from gatestats.gate._typed import build
from gatestats.gate.families import pre_data_removals
from gatestats.gate.verdict import RuleResult
from gatestats.paired.multiplicity import adjust_pvalues_weighted
from gatestats.records.contract import POLARS_SCHEMA
from tests.gate.factory import policy_text
from tests.simulations import load_simulation, reps

ROOT = Path(__file__).resolve().parents[2]
#: Replications of the family simulation (unchanged in session 41; the script's default is 300).
FAMILY_REPS = reps(suite=80, full=80)
TAU_CSV = ROOT / "data" / "tau_bench" / "tau_bench_gpt4o_airline_trials.csv"

FLOOR = """
[[rules]]
name = "floor"
metric = "pass_rate"
threshold = {floor}
"""
CAPABILITY = """
[[rules]]
name = "capability"
metric = "pass_at_k"
k = 2
threshold = 0.40
action = "warn"
"""


def _tau_set(label: str) -> RecordSet:
    """τ-bench's 200 airline trials as an in-memory record set, without cost fields (as the issue's user had)."""
    csv = pl.read_csv(TAU_CSV)
    n = csv.height
    frame = pl.DataFrame(
        {
            "schema_version": [1] * n,
            "record_id": [f"{label}-{i}" for i in range(n)],
            "run_set_id": [f"rs-{label}"] * n,
            "system": ["tc-gpt-4o"] * n,
            "case_id": [f"airline-{t:02d}" for t in csv["task_id"]],
            "case_version": ["v1"] * n,
            "trial": csv["trial"],
            "attempt": [0] * n,
            "outcome": ["passed" if s == 1 else "failed" for s in csv["success"]],
            "model_id": ["gpt-4o"] * n,
            "system_digest": ["sd-tc-gpt-4o"] * n,
        }
    )
    frame = frame.with_columns(
        [pl.lit(None, dtype=d).alias(k) for k, d in POLARS_SCHEMA.items() if k not in frame.columns]
    ).select(list(POLARS_SCHEMA))
    cases = [{"case_id": c, "case_version": "v1"} for c in frame["case_id"].unique().sort()]
    return RecordSet(
        path=Path(label), kind="run_set", manifest={"complete": True, "cases": cases}, records=frame, files=(),
        digest=label,
    )  # fmt: skip


def _tau_verdict(rules: str, *, cost: bool = True, floor: float = 0.285) -> Verdict:
    extra = "require_checksums = false" + ("\nmax_cost_increase = 0.15" if cost else "")
    text = policy_text(rules.format(floor=floor), k=4, min_trials=4, min_cases=50, extra=extra)
    text = text.replace('pins = { model_id = "model-new" }', "")
    text = text.replace('system = "candidate"', 'system = "tc-gpt-4o"').replace(
        'system = "baseline"', 'system = "tc-gpt-4o"'
    )
    policy = parse_policy(text.encode())
    reg = Registration(
        run_set="x", policy_digest=policy.digest, registered_at="t", first_record_at=None, origin="import"
    )
    return evaluate_gate(policy, _tau_set("a"), _tau_set("b"), registration=reg, now="t")


def test_tau_bench_aa_blocking_rows_keep_their_own_adjusted_pvalues() -> None:
    v = _tau_verdict(FLOOR + CAPABILITY)
    floor, capability, cost = v.rules
    assert floor.pvalue_pass is not None
    assert capability.pvalue_pass is not None
    assert 0.02 < floor.pvalue_pass < 0.035  # 0.028 (the raw p 0.027)
    assert capability.ci_low is not None
    assert capability.ci_low > 0.40  # the interval the issue saw, [0.41, 0.70]
    # The blocking family is the floor alone: its adjusted p is its raw p, and it passes.
    assert (floor.family, floor.family_size) == ("blocking", 1)
    assert floor.pvalue_pass_adjusted == pytest.approx(floor.pvalue_pass)
    assert floor.decision == "pass"
    # The warn-only row is adjusted in its own family, and passes (its interval is above 0.40).
    assert (capability.family, capability.family_size) == ("warn_only", 1)
    assert capability.decision == "pass"
    # The cost row cannot be decided whatever the outcomes: no record carries a cost field.
    assert cost.family == "removed_before_data"
    assert cost.reason is not None
    assert "left out of the multiplicity family before the data" in cost.reason
    assert cost.pvalue_pass_adjusted is None
    # A blocking row that cannot be decided still blocks: never a pass on missing evidence.
    assert v.verdict == "insufficient_evidence"
    # The test can fail: one family with the cost row at p = 1 (before issue 30) left the floor inconclusive.
    old = adjust_pvalues_weighted([floor.pvalue_pass, capability.pvalue_pass, 1.0], [0.05, 0.05, 0.05])
    assert old[0] > 0.05
    assert old[1] > capability.pvalue_pass


def test_tau_bench_warn_and_undecidable_rows_do_not_change_the_blocking_rows() -> None:
    alone = _tau_verdict(FLOOR, cost=False)
    full = _tau_verdict(FLOOR + CAPABILITY, cost=True)
    assert alone.verdict == "pass"
    assert full.rules[0].pvalue_pass_adjusted == alone.rules[0].pvalue_pass_adjusted
    assert full.rules[0].decision == alone.rules[0].decision == "pass"


def test_the_family_fields_are_in_the_verdict_file_and_read_back() -> None:
    v = _tau_verdict(FLOOR + CAPABILITY)
    body = v.to_dict()
    rows = body["rules"]
    assert [r["family"] for r in rows] == ["blocking", "warn_only", "removed_before_data"]
    assert list(rows[0])[-2:] == ["family", "family_size"]  # new fields at the end
    assert tuple(build(RuleResult, r, "rules") for r in rows) == v.rules  # the verdict reader's typed build


def test_pre_data_removals_read_no_outcome() -> None:
    # The same design with every outcome flipped removes the same rows: the choice is made before the data.
    text = policy_text(FLOOR.format(floor=0.99) + CAPABILITY, k=4, min_trials=4, min_cases=50,
                       extra="max_cost_increase = 0.1")  # fmt: skip
    policy = parse_policy(text.encode())
    found = pre_data_removals(policy, {"all": 50}, "no record carries a cost field")
    assert set(found) == {("floor", "threshold"), ("cost per accepted outcome", "cost_increase")}
    assert "even if all 50 cases passed" in found["floor", "threshold"]
    assert pre_data_removals(policy, {"all": 5000}, None) == {}


def test_a_row_undecidable_only_in_the_data_stays_in_its_family_with_p_one() -> None:
    # Two identical runs: the margin-0 paired row has no discordant case (seen only in the data),
    # so it stays in the blocking family at p = 1 and the floor is adjusted with it.
    paired = '\n[[rules]]\nname = "better"\nmetric = "pass_rate"\ntest = "paired"\n'
    v = _tau_verdict(FLOOR + paired, cost=False)
    floor, better = v.rules
    assert better.family == "blocking"
    assert better.pvalue_pass_adjusted is None or better.decision != "pass"
    assert floor.family_size == 2
    assert floor.pvalue_pass is not None
    assert floor.pvalue_pass_adjusted is not None
    assert floor.pvalue_pass_adjusted >= floor.pvalue_pass


def test_an_inconclusive_row_says_how_many_cases_would_decide_it() -> None:
    v = _tau_verdict(FLOOR, cost=False, floor=0.33)
    (floor,) = v.rules
    assert floor.decision == "insufficient_evidence"
    assert floor.cases_needed is not None
    assert floor.cases_needed > 50
    assert floor.reason is not None
    assert f"about {floor.cases_needed} cases (now 50) would show it to hold" in floor.reason
    # At the normal approximation: N' = N (z_alpha / z_obs)^2 from the row's raw p-value.
    from scipy import stats

    assert floor.pvalue_pass is not None
    z = stats.norm.isf(floor.pvalue_pass)
    assert floor.cases_needed == int(np.ceil(50 * (stats.norm.isf(0.05) / z) ** 2))


@pytest.mark.simulation
def test_blocking_family_false_pass_at_the_boundary_of_every_blocking_rule() -> None:
    # benchmarks/family_simulation.py at a reduced size (80 replications): the family-wise false pass
    # of the blocking rows, every one at its boundary at once, stays within alpha + 2 SE.
    study = load_simulation("family_simulation")  # it imports its sibling grouping_simulation
    result = study.simulate(FAMILY_REPS, null=True, seed=11)
    assert result.any_blocking_pass <= result.limit, result
    assert result.shipped <= result.any_blocking_pass  # shipping needs every blocking row to pass
    # The simulation sees multiplicity: without correction at least as many replications pass a row.
    assert result.uncorrected_any_pass >= result.any_blocking_pass


def test_cost_fields_decide_removal_only_when_a_side_has_none_at_all() -> None:
    from gatestats.gate.families import no_cost_fields

    policy = parse_policy(policy_text(FLOOR.format(floor=0.3), extra="max_cost_increase = 0.1").encode())
    frame = pl.DataFrame(
        {"system": ["baseline", "baseline", "candidate", "candidate"], "cost_usd": [None, 0.2, None, None]},
        schema={"system": pl.String, "cost_usd": pl.Float64},
    )
    assert no_cost_fields(policy, frame, ("baseline", "candidate")) == (
        "no candidate record carries a cost field (cost_usd, cost_model_usd, cost_tool_usd, cost_execution_usd)"
    )
    partly = frame.with_columns(pl.Series("cost_usd", [None, 0.2, 0.1, None]))
    assert no_cost_fields(policy, partly, ("baseline", "candidate")) is None  # a missing cost is seen in the data


def test_a_rule_on_an_empty_slice_is_removed_before_the_data() -> None:
    text = policy_text('[[rules]]\nname = "ghost"\nmetric = "pass_rate"\nslice = "nowhere"\nthreshold = 0.5\n'
                       + FLOOR.format(floor=0.3))  # fmt: skip
    policy = parse_policy(text.encode())
    found = pre_data_removals(policy, {"all": 100, "nowhere": 0}, None)
    assert found == {("ghost", "threshold"): "no case in slice 'nowhere' (outside the severe slices)",
                     ("ghost", "paired"): "no case in slice 'nowhere' (outside the severe slices)"}  # fmt: skip


def test_a_margin_is_compared_with_the_weight_of_one_paired_unit_as_the_paired_test_counts_them() -> None:
    # 9 cases in 8 declared groups: the paired test's unit is the group (1/8 = 0.125), and the family says the same
    text = policy_text('[[rules]]\nname = "ni"\nmetric = "pass_rate"\ntest = "paired"\nmargin = 0.12\n')
    policy = parse_policy(text.encode())
    assert pre_data_removals(policy, {"all": 9}, None) == {}  # 0.12 is not finer than 1/9 = 0.111
    found = pre_data_removals(policy, {"all": 9}, None, {"all": 8})
    assert found == {("ni", "paired"): "the margin 0.12 is finer than one case's weight 1/8"}


def test_a_row_removed_before_the_data_says_why_once() -> None:
    from gatestats.gate.families import decide_families
    from gatestats.gate.verdict import RuleResult

    why = "the margin 0.05 is finer than one case's weight 1/8"
    fields = dict.fromkeys(RuleResult.__slots__)
    row = RuleResult(**{**fields, "rule": "ni", "row": "ni", "metric": "pass_rate", "slice": "all", "k": 1,
                        "kind": "paired", "action": "block", "test": "t", "alpha": 0.05, "n_cases": 9,
                        "decision": "insufficient_evidence", "reason": f"{why} = 0.125: at least 20 cases are needed"})  # fmt: skip
    (out,) = decide_families([row], "holm", {("ni", "paired"): why})
    assert out.reason is not None
    assert out.reason.count(why) == 1
    assert out.reason.endswith("; left out of the multiplicity family before the data")
    (other,) = decide_families([replace(row, reason="something else")], "holm", {("ni", "paired"): why})
    assert other.reason == f"something else; left out of the multiplicity family before the data: {why}"
