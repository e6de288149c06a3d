"""Inverting an interval into the two one-sided p-values of a gate row."""

from __future__ import annotations

import pytest
from scipy import stats

from gatestats.gate.rules import interval_pvalues


def _normal_bounds(alpha: float) -> tuple[float | None, float | None]:
    """Mean 0.5, standard error 0.1: the 1 - 2 alpha interval (each end a one-sided 1 - alpha bound)."""
    z = float(stats.norm.isf(alpha))
    return 0.5 - 0.1 * z, 0.5 + 0.1 * z


def test_inverting_a_normal_interval_gives_the_normal_tail_probabilities() -> None:
    # Threshold two standard errors below the mean: p(above) = P(Z > 2) = 0.0227501319 (scipy.stats.norm.sf(2)).
    p_above, p_below = interval_pvalues(_normal_bounds, 0.3)
    assert p_above == pytest.approx(0.022750131948179195, rel=1e-6)
    assert p_below == 1.0  # no upper bound below 0.3 at any alpha under 0.5


def test_an_interval_without_bounds_shows_nothing_either_way() -> None:
    assert interval_pvalues(lambda alpha: (None, None), 0.3) == (1.0, 1.0)
