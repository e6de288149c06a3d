"""``analyze``'s default path on a small input, in floats without numpy: the same numbers, bit for bit.

``import numpy`` costs about a third of ``import polars`` (issue 28, item 2), more than ``analyze``
spends computing on a few hundred cases. So while numpy is not imported yet, an analysis of at most
:data:`SMALL_VALUES` per-case values (cases x k values x 2 metrics) whose intervals are Wilson's without
case groups (``method="wilson"``, or ``"auto"`` below ``CLT_FROM_CASES`` cases) is computed here, in
Python floats: the per-case values from the same exact rationals
(:func:`gatestats.estimators.passk.counted_values`), the Wilson intervals by the same operations as
``intervals._interval_batch`` (its reductions in numpy's order of additions:
:mod:`gatestats.estimators.numpy_order`; element-wise arithmetic and square roots are correctly
rounded in both), the variance split as ``variance.variance_decomposition``. Every other analysis,
and every analysis once numpy is loaded, takes numpy's path.

``tests/estimators/test_small_path.py`` compares the two paths on random inputs and on the bundled
data sets, bit for bit; it holds for numpy and the machine of
:data:`gatestats.estimators.numpy_order.PROVED_FOR` and fails on any other.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Final

from gatestats._lazy import numpy_loaded as _numpy_loaded  # a module name: tests replace it to pick a path
from gatestats.estimators.interval_rules import (
    DESIGN_EFFECT_FROM_UNITS,
    MIN_UNITS,
    REFUSED_FEW_UNITS,
    CaseMeanInterval,
    _check_options,
    _reason,
    _WilsonAtLevels,
)
from gatestats.estimators.numpy_order import einsum_row_dot, row_mean, row_var
from gatestats.estimators.passk import counted_values
from gatestats.vocabulary import IntervalMethod, Metric, check_seed

if TYPE_CHECKING:
    import polars as pl

__all__ = ["SMALL_VALUES", "SmallPairs", "variance_moments", "wilson_intervals", "without_numpy"]

#: The most per-case values computed without numpy (cases x k values x 2 metrics of one ``analyze``; cases
#: of one variance split): below, Python's arithmetic costs less than numpy's import (benchmarks/RESULTS.md,
#: issue 28 item 2, session 47).
SMALL_VALUES: Final = 50_000


def without_numpy(values: int) -> bool:
    """Whether ``values`` per-case values are computed in floats: numpy not imported yet, and few enough.

    Parameters
    ----------
    values
        The per-case values the computation reads.

    Returns
    -------
    bool
        True when ``values <= SMALL_VALUES`` and numpy is not in ``sys.modules``.
    """
    return values <= SMALL_VALUES and not _numpy_loaded()


@dataclass(frozen=True, slots=True)
class SmallPairs:
    """The ``(n, c)`` of one system's cases as lists: what :class:`~gatestats.estimators.passk.CasePairs` holds."""

    #: Valid trials of each case (a polars Series: ``case_n < k`` is the cases without a value at k).
    case_n: pl.Series
    #: Valid and passed trials of each case.
    pairs: list[tuple[int, int]]
    #: How many cases have each distinct pair.
    counts: Counter[tuple[int, int]]

    @staticmethod
    def of(n: pl.Series, c: pl.Series) -> SmallPairs:
        """The pairs of the cases with valid trials ``n`` and passes ``c``.

        Parameters
        ----------
        n
            Valid trials per case.
        c
            Passed trials per case.

        Returns
        -------
        SmallPairs
            The cases' pairs.
        """
        pairs = list(zip(n.to_list(), c.to_list(), strict=True))
        return SmallPairs(n, pairs, Counter(pairs))

    def values(self, *, k: int, metric: Metric) -> tuple[list[float], Fraction]:
        """Each case's value at ``k`` (NaN where ``n < k``) and the exact sum: ``passk.pair_values``' numbers.

        Parameters
        ----------
        k
            Trials per draw.
        metric
            ``pass_at_k`` or ``pass_hat_k``.

        Returns
        -------
        tuple of (list of float, fractions.Fraction)
            One value per case, in the cases' order, and the exact sum over the defined cases.
        """
        distinct = list(self.counts)
        floats, total = counted_values(((n, c, self.counts[(n, c)]) for n, c in distinct), k, metric)
        table = dict(zip(distinct, floats, strict=True))
        return [table[pair] for pair in self.pairs], total


def _minimum(a: float, b: float) -> float:
    """``np.minimum(a, b)``: the smaller, NaN when either is NaN."""
    return a if a < b or math.isnan(a) else b


