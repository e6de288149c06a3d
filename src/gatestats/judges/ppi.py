r"""Prediction-powered estimates of a mean: a judge grades everything, people label a subset.

A judge's verdict :math:`f_i` is known for every item; a human label :math:`Y_i` only for a
labelled subset. The judge-only mean :math:`\frac1N\sum f_i` is biased by the judge's errors; the
human-only mean :math:`\frac1n\sum Y_i` is unbiased but wide. Prediction-powered inference (PPI;
Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023) adds to the judge's mean the *rectifier*, the
labelled subset's mean error, and is unbiased whatever the judge's errors:

.. math::

    \hat\theta_\lambda = \frac1N \sum_{i=1}^{N} \lambda \tilde f_i
        + \frac1n \sum_{j=1}^{n} (Y_j - \lambda f_j), \qquad
    \widehat{\mathrm{SE}}^2 = \frac{\hat\sigma^2_{\lambda\tilde f}}{N}
        + \frac{\hat\sigma^2_{Y-\lambda f}}{n},

with :math:`\tilde f` the judge's verdicts on the :math:`N` unlabelled items and the interval
:math:`\hat\theta \pm z_{1-\alpha/2}\widehat{\mathrm{SE}}` (central limit theorem). Classical PPI is
:math:`\lambda = 1`; PPI++ (Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453) tunes the power
:math:`\lambda` to minimise the variance, :math:`\hat\lambda = \widehat{\mathrm{Cov}}(Y, f) /
((1 + n/N)\,\widehat{\mathrm{Var}}(f))` clipped to [0, 1] (:math:`\lambda = 0` is the human-only
mean). The variances are those of ppi-python 0.2.3 (``ppi_mean_ci``: standard deviations with
divisor n; the variance of f in :math:`\hat\lambda` over labelled and unlabelled verdicts with
divisor n + N - 1); :func:`ppi_mean` reproduces ``ppi_mean_ci`` and ``ppi_mean_pointestimate``
to 1e-12 (``tests/judges/test_ppi_reference.py``).

Labelled subset with known inclusion probabilities (:func:`ppi_mean_weighted`)
---------------------------------------------------------------------------------
When item *i* of the N judged items is labelled with known probability :math:`\pi_i` (e.g.
stratified by the judge's verdict), the inverse-probability-weighted estimator (Horvitz & Thompson
1952; in PPI form Zrnic & Candès 2024, "Active statistical inference") is the mean of

.. math::

    \phi_i = \lambda f_i + \frac{\xi_i}{\pi_i}(Y_i - \lambda f_i), \qquad \xi_i = 1 \text{ if labelled},

over **all** N judged items, with variance :math:`\hat\sigma^2_\phi / N` (divisor N - 1): the
variance of independent (Poisson) sampling with those probabilities, conservative for a fixed-size
stratified sample. PPI++ there tunes :math:`\hat\lambda = -\widehat{\mathrm{Cov}}(\xi Y/\pi,
f(1 - \xi/\pi)) / \widehat{\mathrm{Var}}(f(1 - \xi/\pi))`, clipped to [0, 1].

Honest fallbacks
----------------
Fewer than ``min_labels`` labels is "insufficient evidence", never a number. When every labelled
residual :math:`Y - \lambda f` is equal (e.g. the judge agreed with every label, or all labels are
equal) the sample variance is 0 and the interval would have width 0; the variance is then replaced
by that of a residual that takes the two ends of its range with the adjusted rate
:math:`\tilde p = (z^2/2)/(n + z^2)` (Agresti & Coull 1998's pseudo-counts): :math:`R^2\tilde p(1 -
\tilde p)`, R the residual's range (:math:`(b - a)(1 + \lambda)` for values in [a, b]); the result
says so in ``note``. Without a known range the result is insufficient evidence.

References
----------
Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023). Prediction-powered
    inference. Science 382(6671), 669-674.
Angelopoulos, A. N., Duchi, J. C. & Zrnic, T. (2023). PPI++: Efficient prediction-powered
    inference. arXiv:2311.01453.
Horvitz, D. G. & Thompson, D. J. (1952). A generalization of sampling without replacement from a
    finite universe. JASA 47(260), 663-685.
Zrnic, T. & Candès, E. J. (2024). Active statistical inference. ICML 2024, PMLR 235.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, get_args

import numpy as np
import numpy.typing as npt

from gatestats._typing import JSONObject
from gatestats.estimators.quantiles import two_sided_t, two_sided_z
from gatestats.vocabulary import Status, check_confidence_level

__all__ = [
    "ESTIMATE_METHODS",
    "MIN_LABELS",
    "MIN_LABELS_TUNED",
    "EstimateMethod",
    "MeanEstimate",
    "check_bounded_labels",
    "human_mean",
    "insufficient_estimate",
    "ppi_mean",
    "ppi_mean_weighted",
    "tuned_lambda",
]

#: Which estimate: the human labels alone, the judge alone, Rogan-Gladen's correction, classical
#: PPI (lambda = 1) or PPI++ (tuned lambda).
EstimateMethod: TypeAlias = Literal["human-only", "judge-only", "rogan-gladen", "ppi", "ppi++"]
ESTIMATE_METHODS: Final[tuple[EstimateMethod, ...]] = get_args(EstimateMethod)

#: Default smallest labelled subset for an interval (see ``docs/judges.md``, coverage table).
MIN_LABELS: Final = 30

#: Smallest labelled subset for PPI++ at the item level: lambda is tuned on the same labels, and
#: below 100 its interval covered 0.944 on average at nominal 0.95 in the LLMBar simulation
#: (``benchmarks/ppi_coverage.py``), under the 1 - alpha - 2 SE bar; classical PPI covered 0.950.
MIN_LABELS_TUNED: Final = 100

Floats: TypeAlias = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True, kw_only=True)
class MeanEstimate:
    """One estimate of a mean with its interval, its sample sizes and how it was made.

    ``estimate``, ``ci_low``, ``ci_high`` and ``se`` are ``None`` exactly when ``status`` is
    ``insufficient_evidence`` (``reason`` says why), and ``se`` is also ``None`` for an interval that is
    not estimate ± z·se (Wilson's, Lang-Reiczigel's). ``n_labelled`` human labels and
    ``n_unlabelled`` judge-only items entered it; ``lam`` is PPI's power (1 classical, tuned for
    PPI++, ``None`` for the other methods); ``note`` names a fallback used (e.g. the variance floor).
    """

    method: EstimateMethod
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    se: float | None
    n_labelled: int
    n_unlabelled: int
    lam: float | None
    status: Status
    reason: str | None
    note: str | None
    confidence_level: float

    def to_dict(self) -> JSONObject:
        """JSON-ready dict (every field; unknown numbers are ``None``)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _z(confidence_level: float, df: int | None = None) -> float:
    """The two-sided normal quantile, or Student's t with ``df`` degrees of freedom.

    :func:`~gatestats.estimators.quantiles.two_sided_z` and ``two_sided_t``: the floats of scipy's
    ``norm.ppf`` and ``t.ppf`` (this function's before session 46), stored at the common levels.
    """
    level = check_confidence_level(confidence_level)
    return two_sided_z(level) if df is None else two_sided_t(df, level)


