"""``exact_power`` keeps its rejection probabilities per (n, pi, alpha, alternative, test): the same floats.

Issue 28, item 3 (session 46): the A/A size study of tests/paired/test_simulation.py asks for the exact power at
50 discordances per number of cases; with ``delta = 0`` every one has ``pi = 0.5``, so the critical values and
conditional tails are computed once per ``n`` (:func:`gatestats.paired.planning._kept_reject`). The reference
here is the computation before: the rejection probabilities for ``m = 0..n`` computed afresh, then weighted.
"""

from __future__ import annotations

import numpy as np
import pytest

from gatestats.paired import exact_power, planning

ALTERNATIVES = ("two-sided", "less", "greater")
TESTS = ("midp", "exact")


def _fresh(n: int, delta: float, psi: float, alpha: float, alternative: str, test: str) -> float:
    """What exact_power computed before it kept anything."""
    m = np.arange(n + 1, dtype=np.int64)
    reject = planning._reject_given(m, delta, psi, alpha, alternative, test)  # type: ignore[arg-type]
    return planning._unconditional(reject, n, psi)


def _cases() -> list[tuple[int, float, float, float, str, str]]:
    rng = np.random.default_rng(46)
    cases = []
    for _ in range(40):
        n = int(rng.integers(1, 60))
        psi = float(rng.choice([rng.uniform(0.01, 1.0), round(float(rng.uniform(0.01, 0.5)), 2)]))
        delta = float(rng.choice([0.0, rng.uniform(-psi, psi), psi, -psi]))
        alpha = float(rng.choice([0.05, 0.01, 0.1, rng.uniform(0.001, 0.3)]))
        cases.append((n, delta, psi, alpha, str(rng.choice(ALTERNATIVES)), str(rng.choice(TESTS))))
    # An A/A grid: the same n, alpha, alternative and test at many discordances (pi = 0.5 for each).
    cases += [(30, 0.0, psi, 0.05, alternative, test)
              for psi in (0.07, 0.33, 1.0) for alternative in ALTERNATIVES for test in TESTS]  # fmt: skip
    # Repeats in another order, once the kept values exist.
    return cases + cases[::-3]


def test_exact_power_is_the_fresh_computation_bit_for_bit() -> None:
    planning._kept_reject.cache_clear()
    for n, delta, psi, alpha, alternative, test in _cases():
        got = exact_power(n, delta, psi, alpha=alpha, alternative=alternative, test=test)  # type: ignore[arg-type]
        want = _fresh(n, delta, psi, alpha, alternative, test)
        assert got.hex() == want.hex(), (n, delta, psi, alpha, alternative, test)
    assert planning._kept_reject.cache_info().hits > 0


def test_beyond_the_kept_size_it_is_computed_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    planning._kept_reject.cache_clear()
    monkeypatch.setattr(planning, "_KEPT_CASES", 20)
    for n in (19, 20, 21, 45):
        got = exact_power(n, 0.0, 0.3, alternative="two-sided", test="midp")
        assert got.hex() == _fresh(n, 0.0, 0.3, 0.05, "two-sided", "midp").hex()
    assert [key[0] for key in _kept_keys()] == [19, 20]


def test_the_kept_probabilities_are_read_only() -> None:
    reject = planning._kept_reject(12, 0.5, 0.05, "two-sided", "midp")
    with pytest.raises(ValueError, match="read-only"):
        reject[0] = 1.0


def _kept_keys() -> list[tuple[object, ...]]:
    """The n of every kept entry, by calling with each n again and reading the cache's hits."""
    kept = []
    for n in range(1, 50):
        before = planning._kept_reject.cache_info().hits
        planning._kept_reject(n, 0.5, 0.05, "two-sided", "midp")
        if planning._kept_reject.cache_info().hits > before:
            kept.append((n,))
    return kept
