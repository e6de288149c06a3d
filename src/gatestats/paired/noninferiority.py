r"""Non-inferiority of the candidate against a margin :math:`\Delta` on the paired difference.

The hypotheses are

.. math:: H_0: \delta \le -\Delta \quad\text{vs}\quad H_1: \delta > -\Delta,
    \qquad \delta = p_\text{candidate} - p_\text{baseline},\ \Delta \in (0, 1):

the candidate is declared non-inferior when the data reject "worse by at least the margin". Each
test also gives the p-value of the other tail, ``pvalue_worse`` (:math:`H_0: \delta \ge -\Delta`;
small means the data *show* the candidate worse by more than the margin), which the gate uses.

One trial per case: the exact unconditional test (``exact_unconditional``; Hsueh, Liu & Chen 2001;
:mod:`gatestats.paired.exact_unconditional` computes it)
    Tables are ordered by Tango's (1998) score statistic :math:`T(-\Delta)` (Nam 1997: the same
    statistic), and the p-value is the largest tail probability over the nuisance parameter on
    the boundary of :math:`H_0`,

    .. math:: p = \sup_{0 \le \theta \le (1-\Delta)/2}
        P_\theta\{T(B, C) \ge t_\text{obs}\}, \qquad (B, C, n - B - C) \sim
        \text{Mult}(n;\ \theta + \Delta,\ \theta,\ 1 - 2\theta - \Delta),

    with :math:`B` the units passed by the baseline only and :math:`C` by the candidate only.
    :math:`T` increases in :math:`C` and decreases in :math:`B` (checked on every table up to
    :math:`n = 200`), so for each :math:`b` the region is :math:`C \ge c^*(b)` and the tail is
    :math:`\sum_b P(B = b)\,P(C \ge c^*(b) \mid B = b)` with
    :math:`C \mid B = b \sim \mathrm{Bin}(n - b,\ \theta / (1 - \theta - \Delta))`: :math:`O(n)` per
    :math:`\theta`. The supremum is taken on a grid of 201 values refined around its maximum.
    Its size never exceeds :math:`\alpha`; the asymptotic Tango test (``tango_score``,
    :math:`p = 1 - \Phi(T)`) reaches 0.069 at a nominal 0.05 (20 cases, margin 0.2) and still
    0.0516 at 5,000 cases (``docs/size_study.md``): it is kept for reference only. Summing only
    the :math:`b` within 12 standard deviations of their mean keeps the cost near
    :math:`O(\sqrt n)` per :math:`\theta` (0.1 s at 5,000 cases, 0.6 s at 100,000).
Several trials per case, or clustered cases: the bounded-mean betting test (``bounded_mean``)
    A test of a *mean* has to hold when the regression is concentrated in a few cases: if a share
    :math:`\Delta` of cases breaks completely, a sample of :math:`U` units shows no broken case
    with probability :math:`(1 - \Delta)^U`, so no valid test can pass a clean sample before
    :math:`U \ge \ln\alpha / \ln(1 - \Delta)`; the t test on per-case differences passes it and
    its false-pass rate reached 0.10-0.36 there (``docs/size_study.md``). With unit values
    (per-case differences :math:`d_i \in [-1, 1]`, or per-group sums :math:`s_g` over
    :math:`n_g` cases, scaled by the largest group size :math:`S`)
    :math:`Y_g = (s_g + \Delta n_g)/S \ge -(1 - \Delta)`, :math:`E[Y] \le 0` under :math:`H_0`, and
    for every :math:`\lambda \in [0, 1/(1 - \Delta))` the product :math:`\prod_g (1 + \lambda Y_g)`
    has expectation at most 1 (Waudby-Smith & Ramdas 2024). The e-value is the mean of these
    products over the grid :math:`\lambda_j = 0.95\,j / (J (1 - \Delta))`, :math:`j = 1..J`,
    :math:`J` = :data:`BETTING_GRID` (a mixture of test martingales, order-free and without a
    seed), and :math:`p = \min(1, 1/E)` by Markov's inequality: valid for *every* distribution of
    units in the range, at any number of units. The price is power (``docs/size_study.md``).

A margin finer than one case's weight, :math:`\Delta < 1/N`, cannot be resolved (see
:mod:`gatestats.paired.resolution`); nor can a margin that even a sample with no case worse
(:math:`B = C = 0`, or all :math:`d_i = 0`) could not show at :math:`\alpha`: the result then has
``status="cannot_resolve"``, ``non_inferior=None`` and the number of cases needed.

References
----------
Hsueh, H.-M., Liu, J.-P. & Chen, J. J. (2001). Unconditional exact tests for equivalence or
    noninferiority for paired binary endpoints. Biometrics 57(2), 478-483.
Tango, T. (1998). Equivalence test and confidence interval for the difference in proportions for
    the paired-sample design. Statistics in Medicine 17(8), 891-908.
Nam, J. (1997). Establishing equivalence of two treatments and sample size requirements in
    matched-pairs design. Biometrics 53(4), 1422-1430.
Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by betting.
    JRSS B 86(1), 1-27.
Miller, E. (2024). Adding Error Bars to Evals. arXiv:2411.00640, eqs. 4 and 7.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, TypedDict

from gatestats._lazy import lazy_module
from gatestats._typing import JSONObject
from gatestats.estimators.quantiles import norm_cdf, norm_sf
from gatestats.paired.exact_unconditional import check_margin, exact_unconditional_pvalues
from gatestats.paired.intervals import tango_statistic
from gatestats.paired.search import fewest
from gatestats.vocabulary import ComparisonStatus, check_alpha

if TYPE_CHECKING:
    import numpy.typing as npt

    from gatestats.paired._common import FloatArray

special = lazy_module("scipy.special")
stats = lazy_module("scipy.stats")

__all__ = [
    "BETTING_GRID",
    "NonInferiorityMethod",
    "NonInferiorityTest",
    "bounded_mean_evalues",
    "bounded_mean_pvalues",
    "check_margin",
    "evalue_pvalue",
    "noninferiority_bounded_mean",
    "noninferiority_case_level",
    "noninferiority_test",
]

NonInferiorityMethod: TypeAlias = Literal["exact_unconditional", "tango_score", "bounded_mean", "case_t"]

#: Number of betting fractions in the mixture of the bounded-mean test.
BETTING_GRID: Final = 40
_BET_CAP = 0.95
_CHUNK = 4_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class NonInferiorityTest:
    """Test of :math:`H_0: \\delta \\le -\\text{margin}` against :math:`\\delta > -\\text{margin}`.

    ``non_inferior`` is ``pvalue < alpha``, or ``None`` when the status is not ``ok``;
    ``pvalue_worse`` tests the other tail (:math:`H_0: \\delta \\ge -\\text{margin}`).
    ``cases_needed`` is set when the status is ``cannot_resolve``.
    """

    margin: float
    method: NonInferiorityMethod
    statistic: float | None
    pvalue: float | None
    alpha: float
    non_inferior: bool | None
    status: ComparisonStatus
    reason: str | None
    n_units: int
    pvalue_worse: float | None = None
    cases_needed: int | None = None

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping."""
        return {
            "margin": self.margin,
            "method": self.method,
            "statistic": self.statistic,
            "pvalue": self.pvalue,
            "pvalue_worse": self.pvalue_worse,
            "alpha": self.alpha,
            "non_inferior": self.non_inferior,
            "status": self.status,
            "reason": self.reason,
            "n_units": self.n_units,
            "cases_needed": self.cases_needed,
        }


