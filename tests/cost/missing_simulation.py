"""Coverage of the bounds interval for missing costs, against the complete-case interval.

``python -m tests.cost.missing_simulation`` prints the table of docs/cost.md ("Missing costs:
coverage"); ``tests/cost/test_missing_simulation.py`` re-checks a smaller run.

Each case runs ``TRIALS`` trials of one attempt. A case has a pass probability ``p ~ Beta(2, 2)``
and a chance ``q = 0.25 (1 - p)`` that an attempt runs into the turn limit (a failure). Scenarios:

- ``turn_limit`` (the τ-bench pattern, at the boundary of the identified set): an attempt at the
  turn limit costs exactly ``CAP`` and loses its cost record with probability 0.8; every other
  attempt costs ``CAP x Beta(2, 5)`` and keeps it. Every lost cost is the largest possible, so the
  true cost per accepted outcome *equals* the upper bound: the upper end of the interval is tested
  with no slack. The cap is stated (``CAP``, as ``--max-cost-per-attempt`` would).
- ``dear_lost`` (missingness rising smoothly with cost): every attempt costs ``CAP x Beta(2, 3)``
  (turn-limit attempts ``CAP x Beta(8, 2)``) and loses its cost with probability ``0.6 x
  (cost / CAP)^3``. The cap is the default: the largest observed cost per attempt.

The truth is the population ratio E[spend per case] / E[accepted per case], from 2,000,000 cases.
The bounds interval is :func:`gatestats.cost.missing.missing_costs` (union of the BCa intervals at
the two extreme imputations); the complete-case interval is the BCa interval of the attempts that
kept their cost (with their own accepted outcomes), i.e. what dropping the incomplete rows gives.
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from gatestats.cost.missing import BoundsRequest, missing_costs
from gatestats.cost.per_accepted import _RULE

CAP: Final = 1.0
TRIALS: Final = 2
SCENARIOS: Final = ("turn_limit", "dear_lost")
Arrays = dict[str, npt.NDArray[Any]]


def draw(scenario: str, n_cases: int, rng: np.random.Generator) -> Arrays:
    """Per attempt (cases x trials): cost, accepted, missing."""
    p = rng.beta(2.0, 2.0, size=(n_cases, 1))
    limit = rng.random((n_cases, TRIALS)) < 0.25 * (1 - p)
    accepted = ~limit & (rng.random((n_cases, TRIALS)) < p / (1 - 0.25 * (1 - p)))
    if scenario == "turn_limit":
        cost = np.where(limit, CAP, CAP * rng.beta(2.0, 5.0, size=(n_cases, TRIALS)))
        missing = limit & (rng.random((n_cases, TRIALS)) < 0.8)
    elif scenario == "dear_lost":
        cost = np.where(
            limit, CAP * rng.beta(8.0, 2.0, size=(n_cases, TRIALS)), CAP * rng.beta(2.0, 3.0, size=(n_cases, TRIALS))
        )
        missing = rng.random((n_cases, TRIALS)) < 0.6 * (cost / CAP) ** 3
    else:
        msg = f"unknown scenario {scenario!r}"
        raise ValueError(msg)
    return {"cost": cost, "accepted": accepted.astype(np.float64), "missing": missing}


@functools.cache
def truth(scenario: str, *, seed: int = 12345, n_cases: int = 2_000_000) -> float:
    """The population cost per accepted outcome (every cost counted), from ``n_cases`` simulated cases.

    Cached: the same float for the same arguments (a fixed seed), drawn once per process instead of once per
    cell (~0.4 CPU-s each; the test's two ``turn_limit`` cells share it).
    """
    data = draw(scenario, n_cases, np.random.default_rng(seed))
    return float(data["cost"].sum() / data["accepted"].sum())


def _row(data: Arrays) -> dict[str, Any]:
    known = ~data["missing"]
    return {
        "n_cost_unknown": int(data["missing"].sum()),
        "attempts": int(data["missing"].size),
        "attempt_spend": float(data["cost"][known].sum()),
        "max_spend": float(data["cost"][known].max()) if known.any() else None,
        "accepted": int(data["accepted"].sum()),
        "accepted_known": int(data["accepted"][known].sum()),
        "n_human_unknown": 0,
        "human_s": 0.0,
        "human_s_known": 0.0,
        "cost_unknown_ids": [],
        "clustered": False,
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """Coverage of one scenario and size."""

    scenario: str
    n_cases: int
    replications: int
    truth: float
    bounds_coverage: float
    bounds_offered: float
    bounds_miss_high: float
    complete_case_coverage: float
    complete_case_offered: float
    mean_missing_share: float

    @property
    def se(self) -> float:
        """Monte Carlo standard error of a coverage of 0.95 with these replications."""
        return math.sqrt(0.95 * 0.05 / self.replications)


def run_cell(
    scenario: str, n_cases: int, *, replications: int, seed: int, n_resamples: int = 2000, level: float = 0.95
) -> Cell:
    """Coverage of the bounds interval and of the complete-case interval in ``replications`` samples."""
    target = truth(scenario)
    rng = np.random.default_rng(seed)
    request = BoundsRequest(
        rule=_RULE,
        max_cost_per_attempt_usd=CAP if scenario == "turn_limit" else None,
        cap_source="given",
        review_rate=0.0,
        confidence_level=level,
        n_resamples=n_resamples,
        seed=seed,
    )
    covered = offered = miss_high = cc_covered = cc_offered = 0
    share = 0.0
    for rep in range(replications):
        data = draw(scenario, n_cases, rng)
        known = ~data["missing"]
        units = np.column_stack(
            [(data["cost"] * known).sum(axis=1), data["accepted"].sum(axis=1), data["missing"].sum(axis=1)]
        ).astype(np.float64)
        share += float(data["missing"].mean())
        result = missing_costs(_row(data), units, request=request, undefined=None)
        if result.ci_low is not None and result.ci_high is not None:
            offered += 1
            covered += result.ci_low <= target <= result.ci_high
            miss_high += target > result.ci_high
        cc_units = np.column_stack([units[:, 0], (data["accepted"] * known).sum(axis=1)])
        _, cc = _RULE.resample(
            cc_units, confidence_level=level, n_resamples=n_resamples, seed=seed + rep, clustered=False
        )
        if cc.ci_low is not None and cc.ci_high is not None:
            cc_offered += 1
            cc_covered += cc.ci_low <= target <= cc.ci_high
    return Cell(
        scenario=scenario,
        n_cases=n_cases,
        replications=replications,
        truth=target,
        bounds_coverage=covered / max(offered, 1),
        bounds_offered=offered / replications,
        bounds_miss_high=miss_high / max(offered, 1),
        complete_case_coverage=cc_covered / max(cc_offered, 1),
        complete_case_offered=cc_offered / replications,
        mean_missing_share=share / replications,
    )


def main(replications: int = 1000) -> None:
    """Print the coverage table of docs/cost.md."""
    print(
        "| scenario | true CPA | cases | share missing | bounds interval | miss high | offered | complete-case | offered |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for scenario in SCENARIOS:
        for n_cases in (50, 100, 300):
            c = run_cell(scenario, n_cases, replications=replications, seed=20261204 + n_cases)
            print(
                f"| {scenario} | {c.truth:.4f} | {n_cases} | {c.mean_missing_share:.3f} | {c.bounds_coverage:.3f} | "
                f"{c.bounds_miss_high:.3f} | {c.bounds_offered:.3f} | {c.complete_case_coverage:.3f} | "
                f"{c.complete_case_offered:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
