"""Coverage of the bounds interval for missing costs at the boundary (full table: docs/cost.md).

The expensive attempts are the ones whose cost was lost (``turn_limit``: every lost cost is the
cap, so the true cost per accepted outcome *is* the upper bound). The bounds interval must cover
it at >= 1 - alpha - 2 SE; the complete-case interval (the attempts that kept a cost) must not.
Fewer replications than the docs (400 per cell, 1,000 resamples; seeds fixed); the Monte Carlo
standard error of a coverage near 0.95 is then 0.011.
"""

from __future__ import annotations

import math

import pytest

from tests.cost.missing_simulation import run_cell

pytestmark = pytest.mark.slow

REPS = 400
ALPHA = 0.05


@pytest.mark.parametrize("n_cases", [50, 200])
def test_bounds_interval_covers_where_the_complete_case_interval_does_not(n_cases: int) -> None:
    cell = run_cell("turn_limit", n_cases, replications=REPS, seed=20261204 + n_cases, n_resamples=1000)
    floor = 1 - ALPHA - 2 * math.sqrt(ALPHA * (1 - ALPHA) / REPS)
    assert cell.bounds_offered == 1.0
    assert cell.bounds_coverage >= floor, cell
    # the complete-case interval misses the truth: docs/cost.md, 0.417 at 50 cases and 0.000 at 300
    assert cell.complete_case_coverage < floor - 0.3, cell


def test_bounds_interval_covers_with_the_largest_observed_cost_as_cap() -> None:
    # missingness rising with cost and the default cap (the largest observed cost per attempt)
    cell = run_cell("dear_lost", 100, replications=REPS, seed=7, n_resamples=1000)
    floor = 1 - ALPHA - 2 * math.sqrt(ALPHA * (1 - ALPHA) / REPS)
    assert cell.bounds_coverage >= floor, cell
    assert cell.complete_case_coverage < cell.bounds_coverage, cell
