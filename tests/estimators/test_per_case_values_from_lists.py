"""``per_case_values`` builds its columns from lists, not numpy arrays (session 41): the same doubles, bit for bit.

polars builds a Series from a numpy array through ``numpy.ma`` (≈ 25 ms of import on every paired command's
path); from a list of Python floats (each the same double as the array's) it does not. The old construction
is kept here as the reference.
"""

from __future__ import annotations

import struct

import numpy as np
import polars as pl
import pytest

from gatestats.estimators.passk import case_values, per_case_values
from tests.simulations import reps

#: Seeded random frames compared (issue 28, item 3, session 47): an identity oracle, the first 10 of the 300 in the
#: suite (the floor of a random loop, tests.hypothesis_counts.FLOOR), all 300 on demand (benchmarks/simulations_full.py).
#: Each planted break (benchmarks/RESULTS.md) fails by the second frame, for both metrics.
FRAMES = reps(suite=10, full=300)


def _old(frame: pl.DataFrame, *, k: int, metric: str) -> pl.DataFrame:
    """The construction until session 41: Series from the numpy arrays."""
    result = case_values(frame["n"].to_numpy(), frame["c"].to_numpy(), k=k, metric=metric)  # type: ignore[arg-type]
    value = pl.Series("value", result.values, dtype=pl.Float64)
    return frame.with_columns(pl.when(pl.Series(result.defined)).then(value).alias("value"))


def _bits(values: list[float | None]) -> list[bytes | None]:
    return [None if v is None else struct.pack("<d", v) for v in values]


@pytest.mark.parametrize("metric", ["pass_at_k", "pass_hat_k"])
def test_the_values_are_the_old_constructions_bit_for_bit(metric: str) -> None:
    rng = np.random.default_rng(41)
    for _ in range(FRAMES):
        size = int(rng.integers(1, 60))
        n = rng.integers(1, 40, size=size)
        c = np.minimum(n, rng.integers(0, 40, size=size))
        frame = pl.DataFrame({"n": n, "c": c})
        k = int(rng.integers(1, 12))
        new, old = per_case_values(frame, k=k, metric=metric), _old(frame, k=k, metric=metric)  # type: ignore[arg-type]
        assert new.schema == old.schema
        assert _bits(new["value"].to_list()) == _bits(old["value"].to_list())
        assert new.drop("value").equals(old.drop("value"))


def test_no_numpy_ma_is_imported() -> None:
    import subprocess
    import sys

    code = (
        "import sys, polars as pl\n"
        "from gatestats.estimators.passk import per_case_values\n"
        "per_case_values(pl.DataFrame({'n': [4, 1, 3], 'c': [2, 1, 0]}), k=2, metric='pass_hat_k')\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
