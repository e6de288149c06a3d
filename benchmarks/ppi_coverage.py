"""Coverage of PPI and PPI++ intervals over random labelled subsets of real LLMBar judgments.

Data: ``data/llmbar_judge_swap/judgments.csv`` (Zeng et al. 2024, MIT), eight configurations
(4 judges x 2 prompting strategies), 466 items each. The human label is the truth (Y = 1 when it
prefers output 1) and the judge's original-order verdict the prediction (f = 1 when it prefers
output 1; an unparseable, empty verdict reads as 0). The 466 real (Y, f) pairs of a configuration
are the population (the joint distribution of labels and judge errors as observed) and its mean of
Y the estimand. Each replication draws, independently and with replacement from those pairs, a
labelled sample of n pairs and an unlabelled sample of N = 2,000 judge verdicts: the i.i.d.
setting PPI assumes, with real judge errors. Intervals: PPI (lambda = 1) and PPI++ (tuned lambda)
from :func:`gatestats.judges.ppi.ppi_mean`, the human-only Wilson interval
(:func:`gatestats.judges.proportion`), all at nominal 95%, with the pass-rate range (0, 1) for the
variance floor.

Run (full size, results in benchmarks/RESULTS.md)::

    .venv/bin/python benchmarks/ppi_coverage.py            # 2,000 replications per cell
    .venv/bin/python benchmarks/ppi_coverage.py --reps 200  # the size the test runs
"""

from __future__ import annotations

import argparse
import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gatestats.judges import proportion
from gatestats.judges.ppi import ppi_mean

ROOT = Path(__file__).resolve().parents[1]
LLMBAR = ROOT / "data" / "llmbar_judge_swap" / "judgments.csv"
SEED = 20261204
SIZES = (30, 50, 100, 300)
UNLABELLED = 2000


#: The intervals compared: ppi-python's PPI and PPI++ (normal quantile, divisor n), the same with
#: the small-sample adjustment gatestats' item-level estimates use (t quantile, divisor n - 1), and
#: the human-only Wilson interval.
METHODS = ("PPI", "PPI++", "PPI t", "PPI++ t", "human")


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """Coverage and mean width of each of :data:`METHODS` for one configuration and subset size."""

    config: str
    n: int
    reps: int
    cover: tuple[float, ...]
    width: tuple[float, ...]
    refused: int


def configurations() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(Y, f) of each evaluator/strategy configuration, in file order."""
    out: dict[str, tuple[list[float], list[float]]] = {}
    with LLMBAR.open(newline="") as handle:
        for row in csv.DictReader(handle):
            y, f = out.setdefault(f"{row['evaluator']}/{row['strategy']}", ([], []))
            y.append(float(row["label"] == "1"))
            f.append(float(row["winner_original_order"] == "1"))
    return {k: (np.asarray(y), np.asarray(f)) for k, (y, f) in sorted(out.items())}


def simulate_cell(config: str, y: np.ndarray, f: np.ndarray, *, n: int, reps: int, seed: int) -> Cell:
    """``reps`` random labelled samples of size ``n``: how often each interval covers mean(Y)."""
    rng = np.random.default_rng(seed)
    truth = float(y.mean())
    hits = np.zeros(len(METHODS))
    widths = np.zeros(len(METHODS))
    refused = 0
    for _ in range(reps):
        lab = rng.integers(0, y.size, n)
        fu = f[rng.integers(0, y.size, UNLABELLED)]
        results = [
            ppi_mean(y[lab], f[lab], fu, lam=lam, min_labels=2, bounds=(0.0, 1.0), small_sample=small)
            for small in (False, True)
            for lam in (1.0, None)
        ]
        for k, r in enumerate([*results, proportion(int(y[lab].sum()), n)]):
            if r.ci_low is None or r.ci_high is None:
                refused += 1
                continue
            hits[k] += r.ci_low <= truth <= r.ci_high
            widths[k] += r.ci_high - r.ci_low
    return Cell(
        config=config,
        n=n,
        reps=reps,
        cover=tuple(float(c) for c in hits / reps),
        width=tuple(float(w) for w in widths / reps),
        refused=refused,
    )


def simulate(*, reps: int, sizes: tuple[int, ...] = SIZES, seed: int = SEED) -> list[Cell]:
    """Every configuration x size; cell ``i`` is seeded ``seed + i``."""
    cells = []
    for i, ((config, (y, f)), n) in enumerate((c, n) for c in configurations().items() for n in sizes):
        cells.append(simulate_cell(config, y, f, n=n, reps=reps, seed=seed + i))
    return cells


def table(cells: list[Cell]) -> str:
    """Markdown table: per size, the minimum and mean coverage over the 8 configurations, and mean widths."""
    head = " | ".join(f"{m} cover min / mean" for m in METHODS) + " | " + " | ".join(f"{m} width" for m in METHODS)
    lines = [f"| n | {head} |", "|---" * (1 + 2 * len(METHODS)) + "|"]
    for n in sorted({c.n for c in cells}):
        part = [c for c in cells if c.n == n]
        covers = [
            f"{min(c.cover[k] for c in part):.3f} / {sum(c.cover[k] for c in part) / len(part):.3f}"
            for k in range(len(METHODS))
        ]
        widths = [f"{sum(c.width[k] for c in part) / len(part):.3f}" for k in range(len(METHODS))]
        lines.append(f"| {n} | " + " | ".join(covers + widths) + " |")
    return "\n".join(lines)


def main() -> None:
    """Run the simulation and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    cells = simulate(reps=args.reps, seed=args.seed)
    se = math.sqrt(0.95 * 0.05 / args.reps)
    print(f"seed {args.seed}, {args.reps} replications per cell, nominal 0.95, 2 SE = {2 * se:.4f}")
    print(table(cells))
    print(f"refused (insufficient evidence): {sum(c.refused for c in cells)}")


if __name__ == "__main__":
    main()
