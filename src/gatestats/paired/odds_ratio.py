r"""The conditional odds ratio of a paired 2x2 table, with its exact interval.

Under the conditional (subject-specific logistic) model for matched pairs, the odds ratio
:math:`\theta = p_c / p_b` of the two discordant cells is estimated by :math:`\hat\theta = c / b`
(units passed by the candidate only over units passed by the baseline only; :math:`\theta > 1`
favours the candidate). Conditional on :math:`m = b + c`,
:math:`C \sim \mathrm{Bin}(m, \mu)` with :math:`\mu = \theta / (1 + \theta)`, so the exact
Clopper-Pearson interval :math:`(\mu_L, \mu_U)` for :math:`\mu` maps to

.. math:: \left(\frac{\mu_L}{1 - \mu_L},\ \frac{\mu_U}{1 - \mu_U}\right),
    \qquad \mu_L = B^{-1}_{\alpha/2}(c,\, b + 1), \quad \mu_U = B^{-1}_{1-\alpha/2}(c + 1,\, b),

the interval of R's ``exact2x2::mcnemar.exact`` and the "transformed Clopper-Pearson exact"
interval of Fagerland, Lydersen & Laake (2017, section 8.9). It never has less than its nominal
coverage (default, ``method="exact"``).

``method="transformed_wilson"`` maps Wilson's (1927) score interval for :math:`\mu` instead,

.. math:: \mu_{L,U} = \frac{c + z^2/2 \mp z\sqrt{c\,b/m + z^2/4}}{m + z^2},

the "transformed Wilson score" interval of Fagerland, Lydersen & Laake (2014, 2017), shorter than
the exact one, with coverage close to (occasionally below) the nominal level; it is offered for
reference and never used by the gate.

With :math:`b = 0` the estimate and the upper bound are unbounded (``None`` with
``upper_unbounded=True``); with :math:`c = 0` the lower bound is 0; with no discordant unit the
odds ratio is not estimable and the status says so.

References
----------
Breslow, N. E. & Day, N. E. (1980). Statistical Methods in Cancer Research, Vol. 1, eq. 5.2.
Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the
    case of the binomial. Biometrika 26(4), 404-413.
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
    JASA 22(158), 209-212.
Fagerland, M. W., Lydersen, S. & Laake, P. (2017). Statistical Analysis of Contingency Tables.
    Chapman & Hall/CRC, section 8.9.
Fagerland, M. W., Lydersen, S. & Laake, P. (2014). Recommended tests and confidence intervals for
    paired binomial proportions. Statistics in Medicine 33(16), 2850-2875.
Fay, M. P. (2010). Two-sided exact tests and matching confidence intervals for discrete data.
    R Journal 2(1), 53-58 (package exact2x2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypedDict, get_args

from gatestats._typing import JSONObject
from gatestats.estimators.quantiles import upper_z
from gatestats.paired.binomial import clopper_pearson_bound
from gatestats.paired.mcnemar import check_alternative, check_counts
from gatestats.vocabulary import Alternative, OddsRatioMethod, Status, check_choice, check_confidence_level

__all__ = ["ODDS_RATIO_METHODS", "OddsRatioEstimate", "conditional_odds_ratio"]

ODDS_RATIO_METHODS: tuple[OddsRatioMethod, ...] = get_args(OddsRatioMethod)


@dataclass(frozen=True, slots=True, kw_only=True)
class OddsRatioEstimate:
    """The conditional odds ratio ``c / b`` with its interval (``method``: exact or transformed Wilson).

    ``estimate`` and ``ci_high`` are ``None`` when they are unbounded (``upper_unbounded``);
    with ``status == "insufficient_evidence"`` (no discordant unit) everything is ``None``.
    """

    b: int
    c: int
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    upper_unbounded: bool
    confidence_level: float
    alternative: Alternative
    status: Status
    reason: str | None
    method: OddsRatioMethod = "exact"

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (unbounded values are ``null`` with ``upper_unbounded: true``)."""
        return {
            "method": self.method,
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "upper_unbounded": self.upper_unbounded,
            "confidence_level": self.confidence_level,
            "alternative": self.alternative,
            "status": self.status,
            "reason": self.reason,
        }


