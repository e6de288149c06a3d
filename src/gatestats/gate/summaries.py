"""What a verdict shows beside its decision: pass^k / pass@k curves, per-slice pass rates, case sets.

They decide nothing; they are computed once, by the gate, at the policy's confidence level and
seed, and bound into the verdict so that a report draws exactly these numbers and recomputes
none. Curves and slices count every case, severe ones included (the rule rows keep the gate's
own populations, which leave severe cases out).
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias, TypedDict, cast

import polars as pl

from gatestats._query import collect_small
from gatestats.estimators import ANALYSIS_COLUMNS, Analysis, MetricEstimate, SystemAnalysis, analyze, case_summary
from gatestats.estimators.analyze import analyze_summary
from gatestats.gate.bindings import CaseSetRate, CaseSets, CurvePoint, FailureClassCount, FlipCount, SliceRate
from gatestats.gate.checks import Side
from gatestats.gate.policy import Policy
from gatestats.golden.trends import failed_case_rows
from gatestats.paired.pairing import case_label
from gatestats.vocabulary import FAILING_OUTCOMES, NO_SLICE, TRIAL_KEY, UNCLASSIFIED, Status, final_attempts

__all__ = [
    "NO_SLICE",
    "SIDES",
    "case_set_summary",
    "curve_analysis",
    "curve_max_k",
    "curve_points",
    "failure_class_counts",
    "flip_counts",
    "lists_no_slice",
    "one_version_each",
    "slice_rates",
]

SIDES: Final[tuple[Side, Side]] = ("baseline", "candidate")
#: The case sets of :class:`CaseSetRate`: shared by both versions, added by the new one, retired.
_CaseSetGroup: TypeAlias = Literal["shared", "added", "retired"]


class _Point(TypedDict):
    """The fields of a bound estimate: its side, status, value, interval and reason."""

    side: Side
    status: Status
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    method: str | None
    reason: str | None
    confidence_level: float


class _Rate(_Point):
    """The fields of a bound pass rate (pass^1): the estimate and its counts."""

    n_cases: int
    n_valid_trials: int | None
    n_passed: int | None


def curve_max_k(both: pl.DataFrame, policy: Policy) -> int:
    """The largest k a curve runs to: the most trials of any case on either side, at least the policy's k.

    Parameters
    ----------
    both
        Both sides' records, ``system`` relabelled ``baseline`` / ``candidate``.
    policy
        The registered policy.

    Returns
    -------
    int
        K of the curves k = 1..K.
    """
    if both.height == 0:
        return policy.k
    trials = both.group_by("system", "case_id", "case_version").agg(pl.col("trial").n_unique())
    return max(policy.k, int(trials.get_column("trial").max()))  # type: ignore[arg-type]


def _point(side: Side, e: MetricEstimate) -> _Point:
    """The bound fields of one side's estimate."""
    return {
        "side": side,
        "status": e.status,
        "estimate": e.estimate,
        "ci_low": e.ci_low,
        "ci_high": e.ci_high,
        "method": e.method,
        "reason": e.reason,
        "confidence_level": e.confidence_level,
    }


def _side_rate(side: Side, found: SystemAnalysis) -> _Rate:
    """The pass rate (pass^1) fields of one side's analysis (its case-level interval and counts)."""
    e = found.get("pass_hat_k", 1)
    return {
        **_point(side, e),
        "n_cases": found.n_cases,
        "n_valid_trials": found.n_valid_trials,
        "n_passed": found.n_passed,
    }


def _no_rate(side: Side, n_cases: int, reason: str, policy: Policy) -> _Rate:
    """The pass rate fields of a side without records: ``insufficient_evidence`` with the reason."""
    return {
        "side": side,
        "n_cases": n_cases,
        "n_valid_trials": None,
        "n_passed": None,
        "status": "insufficient_evidence",
        "estimate": None,
        "ci_low": None,
        "ci_high": None,
        "method": None,
        "reason": reason,
        "confidence_level": policy.confidence_level,
    }


