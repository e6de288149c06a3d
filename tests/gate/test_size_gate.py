"""False-pass rate of paired gate rows with the candidate exactly at the margin (issues 12 and 28).

The cells (``benchmarks/gate_rate_simulation.py``, ``SIZE_CELLS``; full size: run that script) run
through :func:`evaluate_gate` with the population mean difference exactly ``-margin`` (the boundary
of "the rule is violated"), so a ``pass`` is a false pass; it must not happen more often than alpha
plus two binomial standard errors. Each cell is also **decidable** (the row has a test in every
replication, never refused for lack of cases) and carries its teeth (issue 28, item 3, session 36):

* the regression concentrated in a few cases whose other cases are near 0 or 1 (the bounded-mean
  betting test): the case-level t test it replaced passes more often than the limit in the same
  draws (issue 12);
* 20 groups of 10 cases: ignoring the groups passes about a quarter of the replications (planted:
  ``GATESTATS_PLANTED_BREAK=no_groups``, RESULTS.md);
* 40 cases cannot show non-inferiority by 0.05 (91 needed): every replication is
  ``insufficient_evidence``, at the margin and for a candidate equal to the baseline.

The betting test is conservative at the margin (its size is a fraction of alpha), so a tripled alpha
leaves its false-pass rate below alpha: the property holds there, and only a liberal p-value breaks it.
A tripled alpha is caught by the A/A test (exact McNemar, tight) and by the cell of one trial per
case (the exact unconditional test; ``SIZE_CELLS["one_trial"]``, benchmark only: 0.3 CPU-s a gate call).
Planted breaks on demand: ``GATESTATS_PLANTED_BREAK=<name>[:factor]`` (``tests.simulations.planted_from_env``).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from gatestats.gate import Registration, evaluate_gate, parse_policy
from tests.gate.factory import policy_text
from tests.simulations import load_simulation, planted_from_env, reps

sim = load_simulation("gate_rate_simulation")
#: Replications (issue 28, item 3, session 41; full size: ``benchmarks/simulations_full.py``). The concentrated
#: cell at 60: the planted case-level t test passes 11 of 60 = 0.183 > 0.106 (at 200: 0.135 > 0.081) and the
#: planted e-value x 10 fails too; the groups cell at 30: groups ignored pass 10 of 30 = 0.333 > 0.130.
CONCENTRATED_REPS = reps(suite=60, full=200)
GROUPS_REPS = reps(suite=30, full=100)
POWER_REPS = reps(suite=20, full=20)
FEW_CASES_REPS = reps(suite=10, full=10)
ALPHA = sim.ALPHA
_records = sim.records
_set = sim.record_set


@pytest.fixture(autouse=True)
def _planted() -> Iterator[None]:
    with planted_from_env():
        yield


def _rule(margin: float) -> str:
    return str(sim.NI_RULE.format(margin=margin, alpha=ALPHA))


@pytest.mark.simulation
def test_regression_concentrated_in_five_cases_is_not_passed_more_than_alpha() -> None:
    # 100 cases x 20 trials, margin 0.05, about 5 cases broken completely, the others near 0 or 1.
    reps = CONCENTRATED_REPS
    cell = sim.SIZE_CELLS["concentrated"]
    r = sim.pass_rate(cell, reps=reps, seed=121)
    power = sim.pass_rate(cell, reps=POWER_REPS, seed=131, at_margin=False)
    replaced = r.rate_at(ALPHA, replaced=True)
    print(f"concentrated: {r.counts}; decidable {r.decidable:.2f}; case t {replaced:.3f}; equal {power.counts}")
    assert r.decidable == 1.0, r.counts
    assert r.false_rate <= sim.limit(reps), r.counts
    assert replaced > sim.limit(reps)  # teeth: the replaced case-level t test fails this test in the same draws
    assert power.false_rate >= 0.5, power.counts  # the gate is not blocking everything


@pytest.mark.simulation
def test_few_case_groups_at_the_margin_are_not_passed_more_than_alpha() -> None:
    # 20 groups of 10 cases, 1 trial, margin 0.25: a quarter of the groups broken.
    reps = GROUPS_REPS
    cell = sim.SIZE_CELLS["groups"]
    r = sim.pass_rate(cell, reps=reps, seed=122)
    power = sim.pass_rate(cell, reps=POWER_REPS, seed=132, at_margin=False)
    print(f"groups: {r.counts}; decidable {r.decidable:.2f}; equal {power.counts}")
    assert r.decidable == 1.0, r.counts
    assert r.false_rate <= sim.limit(reps), r.counts
    assert power.false_rate >= 0.5, power.counts


@pytest.mark.simulation
def test_forty_cases_are_insufficient_evidence_at_the_margin_and_without_a_regression() -> None:
    cell = sim.SIZE_CELLS["few_cases"]
    for at_margin in (True, False):
        r = sim.pass_rate(cell, reps=FEW_CASES_REPS, seed=124, at_margin=at_margin)
        assert r.counts == {"insufficient_evidence": FEW_CASES_REPS}, (at_margin, r.counts)
        assert r.decidable == 0.0  # refused before any test: 91 cases are needed


def test_twenty_groups_say_insufficient_evidence_with_the_groups_needed() -> None:
    rng = np.random.default_rng(5)
    text = policy_text(_rule(0.1), k=1, min_trials=4, min_cases=100).replace('pins = { model_id = "model-new" }', "")
    policy = parse_policy(text.encode())
    reg = Registration(
        run_set="x", policy_digest=policy.digest, registered_at="t", first_record_at=None, origin="runner"
    )
    groups = np.repeat(np.arange(20), 5)
    p = rng.beta(2.0, 1.0, 100)
    verdict = evaluate_gate(
        policy,
        _set("baseline", _records("baseline", p, 4, rng, groups)),
        _set("candidate", _records("candidate", p, 4, rng, groups)),
        registration=reg,
        now="t",
    )
    row = verdict.rules[0]
    assert (verdict.verdict, row.decision, row.test) == (
        "insufficient_evidence",
        "insufficient_evidence",
        "bounded-mean betting test",
    )
    assert row.reason is not None
    assert row.reason.endswith("with 20 independent case groups: at least 44 groups (about 220 cases) are needed")
    assert row.cases_needed == 220


def test_identical_deterministic_systems_pass_non_inferiority_without_an_interval() -> None:
    # Every per-case difference is 0: no interval can be drawn (no spread), yet the bounded-mean test is
    # valid and 150 clean cases show "not worse by 0.05" (p = 0.0044 <= 0.05); the old t rule said
    # insufficient evidence here.
    rng = np.random.default_rng(8)
    text = policy_text(_rule(0.05), k=1, min_trials=3, min_cases=150).replace('pins = { model_id = "model-new" }', "")
    policy = parse_policy(text.encode())
    reg = Registration(
        run_set="x", policy_digest=policy.digest, registered_at="t", first_record_at=None, origin="runner"
    )
    p = (rng.random(150) < 0.7).astype(float)
    verdict = evaluate_gate(
        policy,
        _set("baseline", _records("baseline", p, 3, rng, None)),
        _set("candidate", _records("candidate", p, 3, rng, None)),
        registration=reg,
        now="t",
    )
    row = verdict.rules[0]
    assert (row.decision, row.test) == ("pass", "bounded-mean betting test")
    assert row.pvalue_pass == pytest.approx(0.0043671, abs=1e-6)
    assert (row.ci_low, row.ci_high) == (None, None)
