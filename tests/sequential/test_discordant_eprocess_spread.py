"""``discordant_eprocess`` evaluates its mixtures once per distinct (wins, losses): the same doubles.

Issue 28, item 3 (session 46): a concordant case repeats the counts before it, so the mixtures are computed on
the cases that change them and spread over the others. The reference is the function as it was: both mixtures
at every case.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gatestats.sequential import eprocess
from gatestats.sequential.eprocess import discordant_eprocess


def _at_every_case(d: npt.NDArray[np.float64], prior: float) -> tuple[npt.NDArray[np.float64], ...]:
    """Wins, losses and both e-processes with the mixtures evaluated at every case (the computation before)."""
    wins = np.cumsum(d > 0, dtype=np.int64)
    losses = np.cumsum(d < 0, dtype=np.int64)
    w, lo = wins.astype(np.float64), losses.astype(np.float64)
    return wins, losses, np.exp(eprocess._half_mixture(w, lo, prior)), np.exp(eprocess._half_mixture(lo, w, prior))


def _hex(values: npt.NDArray[np.float64]) -> list[str]:
    return [float(x).hex() for x in values]


def test_the_e_processes_are_those_evaluated_at_every_case_bit_for_bit() -> None:
    rng = np.random.default_rng(46)
    sequences = [np.array([]), np.array([0.0]), np.array([-0.0, 0.0, 2.5]), np.array([1.0]), np.zeros(30)]
    for _ in range(80):
        n = int(rng.choice([int(rng.integers(1, 20)), int(rng.integers(20, 400))]))
        share = float(rng.choice([0.0, 0.05, 0.3, 0.7, 1.0]))
        sign = np.where(rng.random(n) < rng.uniform(0.2, 0.8), 1.0, -1.0) * rng.choice([1.0, 0.5, 3.0], n)
        sequences.append(np.where(rng.random(n) < share, sign, rng.choice([0.0, -0.0], n)))
    for i, d in enumerate(sequences):
        prior = (0.5, 1.0, 2.0, 0.1, 7)[i % 5]
        got = discordant_eprocess(d, prior=prior)
        wins, losses, better, worse = _at_every_case(d, prior)
        assert got.wins.tolist() == wins.tolist()
        assert got.losses.tolist() == losses.tolist()
        assert _hex(got.better) == _hex(better), (i, prior)
        assert _hex(got.worse) == _hex(worse), (i, prior)
        assert got.better.shape == got.worse.shape == (d.size,)
