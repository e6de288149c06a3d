r"""How many human labels, and which items to label: budgets for PPI, PPI++ and human labels alone.

From a pilot (a few labelled, judged items) come the moments the variances need: the labels'
variance :math:`\sigma_Y^2`, the judge's :math:`\sigma_f^2`, their covariance :math:`c`. With n
labels and N judge-only items the standard errors are

.. math::

    \text{human only: } \frac{\sigma_Y^2}{n}, \qquad
    \text{PPI}_\lambda: \frac{\lambda^2\sigma_f^2}{N} + \frac{\sigma_Y^2 - 2\lambda c + \lambda^2\sigma_f^2}{n},

classical PPI at :math:`\lambda = 1`, PPI++ at its optimum :math:`\lambda^* = c/((1 + n/N)\sigma_f^2)`
(clipped to [0, 1]), where :math:`\mathrm{SE}^2 = (\sigma_Y^2/n)(1 - \rho^2 N/(N + n))`. The labels
needed for a half-width h at level :math:`1 - \alpha` solve :math:`z_{1-\alpha/2}\,\mathrm{SE}(n) = h`:
for the human labels alone :math:`n = \lceil (z\sigma_Y/h)^2 \rceil`, the textbook formula; for
PPI and PPI++ the smallest n found by bisection (the SE falls with n). To *decide* a threshold t
with power :math:`1 - \beta` when the pilot's mean is :math:`\hat\theta`, the half-width is
:math:`h = z_{1-\alpha/2}\,|\hat\theta - t| / (z_{1-\alpha/2} + z_{1-\beta})`.

With :math:`\lambda = c/\sigma_f^2` (the N → ∞ optimum) and a pass/fail judge, PPI's variance is
:math:`\mathrm{Var}(\mu(f))/N + E[\mu(f)(1 - \mu(f))]/n` with :math:`\mu(f) = E[Y \mid f]`: the
efficient-influence-function estimator of Chen et al. (2026), whose worked example (pppower's
"LLM-as-a-judge" vignette: 556 labels for 80% power) ``tests/judges/test_budget.py`` reproduces.

Which items to label
--------------------
Stratify the judged items by the judge's verdict (pass / fail / unparseable) and label
:math:`n_h` of the :math:`N_h` items of stratum h: **proportional** :math:`n_h \propto N_h`, or
**Neyman** :math:`n_h \propto N_h s_h` (Neyman 1934; :math:`s_h` the labels' standard deviation in
the stratum, from the pilot), capped at :math:`N_h`. The estimator that matches the design is the
stratified mean :math:`\hat\theta = \sum_h W_h \bar y_h` (:math:`W_h = N_h/N`) with variance
:math:`\sum_h W_h^2 (1 - n_h/N_h) s_h^2/n_h` (:func:`stratified_mean`; Cochran 1977, 5.2). With the
verdict as strata it equals PPI with inverse-probability weights :math:`\pi_h = n_h/N_h`
(``ppi_pass_rate(..., design="weighted")``), whose Poisson-sampling variance is the conservative
one. A stratum's standard deviation of 0 in the pilot (all its labels equal) is floored as in
:mod:`gatestats.judges.ppi`: :math:`\tilde p(1 - \tilde p)`, :math:`\tilde p = (z^2/2)/(m + z^2)`.

References
----------
Chen, Y. T., Guo, M. & Li, S. (2026). Power analysis for prediction-powered inference.
    arXiv:2603.16041; R package pppower, vignette "LLM-as-a-judge (binary surrogates)".
Cochran, W. G. (1977). Sampling Techniques, 3rd ed. Wiley, ch. 5.
Neyman, J. (1934). On the two different aspects of the representative method. JRSS 97(4), 558-625.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, get_args

import numpy as np
import numpy.typing as npt

from gatestats._lazy import lazy_module
from gatestats.judges.ppi import MeanEstimate, check_bounded_labels
from gatestats.vocabulary import check_confidence_level

stats = lazy_module("scipy.stats")

__all__ = [
    "ALLOCATIONS",
    "BUDGET_METHODS",
    "Allocation",
    "AllocationScheme",
    "BudgetMethod",
    "PilotMoments",
    "allocate_labels",
    "binary_judge_moments",
    "labels_for_half_width",
    "labels_for_power",
    "pilot_moments",
    "power",
    "standard_error",
    "stratified_mean",
    "stratum_deviations",
]

#: Which estimator a budget is for.
BudgetMethod: TypeAlias = Literal["human-only", "ppi", "ppi++"]
BUDGET_METHODS: Final[tuple[BudgetMethod, ...]] = get_args(BudgetMethod)

#: How labels are spread over the strata of the judge's verdict.
AllocationScheme: TypeAlias = Literal["proportional", "neyman"]
ALLOCATIONS: Final[tuple[AllocationScheme, ...]] = get_args(AllocationScheme)

#: The largest number of labels a budget searches (beyond it: unreachable).
MAX_LABELS: Final = 10_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class PilotMoments:
    """The moments a budget needs: mean and variance of the labels, variance of the judge, covariance.

    ``n_pilot`` is the pilot's size (``None`` for moments given as population values);
    ``note`` names a variance floor used.
    """

    mean_label: float
    var_label: float
    var_prediction: float
    covariance: float
    n_pilot: int | None
    note: str | None

    @property
    def correlation(self) -> float:
        """Pearson's correlation of labels and predictions (0 when either is constant)."""
        denom = math.sqrt(self.var_label * self.var_prediction)
        return self.covariance / denom if denom > 0 else 0.0

    @property
    def slope(self) -> float:
        """:math:`c/\\sigma_f^2`, PPI++'s power as N grows (0 for a constant judge)."""
        return self.covariance / self.var_prediction if self.var_prediction > 0 else 0.0