def _vector(values: npt.ArrayLike, name: str, *, allow_empty: bool = False) -> Floats:
    """A one-dimensional float array of finite values (a clear error otherwise)."""
    try:
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        msg = f"{name}: expected numbers ({exc})"
        raise ValueError(msg) from None
    if out.ndim != 1:
        msg = f"{name}: expected a one-dimensional sequence (got shape {out.shape})"
        raise ValueError(msg)
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        msg = f"{name}: value {out[bad[0]]!r} at position {int(bad[0])} is not a finite number"
        raise ValueError(msg)
    if out.size == 0 and not allow_empty:
        msg = f"{name}: empty"
        raise ValueError(msg)
    return out


def check_bounded_labels(values: npt.ArrayLike, name: str) -> Floats:
    """A one-dimensional array of 0/1 values (booleans allowed); anything else, NaN included, is an error.

    Parameters
    ----------
    values
        The labels or verdicts.
    name
        Their name, for the message.

    Returns
    -------
    numpy.ndarray
        As floats.
    """
    out = _vector(values, name, allow_empty=True)
    bad = np.flatnonzero((out != 0) & (out != 1))
    if bad.size:
        msg = f"{name}: value {out[bad[0]]!r} at position {int(bad[0])} is not 0 or 1"
        raise ValueError(msg)
    return out


