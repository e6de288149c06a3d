"""``fisher_exact_2x2`` remembers scipy's Fisher exact test per table: the same floats (session 45, issue 28 item 3).

The recalibration test and a covariate's two bins called ``scipy.stats.fisher_exact`` once a rate or covariate
(13,703 calls, 2,156 distinct tables in the judges' null simulations). The remembered test must give scipy's
odds ratio and p-value to the bit for every table, first call and repeated, whatever the integer type given.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from gatestats.judges._stats import fisher_exact_2x2


def _tables() -> list[tuple[int, int, int, int]]:
    rng = np.random.default_rng(45)
    tables = [(0, 0, 0, 0), (0, 5, 0, 7), (3, 0, 4, 0), (5, 0, 0, 5), (0, 5, 5, 0), (1, 0, 0, 1), (8, 2, 1, 5)]
    tables += [(a, 10 - a, c, 12 - c) for a in range(11) for c in range(13)]  # every table of two margins
    tables += [(2, 3, 4, d) for d in range(9)] + [(a, 3, 4, 5) for a in range(9)]  # one cell moves
    for n in (20, 60, 200, 1000):
        x = rng.integers(0, n + 1, size=(20, 2))
        tables += [(int(a), n - int(a), int(c) // 2, n // 2 - int(c) // 2) for a, c in x]
        tables += [(int(a), n - int(a), int(c), 2 * n - int(c)) for a, c in x]
    return tables


def _bits(x: float) -> str:
    return "nan" if math.isnan(x) else x.hex()


def test_the_remembered_test_is_scipys_to_the_bit() -> None:
    tables = _tables()
    wants = [tuple(_bits(float(v)) for v in stats.fisher_exact([[a, b], [c, d]])) for a, b, c, d in tables]
    fisher_exact_2x2.cache_clear()
    for repeat in range(2):  # computed, then remembered
        for (a, b, c, d), want in zip(tables, wants, strict=True):
            odds, p = fisher_exact_2x2(a, b, c, d) if repeat == 0 else fisher_exact_2x2(*np.int64([a, b, c, d]))
            assert (_bits(odds), _bits(p)) == want, (a, b, c, d, repeat)
            assert type(odds) is float
            assert type(p) is float
    assert fisher_exact_2x2.cache_info().hits >= len(tables)  # the second pass did not call scipy again
