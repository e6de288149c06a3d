"""The betting test's p-values when an e-value underflows to 0 (issue 28: a gate on 10M records crashed).

With every unit against the bet the e-value is a product of 100k+ factors below 1: it underflows to
0.0, and ``1 / e`` raised ZeroDivisionError (a traceback instead of a verdict). Its p-value is 1
(no evidence at all), as ``min(1, 1/e)`` is for every e-value at most 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from gatestats.paired.noninferiority import bounded_mean_evalues, bounded_mean_pvalues


@pytest.mark.parametrize("units", [100_000, 1_250_000])
def test_all_units_better_gives_worse_pvalue_one(units: int) -> None:
    assert float(bounded_mean_evalues(-np.ones(units), lower=1.03)) == 0.0  # the e-value underflows
    p_pass, p_worse = bounded_mean_pvalues(np.ones(units), margin=0.03)
    assert p_pass == 0.0
    assert p_worse == 1.0


def test_all_units_worse_gives_pass_pvalue_one() -> None:
    p_pass, p_worse = bounded_mean_pvalues(-np.ones(200_000), margin=0.03)
    assert p_pass == 1.0
    assert p_worse == 0.0


def test_small_samples_unchanged() -> None:
    # min(1, 1/e) as before, where the e-value is positive: (1 + 0.95 * 0.5) ** 2 = 2.175625 for one bet
    p_pass, p_worse = bounded_mean_pvalues(np.array([0.5, 0.5]), margin=0.0)
    e = float(bounded_mean_evalues(np.array([0.5, 0.5]), lower=1.0))
    assert p_pass == pytest.approx(min(1.0, 1 / e), rel=0, abs=0)
    assert p_worse == 1.0