def _floor(n: int, value_range: float | None, z: float) -> float | None:
    """The variance given to residuals that were all equal: :math:`R^2\\tilde p(1-\\tilde p)`."""
    if value_range is None or value_range <= 0:
        return None
    p = (z * z / 2) / (n + z * z)
    return value_range**2 * p * (1 - p)


def tuned_lambda(labels: npt.ArrayLike, predictions: npt.ArrayLike, unlabelled_predictions: npt.ArrayLike) -> float:
    r"""PPI++'s power for a mean: :math:`\widehat{\mathrm{Cov}}(Y, f)/((1 + n/N)\widehat{\mathrm{Var}}(f))`, in [0, 1].

    As ppi-python 0.2.3 (``_calc_lam_glm``, one coordinate): the covariance over the labelled
    pairs with divisor n, the variance of f over labelled and unlabelled verdicts with divisor
    n + N - 1. A constant judge (variance 0) gives 0 (the human-only mean).

    Parameters
    ----------
    labels, predictions
        The n human labels and the judge's predictions for the same items.
    unlabelled_predictions
        The judge's predictions for the N unlabelled items.

    Returns
    -------
    float
        The power :math:`\hat\lambda`, clipped to [0, 1].
    """
    y, f = _vector(labels, "labels"), _vector(predictions, "predictions")
    u = _vector(unlabelled_predictions, "unlabelled_predictions")
    n, big_n = y.size, u.size
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    var = float(np.var(np.concatenate([f, u]), ddof=1)) if n + big_n > 1 else 0.0
    if not var > 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def insufficient_estimate(
    method: EstimateMethod,
    reason: str,
    *,
    sizes: tuple[int, int],
    confidence_level: float,
    lam: float | None = None,
    note: str | None = None,
) -> MeanEstimate:
    """An "insufficient evidence" :class:`MeanEstimate`: no estimate, no interval, the reason.

    Parameters
    ----------
    method
        Which estimator.
    reason
        Why there is no estimate.
    sizes
        (n labelled, n unlabelled).
    confidence_level
        The level that was asked.
    lam, note
        As in :class:`MeanEstimate`.

    Returns
    -------
    MeanEstimate
    """
    return MeanEstimate(
        method=method,
        estimate=None,
        ci_low=None,
        ci_high=None,
        se=None,
        n_labelled=sizes[0],
        n_unlabelled=sizes[1],
        lam=lam,
        status="insufficient_evidence",
        reason=reason,
        note=note,
        confidence_level=confidence_level,
    )


def _result(
    method: EstimateMethod,
    *,
    sizes: tuple[int, int],
    lam: float | None,
    confidence_level: float,
    value: tuple[float, float] | None = None,
    reason: str | None = None,
    note: str | None = None,
    df: int | None = None,
) -> MeanEstimate:
    """A :class:`MeanEstimate`: ``value`` is (estimate, se); without it, insufficient evidence.

    ``method`` labels the result; ``sizes`` is (n labelled, n unlabelled); ``reason`` and ``note``
    are as in :class:`MeanEstimate`; ``df`` asks for Student's t quantile instead of the normal one.
    """
    if value is None or not value[1] > 0:
        return insufficient_estimate(
            method,
            reason or "no interval of positive width",
            sizes=sizes,
            confidence_level=confidence_level,
            lam=lam,
            note=note,
        )
    estimate, se = value
    z = _z(confidence_level, df)
    return MeanEstimate(
        method=method,
        estimate=estimate,
        ci_low=estimate - z * se,
        ci_high=estimate + z * se,
        se=se,
        n_labelled=sizes[0],
        n_unlabelled=sizes[1],
        lam=lam,
        status="ok",
        reason=None,
        note=note,
        confidence_level=confidence_level,
    )


