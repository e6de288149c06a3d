"""The bootstrap engine's distinct (sum, size) pairs are ``np.unique(axis=0)``'s, bit for bit (session 44).

``intervals.distinct_pairs`` replaces ``np.unique(pairs, axis=0, return_inverse=True)`` by a
lexicographic argsort (issue 28, item 3: ~10x faster). The support's order decides the order of the
multinomial's categories, so the draws: support, order and codes must be exactly ``np.unique``'s.
"""

from __future__ import annotations

import numpy as np
import pytest

from gatestats.estimators.distinct import distinct_pairs


def _assert_as_unique(pairs: np.ndarray) -> None:
    support, code = distinct_pairs(pairs)
    expected_support, expected_code = np.unique(pairs, axis=0, return_inverse=True)
    assert support.dtype == expected_support.dtype
    assert support.shape == expected_support.shape
    assert support.tobytes() == expected_support.tobytes()
    assert code.dtype == np.intp
    assert np.array_equal(code, expected_code.ravel())


def _draws(rng: np.random.Generator, rows: int) -> np.ndarray:
    """Pairs like the engine's (pass counts over trials, unit sizes) and harder ones."""
    kind = int(rng.integers(0, 5))
    if kind == 0:  # the simulation's shape: k/trials values, sizes shared
        trials = int(rng.integers(1, 21))
        sums = rng.binomial(trials, rng.random(), rows) / trials
        sizes = rng.integers(1, 6, rows).astype(np.float64)
    elif kind == 1:  # continuous, every row distinct
        sums, sizes = rng.normal(0, 1e3, rows), rng.random(rows)
    elif kind == 2:  # few values in each column: many ties in one column, not the other
        sums, sizes = rng.integers(-3, 4, rows).astype(np.float64), rng.integers(0, 3, rows) / 7
    elif kind == 3:  # infinities, huge and tiny magnitudes, subnormals
        pool = np.array([np.inf, -np.inf, 1e308, -1e308, 5e-324, 1e-300, 1.0, 2.0, 0.1 + 0.2, 0.3])
        sums, sizes = rng.choice(pool, rows), rng.choice(pool, rows)
    else:  # one column constant
        sums, sizes = rng.integers(0, 50, rows) / 49, np.full(rows, 3.0)
    return np.stack([sums, sizes], axis=1)


def testdistinct_pairs_are_numpys_unique_on_many_arrays() -> None:
    rng = np.random.default_rng(44)
    for _ in range(300):
        _assert_as_unique(_draws(rng, int(rng.integers(1, 1000))))


@pytest.mark.parametrize(
    "pairs",
    [
        np.empty((0, 2)),
        np.array([[0.5, 1.0]]),
        np.array([[0.0, 1.0], [-0.0, 1.0], [0.0, 1.0]]),  # -0.0: np.unique itself
        np.array([[np.nan, 1.0], [0.5, np.nan], [0.5, 1.0], [np.nan, 1.0]]),  # NaN: np.unique itself
        np.array([[1.0, 2.0], [1.0, 1.0], [0.0, 2.0], [1.0, 2.0]]),
    ],
)
def testdistinct_pairs_at_the_edges(pairs: np.ndarray) -> None:
    _assert_as_unique(pairs)
