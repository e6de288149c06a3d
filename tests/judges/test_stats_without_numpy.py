"""``judges._stats`` without numpy: the Wilson interval, the kappa of a 2x2 table and the sign test, bit for bit.

``calibrate``'s default path imports no numpy (issue 28 item 2): :func:`gatestats.judges._stats.proportion`'s
Wilson interval, :func:`~gatestats.judges._stats.cohens_kappa` of a 2x2 table of ints and
:func:`~gatestats.judges._stats.sign_test` compute in Python floats. Each is compared with numpy's path
(``estimators.intervals.wilson_interval``, ``cohens_kappa`` of the same table as a numpy array,
``paired.mcnemar.mcnemar_pvalues``), every float by its bits: on every small input, then on random larger ones.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from typing import Any

import numpy as np
import pytest

from gatestats.estimators.intervals import wilson_interval
from gatestats.judges._stats import Kappa, cohens_kappa, proportion, sign_test
from gatestats.paired.binomial import EXACT_MAX_TRIALS
from gatestats.paired.mcnemar import mcnemar_pvalues
from tests.simulations import reps

_LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)
#: Random inputs beyond the exhaustive small ones (an identity oracle: each must match).
RANDOM_PROPORTIONS = reps(suite=400, full=4000)
RANDOM_TABLES = reps(suite=300, full=3000)
RANDOM_SIGN_TESTS = reps(suite=50, full=2000)


def _bits(value: Any) -> Any:
    """A float as its exact bits (``-0.0`` and ``0.0`` differ), anything else as it is; recursively."""
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, dict):
        return {k: _bits(v) for k, v in value.items()}
    return value


def _kappa_bits(kappa: Kappa) -> dict[str, Any]:
    fields = {f.name: getattr(kappa, f.name) for f in dataclasses.fields(kappa)}
    assert all(type(v) in {float, int, str, type(None)} for v in fields.values()), fields  # no numpy scalar
    return _bits(fields)


def _proportion_matches(x: int, n: int, level: float) -> None:
    result = proportion(x, n, confidence_level=level)
    low, high = wilson_interval(x / n, n, confidence_level=level)
    assert (result.ci_low.hex(), result.ci_high.hex()) == (low.hex(), high.hex()), (x, n, level)  # type: ignore[union-attr]


def test_wilson_intervals_are_numpys_on_every_small_count() -> None:
    for n in range(1, 41):
        for x in range(n + 1):
            for level in _LEVELS:
                _proportion_matches(x, n, level)


def test_wilson_intervals_are_numpys_on_random_counts() -> None:
    rng = random.Random(20261206)
    for _ in range(RANDOM_PROPORTIONS):
        n = rng.choice((rng.randint(41, 1000), rng.randint(1000, 10**7)))
        x = rng.choice((0, n, rng.randint(0, n), rng.randint(0, min(n, 5)), n - rng.randint(0, min(n, 5))))
        _proportion_matches(x, n, rng.choice((*_LEVELS, rng.uniform(0.01, 0.9999))))


def _kappa_matches(table: list[list[int]], level: float) -> None:
    small = cohens_kappa(table, confidence_level=level)
    numpys = cohens_kappa(np.array(table, dtype=np.int64), confidence_level=level)  # an array: numpy's path
    assert _kappa_bits(small) == _kappa_bits(numpys), (table, level)


def test_kappa_of_every_small_2x2_table_is_numpys() -> None:
    # Every table of at most 12 items (1,820), ones with an empty row or column and the degenerate ones included.
    for cells in itertools.product(range(13), repeat=4):
        if sum(cells) <= 12:
            a, b, c, d = cells
            _kappa_matches([[a, b], [c, d]], _LEVELS[sum(cells) % len(_LEVELS)])


def test_kappa_of_random_2x2_tables_is_numpys() -> None:
    rng = random.Random(49)
    for _ in range(RANDOM_TABLES):
        top = rng.choice((20, 300, 5000, 10**6))
        cells = [rng.randint(0, top) if rng.random() > 0.1 else 0 for _ in range(4)]
        _kappa_matches([cells[:2], cells[2:]], rng.choice((*_LEVELS, rng.uniform(0.01, 0.9999))))


@pytest.mark.parametrize(
    "table",
    [np.array([[3, 1], [2, 4]]), [[3.0, 1], [2, 4]], [[True, 1], [2, 4]], [[3, 1, 0], [2, 4, 0], [0, 0, 1]]],
    ids=["array", "a float", "a bool", "3x3"],
)
def test_kappa_of_other_tables_takes_numpys_path(table: Any) -> None:
    # Only a 2x2 table of Python ints takes the float path; these are numpy's, as before.
    assert cohens_kappa(table).estimate is not None


def test_kappa_refusals_are_numpys() -> None:
    for table in ([[0, 0], [0, 0]], [[5, 0], [0, 0]], [[3, 2], [0, 0]], [[4, 0], [0, 4]]):
        _kappa_matches(table, 0.95)
    with pytest.raises(ValueError, match="non-negative finite counts"):
        cohens_kappa([[-1, 2], [3, 4]])


def _sign_test_matches(successes: int, n: int) -> None:
    result = sign_test(successes, n)
    exact, midp = mcnemar_pvalues(n - successes, successes)
    assert (result.pvalue.hex(), result.midp_pvalue.hex()) == (float(exact).hex(), float(midp).hex()), (successes, n)  # type: ignore[union-attr]
    assert type(result.pvalue) is float
    assert type(result.midp_pvalue) is float


def test_sign_test_is_mcnemar_pvalues_on_every_small_count() -> None:
    for n in range(1, 121):
        for successes in range(n + 1):
            _sign_test_matches(successes, n)


def test_sign_test_is_mcnemar_pvalues_on_random_counts() -> None:
    rng = random.Random(7)
    for _ in range(RANDOM_SIGN_TESTS):
        n = rng.randint(121, EXACT_MAX_TRIALS)
        _sign_test_matches(rng.choice((rng.randint(0, n), n // 2, rng.randint(0, 3))), n)
    _sign_test_matches(EXACT_MAX_TRIALS // 3, EXACT_MAX_TRIALS + 1)  # above: mcnemar_pvalues itself (scipy)