def _variance(
    values: Floats, *, ddof: int, scale: float | None, z: float, what: str
) -> tuple[float | None, str | None]:
    """The sample variance of ``values``, or the floor when they are all equal (``scale``: their range)."""
    var = float(np.var(values, ddof=ddof))
    if var > 0:
        return var, None
    floor = _floor(values.size, scale, z)
    if floor is None:
        return None, f"the {what} are all equal (variance 0) and their range is unknown"
    return floor, (
        f"the {what} are all equal (sample variance 0): variance floor R^2 p(1 - p) with "
        f"p = (z^2/2)/(n + z^2), n = {values.size}, R = {scale:g}"
    )


def _check_lengths_and_power(y: Floats, f: Floats, lam: float | None) -> None:
    if y.size != f.size:
        msg = f"labels ({y.size}) and predictions ({f.size}) differ in length"
        raise ValueError(msg)
    if lam is not None and not 0.0 <= lam <= 1.0:
        msg = f"lam must lie in [0, 1] (got {lam})"
        raise ValueError(msg)


def _times(width: float | None, factor: float) -> float | None:
    return None if width is None else width * factor


def ppi_mean(
    labels: npt.ArrayLike,
    predictions: npt.ArrayLike,
    unlabelled_predictions: npt.ArrayLike,
    *,
    lam: float | None = 1.0,
    confidence_level: float = 0.95,
    min_labels: int = MIN_LABELS,
    bounds: tuple[float, float] | None = None,
    small_sample: bool = False,
) -> MeanEstimate:
    """Prediction-powered mean: classical PPI (``lam=1``), PPI++ (``lam=None``) or a fixed power.

    Parameters
    ----------
    labels, predictions
        The n human labels and the judge's predictions on the same items (finite numbers).
    unlabelled_predictions
        The judge's predictions on the N items without a label (disjoint from the labelled ones).
    lam
        The power in [0, 1]; ``None`` tunes it (:func:`tuned_lambda`).
    confidence_level
        In (0, 1) (ppi-python's ``alpha`` is ``1 - confidence_level``).
    min_labels
        Fewer labels give "insufficient evidence".
    bounds
        (a, b): the range of labels and predictions, for the variance floor (pass rates: (0, 1)).
    small_sample
        ``False`` (default): ppi-python's interval (variances with divisor n, normal quantile).
        ``True``: divisor n - 1 and Student's t quantile with n - 1 degrees of freedom (what
        :func:`~gatestats.judges.ppi_items.ppi_pass_rate` uses; see ``docs/judges.md``, coverage).

    Returns
    -------
    MeanEstimate
        ``method`` ``ppi`` when ``lam == 1`` was asked, else ``ppi++``; the interval is not clipped
        (ppi-python's); ``note`` names a variance floor used.

    Raises
    ------
    ValueError
        Non-finite values, labels and predictions of different lengths, no unlabelled item, a
        power outside [0, 1].

    Examples
    --------
    >>> r = ppi_mean([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1], min_labels=2)
    >>> round(r.estimate, 4), round(r.se, 4)
    (0.9167, 0.2897)
    """
    y, f = _vector(labels, "labels"), _vector(predictions, "predictions")
    u = _vector(unlabelled_predictions, "unlabelled_predictions")
    _check_lengths_and_power(y, f, lam)
    method: EstimateMethod = "ppi" if lam == 1.0 else "ppi++"
    chosen = tuned_lambda(y, f, u) if lam is None else float(lam)
    sizes = (int(y.size), int(u.size))
    if y.size < max(min_labels, 2):
        reason = f"{y.size} human label(s); at least {max(min_labels, 2)} are needed for an interval"
        return _result(method, sizes=sizes, lam=chosen, confidence_level=confidence_level, reason=reason)
    z = _z(confidence_level)
    width = None if bounds is None else float(bounds[1] - bounds[0])
    ddof = int(small_sample)
    rect_var, rect_note = _variance(
        y - chosen * f, ddof=ddof, scale=_times(width, 1 + chosen), z=z, what="labelled residuals"
    )
    imp_var, imp_note = (
        _variance(chosen * u, ddof=ddof, scale=_times(width, chosen), z=z, what="unlabelled predictions")
        if chosen > 0
        else (0.0, None)
    )
    notes = "; ".join(n for n in (rect_note, imp_note) if n) or None
    if rect_var is None or imp_var is None:
        return _result(method, sizes=sizes, lam=chosen, confidence_level=confidence_level, reason=notes)
    estimate = float(np.mean(chosen * u) + np.mean(y - chosen * f))
    se = math.sqrt(imp_var / u.size + rect_var / y.size)
    df = int(y.size) - 1 if small_sample else None
    return _result(
        method, sizes=sizes, lam=chosen, confidence_level=confidence_level, value=(estimate, se), note=notes, df=df
    )


