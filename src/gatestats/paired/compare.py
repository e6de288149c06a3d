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

Examples
--------
:func:`compare` on Bentur et al. (2009): a = 1, b = 1, c = 7, d = 12 (Fagerland et al. 2013, BMC Med. Res.
Methodol. 13:91; Tango 1998 for the interval).

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

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from gatestats._lazy import numpy_loaded
from gatestats.paired.intervals import DifferenceInterval, _no_interval
from gatestats.paired.mcnemar import mcnemar_pvalues
from gatestats.paired.noninferiority import (
    NonInferiorityTest,
    noninferiority_bounded_mean,
    noninferiority_test,
)
from gatestats.paired.odds_ratio import OddsRatioEstimate, conditional_odds_ratio
from gatestats.paired.pairing import CaseTable, PairedCases, pair_cases
from gatestats.paired.resolution import Resolution, resolution
from gatestats.paired.result import Comparison, ComparisonOptions, difference_interval
from gatestats.paired.trials import permutation_test, sign_counts, unit_sums
from gatestats.vocabulary import (
    Alternative,
    ComparisonStatus,
    FrameLike,
    Metric,
    PairedDesign,
    PairedIntervalMethod,
    PairedTest,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Comparison", "ComparisonOptions", "compare", "compare_pair"]

_SHOWN = 20
_TIE = 1e-12


def _shown(labels: npt.NDArray[np.object_]) -> str:
    items = labels[:_SHOWN].tolist()
    return ", ".join(items) + (" ..." if labels.size > _SHOWN else "")


class _PairedFields(TypedDict):
    """The fields of a :class:`Comparison` that come from the pairing and the options alone."""

    baseline: str
    candidate: str
    metric: Metric
    k: int
    alternative: Alternative
    confidence_level: float
    unpaired_baseline: tuple[str, ...]
    unpaired_candidate: tuple[str, ...]
    excluded_versions: tuple[str, ...]
    seed: int
    n_resamples: int


class _PValues(TypedDict):
    """The fields of a :class:`Comparison` that come from its tests: the p-values and the one reported."""

    test: PairedTest
    statistic: int
    pvalue: float | None
    pvalue_exact: float
    pvalue_midp: float
    pvalue_permutation: float | None
    permutation_exact: bool | None
    n_permutations: int | None


class _Measured(TypedDict):
    """The fields of a :class:`Comparison` measured on the paired cases (by :func:`compare_pair` or paired.small)."""

    design: PairedDesign
    n_pairs: int
    n_units: int
    clustered: bool
    a: int | None
    b: int
    c: int
    d: int | None
    n_ties: int
    p_baseline: float
    p_candidate: float
    diff: float
    interval: DifferenceInterval
    odds_ratio: OddsRatioEstimate | None
    noninferiority: NonInferiorityTest | None
    flips_pass_to_fail: tuple[str, ...]
    flips_fail_to_pass: tuple[str, ...]
    _diffs: npt.NDArray[np.float64] | tuple[float, ...]
    _groups: npt.NDArray[np.int64] | None


def _paired_fields(paired: PairedCases, options: ComparisonOptions) -> _PairedFields:
    """The fields of a :class:`Comparison` that come from the pairing and the options alone."""
    return _fields(
        options,
        (paired.baseline, paired.candidate),
        (paired.table.metric, paired.table.k),
        (paired.unpaired_baseline, paired.unpaired_candidate, paired.excluded_versions),
    )


def _fields(
    options: ComparisonOptions,
    systems: tuple[str, str],
    estimate: tuple[Metric, int],
    left_out: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]],
) -> _PairedFields:
    """:func:`_paired_fields` from its parts: (baseline, candidate), (metric, k), (unpaired ×2, excluded)."""
    return {
        "baseline": systems[0],
        "candidate": systems[1],
        "metric": estimate[0],
        "k": estimate[1],
        "alternative": options.alternative,
        "confidence_level": options.confidence_level,
        "unpaired_baseline": left_out[0],
        "unpaired_candidate": left_out[1],
        "excluded_versions": left_out[2],
        "seed": options.seed,
        "n_resamples": options.n_resamples,
    }


