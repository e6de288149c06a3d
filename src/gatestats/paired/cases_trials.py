r"""Cases or trials? Sample sizes that split the variance between cases and trials.

A case :math:`i` has a success probability :math:`\theta_i`; a run of :math:`K` trials of each of
:math:`n` cases estimates the pass rate by the mean of the per-case means. Its variance (Miller
2024, section 3 and the power analysis of section 5) is

.. math:: \operatorname{Var}(\hat p) = \frac{1}{n}\left(\omega^2 + \frac{\sigma^2}{K}\right),
    \qquad \omega^2 = \operatorname{Var}(\theta_i), \quad \sigma^2 = E[\theta_i(1 - \theta_i)],

with :math:`\omega^2` the between-case and :math:`\sigma^2` the within-case (trial-to-trial)
variance. A test at level :math:`\alpha` detects a shift :math:`\delta` (the minimum detectable
effect) with power :math:`1 - \beta` when

.. math:: n(K) = \frac{(z_{1-\alpha/2} + z_{1-\beta})^2\,(\omega^2 + \sigma^2/K)}{\delta^2}

cases are run (:math:`z_{1-\alpha}` one-sided). More trials shrink only the second term: however
many trials are run, at least :math:`n_\infty = (z_{1-\alpha/2} + z_{1-\beta})^2\,\omega^2/\delta^2`
cases are needed, while the total number of trials :math:`n(K)\,K` grows with :math:`K`. With only
:math:`N` cases available, :math:`K` trials per case reach the target when
:math:`K \ge \sigma^2 / (N\delta^2/(z_{1-\alpha/2} + z_{1-\beta})^2 - \omega^2)`, and no number of
trials does when :math:`N \le n_\infty`.

The components come from a pilot run (:func:`gatestats.estimators.variance_decomposition`:
unbiased per-case within variances averaged over cases, and the between-case variance as the
variance of the per-case means less their trial noise). For a paired comparison, give the
components of the per-case *differences* to :func:`plan_cases_trials` instead; the formula is the
same (Miller 2024, eq. 7 for the variance of a paired difference).

References
----------
Miller, E. (2024). Adding Error Bars to Evals: A Statistical Approach to Language Model
    Evaluations. arXiv:2411.00640, section 3 (resampling: the variance of the mean score with
    :math:`K` samples per question) and section 5 (power analysis: questions needed for a given
    :math:`K`).
Cochran, W. G. (1977). Sampling Techniques, 3rd ed., Wiley, section 10.6 (two-stage sampling:
    the trade-off between first- and second-stage units).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypedDict

import polars as pl

from gatestats._lazy import lazy_module
from gatestats._typing import JSONObject
from gatestats.estimators import VarianceDecomposition, case_summary, variance_decomposition
from gatestats.paired._common import FieldsAsDict
from gatestats.paired.mcnemar import check_alternative
from gatestats.vocabulary import Alternative, FrameLike, Status, check_alpha

stats = lazy_module("scipy.stats")

__all__ = [
    "CasesTrialsPlan",
    "TrialsOption",
    "cases_for_trials",
    "plan_cases_trials",
    "plan_cases_trials_from_pilot",
]

DEFAULT_TRIALS: tuple[int, ...] = (1, 2, 4, 8)
_MAX_TRIALS = 10_000


def _check(*, mde: float, alpha: float, power: float, alternative: Alternative) -> None:
    check_alternative(alternative)
    check_alpha(alpha)
    for name, value in (("mde", mde), ("power", power)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
            msg = f"{name} must lie strictly between 0 and 1 (got {value!r})"
            raise ValueError(msg)


def _check_components(between: float, within: float) -> None:
    for name, value in (("between_case_variance", between), ("within_case_variance", within)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            msg = f"{name} must lie in [0, 1] (got {value!r})"
            raise ValueError(msg)


def _check_trials(trials: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    values = tuple(trials)
    if not values or any(isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= _MAX_TRIALS for k in values):
        msg = f"trials must be a non-empty list of integers in [1, {_MAX_TRIALS}] (got {list(values)!r})"
        raise ValueError(msg)
    return tuple(sorted(set(values)))


def _z_sum(alpha: float, power: float, alternative: Alternative) -> float:
    z_alpha = stats.norm.isf(alpha / 2 if alternative == "two-sided" else alpha)
    return float(z_alpha + stats.norm.ppf(power))


def cases_for_trials(
    mde: float,
    *,
    between_case_variance: float,
    within_case_variance: float,
    trials: int,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
) -> float:
    r"""Cases needed (not rounded) with ``trials`` trials per case: :math:`n(K)` of the module docstring.

    .. math:: n(K) = (z_{1-\alpha/2} + z_{1-\beta})^2\,(\omega^2 + \sigma^2/K) / \delta^2

    Parameters
    ----------
    mde, between_case_variance, within_case_variance, alpha, power, alternative
        As for :func:`plan_cases_trials`.
    trials
        Trials per case :math:`K`.

    Returns
    -------
    float
        :math:`n(K)`, not rounded.

    Raises
    ------
    ValueError
        ``mde``, ``alpha`` or ``power`` outside (0, 1), a variance outside [0, 1], ``trials`` not an
        integer in [1, 10,000], or an unknown ``alternative``.

    Examples
    --------
    :math:`\omega^2 = 0.04`, :math:`\sigma^2 = 0.12`, :math:`\delta = 0.05`, two-sided 5%, power
    0.8: :math:`(1.95996 + 0.84162)^2 \times 0.16 / 0.0025 = 502.3` cases with one trial each.

    >>> round(cases_for_trials(0.05, between_case_variance=0.04, within_case_variance=0.12, trials=1), 1)
    502.3
    """
    _check(mde=mde, alpha=alpha, power=power, alternative=alternative)
    _check_components(between_case_variance, within_case_variance)
    (k,) = _check_trials([trials])
    return _z_sum(alpha, power, alternative) ** 2 * (between_case_variance + within_case_variance / k) / mde**2


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialsOption(FieldsAsDict):
    """Cases needed with ``trials`` trials per case, and what that costs in trials."""

    trials: int
    cases_needed: int
    total_trials: int
    variance_per_case: float
    share_from_trials: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CasesTrialsPlan:
    """Cases needed for each number of trials per case, from a variance split into cases and trials.

    ``options`` has one row per ``trials`` value; ``cases_floor`` is :math:`n_\\infty`, the cases
    needed however many trials are run. With ``available_cases`` set,
    ``trials_for_available_cases`` is the fewest trials per case that reach the target with them,
    or ``None`` when no number of trials can (``available_cases <= cases_floor``). With
    ``status == "insufficient_evidence"`` (the pilot cannot split the variance) every number is
    ``None``, ``options`` is empty and ``reason`` says why.
    """

    status: Status
    reason: str | None
    mde: float
    alpha: float
    power: float
    alternative: Alternative
    between_case_variance: float | None
    within_case_variance: float | None
    pilot_system: str | None
    pilot_cases: int | None
    pilot_mean_trials: float | None
    cases_floor: int | None
    available_cases: int | None
    trials_for_available_cases: int | None
    options: tuple[TrialsOption, ...]
    advice: str | None

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (``options`` as a list of objects)."""
        out = {name: getattr(self, name) for name in self.__slots__ if name != "options"}
        out["options"] = [o.to_dict() for o in self.options]
        return out

    def to_frame(self) -> pl.DataFrame:
        """One row per number of trials: ``trials, cases_needed, total_trials, variance_per_case,
        share_from_trials``."""
        schema = {
            "trials": pl.Int64,
            "cases_needed": pl.Int64,
            "total_trials": pl.Int64,
            "variance_per_case": pl.Float64,
            "share_from_trials": pl.Float64,
        }
        return pl.DataFrame([o.to_dict() for o in self.options], schema=schema, orient="row")