def curve_analysis(both: pl.DataFrame, policy: Policy, summary: pl.DataFrame | None = None) -> Analysis | None:
    """The analysis the curves are read from: both sides at k = 1..K (:func:`curve_max_k`), the policy's level, seed.

    Computed once by the gate for :func:`curve_points` and :func:`slice_rates` (a slice of every
    case reads its pass rate from it instead of analysing the same records again).

    Parameters
    ----------
    both
        Both sides' records, ``system`` relabelled ``baseline`` / ``candidate``.
    policy
        The registered policy (confidence level and seed).
    summary
        ``case_summary(both, allow_several_versions=True)`` when the caller has it: with one version
        per case id and side, the analysis is read from it (:func:`~gatestats.estimators.analyze.analyze_summary`,
        the same numbers); otherwise :func:`~gatestats.estimators.analyze` reads ``both`` (and refuses
        the several versions as it always did).

    Returns
    -------
    Analysis or None
        ``None`` without records.
    """
    if both.height == 0:
        return None
    ks = range(1, curve_max_k(both, policy) + 1)
    if summary is not None and one_version_each(summary):
        return analyze_summary(summary, ks=ks, confidence_level=policy.confidence_level, seed=policy.seed)
    return analyze(both, ks=ks, confidence_level=policy.confidence_level, seed=policy.seed)


def one_version_each(summary: pl.DataFrame) -> bool:
    """Whether ``summary`` (a :func:`~gatestats.estimators.case_summary`) has one version per case id and system.

    What ``case_summary(..., allow_several_versions=False)`` requires of the same records (it
    refuses them otherwise): a summary made with ``allow_several_versions=True`` can stand for it
    only then.

    Parameters
    ----------
    summary
        Per-case counts (columns ``system``, ``case_id``).

    Returns
    -------
    bool
        No (system, case_id) on two rows.
    """
    # The two columns' rows as a frame (no lazy query; rows with nulls compare equal, as a struct's do).
    return not pl.DataFrame([summary.get_column("system"), summary.get_column("case_id")]).is_duplicated().any()


def curve_points(both: pl.DataFrame, policy: Policy, analysis: Analysis | None = None) -> tuple[CurvePoint, ...]:
    """pass^k and pass@k of both sides over k = 1..K (see :func:`curve_max_k`).

    Parameters
    ----------
    both
        Both sides' records, ``system`` relabelled ``baseline`` / ``candidate`` (none: no points).
    policy
        The registered policy (confidence level and seed).
    analysis
        :func:`curve_analysis` of ``both`` when the caller has it.

    Returns
    -------
    tuple of CurvePoint
        Sorted by metric, side and k; a k above a case's valid trials is ``insufficient_evidence``
        with its reason.
    """
    result = curve_analysis(both, policy) if analysis is None or both.height == 0 else analysis
    if result is None:
        return ()
    points = [
        CurvePoint(
            **_point(cast(Side, s.system), e),  # both sides' records are relabelled baseline / candidate
            metric=e.metric,
            k=e.k,
            numerator=e.numerator,
            denominator=e.denominator,
            n_cases=e.n_cases,
        )
        for s in result.systems
        for e in s.estimates
    ]
    return tuple(sorted(points, key=lambda p: (p.metric, p.side, p.k)))


def slice_rates(both: pl.DataFrame, policy: Policy, whole: Analysis | None = None) -> tuple[SliceRate, ...]:
    """The pass rate (pass^1) of each side in each slice, with its case-level interval.

    Parameters
    ----------
    both
        Both sides' records, ``system`` relabelled ``baseline`` / ``candidate``.
    policy
        The registered policy (confidence level, seed, severe slices).
    whole
        An analysis of all of ``both`` with k = 1 among its ks (:func:`curve_analysis`): a slice
        of every case reads its rates from it (the same records, level and seed: the same numbers).

    Returns
    -------
    tuple of SliceRate
        Sorted by slice and side; a side without records in a slice is ``insufficient_evidence``
        with the reason (never dropped).
    """
    if both.height == 0:
        return ()
    rows: list[SliceRate] = []
    for name, result in _slice_analyses(both, policy, whole):
        found = {s.system: s for s in result.systems}
        for side in SIDES:
            fields = (
                _side_rate(side, found[side])
                if side in found
                else _no_rate(side, 0, f"the {side} has no record in slice {name!r}", policy)
            )
            rows.append(SliceRate(slice=name, severe=name in policy.severe_slices, **fields))
    return tuple(rows)


def lists_no_slice(records: pl.DataFrame) -> bool:
    """Whether no record of ``records`` lists a slice (each ``slices`` null or empty): a Series count, no query.

    Parameters
    ----------
    records
        Run records with the column ``slices``.

    Returns
    -------
    bool
        ``True`` when every record's ``slices`` is null or an empty list.
    """
    return not (records.get_column("slices").list.len().max() or 0)


