"""Family-wise coverage of the simultaneous intervals of :mod:`gatestats.paired.simultaneous` (issue 26, item 3).

``m`` systems run the same ``n`` cases, one trial each; every pair is compared
(:func:`gatestats.paired.compare_many`, ``all_pairs``, Holm) and each replication counts whether
**all** ``m (m - 1) / 2`` intervals cover their true difference at once, for

* ``holm``: the Strassburger-Bretz intervals compatible with Holm (split into two one-sided
  families at alpha / 2; a rejected side's bound is 0 read as "beyond 0", so it covers only a
  difference strictly beyond 0);
* ``bonferroni``: each interval at ``1 - alpha / m_pairs``;
* ``unadjusted``: the per-comparison 95% intervals (for contrast: they are not simultaneous);
* ``ranks``: whether every rank interval of ``gatestats rank`` holds, i.e. no adjusted pairwise
  decision (Holm on the mid-p tests) declares a difference that is absent or reversed.

Cases are drawn with replacement from a population of case types; a type has a pass probability per
system and is either *shared* (one uniform draw decides every system: outcomes as correlated as the
probabilities allow, as on SWE-bench where most instances are solved by all or by none) or
*independent* (one draw per system). The true difference of a pair is the population mean of the
difference of its probabilities. Shapes a release meets:

``all_equal``        every system the same (q on a grid 0.05..0.95, independent draws): every difference 0.
``few_differ``       as ``all_equal`` with half the types shared, two systems + 0.15 and one - 0.10.
``near_0_and_1``     q in {0.02, 0.98}; one system + 0.02 on the q = 0.02 types.
``few_cases``        30 cases; systems spread evenly over + 0 .. + 0.2.
``concentrated``     95% of types shared (no discordance); on the other 5% two systems pass with 0.9
                     and the rest with 0.1: differences of 0.04 that live in a few cases.

Run (seeded; the full size takes about 20 minutes on a shared 2-core machine)::

    nice -n 10 .venv/bin/python benchmarks/simultaneous_coverage.py --reps-5 1000 --reps-25 200
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from gatestats.paired import compare_many
from gatestats.paired.simultaneous import SimultaneousInterval, simultaneous_intervals

ALPHA = 0.05
SHAPES = ("all_equal", "few_differ", "near_0_and_1", "few_cases", "concentrated")


@dataclass(frozen=True, slots=True, kw_only=True)
class Population:
    """Case types: the pass probability of each system (``p[s, t]``), whether a type is shared, cases drawn."""

    p: npt.NDArray[np.float64]
    shared: npt.NDArray[np.bool_]
    n_cases: int

    def truth(self) -> npt.NDArray[np.float64]:
        """The true pass rate of each system (equal weights on the types)."""
        return np.asarray(self.p.mean(axis=1))


def population(shape: str, m: int) -> Population:
    """The population of case types of ``shape`` for ``m`` systems."""
    grid = np.linspace(0.05, 0.95, 19)
    if shape == "all_equal":
        return Population(p=np.tile(grid, (m, 1)), shared=np.zeros(grid.size, bool), n_cases=500)
    if shape == "few_differ":
        shift = np.zeros(m)
        shift[:2], shift[2] = 0.15, -0.10
        p = np.clip(grid[None, :] + shift[:, None], 0, 1)
        return Population(p=p, shared=np.arange(grid.size) % 2 == 0, n_cases=500)
    if shape == "near_0_and_1":
        q = np.array([0.02, 0.98])
        p = np.tile(q, (m, 1))
        p[0, 0] += 0.02
        return Population(p=p, shared=np.zeros(2, bool), n_cases=500)
    if shape == "few_cases":
        p = np.clip(grid[None, :] + np.linspace(0, 0.2, m)[:, None], 0, 1)
        return Population(p=p, shared=np.zeros(grid.size, bool), n_cases=30)
    if shape == "concentrated":
        q = np.concatenate([np.tile(grid, 1), [0.1]])  # 19 shared types and 1 split type (5%)
        p = np.tile(q, (m, 1))
        p[:2, -1] = 0.9
        shared = np.ones(q.size, bool)
        shared[-1] = False
        return Population(p=p, shared=shared, n_cases=500)
    msg = f"unknown shape {shape!r} (one of {SHAPES})"
    raise ValueError(msg)


def draw(pop: Population, rng: np.random.Generator) -> pl.DataFrame:
    """One replication's run records: every system on the same ``n_cases`` drawn cases, one trial each."""
    m, n = pop.p.shape[0], pop.n_cases
    types = rng.integers(0, pop.p.shape[1], n)
    shared_u = rng.uniform(size=n)
    own_u = rng.uniform(size=(m, n))
    u = np.where(pop.shared[types][None, :], shared_u[None, :], own_u)
    passed = u < pop.p[:, types]
    systems = np.repeat([f"s{s:02d}" for s in range(m)], n)
    cases = np.tile([f"c{i}" for i in range(n)], m)
    return pl.DataFrame(
        {
            "system": systems,
            "case_id": cases,
            "case_version": pl.Series([None] * (m * n), dtype=pl.String),
            "case_group": pl.Series([None] * (m * n), dtype=pl.String),
            "trial": np.zeros(m * n, np.int64),
            "attempt": np.zeros(m * n, np.int64),
            "outcome": np.where(passed.ravel(), "passed", "failed"),
        }
    )