def _z(confidence_level: float) -> float:
    return float(stats.norm.ppf(0.5 + check_confidence_level(confidence_level) / 2))


def _floor(m: int, z: float) -> float:
    p = (z * z / 2) / (m + z * z)
    return p * (1 - p)


def pilot_moments(labels: npt.ArrayLike, predictions: npt.ArrayLike, *, confidence_level: float = 0.95) -> PilotMoments:
    """The moments of a pilot's pass/fail labels and judge verdicts (sample variances, divisor m - 1).

    Parameters
    ----------
    labels, predictions
        The pilot's human labels and the judge's verdicts on the same items, each 0 or 1.
    confidence_level
        For the variance floor when every label is equal.

    Returns
    -------
    PilotMoments

    Raises
    ------
    ValueError
        Fewer than 2 items, lengths that differ, a value that is not 0 or 1 (NaN included).
    """
    y, f = check_bounded_labels(labels, "labels"), check_bounded_labels(predictions, "predictions")
    if y.size != f.size or y.size < 2:
        msg = f"labels ({y.size}) and predictions ({f.size}) must have the same length, at least 2"
        raise ValueError(msg)
    var_y = float(np.var(y, ddof=1))
    note = None
    if not var_y > 0:
        z = _z(confidence_level)
        var_y = _floor(int(y.size), z)
        note = (
            f"every pilot label is equal: the labels' variance floored at p(1 - p), p = (z^2/2)/(m + z^2), m = {y.size}"
        )
    return PilotMoments(
        mean_label=float(np.mean(y)),
        var_label=var_y,
        var_prediction=float(np.var(f, ddof=1)),
        covariance=float(np.cov(y, f, ddof=1)[0, 1]),
        n_pilot=int(y.size),
        note=note,
    )