def _finished(
    fields: _PairedFields,
    pvalues: _PValues,
    measured: _Measured,
    options: ComparisonOptions,
    *,
    n_discordant: int,
    resolution_alpha: float | None,
) -> Comparison:
    """The :class:`Comparison`: its resolution and status from what was measured (both paths end here)."""
    res = _resolution(measured["n_units"], n_discordant, options, pvalues["test"], resolution_alpha)
    status, reason = _status(measured["interval"], res, measured["noninferiority"])
    return Comparison(
        **fields,
        **pvalues,
        **measured,
        status=status,
        reason=reason,
        resolution=res,
        undefined_cases=(),
        _interval_method=options.interval,
    )


def _undefined(
    paired: PairedCases, options: ComparisonOptions, labels: npt.NDArray[np.object_], bad: Any
) -> Comparison:
    t = paired.table
    names = labels[bad]
    reason = (
        f"the per-case estimate ({t.metric} at k={t.k}) is undefined for {names.size} of {labels.size} paired "
        f"case(s) with fewer than {t.k} valid trial(s) in one of the systems: {_shown(names)}"
    )
    empty = _no_interval(reason, **options.level)
    return Comparison(
        **_paired_fields(paired, options),
        design="several_trials",
        test="exact" if options.test == "auto" else options.test,
        status="insufficient_evidence",
        reason=reason,
        n_pairs=paired.n_pairs,
        n_units=paired.n_pairs,
        clustered=False,
        a=None,
        b=0,
        c=0,
        d=None,
        n_ties=0,
        statistic=None,
        pvalue=None,
        pvalue_exact=None,
        pvalue_midp=None,
        pvalue_permutation=None,
        permutation_exact=None,
        p_baseline=None,
        p_candidate=None,
        diff=None,
        interval=empty,
        odds_ratio=None,
        noninferiority=None,
        resolution=None,
        flips_pass_to_fail=(),
        flips_fail_to_pass=(),
        undefined_cases=tuple(names.tolist()),
        n_permutations=None,
    )


def _resolve_test(options: ComparisonOptions, *, one_trial: bool, clustered: bool) -> PairedTest:
    """The test ``auto`` stands for here; refuse ``midp`` where its size was not shown to hold."""
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
    return test


def _pvalues(
    sums: npt.NDArray[np.float64], signs: tuple[int, int], test: PairedTest, options: ComparisonOptions
) -> _PValues:
    """The sign-test p-values of the unit sums, the permutation test when asked, and the chosen one."""
    ub, uc = signs
    exact, midp = (float(x) for x in mcnemar_pvalues(ub, uc, alternative=options.alternative))
    perm: float | None = None
    perm_exact: bool | None = None
    if test == "permutation":
        perm, perm_exact = permutation_test(
            sums, alternative=options.alternative, n_permutations=options.n_permutations, seed=options.seed
        )
    return _pvalue_fields(test, uc, (exact, midp), (perm, perm_exact), options)


def _pvalue_fields(
    test: PairedTest,
    uc: int,
    conditional: tuple[float, float],
    permutation: tuple[float | None, bool | None],
    options: ComparisonOptions,
) -> _PValues:
    """The p-value fields: the exact and mid-p sign tests, the permutation test's (or ``None``) and the chosen one."""
    exact, midp = conditional
    perm, perm_exact = permutation
    return {
        "test": test,
        "statistic": uc,
        "pvalue": {"midp": midp, "exact": exact, "permutation": perm}[test],
        "pvalue_exact": exact,
        "pvalue_midp": midp,
        "pvalue_permutation": perm,
        "permutation_exact": perm_exact,
        "n_permutations": options.n_permutations if test == "permutation" and not perm_exact else None,
    }