def _covers(x: SimultaneousInterval, delta: float) -> bool:
    """Whether ``x`` covers ``delta`` (a Holm bound of 0 on a rejected side excludes 0 itself)."""
    if x.ci_low is None or x.ci_high is None:
        return True  # no interval claims nothing
    low_ok = delta > x.ci_low if (x.open_at_zero and x.decision == "candidate better") else delta >= x.ci_low
    high_ok = delta < x.ci_high if (x.open_at_zero and x.decision == "baseline better") else delta <= x.ci_high
    return low_ok and high_ok


def replicate(pop: Population, rng: np.random.Generator) -> dict[str, bool]:
    """One replication: whether each kind of interval covers every pair's difference at once."""
    truth = pop.truth()
    result = compare_many(draw(pop, rng), correction="holm")
    deltas = [truth[int(x.candidate[1:])] - truth[int(x.baseline[1:])] for x in result.comparisons]
    bonferroni = simultaneous_intervals(result.comparisons, method="bonferroni")
    covered: dict[str, Callable[[int], bool]] = {
        "holm": lambda i: _covers(result.simultaneous[i], deltas[i]),
        "bonferroni": lambda i: _covers(bonferroni[i], deltas[i]),
        "unadjusted": lambda i: (
            result.comparisons[i].diff_ci_low is None
            or float(result.comparisons[i].diff_ci_low or 0)
            <= deltas[i]
            <= float(result.comparisons[i].diff_ci_high or 0)
        ),
    }
    covered["ranks"] = lambda i: _decision_holds(result.decisions[i], deltas[i])
    return {name: all(f(i) for i in range(len(deltas))) for name, f in covered.items()}


def _decision_holds(decision: str, delta: float) -> bool:
    """Whether an adjusted pairwise decision is true of the difference ``delta`` (candidate - baseline)."""
    if decision == "candidate better":
        return delta > 0
    if decision == "baseline better":
        return delta < 0
    return True


def coverage(shape: str, m: int, reps: int, seed: int) -> dict[str, float]:
    """Family-wise coverage of each kind of interval over ``reps`` replications (seeded)."""
    rng = np.random.default_rng([seed, m, SHAPES.index(shape)])
    pop = population(shape, m)
    counts = {"holm": 0, "bonferroni": 0, "unadjusted": 0, "ranks": 0}
    for _ in range(reps):
        for name, ok in replicate(pop, rng).items():
            counts[name] += ok
    return {name: c / reps for name, c in counts.items()}


def main() -> None:
    """Print the coverage table (Markdown) for 5 and 25 systems."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps-5", type=int, default=1000)
    parser.add_argument("--reps-25", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--systems", default="5,25", help="comma-separated numbers of systems")
    args = parser.parse_args()
    print(f"seed {args.seed}, alpha {ALPHA}; coverage of all pairs at once (SE in brackets)\n")
    print("| systems | shape | reps | holm | bonferroni | unadjusted | ranks | 1 - alpha - 2 SE |")
    print("|---|---|---|---|---|---|---|---|")
    sizes = [int(x) for x in args.systems.split(",")]
    for m, reps in ((m, args.reps_5 if m == 5 else args.reps_25) for m in sizes):
        for shape in SHAPES:
            start = time.perf_counter()
            c = coverage(shape, m, reps, args.seed)
            se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
            row = " | ".join(f"{c[k]:.3f}" for k in ("holm", "bonferroni", "unadjusted", "ranks"))
            took = time.perf_counter() - start
            print(f"| {m} | {shape} | {reps} | {row} | {1 - ALPHA - 2 * se:.3f} |  <!-- {took:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