def binary_judge_moments(*, prevalence: float, sensitivity: float, specificity: float) -> PilotMoments:
    """Population moments of a pass/fail judge from the pass rate and the judge's two accuracies.

    Parameters
    ----------
    prevalence
        P(label passes).
    sensitivity, specificity
        P(judge passes | label passes) and P(judge fails | label fails).

    Returns
    -------
    PilotMoments
        ``n_pilot`` is ``None``.

    Raises
    ------
    ValueError
        A probability outside [0, 1].
    """
    for name, value in (("prevalence", prevalence), ("sensitivity", sensitivity), ("specificity", specificity)):
        if not 0.0 <= value <= 1.0:
            msg = f"{name} must lie in [0, 1] (got {value!r})"
            raise ValueError(msg)
    q = prevalence * sensitivity + (1 - prevalence) * (1 - specificity)
    return PilotMoments(
        mean_label=prevalence,
        var_label=prevalence * (1 - prevalence),
        var_prediction=q * (1 - q),
        covariance=prevalence * sensitivity - prevalence * q,
        n_pilot=None,
        note=None,
    )


def _lam(moments: PilotMoments, method: BudgetMethod, n: float, big_n: float | None, lam: float | None) -> float:
    if lam is not None:
        return lam
    if method == "human-only":
        return 0.0
    if method == "ppi":
        return 1.0
    ratio = 0.0 if big_n is None else n / big_n
    return (
        min(1.0, max(0.0, moments.covariance / ((1 + ratio) * moments.var_prediction)))
        if moments.var_prediction > 0
        else 0.0
    )


def standard_error(
    moments: PilotMoments,
    *,
    n_labels: float,
    n_unlabelled: int | None = None,
    method: BudgetMethod = "ppi++",
    lam: float | None = None,
) -> float:
    """The standard error of the estimator with ``n_labels`` labels and ``n_unlabelled`` judge-only items.

    Parameters
    ----------
    moments
        From :func:`pilot_moments` or :func:`binary_judge_moments`.
    n_labels, n_unlabelled
        n and N (``None``: N unlimited).
    method
        ``human-only``, ``ppi`` (lambda = 1) or ``ppi++`` (lambda at its optimum for n and N).
    lam
        A fixed power instead (e.g. ``moments.slope``).

    Returns
    -------
    float
    """
    if not n_labels > 0:
        msg = f"n_labels must be positive (got {n_labels!r})"
        raise ValueError(msg)
    power_ = _lam(moments, method, n_labels, n_unlabelled, lam)
    residual = moments.var_label - 2 * power_ * moments.covariance + power_**2 * moments.var_prediction
    imputed = 0.0 if n_unlabelled is None else power_**2 * moments.var_prediction / n_unlabelled
    return math.sqrt(max(residual, 0.0) / n_labels + imputed)


def labels_for_half_width(
    moments: PilotMoments,
    *,
    half_width: float,
    n_unlabelled: int | None = None,
    method: BudgetMethod = "ppi++",
    lam: float | None = None,
    confidence_level: float = 0.95,
) -> int | None:
    """The fewest labels whose interval half-width is at most ``half_width`` (``None``: unreachable).

    Human labels alone: :math:`\\lceil (z\\sigma_Y/h)^2 \\rceil`; PPI and PPI++: the smallest n with
    :math:`z\\,\\mathrm{SE}(n) \\le h` (bisection). With N judge-only items, PPI's imputed term
    :math:`\\lambda^2\\sigma_f^2/N` is a floor that no number of labels removes: ``None`` when it is
    above :math:`(h/z)^2`, or when more than 10 million labels would be needed.

    Parameters
    ----------
    moments, n_unlabelled, method, lam
        As in :func:`standard_error`.
    half_width
        The wanted half-width, > 0.
    confidence_level
        In (0, 1).

    Returns
    -------
    int or None
    """
    z = _z(confidence_level)
    if not (isinstance(half_width, int | float) and math.isfinite(half_width) and half_width > 0):
        msg = f"half_width must be a positive number (got {half_width!r})"
        raise ValueError(msg)
    if method == "human-only" and lam is None:
        return max(1, math.ceil((z * z * moments.var_label / half_width**2) - 1e-9))

    def wide(n: int) -> bool:
        return z * standard_error(moments, n_labels=n, n_unlabelled=n_unlabelled, method=method, lam=lam) > half_width

    if wide(MAX_LABELS):
        return None
    low, high = 0, MAX_LABELS  # wide(low) or low == 0; not wide(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if wide(mid) else (low, mid)
    return high


