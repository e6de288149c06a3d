"""The order of additions in the numpy reductions on ``analyze``'s default path, as pure Python (issue 28, item 2).

    .venv/bin/python benchmarks/numpy_reduction_order.py [--vectors 2000] [--longest 1200] [--seed 0]

``analyze`` is above 2x ``import polars`` at start-up because numpy (≈ 0.35-0.45x of the floor) is
imported for arithmetic on a few dozen numbers (benchmarks/RESULTS.md, session 46). A path without numpy
must print the same digits, so it must add in numpy's order. Two reductions carry the Wilson path's
standard errors and variance split (``estimators/intervals.py`` ``_standard_errors``,
``estimators/variance.py``):

- ``x.mean(axis=1)`` / ``x.var(axis=1)`` of a C-contiguous float64 array (and ``mean`` / ``var(ddof=1)`` of a
  1-D one, as ``variance_decomposition`` takes them): numpy's pairwise summation
  (``pairwise_sum`` in ``loops_utils.h.src``) started from ``0.0``: fewer than 8 values added in turn; up
  to 128 in 8 running sums combined as ``((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))`` and the rest added in turn;
  more split at half rounded down to a multiple of 8 and the halves' sums added. ``var`` is that sum of
  ``(x - mean) * (x - mean)`` over ``n - ddof``.
- ``np.einsum("ij,ij->i", d, d)``: two lanes (the x86-64 baseline's 128-bit vectors), blocks of four
  vectors added into each lane from the last vector to the first, the tail a vector at a time padded
  with zeros, the lanes added, then added to ``0.0`` (the output's start). No fused multiply-add on the
  baseline; an Arm build (NEON's fused ``vfma``) or a numpy that dispatches einsum by CPU would differ.

Each model is compared with numpy on random rows (lengths 1 to ``--longest``, scales 1e-2 to 1e2,
shifted); the script prints the agreements and exits 1 on any difference. It holds for numpy 2.4.6 on
x86-64 (the lock's), with ``NPY_DISABLE_CPU_FEATURES=X86_V3`` as without. The models are
``gatestats.estimators.numpy_order``'s (one source: ``analyze``'s path without numpy computes with them,
tests/estimators/test_numpy_order.py checks them in the suite); this script checks them at scale.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import numpy as np

from gatestats.estimators.numpy_order import einsum_row_dot, row_mean, row_var


def _agreement(
    rows: list[np.ndarray], model: Callable[[Sequence[float]], float], numpy_rows: Callable[[np.ndarray], np.ndarray]
) -> int:
    """How many rows the model gives bit for bit as numpy does (numpy on each row pair as one 2-D array)."""
    same = 0
    for row in rows:
        pair = np.stack([row, row[::-1].copy()])
        expected = numpy_rows(pair)
        got = [model([float(x) for x in pair[0]]), model([float(x) for x in pair[1]])]
        bits = np.asarray(expected, dtype=np.float64).view(np.int64)
        same += bool(np.array_equal(np.array(got).view(np.int64), bits))
    return same


def main() -> None:
    """Compare the models with numpy on random rows; exit 1 on any difference."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=2000, help="random rows (default 2000)")
    parser.add_argument("--longest", type=int, default=1200, help="the longest row (default 1200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = [
        rng.standard_normal(int(rng.integers(1, args.longest + 1))) * rng.uniform(0.01, 100) + rng.uniform(-5, 5)
        for _ in range(args.vectors)
    ]
    rows += [rng.integers(0, 2, size=int(rng.integers(1, 60))).astype(np.float64) for _ in range(args.vectors // 4)]
    print(f"numpy {np.__version__}; {len(rows)} row pairs, lengths 1-{args.longest}")
    checks: dict[str, tuple[Callable[[Sequence[float]], float], Callable[[np.ndarray], np.ndarray]]] = {
        "x.mean(axis=1)": (row_mean, lambda x: x.mean(axis=1)),
        "x.var(axis=1)": (row_var, lambda x: x.var(axis=1)),
        "x[i].mean() (1-D)": (row_mean, lambda x: np.array([r.mean() for r in x])),
        "x[i].var(ddof=1) (1-D, as variance_decomposition)": (
            lambda v: row_var(v, ddof=1) if len(v) > 1 else 0.0,
            lambda x: np.array([r.var(ddof=1) if r.size > 1 else 0.0 for r in x]),
        ),
        'np.einsum("ij,ij->i", d, d)': (einsum_row_dot, lambda x: np.einsum("ij,ij->i", x, x)),
    }
    failed = False
    for name, (model, numpy_rows) in checks.items():
        same = _agreement(rows, model, numpy_rows)
        failed |= same != len(rows)
        print(f"{name}: {same} / {len(rows)} bit-identical")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
