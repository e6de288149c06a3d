r"""Pass rates of an unlabelled production sample, corrected for the judge's two error rates.

A judge with sensitivity :math:`Se = 1 - \mathrm{FFR}` and specificity :math:`Sp = 1 - \mathrm{FPR}`
passes an item of a population whose true pass rate is :math:`\pi` with probability
:math:`q = Se\,\pi + (1 - Sp)(1 - \pi)`. Solving for :math:`\pi` gives the Rogan-Gladen (1978)
estimator from the observed (apparent) pass rate :math:`\hat q = k/n`:

.. math::

    \hat\pi = \frac{\hat q + \widehat{Sp} - 1}{\widehat{Se} + \widehat{Sp} - 1},
    \qquad \text{truncated to } [0, 1],

defined only when Youden's index :math:`J = Se + Sp - 1` is positive. A judge with
:math:`\hat J \le 0` is no better than a coin (or is inverted): :class:`JudgeUnusableError`, never a
number.

Interval (``method="lang-reiczigel"``, the default)
---------------------------------------------------
Lang & Reiczigel (2014) carry the uncertainty of all three estimates: the production sample's
:math:`\hat q` *and* the calibration set's :math:`\widehat{Se}` and :math:`\widehat{Sp}` (independent
binomial samples). In the manner of Agresti & Coull they first adjust the three proportions,

.. math::

    \tilde q = \frac{k + z^2/2}{n + z^2}, \quad
    \widetilde{Se} = \frac{x_{Se} + 1}{n_{Se} + 2}, \quad
    \widetilde{Sp} = \frac{x_{Sp} + 1}{n_{Sp} + 2}, \quad
    \tilde\pi = \frac{\tilde q + \widetilde{Sp} - 1}{\widetilde{Se} + \widetilde{Sp} - 1},

then use the delta-method standard error and a shift for the skewness of the ratio:

.. math::

    \widetilde{\mathrm{SE}} = \frac{1}{|\tilde J|}\sqrt{\frac{\tilde q(1-\tilde q)}{n + z^2}
      + \tilde\pi^2 \frac{\widetilde{Se}(1-\widetilde{Se})}{n_{Se} + 2}
      + (1-\tilde\pi)^2 \frac{\widetilde{Sp}(1-\widetilde{Sp})}{n_{Sp} + 2}}, \qquad
    d = 2 z^2 \left(\tilde\pi \frac{\widetilde{Se}(1-\widetilde{Se})}{n_{Se} + 2}
      - (1 - \tilde\pi)\frac{\widetilde{Sp}(1-\widetilde{Sp})}{n_{Sp} + 2}\right),

    [L, U] = \tilde\pi + d \mp z\,\widetilde{\mathrm{SE}}, \quad \text{truncated to } [0, 1],

widened if needed to contain :math:`\hat\pi`. (Written from the authors' own R implementation,
J. Reiczigel's ``CI4TruePrevalence_15_03_2013.r``.) Its coverage for judge calibration was
simulated (``tests/judges/test_coverage.py``, table in ``docs/judges.md``). When the limits
collapse to one point (an apparent pass rate far outside what the calibration allows) the result
is "insufficient evidence", never a zero-width interval.

No bootstrap is offered: in the same simulation the plug-in parametric percentile bootstrap over
the three samples covered as little as 56% at nominal 95% with 25 labelled passes and 25 labelled
fails (a calibration set without observed errors resamples no errors) and 93% with 250 and 250.

With sensitivity and specificity *known* (:func:`corrected_pass_rate_known`) the interval is the
apparent rate's exact interval mapped through the Rogan-Gladen formula (Reiczigel, Földi & Ózsvári
2010; R's ``epiR::epi.prev``).

References
----------
Agresti, A. & Coull, B. A. (1998). Approximate is better than "exact" for interval estimation of
    binomial proportions. The American Statistician 52(2), 119-126.
Lang, Z. & Reiczigel, J. (2014). Confidence limits for prevalence of disease adjusted for
    estimated sensitivity and specificity. Preventive Veterinary Medicine 113(1), 13-22.
Reiczigel, J., Földi, J. & Ózsvári, L. (2010). Exact confidence limits for prevalence of a disease
    with an imperfect diagnostic test. Epidemiology and Infection 138(11), 1674-1678.
Rogan, W. J. & Gladen, B. (1978). Estimating prevalence from the results of a screening test.
    American Journal of Epidemiology 107(1), 71-76.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from gatestats._lazy import lazy_module
from gatestats._typing import JSONObject
from gatestats.errors import GatestatsError
from gatestats.judges._stats import Proportion, proportion
from gatestats.judges._types import CORRECTION_METHODS, CorrectionMethod, ProportionMethod
from gatestats.vocabulary import Status, check_choice, check_confidence_level

stats = lazy_module("scipy.stats")

__all__ = [
    "CorrectedPassRate",
    "HasErrorRates",
    "JudgeUnusableError",
    "corrected_pass_rate",
    "corrected_pass_rate_known",
    "rogan_gladen",
]


class JudgeUnusableError(GatestatsError, ValueError):
    """The judge's Youden index (sensitivity + specificity - 1) is not positive: it cannot be used."""


