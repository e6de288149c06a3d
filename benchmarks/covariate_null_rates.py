"""Full size of the judge-bias false-alarm simulation at the null (``tests/judges/test_covariates.py``).

A judge whose disagreement with people does not depend on any covariate (length, model family,
position); each covariate's rejection rate at α = 0.05 (unadjusted) and the family's (Holm) must stay
at most alpha + 2 SE. The test runs the same function at ``NULL_REPS`` replications and asserts that
the family without Holm exceeds the bound where disagreement is common; this script runs 1,000 per
cell (the test's size before issue 28, item 3)::

    .venv/bin/python benchmarks/covariate_null_rates.py [--reps 1000]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package (its helper is the simulation)

from tests.judges.test_covariates import _null_rates

CELLS = ((20, 0.05), (20, 0.5), (40, 0.95), (60, 0.02), (100, 0.5))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args(argv)
    bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / args.reps)
    start = time.process_time()
    worst = 0.0
    for n, p in CELLS:
        single, family, unadjusted = _null_rates(n, p, args.reps, seed=20241204 + n)
        worst = max(worst, float(single.max()), float(family))
        print(
            f"n={n}, p={p}: single {', '.join(f'{x:.3f}' for x in single)}, Holm {float(family):.3f}, "
            f"without Holm {unadjusted:.3f} (limit {bound:.4f}, {args.reps} replications)"
        )
    print(f"{time.process_time() - start:.1f} CPU-s")
    return 0 if worst <= bound else 1


if __name__ == "__main__":
    raise SystemExit(main())
