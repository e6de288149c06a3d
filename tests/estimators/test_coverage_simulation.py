"""Slow: the coverage simulation of ``docs/coverage.md``, re-run smaller, as a test.

The issue's rule: at nominal 95%, over 10 to 1000 cases and true values 0.02 to 0.98, every
interval method covers at least 93% wherever it is offered; where it would not, it is refused.
This re-runs ``benchmarks/coverage_simulation.py`` (the production interval engine on simulated
evaluations) with fewer replications and a fixed seed, and checks, for every scenario, N, true
value and method:

- coverage among offered replications >= 93% minus a Monte-Carlo allowance of 3 binomial
  standard errors at 93%: ``3 * sqrt(0.93 * 0.07 / offered)``, 2.4 points with 1000 offered
  replications (a cell whose true coverage is exactly 93% fails with probability 0.13%; the rules
  in force before the simulation reach 69-88% in some cells and fail, see the last test);
- the same floor on each method's pooled coverage at each N (the offered replications of all its
  true values at that N together, :func:`pooled_shortfalls`): a broken interval shows at every
  true value, and the pool sees it with more replications than any one cell;
- refusals exactly where the rules say: ``clt`` and ``bootstrap`` refuse every replication below
  their minimum number of independent units and, from there on, exactly the replications whose
  case values are all equal; ``wilson`` and ``auto`` never refuse (every cell has >= 2 units);
- no offered interval has zero width or excludes its estimate.

Replications: :data:`REPS` per cell, :data:`REPS_BOOTSTRAP` for the bootstrap at its threshold (the report
uses 2000 everywhere), 1000 bootstrap resamples (the report and the default use 2000); N = 2000 and 5000 are included for the CLT thresholds, at :data:`EXTENSION_TRUE_VALUES`
only; the bootstrap at its threshold runs at :data:`BOOTSTRAP_TRUE_VALUES` only. The scenarios run as separate tests so that ``pytest -n 2``
spreads them.

The decision rule (issue 28, item 3, session 42). A cell fails below ``0.93 - 3 SE(offered)``; a pool of one
method's cells at one N fails below ``0.93 - 3 SE(pooled offered)``. False alarm for a correct method (every
cell >= 93%): at most 0.13% per cell and at most 0.13% per pool (the pooled coverage is a weighted mean of the
cells' >= 0.93, its variance at most ``0.93 * 0.07 / pooled``; normal approximation). Power against the
planted breaks, at the suite sizes (RESULTS.md, session 42, measured on this seed): the CLT interval at a 90%
level (true coverage ~0.89 at N = 2000 and 5000) fails in every scenario where clt is offered (5 of 7, as at
500 replications per cell before), per pool 0.945 (true 0.89, 1000 offered: floor 0.906) and per cell 0.34
(250 offered: floor 0.882), with 3 pools per scenario (clt at 2000 and 5000, auto at 5000) each failing in
these draws; the bootstrap at a 90% level (its cells keep 500) fails the same 3 of the 5 scenarios where it is
offered as before (by its cells; the pool at N = 500 adds pass^1 of 4 trials in some runs, 0.908 < 0.910).
What the smaller cells give up: a defect confined to one cell at true coverage 0.90 is seen with probability
0.17 at 250 (0.38 at 500); neither size was built to see it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from gatestats.estimators import intervals
from tests.simulations import load_simulation, reps

#: The cells of auto, wilson and clt (session 42: 250, was 500): with the pooled floor the CLT interval at a
#: 90% level still fails every scenario where clt is offered (3 pools each, 0.879-0.905 < 0.906; the cells
#: alone fail 3-5 per scenario). Full: the report's 2,000.
REPS = reps(suite=250, full=2000)
#: The bootstrap at its threshold keeps 500 (session 41: below it the per-cell floor drops under the planted
#: 90%-level bootstrap's coverage; at 250 only 1 scenario of 5 fails, by cells or pools).
REPS_BOOTSTRAP = reps(suite=500, full=2000)
#: The replaced rules' cells (cheap: one cell each) keep 1,000: at 500 the design effect trusted at
#: 100 units (pass^4, groups of 5) is no longer told apart from the floor.
REPS_REPLACED = reps(suite=1000, full=1000)
SEED = 20250101
RESAMPLES = 1000
#: Cells with fewer offered replications than this are not judged (too few to estimate coverage).
MIN_OFFERED = 200
#: The true values at which the bootstrap runs at its threshold (500 units; issue 28, item 3: 8 of the 11
#: cost 65% of this test's CPU). The two ends, where BCa corrects the skew of pass^k, and 0.3, its lowest
#: cell from 500 units in the full run (93.7%, pass^4 of 8 trials; docs/coverage.md). At 500 replications
#: the floor is 89.6%: what the check catches is a broken interval, which shows at every true value
#: (planted, RESULTS.md: bootstrap bounds at a 90% level fail here); the full grid is the script's.
BOOTSTRAP_TRUE_VALUES = (0.02, 0.3, 0.98)
#: The true values of the extension beyond the issue's grid (N = 2000 and 5000; auto, wilson and clt): run
#: at every true value it was 60% of this test's CPU (issue 28, item 3, session 39). Both ends (most of the
#: full run's lowest clt cells from 2000 units: 0.02 and 0.98) and 0.2 and 0.7 (the lowest Wilson cells
#: there). In the full run every one of these cells covers >= 93.8%; what the check catches here is a broken
#: interval, which shows at every true value (planted, RESULTS.md: the CLT interval at a 90% level, offered
#: only from 2000 units, fails here). The full grid is the script's (benchmarks/coverage_simulation.py).
EXTENSION_TRUE_VALUES = (0.02, 0.2, 0.7, 0.98)


sim = load_simulation("coverage_simulation")


@pytest.mark.simulation
@pytest.mark.parametrize("scenario", sim.SCENARIOS, ids=[s.name for s in sim.SCENARIOS])
def test_every_offered_method_covers_at_least_93_percent(scenario: object) -> None:
    common = {"seed": SEED, "n_resamples": RESAMPLES, "scenarios": [scenario], "whatif": False}
    # Every method below the bootstrap's threshold (500 units: there it is refused, cheaply, unless the
    # threshold breaks); above it the bootstrap only gets better (the full run, benchmarks/coverage_simulation.py,
    # has it at 1000), so the larger N run the others. At the threshold the others run at every true value and
    # the bootstrap (most of this test's cost) at BOOTSTRAP_TRUE_VALUES.
    threshold = intervals.MIN_CASES_BOOTSTRAP
    small = tuple(n for n in sim.CASE_COUNTS if n < threshold)
    large = tuple(n for n in sim.CASE_COUNTS if n >= threshold)
    results = (
        sim.simulate(**common, reps=REPS, case_counts=small)
        + sim.simulate(**common, reps=REPS, case_counts=large, methods=sim.EXTENSION_METHODS)
        + sim.simulate(
            **common,
            reps=REPS,
            case_counts=(2000, 5000),
            true_values=EXTENSION_TRUE_VALUES,
            methods=sim.EXTENSION_METHODS,
        )
        + sim.simulate(
            **common,
            reps=REPS_BOOTSTRAP,
            case_counts=(threshold,),
            true_values=BOOTSTRAP_TRUE_VALUES,
            methods=("bootstrap",),
        )
    )
    assert {r.method for r in results} == set(sim.METHODS)
    failures = []
    for r in results:
        where = f"{r.method} at N={r.n_cases} ({r.n_units} units), p={r.true_value}"
        assert r.violations == 0, f"{where}: zero-width or estimate-excluding interval"
        assert r.refused_few_units == 0, where
        if r.method in ("auto", "wilson"):
            assert r.offered == r.reps, f"{where}: refused {r.reps - r.offered}"
        else:
            minimum = sim.minimum_units(r.method)
            if r.n_units < minimum:
                assert (r.offered, r.refused_not_offered) == (0, r.reps), where
            else:
                assert r.refused_not_offered == 0, where
                assert r.refused_constant == r.constant, where
                assert r.refused_degenerate == 0, where
                assert r.offered == r.reps - r.constant, where
        if r.method == "auto":
            expected = "clt" if r.n_units >= intervals.CLT_FROM_CASES else "wilson"
            assert set(r.resolved) <= {expected, "wilson"}, f"{where}: resolved {r.resolved}"
        if r.offered >= MIN_OFFERED:
            floor = sim.FLOOR - sim.monte_carlo_allowance(r.offered)
            if r.coverage < floor:
                failures.append(f"{where}: {r.coverage:.3f} < {floor:.3f} ({r.offered} offered)")
    failures += pooled_shortfalls(results)
    assert not failures, "\n".join(failures)


def pooled_shortfalls(results: Sequence[Any]) -> list[str]:
    """Each (method, N) whose coverage over the offered replications of all its true values is under the floor.

    The floor is the cells' rule at the pooled count, ``0.93 - 3 * sqrt(0.93 * 0.07 / offered)``; a method that
    covers at least 93% in every cell fails it with probability at most 0.13% (module docstring).

    Parameters
    ----------
    results
        ``CellResult`` rows of ``benchmarks/coverage_simulation.py``.

    Returns
    -------
    list of str
        One line per (method, N) under the floor, naming its pooled coverage, floor and count.
    """
    pools: dict[tuple[str, int], list[int]] = {}
    for r in results:
        pool = pools.setdefault((r.method, r.n_cases), [0, 0])
        pool[0] += r.covered
        pool[1] += r.offered
    lines = []
    for (method, n_cases), (covered, offered) in pools.items():
        if not offered:
            continue
        floor = sim.FLOOR - sim.monte_carlo_allowance(offered)
        if covered / offered < floor:
            lines.append(f"{method} at N={n_cases}, pooled over its true values: {covered / offered:.3f} < {floor:.3f}")
    return lines


@pytest.mark.simulation
@pytest.mark.parametrize(
    ("variant", "scenario", "n_cases", "target"),
    [
        # Wilson before the simulation: uncorrected, n_eff = p(1-p)/SE^2 at every N.
        ("wilson (before)", "proportion", 10, 0.05),
        ("wilson (before)", "pass^1, 4 trials, groups of 5", 10, 0.5),
        # Wilson trusting the estimated design effect below DESIGN_EFFECT_FROM_UNITS units.
        ("wilson (design effect at every N)", "pass^1, 20 trials", 50, 0.02),
        ("wilson (design effect at every N)", "pass^4, 8 trials, groups of 5", 100, 0.05),
        # The percentile bootstrap at 50 cases.
        ("bootstrap (percentile, before)", "pass@4, 8 trials", 50, 0.98),
    ],
)
def test_simulation_detects_the_rules_it_replaced(variant: str, scenario: str, n_cases: int, target: float) -> None:
    # The check above has power: each replaced rule falls below the same floor in its worst cell.
    chosen = next(s for s in sim.SCENARIOS if s.name == scenario)
    (result,) = sim.simulate_cell(
        chosen, n_cases, target, reps=REPS_REPLACED, seed=SEED, n_resamples=RESAMPLES, methods=[variant]
    )
    coverage = result.whatif_covered / result.whatif_computed
    assert coverage < sim.FLOOR - sim.monte_carlo_allowance(result.whatif_computed)
