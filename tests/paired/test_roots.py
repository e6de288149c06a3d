"""Brent's method in Python (``gatestats.paired.roots``) returns scipy's ``brentq`` float to the last bit.

The old code called ``scipy.optimize.brentq``; it stays the reference (session 40): the port must give the
same bits on the score intervals (every table below) and on other functions. The planted break in the
session-40 report (the secant step in place of the inverse quadratic extrapolation) fails 34 of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from scipy import optimize

from gatestats.estimators.quantiles import upper_z
from gatestats.paired import intervals
from gatestats.paired.roots import brent_root

_FUNCTIONS: list[tuple[str, Callable[[float], float], float, float]] = [
    ("sqrt2", lambda x: x * x - 2.0, 0.0, 2.0),
    ("cubic", lambda x: x**3 - 2 * x - 5, 2.0, 3.0),
    ("cos", lambda x: math.cos(x) - x, 0.0, 1.0),
    ("exp", lambda x: math.exp(x) - 10.0, -5.0, 5.0),
    ("steep", lambda x: math.tanh(50 * (x - 0.3)), -1.0, 1.0),
    ("flat", lambda x: (x - 0.7) ** 5, 0.0, 1.0),
    ("cube", lambda x: (x - 0.7) ** 3, 0.0, 1.0),
    ("log", lambda x: math.log(x) + 3.0, 1e-9, 1.0),
    ("root_at_end", lambda x: x - 1.0, 0.0, 1.0),
]


@pytest.mark.parametrize(("name", "f", "low", "high"), _FUNCTIONS, ids=[f[0] for f in _FUNCTIONS])
@pytest.mark.parametrize("xtol", [2e-12, 1e-12, 1e-6, 1e-300])
def test_same_float_as_scipy_brentq_on_functions(
    name: str, f: Callable[[float], float], low: float, high: float, xtol: float
) -> None:
    for a, b in ((low, high), (high, low)):
        theirs = optimize.brentq(f, a, b, xtol=xtol, full_output=True, disp=False)[1]
        if theirs.converged:
            assert brent_root(f, a, b, xtol=xtol) == theirs.root, name
        else:  # (x - 0.7)**5 at small xtol: neither converges in 100 steps, and both stop at the same iterate
            with pytest.raises(RuntimeError, match=f"last iterate {theirs.root!r}"):
                brent_root(f, a, b, xtol=xtol)


def _with_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The intervals as they were: scipy's brentq."""
    monkeypatch.setattr(
        intervals, "brent_root", lambda f, low, high, xtol: float(optimize.brentq(f, low, high, xtol=xtol))
    )


def _tables(count: int, seed: int) -> list[tuple[int, int, int]]:
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 600, size=count)
    b = (rng.random(count) * (n + 1) * rng.random(count)).astype(int)
    c = (rng.random(count) * (n - b + 1) * rng.random(count)).astype(int)
    edges = [(0, 0, 5), (5, 0, 5), (0, 5, 5), (1, 7, 21), (6, 16, 161), (3, 3, 6), (0, 1, 1)]
    return edges + list(zip(b.tolist(), c.tolist(), n.tolist(), strict=True))


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize("level", [0.95, 0.9, 0.975])
def test_score_intervals_are_the_bits_scipy_gave(
    monkeypatch: pytest.MonkeyPatch, alternative: str, level: float
) -> None:
    tables = _tables(150, seed=int(level * 1000))
    ours = [intervals.tango_interval(b, c, n, confidence_level=level, alternative=alternative) for b, c, n in tables]  # type: ignore[arg-type]
    scas = [
        intervals.scas_interval(b, c, n, confidence_level=level, alternative=alternative) for b, c, n in tables if n > 1
    ]  # type: ignore[arg-type]
    _with_scipy(monkeypatch)
    assert ours == [
        intervals.tango_interval(b, c, n, confidence_level=level, alternative=alternative) for b, c, n in tables
    ]  # type: ignore[arg-type]
    assert scas == [
        intervals.scas_interval(b, c, n, confidence_level=level, alternative=alternative) for b, c, n in tables if n > 1
    ]  # type: ignore[arg-type]


def test_same_sign_at_both_ends_and_no_convergence_are_errors() -> None:
    with pytest.raises(ValueError, match="different signs"):
        brent_root(lambda x: x * x + 1.0, -1.0, 1.0)
    with pytest.raises(RuntimeError, match="did not converge in 3 steps"):
        brent_root(lambda x: (x - 0.7) ** 5, 0.0, 1.0, max_iterations=3)


def test_upper_z_is_scipys_norm_isf_at_stored_tails_and_within_2e_15_elsewhere() -> None:
    from scipy import stats

    for level in (0.8, 0.9, 0.95, 0.99):
        for tail in ((1 - level) / 2, 1 - level):
            assert upper_z(tail) == float(stats.norm.isf(tail)), (level, tail)
    # Other tails: statistics.NormalDist (AS241), not scipy's ndtri; 8.3e-16 relative at most measured.
    tails = np.concatenate([np.logspace(-300, -1, 3000), np.linspace(0.1, 0.5, 2000)[:-1], [0.05 / 3, 0.025 / 2]])
    ours = np.array([upper_z(float(t)) for t in tails])
    np.testing.assert_allclose(ours, stats.norm.isf(tails), rtol=2e-15, atol=0)
