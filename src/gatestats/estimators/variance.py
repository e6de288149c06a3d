r"""Split the variance of a pass rate into a between-case and a within-case (trial) part.

With per-case success probabilities :math:`\theta_i` and :math:`K` trials per case, the mean
pass rate over :math:`N` cases has variance

.. math:: \operatorname{Var}(\hat p) = \frac{1}{N}\left(\sigma^2_b + \frac{\sigma^2_w}{K}\right),
   \quad \sigma^2_b = \operatorname{Var}(\theta_i),\ \sigma^2_w = E[\theta_i(1-\theta_i)]

(Miller 2024, section 3). Unbiased estimates: per case
:math:`\hat\sigma^2_{w,i} = c_i(n_i-c_i)/(n_i(n_i-1))` (needs :math:`n_i \ge 2`), averaged over
cases, and :math:`\hat\sigma^2_b = s^2(\hat p_i) - \overline{\hat\sigma^2_{w,i}/n_i}`, floored
at 0. More trials shrink only the second term; more cases shrink both. The result states the
share of the variance that more trials could remove and the advice it implies.

References
----------
Miller, E. (2024). Adding Error Bars to Evals: A Statistical Approach to Language Model
    Evaluations. arXiv:2411.00640, section 3 ("reducing variance": resampling and more questions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gatestats.estimators import small
from gatestats.vocabulary import FrameLike, Status

if TYPE_CHECKING:
    import polars as pl

__all__ = ["VarianceDecomposition", "variance_decomposition"]

#: Above this share of the variance from trials, adding trials is worthwhile.
_TRIALS_WORTHWHILE = 0.25


@dataclass(frozen=True, slots=True, kw_only=True)
class VarianceDecomposition:
    """Between-case and within-case variance of the per-trial pass rate, and what to add."""

    status: Status
    reason: str | None
    n_cases: int
    mean_trials_per_case: float | None
    between_case_variance: float | None
    within_case_variance: float | None
    share_from_trials: float | None
    advice: str | None


def variance_decomposition(summary: FrameLike) -> VarianceDecomposition:
    """Decompose the variance of the pass rate (pass@1) over the cases in ``summary``.

    ``summary`` has one row per case with integer columns ``n`` (valid trials) and ``c``.
    Cases with fewer than two valid trials carry no within-case information: if any case has
    ``n < 2`` the decomposition is ``insufficient_evidence``.

    Parameters
    ----------
    summary
        Per-case counts (e.g. from :func:`gatestats.estimators.case_summary`).

    Returns
    -------
    VarianceDecomposition
        The two variance components, the share from trials and advice, or
        ``insufficient_evidence`` with the reason.

    Examples
    --------
    >>> import polars as pl
    >>> d = variance_decomposition(pl.DataFrame({"n": [4, 4, 4, 4], "c": [4, 0, 4, 0]}))
    >>> d.within_case_variance, d.share_from_trials
    (0.0, 0.0)
    """
    import polars as pl  # noqa: PLC0415 - on first use, see FrameLike

    # An in-memory summary's two columns are read as they are: a query would copy the same values (issue 28).
    frame = summary if isinstance(summary, pl.DataFrame) else summary.lazy().select("n", "c").collect()
    n_cases = frame.height
    if n_cases < 2:
        return VarianceDecomposition(
            status="insufficient_evidence",
            reason=f"needs at least 2 cases (got {n_cases})",
            n_cases=n_cases,
            mean_trials_per_case=None,
            between_case_variance=None,
            within_case_variance=None,
            share_from_trials=None,
            advice=None,
        )
    moments = small.variance_moments if small.without_numpy(n_cases) else _moments
    few, k_bar, within, between = moments(frame.get_column("n"), frame.get_column("c"))
    if within is None or between is None:
        return VarianceDecomposition(
            status="insufficient_evidence",
            reason=f"{few} case(s) have fewer than 2 valid trials; within-case variance needs repeats",
            n_cases=n_cases,
            mean_trials_per_case=k_bar,
            between_case_variance=None,
            within_case_variance=None,
            share_from_trials=None,
            advice="run at least 2 trials of every case to split case and trial variance",
        )
    total = between + within / k_bar
    share = 0.0 if total == 0 else (within / k_bar) / total
    if total == 0:
        advice = "no variation observed; add cases to learn more"
    elif share >= _TRIALS_WORTHWHILE:
        advice = (
            f"{share:.0%} of the variance comes from trial-to-trial noise: more trials per case "
            "narrow the interval noticeably (more cases always help)"
        )
    else:
        advice = f"only {share:.0%} of the variance comes from trial-to-trial noise: add cases, not trials"
    return VarianceDecomposition(
        status="ok",
        reason=None,
        n_cases=n_cases,
        mean_trials_per_case=k_bar,
        between_case_variance=between,
        within_case_variance=within,
        share_from_trials=share,
        advice=advice,
    )


def _moments(n_cases: pl.Series, c_cases: pl.Series) -> tuple[int, float, float | None, float | None]:
    """The cases with fewer than 2 trials, the mean trials per case, the within- and between-case variance.

    On numpy's arrays; :func:`gatestats.estimators.small.variance_moments` computes the same floats without
    numpy. The two variances are ``None`` when a case has fewer than 2 trials.
    """
    import numpy as np  # noqa: PLC0415 - a small split computes in floats without numpy (estimators/small.py)

    n = n_cases.to_numpy().astype(np.float64)
    c = c_cases.to_numpy().astype(np.float64)
    if (n < 2).any():
        return int((n < 2).sum()), float(n.mean()), None, None
    p_i = c / n
    within_i = c * (n - c) / (n * (n - 1))
    within = float(within_i.mean())
    between = max(float(p_i.var(ddof=1) - (within_i / n).mean()), 0.0)
    return 0, float(n.mean()), within, between
