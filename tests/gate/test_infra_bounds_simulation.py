"""Informative infra errors at a rule's boundary: false passes ≤ alpha + 2 SE on the bound (issue 30).

A reduced run of ``benchmarks/infra_bounds_simulation.py`` (docs/gate.md, "Unresolved attempts"):
the same draws through :func:`evaluate_gate` with the bound and as before (unresolved attempts
dropped). Each cell's old rate is asserted above the limit too, so the test fails if the bound is
removed (the full run: 0.41 and 0.40 at 400 replications; docs/gate.md).

Sizes (issue 28, item 3): each cell at the fewest replications whose old rule still exceeds the
limit in the same draws (30 x 1000 cases: today 0.333 > 0.130; 40 x ni-200x4-18%: 0.475 > 0.119;
retry-fresh at 60: counted 0.233 > 0.106, bounded 0.050). The full run is the script.

Curtailed (issue 28, item 3, session 42): ``rates(..., curtail=True)`` stops calling the gate for a rate once its
passes exceed ``limit * reps``, where ``rate > limit`` is decided whatever the remaining replications give. Every
assertion below reads only that verdict, so it is the full run's exactly (same draws, same false-alarm rate and
power: none is traded); the rates printed are then lower bounds. Planted (RESULTS.md, session 42): the bound
removed from the engine (``_bounded_evidence`` returning the observed evidence) fails all three tests, as before
(bounded 0.133, 0.125 and 0.117, each above its limit and curtailed there).
"""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.simulations import load_simulation, reps

#: Replications per cell (unchanged in session 41: each is already the fewest at which the old rule fails; the
#: script's table runs 200-400).
THRESHOLD_REPS = reps(suite=30, full=30)
NI_REPS = reps(suite=40, full=40)
RETRY_REPS = reps(suite=60, full=60)


def simulation() -> ModuleType:
    """``benchmarks/infra_bounds_simulation.py`` as a module (loaded once)."""
    return load_simulation("infra_bounds_simulation")


@pytest.mark.simulation
@pytest.mark.parametrize(("cell", "reps"), [("threshold-1000x4", THRESHOLD_REPS), ("ni-200x4-18%", NI_REPS)])
def test_informative_infra_errors_do_not_pass_a_boundary_candidate(cell: str, reps: int) -> None:
    sim = simulation()
    (shape,) = [c for c in sim.CELLS if c.name == cell]
    found = sim.rates(shape, reps=reps, power_reps=0, seed=3030, curtail=True)
    print(f"{cell}: today {found.today:.3f}, bounded {found.bounded:.3f}, limit {found.limit:.3f} ({reps} reps; "
          f"curtailed: {found.curtailed})")  # fmt: skip
    assert found.bounded <= found.limit
    assert found.today > found.limit  # the old gate fails this cell: the test has teeth


@pytest.mark.simulation
def test_a_retry_is_not_counted_unless_the_policy_says_infra_errors_are_unrelated_to_the_outcome() -> None:
    # retry-fresh: a failing trial hit by an infra error gets a fresh draw (a second chance). The default
    # infra_retries = "bounded" keeps it within the limit; "counted" is liberal here (0.147 at 400 reps).
    sim = simulation()
    (shape,) = [c for c in sim.CELLS if c.name == "retry-fresh-200x1"]
    # today=False: only the rates asserted are computed (the gate before the bound is not; same draws, same rates)
    bounded = sim.rates(shape, reps=RETRY_REPS, power_reps=0, seed=3030, today=False, curtail=True)
    counted = sim.rates(
        shape, reps=RETRY_REPS, power_reps=0, seed=3030, infra_retries="counted", today=False, curtail=True
    )
    print(f"retry-fresh: bounded {bounded.bounded:.3f}, counted {counted.bounded:.3f}, limit {bounded.limit:.3f}")
    assert bounded.bounded <= bounded.limit
    assert counted.bounded > counted.limit  # counting the retries is what the default refuses: the test has teeth