class _TestFields(TypedDict):
    """The fields of a :class:`NonInferiorityTest` known before its resolution is checked."""

    margin: float
    method: NonInferiorityMethod
    statistic: float | None
    alpha: float


def _finish(
    *,
    margin: float,
    method: NonInferiorityMethod,
    statistic: float | None,
    pvalue: float | None,
    alpha: float,
    n_units: int,
    pvalue_worse: float | None = None,
    status: ComparisonStatus = "ok",
    reason: str | None = None,
    cases_needed: int | None = None,
) -> NonInferiorityTest:
    if status == "ok" and margin < 1 / n_units:
        status = "cannot_resolve"
        cases_needed = math.ceil(1 / margin)
        reason = (
            f"the margin {margin:g} is finer than one case's weight 1/{n_units} = {1 / n_units:.4g}: "
            f"at least {cases_needed} cases are needed to resolve it"
        )
    decided = status == "ok" and pvalue is not None
    return NonInferiorityTest(
        margin=margin,
        method=method,
        statistic=statistic,
        pvalue=pvalue,
        pvalue_worse=pvalue_worse,
        alpha=alpha,
        non_inferior=(pvalue < alpha) if decided and pvalue is not None else None,
        status=status,
        reason=reason,
        n_units=n_units,
        cases_needed=cases_needed if status == "cannot_resolve" else None,
    )