def _slice_analyses(both: pl.DataFrame, policy: Policy, whole: Analysis | None) -> list[tuple[str, Analysis]]:
    """Each slice's name (sorted) with the analysis at k = 1 of its cases' records (``whole`` for every case).

    When no record lists a slice, the one slice is :data:`NO_SLICE` and holds every case: ``whole``
    (when given) without reading the records again.
    """
    if whole is not None and lists_no_slice(both):
        return [(NO_SLICE, whole)]
    unsliced = pl.col("slices").list.len().fill_null(0) == 0
    listed = pl.when(unsliced).then(pl.lit([NO_SLICE], dtype=pl.List(pl.String))).otherwise(pl.col("slices"))
    per_case = both.select("case_id", listed.alias("slices")).explode("slices").unique()
    n_all = per_case.get_column("case_id").n_unique()
    # what analyze reads: the copy of a slice's records holds no other column
    read = both.select(c for c in ANALYSIS_COLUMNS if c in both.columns)
    out: list[tuple[str, Analysis]] = []
    for name in sorted(per_case.get_column("slices").unique().to_list()):
        cases = per_case.filter(pl.col("slices") == name).get_column("case_id").unique()
        if whole is not None and cases.len() == n_all:
            result = whole  # every case: the records analysed are all of both
        else:
            frame = read.filter(pl.col("case_id").is_in(cases.implode()))
            result = analyze(frame, ks=[1], confidence_level=policy.confidence_level, seed=policy.seed)
        out.append((name, result))
    return out


def _keys(both: pl.DataFrame, side: str) -> dict[str, str | None]:
    """case_id → case_version of one side's records (a case with several versions: its smallest)."""
    rows = (
        both.filter(pl.col("system") == side).select("case_id", "case_version").unique().sort("case_id", "case_version")
    )
    out: dict[str, str | None] = {}
    for cid, version in rows.iter_rows():
        out.setdefault(str(cid), None if version is None else str(version))
    return out


def _group_rate(both: pl.DataFrame, group: _CaseSetGroup, side: Side, cases: list[str], policy: Policy) -> CaseSetRate:
    """``side``'s pass rate (pass^1) over ``cases``, with its case-level interval."""
    frame = both.filter((pl.col("system") == side) & pl.col("case_id").is_in(cases))
    if frame.height == 0:
        missing = _no_rate(side, len(cases), f"the {side} has no record of the {group} cases", policy)
        return CaseSetRate(cases=group, **missing)
    (found,) = analyze(frame, ks=[1], confidence_level=policy.confidence_level, seed=policy.seed).systems
    return CaseSetRate(cases=group, **_side_rate(side, found))


def case_set_summary(
    both: pl.DataFrame, baseline_version: str | None, candidate_version: str | None, policy: Policy
) -> CaseSets | None:
    """The overlap of two case-set versions: shared cases compared, the new set's cases, the retired ones.

    Parameters
    ----------
    both
        Both sides' records, ``system`` relabelled ``baseline`` / ``candidate``.
    baseline_version, candidate_version
        Each side's case-set version (the run set's manifest, else its records' ``task_set_version``).
    policy
        The registered policy (confidence level and seed).

    Returns
    -------
    CaseSets or None
        ``None`` unless both versions are known and differ. A case is shared when both sides ran it
        at the same case version; the same id at two versions is ``changed`` (compared by neither).
    """
    if baseline_version is None or candidate_version is None or baseline_version == candidate_version:
        return None
    base, cand = _keys(both, "baseline"), _keys(both, "candidate")
    common = base.keys() & cand.keys()
    shared = sorted(c for c in common if base[c] == cand[c])
    changed = tuple(sorted(c for c in common if base[c] != cand[c]))
    added = tuple(sorted(cand.keys() - base.keys()))
    retired = tuple(sorted(base.keys() - cand.keys()))
    rates: list[CaseSetRate] = []
    if shared:
        rates += [_group_rate(both, "shared", side, shared, policy) for side in SIDES]
    if added:
        rates.append(_group_rate(both, "added", "candidate", list(added), policy))
    if retired:
        rates.append(_group_rate(both, "retired", "baseline", list(retired), policy))
    return CaseSets(
        baseline_version=baseline_version,
        candidate_version=candidate_version,
        n_shared=len(shared),
        changed=changed,
        added=added,
        retired=retired,
        rates=tuple(rates),
    )


