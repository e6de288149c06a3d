"""The cost bootstrap draws the same resamples, to the last bit, whatever BLAS's thread count (session 36).

The resample sums were ``counts @ columns``, a BLAS matrix product whose rounding depends on its
thread count: up to 2e-13 apart between one and two OpenBLAS threads at 1,000-12,500 cases, and
``gatestats cost --json`` printed ``ci_high`` 0.14699448687012062 on one thread and
0.1469944868701206 on two: the same seed, other digits on another machine. They are summed in a
fixed order now. BLAS's thread count is fixed when numpy loads, hence the child processes.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: The draws of the cost per accepted outcome's bootstrap (``ratio_bootstrap``) at the unit counts
#: and column counts where the product's digits moved, hashed.
_CODE = """
import hashlib, numpy as np
from gatestats.cost._bootstrap import cpa_statistic, ratio_bootstrap
digest = hashlib.sha256()
for units, m in ((1000, 3), (1000, 6), (500, 4), (5000, 4), (12500, 5)):
    columns = np.random.default_rng(1).gamma(2.0, 0.05, size=(units, m))
    columns[:, 1] = np.random.default_rng(2).integers(0, 2, size=units)  # accepted outcomes
    boot = ratio_bootstrap(columns, cpa_statistic, n_resamples=2000, rng=np.random.default_rng(3))
    digest.update(boot.draws.tobytes())
print(digest.hexdigest())
"""


def _draws(threads: str) -> str:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    done = subprocess.run([sys.executable, "-c", _CODE], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: BLAS runs one thread whatever it is told")
def test_the_cost_bootstrap_draws_the_same_bits_on_one_and_two_blas_threads() -> None:
    assert _draws("1") == _draws("2")