def _unknown(reason: str, base: _PlanInputs) -> CasesTrialsPlan:
    return CasesTrialsPlan(
        status="insufficient_evidence",
        reason=reason,
        between_case_variance=None,
        within_case_variance=None,
        cases_floor=None,
        trials_for_available_cases=None,
        options=(),
        advice=None,
        **base,
    )


def plan_cases_trials(
    mde: float,
    *,
    between_case_variance: float,
    within_case_variance: float,
    trials: tuple[int, ...] | list[int] = DEFAULT_TRIALS,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    available_cases: int | None = None,
    pilot_system: str | None = None,
    pilot_cases: int | None = None,
    pilot_mean_trials: float | None = None,
) -> CasesTrialsPlan:
    r"""Cases needed for each number of trials per case (Miller 2024; module docstring).

    Parameters
    ----------
    mde
        Minimum detectable effect :math:`\delta` on the pass rate (absolute), in (0, 1).
    between_case_variance, within_case_variance
        :math:`\omega^2` and :math:`\sigma^2`, each in [0, 1].
    trials
        The numbers of trials per case :math:`K` to plan for.
    alpha, power, alternative
        Level and target power of the test; ``two-sided`` uses :math:`z_{1-\alpha/2}`, a one-sided
        alternative :math:`z_{1-\alpha}`.
    available_cases
        Cases the golden set has: also report the trials per case needed with them.
    pilot_system, pilot_cases, pilot_mean_trials
        Where the components came from (recorded in the result).

    Returns
    -------
    CasesTrialsPlan
        One option per number of trials, the cases floor and the advice.

    Raises
    ------
    ValueError
        An option outside its domain (as for :func:`cases_for_trials`; ``available_cases`` >= 1).

    Examples
    --------
    >>> plan = plan_cases_trials(0.05, between_case_variance=0.04, within_case_variance=0.12,
    ...                          available_cases=300)
    >>> [(o.trials, o.cases_needed, o.total_trials) for o in plan.options]
    [(1, 503, 503), (2, 314, 628), (4, 220, 880), (8, 173, 1384)]
    >>> plan.cases_floor, plan.trials_for_available_cases
    (126, 3)
    """
    _check(mde=mde, alpha=alpha, power=power, alternative=alternative)
    _check_components(between_case_variance, within_case_variance)
    ks = _check_trials(trials)
    _check_available(available_cases)
    base = _base(
        mde,
        alpha=alpha,
        power=power,
        alternative=alternative,
        available_cases=available_cases,
        pilot_system=pilot_system,
        pilot_cases=pilot_cases,
        pilot_mean_trials=pilot_mean_trials,
    )
    return _plan(float(between_case_variance), float(within_case_variance), ks, base)