def _odds_ratio_bounds(
    b: int, c: int, confidence_level: float, alternative: Alternative, method: OddsRatioMethod
) -> tuple[float | None, float | None]:
    r"""Interval of :math:`c/b`: bounds of :math:`\mu = c / (b + c)` (exact or Wilson) sent through
    :math:`\mu / (1 - \mu)`; a bound is ``None`` when it is not finite."""
    m = b + c
    tail = (1 - confidence_level) / 2 if alternative == "two-sided" else 1 - confidence_level
    if method == "exact":
        mu_low = 0.0 if c == 0 or alternative == "less" else clopper_pearson_bound(c, m, tail, upper=False)
        mu_high = 1.0 if b == 0 or alternative == "greater" else clopper_pearson_bound(c, m, tail, upper=True)
    else:
        z = upper_z(tail)
        center, half = c + z * z / 2, z * math.sqrt(c * b / m + z * z / 4)
        mu_low = 0.0 if c == 0 or alternative == "less" else (center - half) / (m + z * z)
        mu_high = 1.0 if b == 0 or alternative == "greater" else (center + half) / (m + z * z)
    # mu_low reaches 1 only where no finite lower bound exists: the transformed Wilson bound with b = 0 at z = 0 (a
    # one-sided level of 0.5) or a bound that rounds to 1 (a level so low, or counts so large, that 1 - mu_low is below
    # the float spacing). None: the caller reports it, never a division by zero (found by h48-compare).
    low = None if mu_low >= 1.0 else mu_low / (1 - mu_low)
    return low, None if mu_high >= 1.0 else mu_high / (1 - mu_high)


class _OddsRatioInputs(TypedDict):
    """The fields of an :class:`OddsRatioEstimate` that restate its inputs."""

    b: int
    c: int
    confidence_level: float
    alternative: Alternative


def conditional_odds_ratio(
    b: int,
    c: int,
    *,
    confidence_level: float = 0.95,
    alternative: Alternative = "two-sided",
    method: OddsRatioMethod = "exact",
) -> OddsRatioEstimate:
    """Conditional odds ratio ``c / b`` of a paired table with its exact or transformed-Wilson interval.

    Parameters
    ----------
    b
        Units passed by the baseline only.
    c
        Units passed by the candidate only.
    confidence_level
        In (0, 1).
    alternative
        ``two-sided`` (central interval), ``less`` (upper bound only) or ``greater`` (lower).
    method
        ``exact`` (transformed Clopper-Pearson, default) or ``transformed_wilson``.

    Returns
    -------
    OddsRatioEstimate
        The estimate ``c / b`` (none when ``b = 0``) and its interval on the odds-ratio scale.

    Raises
    ------
    ValueError
        A count that is not a non-negative integer, or an option outside its domain.

    Examples
    --------
    Ezra et al. (2010), Fagerland, Lydersen & Laake (2017, ch. 8): 12.5 (3.1169 to 108.8892).

    >>> r = conditional_odds_ratio(2, 25)
    >>> r.estimate, round(r.ci_low, 4), round(r.ci_high, 4)
    (12.5, 3.1169, 108.8892)

    Bentur et al. (2009), b = 1, c = 7: the ``ratesci`` paired-contrasts vignette
    (``orpairci(c(1, 1, 7, 12))``) gives the transformed Wilson interval 0.02293 to 0.88996 for
    b/c, so 1/0.88996 to 1/0.02293 for c/b:

    >>> w = conditional_odds_ratio(1, 7, method="transformed_wilson")
    >>> w.estimate, round(w.ci_low, 4), round(w.ci_high, 3)
    (7.0, 1.1236, 43.608)
    """
    b, c = check_counts(b, c)
    check_confidence_level(confidence_level)
    check_alternative(alternative)
    check_choice(method, ODDS_RATIO_METHODS, "method")
    base: _OddsRatioInputs = {"b": b, "c": c, "confidence_level": confidence_level, "alternative": alternative}
    ci_low: float | None = None
    ci_high: float | None = None
    if b + c == 0:
        status: Status = "insufficient_evidence"
        reason: str | None = "no discordant unit (b = c = 0): the conditional odds ratio is not estimable"
    else:
        ci_low, ci_high = _odds_ratio_bounds(b, c, confidence_level, alternative, method)
        status, reason = _bounds_status(b, c, ci_low, confidence_level, alternative, method)
        ci_high = None if ci_low is None else ci_high
    return OddsRatioEstimate(
        estimate=None if b == 0 else c / b,
        ci_low=ci_low,
        ci_high=ci_high,
        upper_unbounded=b + c > 0 and ci_high is None,
        status=status,
        reason=reason,
        method=method,
        **base,
    )


def _bounds_status(
    b: int, c: int, ci_low: float | None, confidence_level: float, alternative: Alternative, method: OddsRatioMethod
) -> tuple[Status, str | None]:
    """The status and reason of an interval with discordant units: no finite lower bound is insufficient evidence."""
    if ci_low is None:
        return "insufficient_evidence", (
            f"no finite lower bound for the odds ratio at this level (b = {b}, c = {c}, "
            f"confidence level {confidence_level}, {alternative}, {method})"
        )
    return "ok", "no baseline-only unit (b = 0): the odds ratio and its upper bound are unbounded" if b == 0 else None
