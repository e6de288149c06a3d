r"""Weighted kappa for ordinal judge scales (a judge's 1-5 score against a human's, say).

Cohen's (1968) weighted kappa credits near misses on an ordered scale of :math:`k` categories
with agreement weights :math:`w_{ij}` (1 on the diagonal): ``linear``
:math:`w_{ij} = 1 - |i - j|/(k - 1)` (Cicchetti & Allison 1971) or ``quadratic``
:math:`w_{ij} = 1 - (i - j)^2/(k - 1)^2` (Fleiss & Cohen 1973; close to an intraclass
correlation). With cell proportions :math:`p_{ij}` (rows: first rater, columns: second),
margins :math:`p_{i\cdot}`, :math:`p_{\cdot j}`, :math:`\bar w_{i\cdot} = \sum_j p_{\cdot j} w_{ij}`
and :math:`\bar w_{\cdot j} = \sum_i p_{i\cdot} w_{ij}`:

.. math::

    p_o = \sum_{ij} w_{ij} p_{ij}, \quad p_e = \sum_{ij} w_{ij} p_{i\cdot} p_{\cdot j}, \quad
    \hat\kappa_w = \frac{p_o - p_e}{1 - p_e},

and the large-sample variances of Fleiss, Cohen & Everitt (1969), in general and under
:math:`\kappa_w = 0`:

.. math::

    \widehat{\mathrm{Var}}(\hat\kappa_w) = \frac{\sum_{ij} p_{ij}\,[w_{ij} - (\bar w_{i\cdot}
        + \bar w_{\cdot j})(1 - \hat\kappa_w)]^2 - [\hat\kappa_w - p_e(1 - \hat\kappa_w)]^2}
        {n\,(1 - p_e)^2},

    \mathrm{Var}_0 = \frac{\sum_{ij} p_{i\cdot} p_{\cdot j}\,[w_{ij} - (\bar w_{i\cdot}
        + \bar w_{\cdot j})]^2 - p_e^2}{n\,(1 - p_e)^2}.

The interval is :math:`\hat\kappa_w \pm z_{1-\alpha/2}\,\mathrm{SE}`, clipped to [-1, 1]; the test of
:math:`\kappa_w = 0` uses :math:`\mathrm{SE}_0`. With the identity weights this is
:func:`gatestats.judges.cohens_kappa`. SAS PROC FREQ (``AGREE``), statsmodels'
``cohens_kappa(table, wt=...)`` and R's ``irr::kappa2`` compute the same quantities.

References
----------
Cicchetti, D. V. & Allison, T. (1971). A new procedure for assessing reliability of scoring EEG
    sleep recordings. American Journal of EEG Technology 11(3), 101-110.
Cohen, J. (1968). Weighted kappa: nominal scale agreement with provision for scaled disagreement or
    partial credit. Psychological Bulletin 70(4), 213-220.
Fleiss, J. L. & Cohen, J. (1973). The equivalence of weighted kappa and the intraclass correlation
    coefficient as measures of reliability. Educational and Psychological Measurement 33(3), 613-619.
Fleiss, J. L., Cohen, J. & Everitt, B. S. (1969). Large sample standard errors of kappa and weighted
    kappa. Psychological Bulletin 72(5), 323-327.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

from gatestats._typing import JSONObject
from gatestats.judges._stats import (
    AgreementProportions,
    KappaStatistics,
    _level_index,
    agreement_counts,
    kappa_refused,
    kappa_statistic,
)
from gatestats.judges._types import KAPPA_WEIGHTS, KappaWeights
from gatestats.vocabulary import check_choice, check_confidence_level

__all__ = ["KAPPA_WEIGHTS", "WeightedKappa", "agreement_table", "kappa_weights", "weighted_kappa"]


def kappa_weights(n_categories: int, weights: KappaWeights) -> npt.NDArray[np.float64]:
    """The :math:`k \\times k` agreement-weight matrix (1 on the diagonal, 0 at the far corners).

    Parameters
    ----------
    n_categories
        :math:`k`, the number of categories of the ordinal scale (at least 2).
    weights
        ``linear`` or ``quadratic``.

    Returns
    -------
    numpy.ndarray
        The :math:`k \\times k` weights :math:`w_{ij}`.

    Raises
    ------
    ValueError
        Unknown ``weights``, or fewer than 2 categories.

    Examples
    --------
    >>> kappa_weights(3, "linear").tolist()
    [[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]
    >>> kappa_weights(3, "quadratic").tolist()
    [[1.0, 0.75, 0.0], [0.75, 1.0, 0.75], [0.0, 0.75, 1.0]]
    """
    check_choice(weights, KAPPA_WEIGHTS, "weights")
    if isinstance(n_categories, bool) or not isinstance(n_categories, int) or n_categories < 2:
        msg = f"an ordinal scale needs at least 2 categories (got {n_categories!r})"
        raise ValueError(msg)
    index = np.arange(n_categories, dtype=np.float64)
    distance = np.abs(index[:, None] - index[None, :]) / (n_categories - 1)
    return np.asarray(1.0 - (distance if weights == "linear" else distance**2), dtype=np.float64)


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightedKappa(KappaStatistics):
    """Weighted kappa with its Fleiss-Cohen-Everitt (1969) interval and the test of kappa_w = 0.

    ``weights`` and ``n_categories`` describe the scale; the numbers are those of
    :class:`~gatestats.judges._stats.KappaStatistics`: ``se`` is the large-sample standard error
    (SAS's "ASE") used for the interval, ``se_null`` the one under :math:`\\kappa_w = 0`, used for
    ``z`` and the two-sided ``pvalue``. The numbers are ``None`` with
    ``status="insufficient_evidence"`` and ``reason`` says why.
    """

    weights: KappaWeights
    n_categories: int

    def _label(self) -> str:
        return "weighted kappa"

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict (the scale first, then the numbers)."""
        return {name: getattr(self, name) for name in ("weights", "n_categories", *self.__dataclass_fields__)}


def weighted_kappa(
    table: npt.ArrayLike, *, weights: KappaWeights = "quadratic", confidence_level: float = 0.95
) -> WeightedKappa:
    r"""Weighted kappa of a square agreement table on an ordered scale (module docstring).

    Parameters
    ----------
    table
        :math:`k \times k` counts, :math:`k \ge 2`, categories in scale order; rows: the first
        rater (e.g. the human label), columns: the second (the judge).
    weights
        ``quadratic`` (default, Fleiss-Cohen) or ``linear`` (Cicchetti-Allison).
    confidence_level
        Of the asymptotic interval, in (0, 1).

    Returns
    -------
    WeightedKappa
        ``insufficient_evidence`` when no item is rated, when kappa is undefined (expected
        agreement 1), when one rater puts every item in one category (kappa is 0 by construction)
        or when the standard error is 0 (perfect agreement: no asymptotic interval).

    Raises
    ------
    ValueError
        Unknown ``weights``; a table that is not square, has fewer than 2 categories or a negative
        or non-finite count; a confidence level outside (0, 1).

    Examples
    --------
    SAS PROC FREQ's agreement example (the SAS output statsmodels tests against,
    ``test_inter_rater.py``): linear weights, kappa 0.4701, ASE 0.1457, 95% CI 0.1845 to 0.7558,
    ASE under H0 0.1426, Z 3.2971.

    >>> k = weighted_kappa([[0, 4, 1], [0, 8, 0], [0, 1, 5]], weights="linear")
    >>> round(k.estimate, 4), round(k.se, 4), round(k.ci_low, 4), round(k.ci_high, 4)
    (0.4701, 0.1457, 0.1845, 0.7558)
    >>> round(k.se_null, 4), round(k.z, 4)
    (0.1426, 3.2971)
    """
    check_choice(weights, KAPPA_WEIGHTS, "weights")
    check_confidence_level(confidence_level)
    counts = agreement_counts(table)
    k = int(counts.shape[0])
    n = float(counts.sum())
    common = _WeightedBasis(weights=weights, n_categories=k, n=int(n), confidence_level=confidence_level)
    if n == 0:
        return kappa_refused(
            WeightedKappa, "weighted kappa needs at least one rated item (got 0)", None, None, **common
        )
    w = kappa_weights(k, weights)
    t = AgreementProportions.of(counts, n)
    p, rows, cols = t.p, t.rows, t.cols
    po = float((w * p).sum())
    pe = float((w * np.outer(rows, cols)).sum())
    return kappa_statistic(
        WeightedKappa,
        "weighted kappa",
        po=po,
        pe=pe,
        rows=rows,
        cols=cols,
        undefined=(
            f"weighted kappa is undefined: expected agreement is 1 on {int(n)} items (both ratings in one category)"
        ),
        sides=("first (rows)", "second (columns)"),
        standard_errors=lambda kappa: _fce_standard_errors(w, t, kappa=kappa, pe=pe),
        **common,
    )


class _WeightedBasis(TypedDict):
    """The fields of a weighted kappa besides its statistics: the weights, the table's size, the level."""

    weights: KappaWeights
    n_categories: int
    n: int
    confidence_level: float


def _fce_standard_errors(
    w: npt.NDArray[np.float64], t: AgreementProportions, *, kappa: float, pe: float
) -> tuple[float, float]:
    """Fleiss-Cohen-Everitt (1969) standard errors of weighted kappa: in general and under kappa_w = 0."""
    p, rows, cols, n = t.p, t.rows, t.cols, t.n
    w_row = w @ cols  # \bar w_{i.} = sum_j p_.j w_ij
    w_col = rows @ w  # \bar w_{.j} = sum_i p_i. w_ij
    spread = w_row[:, None] + w_col[None, :]
    scale = n * (1 - pe) ** 2
    variance = (float((p * (w - spread * (1 - kappa)) ** 2).sum()) - (kappa - pe * (1 - kappa)) ** 2) / scale
    variance_null = (float((np.outer(rows, cols) * (w - spread) ** 2).sum()) - pe**2) / scale
    return math.sqrt(max(variance, 0.0)), math.sqrt(max(variance_null, 0.0))


def agreement_table(first: Sequence[Any], second: Sequence[Any], *, categories: Sequence[Any]) -> npt.NDArray[np.int64]:
    """Cross-tabulate two raters' ordinal ratings of the same items, categories in scale order.

    Parameters
    ----------
    first, second
        Ratings of the same items in the same order (e.g. the human label and the judge's score).
    categories
        Every category of the scale, in order; a rating outside it is an error.

    Returns
    -------
    numpy.ndarray
        The :math:`k \\times k` counts (rows: ``first``, columns: ``second``), for
        :func:`weighted_kappa`.

    Raises
    ------
    ValueError
        Fewer than 2 distinct categories, ratings of different lengths, or a rating outside the
        scale (the message names the item).

    Examples
    --------
    >>> agreement_table([1, 2, 3, 3], [1, 3, 3, 2], categories=[1, 2, 3]).tolist()
    [[1, 0, 0], [0, 0, 1], [0, 1, 1]]
    """
    levels, index = _level_index(categories, "categories", ordered=True)
    if len(first) != len(second):
        msg = f"first and second must rate the same items (got {len(first)} and {len(second)} ratings)"
        raise ValueError(msg)
    table = np.zeros((len(levels), len(levels)), dtype=np.int64)
    for item, (x, y) in enumerate(zip(first, second, strict=True)):
        for who, value in (("first", x), ("second", y)):
            if value not in index:
                msg = f"{who} rating of item {item} is not a category of the scale {levels!r} (got {value!r})"
                raise ValueError(msg)
        table[index[x], index[y]] += 1
    return table
