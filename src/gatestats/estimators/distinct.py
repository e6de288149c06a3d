"""The distinct rows of a two-column float array, as ``np.unique(axis=0)`` gives them, in a fraction of its time.

The bootstrap engines (:mod:`gatestats.estimators.intervals` for case means,
:mod:`gatestats.paired.trials` for paired differences) reduce each resample to counts over the
distinct (sum, size) pairs of the units; this is where those pairs are found.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["distinct_pairs"]


def distinct_pairs(pairs: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.intp]]:
    """``np.unique(pairs, axis=0, return_inverse=True)`` for an ``(n, 2)`` float array, by a lexicographic argsort.

    ``np.unique`` sorts a structured view of the rows with numpy's generic field comparison, ~10x
    slower (1.3 s for 250 samples of 5,000 units). Without NaN and ``-0.0`` two floats are equal exactly
    when their bits are, and both sorts order the rows by the first column, then the second: the
    support, its order and the codes are ``np.unique``'s (tests/estimators/test_distinct_pairs.py).
    With a NaN or a ``-0.0`` (or no rows) this is ``np.unique`` itself.

    Parameters
    ----------
    pairs
        The rows, shape ``(n, 2)``.

    Returns
    -------
    tuple of numpy.ndarray
        The distinct rows in lexicographic order, and each input row's index among them.

    Examples
    --------
    >>> support, code = distinct_pairs(np.array([[2.0, 1.0], [1.0, 3.0], [2.0, 1.0]]))
    >>> support.tolist(), code.tolist()
    ([[1.0, 3.0], [2.0, 1.0]], [1, 0, 1])
    """
    if pairs.shape[0] == 0 or np.isnan(pairs).any() or bool((np.signbit(pairs) & (pairs == 0)).any()):
        support, code = np.unique(pairs, axis=0, return_inverse=True)
        return support, code.ravel()
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    ordered = pairs[order]
    first = np.empty(ordered.shape[0], dtype=bool)
    first[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=first[1:])
    code = np.empty(ordered.shape[0], dtype=np.intp)
    code[order] = np.cumsum(first) - 1
    return ordered[first], code
