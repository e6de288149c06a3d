r"""Several trials per case: the case stays the unit.

With :math:`n_{bi}` and :math:`n_{ci}` valid trials of case :math:`i` (passes :math:`x_{bi}`,
:math:`x_{ci}`), each system has a per-case estimate :math:`s_{bi}`, :math:`s_{ci}` (the pass rate
:math:`x/n`, or the unbiased per-case pass^k / pass@k), and the paired difference is the mean of
per-case differences

.. math:: \bar d = \frac1N \sum_i d_i, \qquad d_i = s_{ci} - s_{bi} \in [-1, 1].

Trials of one case are never treated as independent pairs: every method below resamples,
permutes or counts *cases* (or case groups, when cases carry ``case_group``; the unit is then the
group, and its value the sum of its cases' differences).

Interval for :math:`\bar d`
    ``clt``: :math:`\bar d \pm t_{U-1,\,1-\alpha/2}\,\mathrm{SE}` with the case-level standard error
    of a paired difference (Miller 2024, eq. 7),
    :math:`\mathrm{SE}^2 = \frac{1}{N(N-1)}\sum_i (d_i - \bar d)^2
    = (\mathrm{Var}(s_c) + \mathrm{Var}(s_b) - 2\,\mathrm{Cov}(s_c, s_b))/N`, made cluster-robust with
    groups (eq. 4 applied to :math:`d_i`), and Student's :math:`t` with :math:`U - 1` degrees of
    freedom for :math:`U` units. ``bootstrap``: the paired bootstrap over units (both systems'
    values of a case move together), bias-corrected and accelerated (BCa; Efron 1987), from a
    seeded generator, drawn as multinomial counts over the distinct unit values. ``auto``: ``clt``,
    whose coverage was at least 94% from 10 units on in the simulation recorded in
    ``docs/paired.md``, where the BCa bootstrap covered 90-92% at 20 cases and 93% at 100 (the
    per-case differences are discrete and skewed) and reached 94% only from 200. Below
    :data:`MIN_UNITS_CLT` / :data:`MIN_UNITS_BOOTSTRAP` units a method is not offered, nor when the
    per-case differences do not vary: the result then says ``insufficient_evidence`` instead of
    giving a zero-width interval.
Exact tests on units
    The *sign test*: conditional on the :math:`m` units whose difference is not zero, the number
    :math:`C` favouring the candidate is :math:`\mathrm{Bin}(m, 1/2)` when the two systems are
    exchangeable within a case; exact and mid-p values as in :mod:`gatestats.paired.mcnemar` (with
    one trial per case this *is* the McNemar test). Its mid-p version is not offered here: with
    several trials per case (or clustered cases) nearly every unit is discordant, so the number of
    discordant units is almost fixed, and at a fixed number the mid-p test's size reaches 0.077
    (16 units; ``docs/paired.md``). The *sign-flip permutation test* on the unit
    sums :math:`u_j`: under the same null every sign pattern of the :math:`u_j` is equally likely;
    the statistic is :math:`\sum_j u_j`. It is exact (complete enumeration) with at most
    :data:`EXACT_PERMUTATION_UNITS` non-zero units or when all :math:`|u_j|` are equal (then it is
    the sign test), and otherwise a Monte Carlo test from a seeded generator with
    :math:`p = (1 + B)/(1 + R)` (Phipson & Smyth 2010), which is valid for any ``R``.
    Both test *exchangeability* (the two systems behave alike on every unit) and are exact for
    it; neither is a test of the mean difference: with most cases a little better and a few
    broken, the mean can be zero while they "show" the candidate better (``docs/size_study.md``,
    ``skew0``). Tests of the mean against a margin use the bounded-mean betting test of
    :mod:`gatestats.paired.noninferiority`.

References
----------
Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171-185.
Fisher, R. A. (1935). The Design of Experiments, section 21 (the sign-flip randomisation test).
Miller, E. (2024). Adding Error Bars to Evals: A Statistical Approach to Language Model
    Evaluations. arXiv:2411.00640, eqs. 4 and 7.
Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero. Statistical
    Applications in Genetics and Molecular Biology 9(1), article 39.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypedDict

from gatestats.estimators.quantiles import norm_cdf, norm_ppf, t_isf
from gatestats.paired.intervals import DifferenceInterval, _no_interval
from gatestats.paired.mcnemar import mcnemar_pvalues
from gatestats.vocabulary import (
    Alternative,
    PairedIntervalMethod,
    ResolvedPairedIntervalMethod,
    check_confidence_level,
    check_n_resamples,
    check_seed,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from gatestats.paired._common import FloatArray

__all__ = [
    "EXACT_PERMUTATION_UNITS",
    "MIN_UNITS_BOOTSTRAP",
    "MIN_UNITS_CLT",
    "case_difference_interval",
    "permutation_test",
    "sign_counts",
    "unit_sums",
]

#: Fewest units for which the paired bootstrap interval is offered (coverage >= 94% from here).
MIN_UNITS_BOOTSTRAP: Final = 200
#: Fewest units for which the t interval with Miller's SE is offered (coverage >= 94% from here).
MIN_UNITS_CLT: Final = 10
#: Up to this many non-zero units the permutation test enumerates all sign patterns.
EXACT_PERMUTATION_UNITS: Final = 16

_BLOCK_CELLS = 4_000_000
_TIE = 1e-9


def unit_sums(d: FloatArray, groups: npt.NDArray[np.int64] | None) -> tuple[FloatArray, FloatArray]:
    """Per-unit sums of per-case differences and unit sizes (cases, or case groups).

    Parameters
    ----------
    d
        Per-case differences.
    groups
        Integer group code per case, or ``None`` (each case its own unit).

    Returns
    -------
    tuple of numpy.ndarray
        ``(sums, sizes)``, one entry per unit (in order of the group codes).
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    if groups is None:
        return d.astype(np.float64), np.ones(d.size)
    codes = np.unique(groups, return_inverse=True)[1]
    sums = np.bincount(codes, weights=d).astype(np.float64)
    sizes = np.bincount(codes).astype(np.float64)
    return sums, sizes