def _cases_needed(best_p: Any, alpha: float, start: int) -> int | None:
    """Fewest units ``m >= start`` with ``best_p(m) <= alpha`` (``best_p`` falls in ``m``)."""
    return fewest(lambda m: bool(best_p(m) <= alpha), start, limit=1_000_000)


def _resolved_method(method: Literal["auto", "exact_unconditional", "tango_score"]) -> NonInferiorityMethod:
    """The method ``method`` stands for (``auto`` is ``exact_unconditional``), checked to be offered."""
    if method not in ("auto", "exact_unconditional", "tango_score"):
        msg = f"method must be 'auto', 'exact_unconditional' or 'tango_score' (got {method!r})"
        raise ValueError(msg)
    return "exact_unconditional" if method == "auto" else method


@lru_cache(maxsize=1024)
def _exact_cannot_resolve(n: int, margin: float, alpha: float) -> tuple[int | None, str] | None:
    """The cases needed and why, when even b = c = 0 of ``n`` cases cannot show non-inferiority by the exact test.

    Kept per ``(n, margin, alpha)`` (it reads nothing else): its search over the cases needed
    costs tens of exact tests, and every paired row of a gate, or replication of a simulation,
    asks again for the same ``n``.
    """
    if margin < 1 / n:
        return None
    clean = exact_unconditional_pvalues(0, 0, n, margin=margin)[0]
    if clean <= alpha:
        return None

    def best(m: int) -> float:
        return exact_unconditional_pvalues(0, 0, m, margin=margin)[0]

    needed = _cases_needed(best, alpha, n)
    reason = (
        f"even with no case worse (b = c = 0) the exact test cannot show non-inferiority by {margin:g} "
        f"at alpha {alpha:g} with {n} cases (p = {clean:.3g})"
        + (f": at least {needed} cases are needed" if needed is not None else "")
    )
    return needed, reason


def noninferiority_test(
    b: int,
    c: int,
    n: int,
    *,
    margin: float,
    alpha: float = 0.025,
    method: Literal["auto", "exact_unconditional", "tango_score"] = "auto",
) -> NonInferiorityTest:
    r"""Non-inferiority test for one trial per case: exact unconditional, or Tango/Nam's score test.

    Parameters
    ----------
    b, c
        Units passed by the baseline only and by the candidate only.
    n
        All paired units.
    margin
        :math:`\Delta`, strictly between 0 and 1 (absolute, on the difference of pass rates).
    alpha
        One-sided significance level, in (0, 0.5] (:func:`gatestats.vocabulary.check_alpha`; 0.025
        matches a two-sided 95% interval).
    method
        ``auto`` (default) is ``exact_unconditional``; ``tango_score`` (asymptotic, liberal at
        every N in the size study) is kept for reference.

    Returns
    -------
    NonInferiorityTest
        ``statistic`` is Tango's :math:`T(-\Delta)` for both methods.

    Raises
    ------
    ValueError, TypeError
        Counts or an option outside their domain (TypeError: ``alpha`` not a number).

    Examples
    --------
    Cavo et al. (2012) data (b = 16, c = 6, n = 161), whose Tango 95% interval is
    (-0.1240, -0.0054): non-inferior at a margin of 0.15, not at 0.05.

    >>> t = noninferiority_test(16, 6, 161, margin=0.15, method="tango_score")
    >>> round(t.statistic, 4), round(t.pvalue, 4), t.non_inferior
    (2.6679, 0.0038, True)
    >>> t = noninferiority_test(16, 6, 161, margin=0.15)
    >>> t.method, round(t.pvalue, 4), t.non_inferior
    ('exact_unconditional', 0.0041, True)
    >>> noninferiority_test(16, 6, 161, margin=0.05).non_inferior
    False
    """
    margin = check_margin(margin)
    check_alpha(alpha)
    resolved = _resolved_method(method)
    statistic = tango_statistic(b, c, n, -margin)
    if resolved == "tango_score":
        pvalue, worse = norm_sf(statistic), norm_cdf(statistic)
    else:
        pvalue, worse = exact_unconditional_pvalues(b, c, n, margin=margin)
    status: ComparisonStatus = "ok"
    reason: str | None = None
    needed: int | None = None
    if resolved == "exact_unconditional" and (unresolvable := _exact_cannot_resolve(n, margin, alpha)) is not None:
        status, (needed, reason) = "cannot_resolve", unresolvable
    return _finish(
        margin=margin,
        method=resolved,
        statistic=statistic,
        alpha=alpha,
        pvalue=pvalue,
        pvalue_worse=worse,
        n_units=n,
        status=status,
        reason=reason,
        cases_needed=needed,
    )


