"""False rollbacks under continuous monitoring and the delay to a real rollback (issue 25).

Run ``.venv/bin/python benchmarks/monitor_simulation.py`` (the full run, 2,000 replications per cell;
``--quick`` for 200) to print the markdown table recorded in benchmarks/RESULTS.md ("Issue 25: rollback
triggers"); ``--reps`` and ``--seed`` change the Monte Carlo size and the seed.
``tests/sequential/test_monitor_simulation.py`` (slow-marked) runs the same code with fewer replications
and asserts the properties.

Every replication is one stream of N = 2,000 observations arriving in batches of varying size (uniform
5..200, the last cut at N), read after every batch. A trigger of :mod:`gatestats.sequential.monitor`
fires at the first observation where its e-value reaches 1/alpha; the rollback happens at the reading
that sees it (the end of that batch). Beside it, on the *same* streams, the naive monitor: a fixed-size
one-sided test at alpha read after every batch (exact binomial test for a rate, one-sample t test for a
mean), rolling back at the first reading where it rejects.

- Null cells: the truth exactly at the level (the boundary of the null): the share of streams rolled
  back by N is the false-rollback rate.
- Real drops: the accepted rate 10 points below its level; the escaped-defect rate doubled; the cost
  per accepted outcome 1.5 times the previous one; one unauthorised action at a uniform position: the
  share rolled back by N and the median observations read at the rollback.

The rate trigger's e-value rises only at an event of its tested side (docs/rollout.md), so it is
evaluated there only; :func:`gatestats.sequential.monitor.one_sided_log_mixture` is the function
:func:`gatestats.sequential.monitor.rate_trigger` calls, read here through
:func:`gatestats.sequential.monitor.one_sided_log_mixture_reaches` (whether it reaches 1/alpha: the same
booleans, the exact value computed only near the threshold).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from gatestats.sequential.confseq import log_eprocess
from gatestats.sequential.monitor import one_sided_log_mixture_reaches

N = 2000
ALPHA = 0.05
T_OPT = 500.0  # rate_trigger's default
BATCH_LOW, BATCH_HIGH = 5, 200
REVIEW_CAP = 60.0  # minutes
COST_CAP, C0, ACCEPTED = 5.0, 1.0, 0.6  # dollars per attempt, the previous CPA, the accepted rate
GOLD_CASES, GOLD_RATE, GATE_ALPHA, DELTA = 100, 0.8, 0.05, 0.1  # the vs_gate cells' golden set

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """One trigger and one truth: ``kind`` rate / mean / cpa / count."""

    name: str
    kind: str
    direction: str
    level: float
    truth: float
    null: bool
    #: The false-rollback guarantee at the null boundary (None: the method offers none).
    guarantee: float | None = ALPHA


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """Per replication: the observations read at the rollback (``N + 1``: none by N).

    ``once``: whether the same fixed-size test read once, at N, rejects; ``onset``: the observations
    before the change (none: from the start; the unauthorised action's position).
    """

    trigger: NDArray[np.int64]
    naive: NDArray[np.int64] | None
    once: NDArray[np.bool_] | None = None
    onset: NDArray[np.int64] | None = None


def _cell(name: str, kind: str, direction: str, level: float, truth: float, *, null: bool) -> Cell:
    return Cell(name=name, kind=kind, direction=direction, level=level, truth=truth, null=null)


def cells() -> list[Cell]:
    """The table's cells, in order."""
    out: list[Cell] = []
    for level in (0.01, 0.02, 0.5, 0.9, 0.98):
        out.append(_cell("rate above (escaped defects)", "rate", "above", level, level, null=True))
        out.append(_cell("rate below (accepted)", "rate", "below", level, level, null=True))
    out.append(_cell("review minutes above (cap 60)", "mean", "above", 15.0, 15.0, null=True))
    out.append(_cell("CPA above c0 (x = cost - c0 accepted)", "cpa", "above", 0.0, C0, null=True))
    for level in (0.5, 0.9, 0.98):
        out.append(_cell("accepted 10 points below", "rate", "below", level, level - 0.1, null=False))
    for level in (0.01, 0.02):
        out.append(_cell("escaped defects doubled", "rate", "above", level, 2 * level, null=False))
    out.append(_cell("CPA 1.5 x c0", "cpa", "above", 0.0, 1.5 * C0, null=False))
    out.append(_cell("one unauthorised action", "count", "above", 0.0, 1.0, null=False))
    vs_gate = "vs_gate: production δ below the golden truth, level = gate's"
    for what, kind, guarantee in (("lower bound", "bound", ALPHA + GATE_ALPHA), ("point estimate", "estimate", None)):
        name = f"{vs_gate} {what} − δ"
        truth = GOLD_RATE - DELTA
        out.append(
            Cell(
                name=name,
                kind=f"vs_gate_{kind}",
                direction="below",
                level=GOLD_RATE,
                truth=truth,
                null=True,
                guarantee=guarantee,
            )
        )
    return out


def batch_ends(rng: np.random.Generator) -> NDArray[np.int64]:
    """The number of observations read at each reading: batches of 5..200 up to N."""
    sizes = rng.integers(BATCH_LOW, BATCH_HIGH + 1, size=N // BATCH_LOW + 1)
    ends = np.cumsum(sizes)
    ends = ends[ends < N]
    return np.append(ends, N).astype(np.int64)


def _reading(ends: NDArray[np.int64], first: int | None) -> int:
    """Observations read at the reading that sees an event at 0-based index ``first`` (N + 1: none)."""
    if first is None:
        return N + 1
    return int(ends[np.searchsorted(ends, first + 1)])


def _first_rate_crossings(x: Array, cell: Cell, levels: Array | None = None) -> list[int | None]:
    """Per row, the 0-based index at which the rate trigger's e-value first reaches 1/alpha.

    ``levels``: one level per row (the vs_gate cells), else the cell's.
    """
    level = np.full(x.shape[0], cell.level) if levels is None else levels
    tested, p0 = (x, level) if cell.direction == "above" else (1 - x, 1 - level)
    s = np.cumsum(tested, axis=1)
    rows, cols = np.nonzero(tested)
    hit = one_sided_log_mixture_reaches(
        s[rows, cols], cols + 1, p0[rows], math.log(1 / ALPHA), t_opt=T_OPT, alpha_opt=ALPHA
    )
    first: list[int | None] = [None] * x.shape[0]
    for r, c in zip(rows[hit][::-1], cols[hit][::-1], strict=True):  # reversed: the earliest wins
        first[int(r)] = int(c)
    return first


def _naive_rate(x: Array, ends: NDArray[np.int64], cell: Cell, level: float) -> tuple[int, bool]:
    s = np.cumsum(x)[ends - 1]
    above = cell.direction == "above"
    p = stats.binom.sf(s - 1, ends, level) if above else stats.binom.cdf(s, ends, level)
    return _first_reading(ends, p)


def _first_reading(ends: NDArray[np.int64], p: Array) -> tuple[int, bool]:
    """The first reading at which the test rejects (N + 1: none), and whether it rejects at N."""
    hit = np.flatnonzero(p <= ALPHA)
    return (int(ends[hit[0]]) if hit.size else N + 1), bool(p[-1] <= ALPHA)


def _naive_mean(x: Array, ends: NDArray[np.int64], level: float) -> tuple[int, bool]:
    """One-sided one-sample t test of mean > level at every reading (two observations at least)."""
    n = ends.astype(np.float64)
    total, squares = np.cumsum(x)[ends - 1], np.cumsum(x * x)[ends - 1]
    mean = total / n
    var = np.maximum(squares - n * mean * mean, 0) / np.maximum(n - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean - level) / np.sqrt(var / n)
    p = np.where(n >= 2, stats.t.sf(np.nan_to_num(t, nan=0.0, posinf=1e9), np.maximum(n - 1, 1)), 1.0)
    return _first_reading(ends, p)


def _draw_mean(rng: np.random.Generator, reps: int, cell: Cell) -> tuple[Array, float, float, float]:
    """Values, their range and the level on the values' scale (review minutes or the CPA reduction)."""
    if cell.kind == "mean":  # review minutes: 60 x Beta(1, 3), mean 15 (the level)
        return REVIEW_CAP * rng.beta(1.0, 3.0, size=(reps, N)), 0.0, REVIEW_CAP, cell.level
    accepted = (rng.random((reps, N)) < ACCEPTED).astype(np.float64)
    mean_cost = cell.truth * ACCEPTED  # CPA = E[cost] / P(accepted); cost = cap x Beta(2, b), mean exact
    cost = COST_CAP * rng.beta(2.0, 2.0 * (COST_CAP / mean_cost - 1), size=(reps, N))
    return cost - C0 * accepted, -C0, COST_CAP, 0.0


def _gate_levels(rng: np.random.Generator, reps: int, cell: Cell) -> Array:
    """Per replication, a golden set's gate (100 cases, one trial each, true rate 0.8) and the level.

    ``vs_gate_bound``: the one-sided 95% Clopper-Pearson lower bound minus delta (what
    :func:`gatestats.sequential.monitor.vs_reference_level` is given); ``vs_gate_estimate``: the
    point estimate minus delta (no guarantee: the golden set's own error is ignored).
    """
    gold = rng.binomial(GOLD_CASES, GOLD_RATE, size=reps)
    if cell.kind == "vs_gate_estimate":
        return np.asarray(gold / GOLD_CASES - DELTA, dtype=np.float64)
    lower = stats.beta.ppf(GATE_ALPHA, gold, GOLD_CASES - gold + 1)
    return np.asarray(lower - DELTA, dtype=np.float64)


def simulate(cell: Cell, reps: int, seed: int, index: int) -> Outcome:
    """The cell's replications: the reading at which the trigger and the naive test roll back."""
    rng = np.random.default_rng([seed, index])
    ends = [batch_ends(rng) for _ in range(reps)]
    if cell.kind == "count":  # one action at a uniform observation: fires at its reading; no naive test
        at = rng.integers(0, N, size=reps)
        read = np.array([_reading(e, int(a)) for e, a in zip(ends, at, strict=True)])
        return Outcome(trigger=read, naive=None, onset=at + 1)
    if cell.kind not in {"mean", "cpa"}:
        levels = _gate_levels(rng, reps, cell) if cell.kind.startswith("vs_gate") else np.full(reps, cell.level)
        x = (rng.random((reps, N)) < cell.truth).astype(np.float64)
        first = _first_rate_crossings(x, cell, levels)
        naive = [_naive_rate(x[r], ends[r], cell, float(levels[r])) for r in range(reps)]
    else:
        x, lo, hi, level = _draw_mean(rng, reps, cell)
        log_e = log_eprocess((x - lo) / (hi - lo), (level - lo) / (hi - lo), alpha=ALPHA, method="betting")
        hit = log_e >= math.log(1 / ALPHA)
        first = [int(np.argmax(h)) if h.any() else None for h in hit]
        naive = [_naive_mean(x[r], ends[r], level) for r in range(reps)]
    trigger = [_reading(ends[r], first[r]) for r in range(reps)]
    return Outcome(
        trigger=np.array(trigger, dtype=np.int64),
        naive=np.array([first for first, _ in naive], dtype=np.int64),
        once=np.array([at_n for _, at_n in naive], dtype=np.bool_),
    )


def _share(read: NDArray[np.int64]) -> float:
    return float(np.mean(read <= N))


def _median(read: NDArray[np.int64], onset: NDArray[np.int64] | None = None) -> str:
    """The median observations read at the rollback (after the onset, when there is one)."""
    fired = read <= N
    if not fired.any():
        return "—"
    if onset is None:
        return f"{float(np.median(read[fired])):.0f}"
    return f"{float(np.median(read[fired] - onset[fired])):.0f} after the action"


def row(cell: Cell, outcome: Outcome, reps: int) -> str:
    """One markdown row: the cell, the trigger and the naive test."""
    trig = _share(outcome.trigger)
    naive = "—" if outcome.naive is None else f"{_share(outcome.naive):.3f}"
    once = "—" if outcome.once is None else f"{float(np.mean(outcome.once)):.3f}"
    if cell.null:
        bound = cell.guarantee
        se = 0.0 if bound is None else math.sqrt(bound * (1 - bound) / reps)
        verdict = "no guarantee" if bound is None else "yes" if trig <= bound + 2 * se else "**no**"
        if bound is not None and bound != ALPHA:
            verdict += f" (bound α + α_gate = {bound:g})"
        head = f"| {cell.name} | {cell.level:g} | {cell.truth:g} (null) | {trig:.3f} | {verdict}"
        return f"{head} | {naive} | {once} | — | — |"
    naive_delay = "—" if outcome.naive is None else _median(outcome.naive)
    return (
        f"| {cell.name} | {cell.level:g} | {cell.truth:g} | {trig:.3f} | — | {naive} | {once} "
        f"| {_median(outcome.trigger, outcome.onset)} | {naive_delay} |"
    )


def run(reps: int, seed: int) -> list[tuple[Cell, Outcome]]:
    """Every cell of :func:`cells`, each with its own stream of the seed."""
    return [(cell, simulate(cell, reps, seed, i)) for i, cell in enumerate(cells())]


HEADER = (
    "| trigger | level | truth | rolled back by N: trigger | ≤ α + 2 SE | naive, read every batch "
    "| fixed test read once at N | median obs. read at rollback: trigger | naive |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def main() -> None:
    """Print the markdown table with the seed, the replications and the time taken."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=None, help="replications per cell (2,000; --quick: 200)")
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--quick", action="store_true", help="200 replications per cell")
    args = parser.parse_args()
    reps = args.reps if args.reps is not None else (200 if args.quick else 2000)
    wall, cpu = time.perf_counter(), time.process_time()
    results = run(reps, args.seed)
    print(
        f"N = {N}, batches {BATCH_LOW}..{BATCH_HIGH}, alpha = {ALPHA}, seed {args.seed}, {reps} replications per cell"
    )
    print(HEADER)
    for cell, outcome in results:
        print(row(cell, outcome, reps))
    print(f"\nwall {time.perf_counter() - wall:.0f} s, CPU {time.process_time() - cpu:.0f} s")


if __name__ == "__main__":
    main()