def labels_for_power(
    moments: PilotMoments,
    *,
    delta: float,
    target_power: float = 0.8,
    n_unlabelled: int | None = None,
    method: BudgetMethod = "ppi++",
    lam: float | None = None,
    confidence_level: float = 0.95,
) -> int | None:
    """The fewest labels for a two-sided test at level 1 - confidence_level to detect a shift ``delta``.

    ``delta`` is the distance between the true value and the threshold (the pilot's
    :math:`|\\hat\\theta - t|` to decide a rule's threshold t); the half-width asked is
    :math:`z_{1-\\alpha/2}\\,\\delta/(z_{1-\\alpha/2} + z_{\\text{power}})`.

    Parameters
    ----------
    moments, n_unlabelled, method, lam, confidence_level
        As in :func:`labels_for_half_width`.
    delta
        The shift to detect, > 0.
    target_power
        In (0, 1).

    Returns
    -------
    int or None
    """
    if not 0.0 < target_power < 1.0 or not (math.isfinite(delta) and delta > 0):
        msg = f"need 0 < target_power < 1 and delta > 0 (got {target_power!r}, {delta!r})"
        raise ValueError(msg)
    z = _z(confidence_level)
    half = z * delta / (z + float(stats.norm.ppf(target_power)))
    return labels_for_half_width(
        moments,
        half_width=half,
        n_unlabelled=n_unlabelled,
        method=method,
        lam=lam,
        confidence_level=confidence_level,
    )


def power(
    moments: PilotMoments,
    *,
    delta: float,
    n_labels: int,
    n_unlabelled: int | None = None,
    method: BudgetMethod = "ppi++",
    lam: float | None = None,
    confidence_level: float = 0.95,
) -> float:
    """The two-sided Wald test's power :math:`\\Phi(\\delta/\\mathrm{SE} - z) + \\Phi(-\\delta/\\mathrm{SE} - z)`.

    Parameters
    ----------
    moments, n_labels, n_unlabelled, method, lam, confidence_level
        As in :func:`standard_error` and :func:`labels_for_half_width`.
    delta
        The true shift from the null value.

    Returns
    -------
    float
    """
    z = _z(confidence_level)
    se = standard_error(moments, n_labels=n_labels, n_unlabelled=n_unlabelled, method=method, lam=lam)
    return float(stats.norm.cdf(delta / se - z) + stats.norm.cdf(-delta / se - z))


@dataclass(frozen=True, slots=True, kw_only=True)
class Allocation:
    """Labels per stratum of the judge's verdict, with each stratum's inclusion probability.

    ``inclusion[h] = labels[h] / sizes[h]`` is what ``ppi_pass_rate(..., design="weighted")`` reads
    (its ``inclusion`` column); ``half_width`` is the stratified mean's expected half-width with the
    pilot's deviations.
    """

    scheme: AllocationScheme
    strata: tuple[str, ...]
    sizes: tuple[int, ...]
    labels: tuple[int, ...]
    inclusion: tuple[float, ...]
    deviations: tuple[float, ...]
    half_width: float
    confidence_level: float


