"""numpy's reductions of float64 rows as pure Python, adding in numpy's order: the same floats, bit for bit.

``analyze``'s default path on a small input computes without numpy (issue 28, item 2: numpy's import
is about a third of ``import polars``), and must print the digits numpy's path prints. Element-wise
arithmetic (``+ - * /``, ``sqrt``) is correctly rounded in both; what differs is the order in which a
reduction adds, which these functions follow:

- ``x.mean()`` / ``x.var(ddof=...)`` of a contiguous float64 row (1-D, or each row of a C-contiguous
  2-D array with ``axis=1``): numpy's pairwise summation (``pairwise_sum`` in ``loops_utils.h.src``)
  started from ``0.0``: fewer than 8 values added in turn; up to 128 in 8 running sums combined as
  ``((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))`` and the rest added in turn; more split at half rounded down
  to a multiple of 8 and the halves' sums added. ``var`` is that sum of ``(x - mean) * (x - mean)``
  over ``n - ddof``.
- ``np.einsum("ij,ij->i", d, d)``: two lanes (the x86-64 baseline's 128-bit vectors), blocks of four
  vectors added into each lane from the last vector to the first, the tail a vector at a time padded
  with zeros, the lanes added, then added to ``0.0`` (the output's start). No fused multiply-add on the
  baseline.

These hold for numpy 2.4.6 (the lock's) on x86-64, with ``NPY_DISABLE_CPU_FEATURES=X86_V3`` as
without; an Arm build (NEON's fused ``vfma`` in einsum) or a numpy that dispatches einsum by CPU
would add differently. :data:`PROVED_FOR` names what they were proved against:
``tests/estimators/test_numpy_order.py`` compares them with numpy on random rows and fails on any
other numpy or machine; ``benchmarks/numpy_reduction_order.py`` runs the same comparison at scale.

References
----------
numpy ``numpy/_core/src/umath/loops_utils.h.src`` (``pairwise_sum``) and
``numpy/_core/src/multiarray/einsum_sumprod.c.src`` (``sum_of_products_contig_contig_outstride0_two``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = ["PROVED_FOR", "einsum_row_dot", "pairwise_sum", "row_mean", "row_var"]

#: The numpy version and machine these models were proved against (``numpy.__version__``, ``platform.machine()``).
PROVED_FOR: Final = ("2.4.6", "x86_64")
#: numpy's pairwise block: up to this many values are summed in 8 running sums (``PW_BLOCKSIZE``).
_BLOCK: Final = 128


def pairwise_sum(values: Sequence[float], start: int = 0, count: int | None = None) -> float:
    """numpy's ``pairwise_sum`` of ``values[start:start + count]`` (float64, contiguous).

    Parameters
    ----------
    values
        The row, as Python floats.
    start
        The first value summed.
    count
        How many values are summed (``None``: to the end of ``values``).

    Returns
    -------
    float
        The sum, in numpy's order of additions (the reduction's initial ``0.0`` not added).

    Examples
    --------
    >>> pairwise_sum([0.1] * 10)
    1.0
    >>> sum([0.1] * 10)
    0.9999999999999999
    """
    n = len(values) - start if count is None else count
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += values[i]
        return total
    if n <= _BLOCK:
        sums = list(values[start : start + 8])
        whole = n - n % 8
        for i in range(start + 8, start + whole, 8):
            sums = [sums[j] + values[i + j] for j in range(8)]
        total = ((sums[0] + sums[1]) + (sums[2] + sums[3])) + ((sums[4] + sums[5]) + (sums[6] + sums[7]))
        for i in range(start + whole, start + n):
            total += values[i]
        return total
    half = n // 2
    half -= half % 8
    return pairwise_sum(values, start, half) + pairwise_sum(values, start + half, n - half)


def row_mean(values: Sequence[float]) -> float:
    """``x.mean()`` of a contiguous float64 row: ``0.0`` plus the pairwise sum, over ``n``.

    Parameters
    ----------
    values
        The row (at least one value).

    Returns
    -------
    float
        numpy's mean, bit for bit.

    Examples
    --------
    >>> row_mean([1.0, 0.0, 0.0])
    0.3333333333333333
    """
    return (0.0 + pairwise_sum(values)) / len(values)


def row_var(values: Sequence[float], ddof: int = 0) -> float:
    """``x.var(ddof=ddof)`` of a contiguous float64 row: the pairwise sum of squared deviations, over ``n - ddof``.

    Parameters
    ----------
    values
        The row (more than ``ddof`` values).
    ddof
        Delta degrees of freedom, as numpy's.

    Returns
    -------
    float
        numpy's variance, bit for bit.

    Examples
    --------
    >>> row_var([1.0, 0.0, 0.0, 1.0], ddof=1)
    0.3333333333333333
    """
    mean = row_mean(values)
    return (0.0 + pairwise_sum([(x - mean) * (x - mean) for x in values])) / (len(values) - ddof)


def einsum_row_dot(values: Sequence[float]) -> float:
    """``np.einsum("ij,ij->i", d, d)[i]`` for the row ``values`` (x86-64 baseline: two lanes, no FMA).

    Parameters
    ----------
    values
        The row ``d[i]``.

    Returns
    -------
    float
        The sum of squares in einsum's order of additions, bit for bit.

    Examples
    --------
    >>> einsum_row_dot([1.0, 2.0, 3.0])
    14.0
    """
    lanes = [0.0, 0.0]
    n, i = len(values), 0
    while n - i >= 8:  # four vectors of two lanes, added from the last to the first
        for lane in range(2):
            total = lanes[lane]
            for vector in (3, 2, 1, 0):
                x = values[i + 2 * vector + lane]
                total = x * x + total
            lanes[lane] = total
        i += 8
    while i < n:  # the tail, a vector at a time, padded with zeros
        for lane in range(2):
            x = values[i + lane] if i + lane < n else 0.0
            lanes[lane] = x * x + lanes[lane]
        i += 2
    return 0.0 + (lanes[0] + lanes[1])
