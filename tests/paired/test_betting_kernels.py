"""``paired.noninferiority._logsumexp_rows``' path for finite rows against the code it replaced, bit for bit.

The old function is kept below word for word (main ``266cfc3``); the new one takes a shorter path when every
entry is finite (the betting sums always are) and the old one otherwise.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

from gatestats.paired import noninferiority
from tests.hypothesis_counts import draws

FloatArray = npt.NDArray[np.float64]

#: Random arrays compared (each a few rows of a few columns).
ARRAYS = draws(600)


def _old_logsumexp_rows(a: FloatArray) -> FloatArray:
    """``scipy.special.logsumexp(a, axis=-1)`` of a 2-D float array, to the last bit: scipy's operations, in numpy.

    scipy's real-valued path (no weights, no sign; scipy 1.17, the lock's for Python 3.11) step by
    step: the largest entry of each row taken out (its count ``m``), the others' ``exp`` shifted by
    it summed, ``log1p(s) + log(m) + max``; where that is not finite, the direct
    ``log(sum(exp(a)))``. Its array-API dispatch cost ~60 us a call, more than the betting sum it
    ends (tests/gate/test_gate_call_costs.py
    compares the two on rows with ties, infinities, NaN and extreme values).
    """
    import numpy as np  # (the function body word for word: numpy imported on first use)

    if a.size == 0:
        return np.full(a.shape[:-1], -np.inf, dtype=a.dtype)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out_inf = np.log(np.sum(np.exp(a), axis=-1, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        a_max = np.max(a, axis=-1, keepdims=True)
        i_max = a == a_max
        shifted = a.copy()
        shifted[i_max] = -np.inf
        m = np.sum(i_max.astype(a.dtype), axis=-1, keepdims=True, dtype=a.dtype)
        s = np.sum(np.exp(shifted - a_max), axis=-1, keepdims=True, dtype=a.dtype)
        s = np.where(s == 0, s, s / m)
        sgn = np.sign(s + 1) * np.sign(m)
        s = np.where(s < -1, -s - 2, s)
        out = np.log1p(s) + np.log(np.abs(m)) + a_max
        out[sgn < 0] = np.nan
    found: FloatArray = np.squeeze(np.where(np.isfinite(out), out, out_inf), axis=-1)
    return found


def _arrays(rng: np.random.Generator) -> list[npt.NDArray[np.floating]]:
    """Rows of every kind the old path tells apart: ties at the top, huge and tiny magnitudes, signed zeros,
    one column, infinities and NaN (the old path's own), a float32 array."""
    found: list[npt.NDArray[np.floating]] = [
        np.zeros((1, 40)),
        -np.zeros((2, 40)),
        np.full((3, 40), -1e308),
        np.full((1, 40), 1.7976931348623157e308),
        np.array([[1.7976931348623157e308, -1.7976931348623157e308, 0.0]]),
        np.array([[5e-324, -5e-324, 0.0, -0.0]]),
        np.array([[np.inf, 1.0], [-np.inf, 1.0], [-np.inf, -np.inf], [np.nan, 0.0], [np.inf, -np.inf]]),
        np.zeros((0, 40)),
        np.zeros((3, 0)),
        np.arange(12.0, dtype=np.float32).reshape(3, 4),
    ]
    for _ in range(ARRAYS):
        rows, cols = int(rng.integers(1, 20)), int(rng.choice([1, 2, 3, 7, 8, 9, 16, 40, 41, 129]))
        scale = float(rng.choice([1e-300, 1e-8, 1.0, 30.0, 700.0, 1e5, 1e300]))
        a = rng.normal(0.0, scale, (rows, cols))
        kind = int(rng.integers(0, 5))
        if kind == 1:  # ties, at the top too
            a = np.round(a / scale * 2) * scale
        elif kind == 2:  # the top repeated in every row
            a[:, : max(1, cols // 2)] = a.max(axis=1, keepdims=True)
        elif kind == 3 and a.size > 1:  # one special value
            a.flat[int(rng.integers(0, a.size))] = float(rng.choice([np.inf, -np.inf, np.nan]))
        found.append(a)
    return found


def test_finite_rows_give_the_old_logsumexp_bit_for_bit() -> None:
    finite = 0
    for a in _arrays(np.random.default_rng(4901)):
        with warnings.catch_warnings(record=True) as old_warnings:
            warnings.simplefilter("always")
            old = _old_logsumexp_rows(a)
        with warnings.catch_warnings(record=True) as new_warnings:
            warnings.simplefilter("always")
            new = noninferiority._logsumexp_rows(a)
        assert (old.shape, old.dtype) == (new.shape, new.dtype), a
        assert old.tobytes() == new.tobytes(), a  # every bit: signed zeros and NaN payloads too
        assert [str(w.message) for w in old_warnings] == [str(w.message) for w in new_warnings], a
        finite += bool(a.size) and a.dtype == np.float64 and bool(np.isfinite(a).all())
    assert finite >= 0.5 * ARRAYS  # the new path ran on most of them
