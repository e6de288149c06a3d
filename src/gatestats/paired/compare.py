r"""Paired comparison of a candidate against a baseline on the same cases: :func:`compare`.

The cases are paired on (case_id, case_version) (:mod:`gatestats.paired.pairing`). Then:

* **One valid trial per case** (``design="one_trial"``): the 2x2 table :math:`a, b, c, d`
  (``b``: passed by the baseline only, the pass → fail flips; ``c``: passed by the candidate
  only, the fail → pass flips), the exact and mid-p McNemar tests
  (:mod:`~gatestats.paired.mcnemar`), Tango's score interval for
  :math:`\delta = p_\text{candidate} - p_\text{baseline} = (c - b)/n` (or Newcombe's hybrid score
  interval; :mod:`~gatestats.paired.intervals`), the exact interval of the conditional odds ratio
  :math:`c/b` (:mod:`~gatestats.paired.odds_ratio`) and, with a margin, the Tango/Nam score test
  of non-inferiority (:mod:`~gatestats.paired.noninferiority`).
* **Several trials per case** (``design="several_trials"``): the case stays the unit
  (:mod:`~gatestats.paired.trials`): per-case differences of pass rates (or of per-case pass^k /
  pass@k at ``k``), the case-level exact sign test (exact and mid-p; ``b``/``c`` count the cases
  where the baseline / the candidate does better) and the sign-flip permutation test, the paired
  bootstrap or Miller's (2024, eq. 7) clustered standard error for the interval, and the
  bounded-mean betting test against the margin (valid for any distribution of per-case
  differences; the t test was not when the regression sits in a few cases, docs/size_study.md).
  The sign and permutation tests are tests of *exchangeability* (no difference in any case),
  exact for that null; they are not tests of the mean difference, and the gate does not use them.
* When cases carry ``case_group``, groups are the unit of every test and interval.

Every comparison also checks its **resolution** (:mod:`~gatestats.paired.resolution`): a margin
finer than one case's weight, or too few discordant units for the exact test to ever reach
significance, gives ``status="cannot_resolve"`` with the number of cases needed. Cases whose
estimate is undefined (fewer valid trials than ``k``) give ``status="insufficient_evidence"`` and
are named; nothing is truncated or scored 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gatestats._typing import (
    Alternative,
    ComparisonStatus,
    FrameLike,
    Metric,
    PairedIntervalMethod,
    PairedTest,
)
from gatestats.paired.intervals import DifferenceInterval
from gatestats.paired.mcnemar import mcnemar_pvalues
from gatestats.paired.noninferiority import (
    NonInferiorityTest,
    noninferiority_bounded_mean,
    noninferiority_test,
)
from gatestats.paired.odds_ratio import conditional_odds_ratio
from gatestats.paired.pairing import CaseTable, PairedCases, build_case_table, pair_table
from gatestats.paired.resolution import resolution
from gatestats.paired.result import Comparison, ComparisonOptions, difference_interval
from gatestats.paired.trials import permutation_test, sign_counts, unit_sums

__all__ = ["Comparison", "ComparisonOptions", "compare", "compare_pair"]

_SHOWN = 20
_TIE = 1e-12


def _shown(labels: npt.NDArray[np.object_]) -> str:
    items = labels[:_SHOWN].tolist()
    return ", ".join(items) + (" ..." if labels.size > _SHOWN else "")


def _undefined(
    paired: PairedCases, options: ComparisonOptions, labels: npt.NDArray[np.object_], bad: Any
) -> Comparison:
    t = paired.table
    names = labels[bad]
    reason = (
        f"the per-case estimate ({t.metric} at k={t.k}) is undefined for {names.size} of {labels.size} paired "
        f"case(s) with fewer than {t.k} valid trial(s) in one of the systems: {_shown(names)}"
    )
    empty = DifferenceInterval(
        estimate=None,
        ci_low=None,
        ci_high=None,
        method=None,
        confidence_level=options.confidence_level,
        alternative=options.alternative,
        status="insufficient_evidence",
        reason=reason,
    )
    return Comparison(
        baseline=paired.baseline, candidate=paired.candidate, metric=t.metric, k=t.k,
        design="several_trials", alternative=options.alternative, confidence_level=options.confidence_level,
        test="exact" if options.test == "auto" else options.test, status="insufficient_evidence",
        reason=reason, n_pairs=paired.n_pairs,
        n_units=paired.n_pairs, clustered=False, a=None, b=0, c=0, d=None, n_ties=0, statistic=None,
        pvalue=None, pvalue_exact=None, pvalue_midp=None, pvalue_permutation=None, permutation_exact=None,
        p_baseline=None, p_candidate=None, diff=None, interval=empty, odds_ratio=None, noninferiority=None,
        resolution=None, flips_pass_to_fail=(), flips_fail_to_pass=(),
        unpaired_baseline=paired.unpaired_baseline, unpaired_candidate=paired.unpaired_candidate,
        excluded_versions=paired.excluded_versions, undefined_cases=tuple(names.tolist()),
        seed=options.seed, n_resamples=options.n_resamples, n_permutations=None,
    )  # fmt: skip


def compare_pair(
    paired: PairedCases, options: ComparisonOptions, *, resolution_alpha: float | None = None
) -> Comparison:
    """Compare two paired systems of a :class:`CaseTable` (the engine behind :func:`compare`).

    ``resolution_alpha`` overrides the level of the resolution check (used for Bonferroni
    families); it defaults to ``1 - confidence_level``.
    """
    t: CaseTable = paired.table
    i, j = t.systems.index(paired.baseline), t.systems.index(paired.candidate)
    idx = paired.indices
    vb, vc = t.value[i, idx], t.value[j, idx]
    labels = t.labels[idx]
    bad = np.isnan(vb) | np.isnan(vc)
    if bad.any():
        return _undefined(paired, options, labels, bad)
    diffs = vc - vb
    groups = None if t.groups is None else t.groups[idx]
    clustered = groups is not None and np.unique(groups).size < idx.size
    unit_groups = groups if clustered else None
    one_trial = t.k == 1 and bool((t.n[i, idx] == 1).all() and (t.n[j, idx] == 1).all())
    worse, better = diffs < -_TIE, diffs > _TIE
    b, c = int(worse.sum()), int(better.sum())
    a = d = None
    if one_trial:
        a = int(((vb == 1) & (vc == 1)).sum())
        d = int(((vb == 0) & (vc == 0)).sum())
    sums, unit_sizes = unit_sums(diffs, unit_groups)
    ub, uc = sign_counts(sums)
    exact, midp = (float(x) for x in mcnemar_pvalues(ub, uc, alternative=options.alternative))
    independent_table = one_trial and not clustered
    midp_offered = independent_table and options.alternative == "two-sided"
    test = options.test if options.test != "auto" else ("midp" if midp_offered else "exact")
    if test == "midp" and not midp_offered:
        if not independent_table:
            why = "cases share a case_group" if clustered else "cases have several trials"
            size = "with nearly every unit discordant its size reaches 0.077"
        else:
            why = f"alternative {options.alternative!r}"
            size = "one-sided, its size reaches 0.0501 in A/A comparisons"
        msg = (
            f"test 'midp' is offered only for two-sided tests with one trial per independent case (here {why}): "
            f"{size} (docs/paired.md); use 'exact', 'permutation' or 'auto'"
        )
        raise ValueError(msg)
    perm: float | None = None
    perm_exact: bool | None = None
    if test == "permutation":
        perm, perm_exact = permutation_test(
            sums, alternative=options.alternative, n_permutations=options.n_permutations, seed=options.seed
        )
    pvalue = {"midp": midp, "exact": exact, "permutation": perm}[test]
    interval = difference_interval(
        diffs, unit_groups, a if not clustered else None, b, c, d if not clustered else None, options
    )
    n = int(idx.size)
    units = int(sums.size)
    diff = float(diffs.mean())
    odds = None
    ni: NonInferiorityTest | None = None
    alpha_one = options.alpha / 2
    if one_trial and not clustered:
        odds = conditional_odds_ratio(b, c, confidence_level=options.confidence_level, alternative=options.alternative)
        if options.margin is not None:
            ni = noninferiority_test(b, c, n, margin=options.margin, alpha=alpha_one)
    elif options.margin is not None:
        ni = noninferiority_bounded_mean(
            sums, unit_sizes if clustered else None, margin=options.margin, alpha=alpha_one
        )
    res = resolution(
        units,
        ub + uc,
        alpha=options.alpha if resolution_alpha is None else resolution_alpha,
        alternative=options.alternative,
        midp=test == "midp",
        margin=options.margin,
    )
    status: ComparisonStatus = "ok"
    reasons: list[str] = []
    if interval.status != "ok":
        status = "insufficient_evidence"
        reasons.append(f"no interval for the difference: {interval.reason}")
    if res.status == "cannot_resolve":
        status = "insufficient_evidence" if status != "ok" else "cannot_resolve"
        reasons.append(f"cannot resolve: {res.reason}")
    if ni is not None and ni.status != "ok" and ni.reason and ni.reason not in (res.reason or ""):
        reasons.append(f"non-inferiority: {ni.reason}")
        if status == "ok":
            status = ni.status
    return Comparison(
        baseline=paired.baseline,
        candidate=paired.candidate,
        metric=t.metric,
        k=t.k,
        design="one_trial" if one_trial else "several_trials",
        alternative=options.alternative,
        confidence_level=options.confidence_level,
        test=test,
        status=status,
        reason="; ".join(reasons) if reasons else None,
        n_pairs=n,
        n_units=units,
        clustered=clustered,
        a=a,
        b=b,
        c=c,
        d=d,
        n_ties=n - b - c,
        statistic=uc,
        pvalue=pvalue,
        pvalue_exact=exact,
        pvalue_midp=midp,
        pvalue_permutation=perm,
        permutation_exact=perm_exact,
        p_baseline=float(vb.mean()),
        p_candidate=float(vc.mean()),
        diff=diff,
        interval=interval,
        odds_ratio=odds,
        noninferiority=ni,
        resolution=res,
        flips_pass_to_fail=tuple(labels[worse].tolist()),
        flips_fail_to_pass=tuple(labels[better].tolist()),
        unpaired_baseline=paired.unpaired_baseline,
        unpaired_candidate=paired.unpaired_candidate,
        excluded_versions=paired.excluded_versions,
        undefined_cases=(),
        seed=options.seed,
        n_resamples=options.n_resamples,
        n_permutations=options.n_permutations if test == "permutation" and not perm_exact else None,
        _diffs=diffs,
        _groups=unit_groups,
        _interval_method=options.interval,
    )


def compare(
    records: FrameLike,
    *,
    baseline: str,
    candidate: str,
    margin: float | None = None,
    alternative: Alternative = "two-sided",
    confidence_level: float = 0.95,
    test: PairedTest = "auto",
    interval: PairedIntervalMethod = "auto",
    metric: Metric = "pass_hat_k",
    k: int = 1,
    shared_versions_only: bool = False,
    n_resamples: int = 2000,
    n_permutations: int = 9999,
    seed: int = 0,
    system_column: str = "system",
) -> Comparison:
    r"""Paired comparison of ``candidate`` against ``baseline`` on the cases both ran.

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``; see :func:`gatestats.records.load_records`).
    baseline, candidate
        The two systems (values of ``system_column``).
    margin
        Non-inferiority margin :math:`\Delta \in (0, 1)` on the difference of pass rates: tests
        :math:`H_0: \delta \le -\Delta` at one-sided level :math:`(1 - \text{confidence\_level})/2`.
    alternative
        Of the tests and the interval: ``two-sided``; ``less`` (the candidate is worse);
        ``greater`` (the candidate is better).
    confidence_level
        Of the interval; the tests' level is ``1 - confidence_level``.
    test
        The p-value reported as ``pvalue``: ``auto`` (default: ``midp`` for a two-sided test with
        one trial per independent case, Fagerland et al. 2013; ``exact`` otherwise), ``midp``,
        ``exact`` (conditional McNemar / sign test) or ``permutation`` (sign-flip on per-case
        differences). ``midp`` is offered only where its A/A size was shown to stay within the
        level (two-sided, one trial per independent case; ``docs/paired.md``); ``pvalue_midp`` is
        reported everywhere for reference.
    interval
        ``auto`` (Tango with one trial per independent case; else the t interval with Miller's
        clustered SE), ``tango``, ``newcombe``, ``bootstrap`` (from 200 units) or ``clt``.
    metric, k
        Per-case estimate compared with several trials: ``pass_hat_k`` (default; at ``k = 1`` the
        pass rate) or ``pass_at_k``.
    shared_versions_only
        Compare only the case versions both ran (the others are listed); otherwise a case id run
        at different versions is an error.
    n_resamples, n_permutations, seed
        Bootstrap resamples, Monte Carlo permutations, and the seed of both (recorded).
    system_column
        Column that names the system.

    Returns
    -------
    Comparison

    Raises
    ------
    UnknownSystemError, CaseVersionMismatchError, NoPairedCasesError
        See :func:`gatestats.paired.pair_cases`.
    ValueError
        An option outside its domain (the message names it and what was got).

    References
    ----------
    Fagerland, M. W., Lydersen, S. & Laake, P. (2013). BMC Med. Res. Methodol. 13:91.
    Tango, T. (1998). Statistics in Medicine 17(8), 891-908.
    Miller, E. (2024). Adding Error Bars to Evals. arXiv:2411.00640, eq. 7.

    Examples
    --------
    Bentur et al. (2009): a = 1, b = 1, c = 7, d = 12 (Fagerland et al. 2013).

    >>> import polars as pl
    >>> cells = [(1, 1)] * 1 + [(1, 0)] * 1 + [(0, 1)] * 7 + [(0, 0)] * 12
    >>> rows = [(s, f"case-{i}", o) for i, pair in enumerate(cells) for s, o in zip("AB", pair)]
    >>> records = pl.DataFrame(rows, schema=["system", "case_id", "passed"], orient="row").select(
    ...     "system", "case_id", case_version=None, case_group=None, trial=0, attempt=0,
    ...     outcome=pl.when(pl.col("passed") == 1).then(pl.lit("passed")).otherwise(pl.lit("failed")))
    >>> r = compare(records, baseline="A", candidate="B")
    >>> r.b, r.c, round(r.pvalue_exact, 3), round(r.pvalue_midp, 3)
    (1, 7, 0.07, 0.039)
    >>> round(r.diff, 4), round(r.diff_ci_low, 4), round(r.diff_ci_high, 4), r.interval.method
    (0.2857, 0.026, 0.5172, 'tango')
    """
    options = ComparisonOptions(
        margin=margin,
        alternative=alternative,
        confidence_level=confidence_level,
        test=test,
        interval=interval,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        seed=seed,
    )
    table = build_case_table(
        records,
        metric=metric,
        k=k,
        systems=[baseline, candidate],
        system_column=system_column,
        allow_several_versions=shared_versions_only,
    )
    paired = pair_table(table, baseline=baseline, candidate=candidate, shared_versions_only=shared_versions_only)
    return compare_pair(paired, options)
