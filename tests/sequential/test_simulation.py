"""Type-I error under continuous monitoring and the savings, from ``benchmarks/sequential_simulation.py``.

The script's tables are recorded in docs/sequential.md; here the same code runs with fewer
replications and the properties are asserted with their Monte Carlo error stated.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from gatestats.sequential import decide_rule
from tests.simulations import load_simulation, reps

ROOT = Path(__file__).resolve().parents[2]
ALPHA_PASS = 0.025


def _script() -> ModuleType:
    return load_simulation("sequential_simulation")


def test_the_vectorised_simulation_decides_as_decide_rule_does() -> None:
    sim = _script()
    scenario = sim._type1_scenarios()[7]  # paired, 5-point regression at the margin
    values = scenario.draw(np.random.default_rng(1), 40)
    for method in ("betting", "empirical_bernstein"):
        status, cases = sim.sequential_outcome(values, scenario.rule, scenario.boundary, method)
        for row in range(40):
            d = decide_rule(
                values[row],
                checkpoints=list(sim.CHECKPOINTS),
                boundary=scenario.boundary,
                higher_is_better=True,
                lo=-1.0,
                hi=1.0,
                alpha_pass=ALPHA_PASS,
                alpha_fail=ALPHA_PASS,
                method=method,
            )
            assert {"pass": 1.0, "fail": -1.0, "undecided": 0.0}[d.status] == status[row]
            assert (d.decided_at or 200) == cases[row]


#: Replications per row (issue 28, item 3: 2,000, was 6,000; unchanged in session 41) and per truth of the savings.
TYPE1_REPS = reps(suite=2000, full=6000)
SAVINGS_REPS = reps(suite=1000, full=1000)


@pytest.mark.simulation
def test_false_pass_stays_below_alpha_under_monitoring_after_every_batch_and_peeking_inflates_it() -> None:
    # 2000 replications per row (issue 28, item 3; was 6000, the script's full table has more): SE of a rate
    # at 0.025 is 0.0035; we allow 3 SE (0.0105). The fixed-size test read after every batch (peeking) is
    # the planted break, asserted above the limit in the same draws.
    reps = TYPE1_REPS
    sim = _script()
    rows = {r["scenario"]: r for r in sim.type1_table(reps, 20261201)}
    allowed = ALPHA_PASS + 3 * math.sqrt(ALPHA_PASS * (1 - ALPHA_PASS) / reps)
    # the case as the unit is valid when cases are independent draws; with clustered cases the unit is the group
    clustered_cases = "threshold 0.80, clustered (40 groups of 5)"
    for name, row in rows.items():
        if name == clustered_cases:
            continue
        for method in ("betting", "empirical_bernstein", "hoeffding"):
            assert row[method] <= allowed, (name, method, row[method])
    # the same stopping rule on the fixed-size test: the paired rows all inflate well above alpha
    for name in (
        "paired A/A, superiority (margin 0)",
        "paired, 5-point regression at margin 0.05, every case",
        "paired, at margin 0.05, 10% of cases lose 50 points",
    ):
        assert rows[name]["peeking"] > 3 * ALPHA_PASS, (name, rows[name]["peeking"])
        assert rows[name]["once"] <= allowed + 0.01  # read once, as designed, it is (nearly) at level
    assert rows["threshold 0.80, 20% of cases always fail, rest always pass"]["peeking"] > 2 * ALPHA_PASS
    # clustered cases fed one by one: the superpopulation guarantee fails for every case-unit test alike
    assert rows[clustered_cases]["once"] > allowed
    assert (
        rows["threshold 0.80, clustered, the group as the unit (group means, 4 groups a batch)"]["betting"] <= allowed
    )


@pytest.mark.simulation
def test_the_sequential_gate_saves_cases_and_never_decides_the_wrong_way() -> None:
    # About 5 s. 1000 replications per truth, design of 600 cases.
    sim = _script()
    rows = [r for r in sim.savings_table(SAVINGS_REPS, 20261201, 600) if r["method"] == "betting"]
    by_effect = {str(r["effect"]).split(": ", 1)[1]: r for r in rows}
    improvement = by_effect["honest 5-point improvement"]
    assert improvement["pass"] > 0.99
    assert improvement["mean_cases"] < 0.3 * 600
    regression = by_effect["10-point regression"]
    assert regression["pass"] == 0
    assert regression["mean_cases"] < 0.8 * 600
    shortfall = by_effect["true 0.60 (10-point shortfall)"]
    assert shortfall["fail"] > 0.95
    assert shortfall["mean_cases"] < 0.4 * 600
    for r in rows:
        wrong = {"pass": "fail", "fail": "pass"}.get(str(r["right"]))
        if wrong is not None:
            assert r[wrong] <= 0.01, r