def sign_counts(sums: FloatArray) -> tuple[int, int]:
    """Count the units whose difference favours the baseline, and the candidate.

    Parameters
    ----------
    sums
        Per-unit sums of differences (differences within a relative tolerance of 0 are ties).

    Returns
    -------
    tuple of int
        ``(b, c)``.
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    scale = _TIE * max(1.0, float(np.abs(sums).max(initial=0.0)))
    return int((sums < -scale).sum()), int((sums > scale).sum())


def _tail_count(t_star: FloatArray, observed: float, alternative: Alternative, tol: float) -> int:
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    if alternative == "greater":
        return int((t_star >= observed - tol).sum())
    if alternative == "less":
        return int((t_star <= observed + tol).sum())
    return int((np.abs(t_star) >= abs(observed) - tol).sum())


def permutation_test(
    sums: FloatArray,
    *,
    alternative: Alternative = "two-sided",
    n_permutations: int = 9999,
    seed: int = 0,
) -> tuple[float, bool]:
    """Sign-flip permutation p-value of ``sum(sums)``; returns ``(pvalue, exact)``.

    ``sums`` are the unit values (per-case differences, or per-group sums). Exact when at most
    :data:`EXACT_PERMUTATION_UNITS` are non-zero or all non-zero ones have the same size;
    otherwise Monte Carlo with ``n_permutations`` draws from ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    sums
        Per-unit sums of differences.
    alternative
        Of the test.
    n_permutations, seed
        Monte Carlo draws (at least 99) and the seed of their generator.

    Returns
    -------
    tuple
        ``(pvalue, exact)``: the p-value and whether it is exact.

    Raises
    ------
    ValueError
        ``n_permutations`` or ``seed`` outside its domain.

    Examples
    --------
    >>> import numpy as np
    >>> permutation_test(np.array([0.5, 0.25, 0.75, -0.25, 0.5]), alternative="greater")
    (0.09375, True)
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    check_n_resamples(n_permutations, "n_permutations", minimum=99)
    check_seed(seed)
    values = np.abs(sums)
    scale = max(1.0, float(values.max(initial=0.0)))
    keep = values > _TIE * scale
    signs = np.sign(sums[keep])
    magnitude = values[keep]
    m = int(magnitude.size)
    if m == 0:
        return 1.0, True
    observed = float((signs * magnitude).sum())
    tol = _TIE * scale * m
    if np.ptp(magnitude) <= _TIE * scale:
        # All |u| equal: T = |u| (2C - m) with C ~ Bin(m, 1/2), the exact sign test.
        # Its p-value is the exact McNemar one of (m - C, C) discordant units (mcnemar_pvalues).
        c = int((signs > 0).sum())
        exact, _ = mcnemar_pvalues(m - c, c, alternative=alternative)
        return float(exact), True
    if m <= EXACT_PERMUTATION_UNITS:
        patterns = ((np.arange(2**m)[:, None] >> np.arange(m)[None, :]) & 1) * 2 - 1
        t_star = patterns.astype(np.float64) @ magnitude
        return _tail_count(t_star, observed, alternative, tol) / float(2**m), True
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_CELLS // m)
    hits = 0
    done = 0
    while done < n_permutations:
        size = min(block, n_permutations - done)
        draws = rng.integers(0, 2, size=(size, m), dtype=np.int8) * 2 - 1
        hits += _tail_count(draws.astype(np.float64) @ magnitude, observed, alternative, tol)
        done += size
    return (1 + hits) / (1 + n_permutations), False