def _weighted_lambda(y_ipw: Floats, f_rest: Floats) -> float:
    """PPI++'s power under inverse-probability weighting, clipped to [0, 1]."""
    var = float(np.var(f_rest, ddof=1))
    if not var > 0:
        return 0.0
    cov = float(np.cov(y_ipw, f_rest, ddof=1)[0, 1])
    return float(np.clip(-cov / var, 0.0, 1.0))


def ppi_mean_weighted(
    predictions: npt.ArrayLike,
    inclusion: npt.ArrayLike,
    labelled: npt.ArrayLike,
    labels: npt.ArrayLike,
    *,
    lam: float | None = 1.0,
    confidence_level: float = 0.95,
    min_labels: int = MIN_LABELS,
    bounds: tuple[float, float] | None = None,
    small_sample: bool = False,
) -> MeanEstimate:
    """Prediction-powered mean when the labelled subset was drawn with known inclusion probabilities.

    Parameters
    ----------
    predictions
        The judge's predictions on all N judged items.
    inclusion
        Each item's probability of being labelled, in (0, 1].
    labelled
        The positions (0-based, distinct) of the labelled items among the N.
    labels
        Their human labels, in the order of ``labelled``.
    lam, confidence_level, min_labels, bounds
        As in :func:`ppi_mean`; ``lam=0`` is the Horvitz-Thompson mean of the labels alone.
    small_sample
        ``True``: Student's t quantile with n_labelled - 1 degrees of freedom.

    Returns
    -------
    MeanEstimate
        ``n_labelled`` labels, ``n_unlabelled`` = N - n_labelled.

    Raises
    ------
    ValueError
        Non-finite values; an inclusion probability outside (0, 1]; positions out of range or
        repeated; labels and positions of different lengths.
    """
    f = _vector(predictions, "predictions")
    pi = _vector(inclusion, "inclusion")
    idx = np.asarray(labelled)
    idx = idx.astype(np.intp) if idx.size == 0 else idx
    y = _vector(labels, "labels", allow_empty=True)
    _check_design(f, pi, idx, y, lam)
    method: EstimateMethod = "ppi" if lam == 1.0 else "ppi++"
    xi = np.zeros(f.size)
    xi[idx] = 1.0
    full_y = np.zeros(f.size)
    full_y[idx] = y
    y_ipw = xi * full_y / pi
    f_rest = f * (1 - xi / pi)
    chosen = _weighted_lambda(y_ipw, f_rest) if lam is None else float(lam)
    sizes = (int(idx.size), int(f.size - idx.size))
    if idx.size < max(min_labels, 2):
        reason = f"{idx.size} human label(s); at least {max(min_labels, 2)} are needed for an interval"
        return _result(method, sizes=sizes, lam=chosen, confidence_level=confidence_level, reason=reason)
    phi = y_ipw + chosen * f_rest
    z = _z(confidence_level)
    note = None
    var = float(np.var(phi, ddof=1))
    if not float(np.var(y - chosen * f[idx])) > 0:
        width = None if bounds is None else float(bounds[1] - bounds[0]) * (1 + chosen)
        floor = _floor(int(idx.size), width, z)
        if floor is None:
            reason = "the labelled residuals are all equal (variance 0) and their range is unknown"
            return _result(method, sizes=sizes, lam=chosen, confidence_level=confidence_level, reason=reason)
        # Poisson sampling adds Var(xi/pi * r) = sigma^2 (1 - pi)/pi per item for residuals of variance sigma^2.
        var += floor * float(np.mean((1 - pi) / pi))
        note = (
            "the labelled residuals are all equal (sample variance 0): their variance floored at R^2 p(1 - p) "
            f"with p = (z^2/2)/(n + z^2), n = {idx.size}, R = {width:g}"
        )
    estimate = float(np.mean(phi))
    se = math.sqrt(var / f.size)
    df = int(idx.size) - 1 if small_sample else None
    return _result(
        method, sizes=sizes, lam=chosen, confidence_level=confidence_level, value=(estimate, se), note=note, df=df
    )


