r"""The corrected pass rate of a production sample whose verdicts come in cases (clusters).

Several verdicts of one case are not independent. With :math:`C` cases, case :math:`i` holding
:math:`n_i` parseable verdicts of which the judge passed :math:`k_i`, the apparent pass rate is the
ratio :math:`\hat q = \sum k_i / \sum n_i = K/N`, with the cluster-robust (linearisation) variance

.. math::

    \widehat{\mathrm{Var}}(\hat q) = \frac{C}{C - 1}\,\frac{\sum_i (k_i - \hat q\, n_i)^2}{N^2}.

Its design effect :math:`D = \widehat{\mathrm{Var}}(\hat q) / [\hat q(1 - \hat q)/N]`, floored at 1,
gives the effective sample size :math:`N/D`; the Lang-Reiczigel interval
(:func:`~gatestats.judges.correction.lang_reiczigel_batch`) is computed from the effective counts
:math:`(K/D, N/D)` (Rao & Scott 1992), so the case is the unit. Without cases it is
:func:`~gatestats.judges.corrected_pass_rate`. The coverage is simulated in
``tests/judges/test_clustered_correction.py`` (table in ``docs/judges.md``).

References
----------
Rao, J. N. K. & Scott, A. J. (1992). A simple method for the analysis of clustered binary data.
    Biometrics 48(2), 577-585.
Lang, Z. & Reiczigel, J. (2014). Confidence limits for prevalence of disease adjusted for
    estimated sensitivity and specificity. Preventive Veterinary Medicine 113(1), 13-22.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from gatestats._typing import JSONObject
from gatestats.judges._stats import proportion
from gatestats.judges.correction import (
    ADJUSTED_UNUSABLE,
    OK,
    CorrectedPassRate,
    HasErrorRates,
    corrected_pass_rate,
    lang_reiczigel_batch,
)
from gatestats.vocabulary import check_confidence_level

__all__ = ["ClusteredCorrectedPassRate", "corrected_pass_rate_clustered", "design_effect"]


def design_effect(passes: npt.ArrayLike, totals: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Design effect of the ratio :math:`K/N` over cases (floored at 1; rows: replicates).

    Parameters
    ----------
    passes, totals
        Per case (last axis) the passed and parseable verdicts; leading axes are replicates.

    Returns
    -------
    numpy.ndarray
        The design effect (1 where the apparent rate is 0 or 1, or with fewer than 2 cases).

    Examples
    --------
    >>> float(design_effect([2, 0, 2, 0], [2, 2, 2, 2])[()])  # cases all-or-nothing: 2 verdicts count as 1
    2.6666666666666665
    """
    k = np.asarray(passes, dtype=np.float64)
    n = np.asarray(totals, dtype=np.float64)
    c = (n > 0).sum(axis=-1)
    big_n, big_k = n.sum(axis=-1), k.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = big_k / big_n
        var = c / (c - 1) * ((k - q[..., None] * n) ** 2).sum(axis=-1) / big_n**2
        deff = var / (q * (1 - q) / big_n)
    return np.where(np.isfinite(deff) & (c >= 2), np.maximum(deff, 1.0), 1.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusteredCorrectedPassRate:
    """A corrected pass rate with the case as the unit: the result, the cases and the design effect.

    ``corrected.n_pass``/``corrected.n`` are the real verdict counts; the interval used the
    effective counts (``effective_n``). ``corrected.apparent`` is the unclustered Wilson interval of
    the apparent rate.
    """

    corrected: CorrectedPassRate
    n_cases: int | None
    design_effect: float
    effective_n: float

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict."""
        return {
            **self.corrected.to_dict(),
            "n_cases": self.n_cases,
            "design_effect": self.design_effect,
            "effective_n": self.effective_n,
        }


def _at_effective_size(
    plain: CorrectedPassRate, calibration: HasErrorRates, *, k: int, n: int, deff: float, confidence_level: float
) -> CorrectedPassRate:
    """``plain`` with its estimate and interval recomputed at the effective counts ``k / deff``, ``n / deff``."""
    fpr, ffr = calibration.false_pass_rate, calibration.false_fail_rate
    x_se, x_sp = ffr.n - ffr.numerator, fpr.n - fpr.numerator
    estimate, low, high, code = lang_reiczigel_batch(
        k / deff, n / deff, x_se, ffr.n, x_sp, fpr.n, confidence_level=confidence_level
    )
    apparent = proportion(k, n, confidence_level=confidence_level)
    if int(code[0]) == OK:
        return replace(
            plain, estimate=float(estimate[0]), ci_low=float(low[0]), ci_high=float(high[0]), apparent=apparent
        )
    reason = (
        "the judge's adjusted Youden index is not positive"
        if int(code[0]) == ADJUSTED_UNUSABLE
        else "no interval of positive width at the clustered effective sample size"
    )
    return replace(
        plain,
        estimate=None,
        estimate_untruncated=None,
        ci_low=None,
        ci_high=None,
        status="insufficient_evidence",
        reason=reason,
        apparent=apparent,
    )


def corrected_pass_rate_clustered(
    passes: Sequence[int],
    totals: Sequence[int],
    *,
    calibration: HasErrorRates,
    confidence_level: float = 0.95,
) -> ClusteredCorrectedPassRate:
    """Rogan-Gladen corrected pass rate with the Lang-Reiczigel interval, cases as the unit.

    Parameters
    ----------
    passes, totals
        Per case: verdicts the judge passed and parseable verdicts.
    calibration
        The judge's error rates (a calibration, or anything with ``false_pass_rate`` and
        ``false_fail_rate``).
    confidence_level
        In (0, 1).

    Returns
    -------
    ClusteredCorrectedPassRate
        ``corrected.status == "insufficient_evidence"`` as for
        :func:`~gatestats.judges.corrected_pass_rate`.

    Raises
    ------
    JudgeUnusableError
        The calibration's Youden index is not positive.
    ValueError
        Counts that are not integers with ``0 <= passes <= totals``, or of different lengths.

    Examples
    --------
    >>> from gatestats.judges import proportion
    >>> class Cal:
    ...     false_fail_rate = proportion(10, 100)
    ...     false_pass_rate = proportion(10, 100)
    >>> r = corrected_pass_rate_clustered([4, 0, 3, 1] * 50, [4, 4, 4, 4] * 50, calibration=Cal())
    >>> round(r.corrected.estimate, 3), round(r.design_effect, 2), r.n_cases
    (0.5, 2.51, 200)
    """
    check_confidence_level(confidence_level)
    k = np.asarray(passes, dtype=np.int64)
    n = np.asarray(totals, dtype=np.int64)
    if k.shape != n.shape or k.ndim != 1 or np.any(k < 0) or np.any(k > n):
        msg = (
            "passes and totals must be equal-length integer counts with 0 <= passes <= totals "
            f"(got {len(k)} and {len(n)})"
        )
        raise ValueError(msg)
    big_k, big_n = int(k.sum()), int(n.sum())
    plain = corrected_pass_rate(big_k, big_n, calibration=calibration, confidence_level=confidence_level)
    deff = float(design_effect(k, n)[()])
    if plain.status != "ok" or deff == 1.0:
        return ClusteredCorrectedPassRate(
            corrected=plain, n_cases=int((n > 0).sum()), design_effect=deff, effective_n=float(big_n)
        )
    return ClusteredCorrectedPassRate(
        corrected=_at_effective_size(
            plain, calibration, k=big_k, n=big_n, deff=deff, confidence_level=confidence_level
        ),
        n_cases=int((n > 0).sum()),
        design_effect=deff,
        effective_n=big_n / deff,
    )