def _plan(omega2: float, sigma2: float, ks: tuple[int, ...], base: _PlanInputs) -> CasesTrialsPlan:
    """The plan from checked variance components (between, within cases) and numbers of trials."""
    if omega2 + sigma2 == 0:
        return _unknown(
            "no variation in the pass rate: every case passed every trial, or failed every trial, so the "
            "variance, and with it the cases needed, cannot be estimated; run a pilot with more varied cases",
            base,
        )
    scale = _z_sum(base["alpha"], base["power"], base["alternative"]) ** 2 / base["mde"] ** 2
    floor = _ceil(scale * omega2)
    trials_for_available, available_advice = _for_available(
        base["available_cases"], omega2, sigma2, scale, base["power"], base["mde"]
    )
    return CasesTrialsPlan(
        status="ok",
        reason=None,
        between_case_variance=omega2,
        within_case_variance=sigma2,
        cases_floor=floor,
        trials_for_available_cases=trials_for_available,
        options=tuple(_option(k, omega2, sigma2, scale) for k in ks),
        advice=_advice(omega2, sigma2, floor) + available_advice,
        **base,
    )


def _check_available(available_cases: int | None) -> None:
    if available_cases is not None and (
        isinstance(available_cases, bool) or not isinstance(available_cases, int) or available_cases < 1
    ):
        msg = f"available_cases must be an integer >= 1 (got {available_cases!r})"
        raise ValueError(msg)


def _for_available(
    available_cases: int | None, omega2: float, sigma2: float, scale: float, power: float, mde: float
) -> tuple[int | None, str]:
    """The fewest trials per case that reach the target with the cases available, and the advice."""
    if available_cases is None:
        return None, ""
    room = available_cases / scale - omega2
    if room <= 0:
        return None, (
            f"; with {available_cases} cases no number of trials reaches power {power:g} for {mde:g}: "
            f"at least {math.floor(scale * omega2) + 1} cases are needed"
        )
    trials = max(1, math.ceil(sigma2 / room - 1e-9))
    return trials, f"; with {available_cases} cases, run {trials} trial(s) per case"


class _PlanInputs(TypedDict):
    """The fields of a plan that restate its inputs."""

    mde: float
    alpha: float
    power: float
    alternative: Alternative
    available_cases: int | None
    pilot_system: str | None
    pilot_cases: int | None
    pilot_mean_trials: float | None