def _check_design(f: Floats, pi: Floats, idx: npt.NDArray[np.generic], y: Floats, lam: float | None) -> None:
    """The weighted design's inputs agree (clear errors naming what is wrong)."""
    if pi.size != f.size:
        msg = f"inclusion ({pi.size}) and predictions ({f.size}) differ in length"
        raise ValueError(msg)
    bad = np.flatnonzero(~((pi > 0) & (pi <= 1)))
    if bad.size:
        msg = f"inclusion: probability {pi[bad[0]]!r} at position {int(bad[0])} is not in (0, 1]"
        raise ValueError(msg)
    if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
        msg = "labelled: expected a one-dimensional sequence of integer positions"
        raise ValueError(msg)
    if idx.size != y.size:
        msg = f"labelled ({idx.size}) and labels ({y.size}) differ in length"
        raise ValueError(msg)
    if idx.size and (idx.min() < 0 or idx.max() >= f.size):
        msg = f"labelled: positions must lie in [0, {f.size - 1}]"
        raise ValueError(msg)
    if np.unique(idx).size != idx.size:
        msg = "labelled: a position appears twice"
        raise ValueError(msg)
    if lam is not None and not 0.0 <= lam <= 1.0:
        msg = f"lam must lie in [0, 1] (got {lam})"
        raise ValueError(msg)


def human_mean(
    labels: npt.ArrayLike,
    *,
    method: EstimateMethod = "human-only",
    n_unlabelled: int = 0,
    confidence_level: float = 0.95,
    min_labels: int = MIN_LABELS,
    bounds: tuple[float, float] | None = None,
    small_sample: bool = False,
) -> MeanEstimate:
    """The plain mean of n values with its CLT interval (sample variance, divisor n - 1).

    Parameters
    ----------
    labels
        The values (human labels, or the judge's verdicts for ``method="judge-only"``).
    method, n_unlabelled
        How the result is labelled, and the unlabelled count it reports.
    confidence_level, min_labels, bounds, small_sample
        As in :func:`ppi_mean` (the variance floor when every value is equal; ``small_sample``:
        Student's t quantile with n - 1 degrees of freedom).

    Returns
    -------
    MeanEstimate
        ``lam`` is ``None``.
    """
    y = _vector(labels, "labels", allow_empty=True)
    sizes = (int(y.size), n_unlabelled) if method != "judge-only" else (0, int(y.size))
    if y.size < max(min_labels, 2):
        reason = f"{y.size} value(s); at least {max(min_labels, 2)} are needed for an interval"
        return _result(method, sizes=sizes, lam=None, confidence_level=confidence_level, reason=reason)
    width = None if bounds is None else float(bounds[1] - bounds[0])
    var, note = _variance(y, ddof=1, scale=width, z=_z(confidence_level), what="values")
    if var is None:
        return _result(method, sizes=sizes, lam=None, confidence_level=confidence_level, reason=note)
    value = (float(np.mean(y)), math.sqrt(var / y.size))
    df = int(y.size) - 1 if small_sample else None
    return _result(method, sizes=sizes, lam=None, confidence_level=confidence_level, value=value, note=note, df=df)
