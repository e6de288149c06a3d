r"""Small exact and asymptotic procedures behind judge calibration.

- :func:`proportion`: a binomial proportion with Wilson's score interval (default) or the exact
  Clopper-Pearson interval, or an explicit "insufficient evidence" when the denominator is 0.
- :func:`cohens_kappa`: Cohen's kappa with the large-sample standard error of Fleiss, Cohen &
  Everitt (1969) and the null standard error for the test of :math:`\kappa = 0`.
- :func:`sign_test`: the exact two-sided binomial (sign) test of :math:`p = 1/2`, with its mid-p
  version; the exact McNemar test is this test on the discordant pairs.
- :func:`paired_difference_interval`: Newcombe's (1998b, method 10) square-and-add interval for the
  difference of two paired proportions.

References
----------
Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the
    case of the binomial. Biometrika 26(4), 404-413.
Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and Psychological
    Measurement 20(1), 37-46.
Fleiss, J. L., Cohen, J. & Everitt, B. S. (1969). Large sample standard errors of kappa and
    weighted kappa. Psychological Bulletin 72(5), 323-327.
Lancaster, H. O. (1961). Significance tests in discrete distributions. JASA 56(294), 223-234
    (mid-p).
McNemar, Q. (1947). Note on the sampling error of the difference between correlated proportions
    or percentages. Psychometrika 12(2), 153-157.
Newcombe, R. G. (1998a). Two-sided confidence intervals for the single proportion: comparison of
    seven methods. Statistics in Medicine 17(8), 857-872.
Newcombe, R. G. (1998b). Improved confidence intervals for the difference between binomial
    proportions based on paired data. Statistics in Medicine 17(22), 2635-2650 (method 10).
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
    JASA 22(158), 209-212.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypedDict, TypeVar

from gatestats._lazy import lazy_module
from gatestats._typing import JSONObject
from gatestats.errors import InsufficientEvidenceError
from gatestats.estimators.interval_rules import wilson_bounds_one
from gatestats.estimators.quantiles import two_sided_z
from gatestats.judges._types import PROPORTION_METHODS, ProportionMethod
from gatestats.paired.binomial import EXACT_MAX_TRIALS
from gatestats.paired.intervals import newcombe_interval
from gatestats.paired.mcnemar import exact_pvalues, mcnemar_pvalues
from gatestats.vocabulary import Status, check_choice, check_confidence_level

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    # numpy on first use (issue 28 item 2): ``calibrate``'s default path computes its Wilson intervals, its kappa of
    # a 2x2 table and its sign test in Python numbers (the same operations in the same order as numpy's path,
    # tests/judges/test_stats_without_numpy.py) and imports no numpy.
    np = lazy_module("numpy")

stats = lazy_module("scipy.stats")
#: :math:`1/\sqrt{2}`, for the normal tail of the kappa test by ``math.erfc``.
_SQRT_HALF = math.sqrt(0.5)

__all__ = [
    "Kappa",
    "KappaStatistics",
    "PairedDifference",
    "Proportion",
    "SignTest",
    "agreement_counts",
    "clopper_pearson_interval",
    "cohens_kappa",
    "critical_z",
    "fisher_exact_2x2",
    "kappa_refused",
    "kappa_statistic",
    "paired_difference_interval",
    "proportion",
    "sign_test",
]

#: A margin or an expected agreement this close to 1 is treated as exactly 1 (kappa degenerates).
_DEGENERATE = 1 - 1e-15
#: A kappa standard error at or below this is 0: no asymptotic interval exists.
_ZERO_SE = 1e-9
_K = TypeVar("_K", bound="KappaStatistics")
#: A table's row or column margins: numpy's, or the two floats of a 2x2 table computed without numpy.
_Margins: TypeAlias = "npt.NDArray[np.float64] | tuple[float, float]"


def critical_z(confidence_level: float) -> float:
    """The two-sided standard normal critical value :math:`z_{1-\\alpha/2}` of a confidence level.

    Parameters
    ----------
    confidence_level
        In (0, 1).

    Returns
    -------
    float
        ``norm.ppf(0.5 + confidence_level / 2)``, to the last bit (stored at the common levels:
        :func:`gatestats.estimators.quantiles.two_sided_z`; scipy imported for any other level).
    """
    return two_sided_z(confidence_level)


def clopper_pearson_interval(x: int, n: int, *, confidence_level: float = 0.95) -> tuple[float, float]:
    r"""Exact (Clopper-Pearson 1934) interval for ``x`` successes in ``n`` trials.

    .. math::

        \left[B\!\left(\tfrac{\alpha}{2};\, x,\, n - x + 1\right),\;
        B\!\left(1 - \tfrac{\alpha}{2};\, x + 1,\, n - x\right)\right]

    with :math:`B(q; a, b)` the beta quantile, 0 when :math:`x = 0` and 1 when :math:`x = n`
    (R's ``binom.test(x, n)$conf.int``).

    Parameters
    ----------
    x, n
        Successes and trials, integers with ``0 <= x <= n`` and ``n >= 1``.
    confidence_level
        In (0, 1).

    Returns
    -------
    tuple of float
        The exact limits (0 at :math:`x = 0`, 1 at :math:`x = n`).

    Raises
    ------
    ValueError
        Counts that are not integers, ``n < 1`` or ``x`` outside [0, n]; a confidence level outside (0, 1).

    Examples
    --------
    >>> [round(v, 4) for v in clopper_pearson_interval(81, 263)]
    [0.2527, 0.3676]
    """
    _check_counts(x, n)
    check_confidence_level(confidence_level)
    alpha = 1 - confidence_level
    low = 0.0 if x == 0 else float(stats.beta.ppf(alpha / 2, x, n - x + 1))
    high = 1.0 if x == n else float(stats.beta.ppf(1 - alpha / 2, x + 1, n - x))
    return low, high


def _check_counts(x: int, n: int) -> None:
    if isinstance(x, bool) or isinstance(n, bool) or int(x) != x or int(n) != n:
        msg = f"counts must be integers (got x={x!r}, n={n!r})"
        raise ValueError(msg)
    if not 0 <= x <= n or n < 1:
        msg = f"expected 0 <= x <= n and n >= 1 (got x={x}, n={n})"
        raise ValueError(msg)


@dataclass(frozen=True, slots=True, kw_only=True)
class Proportion:
    """``numerator / n`` with its interval, or an explicit "insufficient evidence" when ``n == 0``.

    ``estimate``, ``ci_low`` and ``ci_high`` are ``None`` exactly when ``status`` is
    ``"insufficient_evidence"``; ``reason`` then says why.
    """

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    numerator: int
    n: int
    status: Status
    reason: str | None
    method: ProportionMethod
    confidence_level: float

    def confidence_interval(self, confidence_level: float = 0.95) -> tuple[float, float]:
        """The interval of the same method at another level.

        Parameters
        ----------
        confidence_level
            The new level, in (0, 1).

        Returns
        -------
        tuple of float
            The ``method`` interval of ``numerator / n`` at that level.

        Raises
        ------
        InsufficientEvidenceError
            When the denominator is 0 (the proportion is undefined).
        """
        if self.status != "ok":
            raise InsufficientEvidenceError(self.reason or "the proportion is undefined")
        return _interval(self.numerator, self.n, method=self.method, confidence_level=confidence_level)

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict (``None`` for unknown numbers)."""
        return {
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n": self.n,
            "numerator": self.numerator,
            "status": self.status,
            "reason": self.reason,
            "method": self.method,
            "confidence_level": self.confidence_level,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Proportion:
        """Inverse of :meth:`to_dict`.

        Parameters
        ----------
        data
            A :meth:`to_dict` result.

        Returns
        -------
        Proportion
            The proportion.
        """
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})