def stratum_deviations(
    verdicts: Sequence[str], labels: npt.ArrayLike, *, confidence_level: float = 0.95
) -> dict[str, float]:
    """Each verdict stratum's standard deviation of the pilot's labels (floored when the labels agree).

    Parameters
    ----------
    verdicts
        The judge's verdict (the stratum) of each pilot item.
    labels
        The human labels (0/1) of the same items.
    confidence_level
        For the floor :math:`\\sqrt{\\tilde p(1 - \\tilde p)}`, :math:`\\tilde p = (z^2/2)/(m + z^2)`.

    Returns
    -------
    dict
        ``{stratum: deviation}``; a stratum with one pilot item gets the floor too.
    """
    y = check_bounded_labels(labels, "labels")
    if len(verdicts) != y.size:
        msg = f"verdicts ({len(verdicts)}) and labels ({y.size}) differ in length"
        raise ValueError(msg)
    z = _z(confidence_level)
    out: dict[str, float] = {}
    for stratum in sorted(set(verdicts)):
        part = y[[v == stratum for v in verdicts]]
        var = float(np.var(part, ddof=1)) if part.size > 1 else 0.0
        out[stratum] = math.sqrt(var if var > 0 else _floor(int(part.size), z))
    return out


def _stratified_half_width(sizes: Sequence[int], labels: Sequence[int], sd: Sequence[float], z: float) -> float:
    total = sum(sizes)
    var = sum(
        (big / total) ** 2 * (1 - n / big) * s * s / n for big, n, s in zip(sizes, labels, sd, strict=True) if n > 0
    )
    return z * math.sqrt(var)


def allocate_labels(
    sizes: Mapping[str, int],
    deviations: Mapping[str, float],
    *,
    n_labels: int,
    scheme: AllocationScheme = "neyman",
    confidence_level: float = 0.95,
) -> Allocation:
    """Spread ``n_labels`` labels over the verdict strata: proportional or Neyman, capped at each stratum's size.

    Parameters
    ----------
    sizes
        ``{stratum: N_h}``, the judged items of each verdict (every stratum non-empty).
    deviations
        ``{stratum: s_h}`` from :func:`stratum_deviations` (needed for every stratum).
    n_labels
        The labels to place, 2 per stratum at least and at most the number of items.
    scheme
        ``proportional`` (:math:`n_h \\propto N_h`) or ``neyman`` (:math:`n_h \\propto N_h s_h`).
    confidence_level
        For the expected half-width.

    Returns
    -------
    Allocation

    Raises
    ------
    ValueError
        An empty stratum, a deviation missing, negative or not finite, or ``n_labels`` out of range.
    """
    strata = tuple(sorted(sizes))
    if not strata:
        msg = "no strata"
        raise ValueError(msg)
    for h in strata:
        if isinstance(sizes[h], bool) or not isinstance(sizes[h], int) or sizes[h] < 1:
            msg = f"stratum {h!r}: size must be a positive integer (got {sizes[h]!r}); leave empty strata out"
            raise ValueError(msg)
        if h not in deviations or not (math.isfinite(deviations[h]) and deviations[h] >= 0):
            msg = f"stratum {h!r}: no finite, non-negative standard deviation"
            raise ValueError(msg)
    big = [sizes[h] for h in strata]
    if isinstance(n_labels, bool) or not isinstance(n_labels, int) or not 2 * len(strata) <= n_labels <= sum(big):
        msg = f"n_labels must be an integer in [{2 * len(strata)}, {sum(big)}] (got {n_labels!r})"
        raise ValueError(msg)
    weight = [float(n) if scheme == "proportional" else n * deviations[h] for n, h in zip(big, strata, strict=True)]
    labels = _capped_shares(weight, big, n_labels)
    z = _z(confidence_level)
    sd = [deviations[h] for h in strata]
    return Allocation(
        scheme=scheme,
        strata=strata,
        sizes=tuple(big),
        labels=tuple(labels),
        inclusion=tuple(n / b for n, b in zip(labels, big, strict=True)),
        deviations=tuple(sd),
        half_width=_stratified_half_width(big, labels, sd, z),
        confidence_level=confidence_level,
    )


