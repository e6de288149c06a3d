"""Coverage simulation of the cost intervals (figures recorded in docs/cost.md).

Run ``python -m tests.cost.cost_simulation`` from the repository root to print the tables of
docs/cost.md (2,000 replications per cell, 2,000 resamples each; a few minutes). The slow test
(tests/cost/test_simulation.py) re-checks a subset with fewer replications.

Every scenario draws cases (or clusters of cases) from a generative model of trials: per case a
pass probability and a cost scale, trials with attempt costs, retries (attempt 1) after a failure
or an infrastructure error, and human review time priced at 60 USD/h. The true value is the
population ratio E[spend per case] / E[accepted per case] (and the ratio of two such ratios for
the paired statistic), computed once from 2,000,000 simulated cases (400,000 clusters). The
intervals come from the engine used by :func:`gatestats.cost.cost_per_accepted` and
:func:`gatestats.cost.cost_ratio` (``ratio_bootstrap`` + ``bootstrap_interval``); an interval that
the public function would refuse for unboundedness or an undefined BCa is not offered: coverage is
the share of offered intervals that cover, next to the share offered. Below the minimum number of
cases the public functions refuse every interval; the tables show what the interval would do there.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gatestats.cost._bootstrap import (
    MIN_UNITS_INTERVAL,
    MIN_UNITS_RATIO,
    BootstrapKind,
    RatioBootstrap,
    bootstrap_interval,
    cpa_statistic,
    paired_ratio_statistic,
    ratio_bootstrap,
)

Array = npt.NDArray[np.float64]
Generator = Callable[[np.random.Generator, int], Array]

CPA_N = (10, 20, 30, 50, 100, 200, 400)
RATIO_N = (10, 20, 30, 50, 100, 200)
REVIEW_RATE = 60.0


def _expit(x: Array) -> Array:
    out: Array = 1 / (1 + np.exp(-x))
    return out


def _trials(
    rng: np.random.Generator, p: Array, scale: Array, *, trials: int, retry: float, review: float, sd: float = 0.5
) -> tuple[Array, Array]:
    """Spend and accepted outcomes per case: ``trials`` trials, a retry after a failure with
    probability ``retry`` (its spend counted, its outcome final), review on a share ``review``."""
    n = p.size
    spend, accepted = np.zeros(n), np.zeros(n)
    for _ in range(trials):
        infra = rng.random(n) < 0.05  # an infra-error attempt first: paid for, then retried
        spend += infra * scale * rng.lognormal(-1.0, sd, n)
        spend += scale * rng.lognormal(0.0, sd, n)
        ok = rng.random(n) < p
        again = ~ok & (rng.random(n) < retry)
        spend += again * scale * rng.lognormal(0.0, sd, n)
        ok |= again & (rng.random(n) < p)
        spend += (rng.random(n) < review) * rng.exponential(0.1, n) * REVIEW_RATE
        accepted += ok
    return spend, accepted


def homogeneous(rng: np.random.Generator, n: int) -> Array:
    """One trial per case, pass probability 0.7, lognormal(0, 0.5) attempt cost, no review."""
    y, a = _trials(rng, np.full(n, 0.7), np.ones(n), trials=1, retry=0.0, review=0.0)
    return np.stack([y, a], axis=1)


def heterogeneous(rng: np.random.Generator, n: int) -> Array:
    """Three trials, p ~ Beta(2, 2), case cost scale lognormal(0, 0.8), retries, review on 30%."""
    y, a = _trials(rng, rng.beta(2, 2, n), rng.lognormal(0, 0.8, n), trials=3, retry=0.5, review=0.3)
    return np.stack([y, a], axis=1)


def low_pass(rng: np.random.Generator, n: int) -> Array:
    """One trial, mean pass rate ~0.2, hard cases dearer (heavy tail: cost sd 1.2 on the log scale)."""
    d = rng.normal(0, 1, n)
    y, a = _trials(rng, _expit(-1.8 - 1.2 * d), np.exp(0.8 * d), trials=1, retry=0.3, review=0.1, sd=1.2)
    return np.stack([y, a], axis=1)


def clustered(rng: np.random.Generator, n: int) -> Array:
    """``n`` clusters of 5 cases sharing p ~ Beta(1.5, 1.5) and a cost scale (the unit is the cluster)."""
    p = np.repeat(rng.beta(1.5, 1.5, n), 5)
    scale = np.repeat(rng.lognormal(0, 0.7, n), 5)
    y, a = _trials(rng, p, scale, trials=2, retry=0.3, review=0.2)
    return np.stack([y.reshape(n, 5).sum(axis=1), a.reshape(n, 5).sum(axis=1)], axis=1)


def _paired(rng: np.random.Generator, n: int, *, a_b: float, a_c: float, k_c: float, sd: float) -> Array:
    d = rng.normal(0, 1, n)
    scale = np.exp(sd * d)
    y_b, acc_b = _trials(rng, _expit(a_b - d), scale, trials=2, retry=0.5, review=0.1)
    y_c, acc_c = _trials(rng, _expit(a_c - d), k_c * scale, trials=2, retry=0.5, review=0.1)
    return np.stack([y_b, acc_b, y_c, acc_c], axis=1)


def similar(rng: np.random.Generator, n: int) -> Array:
    """Same pass rate (~0.65), candidate attempts 20% dearer; shared case difficulty and cost."""
    return _paired(rng, n, a_b=0.8, a_c=0.8, k_c=1.2, sd=0.5)


def better_dearer(rng: np.random.Generator, n: int) -> Array:
    """Candidate passes more (~0.65 vs 0.5) at 1.5x the attempt cost; costs vary more."""
    return _paired(rng, n, a_b=0.0, a_c=0.8, k_c=1.5, sd=0.8)


def low_pass_paired(rng: np.random.Generator, n: int) -> Array:
    """Both rarely pass (~0.2 and ~0.25), same attempt cost, strongly varying case cost."""
    return _paired(rng, n, a_b=-1.5, a_c=-1.2, k_c=1.0, sd=1.0)


CPA_SCENARIOS: dict[str, Generator] = {
    "homogeneous": homogeneous,
    "heterogeneous": heterogeneous,
    "low_pass": low_pass,
    "clustered": clustered,
}
RATIO_SCENARIOS: dict[str, Generator] = {
    "similar": similar,
    "better_dearer": better_dearer,
    "low_pass": low_pass_paired,
}


@functools.cache
def true_value(name: str, paired: bool) -> float:
    """Population value of a scenario, from one large simulated sample (fixed seed)."""
    generate = (RATIO_SCENARIOS if paired else CPA_SCENARIOS)[name]
    size = 400_000 if name == "clustered" else 2_000_000
    total = generate(np.random.default_rng(20240501), size).sum(axis=0)
    stat = paired_ratio_statistic if paired else cpa_statistic
    return float(stat(total))


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """Results of one (scenario, n) cell for one interval method."""

    coverage: float  # share of the intervals given that covered the true value
    offered: float  # share of replications with an interval (bounded, BCa defined)
    miss_low: float  # true value below the interval
    miss_high: float  # true value above the interval
    size_within: float  # paired only: share with p_within <= 0.05 at limit = true ratio
    size_above: float  # paired only: share with p_above <= 0.05 at limit = true ratio


def _cell(boots: list[RatioBootstrap], truth: float, kind: BootstrapKind, paired: bool) -> Cell:
    cover = offered = low = high = within = above = 0
    minimum = MIN_UNITS_RATIO if paired else MIN_UNITS_INTERVAL
    for boot in boots:
        interval = bootstrap_interval(
            boot,
            confidence_level=0.95,
            kind=kind,
            seed=0,
            unit="cases",
            infinite_means="",
            positive=paired,
            min_units=minimum,
        )
        if paired and np.isfinite(boot.estimate) and boot.estimate > 0:
            p = boot.pvalues(truth)
            within += p[0] <= 0.05
            above += p[1] <= 0.05
        if interval.ci_low is None or interval.ci_high is None:
            if boot.n_units >= minimum or interval.reason is None or "at least" not in interval.reason:
                continue
            # below the minimum the public function refuses; measure what the interval would do
            bounds = boot.bounds(0.95, kind)
            if bounds is None or not (np.isfinite(bounds[0]) and np.isfinite(bounds[1])):
                continue
            if paired and bounds[0] <= 0:
                continue
            lo, hi = bounds
        else:
            lo, hi = interval.ci_low, interval.ci_high
        offered += 1
        cover += lo <= truth <= hi
        low += truth < lo
        high += truth > hi
    reps = len(boots)
    return Cell(
        coverage=cover / offered if offered else float("nan"),
        offered=offered / reps,
        miss_low=low / reps,
        miss_high=high / reps,
        size_within=within / reps,
        size_above=above / reps,
    )


def simulate(
    name: str, n: int, *, paired: bool, reps: int, n_resamples: int, seed: int = 1
) -> dict[BootstrapKind, Cell]:
    """Coverage of the BCa and percentile intervals in one cell (same replications for both)."""
    generate = (RATIO_SCENARIOS if paired else CPA_SCENARIOS)[name]
    stat = paired_ratio_statistic if paired else cpa_statistic
    rng = np.random.default_rng([seed, n, len(name)])
    boots = [ratio_bootstrap(generate(rng, n), stat, n_resamples=n_resamples, rng=rng) for _ in range(reps)]
    truth = true_value(name, paired)
    return {kind: _cell(boots, truth, kind, paired) for kind in ("bca", "percentile")}


def main(reps: int = 2000, n_resamples: int = 2000) -> None:
    """Print the markdown tables of docs/cost.md."""
    print(f"Cost per accepted outcome: coverage of nominal 95% ({reps} replications, {n_resamples} resamples)\n")
    print("| scenario | true CPA | cases | BCa | percentile | BCa miss low/high | offered |")
    print("|---|---|---|---|---|---|---|")
    for name in CPA_SCENARIOS:
        for n in CPA_N:
            cells = simulate(name, n, paired=False, reps=reps, n_resamples=n_resamples)
            b, p = cells["bca"], cells["percentile"]
            print(
                f"| {name} | {true_value(name, False):.3f} | {n} | {b.coverage:.3f} | {p.coverage:.3f} | "
                f"{b.miss_low:.3f}/{b.miss_high:.3f} | {b.offered:.3f} |",
                flush=True,
            )
    print(f"\nPaired cost ratio: coverage of nominal 95% and one-sided size at 5% ({reps} replications)\n")
    print("| scenario | true ratio | cases | percentile | BCa | p_within size | p_above size | offered |")
    print("|---|---|---|---|---|---|---|---|")
    for name in RATIO_SCENARIOS:
        for n in RATIO_N:
            cells = simulate(name, n, paired=True, reps=reps, n_resamples=n_resamples)
            b, p = cells["bca"], cells["percentile"]
            print(
                f"| {name} | {true_value(name, True):.3f} | {n} | {p.coverage:.3f} | {b.coverage:.3f} | "
                f"{p.size_within:.3f} | {p.size_above:.3f} | {p.offered:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