def _noninferiority_and_odds(
    counts: tuple[int, int, int],
    sums: npt.NDArray[np.float64],
    unit_sizes: npt.NDArray[np.float64] | None,
    options: ComparisonOptions,
    *,
    table: bool,
) -> tuple[OddsRatioEstimate | None, NonInferiorityTest | None]:
    """The conditional odds ratio (2x2 table only) and the non-inferiority test (with a margin)."""
    b, c, n = counts
    alpha = options.noninferiority_alpha
    if table:
        odds = conditional_odds_ratio(b, c, **options.level)
        ni = None if options.margin is None else noninferiority_test(b, c, n, margin=options.margin, alpha=alpha)
        return odds, ni
    if options.margin is None:
        return None, None
    return None, noninferiority_bounded_mean(sums, unit_sizes, margin=options.margin, alpha=alpha)


def _status(
    interval: DifferenceInterval, res: Resolution, ni: NonInferiorityTest | None
) -> tuple[ComparisonStatus, str | None]:
    """The comparison's status and reason from its interval, resolution and non-inferiority test."""
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
    return status, "; ".join(reasons) if reasons else None


def _estimates(
    paired: PairedCases,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.object_]]:
    """The per-case estimates of the baseline and the candidate on the paired cases, and the cases' labels."""
    t: CaseTable = paired.table
    i, j = t.systems.index(paired.baseline), t.systems.index(paired.candidate)
    idx = paired.indices
    return t.value[i, idx], t.value[j, idx], t.labels[idx]


def _design(paired: PairedCases) -> tuple[bool, npt.NDArray[np.int64] | None]:
    """Whether both systems ran one trial per paired case, and the case groups when cases cluster in them."""
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    t = paired.table
    i, j = t.systems.index(paired.baseline), t.systems.index(paired.candidate)
    idx = paired.indices
    one_trial = t.k == 1 and bool((t.n[i, idx] == 1).all() and (t.n[j, idx] == 1).all())
    groups = None if t.groups is None else t.groups[idx]
    clustered = groups is not None and np.unique(groups).size < idx.size
    return one_trial, groups if clustered else None


def _concordant(vb: npt.NDArray[np.float64], vc: npt.NDArray[np.float64]) -> tuple[int, int]:
    """The concordant cells of the 2x2 table: cases both systems passed (``a``), and both failed (``d``)."""
    return int(((vb == 1) & (vc == 1)).sum()), int(((vb == 0) & (vc == 0)).sum())


def _resolution(
    n_units: int, n_discordant: int, options: ComparisonOptions, test: PairedTest, level: float | None
) -> Resolution:
    """Whether the deciding conditional test (mid-p or exact) can reach ``level`` (default: the test level)."""
    return resolution(
        n_units,
        n_discordant,
        alpha=options.test_alpha if level is None else level,
        alternative=options.alternative,
        method="midp" if test == "midp" else "exact",
        margin=options.margin,
    )