def _bca_bounds(
    sums: FloatArray,
    sizes: FloatArray,
    *,
    tails: tuple[float | None, float | None],
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[float | None, float | None, float]:
    """BCa bounds of ``sum(sums)/sum(sizes)`` at lower/upper tail probabilities; and the bootstrap SE."""
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    units = sums.size
    # np.unique(axis=0)'s support, order and codes, ~5x faster at 200 units (tests/estimators/test_distinct_pairs.py)
    from gatestats.estimators.distinct import distinct_pairs  # noqa: PLC0415 - numpy's, on first use

    support, inverse = distinct_pairs(np.stack([sums, sizes], axis=1))
    counts = np.bincount(inverse.ravel(), minlength=support.shape[0]).astype(np.float64)
    sup_sum, sup_size = support[:, 0], support[:, 1]
    total_sum, total_size = float(sums.sum()), float(sizes.sum())
    estimate = total_sum / total_size
    pvals = counts / units
    means = np.empty(n_resamples)
    block = max(1, _BLOCK_CELLS // max(1, support.shape[0]))
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        draws = rng.multinomial(units, pvals, size=stop - start).astype(np.float64)
        means[start:stop] = (draws @ sup_sum) / (draws @ sup_size)
    boot_se = float(means.std(ddof=1))
    # Bias correction (ties count half) and jackknife acceleration over units (Efron 1987).
    tol = 1e-12 * max(1.0, abs(estimate))
    frac = (float((means < estimate - tol).sum()) + 0.5 * float((np.abs(means - estimate) <= tol).sum())) / n_resamples
    z0 = norm_ppf(min(max(frac, 0.5 / n_resamples), 1 - 0.5 / n_resamples))
    with np.errstate(divide="ignore", invalid="ignore"):
        leave_out = (total_sum - sup_sum) / (total_size - sup_size)
    leave_out = np.where(np.isfinite(leave_out), leave_out, estimate)
    jack_mean = float((counts * leave_out).sum() / units)
    u = jack_mean - leave_out
    u2, u3 = float((counts * u**2).sum()), float((counts * u**3).sum())
    acceleration = u3 / (6 * u2**1.5) if u2 > 0 else 0.0
    means.sort()

    def bound(tail: float | None) -> float | None:
        if tail is None:
            return None
        w = z0 + norm_ppf(tail)
        denom = 1 - acceleration * w
        q = norm_cdf(z0 + w / denom) if denom > 0 else (1.0 if w > 0 else 0.0)
        return float(np.quantile(means, min(max(q, 0.0), 1.0)))

    return bound(tails[0]), bound(tails[1]), boot_se


class _IntervalFields(TypedDict):
    """The fields of a :class:`DifferenceInterval` known before its method runs."""

    estimate: float
    confidence_level: float
    alternative: Alternative
    n_units: int


def case_difference_interval(
    d: npt.ArrayLike,
    *,
    groups: npt.NDArray[np.int64] | None = None,
    method: PairedIntervalMethod = "auto",
    confidence_level: float = 0.95,
    alternative: Alternative = "two-sided",
    n_resamples: int = 2000,
    seed: int = 0,
) -> DifferenceInterval:
    r"""Interval for the mean of per-case paired differences, with the case (or group) as the unit.

    Parameters
    ----------
    d
        Per-case differences :math:`s_{ci} - s_{bi}` in [-1, 1].
    groups
        Integer group code per case (cluster-robust when given).
    method
        ``auto``, ``bootstrap`` or ``clt`` (``tango``/``newcombe`` need the 2x2 table).
    confidence_level
        In (0, 1).
    alternative
        ``two-sided``, or a one-sided bound (``less``: upper bound only, the lower is -1;
        ``greater``: lower bound only, the upper is 1).
    n_resamples, seed
        Bootstrap resamples (at least 100) and the seed of its generator.

    Returns
    -------
    DifferenceInterval
        The interval, or ``insufficient_evidence`` with the reason (too few units, no variation).

    Raises
    ------
    ValueError
        Differences outside [-1, 1] or NaN, or an option outside its domain.

    Examples
    --------
    >>> r = case_difference_interval([0.1, -0.2, 0.3, 0.0, 0.2] * 8, method="clt")
    >>> r.method, round(r.estimate, 3), round(r.ci_low, 4), round(r.ci_high, 4)
    ('clt', 0.08, 0.0243, 0.1357)
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    if method not in ("auto", "bootstrap", "clt"):
        msg = f"method must be 'auto', 'bootstrap' or 'clt' for per-case differences (got {method!r})"
        raise ValueError(msg)
    check_confidence_level(confidence_level)
    check_n_resamples(n_resamples)
    check_seed(seed)
    values = np.asarray(d, dtype=np.float64).ravel()
    if values.size == 0 or np.isnan(values).any() or values.min() < -1 or values.max() > 1:
        msg = "per-case differences must be non-empty values in [-1, 1] without NaN"
        raise ValueError(msg)
    sums, sizes = unit_sums(values, groups)
    resolved: ResolvedPairedIntervalMethod = "clt" if method == "auto" else method
    common: _IntervalFields = {
        "estimate": float(values.mean()),
        "confidence_level": confidence_level,
        "alternative": alternative,
        "n_units": int(sums.size),
    }
    reason = _why_no_interval(sums, sizes, resolved, clustered=groups is not None)
    if reason is not None:
        return _no_interval(reason, **common)
    two_sided = alternative == "two-sided"
    tail = (1 - confidence_level) / 2 if two_sided else 1 - confidence_level
    want_low = alternative in ("two-sided", "greater")
    want_high = alternative in ("two-sided", "less")
    if resolved == "clt":
        return _clt_interval(values, groups, tail, (want_low, want_high), common)
    tails = (tail if want_low else None, 1 - tail if want_high else None)
    return _bootstrap_interval(sums, sizes, tails, n_resamples, seed, common)


def _why_no_interval(
    sums: FloatArray, sizes: FloatArray, resolved: ResolvedPairedIntervalMethod, *, clustered: bool
) -> str | None:
    """Why no interval is offered (too few units, no variation between units), or ``None``."""
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    units = int(sums.size)
    unit = "case groups" if clustered else "cases"
    minimum = MIN_UNITS_BOOTSTRAP if resolved == "bootstrap" else MIN_UNITS_CLT
    if units < minimum:
        return (
            f"the {resolved} interval is not offered below {minimum} independent {unit} (got {units}): "
            "its coverage fell under 94% there (docs/paired.md)"
        )
    if np.ptp(sums / sizes) == 0:
        return (
            f"the per-unit differences do not vary (all {float((sums / sizes)[0]):g}): no case-level variance "
            "to build an interval from; the exact tests still apply"
        )
    return None


def _clt_interval(
    values: FloatArray,
    groups: npt.NDArray[np.int64] | None,
    tail: float,
    want: tuple[bool, bool],
    common: _IntervalFields,
) -> DifferenceInterval:
    """The t interval with Miller's clustered standard error (the bounds ``want`` asks), within [-1, 1]."""
    # estimators.intervals on first use: compare and rank with one trial per case never load it (issue 28 item 2).
    from gatestats.estimators.intervals import clustered_standard_error  # noqa: PLC0415

    estimate, units = common["estimate"], common["n_units"]
    se = clustered_standard_error(values, groups)
    q = t_isf(tail, units - 1)
    low = max(-1.0, estimate - q * se) if want[0] else -1.0
    high = min(1.0, estimate + q * se) if want[1] else 1.0
    return DifferenceInterval(ci_low=low, ci_high=high, method="clt", status="ok", reason=None, se=se, **common)


def _bootstrap_interval(
    sums: FloatArray,
    sizes: FloatArray,
    tails: tuple[float | None, float | None],
    n_resamples: int,
    seed: int,
    common: _IntervalFields,
) -> DifferenceInterval:
    """The BCa bootstrap interval over units, clipped to [-1, 1]; none when it is degenerate."""
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    b_low, b_high, boot_se = _bca_bounds(
        sums, sizes, tails=tails, n_resamples=n_resamples, rng=np.random.default_rng(seed)
    )
    low = -1.0 if b_low is None else max(-1.0, b_low)
    high = 1.0 if b_high is None else min(1.0, b_high)
    if not low < high:
        return _no_interval(
            "the bootstrap distribution is degenerate (a zero-width interval); use more cases", **common
        )
    return DifferenceInterval(
        ci_low=low,
        ci_high=high,
        method="bootstrap",
        status="ok",
        reason=None,
        se=boot_se,
        n_resamples=n_resamples,
        seed=seed,
        **common,
    )