def failure_class_counts(
    candidate: pl.DataFrame, policy: Policy, *, system: str | None = None
) -> tuple[FailureClassCount, ...]:
    """The candidate's failed cases counted by failure class, each case once, with Wilson intervals.

    Counted as :func:`gatestats.golden.trends.failure_class_trends` counts the final attempts: a case
    whose final trial ``failed`` or was ``resource_killed`` is one failed case, under its records'
    ``failure_class`` (``(unclassified)`` when none); the share is of the failed cases. Cases are
    named ``case_id@case_version``, as the flips are.

    Parameters
    ----------
    candidate
        The candidate's records (with ``system``: records of both sides, the candidate's read).
    policy
        The registered policy (confidence level).
    system
        The candidate's label in the column ``system`` of ``candidate`` (``None``: every record is the candidate's).

    Returns
    -------
    tuple of FailureClassCount
        Most frequent class first; empty when no case failed (no share of 0 is invented).
    """
    if system is not None and "failure_class" not in candidate.columns:  # refused below, as on the side's own records
        candidate, system = candidate.filter(pl.col("system") == system), None
    if candidate.height == 0:
        return ()
    # the columns read here: final_attempts' join would otherwise copy every column of the records
    read = (*TRIAL_KEY, "attempt", "outcome", "failure_class")
    # the failed cases in one query: their first failure class (as failure_class_trends reads it) and version
    mine = candidate.lazy() if system is None else candidate.lazy().filter(pl.col("system") == system)
    failed = final_attempts(mine.select(c for c in read if c in candidate.columns)).filter(
        pl.col("outcome").is_in(FAILING_OUTCOMES)
    )
    by_class = collect_small(
        failed.group_by("case_id").agg(
            pl.col("failure_class").drop_nulls().first(), pl.col("case_version").drop_nulls().min()
        ),
        candidate.height,
    )
    rows = failed_case_rows(by_class, confidence_level=policy.confidence_level)
    cases: dict[str, list[str]] = {}
    for cid, fc, version in by_class.sort("case_id").select("case_id", "failure_class", "case_version").iter_rows():
        cases.setdefault(str(fc or UNCLASSIFIED), []).append(case_label(cid, version))
    return tuple(
        FailureClassCount(
            failure_class=row.failure_class,
            count=row.count,
            n=row.n,
            share=row.share,
            ci_low=row.low,
            ci_high=row.high,
            confidence_level=policy.confidence_level,
            cases=tuple(cases.get(row.failure_class, ())),
        )
        for row in rows
    )


def flip_counts(
    both: pl.DataFrame, flips: tuple[tuple[str, ...], tuple[str, ...]], summary: pl.DataFrame | None = None
) -> tuple[FlipCount, ...]:
    """Each flipped case's passed and valid trials on both sides, in the order of the flips.

    Counted by :func:`gatestats.estimators.case_summary` (``c`` passed of ``n`` valid trials) on the
    records the gate decided on, so that a report shows the counts behind each flip and reads no
    record file.

    Parameters
    ----------
    both
        Both sides' records, ``system`` relabelled ``baseline`` / ``candidate``.
    flips
        The case labels (``case_id@case_version``) that went pass → fail, and fail → pass.
    summary
        ``case_summary(both, allow_several_versions=True)`` when the caller has it (not reduced again).

    Returns
    -------
    tuple of FlipCount
        One per flipped case (pass → fail first); empty when nothing flipped.
    """
    if not flips[0] and not flips[1]:
        return ()
    summary = case_summary(both, allow_several_versions=True) if summary is None else summary
    label = (
        pl.when(pl.col("case_version").is_null())
        .then(pl.col("case_id"))
        .otherwise(pl.col("case_id") + "@" + pl.col("case_version"))
    )
    # only the flipped cases' counts are read (a label written twice: its last row, as a dict keeps it)
    flipped = pl.Series([*flips[0], *flips[1]], dtype=pl.String).implode()
    query = (
        summary.lazy()
        .select("system", label.alias("case"), "n", "c")
        .filter(pl.col("case").is_in(flipped))
        .unique(subset=["system", "case"], keep="last", maintain_order=True)
    )
    rows = collect_small(query, summary.height)  # one query (it was three eager operations)
    counts: dict[tuple[str, str], tuple[int, int]] = {
        (str(system), str(case)): (int(c), int(n)) for system, case, n, c in rows.iter_rows()
    }
    out = []
    for direction, cases in zip(("pass_to_fail", "fail_to_pass"), flips, strict=True):
        for case in cases:
            base, cand = counts.get(("baseline", case)), counts.get(("candidate", case))
            out.append(
                FlipCount(
                    case=case,
                    direction=direction,  # type: ignore[arg-type]
                    baseline_passed=None if base is None else base[0],
                    baseline_valid=None if base is None else base[1],
                    candidate_passed=None if cand is None else cand[0],
                    candidate_valid=None if cand is None else cand[1],
                )
            )
    return tuple(out)
