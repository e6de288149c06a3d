"""Slow coverage simulation of the cost intervals (the full tables are in docs/cost.md).

Fewer replications than the docs (:data:`REPS` per cell: 400 in the suite, 800 at full size; 1,000 resamples);
fixed seeds make the figures deterministic. With 400 replications the Monte Carlo standard error of a
coverage near 0.95 is 0.011 (0.008 at 800), which the thresholds allow for.
"""

from __future__ import annotations

import numpy as np
import pytest

from gatestats.cost import MIN_UNITS_INTERVAL, MIN_UNITS_RATIO, cost_per_accepted
from tests.cost import cost_simulation as sim
from tests.cost.conftest import frame
from tests.simulations import reps

pytestmark = pytest.mark.simulation

#: Replications per cell (issue 28, item 3, session 41): 400 in the suite (800 before; docs/cost.md 2,000). The
#: thresholds stay the same fixed numbers; the planted breaks (the intervals at a 90% level; the one-sided p-values
#: read at 0.10) each still fail at 400 (RESULTS.md). Full size: ``benchmarks/simulations_full.py``.
REPS = reps(suite=400, full=800)
RESAMPLES = 1000


def test_cpa_bca_interval_covers_from_the_minimum_number_of_cases() -> None:
    cells = {
        (name, n): sim.simulate(name, n, paired=False, reps=REPS, n_resamples=RESAMPLES)
        for name in sim.CPA_SCENARIOS
        for n in (MIN_UNITS_INTERVAL, 100)
    }
    bca = [c["bca"].coverage for c in cells.values()]
    percentile = [c["percentile"].coverage for c in cells.values()]
    assert min(bca) >= 0.91, bca  # docs/cost.md (2,000 replications): worst offered cell 0.925
    assert np.mean(bca) >= 0.93, bca
    # why BCa: it covered at least as well as the percentile interval on the same replications
    assert np.mean(bca) >= np.mean(percentile)
    assert min(c["bca"].offered for c in cells.values()) >= 0.95


def test_cpa_interval_undercovers_below_the_minimum_number_of_cases() -> None:
    # why it is refused there: with 10 cases the intervals that could be built cover ~0.83-0.92
    coverage = [sim.simulate(name, 10, paired=False, reps=REPS, n_resamples=RESAMPLES)["bca"].coverage
                for name in sim.CPA_SCENARIOS]  # fmt: skip
    assert np.mean(coverage) < 0.92, coverage


def test_paired_ratio_percentile_interval_covers_from_its_minimum_and_beats_bca() -> None:
    cells = [
        sim.simulate(name, n, paired=True, reps=REPS, n_resamples=RESAMPLES)
        for name in sim.RATIO_SCENARIOS
        for n in (MIN_UNITS_RATIO, 200)
    ]
    percentile = [c["percentile"].coverage for c in cells]
    bca = [c["bca"].coverage for c in cells]
    assert min(percentile) >= 0.91, percentile  # docs/cost.md: worst offered cell 0.935
    assert np.mean(percentile) >= 0.93, percentile
    assert np.mean(percentile) >= np.mean(bca), (percentile, bca)
    # one-sided p-values at the true ratio: rejection rate near the nominal 5% (docs: 0.047-0.064)
    sizes = [s for c in cells for s in (c["percentile"].size_within, c["percentile"].size_above)]
    assert max(sizes) <= 0.085, sizes
    assert 0.035 <= np.mean(sizes) <= 0.07, sizes


def test_simulation_engine_is_what_the_public_function_computes() -> None:
    # The simulation calls the bootstrap engine directly; the public function must give the same
    # interval for the same per-case spend and accepted counts and the same seed.
    rng = np.random.default_rng(5)
    columns = sim.heterogeneous(rng, 40)
    rows = []
    for i, (spend, accepted) in enumerate(columns):
        trials = max(int(accepted), 1)
        for t in range(trials):
            outcome = "passed" if t < accepted else "failed"
            rows.append({"case_id": f"c{i:03d}", "trial": t, "outcome": outcome, "cost_usd": spend / trials})
    g = cost_per_accepted(frame(rows), seed=8, n_resamples=1000).groups[0]
    order = np.argsort([f"case\x1fc{i:03d}\x1f\x00" for i in range(40)])
    boot = sim.ratio_bootstrap(columns[order], sim.cpa_statistic, n_resamples=1000, rng=np.random.default_rng(8))
    bounds = boot.bounds(0.95, "bca")
    assert bounds is not None
    assert (g.ci_low, g.ci_high) == (pytest.approx(bounds[0], rel=1e-9), pytest.approx(bounds[1], rel=1e-9))
