r"""Human time without double counting: merge a reviewer's intervals, attribute the merged time.

A reviewer who works on two outcomes at once spends the overlap once. Per reviewer, the union of
their review and correction intervals is the human time (:func:`merge_intervals`); overlapping or
touching intervals count once. To give every case its part of that time (the case-level bootstrap
resamples cases), :func:`attribute_overlaps` splits each *elementary segment* (the pieces between
consecutive interval end points of one reviewer) equally among the intervals that cover it:

.. math::

    h_i = \sum_{k:\ [t_k, t_{k+1}] \subseteq [s_i, e_i]} \frac{t_{k+1} - t_k}{m_k},
    \qquad m_k = \#\{j : s_j \le t_k,\ e_j \ge t_{k+1}\},

so :math:`\sum_i h_i` equals the merged length. The split is symmetric in the intervals (no
dependence on their order) and an interval never receives more than its own length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["attribute_overlaps", "merge_intervals"]


def _as_bounds(starts: npt.ArrayLike, ends: npt.ArrayLike) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    s = np.asarray(starts, dtype=np.float64).ravel()
    e = np.asarray(ends, dtype=np.float64).ravel()
    if s.shape != e.shape:
        msg = f"starts and ends must have the same length (got {s.size} starts and {e.size} ends)"
        raise ValueError(msg)
    if not (np.isfinite(s).all() and np.isfinite(e).all()):
        msg = "starts and ends must be finite numbers (got NaN or infinity)"
        raise ValueError(msg)
    bad = np.flatnonzero(e < s)
    if bad.size:
        i = int(bad[0])
        msg = f"interval {i} ends before it starts (got start {s[i]:g}, end {e[i]:g})"
        raise ValueError(msg)
    return s, e


def merge_intervals(
    starts: npt.ArrayLike, ends: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Union of closed intervals ``[starts[i], ends[i]]``: disjoint, sorted, touching ones joined.

    Parameters
    ----------
    starts, ends
        Interval end points (any unit, e.g. seconds); ``ends >= starts``.

    Returns
    -------
    tuple of numpy.ndarray
        Start and end points of the merged intervals, sorted.

    Raises
    ------
    ValueError
        Different lengths, non-finite values, or an interval that ends before it starts.

    Examples
    --------
    >>> s, e = merge_intervals([0, 30, 60, 100], [45, 60, 70, 110])
    >>> s.tolist(), e.tolist(), float((e - s).sum())
    ([0.0, 100.0], [70.0, 110.0], 80.0)
    """
    s, e = _as_bounds(starts, ends)
    if s.size == 0:
        return s, e
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    # A new merged interval starts where the start lies beyond everything reached so far.
    new = np.ones(s.size, dtype=np.bool_)
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, s.size - 1)
    return s[first], reach[last]


def attribute_overlaps(
    starts: npt.ArrayLike,
    ends: npt.ArrayLike,
    *,
    owners: Sequence[Any] | npt.NDArray[Any] | None = None,
) -> npt.NDArray[np.float64]:
    """Share of the merged time of each interval's owner that each interval carries.

    Intervals of the same owner (reviewer) that overlap split the overlap equally (see the module
    docstring); intervals of different owners never interact. An owner ``None`` is an unknown
    reviewer: such an interval is its own owner and keeps its full length.

    Parameters
    ----------
    starts, ends
        Interval end points (any unit); ``ends >= starts``.
    owners
        One owner per interval (hashable; ``None`` = unknown); ``None``: all share one owner.

    Returns
    -------
    numpy.ndarray
        One share per interval; per owner the shares sum to the length of the merged intervals.

    Examples
    --------
    Two intervals of one reviewer overlapping by 15 minutes, and a third of someone else:

    >>> attribute_overlaps([0, 30, 0], [45, 60, 60], owners=["ann", "ann", "bob"]).tolist()
    [37.5, 22.5, 60.0]
    """
    s, e = _as_bounds(starts, ends)
    n = s.size
    if owners is None:
        codes = np.zeros(n, dtype=np.int64)
    else:
        owner_list = list(owners)
        if len(owner_list) != n:
            msg = f"owners must name one owner per interval (got {len(owner_list)} owners for {n} intervals)"
            raise ValueError(msg)
        seen: dict[Any, int] = {}
        codes = np.arange(n, dtype=np.int64)  # unknown owners: a fresh code each
        for i, owner in enumerate(owner_list):
            if owner is not None:
                codes[i] = seen.setdefault(owner, i)
    if n == 0:
        return np.zeros(0)
    # Events sorted by (owner, time); a global running count works because every owner's count
    # returns to zero before the next owner's events begin.
    event_owner = np.concatenate([codes, codes])
    event_time = np.concatenate([s, e])
    delta = np.concatenate([np.ones(n), -np.ones(n)])
    order = np.lexsort((event_time, event_owner))
    t, o, d = event_time[order], event_owner[order], delta[order]
    count = np.cumsum(d)
    length = np.zeros(t.size)
    same = o[1:] == o[:-1]
    length[:-1] = np.where(same, t[1:] - t[:-1], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(count > 0.5, length / count, 0.0)
    prefix = np.concatenate([[0.0], np.cumsum(rate)])
    position = np.empty(2 * n, dtype=np.int64)
    position[order] = np.arange(2 * n)
    shares: npt.NDArray[np.float64] = prefix[position[n:]] - prefix[position[:n]]
    # Guard against rounding below zero or above the interval's own length.
    return np.clip(shares, 0.0, e - s)
