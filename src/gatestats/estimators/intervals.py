r"""Confidence intervals for a mean over cases, with the case (or case group) as the unit.

Repeated trials of one case are not new cases: every method here works on the case-level
estimates :math:`s_1, \dots, s_N` (per-case pass@k or pass^k, each in [0, 1]) and, when cases
carry a group, on sums over groups.

Methods
-------
``clt``
    :math:`\bar s \pm z_{1-\alpha/2}\,\mathrm{SE}` with the standard error across case-level
    estimates, :math:`\mathrm{SE}^2 = \frac{1}{N}\cdot\frac{1}{N-1}\sum_i (s_i - \bar s)^2`
    (Miller 2024, eq. 1), or its cluster-robust form when cases carry a group (eq. 4):
    :math:`\mathrm{SE}^2_{cl} = \mathrm{SE}^2 + \frac{1}{N^2}\sum_g \sum_{i \ne j \in g}
    (s_i - \bar s)(s_j - \bar s)`.
``bootstrap``
    Nonparametric bootstrap over cases (over groups when cases carry one), percentile
    interval, ``n_resamples`` resamples from a seeded ``numpy.random.Generator``. With groups,
    each resample draws groups with replacement and takes the ratio of summed case values to
    summed case counts.
``wilson``
    The Wilson score interval with an effective number of cases,
    :math:`n_\text{eff} = \bar s (1 - \bar s) / \mathrm{SE}^2` (Kish's design effect; Korn &
    Graubard 1998), capped at ``max_effective_n``. When every case is 0/1 and there are no
    groups, :math:`n_\text{eff} = N` and this is exactly Wilson's interval for the proportion
    of cases. When all case values are 0 (or all 1) there is no variance to estimate:
    :math:`n_\text{eff}` is the number of independent units (cases, or groups), which gives the
    Wilson bound for "0 of N" rather than a zero-width interval.
``auto`` (default)
    ``wilson`` below :data:`MIN_CASES_BOOTSTRAP` cases, ``bootstrap`` below
    :data:`CLT_FROM_CASES`, ``clt`` from there on; ``wilson`` whenever all case values are
    equal (the other two would return a zero-width interval). The thresholds come from the
    coverage simulation recorded in ``docs/coverage.md``.

A method is *not offered* where the coverage simulation showed it below 93% at nominal 95%: such
a request returns ``status="insufficient_evidence"`` with the reason, as does any sample with
fewer than two independent units. No method ever returns a zero-width interval.

References
----------
Miller, E. (2024). Adding Error Bars to Evals: A Statistical Approach to Language Model
    Evaluations. arXiv:2411.00640, eqs. 1 and 4.
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
    JASA 22(158), 209-212.
Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected
    number of positive counts estimated from survey data. Survey Methodology 24(2), 193-201.
Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall, ch. 13.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

from gatestats._typing import IntervalMethod, ResolvedIntervalMethod, Status

__all__ = [
    "CLT_FROM_CASES",
    "MIN_CASES_BOOTSTRAP",
    "MIN_CASES_CLT",
    "CaseMeanInterval",
    "case_mean_interval",
    "clustered_standard_error",
    "wilson_interval",
]

#: Fewest independent units (cases or groups) for which the bootstrap is offered.
MIN_CASES_BOOTSTRAP = 30
#: Fewest independent units for which the CLT interval is offered.
MIN_CASES_CLT = 50
#: From this many units on, ``auto`` uses the CLT interval instead of the bootstrap.
CLT_FROM_CASES = 200
_METHODS = ("auto", "bootstrap", "clt", "wilson")
_BOOTSTRAP_BLOCK = 4_000_000  # resample-count cells per block (bounds memory)


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseMeanInterval:
    """A mean over cases with its interval, or an explicit statement that there is none.

    ``estimate`` is the mean of the case-level values (always defined when ``n_cases >= 1``);
    ``ci_low``/``ci_high``/``se`` are ``None`` when ``status == "insufficient_evidence"``, with
    ``reason`` saying why.
    """

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    se: float | None
    status: Status
    reason: str | None
    method: ResolvedIntervalMethod | None
    requested_method: IntervalMethod
    confidence_level: float
    n_cases: int
    n_units: int
    clustered: bool
    effective_n: float | None = None
    n_resamples: int | None = None
    seed: int | None = None


def wilson_interval(p_hat: float, n: float, *, confidence_level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``p_hat`` observed on ``n`` (possibly effective) trials.

    .. math::

        \\frac{\\hat p + \\frac{z^2}{2n} \\pm z\\sqrt{\\frac{\\hat p(1-\\hat p)}{n} + \\frac{z^2}{4n^2}}}
        {1 + \\frac{z^2}{n}}

    >>> [round(x, 4) for x in wilson_interval(0.42, 50)]
    [0.2937, 0.5579]
    """
    if not 0.0 <= p_hat <= 1.0:
        msg = f"p_hat must lie in [0, 1] (got {p_hat})"
        raise ValueError(msg)
    if not n > 0:
        msg = f"n must be positive (got {n})"
        raise ValueError(msg)
    z = float(stats.norm.ppf(0.5 + confidence_level / 2))
    z2n = z * z / n
    center = (p_hat + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p_hat * (1 - p_hat) / n + z2n / (4 * n))
    return max(0.0, center - half), min(1.0, center + half)


