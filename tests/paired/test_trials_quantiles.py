"""The paired intervals' and Tango test's normal and t functions without scipy.stats' argument checks: scipy.stats' own floats.

``gatestats.estimators.quantiles`` computes ``norm.ppf``, ``norm.cdf``, ``norm.sf`` and ``t.isf`` from
``scipy.special`` directly (issue 28, item 3, session 44: the checks cost a third of a paired bootstrap
interval and four fifths of the Tango test's size table). Every bound and p-value must stay the float
scipy.stats gave, bit for bit: the helpers against scipy.stats on many inputs and edges, and whole
intervals and Tango tests computed both ways.
"""

from __future__ import annotations

import math
import struct
from contextlib import AbstractContextManager
from unittest import mock

import numpy as np
import pytest
from scipy import stats

from gatestats.estimators import quantiles
from gatestats.paired import noninferiority, trials


def bits(value: float | None) -> bytes:
    """The float's bytes (``-0.0`` and ``0.0`` differ, every NaN equal); ``None`` as itself."""
    return b"none" if value is None else struct.pack("<d", value)


def test_helpers_are_scipy_stats_bit_for_bit() -> None:
    rng = np.random.default_rng(44)
    edges = [0.0, 1.0, 0.5, 5e-324, 1e-300, 1e-16, 0.025, 0.975, 1 - 1e-16, np.nextafter(0.5, 0), np.nextafter(0.5, 1)]
    probabilities = [*edges, *rng.random(400), *(10.0 ** rng.uniform(-300, 0, 200))]
    for q in probabilities:
        assert bits(quantiles.norm_ppf(q)) == bits(float(stats.norm.ppf(q))), q
    for q in [q for q in probabilities if 0 < q < 1]:  # t.isf's open interval
        for df in (1, 9, 199, 123_456):
            assert bits(quantiles.t_isf(q, df)) == bits(float(stats.t.isf(q, df))), (q, df)
    points = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-300, -40.0, 40.0, *rng.normal(0, 3, 600)]
    for x in points:
        assert bits(quantiles.norm_cdf(x)) == bits(float(stats.norm.cdf(x))), x
        assert bits(quantiles.norm_sf(x)) == bits(float(stats.norm.sf(x))), x


def _scipy_stats() -> AbstractContextManager[object]:
    """The helpers replaced by the scipy.stats calls they stand for (the code before session 44)."""
    return mock.patch.multiple(
        trials,
        norm_ppf=lambda q: float(stats.norm.ppf(q)),
        norm_cdf=lambda x: float(stats.norm.cdf(x)),
        t_isf=lambda q, df: float(stats.t.isf(q, df)),
    )


@pytest.mark.parametrize("method", ["bootstrap", "clt"])
def test_intervals_are_those_computed_with_scipy_stats(method: str) -> None:
    rng = np.random.default_rng(2026)
    compared = 0
    for seed in range(60):
        n = int(rng.integers(200, 320)) * (3 if seed % 4 == 0 else 1)
        k = int(rng.integers(1, 6))
        d = (rng.binomial(k, rng.random(n)) - rng.binomial(k, rng.random(n))) / k
        groups = np.arange(n) // 3 if seed % 4 == 0 else None  # clusters of 3 cases, >= 200 of them
        level = float(rng.choice([0.5, 0.8, 0.9, 0.95, 0.975, 0.99]))
        for alternative in ("two-sided", "less", "greater"):
            kwargs = {"groups": groups, "method": method, "alternative": alternative, "confidence_level": level}
            fast = trials.case_difference_interval(d, n_resamples=199, seed=seed, **kwargs)  # type: ignore[arg-type]
            with _scipy_stats():
                reference = trials.case_difference_interval(d, n_resamples=199, seed=seed, **kwargs)  # type: ignore[arg-type]
            assert fast.status == reference.status == "ok", (seed, alternative)
            for name in ("ci_low", "ci_high", "se", "estimate"):
                assert bits(getattr(fast, name)) == bits(getattr(reference, name)), (seed, alternative, name)
            compared += 1
    assert compared == 180


def test_tango_pvalues_are_those_computed_with_scipy_stats() -> None:
    # every (b, c) table of 40 cases at two margins (the size table's computation, smaller)
    tables = [(b, c) for b in range(41) for c in range(41 - b)]
    fast = [
        noninferiority.noninferiority_test(b, c, 40, margin=m, method="tango_score")
        for b, c in tables
        for m in (0.05, 0.1)
    ]
    with mock.patch.multiple(
        noninferiority, norm_sf=lambda x: float(stats.norm.sf(x)), norm_cdf=lambda x: float(stats.norm.cdf(x))
    ):
        reference = [
            noninferiority.noninferiority_test(b, c, 40, margin=m, method="tango_score")
            for b, c in tables
            for m in (0.05, 0.1)
        ]
    assert len(fast) == 1722
    for got, expected in zip(fast, reference, strict=True):
        assert (bits(got.pvalue), bits(got.pvalue_worse)) == (bits(expected.pvalue), bits(expected.pvalue_worse))
        assert got == expected
