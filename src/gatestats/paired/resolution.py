r"""Can this sample decide the question at all? The resolution check of a paired comparison.

Two things make a paired comparison unable to decide, whatever the data say:

1. **A margin finer than one case.** Each of :math:`N` paired units moves the paired difference by
   at most :math:`1/N`; a non-inferiority margin :math:`\Delta < 1/N` is finer than the weight of
   a single case, so one flaky case decides. At least :math:`\lceil 1/\Delta \rceil` cases are
   needed.
2. **Too few discordant units for the exact test.** With :math:`m` discordant units the exact
   conditional test can reach at best :math:`p = 2^{1-m}` (two-sided; :math:`2^{-m}` one-sided;
   the mid-p test half of that). If that exceeds :math:`\alpha`, no outcome can be significant:
   at least :math:`m^*` discordant units are needed (6 for a two-sided exact test at 5%). At the
   observed discordance rate :math:`m/N` that is about :math:`\lceil m^* N / m \rceil` cases; with
   no discordant unit the rate is below :math:`3/N` (the "rule of three", a 95% upper bound) and
   at least :math:`\lceil m^* N / 3 \rceil` cases are needed.

Either makes the status ``cannot_resolve`` with the reason and the number of cases needed:
the comparison is still reported (counts, flips, p-values, interval), but a gate must not read
its p-value as a decision.

References
----------
Hanley, J. A. & Lippman-Hand, A. (1983). If nothing goes wrong, is everything all right?
    Interpreting zero numerators. JAMA 249(13), 1743-1745 (the rule of three).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from gatestats.paired._common import FieldsAsDict
from gatestats.paired.mcnemar import check_alternative, min_discordant_for, min_exact_pvalue
from gatestats.vocabulary import Alternative, McNemarMethod, check_alpha

__all__ = ["Resolution", "resolution"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolution(FieldsAsDict):
    """Whether a sample of ``n_units`` paired units can decide at level ``alpha``.

    ``cases_needed`` is the number of cases the check asks for (``None`` when ``ok``);
    ``min_pvalue`` the smallest p-value the chosen exact test can reach with
    ``n_discordant`` discordant units; ``discordant_needed`` the fewest discordant units with
    which it can reach ``alpha``.
    """

    status: Literal["ok", "cannot_resolve"]
    reason: str | None
    n_units: int
    n_discordant: int
    alpha: float
    min_pvalue: float
    discordant_needed: int
    margin: float | None
    cases_needed: int | None


def _margin_limit(n_units: int, margin: float | None) -> tuple[str, int] | None:
    """Why (and from how many cases) a margin finer than one case's weight cannot be resolved."""
    if margin is None or margin >= 1 / n_units:
        return None
    cases = math.ceil(1 / margin)
    reason = (
        f"the margin {margin:g} is finer than one case's weight 1/{n_units} = {1 / n_units:.4g}: "
        f"at least {cases} cases are needed to resolve it"
    )
    return reason, cases


def _discordance_limit(
    n_units: int, n_discordant: int, *, alpha: float, min_p: float, needed_m: int, method: McNemarMethod
) -> tuple[str, int] | None:
    """Why (and from how many cases) too few discordant units can never reach ``alpha``."""
    if min_p <= alpha:
        return None
    if n_discordant > 0:
        cases = math.ceil(needed_m * n_units / n_discordant)
        rate = f"at the observed discordance rate {n_discordant}/{n_units} that is about {cases} cases"
    else:
        cases = math.ceil(needed_m * n_units / 3)
        rate = (
            f"no discordant unit was observed (discordance rate below 3/{n_units} with 95% confidence), "
            f"so at least {cases} cases are needed"
        )
    test = "mid-p" if method == "midp" else "exact"
    reason = (
        f"with {n_discordant} discordant unit(s) the {test} test can reach at best p = {min_p:.4g} > "
        f"alpha = {alpha:g}; it needs at least {needed_m} discordant units: {rate}"
    )
    return reason, cases


def resolution(
    n_units: int,
    n_discordant: int,
    *,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
    method: McNemarMethod = "midp",
    margin: float | None = None,
) -> Resolution:
    """Check whether ``n_units`` units with ``n_discordant`` discordant ones can decide at ``alpha``.

    Parameters
    ----------
    n_units
        Paired units (cases, or case groups when cases are clustered).
    n_discordant
        Units whose outcome differs between the two systems.
    alpha
        Significance level of the test, in (0, 0.5] (:func:`gatestats.vocabulary.check_alpha`).
    alternative
        Of the test.
    method
        The conditional test that decides: ``midp`` (default) or ``exact``.
    margin
        Non-inferiority margin, if one is used.

    Returns
    -------
    Resolution
        ``ok``, or ``cannot_resolve`` with the reason and the cases needed.

    Raises
    ------
    ValueError
        Counts that are not ``n_units >= 1`` and ``0 <= n_discordant <= n_units``, or an option
        outside its domain.

    Examples
    --------
    >>> r = resolution(21, 4, alternative="two-sided", method="exact")
    >>> r.status, r.discordant_needed, r.cases_needed
    ('cannot_resolve', 6, 32)
    >>> resolution(400, 30, margin=0.002).cases_needed
    500
    """
    if n_units < 1 or not 0 <= n_discordant <= n_units:
        msg = f"need n_units >= 1 and 0 <= n_discordant <= n_units (got {n_units}, {n_discordant})"
        raise ValueError(msg)
    check_alternative(alternative)
    check_alpha(alpha)
    if margin is not None and not 0 < margin < 1:
        msg = f"margin must lie strictly between 0 and 1 (got {margin})"
        raise ValueError(msg)
    needed_m = min_discordant_for(alpha, alternative=alternative, method=method)
    min_p = min_exact_pvalue(n_discordant, alternative=alternative, method=method)
    limits = [
        _margin_limit(n_units, margin),
        _discordance_limit(n_units, n_discordant, alpha=alpha, min_p=min_p, needed_m=needed_m, method=method),
    ]
    reasons = [reason for reason, _ in filter(None, limits)]
    needed = [cases for _, cases in filter(None, limits)]
    return Resolution(
        status="cannot_resolve" if reasons else "ok",
        reason="; ".join(reasons) if reasons else None,
        n_units=n_units,
        n_discordant=n_discordant,
        alpha=alpha,
        min_pvalue=min_p,
        discordant_needed=needed_m,
        margin=margin,
        cases_needed=max(needed) if needed else None,
    )
