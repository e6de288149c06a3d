"""``tango_interval`` checks its table once, not at every step of its root searches: the same floats.

Issue 28, item 3 (session 46). The reference is the interval as computed before: the root searches of
:func:`gatestats.paired.intervals._score_interval` on the public, fully checked :func:`tango_statistic`, whose
formula is written out here as it was (Tango 1998, eq. 3 and the restricted estimate of eq. 4).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gatestats.paired import intervals
from gatestats.paired.intervals import tango_interval


def _statistic_before(b: int, c: int, n: int, delta0: float) -> float:
    """Tango's score statistic, the formula of ``tango_statistic`` before the change, checks included."""
    if not -1.0 <= delta0 <= 1.0 or b + c > n or n == 0:
        msg = f"out of domain: {(b, c, n, delta0)}"
        raise ValueError(msg)
    a_coef, b_coef = 2.0 * n, -b - c + (2.0 * n - c + b) * delta0
    c_coef = -b * delta0 * (1.0 - delta0)
    p_b = (math.sqrt(max(b_coef * b_coef - 4.0 * a_coef * c_coef, 0.0)) - b_coef) / (2.0 * a_coef)
    numerator = c - b - n * delta0
    variance = n * (2.0 * p_b + delta0 * (1.0 - delta0))
    if variance <= 0.0:
        return 0.0 if numerator == 0 else math.copysign(math.inf, numerator)
    return numerator / math.sqrt(variance)


def _interval_before(b: int, c: int, n: int, level: float, alternative: str) -> tuple[float, float]:
    z = intervals._z(level, alternative)  # type: ignore[arg-type]
    return intervals._score_interval(lambda d: _statistic_before(b, c, n, d), (c - b) / n, z, alternative)  # type: ignore[arg-type]


def test_the_interval_is_the_one_checked_at_every_step_bit_for_bit() -> None:
    rng = np.random.default_rng(46)
    tables = [(0, 0, 1), (1, 0, 1), (0, 1, 1), (3, 3, 6), (0, 0, 500), (500, 0, 500), (16, 6, 161)]
    for _ in range(300):
        n = int(rng.choice([int(rng.integers(1, 30)), int(rng.integers(30, 2000))]))
        b = int(rng.integers(0, n + 1))
        tables.append((b, int(rng.integers(0, n - b + 1)), n))
    for i, (b, c, n) in enumerate(tables):
        level = float(rng.choice([0.95, 0.99, 0.9, 1 - 0.05 / (i % 10 + 1), rng.uniform(0.5, 0.999)]))
        alternative = ("two-sided", "less", "greater")[i % 3]
        got = tango_interval(b, c, n, confidence_level=level, alternative=alternative)  # type: ignore[arg-type]
        want = _interval_before(b, c, n, level, alternative)
        assert [x.hex() for x in got] == [x.hex() for x in want], (b, c, n, level, alternative)
        at = got[0] if got[0] > -1 else -0.5
        assert intervals.tango_statistic(b, c, n, at).hex() == _statistic_before(b, c, n, at).hex()


@pytest.mark.parametrize("delta0", [1.5, -1.0000001, float("nan")])
def test_a_step_outside_minus_one_to_one_is_still_refused(delta0: float) -> None:
    with pytest.raises(ValueError, match=r"delta0 must lie in \[-1, 1\]"):
        intervals._tango_statistic(2, 3, 10, delta0)
    with pytest.raises(ValueError, match=r"delta0 must lie in \[-1, 1\]"):
        intervals.tango_statistic(2, 3, 10, delta0)