def _base(
    mde: float,
    *,
    alpha: float,
    power: float,
    alternative: Alternative,
    available_cases: int | None,
    pilot_system: str | None,
    pilot_cases: int | None,
    pilot_mean_trials: float | None,
) -> _PlanInputs:
    """The fields of a plan that restate its inputs (and the keyword arguments of :func:`plan_cases_trials`)."""
    return {
        "mde": mde,
        "alpha": alpha,
        "power": power,
        "alternative": alternative,
        "available_cases": available_cases,
        "pilot_system": pilot_system,
        "pilot_cases": pilot_cases,
        "pilot_mean_trials": pilot_mean_trials,
    }


def _ceil(x: float) -> int:
    return max(1, math.ceil(x - 1e-9))


def _option(k: int, omega2: float, sigma2: float, scale: float) -> TrialsOption:
    """The cases needed with ``k`` trials per case, and what they cost."""
    per_case = omega2 + sigma2 / k
    n_k = _ceil(scale * per_case)
    return TrialsOption(
        trials=k,
        cases_needed=n_k,
        total_trials=n_k * k,
        variance_per_case=per_case,
        share_from_trials=(sigma2 / k) / per_case,
    )


def _advice(omega2: float, sigma2: float, floor: int) -> str:
    """Whether to add cases or trials, from the share of trial-to-trial noise in one trial's variance."""
    share_one = sigma2 / (omega2 + sigma2)
    if omega2 == 0:
        return (
            "the pilot shows no variation between cases beyond trial noise: more trials per case and more cases "
            "help alike; count total trials"
        )
    if share_one >= 0.5:
        return (
            f"{share_one:.0%} of the variance of a single trial is trial-to-trial noise: a few trials per case "
            f"cut the cases needed, but never below {floor}"
        )
    return (
        f"only {share_one:.0%} of the variance of a single trial is trial-to-trial noise: add cases rather "
        f"than trials (at least {floor} cases are needed however many trials are run)"
    )


def plan_cases_trials_from_pilot(
    records: FrameLike,
    *,
    system: str,
    mde: float,
    trials: tuple[int, ...] | list[int] = DEFAULT_TRIALS,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    available_cases: int | None = None,
) -> CasesTrialsPlan:
    """Plan cases and trials from a pilot run set: the variance split of ``system``'s pass rate.

    The pilot's per-case valid trials and passes (:func:`gatestats.estimators.case_summary`) feed
    :func:`gatestats.estimators.variance_decomposition`; its between- and within-case variances
    feed :func:`plan_cases_trials`. A pilot whose cases have fewer than 2 valid trials, or fewer
    than 2 cases, cannot split the variance: the plan is ``insufficient_evidence`` with the
    reason.

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``) with a ``system`` column.
    system
        The system whose pilot runs give the variance split.
    mde, trials, alpha, power, alternative, available_cases
        As for :func:`plan_cases_trials`.

    Returns
    -------
    CasesTrialsPlan
        The plan, or ``insufficient_evidence`` when the pilot cannot split the variance.

    Raises
    ------
    ValueError
        ``system`` has no records (the message lists the systems present), or an option is out of
        its domain.
    """
    _check(mde=mde, alpha=alpha, power=power, alternative=alternative)
    summary = case_summary(records)
    systems = sorted(str(s) for s in summary["system"].unique().drop_nulls().to_list())
    if system not in systems:
        msg = f"system {system!r} has no records in the pilot (systems present: {', '.join(systems) or 'none'})"
        raise ValueError(msg)
    cases = summary.filter(pl.col("system") == system)
    split: VarianceDecomposition = variance_decomposition(cases)
    base = _base(
        mde,
        alpha=alpha,
        power=power,
        alternative=alternative,
        available_cases=available_cases,
        pilot_system=system,
        pilot_cases=split.n_cases,
        pilot_mean_trials=split.mean_trials_per_case,
    )
    if split.status != "ok" or split.between_case_variance is None or split.within_case_variance is None:
        _check_trials(trials)
        advice = f"; {split.advice}" if split.advice else ""
        return _unknown(f"the pilot cannot split the variance: {split.reason}{advice}", base)
    return plan_cases_trials(
        between_case_variance=split.between_case_variance,
        within_case_variance=split.within_case_variance,
        trials=trials,
        **base,
    )