def clustered_standard_error(
    values: npt.ArrayLike, groups: npt.ArrayLike | None = None
) -> float:
    """Standard error of the mean over cases: Miller (2024) eq. 1, or eq. 4 with ``groups``.

    >>> round(clustered_standard_error([0, 1, 1, 0]), 6)
    0.288675
    >>> round(clustered_standard_error([0, 1, 1, 0], ["a", "a", "b", "b"]), 6)
    0.288675
    """
    s = np.asarray(values, dtype=np.float64)
    n = s.size
    if n < 2:
        msg = f"a standard error needs at least 2 cases (got {n})"
        raise ValueError(msg)
    d = s - s.mean()
    var_clt = float(d @ d) / (n - 1) / n
    if groups is None:
        return math.sqrt(var_clt)
    _, inverse = np.unique(np.asarray(groups), return_inverse=True)
    group_sums = np.bincount(inverse, weights=d)
    cross = float(group_sums @ group_sums - d @ d) / (n * n)
    return math.sqrt(max(var_clt + cross, 0.0))


def _insufficient(reason: str, **common: object) -> CaseMeanInterval:
    return CaseMeanInterval(
        ci_low=None, ci_high=None, se=None, status="insufficient_evidence", reason=reason, method=None, **common  # type: ignore[arg-type]
    )


def _bootstrap(
    values: npt.NDArray[np.float64],
    inverse: npt.NDArray[np.intp] | None,
    *,
    n_resamples: int,
    seed: int,
    confidence_level: float,
) -> tuple[float, float, float]:
    if inverse is None:
        sums, sizes = values, np.ones_like(values)
    else:
        sums = np.bincount(inverse, weights=values)
        sizes = np.bincount(inverse).astype(np.float64)
    units = sums.size
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    block = max(1, _BOOTSTRAP_BLOCK // units)
    p = np.full(units, 1.0 / units)
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        counts = rng.multinomial(units, p, size=stop - start).astype(np.float64)
        means[start:stop] = (counts @ sums) / (counts @ sizes)
    alpha = 1 - confidence_level
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high), float(means.std(ddof=1))


