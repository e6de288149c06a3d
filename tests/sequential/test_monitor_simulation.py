"""False rollbacks under continuous monitoring, from ``benchmarks/monitor_simulation.py`` (issue 25).

The script's full table is recorded in benchmarks/RESULTS.md; here the same code runs with fewer
replications and the properties are asserted with their Monte Carlo error: every trigger's false-rollback
rate at the null boundary is at most alpha + 2 SE, and the naive fixed-size test read after every batch
on the same streams is above alpha (so the check can fail: a trigger that peeked would be caught).
"""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from gatestats.sequential import mean_trigger, rate_trigger
from tests.hypothesis_counts import draws
from tests.simulations import load_simulation, reps

ROOT = Path(__file__).resolve().parents[2]
#: Issue 28, item 3: 100 replications in the suite (400 before session 40, 150 in session 40; the full table is
#: the script's). The naive monitor read after every batch still exceeds alpha + 2 SE in every chosen cell at 100
#: (asserted in the same draws; the closest, accepted rate at 0.98, by 0.100 > 0.094; at 75 it would not: 0.080),
#: and the point-estimate vs-gate level still exceeds its bound: a trigger that peeked is still caught.
REPS = reps(suite=100, full=400)
#: Replications of the real-drop cells (unchanged in session 41).
DROP_REPS = reps(suite=100, full=100)
SEED = 20261204


def _script() -> ModuleType:
    return load_simulation("monitor_simulation")


#: Random streams per cell compared with the rate trigger: 3 in the whole suite, 1 in the inner loop
#: (tests/hypothesis_counts.py; every cell is still compared).
TRIGGER_ROWS = draws(3, floor=1)


def test_the_vectorised_simulation_fires_where_the_triggers_fire() -> None:
    sim = _script()
    rng = np.random.default_rng(1)
    doubled = next(c for c in sim.cells() if c.name == "escaped defects doubled")
    for cell in [*[c for c in sim.cells() if c.kind == "rate"][:6], doubled]:
        x = (rng.random((TRIGGER_ROWS, sim.N)) < cell.truth).astype(np.float64)
        first = sim._first_rate_crossings(x, cell)
        for row, got in zip(x, first, strict=True):
            path = rate_trigger(row[:600], level=cell.level, direction=cell.direction, alpha=sim.ALPHA)
            assert path.first_crossing == (got if got is not None and got < 600 else None)
    cpa = next(c for c in sim.cells() if c.kind == "cpa" and not c.null)
    values, lo, hi, level = sim._draw_mean(rng, 2, cpa)
    assert float(values.min()) >= lo
    assert float(values.max()) <= hi
    path = mean_trigger(values[0], level=level, lower=lo, upper=hi, direction="above", alpha=sim.ALPHA)
    log_e = np.asarray(path.log_evalue)
    assert path.first_crossing == (int(np.argmax(log_e >= math.log(20))) if np.any(log_e >= math.log(20)) else None)


@pytest.mark.simulation
def test_false_rollbacks_stay_within_alpha_and_the_naive_monitor_does_not() -> None:
    sim = _script()
    se = math.sqrt(sim.ALPHA * (1 - sim.ALPHA) / REPS)
    chosen = [
        c
        for c in sim.cells()
        if (c.null and c.kind in {"mean", "cpa"}) or (c.kind == "rate" and c.null and c.level in (0.02, 0.5, 0.98))
    ]
    assert len(chosen) == 8
    for i, cell in enumerate(chosen):
        outcome = sim.simulate(cell, REPS, SEED, 100 + i)
        trigger = float(np.mean(outcome.trigger <= sim.N))
        naive = float(np.mean(outcome.naive <= sim.N))
        assert trigger <= sim.ALPHA + 2 * se, (cell, trigger)
        assert naive > sim.ALPHA + 2 * se, (cell, naive)


@pytest.mark.simulation
def test_a_real_drop_is_rolled_back() -> None:
    sim = _script()
    drops = [c for c in sim.cells() if not c.null and c.name.startswith(("accepted", "CPA", "one"))]
    for i, cell in enumerate(drops):
        outcome = sim.simulate(cell, DROP_REPS, SEED, 200 + i)
        assert float(np.mean(outcome.trigger <= sim.N)) >= 0.95, cell


@pytest.mark.simulation
def test_the_vs_gate_level_pays_for_the_golden_sets_error_and_the_point_estimate_does_not() -> None:
    # docs/rollout.md: with the gate's lower bound, false rollback <= alpha + alpha_gate; with the
    # point estimate there is no bound (measured 0.30 in the full run)
    sim = _script()
    bound_cell, estimate_cell = (c for c in sim.cells() if c.kind.startswith("vs_gate"))
    bound = sim.ALPHA + sim.GATE_ALPHA
    se = math.sqrt(bound * (1 - bound) / REPS)
    with_bound = float(np.mean(sim.simulate(bound_cell, REPS, SEED, 300).trigger <= sim.N))
    with_estimate = float(np.mean(sim.simulate(estimate_cell, REPS, SEED, 301).trigger <= sim.N))
    assert with_bound <= bound + 2 * se
    assert with_estimate > bound + 2 * se