def _interval(x: int, n: int, *, method: ProportionMethod, confidence_level: float) -> tuple[float, float]:
    if method == "wilson":
        return wilson_bounds_one(float(x / n), float(n), two_sided_z(confidence_level), continuity_correction=False)
    return clopper_pearson_interval(x, n, confidence_level=confidence_level)


def proportion(
    x: int,
    n: int,
    *,
    method: ProportionMethod = "wilson",
    confidence_level: float = 0.95,
    undefined_reason: str | None = None,
) -> Proportion:
    r"""The proportion ``x / n`` with Wilson's score interval (default) or Clopper-Pearson's.

    Wilson (1927), no continuity correction (R's ``prop.test(x, n, correct = FALSE)``):

    .. math::

        \frac{\hat p + \frac{z^2}{2n} \pm z\sqrt{\frac{\hat p(1-\hat p)}{n} + \frac{z^2}{4n^2}}}
        {1 + \frac{z^2}{n}}

    Parameters
    ----------
    x, n
        Successes and trials, ``0 <= x <= n``; ``n == 0`` gives ``status="insufficient_evidence"``.
    method
        ``wilson`` or ``clopper-pearson``.
    confidence_level
        In (0, 1).
    undefined_reason
        The reason reported when ``n == 0``.

    Returns
    -------
    Proportion
        The estimate and its interval, or ``status="insufficient_evidence"`` when ``n == 0``.

    Raises
    ------
    ValueError
        Counts that are not integers or out of range; an unknown method; a confidence level
        outside (0, 1).

    Examples
    --------
    >>> p = proportion(15, 148)
    >>> round(p.estimate, 4), round(p.ci_low, 4), round(p.ci_high, 4)
    (0.1014, 0.0624, 0.1605)
    >>> proportion(0, 0, undefined_reason="no items labelled fail").status
    'insufficient_evidence'
    """
    check_choice(method, PROPORTION_METHODS, "method")
    check_confidence_level(confidence_level)
    if n == 0 and x == 0:
        return Proportion(
            estimate=None,
            ci_low=None,
            ci_high=None,
            numerator=0,
            n=0,
            status="insufficient_evidence",
            reason=undefined_reason or "the denominator is 0: the proportion is undefined",
            method=method,
            confidence_level=confidence_level,
        )
    _check_counts(x, n)
    low, high = _interval(x, n, method=method, confidence_level=confidence_level)
    return Proportion(
        estimate=x / n,
        ci_low=low,
        ci_high=high,
        numerator=int(x),
        n=int(n),
        status="ok",
        reason=None,
        method=method,
        confidence_level=confidence_level,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class KappaStatistics:
    """The numbers of a kappa statistic: estimate, interval, the test of kappa = 0, agreements.

    The base of :class:`Kappa` and :class:`~gatestats.judges.WeightedKappa`. ``se`` is the
    Fleiss-Cohen-Everitt (1969) large-sample standard error (SAS's "ASE"), used for the interval;
    ``se_null`` the standard error under :math:`\\kappa = 0`, used for ``z`` and ``pvalue``
    (two-sided). All numbers are ``None`` with ``status="insufficient_evidence"`` and ``reason``
    says why.
    """

    estimate: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    se_null: float | None
    z: float | None
    pvalue: float | None
    n: int
    observed_agreement: float | None
    expected_agreement: float | None
    status: Status
    reason: str | None
    confidence_level: float

    def _label(self) -> str:
        """The statistic's name in messages."""
        return "kappa"

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def confidence_interval(self, confidence_level: float = 0.95) -> tuple[float, float]:
        r"""The asymptotic interval at another level.

        Parameters
        ----------
        confidence_level
            Of the new asymptotic interval, in (0, 1).

        Returns
        -------
        tuple of float
            :math:`\hat\kappa \pm z\,\mathrm{SE}` at that level, clipped to [-1, 1].

        Raises
        ------
        ValueError
            When there is no interval (``status == "insufficient_evidence"``); the message says why.
        """
        check_confidence_level(confidence_level)
        if self.estimate is None or self.se is None:
            msg = f"{self._label()} has no interval: {self.reason}"
            raise ValueError(msg)
        z = critical_z(confidence_level)
        return max(-1.0, self.estimate - z * self.se), min(1.0, self.estimate + z * self.se)


@dataclass(frozen=True, slots=True, kw_only=True)
class Kappa(KappaStatistics):
    """Cohen's kappa, its asymptotic interval, and the test of kappa = 0 (fields: :class:`KappaStatistics`)."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Kappa:
        """Inverse of :meth:`to_dict`.

        Parameters
        ----------
        data
            A :meth:`to_dict` result (extra keys are ignored).

        Returns
        -------
        Kappa
            The statistic.
        """
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})


@dataclass(frozen=True, slots=True)
class AgreementProportions:
    """An agreement table as cell proportions :math:`p_{ij}`, with its margins and its number of items."""

    p: npt.NDArray[np.float64]
    rows: npt.NDArray[np.float64]
    cols: npt.NDArray[np.float64]
    n: float

    @classmethod
    def of(cls, counts: npt.NDArray[np.float64], n: float) -> AgreementProportions:
        """The proportions of ``counts`` (checked by :func:`agreement_counts`) over ``n`` items (``n > 0``)."""
        p = counts / n
        return cls(p=p, rows=p.sum(axis=1), cols=p.sum(axis=0), n=n)


def agreement_counts(table: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Check a square agreement table of counts (at least 2 categories) and return it as floats.

    Parameters
    ----------
    table
        :math:`k \\times k` counts, rows: the first rater, columns: the second.

    Returns
    -------
    numpy.ndarray
        The counts as float64.

    Raises
    ------
    ValueError
        Not square, fewer than 2 categories, or a negative or non-finite count.
    """
    counts = np.asarray(table, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1] or counts.shape[0] < 2:
        msg = f"table must be a square matrix with at least 2 categories (got shape {counts.shape})"
        raise ValueError(msg)
    if np.any(counts < 0) or not np.all(np.isfinite(counts)):
        msg = "table must hold non-negative finite counts"
        raise ValueError(msg)
    return counts


def _json_value(value: Any) -> Any:
    """A field as JSON data: a result as its ``to_dict()``, a tuple as a list (of those)."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_json_value(item) for item in value]
    return value


def _json_fields(result: Any, *, exclude: tuple[str, ...] = ()) -> JSONObject:
    """Every dataclass field of ``result`` but ``exclude``, in order, as JSON data (:func:`_json_value`)."""
    return {name: _json_value(getattr(result, name)) for name in result.__dataclass_fields__ if name not in exclude}


def _level_index(values: Sequence[Any], name: str, *, ordered: bool = False) -> tuple[list[Any], dict[Any, int]]:
    """The levels of a scale and each one's position; fewer than 2 distinct levels is an error naming ``name``."""
    levels = list(values)
    if len(levels) < 2 or len(set(levels)) != len(levels):
        msg = f"{name} must list at least 2 distinct {name}{' in scale order' if ordered else ''} (got {levels!r})"
        raise ValueError(msg)
    return levels, {level: i for i, level in enumerate(levels)}


def _one_category_reason(name: str, rows: _Margins, cols: _Margins, n: int, *, sides: tuple[str, str]) -> str | None:
    """Why kappa has no interval when one rater puts every item in one category, else ``None``.

    Kappa is then 0 by construction, with no sampling variance.

    Parameters
    ----------
    name
        The statistic's name in the message (``kappa``, ``weighted kappa``).
    rows, cols
        The row and column margins (proportions).
    n
        Number of rated items.
    sides
        How the message names the row and the column rater.

    Returns
    -------
    str or None
        The reason, or ``None`` when both raters use at least two categories.
    """
    if max(*rows, *cols) < _DEGENERATE:  # numpy's margins or the floats of a 2x2 table
        return None
    who = sides[0] if max(rows) >= _DEGENERATE else sides[1]
    return (
        f"{name} is 0 by construction: the {who} rating puts all {n} items in one category, so there is "
        "no agreement beyond chance to estimate and no interval"
    )


def _zero_se_reason(name: str, kappa: float, se: float, n: int) -> str | None:
    """Why kappa has no asymptotic interval when its standard error is 0, else ``None``.

    Parameters
    ----------
    name
        The statistic's name in the message (``kappa``, ``weighted kappa``).
    kappa
        The estimate.
    se
        Its large-sample standard error.
    n
        Number of rated items.

    Returns
    -------
    str or None
        The reason, or ``None`` when the standard error is positive.
    """
    if se > _ZERO_SE:
        return None
    return (
        f"{name} = {kappa:g} on {n} items has asymptotic standard error 0 (no disagreement to "
        "estimate it from): no asymptotic interval"
    )


class _KappaInference(TypedDict):
    """The interval and the test of a kappa statistic: fields of :class:`KappaStatistics`."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    se_null: float
    z: float | None
    pvalue: float | None


def _kappa_inference(kappa: float, se: float, se_null: float, confidence_level: float) -> _KappaInference:
    """The interval :math:`\\hat\\kappa \\pm z\\,\\mathrm{SE}` clipped to [-1, 1] and the z-test of kappa = 0.

    Parameters
    ----------
    kappa
        The estimate.
    se
        Its large-sample standard error (for the interval).
    se_null
        Its standard error under kappa = 0 (for the test).
    confidence_level
        Of the interval, in (0, 1).

    Returns
    -------
    _KappaInference
        ``estimate``, ``se``, ``ci_low``, ``ci_high``, ``se_null``, ``z`` and the two-sided ``pvalue``
        (``z`` and ``pvalue`` are ``None`` when ``se_null`` is 0): fields of :class:`KappaStatistics`.
    """
    z = critical_z(confidence_level)
    z_null = kappa / se_null if se_null > 0 else None
    return {
        "estimate": kappa,
        "se": se,
        "ci_low": max(-1.0, kappa - z * se),
        "ci_high": min(1.0, kappa + z * se),
        "se_null": se_null,
        "z": z_null,
        # 2 (1 - Phi(|z|)) = erfc(|z| / sqrt 2): within 5.7e-14 relative of scipy's 2 * norm.sf (session 40).
        "pvalue": None if z_null is None else math.erfc(abs(z_null) * _SQRT_HALF),
    }


def kappa_refused(cls: type[_K], reason: str, po: float | None, pe: float | None, **fields: Any) -> _K:
    """A kappa result with ``status="insufficient_evidence"``: no estimate, no interval, the reason.

    Parameters
    ----------
    cls
        :class:`Kappa` or :class:`~gatestats.judges.WeightedKappa`.
    reason
        Why the statistic is not reported.
    po, pe
        Observed and expected agreement, when known.
    **fields
        The class's remaining fields (``n``, ``confidence_level``, ...).

    Returns
    -------
    Kappa or WeightedKappa
        The refusal.
    """
    return cls(
        estimate=None,
        se=None,
        ci_low=None,
        ci_high=None,
        se_null=None,
        z=None,
        pvalue=None,
        observed_agreement=po,
        expected_agreement=pe,
        status="insufficient_evidence",
        reason=reason,
        **fields,
    )


def kappa_statistic(
    cls: type[_K],
    name: str,
    *,
    po: float,
    pe: float,
    rows: _Margins,
    cols: _Margins,
    undefined: str,
    sides: tuple[str, str],
    standard_errors: Callable[[float], tuple[float, float]],
    n: int,
    confidence_level: float,
    **fields: Any,
) -> _K:
    """A kappa statistic from its agreements, or the reason there is none.

    Kappa is :math:`(p_o - p_e)/(1 - p_e)` with the interval and test of :func:`_kappa_inference`.
    It is not reported when :math:`p_e = 1` (undefined), when one rater puts every item in one
    category (0 by construction, no sampling variance) or when its standard error is 0.

    Parameters
    ----------
    cls
        :class:`Kappa` or :class:`~gatestats.judges.WeightedKappa`.
    name
        The statistic's name in the reasons (``kappa``, ``weighted kappa``).
    po, pe
        Observed and expected agreement.
    rows, cols
        The row and column margins (proportions).
    undefined
        The reason reported when the expected agreement is 1.
    sides
        How the reasons name the row and the column rater.
    standard_errors
        Kappa -> its large-sample standard error and the one under kappa = 0.
    n
        Number of rated items (at least 1).
    confidence_level
        Of the interval, in (0, 1).
    **fields
        The class's remaining fields.

    Returns
    -------
    Kappa or WeightedKappa
        ``status="ok"`` with the numbers, or ``"insufficient_evidence"`` with the reason.
    """
    common = {"n": n, "confidence_level": confidence_level, **fields}
    reason = undefined if pe >= _DEGENERATE else _one_category_reason(name, rows, cols, n, sides=sides)
    if reason is not None:
        return kappa_refused(cls, reason, po, pe, **common)
    kappa = (po - pe) / (1 - pe)
    se, se_null = standard_errors(kappa)
    reason = _zero_se_reason(name, kappa, se, n)
    if reason is not None:
        return kappa_refused(cls, reason, po, pe, **common)
    return cls(
        **_kappa_inference(kappa, se, se_null, confidence_level),
        observed_agreement=po,
        expected_agreement=pe,
        status="ok",
        reason=None,
        **common,
    )


def cohens_kappa(table: npt.ArrayLike, *, confidence_level: float = 0.95) -> Kappa:
    r"""Cohen's (1960) kappa of a square agreement table with the Fleiss-Cohen-Everitt (1969) SE.

    With cell proportions :math:`p_{ij}` (rows: rater 1, columns: rater 2), margins
    :math:`p_{i\cdot}`, :math:`p_{\cdot j}`, :math:`p_o = \sum_i p_{ii}`,
    :math:`p_e = \sum_i p_{i\cdot} p_{\cdot i}`:

    .. math::

        \hat\kappa = \frac{p_o - p_e}{1 - p_e}, \qquad
        \widehat{\mathrm{Var}}(\hat\kappa) = \frac{
          \sum_i p_{ii}\,[1 - (p_{i\cdot} + p_{\cdot i})(1 - \hat\kappa)]^2
          + (1 - \hat\kappa)^2 \sum_{i \ne j} p_{ij}\,(p_{\cdot i} + p_{j\cdot})^2
          - [\hat\kappa - p_e (1 - \hat\kappa)]^2}{n\,(1 - p_e)^2}

    and under :math:`\kappa = 0`:
    :math:`\mathrm{Var}_0 = [p_e + p_e^2 - \sum_i p_{i\cdot} p_{\cdot i}(p_{i\cdot} + p_{\cdot i})]
    / [n (1 - p_e)^2]`. The interval is :math:`\hat\kappa \pm z_{1-\alpha/2}\,\mathrm{SE}`,
    clipped to [-1, 1].

    Parameters
    ----------
    table
        :math:`k \times k` counts, :math:`k \ge 2`; rows: rater 1, columns: rater 2.
    confidence_level
        Of the asymptotic interval, in (0, 1).

    Returns
    -------
    Kappa
        ``status="insufficient_evidence"`` with the reason when no item is rated, when kappa is
        undefined (:math:`p_e = 1`: both raters always give the same single category), when it is
        0 by construction with no sampling variance (one rater does), or when the standard error
        is 0 (perfect agreement: no asymptotic interval).

    Raises
    ------
    ValueError
        A table that is not square, has fewer than 2 categories or a negative or non-finite count;
        a confidence level outside (0, 1).

    Examples
    --------
    SAS's agreement example (statsmodels' reference, ``test_inter_rater.py``):

    >>> k = cohens_kappa([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    >>> round(k.estimate, 4), round(k.se, 4), round(k.ci_low, 4), round(k.ci_high, 4), round(k.se_null, 4)
    (0.4842, 0.138, 0.2137, 0.7547, 0.1484)
    """
    check_confidence_level(confidence_level)
    small = _table_2x2(table)
    agreements: Callable[[float], _Agreements]
    if small is None:
        counts = agreement_counts(table)
        n = float(counts.sum())
        agreements = functools.partial(_agreements, counts)
    else:  # a 2x2 table of ints: in floats, no numpy
        n = float(sum(small))
        agreements = functools.partial(_agreements_2x2, small)
    if n == 0:
        reason = "kappa needs at least one rated item (got 0)"
        return kappa_refused(Kappa, reason, None, None, n=0, confidence_level=confidence_level)
    po, pe, rows, cols, standard_errors = agreements(n)
    return kappa_statistic(
        Kappa,
        "kappa",
        po=po,
        pe=pe,
        rows=rows,
        cols=cols,
        undefined=f"kappa is undefined: both ratings put all {int(n)} items in one category (expected agreement 1)",
        sides=("rows", "columns"),
        standard_errors=standard_errors,
        n=int(n),
        confidence_level=confidence_level,
    )


#: What Cohen's kappa is computed from: the observed and expected agreement, the row and column margins, and
#: kappa -> its two standard errors.
_Agreements: TypeAlias = "tuple[float, float, _Margins, _Margins, Callable[[float], tuple[float, float]]]"


def _agreements(counts: npt.NDArray[np.float64], n: float) -> _Agreements:
    """Cohen's kappa's agreements of a table checked by :func:`agreement_counts` (numpy's path)."""
    t = AgreementProportions.of(counts, n)
    po = float(np.trace(t.p))
    pe = float(t.rows @ t.cols)
    return po, pe, t.rows, t.cols, lambda kappa: _cohen_standard_errors(t, kappa=kappa, pe=pe)


def _table_2x2(table: object) -> tuple[int, int, int, int] | None:
    """The four counts of a 2x2 table of non-negative Python ints (lists or tuples), row by row; else None."""
    if not isinstance(table, list | tuple) or len(table) != 2:
        return None
    if not all(isinstance(row, list | tuple) and len(row) == 2 for row in table):
        return None
    cells = (*table[0], *table[1])
    if not all(type(c) is int and c >= 0 for c in cells):
        return None
    return cells


def _agreements_2x2(counts: tuple[int, int, int, int], n: float) -> _Agreements:
    """:func:`_agreements` of a 2x2 table in floats: numpy's operations on the same numbers, in the same order.

    ``p = counts / n`` cell by cell; a margin (``p.sum(axis=...)``), the trace and a product of two margins
    (``rows @ cols``) add two numbers, one way only; ``n`` sums integers (exact). The sum of the four cells in
    :func:`_cohen_standard_errors` (``off.sum()``) adds them in memory order, ((a + b) + c) + d, as numpy's
    reduction of four contiguous doubles does; a square (``** 2`` on an array) is one product ``x * x``, as
    numpy's ``power`` by 2 computes it. tests/judges/test_stats_without_numpy.py compares every result with
    numpy's path, bit for bit.
    """
    p00, p01, p10, p11 = (c / n for c in counts)
    rows, cols = (p00 + p01, p10 + p11), (p00 + p10, p01 + p11)
    pe = rows[0] * cols[0] + rows[1] * cols[1]
    cubes = rows[0] * cols[0] * (rows[0] + cols[0]) + rows[1] * cols[1] * (rows[1] + cols[1])

    def standard_errors(kappa: float) -> tuple[float, float]:
        one_minus = 1 - kappa
        d0, d1 = (p * _square(1 - (rows[i] + cols[i]) * one_minus) for i, p in enumerate((p00, p11)))
        diagonal = d0 + d1
        off = [p * _square(cols[i] + rows[j]) for (i, j), p in zip(_CELLS, (p00, p01, p10, p11), strict=True)]
        off_sum = ((off[0] + off[1]) + off[2]) + off[3] - (off[0] + off[3])
        return _fleiss_standard_errors(diagonal, off_sum, kappa, pe, n, cubes)

    return p00 + p11, pe, rows, cols, standard_errors


def _cohen_standard_errors(t: AgreementProportions, *, kappa: float, pe: float) -> tuple[float, float]:
    """Fleiss-Cohen-Everitt (1969) standard errors of Cohen's kappa: in general and under kappa = 0."""
    p, rows, cols, n = t.p, t.rows, t.cols, t.n
    weight = rows[:, None] + cols[None, :]  # p_i. + p_.j
    diagonal = float(np.sum(np.diag(p) * (1 - np.diag(weight) * (1 - kappa)) ** 2))
    off = p * (cols[:, None] + rows[None, :]) ** 2  # p_ij (p_.i + p_j.)^2
    off_sum = float(off.sum() - np.trace(off))
    return _fleiss_standard_errors(diagonal, off_sum, kappa, pe, n, float(np.sum(rows * cols * (rows + cols))))


#: The cells of a 2x2 table in memory (row-major) order.
_CELLS: Final = ((0, 0), (0, 1), (1, 0), (1, 1))


def _square(x: float) -> float:
    """``x ** 2`` as numpy's ``power`` by 2 computes it on an array: one product."""
    return x * x


def _fleiss_standard_errors(
    diagonal: float, off_sum: float, kappa: float, pe: float, n: float, margin_cubes: float
) -> tuple[float, float]:
    """The two standard errors of :func:`_cohen_standard_errors` from its sums (Python floats, either path)."""
    variance = (diagonal + (1 - kappa) ** 2 * off_sum - (kappa - pe * (1 - kappa)) ** 2) / (n * (1 - pe) ** 2)
    variance_null = (pe + pe**2 - margin_cubes) / (n * (1 - pe) ** 2)
    return math.sqrt(max(variance, 0.0)), math.sqrt(max(variance_null, 0.0))


@dataclass(frozen=True, slots=True, kw_only=True)
class SignTest:
    """Exact two-sided sign test of ``successes`` out of ``n`` against :math:`p = 1/2`.

    ``pvalue`` is the exact (conditional) p-value, R's ``binom.test(successes, n)$p.value``;
    ``midp_pvalue`` is its mid-p version (Lancaster 1961): the exact p-value minus the probability
    of the observed count. ``None`` with ``status="insufficient_evidence"`` when ``n == 0``.
    """

    successes: int
    n: int
    pvalue: float | None
    midp_pvalue: float | None
    status: Status
    reason: str | None

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@functools.lru_cache(maxsize=8192)
def fisher_exact_2x2(a: int, b: int, c: int, d: int) -> tuple[float, float]:
    """``scipy.stats.fisher_exact([[a, b], [c, d]])`` (two-sided): the sample odds ratio and the p-value.

    Remembered per table (issue 28, item 3, session 45): a recalibration's rates and a covariate's two bins
    repeat their tables (2,156 distinct among the 13,703 tests of the judges' null simulations) and each scipy
    call costs ≈ 0.5 ms of distribution machinery. The same floats as scipy: it is what is called, once a table.

    Parameters
    ----------
    a, b
        The first row's two counts.
    c, d
        The second row's two counts.

    Returns
    -------
    tuple[float, float]
        scipy's sample odds ratio ``a d / (b c)`` (``inf`` or ``nan`` where scipy gives them) and its two-sided
        p-value.

    Examples
    --------
    >>> fisher_exact_2x2(8, 2, 1, 5)
    (20.0, 0.034965034965034975)
    """
    odds, p = stats.fisher_exact([[a, b], [c, d]])
    return float(odds), float(p)


def sign_test(successes: int, n: int, *, undefined_reason: str | None = None) -> SignTest:
    r"""Exact two-sided sign test (binomial test of :math:`p = 1/2`) and its mid-p value.

    .. math::

        p = \min\!\left(1,\; 2 \sum_{i=0}^{\min(x,\,n-x)} \binom{n}{i} 2^{-n}\right), \qquad
        p_\text{mid} = p - \binom{n}{x} 2^{-n}\ (x \ne n/2)

    (for :math:`x = n/2` the exact p-value is 1 and the mid-p value
    :math:`1 - \tfrac12\binom{n}{x}2^{-n}`, Fagerland et al. 2013), computed by
    :func:`gatestats.paired.mcnemar.mcnemar_pvalues`.

    Parameters
    ----------
    successes, n
        Successes among ``n`` trials (discordant pairs), integers with ``0 <= successes <= n``;
        ``n == 0`` gives ``status="insufficient_evidence"``.
    undefined_reason
        The reason reported when ``n == 0``.

    Returns
    -------
    SignTest
        The exact and mid-p two-sided p-values.

    Raises
    ------
    ValueError
        Counts that are not integers or out of range.

    Examples
    --------
    Zheng et al. (2023), Table 2, GPT-4 (default prompt): 24 of the 28 position-inconsistent pairs
    favour the first position:

    >>> round(sign_test(24, 28).pvalue, 6)
    0.00018
    """
    if n == 0 and successes == 0:
        return SignTest(
            successes=0,
            n=0,
            pvalue=None,
            midp_pvalue=None,
            status="insufficient_evidence",
            reason=undefined_reason or "no discordant pairs: the sign test is undefined",
        )
    _check_counts(successes, n)
    # The exact conditional McNemar test is this sign test: one implementation, in gatestats.paired. Up to
    # EXACT_MAX_TRIALS, mcnemar_pvalues' exact rationals clipped to [0, 1] as it clips them, without its arrays.
    if int(n) <= EXACT_MAX_TRIALS:
        exact_value, midp_value = exact_pvalues(int(n - successes), int(successes), "two-sided")
        pvalue, midp = min(max(exact_value, 0.0), 1.0), min(max(midp_value, 0.0), 1.0)
    else:
        exact, midp_array = mcnemar_pvalues(n - successes, successes)
        pvalue, midp = float(exact), float(midp_array)
    return SignTest(successes=int(successes), n=int(n), pvalue=pvalue, midp_pvalue=midp, status="ok", reason=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class PairedDifference:
    """Difference ``p_first - p_second`` of two paired proportions and Newcombe's interval."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    status: Status
    reason: str | None
    confidence_level: float

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def paired_difference_interval(
    both: int, first_only: int, second_only: int, neither: int, *, confidence_level: float = 0.95
) -> PairedDifference:
    r"""Newcombe's (1998b) method 10 interval for :math:`p_1 - p_2` from a paired 2x2 table.

    With :math:`p_1 = (a + b)/n`, :math:`p_2 = (a + c)/n` (``a`` = both, ``b`` = first only,
    ``c`` = second only, ``d`` = neither), Wilson limits :math:`(l_i, u_i)` of each, and the
    continuity-corrected correlation :math:`\hat\phi = C/\sqrt{(a+b)(c+d)(a+c)(b+d)}` where
    :math:`C = ad - bc - n/2` if :math:`ad - bc > n/2`, 0 if :math:`0 \le ad - bc \le n/2`,
    :math:`ad - bc` otherwise (0 when a margin is empty):

    .. math::

        L = \hat\delta - \sqrt{(p_1 - l_1)^2 - 2\hat\phi (p_1 - l_1)(u_2 - p_2) + (u_2 - p_2)^2}

        U = \hat\delta + \sqrt{(p_2 - l_2)^2 - 2\hat\phi (p_2 - l_2)(u_1 - p_1) + (u_1 - p_1)^2}

    Parameters
    ----------
    both, first_only, second_only, neither
        The paired 2x2 table: pairs positive on both, on the first only, on the second only, on
        neither (non-negative integers).
    confidence_level
        In (0, 1).

    Returns
    -------
    PairedDifference
        :math:`p_1 - p_2` with its interval, or ``status="insufficient_evidence"`` without pairs.

    Raises
    ------
    ValueError
        A count that is negative or not an integer; a confidence level outside (0, 1).

    Examples
    --------
    Fagerland, Lydersen & Laake (2017), ch. 8 (Cavo et al. 2012): -0.0621 (-0.1186 to -0.0046).

    >>> d = paired_difference_interval(59, 6, 16, 80)
    >>> round(d.estimate, 4), round(d.ci_low, 4), round(d.ci_high, 4)
    (-0.0621, -0.1186, -0.0046)
    """
    check_confidence_level(confidence_level)
    cells = (both, first_only, second_only, neither)
    if any(isinstance(c, bool) or int(c) != c or c < 0 for c in cells):
        msg = f"cell counts must be non-negative integers (got {cells})"
        raise ValueError(msg)
    a, b, c, d = (int(v) for v in cells)
    n = a + b + c + d
    if n == 0:
        return PairedDifference(
            estimate=None,
            ci_low=None,
            ci_high=None,
            n=0,
            status="insufficient_evidence",
            reason="no pairs: the paired difference is undefined",
            confidence_level=confidence_level,
        )
    # Newcombe's method 10 lives in gatestats.paired; there the difference is (a + c)/n - (a + b)/n,
    # so "first only" plays the candidate-only cell.
    low, high = newcombe_interval(a, c, b, d, confidence_level=confidence_level)
    delta = (b - c) / n
    return PairedDifference(
        estimate=delta,
        ci_low=max(-1.0, low),
        ci_high=min(1.0, high),
        n=n,
        status="ok",
        reason=None,
        confidence_level=confidence_level,
    )
