"""Type-I error under continuous monitoring, and the cases a sequential gate saves (issue 18).

Run ``.venv/bin/python benchmarks/sequential_simulation.py`` (about a minute on one core) to print
the two markdown tables recorded in docs/sequential.md ("Statistics") and benchmarks/RESULTS.md
("Sequential savings"); ``--reps`` and ``--seed`` change the Monte Carlo size and the seed.
``tests/sequential/test_simulation.py`` (slow-marked) runs the same code with fewer replications and
asserts the properties.

The design simulated is the one of docs/sequential.md: at most 200 cases, 3 trials per case,
batches of 20 cases (10 looks), rule alpha 0.05 split evenly between stopping for pass and for fail
(``alpha_pass = alpha_fail = 0.025``, one rule). A case's value is its pass rate over its 3 trials
(threshold rule) or the candidate's minus the baseline's (paired rule, in [-1, 1]).

The sequential gate is :func:`gatestats.sequential.confseq.log_eprocess` read at every checkpoint
(the same function :func:`gatestats.sequential.decide_rule` reads), vectorised over replications;
a run stops at the first checkpoint where either side crosses (both: fail). The contrast is the
fixed-size test *peeked at* after every batch with the same stopping rule: a one-sided 97.5% Wilson
bound on the mean case value with n = cases (threshold rule; the case as the unit), or a one-sided
97.5% normal bound on the mean paired difference (paired rule). "read once" is that fixed-size
test read only at 200 cases, as designed.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from gatestats.sequential.confseq import log_eprocess
from gatestats.sequential.design import SequentialMethod

MAX_CASES = 200
BATCH = 20
TRIALS = 3
ALPHA_PASS = ALPHA_FAIL = 0.025
CHECKPOINTS = np.arange(BATCH, MAX_CASES + 1, BATCH)
METHODS: tuple[SequentialMethod, ...] = ("betting", "empirical_bernstein", "hoeffding")
Z = float(stats.norm.ppf(1 - ALPHA_PASS))

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Scenario:
    """One data-generating process: ``draw(rng, reps)`` gives case values (reps, MAX_CASES)."""

    name: str
    rule: str  # "threshold" or "paired"
    boundary: float
    draw: Callable[[np.random.Generator, int], Array]
    #: Where the rule is read (in units of the values: cases, or groups when the group is the unit).
    checkpoints: NDArray[np.int64] = field(default_factory=lambda: CHECKPOINTS)


def _rates(rng: np.random.Generator, p: Array) -> Array:
    """The pass rate of TRIALS Bernoulli(p) trials per case."""
    return rng.binomial(TRIALS, np.clip(p, 0, 1)) / TRIALS


def _beta_cases(rng: np.random.Generator, reps: int, mean: float, kappa: float) -> Array:
    return rng.beta(mean * kappa, (1 - mean) * kappa, size=(reps, MAX_CASES))


def _clustered(rng: np.random.Generator, reps: int, mean: float, size: int = 5) -> Array:
    """Groups of ``size`` cases share a group level ~ Beta(2 mean, 2 (1-mean)); cases ~ Beta(4 g, 4 (1-g)).

    The mean case probability is ``mean``; the cases are shuffled (the controller's random order).
    """
    groups = np.clip(rng.beta(2 * mean, 2 * (1 - mean), size=(reps, MAX_CASES // size)), 1e-9, 1 - 1e-9)
    g = np.repeat(groups, size, axis=1)
    p = rng.beta(4 * g, 4 * (1 - g))
    return np.asarray(rng.permuted(p, axis=1))


def _groups(rng: np.random.Generator, reps: int, mean: float, size: int = 5) -> Array:
    """Case probabilities of :func:`_clustered`, kept in their groups: shape (reps, groups, size)."""
    groups = np.clip(rng.beta(2 * mean, 2 * (1 - mean), size=(reps, MAX_CASES // size, 1)), 1e-9, 1 - 1e-9)
    return np.asarray(rng.beta(4 * groups, 4 * (1 - groups), size=(reps, MAX_CASES // size, size)))


def _paired(rng: np.random.Generator, base: Array, cand: Array) -> Array:
    return _rates(rng, cand) - _rates(rng, base)


def _type1_scenarios() -> list[Scenario]:
    def concentrated(rng: np.random.Generator, reps: int) -> Array:
        return _rates(rng, (rng.random((reps, MAX_CASES)) < 0.8).astype(float))

    def margin_uniform(rng: np.random.Generator, reps: int) -> Array:
        base = 0.05 + 0.95 * _beta_cases(rng, reps, 0.8, 2)
        return _paired(rng, base, base - 0.05)

    def margin_concentrated(rng: np.random.Generator, reps: int) -> Array:
        base = 0.5 + 0.5 * _beta_cases(rng, reps, 0.8, 2)
        hit = rng.random((reps, MAX_CASES)) < 0.1
        return _paired(rng, base, base - 0.5 * hit)

    def margin_clustered(rng: np.random.Generator, reps: int) -> Array:
        base = 0.5 + 0.5 * _clustered(rng, reps, 0.8)
        hit = np.repeat(rng.random((reps, MAX_CASES // 5)) < 0.1, 5, axis=1)
        order = rng.permuted(np.tile(np.arange(MAX_CASES), (reps, 1)), axis=1)
        hit = np.take_along_axis(hit, order, axis=1)
        return _paired(rng, base, base - 0.5 * hit)

    def threshold_group_unit(rng: np.random.Generator, reps: int) -> Array:
        return np.asarray(_rates(rng, _groups(rng, reps, 0.8)).mean(axis=2))

    def margin_group_unit(rng: np.random.Generator, reps: int) -> Array:
        base = 0.5 + 0.5 * _groups(rng, reps, 0.8)
        hit = rng.random((reps, MAX_CASES // 5, 1)) < 0.1
        return np.asarray(_paired(rng, base, base - 0.5 * hit).mean(axis=2))

    def aa(rng: np.random.Generator, reps: int) -> Array:
        base = _beta_cases(rng, reps, 0.8, 2)
        return _paired(rng, base, base)

    return [
        Scenario(
            "threshold 0.80, every case p = 0.80",
            "threshold",
            0.8,
            lambda rng, reps: _rates(rng, np.full((reps, MAX_CASES), 0.8)),
        ),
        Scenario(
            "threshold 0.80, cases p ~ Beta(1.6, 0.4)",
            "threshold",
            0.8,
            lambda rng, reps: _rates(rng, _beta_cases(rng, reps, 0.8, 2)),
        ),
        Scenario("threshold 0.80, 20% of cases always fail, rest always pass", "threshold", 0.8, concentrated),
        Scenario(
            "threshold 0.80, clustered (40 groups of 5)",
            "threshold",
            0.8,
            lambda rng, reps: _rates(rng, _clustered(rng, reps, 0.8)),
        ),
        Scenario(
            "threshold 0.80, clustered, the group as the unit (group means, 4 groups a batch)",
            "threshold",
            0.8,
            threshold_group_unit,
            np.arange(4, 41, 4),
        ),
        Scenario(
            "threshold 0.97, every case p = 0.97",
            "threshold",
            0.97,
            lambda rng, reps: _rates(rng, np.full((reps, MAX_CASES), 0.97)),
        ),
        Scenario(
            "threshold 0.03, every case p = 0.03",
            "threshold",
            0.03,
            lambda rng, reps: _rates(rng, np.full((reps, MAX_CASES), 0.03)),
        ),
        Scenario("paired A/A, superiority (margin 0)", "paired", 0.0, aa),
        Scenario("paired, 5-point regression at margin 0.05, every case", "paired", -0.05, margin_uniform),
        Scenario("paired, at margin 0.05, 10% of cases lose 50 points", "paired", -0.05, margin_concentrated),
        Scenario("paired, at margin 0.05, clustered: 10% of groups lose 50 points", "paired", -0.05, margin_clustered),
        Scenario(
            "paired, at margin 0.05, clustered, the group as the unit",
            "paired",
            -0.05,
            margin_group_unit,
            np.arange(4, 41, 4),
        ),
    ]


def _to_unit(values: Array, rule: str, boundary: float) -> tuple[Array, float]:
    if rule == "threshold":
        return values, boundary
    return (values + 1) / 2, (boundary + 1) / 2


def sequential_outcome(
    values: Array, rule: str, boundary: float, method: SequentialMethod, checkpoints: NDArray[np.int64] = CHECKPOINTS
) -> tuple[Array, Array]:
    """Per replication: +1 pass, -1 fail, 0 undecided; and the cases at the stop (the last checkpoint if none)."""
    y, m = _to_unit(values, rule, boundary)
    at = checkpoints - 1
    up = log_eprocess(y, m, alpha=ALPHA_PASS, method=method)[:, at] >= math.log(1 / ALPHA_PASS)
    down = log_eprocess(1 - y, 1 - m, alpha=ALPHA_FAIL, method=method)[:, at] >= math.log(1 / ALPHA_FAIL)
    return _first(up, down, checkpoints)


def _first(up: NDArray[np.bool_], down: NDArray[np.bool_], checkpoints: NDArray[np.int64]) -> tuple[Array, Array]:
    any_cross = up | down
    decided = any_cross.any(axis=1)
    first = np.argmax(any_cross, axis=1)
    rows = np.arange(up.shape[0])
    status = np.where(decided, np.where(down[rows, first], -1.0, 1.0), 0.0)
    cases = np.where(decided, checkpoints[first], checkpoints[-1]).astype(float)
    return status, cases


def _fixed_bounds(values: Array, rule: str, n: Array) -> tuple[Array, Array]:
    """One-sided 97.5% lower and upper bounds of the fixed-size test after n cases (columns)."""
    csum = np.cumsum(values, axis=1)[:, n - 1]
    mean = csum / n
    if rule == "threshold":
        centre = (mean + Z**2 / (2 * n)) / (1 + Z**2 / n)
        half = Z / (1 + Z**2 / n) * np.sqrt(mean * (1 - mean) / n + Z**2 / (4 * n**2))
        return centre - half, centre + half
    sq = np.cumsum(values**2, axis=1)[:, n - 1]
    sd = np.sqrt(np.maximum(sq / n - mean**2, 0) * n / (n - 1))
    return mean - Z * sd / np.sqrt(n), mean + Z * sd / np.sqrt(n)


def peeking_outcome(
    values: Array, rule: str, boundary: float, checkpoints: NDArray[np.int64] = CHECKPOINTS
) -> tuple[Array, Array]:
    """The fixed-size test read after every batch with the same stopping rule."""
    lower, upper = _fixed_bounds(values, rule, checkpoints)
    return _first(lower > boundary, upper < boundary, checkpoints)


def once_outcome(values: Array, rule: str, boundary: float) -> Array:
    """The fixed-size test read once, after all the values: +1 pass, -1 fail, 0 neither."""
    lower, upper = _fixed_bounds(values, rule, np.array([values.shape[1]]))
    return np.where(lower[:, 0] > boundary, 1.0, np.where(upper[:, 0] < boundary, -1.0, 0.0))


def type1_table(reps: int, seed: int) -> list[dict[str, float | str]]:
    """False-pass rates at the H0 boundary, sequential (each method) vs peeking vs read once."""
    rows: list[dict[str, float | str]] = []
    for i, sc in enumerate(_type1_scenarios()):
        values = sc.draw(np.random.default_rng([seed, i]), reps)
        row: dict[str, float | str] = {"scenario": sc.name}
        for method in METHODS:
            outcome = sequential_outcome(values, sc.rule, sc.boundary, method, sc.checkpoints)[0]
            row[method] = float(np.mean(outcome == 1))
        row["peeking"] = float(np.mean(peeking_outcome(values, sc.rule, sc.boundary, sc.checkpoints)[0] == 1))
        row["once"] = float(np.mean(once_outcome(values, sc.rule, sc.boundary) == 1))
        rows.append(row)
    return rows


Draw = Callable[[np.random.Generator, int, int], Array]


def _savings_scenarios() -> list[tuple[str, str, float, str, Draw]]:
    """(effect, rule, boundary, right answer, draw) for the savings table."""
    mu = 2 / 2.8  # mean of the baseline's Beta(2, 0.8) case probabilities

    def shifted(delta: float) -> Draw:
        def draw(rng: np.random.Generator, reps: int, n: int) -> Array:
            base = rng.beta(2, 0.8, size=(reps, n))
            # every case moves in proportion: the mean moves by exactly delta, probabilities stay in [0, 1]
            cand = base * (1 + delta / mu) if delta < 0 else 1 - (1 - base) * (1 - delta / (1 - mu))
            return _paired(rng, base, cand)

        return draw

    def level(p: float) -> Draw:
        return lambda rng, reps, n: _rates(rng, rng.beta(2 * p, 2 * (1 - p), size=(reps, n)))

    return [
        ("paired non-inferiority (margin 0.05): 10-point regression", "paired", -0.05, "fail", shifted(-0.10)),
        ("paired non-inferiority (margin 0.05): honest 5-point improvement", "paired", -0.05, "pass", shifted(0.05)),
        ("paired non-inferiority (margin 0.05): no change", "paired", -0.05, "pass", shifted(0.0)),
        ("threshold 0.70: true 0.60 (10-point shortfall)", "threshold", 0.7, "fail", level(0.6)),
        ("threshold 0.70: true 0.75 (5 points above)", "threshold", 0.7, "pass", level(0.75)),
        ("threshold 0.70: true 0.70 (no margin)", "threshold", 0.7, "neither", level(0.7)),
    ]


def savings_table(reps: int, seed: int, max_cases: int = MAX_CASES) -> list[dict[str, float | str]]:
    """Expected cases to a decision and the decisions, per method, against the fixed ``max_cases``."""
    rows: list[dict[str, float | str]] = []
    checkpoints = np.arange(BATCH, max_cases + 1, BATCH)
    for i, (effect, rule, boundary, right, draw) in enumerate(_savings_scenarios()):
        values = draw(np.random.default_rng([seed, 100 + i, max_cases]), reps, max_cases)
        once = once_outcome(values, rule, boundary)
        for method in METHODS:
            status, cases = sequential_outcome(values, rule, boundary, method, checkpoints)
            rows.append(
                {
                    "max_cases": max_cases,
                    "effect": effect,
                    "right": right,
                    "method": method,
                    "mean_cases": float(cases.mean()),
                    "median_cases": float(np.median(cases)),
                    "pass": float(np.mean(status == 1)),
                    "fail": float(np.mean(status == -1)),
                    "undecided": float(np.mean(status == 0)),
                    "fixed_pass": float(np.mean(once == 1)),
                    "fixed_fail": float(np.mean(once == -1)),
                }
            )
    return rows


def _se(p: float, reps: int) -> float:
    return math.sqrt(max(p, 1e-4) * (1 - p) / reps)


def format_type1(rows: list[dict[str, float | str]], reps: int) -> str:
    head = (
        "| H0 boundary | betting | empirical Bernstein | Hoeffding | fixed-size test peeked at 10 looks "
        "| fixed-size test read once |"
    )
    lines = [head, "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        cells = [f"{float(r[k]):.4f}" for k in (*METHODS, "peeking", "once")]
        lines.append(f"| {r['scenario']} | " + " | ".join(cells) + " |")
    se = _se(ALPHA_PASS, reps)
    lines.append("")
    lines.append(
        f"False-pass rate (nominal alpha_pass = {ALPHA_PASS}); {reps} replications per row, Monte Carlo "
        f"SE {se:.4f} at 0.025 (3 SE = {3 * se:.4f})."
    )
    return "\n".join(lines)


def format_savings(rows: list[dict[str, float | str]], reps: int) -> str:
    """One line per design and truth: the fixed-size test at all cases against each sequential method."""
    lines = [
        "| max cases | truth | fixed-size, all cases: pass / fail | betting: mean cases (saved) | betting: pass / fail "
        "/ undecided | empirical Bernstein: mean cases (saved) | EB: pass / fail / undecided | Hoeffding: mean cases |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    groups: dict[tuple[float, str], dict[str, dict[str, float | str]]] = {}
    for r in rows:
        groups.setdefault((float(r["max_cases"]), str(r["effect"])), {})[str(r["method"])] = r
    for (most, effect), by in groups.items():
        b, e, h = by["betting"], by["empirical_bernstein"], by["hoeffding"]

        def cases(r: dict[str, float | str], most: float = most) -> str:
            return f"{float(r['mean_cases']):.0f} ({1 - float(r['mean_cases']) / most:.0%})"

        def shares(r: dict[str, float | str]) -> str:
            return f"{float(r['pass']):.3f} / {float(r['fail']):.3f} / {float(r['undecided']):.3f}"

        lines.append(
            f"| {most:.0f} | {effect} | {float(b['fixed_pass']):.3f} / {float(b['fixed_fail']):.3f} | {cases(b)} | "
            f"{shares(b)} | {cases(e)} | {shares(e)} | {float(h['mean_cases']):.0f} |"
        )
    lines.append("")
    lines.append(f"{reps} replications per truth; cases per system (trials = 3 x cases on each side).")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20_000, help="replications per type-I row")
    parser.add_argument("--savings-reps", type=int, default=4_000, help="replications per savings row")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--max-cases", type=int, nargs="+", default=[200, 600], help="fixed-size designs compared")
    args = parser.parse_args()
    start = time.perf_counter()
    print(format_type1(type1_table(args.reps, args.seed), args.reps))
    print()
    rows = [row for most in args.max_cases for row in savings_table(args.savings_reps, args.seed, most)]
    print(format_savings(rows, args.savings_reps))
    print(f"\n(seed {args.seed}; {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