class HasErrorRates(Protocol):
    """Anything with the two calibrated error rates (a calibration or a :class:`JudgeErrorRates`)."""

    @property
    def false_pass_rate(self) -> Proportion: ...

    @property
    def false_fail_rate(self) -> Proportion: ...


def _youden_error(sensitivity: float, specificity: float, where: str = "") -> JudgeUnusableError:
    youden = sensitivity + specificity - 1
    return JudgeUnusableError(
        f"the judge cannot be used{where}: Youden index = sensitivity + specificity - 1 = "
        f"{sensitivity:.4g} + {specificity:.4g} - 1 = {youden:.4g} (expected > 0); its verdicts carry no "
        "information about the true pass rate"
    )


def rogan_gladen(apparent: float, *, sensitivity: float, specificity: float) -> float:
    r"""Rogan-Gladen estimate :math:`(q + Sp - 1)/(Se + Sp - 1)`, *not* truncated to [0, 1].

    Parameters
    ----------
    apparent
        :math:`q`, the judge's pass rate, in [0, 1].
    sensitivity, specificity
        :math:`Se` and :math:`Sp` of the judge, in [0, 1].

    Returns
    -------
    float
        The corrected pass rate (may lie outside [0, 1]).

    Raises
    ------
    JudgeUnusableError
        When :math:`Se + Sp - 1 \le 0`.
    ValueError
        A rate outside [0, 1].

    Examples
    --------
    ``epiR::epi.prev`` documentation: 23 of 150 cows test positive, Se 0.96, Sp 0.89; true
    prevalence 5.1 per 100:

    >>> round(rogan_gladen(23 / 150, sensitivity=0.96, specificity=0.89), 4)
    0.051
    """
    for name, value in (("apparent", apparent), ("sensitivity", sensitivity), ("specificity", specificity)):
        if not 0.0 <= value <= 1.0:
            msg = f"{name} must lie in [0, 1] (got {value})"
            raise ValueError(msg)
    if sensitivity + specificity - 1 <= 0:
        raise _youden_error(sensitivity, specificity)
    return (apparent + specificity - 1) / (sensitivity + specificity - 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class CorrectedPassRate:
    """A pass rate corrected for judge error, with its interval, or "insufficient evidence".

    ``estimate`` is the truncated Rogan-Gladen estimate (``estimate_untruncated`` before
    truncation); ``apparent`` is the judge's raw pass rate on the production sample (Wilson
    interval). ``n_sensitivity``/``n_specificity`` are the calibration denominators (labelled
    passes and fails with a parseable verdict); ``None`` for known accuracy.
    """

    estimate: float | None
    estimate_untruncated: float | None
    ci_low: float | None
    ci_high: float | None
    status: Status
    reason: str | None
    method: CorrectionMethod | Literal["known-accuracy"]
    confidence_level: float
    n_pass: int
    n: int
    apparent: Proportion
    sensitivity: float | None
    specificity: float | None
    youden: float | None
    n_sensitivity: int | None
    n_specificity: int | None

    def to_dict(self) -> JSONObject:
        """JSON-ready dict."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["apparent"] = self.apparent.to_dict()
        return out


#: Codes of :func:`lang_reiczigel_batch`.
OK, UNUSABLE, ADJUSTED_UNUSABLE, ZERO_WIDTH = 0, 1, 2, 3


def lang_reiczigel_batch(
    k: npt.ArrayLike,
    n: npt.ArrayLike,
    x_se: npt.ArrayLike,
    n_se: npt.ArrayLike,
    x_sp: npt.ArrayLike,
    n_sp: npt.ArrayLike,
    *,
    confidence_level: float = 0.95,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.intp]]:
    """Vectorised engine of :func:`corrected_pass_rate` (also used by the coverage simulation).

    Returns the truncated Rogan-Gladen estimate, the limits (widened, if needed, to contain the
    estimate) and a code per sample: :data:`OK`, :data:`UNUSABLE` (estimated Youden index <= 0),
    :data:`ADJUSTED_UNUSABLE` (adjusted Youden index <= 0) or :data:`ZERO_WIDTH`; limits are NaN
    unless the code is :data:`OK`. All counts must satisfy ``0 <= x <= n`` and ``n >= 1``.
    """
    z = float(stats.norm.ppf(0.5 + confidence_level / 2))
    k, n, x_se, n_se, x_sp, n_sp = np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (k, n, x_se, n_se, x_sp, n_sp))
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        sens, spec = x_se / n_se, x_sp / n_sp
        youden_hat = sens + spec - 1
        estimate = np.clip((k / n + spec - 1) / youden_hat, 0.0, 1.0)
        # Lang & Reiczigel (2014): adjusted proportions ...
        q = (k + z * z / 2) / (n + z * z)
        se = (x_se + 1.0) / (n_se + 2.0)
        sp = (x_sp + 1.0) / (n_sp + 2.0)
        var_se = se * (1 - se) / (n_se + 2.0)
        var_sp = sp * (1 - sp) / (n_sp + 2.0)
        youden = se + sp - 1
        pi = (q + sp - 1) / youden
        # ... the delta-method standard error of the adjusted estimate ...
        sd = np.sqrt(q * (1 - q) / (n + z * z) + var_se * pi**2 + var_sp * (1 - pi) ** 2) / np.abs(youden)
        # ... and the shift for the skewness of the ratio.
        shift = 2 * z * z * (pi * var_se - (1 - pi) * var_sp)
        low = np.minimum(np.clip(pi + shift - z * sd, 0.0, 1.0), estimate)
        high = np.maximum(np.clip(pi + shift + z * sd, 0.0, 1.0), estimate)
    code = np.full(k.shape, OK, dtype=np.intp)
    code[~(high - low > 1e-12)] = ZERO_WIDTH
    code[~(youden > 0)] = ADJUSTED_UNUSABLE
    code[~(youden_hat > 0)] = UNUSABLE
    refused = code != OK
    low[refused] = np.nan
    high[refused] = np.nan
    estimate[code == UNUSABLE] = np.nan
    return estimate, low, high, code


def _basis(
    n_pass: int,
    n: int,
    apparent: Proportion,
    *,
    method: CorrectionMethod | Literal["known-accuracy"],
    accuracy: tuple[float, float] | None,
    counts: tuple[int, int] | None,
) -> CorrectedPassRate:
    """A result without its estimate yet: the method, the sample and the judge's accuracy.

    ``accuracy`` is (sensitivity, specificity), ``counts`` their calibration denominators;
    :func:`_unknown` gives it its reason, :func:`_corrected` its estimate and interval.
    """
    sensitivity, specificity = (None, None) if accuracy is None else accuracy
    n_sensitivity, n_specificity = (None, None) if counts is None else counts
    return CorrectedPassRate(
        estimate=None,
        estimate_untruncated=None,
        ci_low=None,
        ci_high=None,
        status="insufficient_evidence",
        reason=None,
        method=method,
        confidence_level=apparent.confidence_level,
        n_pass=int(n_pass),
        n=int(n),
        apparent=apparent,
        sensitivity=sensitivity,
        specificity=specificity,
        youden=None if accuracy is None else accuracy[0] + accuracy[1] - 1,
        n_sensitivity=n_sensitivity,
        n_specificity=n_specificity,
    )


def _unknown(reason: str, basis: CorrectedPassRate) -> CorrectedPassRate:
    """An "insufficient evidence" result: no estimate and no interval, with the reason."""
    return replace(basis, reason=reason)


def _corrected(
    basis: CorrectedPassRate, *, estimate: float, untruncated: float, low: float, high: float
) -> CorrectedPassRate:
    """A corrected pass rate with its interval."""
    return replace(
        basis, estimate=estimate, estimate_untruncated=untruncated, ci_low=low, ci_high=high, status="ok", reason=None
    )


def _check_production(n_pass: int, n: int) -> None:
    if isinstance(n_pass, bool) or isinstance(n, bool) or int(n_pass) != n_pass or int(n) != n:
        msg = f"n_pass and n must be integers (got {n_pass!r}, {n!r})"
        raise ValueError(msg)
    if not 0 <= n_pass <= n:
        msg = f"expected 0 <= n_pass <= n (got n_pass={n_pass}, n={n})"
        raise ValueError(msg)


def corrected_pass_rate(
    n_pass: int,
    n: int,
    *,
    calibration: HasErrorRates,
    method: CorrectionMethod = "lang-reiczigel",
    confidence_level: float = 0.95,
) -> CorrectedPassRate:
    """Pass rate of a production sample corrected for the judge's false-pass and false-fail rates.

    Parameters
    ----------
    n_pass, n
        The judge passed ``n_pass`` of ``n`` production items (unparseable verdicts excluded, as
        in the calibration).
    calibration
        The judge's calibration (:class:`~gatestats.judges.JudgeCalibration` or
        :class:`~gatestats.judges.JudgeErrorRates`): the counts behind its two error rates.
    method
        ``lang-reiczigel``, the only method offered (see the module docstring and
        ``docs/judges.md`` for why the plug-in bootstrap is not).
    confidence_level
        In (0, 1).

    Returns
    -------
    CorrectedPassRate
        ``status="insufficient_evidence"`` (with the reason) when an error rate is undefined (the
        calibration set lacks labelled passes or fails), when ``n == 0``, or when the data leave
        no interval of positive width (e.g. an apparent pass rate far below the false-pass rate).

    Raises
    ------
    JudgeUnusableError
        When the calibration's Youden index is not positive.
    ValueError
        Counts that are not integers with ``0 <= n_pass <= n``; an unknown method or a confidence
        level outside (0, 1).

    Examples
    --------
    >>> from gatestats.judges import proportion
    >>> class Cal:  # 90 of 100 labelled passes passed, 10 of 100 labelled fails passed
    ...     false_fail_rate = proportion(10, 100)
    ...     false_pass_rate = proportion(10, 100)
    >>> r = corrected_pass_rate(420, 1000, calibration=Cal())
    >>> round(r.estimate, 4), round(r.ci_low, 3), round(r.ci_high, 3)
    (0.4, 0.329, 0.465)
    """
    check_confidence_level(confidence_level)
    check_choice(method, CORRECTION_METHODS, "method")
    _check_production(n_pass, n)
    fpr, ffr = calibration.false_pass_rate, calibration.false_fail_rate
    apparent = proportion(
        n_pass, n, confidence_level=confidence_level, undefined_reason="the production sample is empty"
    )
    undefined = [p.reason for p in (fpr, ffr) if p.status != "ok"]
    if undefined:
        basis = _basis(n_pass, n, apparent, method=method, accuracy=None, counts=(ffr.n, fpr.n))
        return _unknown("the calibration cannot correct: " + "; ".join(r or "" for r in undefined), basis)
    x_se, n_se = ffr.n - ffr.numerator, ffr.n
    x_sp, n_sp = fpr.n - fpr.numerator, fpr.n
    sens, spec = x_se / n_se, x_sp / n_sp
    if sens + spec - 1 <= 0:
        raise _youden_error(sens, spec, " for correction")
    basis = _basis(n_pass, n, apparent, method=method, accuracy=(sens, spec), counts=(n_se, n_sp))
    if n == 0:
        return _unknown("the production sample is empty (n = 0)", basis)
    return _lang_reiczigel(n_pass, n, (x_se, n_se), (x_sp, n_sp), basis)


def _lang_reiczigel(
    n_pass: int, n: int, sensitivity: tuple[int, int], specificity: tuple[int, int], basis: CorrectedPassRate
) -> CorrectedPassRate:
    """The corrected pass rate of a usable calibration and a non-empty sample (counts: (x, n) each)."""
    (x_se, n_se), (x_sp, n_sp) = sensitivity, specificity
    sens, spec = x_se / n_se, x_sp / n_sp
    raw = rogan_gladen(n_pass / n, sensitivity=sens, specificity=spec)
    estimate, lows, highs, codes = lang_reiczigel_batch(
        n_pass, n, x_se, n_se, x_sp, n_sp, confidence_level=basis.confidence_level
    )
    code = int(codes.ravel()[0])
    if code == ADJUSTED_UNUSABLE:
        return _unknown(
            "the judge's Agresti-Coull-adjusted Youden index is not positive: its accuracy is too close to "
            "chance for the Lang-Reiczigel interval",
            basis,
        )
    if code == ZERO_WIDTH:
        side = "below" if raw < 0.5 else "above"
        return _unknown(
            f"no interval of positive width: the apparent pass rate {n_pass}/{n} lies far {side} what the "
            f"calibration allows (false-pass rate {1 - spec:.4g}, false-fail rate {1 - sens:.4g}); the "
            "calibration does not describe this production sample",
            basis,
        )
    return _corrected(
        basis,
        estimate=float(estimate.ravel()[0]),
        untruncated=raw,
        low=float(lows.ravel()[0]),
        high=float(highs.ravel()[0]),
    )


def corrected_pass_rate_known(
    n_pass: int,
    n: int,
    *,
    sensitivity: float,
    specificity: float,
    interval: ProportionMethod = "clopper-pearson",
    confidence_level: float = 0.95,
) -> CorrectedPassRate:
    """Corrected pass rate when sensitivity and specificity are *known* (not estimated).

    The apparent rate's interval (Clopper-Pearson by default) mapped through the Rogan-Gladen
    formula and truncated to [0, 1] (Reiczigel et al. 2010). Use :func:`corrected_pass_rate` when
    the error rates come from a calibration set: this interval ignores their uncertainty.

    Parameters
    ----------
    n_pass, n
        The judge passed ``n_pass`` of ``n`` production items.
    sensitivity, specificity
        The judge's known sensitivity and specificity, in [0, 1].
    interval
        Interval of the apparent pass rate: ``clopper-pearson`` (default) or ``wilson``.
    confidence_level
        In (0, 1).

    Returns
    -------
    CorrectedPassRate
        ``status="insufficient_evidence"`` when ``n == 0`` or when the apparent rate's interval
        maps to an interval of no width.

    Raises
    ------
    JudgeUnusableError
        When sensitivity + specificity - 1 <= 0.
    ValueError
        Counts that are not integers with ``0 <= n_pass <= n``; a rate outside [0, 1]; an unknown
        interval or a confidence level outside (0, 1).

    Examples
    --------
    ``epiR::epi.prev`` documentation, Moujaber et al. (2008): 6 of 151 positive, Se 0.964,
    Sp 0.927, Clopper-Pearson: true prevalence 0 (95% CI 0 to 1.3 per 100):

    >>> r = corrected_pass_rate_known(6, 151, sensitivity=0.964, specificity=0.927)
    >>> r.estimate, r.ci_low, round(100 * r.ci_high, 1)
    (0.0, 0.0, 1.3)
    """
    check_confidence_level(confidence_level)
    _check_production(n_pass, n)
    raw = rogan_gladen(n_pass / n if n else 0.0, sensitivity=sensitivity, specificity=specificity)
    apparent = proportion(
        n_pass, n, method=interval, confidence_level=confidence_level, undefined_reason="the production sample is empty"
    )
    basis = _basis(n_pass, n, apparent, method="known-accuracy", accuracy=(sensitivity, specificity), counts=None)
    if n == 0 or apparent.ci_low is None or apparent.ci_high is None:
        return _unknown("the production sample is empty (n = 0)", basis)
    youden = sensitivity + specificity - 1
    low = min(1.0, max(0.0, (apparent.ci_low + specificity - 1) / youden))
    high = min(1.0, max(0.0, (apparent.ci_high + specificity - 1) / youden))
    if not high - low > 1e-12:
        return _unknown(
            f"no interval of positive width: the apparent pass rate {n_pass}/{n} is incompatible with "
            f"sensitivity {sensitivity:g} and specificity {specificity:g}",
            basis,
        )
    return _corrected(basis, estimate=min(1.0, max(0.0, raw)), untruncated=raw, low=low, high=high)