def _capped_shares(weight: list[float], cap: list[int], total: int) -> list[int]:
    """Integer shares of ``total`` proportional to ``weight``, each in [min(2, cap), cap] (largest remainders)."""
    low = [min(2, c) for c in cap]
    out = list(low)
    free = [i for i in range(len(cap)) if out[i] < cap[i]]
    left = total - sum(out)
    while left > 0 and free:
        mass = sum(weight[i] for i in free)
        share = {i: (left * weight[i] / mass if mass > 0 else left / len(free)) for i in free}
        over = [i for i in free if out[i] + share[i] >= cap[i]]
        if over:  # fill capped strata first, then share again
            for i in over:
                left -= cap[i] - out[i]
                out[i] = cap[i]
            free = [i for i in free if i not in over]
            continue
        floors = {i: math.floor(share[i]) for i in free}
        for i in free:
            out[i] += floors[i]
        left -= sum(floors.values())
        for i in sorted(free, key=lambda i: share[i] - floors[i], reverse=True)[:left]:
            out[i] += 1
        left = 0
    return out


def stratified_mean(
    sizes: Mapping[str, int], labels: Mapping[str, npt.ArrayLike], *, confidence_level: float = 0.95
) -> MeanEstimate:
    """The stratified mean :math:`\\sum_h W_h \\bar y_h` with variance :math:`\\sum_h W_h^2 (1 - n_h/N_h) s_h^2/n_h`.

    The estimator that matches labels drawn per verdict stratum (simple random sampling within
    each; Cochran 1977, 5.2), normal interval. A stratum whose labels are all equal has its
    variance floored as in :func:`stratum_deviations` (``note`` says so).

    Parameters
    ----------
    sizes
        ``{stratum: N_h}``.
    labels
        ``{stratum: the 0/1 labels drawn from it}``, at least 2 per stratum, at most N_h.
    confidence_level
        In (0, 1).

    Returns
    -------
    MeanEstimate
        ``method="human-only"`` (human labels, weighted by the design); ``n_unlabelled`` the
        judged items without a label.
    """
    z = _z(confidence_level)
    if set(sizes) != set(labels) or not sizes:
        msg = f"sizes and labels must name the same strata (got {sorted(sizes)} and {sorted(labels)})"
        raise ValueError(msg)
    total = sum(sizes.values())
    estimate, n_lab = 0.0, 0
    floored: list[str] = []
    parts: list[tuple[float, float, float]] = []  # (W_h, fpc_h, s_h^2 / n_h)
    for h in sorted(sizes):
        y = check_bounded_labels(labels[h], f"labels[{h!r}]")
        if y.size < 2 or y.size > sizes[h]:
            msg = f"stratum {h!r}: {y.size} labels for {sizes[h]} items (need 2 to {sizes[h]})"
            raise ValueError(msg)
        s2 = float(np.var(y, ddof=1))
        if not s2 > 0:
            s2 = _floor(int(y.size), z)
            floored.append(h)
        estimate += sizes[h] / total * float(np.mean(y))
        parts.append((sizes[h] / total, 1 - y.size / sizes[h], s2 / y.size))
        n_lab += int(y.size)
    note = None if not floored else f"labels all equal in stratum {floored}: variance floored at p(1 - p)"
    se = math.sqrt(sum(w * w * fpc * v for w, fpc, v in parts))
    if not se > 0:  # every stratum fully labelled: drop the finite-population correction
        se = math.sqrt(sum(w * w * v for w, _, v in parts))
        note = "every item is labelled: the finite-population correction is left out (no zero-width interval)"
    return MeanEstimate(
        method="human-only",
        estimate=estimate,
        ci_low=estimate - z * se,
        ci_high=estimate + z * se,
        se=se,
        n_labelled=n_lab,
        n_unlabelled=total - n_lab,
        lam=None,
        status="ok",
        reason=None,
        note=note,
        confidence_level=confidence_level,
    )
