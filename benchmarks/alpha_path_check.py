"""The gate's paired rows over a grid of designs and levels, printed one per line (issue 29).

Issue 29 removed the round trip of alpha on its way to the paired test (alpha -> 1 - 2 alpha ->
2 alpha -> alpha, docs/architecture.md). The rows must not change, so this script prints the
``repr`` of every :func:`gatestats.gate.rules.paired_evidence` row of a grid, to be run on two
source trees and compared byte for byte::

    git archive <before> src | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before/src .venv/bin/python benchmarks/alpha_path_check.py > /tmp/rows_before.txt
    .venv/bin/python benchmarks/alpha_path_check.py > /tmp/rows_after.txt
    cmp /tmp/rows_before.txt /tmp/rows_after.txt

The grid (648 rows, seed 0 unless ``--seed``): 8, 30 or 120 cases; 1 or 3 trials per case; cases
independent or in groups of 3; baseline/candidate pass probabilities (0.7, 0.7), (0.6, 0.8) or
(0.85, 0.75); margin 0 (exact McNemar or the bounded-mean test), 0.02 or 0.1 (the non-inferiority
tests); rule alpha 0.05, 0.01 or 0.1; the policy's confidence level 0.95 or 0.9 (the interval shown).
Results: benchmarks/RESULTS.md ("Issue 29: the alpha path").
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence

import numpy as np
import polars as pl

from gatestats.gate.policy import Rule
from gatestats.gate.rules import paired_evidence

_SCHEMA = ["system", "case_id", "case_version", "case_group", "trial", "attempt", "outcome"]


def _records(
    rng: np.random.Generator, n: int, trials: int, p_base: float, p_cand: float, *, grouped: bool
) -> pl.DataFrame:
    rows = [
        (system, f"c{i}", None, f"g{i // 3}" if grouped else None, t, 0, "passed" if rng.random() < p else "failed")
        for i in range(n)
        for system, p in (("baseline", p_base), ("candidate", p_cand))
        for t in range(trials)
    ]
    return pl.DataFrame(rows, schema=_SCHEMA, orient="row")


def rows(seed: int) -> list[str]:
    """The ``repr`` of every row of the grid (an error's type and message where a row raises)."""
    out = []
    rng = np.random.default_rng(seed)
    grid = itertools.product(
        (8, 30, 120), (1, 3), (False, True), ((0.7, 0.7), (0.6, 0.8), (0.85, 0.75)), (0.0, 0.02, 0.1),
        (0.05, 0.01, 0.1), (0.95, 0.9),
    )  # fmt: skip
    for n, trials, grouped, (p_base, p_cand), margin, alpha, level in grid:
        records = _records(rng, n, trials, p_base, p_cand, grouped=grouped)
        rule = Rule(name="r", metric="pass_rate", slice="all", direction="higher", threshold=None, test="paired",
                    margin=margin or None, alpha=alpha, action="block", k=1, grader=None)  # fmt: skip
        try:
            ev = paired_evidence(records, rule=rule, baseline="baseline", candidate="candidate", alpha=alpha,
                                 confidence_level=level, seed=0)  # fmt: skip
            out.append(repr(ev))
        except ValueError as exc:
            out.append(f"ERROR {type(exc).__name__}: {exc}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print("\n".join(rows(args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
