"""Full size of the PPI judge rule's boundary simulation (``tests/gate/test_judge_labels.py``).

A judge that passes every case people pass and 10% of the others; 1,000 cases whose people's pass
probability is exactly the rule's threshold 0.8 (the boundary): the share of ``pass`` decisions of
the prediction-powered rule must stay at most alpha + 2 SE, while the raw judge rule passes far
more often. The test runs the same function at fewer replications (``BOUNDARY_REPS``);
this script runs 1,000 per number of labels (issue 28, item 3)::

    .venv/bin/python benchmarks/judge_labels_boundary.py [--reps 1000]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package (its helpers are the simulation)

from tests.gate.test_judge_labels import SEED, _passes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args(argv)
    bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / args.reps)
    start = time.process_time()
    raw = _passes(100, 200, SEED, raw=True)
    print(f"raw judge rule, 100 labels, 200 replications: pass rate {raw:.3f} (the test asserts > 0.25)")
    worst = 0.0
    for n_labels, seed in ((40, SEED + 1), (100, SEED + 2), (300, SEED + 3)):
        found = _passes(n_labels, args.reps, seed)
        worst = max(worst, found)
        print(f"PPI, {n_labels} labels, {args.reps} replications: pass rate {found:.3f} (limit {bound:.4f})")
    print(f"{time.process_time() - start:.1f} CPU-s")
    return 0 if worst <= bound and raw > 0.25 else 1


if __name__ == "__main__":
    raise SystemExit(main())
