r"""Non-inferiority of the candidate against a margin :math:`\Delta` on the paired difference.

The hypotheses are

.. math:: H_0: \delta \le -\Delta \quad\text{vs}\quad H_1: \delta > -\Delta,
    \qquad \delta = p_\text{candidate} - p_\text{baseline},\ \Delta \in (0, 1):

the candidate is declared non-inferior when the data reject "worse by at least the margin".

One trial per case: the score test of Tango (1998) and Nam (1997)
    :math:`p = 1 - \Phi(T(-\Delta))` with Tango's score statistic :math:`T` (see
    :mod:`gatestats.paired.intervals`), whose variance uses the maximum-likelihood estimate of
    the discordant cells restricted to :math:`\delta = -\Delta`. Nam (1997) derived the same
    statistic as a normal deviate with restricted MLE and showed the two are algebraically equal;
    its size is close to nominal where the Wald-type test of Lu & Bean (1995) is anticonservative.
    At level :math:`\alpha` it rejects exactly when the lower bound of Tango's two-sided
    :math:`1 - 2\alpha` interval exceeds :math:`-\Delta`.
Several trials per case (or clustered cases): a t test on per-case differences
    :math:`t = (\bar d + \Delta)/\mathrm{SE}`, :math:`p = 1 - F_{t,\,U-1}(t)`, with the case-level
    (cluster-robust) standard error of Miller (2024), eq. 7 (eq. 4 with groups), and :math:`U` the
    number of cases or groups.

A margin finer than one case's weight, :math:`\Delta < 1/N`, cannot be resolved (see
:mod:`gatestats.paired.resolution`): the result then has ``status="cannot_resolve"`` and
``non_inferior=None``, with the number of cases needed.

References
----------
Tango, T. (1998). Equivalence test and confidence interval for the difference in proportions for
    the paired-sample design. Statistics in Medicine 17(8), 891-908.
Nam, J. (1997). Establishing equivalence of two treatments and sample size requirements in
    matched-pairs design. Biometrics 53(4), 1422-1430.
Lu, Y. & Bean, J. A. (1995). On the sample size for one-sided equivalence of sensitivities based
    upon McNemar's test. Statistics in Medicine 14(16), 1831-1839.
Miller, E. (2024). Adding Error Bars to Evals. arXiv:2411.00640, eqs. 4 and 7.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from scipy import stats

from gatestats._typing import ComparisonStatus
from gatestats.paired.intervals import tango_statistic

__all__ = ["NonInferiorityTest", "check_margin", "noninferiority_case_level", "noninferiority_test"]


def check_margin(margin: object) -> float:
    """Return ``margin`` as a float if it lies strictly between 0 and 1, else raise ``ValueError``."""
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 < margin < 1:
        msg = f"margin must be a number strictly between 0 and 1 (got {margin!r})"
        raise ValueError(msg)
    return float(margin)


@dataclass(frozen=True, slots=True, kw_only=True)
class NonInferiorityTest:
    """Test of :math:`H_0: \\delta \\le -\\text{margin}` against :math:`\\delta > -\\text{margin}`.

    ``non_inferior`` is ``pvalue < alpha``, or ``None`` when the status is not ``ok``.
    """

    margin: float
    method: Literal["tango_score", "case_t"]
    statistic: float | None
    pvalue: float | None
    alpha: float
    non_inferior: bool | None
    status: ComparisonStatus
    reason: str | None
    n_units: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {
            "margin": self.margin,
            "method": self.method,
            "statistic": self.statistic,
            "pvalue": self.pvalue,
            "alpha": self.alpha,
            "non_inferior": self.non_inferior,
            "status": self.status,
            "reason": self.reason,
            "n_units": self.n_units,
        }


def _finish(
    *,
    margin: float,
    method: Literal["tango_score", "case_t"],
    statistic: float | None,
    pvalue: float | None,
    alpha: float,
    n_units: int,
    status: ComparisonStatus = "ok",
    reason: str | None = None,
) -> NonInferiorityTest:
    if status == "ok" and margin < 1 / n_units:
        status = "cannot_resolve"
        reason = (
            f"the margin {margin:g} is finer than one case's weight 1/{n_units} = {1 / n_units:.4g}: "
            f"at least {math.ceil(1 / margin)} cases are needed to resolve it"
        )
    decided = status == "ok" and pvalue is not None
    return NonInferiorityTest(
        margin=margin,
        method=method,
        statistic=statistic,
        pvalue=pvalue,
        alpha=alpha,
        non_inferior=(pvalue < alpha) if decided and pvalue is not None else None,
        status=status,
        reason=reason,
        n_units=n_units,
    )


def noninferiority_test(b: int, c: int, n: int, *, margin: float, alpha: float = 0.025) -> NonInferiorityTest:
    r"""Tango/Nam score test of non-inferiority for one trial per case.

    Parameters
    ----------
    b, c
        Units passed by the baseline only and by the candidate only.
    n
        All paired units.
    margin
        :math:`\Delta`, strictly between 0 and 1 (absolute, on the difference of pass rates).
    alpha
        One-sided level (0.025 matches a two-sided 95% interval).

    Returns
    -------
    NonInferiorityTest

    Examples
    --------
    Cavo et al. (2012) data (b = 16, c = 6, n = 161), whose Tango 95% interval is
    (-0.1240, -0.0054): non-inferior at a margin of 0.15, not at 0.05.

    >>> t = noninferiority_test(16, 6, 161, margin=0.15)
    >>> round(t.statistic, 4), round(t.pvalue, 4), t.non_inferior
    (2.6679, 0.0038, True)
    >>> noninferiority_test(16, 6, 161, margin=0.05).non_inferior
    False
    """
    margin = check_margin(margin)
    if not 0 < alpha < 1:
        msg = f"alpha must lie strictly between 0 and 1 (got {alpha})"
        raise ValueError(msg)
    statistic = tango_statistic(b, c, n, -margin)
    pvalue = float(stats.norm.sf(statistic))
    return _finish(margin=margin, method="tango_score", statistic=statistic, pvalue=pvalue, alpha=alpha, n_units=n)


def noninferiority_case_level(
    mean_difference: float,
    se: float | None,
    n_units: int,
    *,
    margin: float,
    alpha: float = 0.025,
) -> NonInferiorityTest:
    r"""t test of non-inferiority on per-case (or per-group) differences.

    ``se`` is the case-level standard error of the mean difference (Miller 2024, eq. 7; eq. 4 with
    groups); ``None`` or 0 (the per-case differences do not vary) gives ``insufficient_evidence``.

    >>> t = noninferiority_case_level(-0.01, 0.01, 100, margin=0.05)
    >>> round(t.statistic, 1), round(t.pvalue, 5), t.non_inferior
    (4.0, 6e-05, True)
    """
    margin = check_margin(margin)
    if se is None or not se > 0 or n_units < 2:
        return _finish(
            margin=margin,
            method="case_t",
            statistic=None,
            pvalue=None,
            alpha=alpha,
            n_units=max(n_units, 1),
            status="insufficient_evidence",
            reason="the per-case differences do not vary (or fewer than 2 units): no standard error to test with",
        )
    statistic = (mean_difference + margin) / se
    pvalue = float(stats.t.sf(statistic, n_units - 1))
    return _finish(margin=margin, method="case_t", statistic=statistic, pvalue=pvalue, alpha=alpha, n_units=n_units)