def bounded_mean_evalues(y: npt.ArrayLike, *, lower: float, n_grid: int = BETTING_GRID) -> FloatArray:
    r"""Betting e-values for :math:`H_0: E[Y] \le 0` from units :math:`Y \ge -\text{lower}` (last axis).

    The mean over :math:`\lambda_j = 0.95\,j/(J\,\text{lower})`, :math:`j = 1..J`, of
    :math:`\prod_i (1 + \lambda_j Y_i)`; vectorised over leading axes (replications).

    Parameters
    ----------
    y
        The units (last axis), each at least ``-lower``.
    lower
        The bound below the units, positive.
    n_grid
        Bets :math:`J` in the grid.

    Returns
    -------
    numpy.ndarray
        The e-values (one per leading index; a scalar array for one sample).

    Raises
    ------
    ValueError
        A unit below ``-lower``, or ``lower <= 0``.

    Examples
    --------
    >>> round(float(bounded_mean_evalues([0.5, 0.5], lower=1.0, n_grid=1)), 6)  # (1 + 0.95 * 0.5) ** 2
    2.175625
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    values = np.asarray(y, dtype=np.float64)
    if not lower > 0 or (values.size and values.min() < -lower * (1 + 1e-12)):
        msg = f"units must be at least -lower with lower > 0 (got lower={lower}, min={values.min(initial=0.0)})"
        raise ValueError(msg)
    lam = _BET_CAP * np.arange(1, n_grid + 1) / (n_grid * lower)
    units = values.shape[-1] if values.ndim else 1
    flat = values.reshape(-1, units)
    logs = np.zeros((flat.shape[0], n_grid))
    step = max(1, _CHUNK // max(1, flat.shape[0] * n_grid))
    for start in range(0, units, step):
        logs += np.log1p(flat[:, start : start + step, None] * lam).sum(axis=1)
    with np.errstate(over="ignore"):
        out: FloatArray = np.exp(_logsumexp_rows(logs) - math.log(n_grid)).reshape(values.shape[:-1])
    return out


def _logsumexp_rows(a: FloatArray) -> FloatArray:
    """``scipy.special.logsumexp(a, axis=-1)`` of a 2-D float array, to the last bit: scipy's operations, in numpy.

    scipy's real-valued path (no weights, no sign; scipy 1.17, the lock's for Python 3.11) step by
    step: the largest entry of each row taken out (its count ``m``), the others' ``exp`` shifted by
    it summed, ``log1p(s) + log(m) + max``; where that is not finite, the direct
    ``log(sum(exp(a)))``. Its array-API dispatch cost ~60 us a call, more than the betting sum it
    ends (tests/gate/test_gate_call_costs.py
    compares the two on rows with ties, infinities, NaN and extreme values).

    Every entry finite (the betting sums always): the same operations without the branches that only
    infinities and NaN reach - ``s >= 0`` and ``m >= 1``, so the sign and ``s < -1`` fixes change
    nothing, and ``log1p(s) + log(m)`` (at most ``log(2 * cols)``) added to a finite maximum cannot
    overflow, so the direct form is never read (tests/paired/test_betting_kernels.py: the old code
    against this, bit for bit).
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    if a.size == 0:
        return np.full(a.shape[:-1], -np.inf, dtype=a.dtype)
    if a.dtype == np.float64 and np.isfinite(a).all():
        top = np.max(a, axis=-1, keepdims=True)
        at_top = a == top
        count = np.sum(at_top, axis=-1, keepdims=True, dtype=a.dtype)
        rest = np.sum(np.exp(np.where(at_top, -np.inf, a) - top), axis=-1, keepdims=True, dtype=a.dtype)
        finite: FloatArray = np.squeeze(np.log1p(rest / count) + np.log(count) + top, axis=-1)
        return finite
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out_inf = np.log(np.sum(np.exp(a), axis=-1, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        a_max = np.max(a, axis=-1, keepdims=True)
        i_max = a == a_max
        shifted = a.copy()
        shifted[i_max] = -np.inf
        m = np.sum(i_max.astype(a.dtype), axis=-1, keepdims=True, dtype=a.dtype)
        s = np.sum(np.exp(shifted - a_max), axis=-1, keepdims=True, dtype=a.dtype)
        s = np.where(s == 0, s, s / m)
        sgn = np.sign(s + 1) * np.sign(m)
        s = np.where(s < -1, -s - 2, s)
        out = np.log1p(s) + np.log(np.abs(m)) + a_max
        out[sgn < 0] = np.nan
    found: FloatArray = np.squeeze(np.where(np.isfinite(out), out, out_inf), axis=-1)
    return found


def _clean_pvalue(units: int, margin: float) -> float:
    """p-value of the betting test when every unit difference is 0 (closed form)."""
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    lam = _BET_CAP * np.arange(1, BETTING_GRID + 1) / (BETTING_GRID * (1 - margin))
    log_e = float(special.logsumexp(units * np.log1p(lam * margin)) - math.log(BETTING_GRID))
    return 1.0 if log_e <= 0 else math.exp(-log_e)


def _bounded_pvalues(s: FloatArray, n_g: FloatArray, margin: float) -> tuple[float, float, float]:
    top = float(n_g.max())
    y = (s + margin * n_g) / top
    e_pass = float(bounded_mean_evalues(y, lower=1 - margin))
    e_worse = float(bounded_mean_evalues(-y, lower=1 + margin))
    return e_pass, evalue_pvalue(e_pass), evalue_pvalue(e_worse)


def evalue_pvalue(e: float) -> float:
    """The p-value of an e-value, ``min(1, 1/e)`` (Markov); 1 for an e-value that underflowed to 0.

    At 10M records 1.25M units all against the bet took the product to 0 and ``1/e`` raised
    ``ZeroDivisionError`` (issue 28). Every e-value the gate turns into a p-value goes through here.

    Parameters
    ----------
    e
        A non-negative e-value.

    Returns
    -------
    float
        The p-value, in (0, 1].
    """
    return min(1.0, 1 / e) if e > 0 else 1.0


def bounded_mean_pvalues(
    sums: npt.ArrayLike, sizes: npt.ArrayLike | None = None, *, margin: float
) -> tuple[float, float]:
    r"""``(p_pass, p_worse)`` of the bounded-mean betting test of :math:`\delta > -\Delta` (and of
    :math:`\delta < -\Delta`), for a margin :math:`\Delta \in [0, 1)` (0: "candidate better").

    Parameters
    ----------
    sums
        Per-unit sums of per-case differences.
    sizes
        Cases per unit (default: 1 each).
    margin
        :math:`\Delta`, in [0, 1).

    Returns
    -------
    tuple of float
        ``(p_pass, p_worse)``.

    Raises
    ------
    ValueError
        A margin outside [0, 1), or sums that are empty, not one per unit or outside [-size, size].

    Examples
    --------
    >>> [round(p, 6) for p in bounded_mean_pvalues([0.5] * 30, margin=0.0)]
    [7.6e-05, 1.0]
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 <= margin < 1:
        msg = f"margin must be a number in [0, 1) (got {margin!r})"
        raise ValueError(msg)
    s = np.asarray(sums, dtype=np.float64).ravel()
    n_g = np.ones_like(s) if sizes is None else np.asarray(sizes, dtype=np.float64).ravel()
    if s.size == 0 or n_g.shape != s.shape or np.isnan(s).any() or (n_g < 1).any() or (np.abs(s) > n_g + 1e-9).any():
        msg = f"sums must be non-empty, one per unit, within [-size, size] (got {s.size} sums, {n_g.size} sizes)"
        raise ValueError(msg)
    _, p_pass, p_worse = _bounded_pvalues(s, n_g, float(margin))
    return p_pass, p_worse


def noninferiority_bounded_mean(
    sums: npt.ArrayLike,
    sizes: npt.ArrayLike | None = None,
    *,
    margin: float,
    alpha: float = 0.025,
) -> NonInferiorityTest:
    r"""Bounded-mean betting test of non-inferiority on per-unit sums of per-case differences.

    Parameters
    ----------
    sums
        Per unit (case, or case group) the sum of per-case differences :math:`d_i \in [-1, 1]`.
    sizes
        Cases per unit (default: 1 each). The largest is taken as the design's group size.
    margin, alpha
        As in :func:`noninferiority_test`.

    Returns
    -------
    NonInferiorityTest
        ``method="bounded_mean"``, ``statistic`` the e-value of "non-inferior";
        ``pvalue = min(1, 1/E)`` and ``pvalue_worse`` from the mirrored test.

    Raises
    ------
    ValueError, TypeError
        Sums that are empty, not one per unit or outside [-size, size], or an option outside its
        domain (TypeError: ``alpha`` not a number).

    Examples
    --------
    >>> t = noninferiority_bounded_mean([0.0] * 150, margin=0.05, alpha=0.05)
    >>> t.status, round(t.pvalue, 4), t.non_inferior
    ('ok', 0.0044, True)
    >>> noninferiority_bounded_mean([0.0] * 40, margin=0.05, alpha=0.05).cases_needed
    91
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    margin = check_margin(margin)
    check_alpha(alpha)
    s = np.asarray(sums, dtype=np.float64).ravel()
    n_g = np.ones_like(s) if sizes is None else np.asarray(sizes, dtype=np.float64).ravel()
    if s.size == 0 or n_g.shape != s.shape or np.isnan(s).any() or (n_g < 1).any() or (np.abs(s) > n_g + 1e-9).any():
        msg = f"sums must be non-empty, one per unit, within [-size, size] (got {s.size} sums, {n_g.size} sizes)"
        raise ValueError(msg)
    e_pass, pvalue, worse = _bounded_pvalues(s, n_g, margin)
    units = int(s.size)
    common: _TestFields = {"margin": margin, "method": "bounded_mean", "statistic": e_pass, "alpha": alpha}

    def best(m: int) -> float:
        return _clean_pvalue(m, margin)

    if margin >= 1 / units and best(units) > alpha:
        needed = _cases_needed(best, alpha, units)
        grouped = sizes is not None and float(n_g.max()) > 1
        cases = None if needed is None else (math.ceil(needed * float(n_g.mean())) if grouped else needed)
        what = (
            f"{units} independent case groups: at least {needed} groups (about {cases} cases) are needed"
            if grouped
            else f"{units} independent cases: at least {needed} are needed"
        )
        reason = (
            f"even if no case were worse (all differences 0) the bounded-mean test cannot show non-inferiority "
            f"by {margin:g} at alpha {alpha:g} with " + (what if needed is not None else what.split(":", maxsplit=1)[0])
        )
        return _finish(
            **common,
            pvalue=pvalue,
            pvalue_worse=worse,
            n_units=units,
            status="cannot_resolve",
            reason=reason,
            cases_needed=cases,
        )
    return _finish(**common, pvalue=pvalue, pvalue_worse=worse, n_units=units)


def noninferiority_case_level(
    mean_difference: float,
    se: float | None,
    n_units: int,
    *,
    margin: float,
    alpha: float = 0.025,
) -> NonInferiorityTest:
    r"""t test of non-inferiority on per-case (or per-group) differences (not used by ``compare``).

    ``se`` is the case-level standard error of the mean difference (Miller 2024, eq. 7; eq. 4 with
    groups); ``None`` or 0 gives ``insufficient_evidence``. Kept for reference and for the size
    study: its false-pass rate exceeds the level when the regression is concentrated in a few
    cases or cases come in few groups (``docs/size_study.md``), so :func:`gatestats.paired.compare`
    and the gate use :func:`noninferiority_bounded_mean` instead.

    Parameters
    ----------
    mean_difference
        Mean per-case difference, candidate minus baseline.
    se
        Its case-level standard error.
    n_units
        Independent units (the t distribution has ``n_units - 1`` degrees of freedom).
    margin, alpha
        As in :func:`noninferiority_test`.

    Returns
    -------
    NonInferiorityTest
        The t test, or ``insufficient_evidence`` without a standard error.

    Examples
    --------
    >>> t = noninferiority_case_level(-0.01, 0.01, 100, margin=0.05)
    >>> round(t.statistic, 1), round(t.pvalue, 5), t.non_inferior
    (4.0, 6e-05, True)
    """
    margin = check_margin(margin)
    check_alpha(alpha)
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
    worse = float(stats.t.cdf(statistic, n_units - 1))
    return _finish(
        margin=margin,
        method="case_t",
        statistic=statistic,
        pvalue=pvalue,
        pvalue_worse=worse,
        alpha=alpha,
        n_units=n_units,
    )
