"""The PPI intervals' quantile is kept per (level, df): scipy's ``norm.ppf``/``t.ppf``, bit for bit.

Issue 28, item 3 (session 46): :func:`gatestats.judges.ppi._z` checks the level, then reads
:func:`gatestats.judges.ppi._quantile` (``functools.lru_cache``); invalid levels are refused every time.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from gatestats.judges import ppi


def test_the_quantile_is_scipys_bit_for_bit_first_and_again() -> None:
    rng = np.random.default_rng(46)
    levels = [0.95, 0.9, 0.99, 0.5, 1e-9, 1 - 1e-12, *rng.uniform(0.01, 0.999, 14).tolist()]
    dfs: list[int | None] = [None, 1, 2, 3, 10, 29, 199, 10_000, *rng.integers(1, 500, 4).tolist()]
    ppi._quantile.cache_clear()
    for level in levels:
        for df in dfs:
            want = stats.norm.ppf(0.5 + level / 2) if df is None else stats.t.ppf(0.5 + level / 2, df)
            for _ in range(2):  # computed, then kept
                got = ppi._z(level, df)
                assert type(got) is float
                assert got.hex() == float(want).hex(), (level, df)
    assert ppi._quantile.cache_info().hits >= len(levels) * len(dfs)
    # an integer-valued numpy level or df is the same key and the same double
    assert ppi._z(np.float64(0.95), np.int64(10)).hex() == float(stats.t.ppf(0.5 + 0.95 / 2, 10)).hex()


@pytest.mark.parametrize(("level", "error"), [(1.0, ValueError), (0.0, ValueError), (float("nan"), ValueError),
                                              (True, TypeError), ([0.95], TypeError), ("0.95", TypeError)])  # fmt: skip
def test_an_invalid_level_is_refused_every_time(level: object, error: type[Exception]) -> None:
    for _ in range(2):
        with pytest.raises(error, match="confidence_level must"):
            ppi._z(level)  # type: ignore[arg-type]
