"""The BCa ranks of the cost bootstrap without scipy.special: scipy's bounds to the last bit (issue 28, item 2).

``RatioBootstrap.bounds`` takes order statistics at ranks ``floor(q_lo (B + 1))`` and
``ceil(q_hi (B + 1))``; only those integers depend on the normal quantile and CDF. They are computed
with :class:`statistics.NormalDist` and again with scipy's ``ndtri``/``ndtr`` near a rank's edge or
where the acceleration's denominator is small, so ``gatestats cost`` does not import scipy.special
and its bounds are the ones scipy's levels give.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from gatestats.cost import _bootstrap
from gatestats.cost._bootstrap import RatioBootstrap
from tests.hypothesis_counts import examples


def _scipy_bounds(boot: RatioBootstrap, level: float, kind: Any) -> tuple[float, float] | None:
    """The bounds at the ranks scipy's levels give (the definition the fast path must equal)."""
    levels = boot.levels(level, kind, exact=True)
    if levels is None:
        return None
    b = boot.draws.size
    low_rank = min(max(math.floor(levels[0] * (b + 1)), 1), b)
    high_rank = min(max(math.ceil(levels[1] * (b + 1)), 1), b)
    undefined = np.isnan(boot.draws)
    low_sorted = np.sort(np.where(undefined, -np.inf, boot.draws))
    high_sorted = np.sort(np.where(undefined, np.inf, boot.draws))
    return float(low_sorted[low_rank - 1]), float(high_sorted[high_rank - 1])


def test_the_standard_library_normal_agrees_with_scipy_far_inside_the_margin() -> None:
    # the margin (1e-9 of a level) rests on this: measured 1.06e-15 (quantile, relative) and 2.2e-16
    # (CDF, absolute) on these points; a standard library that drifted would fail here first
    rng = np.random.default_rng(0)
    p = np.concatenate(
        [rng.uniform(0, 1, 20_000), 10 ** rng.uniform(-300, -1, 5_000), 1 - 10 ** rng.uniform(-15, -1, 5_000)]
    )
    p = p[(p > 0) & (p < 1)]
    ours = np.array([_bootstrap._quantile(float(v)) for v in p])
    theirs = special.ndtri(p)
    assert np.max(np.abs(ours - theirs) / np.maximum(1, np.abs(theirs))) < 1e-14
    x = rng.uniform(-40, 40, 20_000)
    assert np.max(np.abs(np.array([_bootstrap._cdf(float(v)) for v in x]) - special.ndtr(x))) < 1e-15


def test_a_level_on_a_rank_edge_takes_scipys_rank() -> None:
    # z0 = 0 and a = 0 with B = 999 at 80%: the lower level is 0.1 and 0.1 (B + 1) = 100. The standard
    # library gives 99.99999999999997 (rank 99), scipy 100.00000000000009 (rank 100): without the
    # margin the lower bound would be another order statistic than scipy's. (With z0 = a = 0, 1,000
    # of the pairs of a common level and B up to 10,000 sit on such an edge.)
    draws = np.arange(999, dtype=np.float64)
    boot = RatioBootstrap(estimate=499.0, draws=draws, acceleration=0.0, n_units=100)
    assert boot.z0() == boot.z0(exact=True) == 0.0
    fast = boot.levels(0.8, "bca")
    exact = boot.levels(0.8, "bca", exact=True)
    assert fast is not None
    assert exact is not None
    assert math.floor(fast[0] * 1000) != math.floor(exact[0] * 1000)  # the edge is real
    assert boot.bounds(0.8, "bca") == _scipy_bounds(boot, 0.8, "bca") == (99.0, 899.0)


@pytest.mark.parametrize("tail", [0.025, 0.975])
def test_accelerations_around_the_branch_of_a_zero_denominator_give_scipys_bounds(tail: float) -> None:
    # 1 - a (z0 + z) crosses 0 where a = 1 / (z0 + z): the BCa level switches there from the normal CDF
    # to 0 or 1. Near it the CDF is already 0 or 1 (|z0 + w / denom| > 38), so both branches agree; the
    # floor of 0.1 on the denominator (scipy below it) is a safety margin that no case here needs.
    rng = np.random.default_rng(1)
    draws = rng.normal(size=999)
    z0 = RatioBootstrap(estimate=0.0, draws=draws, acceleration=0.0, n_units=100).z0(exact=True)
    edge = 1 / (z0 + float(special.ndtri(tail)))
    for step in (-1e-3, -1e-9, -1e-15, 0.0, 1e-15, 1e-9, 1e-3, 0.05, 0.2):
        boot = RatioBootstrap(estimate=0.0, draws=draws, acceleration=edge * (1 + step), n_units=100)
        assert boot.bounds(0.95, "bca") == _scipy_bounds(boot, 0.95, "bca")


@settings(max_examples=examples(300), deadline=None)
@given(
    n=st.sampled_from([99, 199, 999, 1999, 2000]),
    acceleration=st.one_of(st.just(0.0), st.floats(-0.6, 0.6, allow_nan=False)),
    level=st.sampled_from([0.8, 0.9, 0.95, 0.99, 0.5, 0.999]),
    shift=st.floats(-3, 3, allow_nan=False),
    seed=st.integers(0, 2**32 - 1),
    special_draws=st.sampled_from(["none", "ties", "inf", "nan"]),
)
def test_bounds_are_scipys_to_the_last_bit(
    n: int, acceleration: float, level: float, shift: float, seed: int, special_draws: str
) -> None:
    rng = np.random.default_rng(seed)
    draws = rng.normal(size=n)
    if special_draws == "ties":
        draws = np.round(draws, 1)
    elif special_draws == "inf":
        draws[: n // 20] = np.inf
    elif special_draws == "nan":
        draws[: n // 20] = np.nan
    boot = RatioBootstrap(estimate=float(shift / 10), draws=draws, acceleration=acceleration, n_units=100)
    for kind in ("bca", "percentile"):
        assert boot.bounds(level, kind) == _scipy_bounds(boot, level, kind)