def compare_pair(
    paired: PairedCases, options: ComparisonOptions, *, resolution_alpha: float | None = None
) -> Comparison:
    """Compare two paired systems of a :class:`CaseTable` (the engine behind :func:`compare`).

    Parameters
    ----------
    paired
        The paired cases of the two systems (:func:`gatestats.paired.pair_cases`).
    options
        The validated options of the comparison.
    resolution_alpha
        Level of the resolution check (Bonferroni families pass theirs); default
        ``options.test_alpha``.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        ``test`` or ``interval`` not offered for this design (the message says why).
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    vb, vc, labels = _estimates(paired)
    bad = np.isnan(vb) | np.isnan(vc)
    if bad.any():
        return _undefined(paired, options, labels, bad)
    diffs = vc - vb
    one_trial, unit_groups = _design(paired)
    clustered = unit_groups is not None
    worse, better = diffs < -_TIE, diffs > _TIE
    b, c, n = int(worse.sum()), int(better.sum()), int(paired.indices.size)
    a, d = _concordant(vb, vc) if one_trial else (None, None)
    sums, unit_sizes = unit_sums(diffs, unit_groups)
    ub, uc = sign_counts(sums)
    pvalues = _pvalues(sums, (ub, uc), _resolve_test(options, one_trial=one_trial, clustered=clustered), options)
    interval = difference_interval(
        diffs, unit_groups, a if not clustered else None, b, c, d if not clustered else None, options
    )
    odds, ni = _noninferiority_and_odds(
        (b, c, n), sums, unit_sizes if clustered else None, options, table=one_trial and not clustered
    )
    measured: _Measured = {
        "design": "one_trial" if one_trial else "several_trials",
        "n_pairs": n,
        "n_units": int(sums.size),
        "clustered": clustered,
        "a": a,
        "b": b,
        "c": c,
        "d": d,
        "n_ties": n - b - c,
        "p_baseline": float(vb.mean()),
        "p_candidate": float(vc.mean()),
        "diff": float(diffs.mean()),
        "interval": interval,
        "odds_ratio": odds,
        "noninferiority": ni,
        "flips_pass_to_fail": tuple(labels[worse].tolist()),
        "flips_fail_to_pass": tuple(labels[better].tolist()),
        "_diffs": diffs,
        "_groups": unit_groups,
    }
    fields = _paired_fields(paired, options)
    return _finished(fields, pvalues, measured, options, n_discordant=ub + uc, resolution_alpha=resolution_alpha)


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
    alpha: float | None = None,
) -> Comparison:
    r"""Paired comparison of ``candidate`` against ``baseline`` on the cases both ran.

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``; see :func:`gatestats.records.load_records`).
    baseline, candidate
        The two systems (values of ``system_column``).
    margin, alternative, confidence_level, test, interval, n_resamples, n_permutations, seed, alpha
        The options of the comparison, as documented in :class:`ComparisonOptions`: a
        non-inferiority margin, the alternative, the interval's level (of the interval only), the
        p-value reported as ``pvalue`` (``auto``: mid-p two-sided with one trial per independent
        case, exact otherwise), the interval method, the bootstrap resamples, Monte Carlo
        permutations and their seed (recorded), and the level of the decisions (``None``: agreeing with the interval).
    metric, k
        Per-case estimate compared with several trials: ``pass_hat_k`` (default; at ``k = 1`` the
        pass rate) or ``pass_at_k``.
    shared_versions_only
        Compare only the case versions both ran (the others are listed); otherwise a case id run
        at different versions is an error.
    system_column
        Column that names the system.

    Returns
    -------
    Comparison
        Counts, p-values, interval, odds ratio, non-inferiority test, resolution and flips.

    Raises
    ------
    UnknownSystemError, CaseVersionMismatchError, NoPairedCasesError
        See :func:`gatestats.paired.pair_cases`.
    ValueError
        An option outside its domain (the message names it and what was got).

    Examples
    --------
    Bentur et al. (2009), checked against Fagerland et al. (2013): in the module docstring.
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
        alpha=alpha,
    )
    how = _Pairing(metric=metric, k=k, shared_versions_only=shared_versions_only, system_column=system_column)
    found = _in_python(records, (baseline, candidate), options, how)
    if found is not None:
        return found
    return compare_pair(pair_cases(records, baseline=baseline, candidate=candidate, **how), options)


class _Pairing(TypedDict):
    """The options of :func:`compare` that choose and pair the cases (besides the two systems)."""

    metric: Metric
    k: int
    shared_versions_only: bool
    system_column: str


def _in_python(
    records: FrameLike, systems: tuple[str, str], options: ComparisonOptions, how: _Pairing
) -> Comparison | None:
    """The comparison in Python numbers (paired/small.py) while numpy is not loaded; ``None``: numpy's path."""
    if numpy_loaded():
        return None
    from gatestats.paired.small import small_comparison  # noqa: PLC0415 - its module only on this path

    return small_comparison(records, systems, options, **how)