def case_mean_interval(
    values: npt.ArrayLike,
    *,
    groups: npt.ArrayLike | None = None,
    method: IntervalMethod = "auto",
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = None,
    max_effective_n: float | None = None,
) -> CaseMeanInterval:
    """Mean of case-level values in [0, 1] with an interval that treats the case as the unit.

    Parameters
    ----------
    values
        One value per case (e.g. per-case pass^k); no NaN.
    groups
        Optional group label per case; intervals are then cluster-robust (groups are the unit).
    method
        ``auto``, ``bootstrap``, ``clt`` or ``wilson`` (see the module docstring).
    confidence_level
        In (0, 1).
    n_resamples
        Bootstrap resamples.
    seed
        Seed of the bootstrap generator; required when the bootstrap is used (recorded in the
        result). ``auto`` with no seed uses seed 0 and records it.
    max_effective_n
        Upper bound of the Wilson effective sample size (e.g. the number of independent
        k-trial blocks); defaults to the number of cases.

    Returns
    -------
    CaseMeanInterval

    Examples
    --------
    >>> r = case_mean_interval([1.0] * 21 + [0.0] * 29, method="wilson")
    >>> r.method, round(r.estimate, 2), round(r.ci_low, 4), round(r.ci_high, 4)
    ('wilson', 0.42, 0.2937, 0.5579)
    >>> case_mean_interval([0.5], method="clt").status
    'insufficient_evidence'
    """
    if method not in _METHODS:
        msg = f"method must be one of {', '.join(map(repr, _METHODS))} (got {method!r})"
        raise ValueError(msg)
    if not 0 < confidence_level < 1:
        msg = f"confidence_level must lie strictly between 0 and 1 (got {confidence_level})"
        raise ValueError(msg)
    if n_resamples < 100:
        msg = f"n_resamples must be at least 100 (got {n_resamples})"
        raise ValueError(msg)
    s = np.asarray(values, dtype=np.float64).ravel()
    if np.isnan(s).any() or (s.size and (s.min() < 0 or s.max() > 1)):
        msg = "values must be case-level estimates in [0, 1] without NaN"
        raise ValueError(msg)
    inverse: npt.NDArray[np.intp] | None = None
    if groups is not None:
        g = np.asarray(groups)
        if g.shape != s.shape:
            msg = f"groups must have one label per case (got {g.size} labels for {s.size} cases)"
            raise ValueError(msg)
        _, inverse = np.unique(g, return_inverse=True)
    n_cases = int(s.size)
    n_units = int(inverse.max() + 1) if inverse is not None and n_cases else n_cases
    common = {
        "requested_method": method,
        "confidence_level": confidence_level,
        "n_cases": n_cases,
        "n_units": n_units,
        "clustered": inverse is not None,
        "estimate": float(s.mean()) if n_cases else None,
    }
    unit = "groups" if inverse is not None else "cases"
    if n_units < 2:
        return _insufficient(f"an interval needs at least 2 independent {unit} (got {n_units})", **common)
    estimate = float(s.mean())
    se = clustered_standard_error(s, None if inverse is None else inverse)
    constant = bool(np.all(s == s[0]))
    resolved: ResolvedIntervalMethod
    if method == "auto":
        if constant or n_units < MIN_CASES_BOOTSTRAP:
            resolved = "wilson"
        elif n_units < CLT_FROM_CASES:
            resolved = "bootstrap"
        else:
            resolved = "clt"
    else:
        resolved = method
    if resolved in ("clt", "bootstrap"):
        minimum = MIN_CASES_CLT if resolved == "clt" else MIN_CASES_BOOTSTRAP
        if n_units < minimum:
            return _insufficient(
                f"the {resolved} interval is not offered below {minimum} independent {unit} "
                f"(got {n_units}; its simulated coverage falls under 93%); use method='wilson' or 'auto'",
                **common,
            )
        if constant:
            return _insufficient(
                f"all {n_cases} case values equal {s[0]:g}: the {resolved} interval would have zero "
                "width; use method='wilson' or 'auto'",
                **common,
            )
    if resolved == "clt":
        z = float(stats.norm.ppf(0.5 + confidence_level / 2))
        low, high = max(0.0, estimate - z * se), min(1.0, estimate + z * se)
        return CaseMeanInterval(
            ci_low=low, ci_high=high, se=se, status="ok", reason=None, method="clt", **common  # type: ignore[arg-type]
        )
    if resolved == "bootstrap":
        used_seed = 0 if seed is None else int(seed)
        low, high, boot_se = _bootstrap(
            s, inverse, n_resamples=n_resamples, seed=used_seed, confidence_level=confidence_level
        )
        return CaseMeanInterval(
            ci_low=low, ci_high=high, se=boot_se, status="ok", reason=None, method="bootstrap",
            n_resamples=n_resamples, seed=used_seed, **common,  # type: ignore[arg-type]
        )
    cap = float(max_effective_n) if max_effective_n is not None else float(n_cases)
    if estimate in (0.0, 1.0):
        n_eff = float(n_units)
    elif se == 0.0:
        n_eff = cap
    else:
        n_eff = min(estimate * (1 - estimate) / (se * se), cap)
    low, high = wilson_interval(estimate, n_eff, confidence_level=confidence_level)
    return CaseMeanInterval(
        ci_low=low, ci_high=high, se=se, status="ok", reason=None, method="wilson", effective_n=n_eff,
        **common,  # type: ignore[arg-type]
    )
