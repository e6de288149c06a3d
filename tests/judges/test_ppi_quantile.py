"""The PPI intervals' quantile is scipy's ``norm.ppf``/``t.ppf``, bit for bit, and the level is checked every time.

Issue 28, item 3 (session 46): :func:`gatestats.judges.ppi._z` reads the toolkit's stored quantiles
(:func:`gatestats.estimators.quantiles.two_sided_z`, ``two_sided_t``) instead of scipy's distribution
objects, which cost ~0.5 ms a call; these are scipy's floats, here asserted to the last bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from gatestats.judges import ppi


def test_the_quantile_is_scipys_bit_for_bit() -> None:
    rng = np.random.default_rng(46)
    levels = [0.95, 0.9, 0.99, 0.5, 1e-9, 1 - 1e-12, *rng.uniform(0.01, 0.999, 14).tolist()]
    dfs: list[int | None] = [None, 1, 2, 3, 10, 29, 199, 10_000, *rng.integers(1, 500, 4).tolist()]
    for level in levels:
        for df in dfs:
            want = stats.norm.ppf(0.5 + level / 2) if df is None else stats.t.ppf(0.5 + level / 2, df)
            got = ppi._z(level, df)
            assert type(got) is float
            assert got.hex() == float(want).hex(), (level, df)
    # a numpy level or df gives the same double
    assert ppi._z(np.float64(0.95), np.int64(10)).hex() == float(stats.t.ppf(0.5 + 0.95 / 2, 10)).hex()


@pytest.mark.parametrize(("level", "error"), [(1.0, ValueError), (0.0, ValueError), (float("nan"), ValueError),
                                              (True, TypeError), ([0.95], TypeError), ("0.95", TypeError)])  # fmt: skip
def test_an_invalid_level_is_refused_every_time(level: object, error: type[Exception]) -> None:
    for _ in range(2):
        with pytest.raises(error, match="confidence_level must"):
            ppi._z(level)  # type: ignore[arg-type]
