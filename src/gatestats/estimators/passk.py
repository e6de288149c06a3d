r"""Unbiased per-case pass@k and pass^k, computed exactly.

For a case with ``n`` valid trials of which ``c`` passed:

.. math::

    \widehat{\text{pass@}k} = 1 - \frac{\binom{n-c}{k}}{\binom{n}{k}}
    \qquad
    \widehat{\text{pass}^k} = \frac{\binom{c}{k}}{\binom{n}{k}}

both unbiased for the probability that at least one (resp. all) of ``k`` fresh trials succeed,
provided ``k <= n``. Each case uses its *own* ``n`` (τ-bench's script uses one global trial
count, which mis-scores a case with a missing trial). For ``k > n`` the estimator is undefined:
the case is reported, never truncated or scored 0.

Values are computed as exact rationals (``fractions.Fraction``) once per distinct ``(n, c)``
pair and joined onto the cases, so a million cases cost a handful of exact evaluations.

References
----------
Chen, M. et al. (2021). Evaluating Large Language Models Trained on Code. arXiv:2107.03374,
    section 2.1 and Figure 3 (the numerically stable product form).
Yao, S., Shinn, N., Razavi, P. & Narasimhan, K. (2024). τ-bench: A Benchmark for Tool-Agent-User
    Interaction in Real-World Domains. arXiv:2406.12045, section 4 (pass^k).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import comb, lcm, prod
from typing import TYPE_CHECKING, get_args

import polars as pl

from gatestats.vocabulary import FrameLike, Metric, check_choice

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "CasePairs",
    "CaseValues",
    "case_pairs",
    "case_values",
    "counted_values",
    "exact_case_sum",
    "pair_values",
    "pass_at_k",
    "pass_at_k_exact",
    "pass_hat_k",
    "pass_hat_k_exact",
    "per_case_values",
]


def _check(n: int, c: int, k: int) -> None:
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int):
            msg = f"{name} must be an integer (got {value!r})"
            raise TypeError(msg)
    if k < 1:
        msg = f"k must be >= 1 (got {k})"
        raise ValueError(msg)
    if not 0 <= c <= n:
        msg = f"successes c must satisfy 0 <= c <= n (got c={c}, n={n})"
        raise ValueError(msg)
    if k > n:
        msg = f"pass@k and pass^k are undefined for k > n (got k={k}, n={n} valid trials)"
        raise ValueError(msg)


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """Exact unbiased pass@k of one case: ``1 - C(n-c, k) / C(n, k)``.

    Parameters
    ----------
    n
        Valid trials of the case.
    c
        Passed trials, ``0 <= c <= n``.
    k
        Trials per draw, ``1 <= k <= n``.

    Returns
    -------
    fractions.Fraction
        The estimate as an exact rational.

    Raises
    ------
    TypeError
        ``n``, ``c`` or ``k`` is not an integer.
    ValueError
        ``k < 1``, ``c`` outside [0, n], or ``k > n`` (undefined).

    Examples
    --------
    >>> pass_at_k_exact(4, 1, 2)
    Fraction(1, 2)
    """
    _check(n, c, k)
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def pass_hat_k_exact(n: int, c: int, k: int) -> Fraction:
    """Exact unbiased pass^k of one case: ``C(c, k) / C(n, k)``.

    Parameters
    ----------
    n, c, k
        Valid trials, passed trials and trials per draw, as in :func:`pass_at_k_exact`.

    Returns
    -------
    fractions.Fraction
        The estimate as an exact rational (zero when ``c < k``).

    Raises
    ------
    TypeError, ValueError
        As in :func:`pass_at_k_exact`.

    Examples
    --------
    >>> pass_hat_k_exact(4, 3, 2), pass_hat_k_exact(4, 1, 2)
    (Fraction(1, 2), Fraction(0, 1))
    """
    _check(n, c, k)
    return Fraction(comb(c, k), comb(n, k))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one case in Chen et al.'s numerically stable product form.

    .. math:: 1 - \\prod_{i=n-c+1}^{n} \\left(1 - \\frac{k}{i}\\right)

    Parameters
    ----------
    n, c, k
        Valid trials, passed trials and trials per draw, ``1 <= k <= n`` (see :func:`pass_at_k_exact`).

    Returns
    -------
    float
        The estimate (exactly 1.0 when ``n - c < k``: every draw holds a pass).

    Raises
    ------
    TypeError
        A non-integer argument.
    ValueError
        An argument out of range, ``k > n`` included (see :func:`pass_at_k_exact`).

    Examples
    --------
    >>> round(pass_at_k(200, 13, 10), 6)
    0.497551
    """
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k of one case, ``C(c, k) / C(n, k)``, as a product of ratios.

    .. math:: \\prod_{j=0}^{k-1} \\frac{c - j}{n - j}

    Parameters
    ----------
    n, c, k
        Valid trials, passed trials and trials per draw; the same value as :func:`pass_hat_k_exact`, as a float.

    Returns
    -------
    float
        The estimate (exactly 0.0 when ``c < k``: no draw can be all passes).

    Raises
    ------
    TypeError, ValueError
        As in :func:`pass_at_k_exact`: ``k > n`` is undefined, not 0.

    Examples
    --------
    >>> pass_hat_k(4, 2, 2)
    0.16666666666666666
    """
    _check(n, c, k)
    if c < k:
        return 0.0
    return prod((c - j) / (n - j) for j in range(k))


def _exact(metric: Metric) -> Callable[[int, int, int], Fraction]:
    check_choice(metric, get_args(Metric), "metric")
    return pass_at_k_exact if metric == "pass_at_k" else pass_hat_k_exact


@lru_cache(maxsize=1 << 16)
def _kept_value(metric: Metric, n: int, c: int, k: int) -> tuple[Fraction, float]:
    """One pair's exact value and its float, kept: the curves of a gate ask for the same ``(n, c, k)``
    at every call (a simulation's replications, the bounds of unresolved attempts)."""
    value = _exact(metric)(n, c, k)
    return value, float(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseValues:
    """Per-case estimates of one metric at one k, computed once per distinct ``(n, c)`` pair.

    ``values`` holds one float per case (NaN where ``n < k``: undefined); ``defined`` marks the
    cases with ``n >= k``; ``exact_sum`` is the exact sum over the defined cases.
    """

    values: npt.NDArray[np.float64]
    defined: npt.NDArray[np.bool_]
    exact_sum: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class CasePairs:
    """The distinct ``(n, c)`` pairs of a set of cases, and which pair each case has.

    Built once by :func:`case_pairs` and reused for every k and metric: the per-case values of
    any estimator are a lookup of one exact value per distinct pair.
    """

    #: Valid trials of each distinct pair.
    n: npt.NDArray[np.int64]
    #: Successes of each distinct pair.
    c: npt.NDArray[np.int64]
    #: How many cases have each pair.
    counts: npt.NDArray[np.int64]
    #: The pair of each case (an index into ``n``, ``c`` and ``counts``).
    inverse: npt.NDArray[np.intp]
    #: Valid trials of each case.
    case_n: npt.NDArray[np.int64]


def case_pairs(n: npt.ArrayLike, c: npt.ArrayLike) -> CasePairs:
    """Group cases by their ``(n, c)`` pair (one sort of the cases).

    Parameters
    ----------
    n
        Valid trials per case.
    c
        Passed trials per case.

    Returns
    -------
    CasePairs
        The distinct pairs, their counts and each case's pair.

    Raises
    ------
    ValueError
        ``n`` and ``c`` of different lengths (they need one value per case).

    Examples
    --------
    >>> pairs = case_pairs([4, 4, 1, 4], [4, 2, 1, 2])
    >>> pairs.n.tolist(), pairs.c.tolist(), pairs.counts.tolist(), pairs.inverse.tolist()
    ([1, 4, 4], [1, 2, 4], [1, 2, 1], [2, 1, 0, 1])
    """
    import numpy as np  # noqa: PLC0415 - analyze's path on a small input never groups cases with numpy (small.py)

    n_arr = np.asarray(n, dtype=np.int64).ravel()
    c_arr = np.asarray(c, dtype=np.int64).ravel()
    if n_arr.shape != c_arr.shape:
        msg = f"n and c must have one value per case (got {n_arr.size} and {c_arr.size})"
        raise ValueError(msg)
    codes = n_arr * (int(n_arr.max(initial=0)) + 1) + c_arr
    _, first, inverse, counts = np.unique(codes, return_index=True, return_inverse=True, return_counts=True)
    return CasePairs(
        n=n_arr[first],
        c=c_arr[first],
        counts=counts.astype(np.int64),
        inverse=inverse.astype(np.intp).ravel(),
        case_n=n_arr,
    )


def pair_values(pairs: CasePairs, *, k: int, metric: Metric) -> CaseValues:
    """Per-case pass@k or pass^k from the cases' distinct ``(n, c)`` pairs.

    One exact (rational) evaluation per distinct pair with ``n >= k``, mapped back onto the cases.

    Parameters
    ----------
    pairs
        The cases' pairs (see :func:`case_pairs`).
    k
        Trials per draw; a pair with ``n < k`` gets NaN.
    metric
        ``pass_at_k`` or ``pass_hat_k``.

    Returns
    -------
    CaseValues
        As :func:`case_values`.

    Raises
    ------
    ValueError
        An unknown metric, or ``k < 1``.

    Examples
    --------
    >>> pair_values(case_pairs([4, 4, 1], [4, 2, 1]), k=2, metric="pass_hat_k").exact_sum
    Fraction(7, 6)
    """
    import numpy as np  # noqa: PLC0415 - see case_pairs

    _exact(metric)  # checked
    floats, total = counted_values(
        zip(pairs.n.tolist(), pairs.c.tolist(), pairs.counts.tolist(), strict=True), k, metric
    )
    table = np.array(floats, dtype=np.float64)
    return CaseValues(values=table[pairs.inverse], defined=pairs.case_n >= k, exact_sum=total)


def counted_values(pairs: Iterable[tuple[int, int, int]], k: int, metric: Metric) -> tuple[list[float], Fraction]:
    """Each distinct pair's value (NaN where ``n < k``) and the exact sum over the cases, from ``(n, c, count)``.

    The one computation of :func:`pair_values` (numpy's arrays around it) and of ``analyze``'s path on a
    small input (:mod:`gatestats.estimators.small`, lists around it).

    Parameters
    ----------
    pairs
        The distinct ``(n, c)`` pairs, each with how many cases have it.
    k
        Trials per draw; a pair with ``n < k`` gets NaN and adds nothing to the sum.
    metric
        ``pass_at_k`` or ``pass_hat_k`` (checked by the caller).

    Returns
    -------
    tuple of (list of float, fractions.Fraction)
        The pairs' values, in their order, and the exact sum of every case's value.

    Examples
    --------
    >>> counted_values([(4, 4, 1), (4, 2, 1), (1, 1, 1)], 2, "pass_hat_k")
    ([1.0, 0.16666666666666666, nan], Fraction(7, 6))
    """
    floats: list[float] = []
    # the exact sum over a common denominator in integers, one Fraction at the end (in lowest
    # terms, as every Fraction is: the same value as adding the Fractions one by one, faster)
    numerator, denominator = 0, 1
    for n_j, c_j, count in pairs:
        if n_j < k:
            floats.append(math.nan)
            continue
        value, as_float = _kept_value(metric, n_j, c_j, int(k))
        floats.append(as_float)
        if denominator % value.denominator:
            common = lcm(denominator, value.denominator)
            numerator *= common // denominator
            denominator = common
        numerator += count * value.numerator * (denominator // value.denominator)
    return floats, Fraction(numerator, denominator)


def case_values(n: npt.ArrayLike, c: npt.ArrayLike, *, k: int, metric: Metric) -> CaseValues:
    """Per-case pass@k or pass^k for arrays of valid trials ``n`` and successes ``c``.

    One exact (rational) evaluation per distinct ``(n, c)`` pair, mapped back onto the cases:
    a million cases cost a handful of exact evaluations. For several k or metrics over the same
    cases, group them once with :func:`case_pairs` and call :func:`pair_values`.

    Parameters
    ----------
    n
        Valid trials per case.
    c
        Passed trials per case.
    k
        Trials per draw.
    metric
        The estimator, ``pass_at_k`` or ``pass_hat_k``.

    Returns
    -------
    CaseValues
        Per-case values (NaN where ``n < k``), which cases are defined, and the exact sum.

    Raises
    ------
    ValueError
        An unknown metric, or ``n`` and ``c`` of different lengths.

    Examples
    --------
    >>> r = case_values([4, 4, 1], [4, 2, 1], k=2, metric="pass_hat_k")
    >>> r.values.round(4).tolist(), r.defined.tolist(), r.exact_sum
    ([1.0, 0.1667, nan], [True, True, False], Fraction(7, 6))
    """
    _exact(metric)
    return pair_values(case_pairs(n, c), k=k, metric=metric)


def per_case_values(summary: FrameLike, *, k: int, metric: Metric) -> pl.DataFrame:
    """Attach the per-case estimate for ``metric`` at ``k`` as column ``value``.

    ``summary`` has integer columns ``n`` and ``c`` (see :func:`case_summary`). Cases with
    ``n < k`` get a null value (undefined, never 0).

    Parameters
    ----------
    summary
        Per-case counts with integer columns ``n`` and ``c`` (a DataFrame or a LazyFrame).
    k
        Trials per draw; a case with ``n < k`` gets a null ``value``.
    metric
        ``pass_at_k`` or ``pass_hat_k``.

    Returns
    -------
    polars.DataFrame
        ``summary`` with a ``value`` column.

    Raises
    ------
    ValueError
        An unknown metric.

    Examples
    --------
    >>> import polars as pl
    >>> per_case_values(pl.DataFrame({"n": [4, 1], "c": [2, 1]}), k=2, metric="pass_hat_k")["value"].to_list()
    [0.16666666666666666, None]
    """
    frame = summary.lazy().collect() if isinstance(summary, pl.LazyFrame) else summary
    result = case_values(frame["n"].to_numpy(), frame["c"].to_numpy(), k=k, metric=metric)
    # From lists, not the arrays: polars builds a Series from a numpy array through numpy.ma (its masks), an
    # import of ~25 ms on every paired command's path; a float64's Python float is the same double.
    value = pl.Series("value", result.values.tolist(), dtype=pl.Float64)
    return frame.with_columns(pl.when(pl.Series(result.defined.tolist(), dtype=pl.Boolean)).then(value).alias("value"))


def exact_case_sum(summary: FrameLike, *, k: int, metric: Metric) -> Fraction:
    """Exact sum over cases of the per-case estimate (all cases must have ``n >= k``).

    The mean over cases is this sum divided by the number of cases: the exact numerator and
    denominator behind every printed estimate.

    Parameters
    ----------
    summary
        Per-case counts with integer columns ``n`` and ``c``.
    k
        Trials per draw; every case needs ``n >= k``.
    metric
        ``pass_at_k`` or ``pass_hat_k``.

    Returns
    -------
    fractions.Fraction
        The exact sum.

    Raises
    ------
    ValueError
        An unknown metric, or a case with ``n < k`` (undefined).

    Examples
    --------
    >>> import polars as pl
    >>> exact_case_sum(pl.DataFrame({"n": [4, 4, 4], "c": [4, 2, 0]}), k=2, metric="pass_hat_k")
    Fraction(7, 6)
    """
    frame = summary.lazy().collect() if isinstance(summary, pl.LazyFrame) else summary
    short = frame.filter(pl.col("n") < k)
    if not short.is_empty():
        _exact(metric)(int(short["n"][0]), int(short["c"][0]), k)  # raises the undefined-k error
    return case_values(frame["n"].to_numpy(), frame["c"].to_numpy(), k=k, metric=metric).exact_sum
