"""Full size of the discordant e-process's level check (``tests/sequential/test_eprocess.py``).

H0: P(win | discordant) <= 1/2. Sequences of 200 cases, 30% discordant, wins with probability
0.5 (the boundary) and 0.4: the share whose e-process ever reaches 1/alpha = 20 must be at most
0.05 (Ville's inequality). The test runs 1,000 sequences per q; this script 4,000 (issue 28, item 3)
and, with ``--inflate F``, the planted break of an e-process F times too large::

    .venv/bin/python benchmarks/eprocess_level.py [--n 4000] [--inflate 3]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence

import numpy as np

from gatestats.sequential.eprocess import discordant_eprocess


def crossing_rate(n: int, q: float, rng: np.random.Generator, *, inflate: float = 1.0) -> float:
    """Share of ``n`` null sequences whose e-process (times ``inflate``) ever reaches 20."""
    discordant = rng.random((n, 200)) < 0.3
    sign = np.where(rng.random((n, 200)) < q, 1, -1)
    d = np.where(discordant, sign, 0)
    return float(np.mean([bool((inflate * discordant_eprocess(row).better >= 20).any()) for row in d]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--inflate", type=float, default=1.0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(9)
    limit = 0.05 + 3 * math.sqrt(0.05 * 0.95 / args.n)
    start = time.process_time()
    worst = 0.0
    for q in (0.5, 0.4):
        rate = crossing_rate(args.n, q, rng, inflate=args.inflate)
        worst = max(worst, rate)
        print(f"q = {q}: sup E >= 20 in {rate:.4f} of {args.n} sequences (limit {limit:.4f})")
    print(f"{time.process_time() - start:.1f} CPU-s")
    return 0 if worst <= limit else 1


if __name__ == "__main__":
    raise SystemExit(main())