def _divided(a: float, b: float) -> float:
    """``a / b`` as numpy divides float64 under ``errstate(divide="ignore", invalid="ignore")``."""
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _one_wilson(values: list[float], cap: float | None) -> _WilsonAtLevels:
    """One sample's Wilson interval without groups before the level enters, as ``intervals._level_free`` and
    ``_capped_kish`` compute its row."""
    n = len(values)
    estimate = row_mean(values)
    deviations = [v - estimate for v in values]  # d = values - values.mean(axis=1, keepdims=True)
    se = math.sqrt(max(einsum_row_dot(deviations) / (n - 1) / n, 0.0))
    constant = all(v == values[0] for v in values)
    units_bound = float(n)  # sizes.sum() ** 2 / (sizes @ sizes) of n ones: n * n / n, exact
    kish = units_bound if constant else _divided(n * estimate * (1 - estimate), (n - 1) * se * se)
    if n < DESIGN_EFFECT_FROM_UNITS:
        kish = _minimum(kish, units_bound)
    capped = _minimum(kish, float(n) if cap is None else cap)
    return _WilsonAtLevels(estimate, se, constant, capped, n)


def wilson_intervals(
    samples: list[list[float]],
    *,
    groups: None = None,
    method: IntervalMethod,
    confidence_level: float,
    n_resamples: int,
    seed: int | None,
    max_effective_n: list[float | None],
) -> list[CaseMeanInterval]:
    """``intervals._case_mean_intervals`` of samples without groups whose method is Wilson's, in floats.

    Parameters
    ----------
    samples
        The samples, each one value in [0, 1] per case of the same cases (fewer than ``CLT_FROM_CASES``
        cases when ``method="auto"``).
    groups
        None: the cases are the units (a sample with groups takes numpy's path).
    method
        ``"wilson"`` or ``"auto"``.
    confidence_level, n_resamples, seed
        As :func:`~gatestats.estimators.case_mean_interval` (checked alike, in the same order).
    max_effective_n
        Each sample's cap of the Wilson effective sample size (all ``None`` or none).

    Returns
    -------
    list of CaseMeanInterval
        One per sample, field for field those of ``_case_mean_intervals``.

    Raises
    ------
    TypeError, ValueError
        As ``_case_mean_intervals``: an invalid option, or values outside [0, 1] or NaN.
    """
    if not samples:
        return []
    for i, (sample, cap) in enumerate(zip(samples, max_effective_n, strict=True)):
        _check_options(method, confidence_level, n_resamples, cap)
        if any(not 0.0 <= v <= 1.0 for v in sample):  # NaN fails both comparisons
            msg = "values must be case-level estimates in [0, 1] without NaN"
            raise ValueError(msg)
        if i == 0 and seed is not None:
            check_seed(int(seed))
    n = len(samples[0])
    if n < MIN_UNITS:
        reason = _reason(REFUSED_FEW_UNITS, method, n, "cases", samples[0])
        none = {"ci_low": None, "ci_high": None, "se": None, "method": None}
        return [
            CaseMeanInterval(
                status="insufficient_evidence",
                reason=reason,
                estimate=row_mean(s) if n else None,
                requested_method=method,
                confidence_level=confidence_level,
                n_cases=n,
                n_units=n,
                clustered=False,
                **none,
            )
            for s in samples
        ]
    # Each sample's degrees-of-freedom factor is the batch's: a sample that varies takes it, a constant one none.
    return [
        _one_wilson(s, cap).at(confidence_level, n, method, False)
        for s, cap in zip(samples, max_effective_n, strict=True)
    ]


def variance_moments(n_cases: pl.Series, c_cases: pl.Series) -> tuple[int, float, float | None, float | None]:
    """``variance._moments`` in floats: the cases with fewer than 2 trials, the mean trials per case, the variances.

    Parameters
    ----------
    n_cases
        Valid trials per case (at least two cases).
    c_cases
        Passed trials per case.

    Returns
    -------
    tuple
        ``(few, k_bar, within, between)`` as numpy's path computes them; the variances are ``None`` when
        ``few`` cases have fewer than 2 trials.

    Examples
    --------
    >>> import polars as pl
    >>> variance_moments(pl.Series([4, 4, 4, 4]), pl.Series([4, 0, 4, 0]))
    (0, 4.0, 0.0, 0.3333333333333333)
    """
    nf = [float(x) for x in n_cases.to_list()]
    cf = [float(x) for x in c_cases.to_list()]
    few = sum(x < 2 for x in nf)
    if few:
        return few, row_mean(nf), None, None
    p_i = [ci / ni for ci, ni in zip(cf, nf, strict=True)]
    within_i = [ci * (ni - ci) / (ni * (ni - 1)) for ci, ni in zip(cf, nf, strict=True)]
    within = row_mean(within_i)
    between = max(row_var(p_i, ddof=1) - row_mean([w / ni for w, ni in zip(within_i, nf, strict=True)]), 0.0)
    return 0, row_mean(nf), within, between
