"""``evaluate_gate``: a policy registered before execution, two record sets, one verdict.

Order of decision (documented in the README, "Gate"):

1. The registration is checked first; a policy edited or registered after execution is refused
   (:class:`~gatestats.gate.registration.RegistrationError`, no verdict).
2. Blocking on silence (:mod:`gatestats.gate.checks`): any failed precondition makes the verdict
   ``insufficient_evidence`` whatever the rules say (they are still computed and shown).
3. Severe slices are scored on their own: every valid candidate trial of their cases must pass
   (threshold 1.00); one failure is ``fail``. Their cases are left out of every other rule.
4. Rule rows (thresholds, paired tests, the cost limit) get two one-sided p-values
   (:mod:`gatestats.gate.rules`), adjusted by the policy's multiplicity correction within the
   family the policy declares (:mod:`gatestats.gate.families`): the blocking rows, the warn-only
   rows, and no family for a row undecidable before any outcome is seen. A row passes when its
   adjusted ``pvalue_pass`` is at most its alpha, fails when its adjusted ``pvalue_fail`` is, else
   it is inconclusive (``insufficient_evidence``); a row that cannot be resolved or computed is
   ``insufficient_evidence``. ``action = "warn"`` turns a row's fail or inconclusive into ``warn``.
5. Verdict: ``insufficient_evidence`` if a precondition failed; else ``fail`` if a severe slice or
   a blocking row failed; else ``insufficient_evidence`` if a blocking row is inconclusive; else
   ``warn`` if any row warns; else ``pass``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial

import numpy as np
import numpy.typing as npt
import polars as pl

from gatestats import __version__
from gatestats._query import collect_small
from gatestats.errors import GatestatsError
from gatestats.estimators import ANALYSIS_COLUMNS, case_summary
from gatestats.estimators.passk import case_values, per_case_values
from gatestats.gate.bindings import (
    CostSummary,
    CurvePoint,
    FailureClassCount,
    FlipCount,
    JudgeStatus,
    LabelsBinding,
    SequentialBinding,
    SevereFailure,
    SliceRate,
)
from gatestats.gate.bounds import (
    RETRIED,
    End,
    bound_frame,
    bound_words,
    bounded_decided_row,
    bounded_row,
    bounded_severe,
    mark_retried,
    unresolved_counts,
    unresolved_trials,
)
from gatestats.gate.calibrations import JudgeCalibrations
from gatestats.gate.checks import silence_checks
from gatestats.gate.cost_rules import cost_rows
from gatestats.gate.families import decide_families, no_cost_fields, pre_data_removals
from gatestats.gate.graders import GoldenFindings, grader_checks
from gatestats.gate.grouping import apply_grouping, n_units
from gatestats.gate.judge_labels import JudgeLabels, ppi_threshold_evidence
from gatestats.gate.policy import Policy, Rule
from gatestats.gate.recordset import RecordSet
from gatestats.gate.registration import Registration, check_registration
from gatestats.gate.rules import (
    RuleEvidence,
    paired_cases_evidence,
    paired_metric,
    rule_result,
    threshold_evidence,
)
from gatestats.gate.sequential_rules import (
    SequentialStop,
    gate_decided,
    sequential_rows,
    sequential_stop,
    severe_after_stop,
)
from gatestats.gate.sides import BASELINE, CANDIDATE, case_sets, flips, infra_sides, side_provenance
from gatestats.gate.summaries import (
    curve_analysis,
    curve_points,
    failure_class_counts,
    flip_counts,
    lists_no_slice,
    one_version_each,
    slice_rates,
)
from gatestats.gate.verdict import CheckResult, RuleResult, SevereSliceResult, Verdict
from gatestats.judges import JudgePolicy, judge_eligibility
from gatestats.paired import PairedCases, pair_cases
from gatestats.paired.pairing import case_table, pair_table
from gatestats.paired.search import fewest
from gatestats.sequential import SequentialDecision
from gatestats.vocabulary import (
    FAILED,
    INFRA_ERROR,
    PASSED,
    TRIAL_KEY,
    Decision,
    Metric,
    final_attempts,
    is_valid_outcome,
    metric_spec,
)

__all__ = ["BASELINE", "CANDIDATE", "evaluate_gate"]


def _side_frame(rs: RecordSet, label: str) -> pl.DataFrame:
    return rs.records.with_columns(pl.lit(label).alias("system"))


def _both_sides(policy: Policy, baseline: RecordSet, candidate: RecordSet) -> pl.DataFrame:
    """Both sides' records, ``system`` relabelled, ``case_group`` the unit the policy states (gate.grouping).

    Without the line ``checksum`` (verified when the records were read; nothing decides on it, and
    at 64 hex digits a record it was the largest column every filter of the records copied).
    """
    both = pl.concat([_side_frame(baseline, BASELINE), _side_frame(candidate, CANDIDATE)], how="vertical_relaxed")
    both = both.drop("checksum", strict=False)
    return mark_retried(apply_grouping(both, policy.case_grouping), policy.infra_retries)


def _case_slices(records: pl.DataFrame) -> pl.DataFrame:
    """case_id → list of slices (union over the case's records; empty for a case without slices).

    When no record lists a slice (:func:`~gatestats.gate.summaries.lists_no_slice`, the simulations'
    records), every case's list is empty: the same frame without the explode, group and join.
    """
    if lists_no_slice(records):  # one query: the case ids and their empty lists
        empty = pl.lit([], dtype=pl.List(pl.String)).alias("slices")
        return collect_small(records.lazy().select("case_id").unique().with_columns(empty), records.height)
    ids = records.select("case_id").unique()
    found = (
        records.select("case_id", "slices")
        .explode("slices")
        .drop_nulls("slices")
        .group_by("case_id")
        .agg(pl.col("slices").unique().sort())
    )
    return ids.join(found, on="case_id", how="left").with_columns(
        pl.col("slices").fill_null(pl.lit([], dtype=pl.List(pl.String)))
    )


def _severe_cases(slices: pl.DataFrame, severe: tuple[str, ...]) -> set[str]:
    if not severe:
        return set()
    hit = slices.filter(pl.col("slices").list.eval(pl.element().is_in(list(severe))).list.any())
    return set(hit.get_column("case_id").to_list())


def _cases_of(slices: pl.DataFrame, slice_name: str, severe: set[str]) -> set[str]:
    if slice_name == "all":
        return set(slices.get_column("case_id").to_list()) - severe
    hit = slices.filter(pl.col("slices").list.contains(slice_name))
    return set(hit.get_column("case_id").to_list()) - severe


def _judge_outcomes(records: pl.DataFrame, grader: str) -> pl.DataFrame:
    """Replace ``outcome`` by the named judge's verdict (unparseable or absent: infra_error)."""
    verdict = (
        pl.col("graders")
        .fill_null([])
        .list.eval(pl.element().filter(pl.element().struct.field("name") == grader).struct.field("verdict"))
        .list.first()
    )
    return records.with_columns(
        pl.when(verdict.is_in([PASSED, FAILED])).then(verdict).otherwise(pl.lit(INFRA_ERROR)).alias("outcome")
    )


def _severe_result(slice_name: str, both: pl.DataFrame, slices: pl.DataFrame) -> SevereSliceResult:
    cases = set(slices.filter(pl.col("slices").list.contains(slice_name)).get_column("case_id").to_list())
    read = both.select(*TRIAL_KEY, "attempt", "outcome", "bound")  # final_attempts' join copies every column
    final = final_attempts(read.filter(pl.col("case_id").is_in(list(cases)))).collect()
    cand = final.filter((pl.col("system") == CANDIDATE) & is_valid_outcome())
    base = final.filter((pl.col("system") == BASELINE) & is_valid_outcome())
    bad = cand.filter(pl.col("outcome") != PASSED).sort("case_id", "trial")
    failures = tuple(
        SevereFailure(case_id=r["case_id"], trial=r["trial"], outcome=r["outcome"], bound=r["bound"])
        for r in bad.iter_rows(named=True)
    )
    base_failures = base.filter(pl.col("outcome") != PASSED).height if base.height else None
    decision: Decision
    if not cases:
        decision, reason = (
            "insufficient_evidence",
            f"no case carries the severe slice {slice_name!r}: nothing shows it is safe",
        )
    elif cand.height == 0:
        decision, reason = "insufficient_evidence", f"no valid candidate trial in severe slice {slice_name!r}"
    elif failures:
        shown = ", ".join(f"{f.case_id} trial {f.trial} {f.outcome}" for f in failures[:8])
        decision, reason = (
            "fail",
            f"severe slice {slice_name!r}: {len(failures)} of {cand.height} trials did not pass ({shown})",
        )
    else:
        decision, reason = "pass", None
    return SevereSliceResult(
        slice=slice_name,
        n_cases=len(cases),
        n_trials=cand.height,
        n_passed=cand.height - len(failures),
        failures=failures,
        baseline_failures=base_failures,
        decision=decision,
        reason=reason,
    )


def _undefined(rule: Rule, row: str, kind: str, reason: str) -> RuleResult:
    ev = RuleEvidence.insufficient(kind, test="—", threshold=rule.threshold, reason=reason, n_cases=0)  # type: ignore[arg-type]
    return rule_result(rule, row, ev, margin=rule.margin)


def _of_cases(both: pl.DataFrame, cases: set[str]) -> pl.DataFrame:
    """The records of ``cases`` (a subset of ``both``'s cases): ``both`` itself when they are all of them."""
    if len(cases) == both.get_column("case_id").n_unique():  # no filter (a query on every column) for "all"
        return both
    return both.filter(pl.col("case_id").is_in(list(cases)))


#: The record columns a rule row reads: :func:`~gatestats.estimators.case_summary`'s (the threshold,
#: paired and sequential rows count per case from them), the marker of a trial retried after an infra
#: error (:func:`~gatestats.gate.bounds.mark_retried`, read by the bounds) and a judge rule's verdicts.
RULE_COLUMNS: tuple[str, ...] = (*ANALYSIS_COLUMNS, RETRIED, "graders")


class CaseFrames:
    """The records the rule rows read, held once: those columns only, and each slice's cases' records once.

    Every rule row, at each end of the bounds (:mod:`gatestats.gate.bounds`), in the unresolved
    counts and in the search of ``to_decide`` read the records of their slice's cases. Filtered from
    every record column for each (a record-level copy per rule and per end, three ends, plus the
    counts), those copies were the largest rise of the gate's memory after the read. Here the
    records are cut to :data:`RULE_COLUMNS` once, and the records of each set of cases (a slice
    without the severe cases, or with them for a cost row) are filtered once and shared by every
    row, end and count that reads them. Same rows, same order, same values: only the columns no rule
    reads are left out.
    """

    __slots__ = ("_frames", "_pairings", "_summaries", "_whole", "records")

    def __init__(self, both: pl.DataFrame, summary: pl.DataFrame | None = None) -> None:
        #: The records cut to :data:`RULE_COLUMNS` (those ``both`` has).
        self.records = both.select(c for c in RULE_COLUMNS if c in both.columns)
        self._frames: dict[tuple[str, bool], pl.DataFrame] = {}
        self._summaries: dict[tuple[str, bool], pl.DataFrame] = {}
        #: ``case_summary(both, allow_several_versions=True)`` when the caller has it.
        self._whole = summary
        #: Each pairing made (:meth:`pairing`) by its summary's id, metric and k, with that summary (kept alive).
        self._pairings: dict[tuple[int, str, int], tuple[pl.DataFrame, PairedCases | Exception]] = {}

    def of(self, cases: set[str], key: tuple[str, bool]) -> pl.DataFrame:
        """The records of ``cases`` (those of ``key``: a slice's name, severe cases included or not), filtered once."""
        frame = self._frames.get(key)
        if frame is None:
            frame = self._frames[key] = _of_cases(self.records, cases)
        return frame

    def summary(self, cases: set[str], key: tuple[str, bool]) -> pl.DataFrame:
        """``case_summary(self.of(cases, key), allow_several_versions=True)``, computed once per key.

        The records of every case are ``both``'s: their summary is the caller's when it gave one.
        """
        found = self._summaries.get(key)
        if found is None:
            frame = self.of(cases, key)
            if frame is self.records and self._whole is not None:
                found = self._whole
            else:
                found = case_summary(frame, allow_several_versions=True)
            self._summaries[key] = found
        return found

    def pairing(self, summary: pl.DataFrame, metric: Metric, k: int) -> PairedCases:
        """The two sides of ``summary`` paired on its table at ``metric`` and ``k``, once (its error raised again).

        ``pair_table(case_table(summary, metric=metric, k=k), ...)``: the flips and a paired rule at
        the same metric and k on the same summary (a slice of every case) read one pairing.
        """
        key = (id(summary), metric, k)
        held = self._pairings.get(key)
        if held is None:
            try:
                found: PairedCases | Exception = pair_table(
                    case_table(summary, metric=metric, k=k), baseline=BASELINE, candidate=CANDIDATE
                )
            except (GatestatsError, ValueError) as exc:
                found = exc
            held = self._pairings[key] = (summary, found)
        if isinstance(held[1], Exception):
            raise held[1]
        return held[1]

    def held(self) -> dict[tuple[str, bool], pl.DataFrame]:
        """The frames filtered so far, by key (tests: what the rules hold)."""
        return dict(self._frames)


def _rule_frame(rule: Rule, frames: CaseFrames, cases: set[str], end: End) -> pl.DataFrame:
    """The records of ``rule``'s cases (its judge's outcomes for a judge rule), unresolved ones imputed at ``end``."""
    frame = frames.of(cases, (rule.slice, False))
    if rule.grader is not None:
        frame = _judge_outcomes(frame, rule.grader)
    return bound_frame(frame, end, candidate=CANDIDATE)


def _threshold_label(rule: Rule) -> str:
    spec = metric_spec(rule.metric)
    where = "" if rule.slice == "all" else f" [{rule.slice}]"
    return f"{rule.name}: {spec.label(rule.k)}{where} ≥ {rule.threshold:g}"


def _paired_label(rule: Rule) -> str:
    spec = metric_spec(rule.metric)
    where = "" if rule.slice == "all" else f" [{rule.slice}]"
    margin = float(rule.margin or 0.0)
    shown = f"not worse by more than {margin:g}" if margin > 0 else "better"
    return f"{rule.name}: {spec.label(rule.k)}{where} {shown} than baseline"


def _threshold_row(rule: Rule, summary: pl.DataFrame, policy: Policy, labels: JudgeLabels | None) -> RuleResult:
    """The threshold row of ``rule`` from its candidate's per-case counts (``case_summary``)."""
    row = _threshold_label(rule)
    values = per_case_values(summary, k=rule.k, metric=metric_spec(rule.metric).estimand)  # type: ignore[arg-type]
    thin = values.filter(pl.col("value").is_null())
    if values.height == 0 or thin.height:
        ids = ", ".join(thin.get_column("case_id").to_list()[:8])
        return _undefined(rule, row, "threshold", f"cases with fewer than k = {rule.k} valid trials: {ids}")
    groups = values.get_column("case_group")
    g = None if groups.null_count() == groups.len() else groups.fill_null(values["case_id"]).to_numpy()
    labelled = rule.grader is not None and policy.judges[rule.grader].labels is not None
    ev = (
        ppi_threshold_evidence(
            values,
            (labels or {}).get(rule.grader or ""),
            rule=rule,
            grouped=g is not None,
            confidence_level=policy.confidence_level,
            seed=policy.seed,
        )
        if labelled
        else threshold_evidence(
            values.get_column("value").to_numpy().astype(np.float64),
            g,
            rule=rule,
            alpha=rule.alpha,
            confidence_level=policy.confidence_level,
            seed=policy.seed,
        )
    )
    return rule_result(rule, row, ev, margin=None)


def _paired_row(rule: Rule, pairing: Callable[[], PairedCases], policy: Policy) -> RuleResult:
    """The paired row of ``rule`` on its cases as ``pairing`` pairs them (its error: an undefined row)."""
    row = _paired_label(rule)
    try:
        ev = paired_cases_evidence(
            pairing(), rule=rule, alpha=rule.alpha, confidence_level=policy.confidence_level, seed=policy.seed
        )
    except (GatestatsError, ValueError) as exc:
        return _undefined(rule, row, "paired", str(exc))
    return rule_result(rule, row, ev, margin=float(rule.margin or 0.0))


def _paired_cases(rule: Rule, frame: pl.DataFrame) -> PairedCases:
    """The cases of ``frame`` paired as :func:`~gatestats.gate.rules.paired_evidence` pairs them."""
    return pair_cases(frame, baseline=BASELINE, candidate=CANDIDATE, metric=paired_metric(rule), k=rule.k)


def _observed_rows(
    rule: Rule, frames: CaseFrames, cases: set[str], policy: Policy, labels: JudgeLabels | None
) -> list[RuleResult]:
    """The rows of a rule without a judge at the observed end, from its cases' :meth:`CaseFrames.summary`.

    One summary of a slice's records for every rule of the slice (and, for every case, the gate's
    own). The threshold row reads its candidate's rows: the candidate's ``case_summary`` when the
    candidate has one version per case id (else that call is made and refuses them, as it always
    did); the paired row pairs the table laid out from it (:meth:`CaseFrames.pairing`: what
    :func:`~gatestats.paired.pair_cases` does on records of the two sides only, the table laid out
    from their summary, one version per case id and side required, then the two sides paired).
    """
    key = (rule.slice, False)
    rows: list[RuleResult] = []
    if rule.threshold is not None:
        summary = frames.summary(cases, key).filter(pl.col("system") == CANDIDATE)
        if not one_version_each(summary):
            summary = case_summary(frames.of(cases, key).filter(pl.col("system") == CANDIDATE))
        rows.append(_threshold_row(rule, summary, policy, labels))
    if rule.test == "paired":
        pairing = partial(frames.pairing, metric=paired_metric(rule), k=rule.k)
        rows.append(_paired_row(rule, lambda: pairing(frames.summary(cases, key)), policy))
    return rows


def _per_case(place: dict[object, int], cases: Sequence[object], size: int) -> npt.NDArray[np.int64]:
    """How many of ``cases`` (one per unresolved attempt) fall on each of ``size`` cases (``place``: their index)."""
    counts = np.zeros(size, dtype=np.int64)
    np.add.at(counts, np.array([place[case] for case in cases], dtype=np.int64), 1)
    return counts


class _EndCounts:
    """A rule's records reduced to per-case counts once, at the pessimistic end; the optimistic end from them.

    The two ends of :mod:`gatestats.gate.bounds` impute the same attempts (the final attempts
    :func:`~gatestats.gate.bounds.bound_frame` calls unresolved) and differ only in what they count
    them as: at the pessimistic end the candidate's fail and the baseline's pass, at the optimistic
    end the other way round. Every other attempt, every case and every count of trials is the same
    at both ends, so the optimistic end's per-case counts are the pessimistic end's with each
    case's ``c`` raised by its candidate's unresolved attempts (and, in a paired table, the
    baseline's lowered by its own). The rows at each end are then the same public statistics on
    those counts: :func:`_threshold_row` on the candidate's ``case_summary``, :func:`_paired_row`
    on the pairing (its per-case values recomputed by :func:`~gatestats.estimators.passk.case_values`,
    NaN where absent or ``n < k``, as :func:`gatestats.paired.pair_cases` lays them out). The search
    of ``to_decide`` (:class:`_ImputedPasses`) starts from the same pessimistic counts.
    """

    def __init__(self, rule: Rule, frame: pl.DataFrame) -> None:
        #: The rule's records (its judge's outcomes for a judge rule), nothing imputed.
        self.rule, self.frame = rule, frame
        #: The candidate's unresolved attempts (:func:`~gatestats.gate.bounds.unresolved_trials`).
        self.trials = unresolved_trials(frame, candidate=CANDIDATE)
        cases: list[tuple[object, ...]] = list(self.trials.select("case_id", "case_version").iter_rows())
        pessimistic = bound_frame(frame, "pessimistic", candidate=CANDIDATE)
        self.summary: pl.DataFrame | None = None
        self.summary_place: dict[object, int] = {}
        if rule.threshold is not None:
            self.summary = case_summary(pessimistic.filter(pl.col("system") == CANDIDATE))
            rows = self.summary.select("case_id", "case_version").iter_rows()
            self.summary_place = {key: i for i, key in enumerate(rows)}
            raised = _per_case(self.summary_place, cases, len(self.summary_place))
            self._raised = self.summary.get_column("c").to_numpy() + raised
        self.paired: PairedCases | Exception | None = None
        self.table_place: dict[object, int] = {}
        if rule.test == "paired":
            try:
                self.paired = _paired_cases(rule, pessimistic)
            except (GatestatsError, ValueError) as exc:
                self.paired = exc
            else:
                self._moved = self._optimistic_c(self.paired, cases)

    def _optimistic_c(self, paired: PairedCases, cases: list[tuple[object, ...]]) -> npt.NDArray[np.int64]:
        """The paired table's ``c`` at the optimistic end: the candidate's unresolved passed, the baseline's failed."""
        table = paired.table
        # each column's (case_id, case_version): unique where labels need not be (case "a@v" and "a" at version "v")
        self.table_place = {key: i for i, key in enumerate(table.case_keys)}
        base: list[tuple[object, ...]] = list(
            unresolved_trials(self.frame, candidate=BASELINE).select("case_id", "case_version").iter_rows()
        )  # the same filter as the candidate's, on the baseline's side
        c = table.c.copy()
        for side, keys, sign in ((CANDIDATE, cases, 1), (BASELINE, base, -1)):
            c[table.systems.index(side)] += sign * _per_case(self.table_place, keys, c.shape[1])
        return c

    def rows(self, end: End, policy: Policy, labels: JudgeLabels | None) -> list[RuleResult]:
        """The rule's rows at ``end`` (``pessimistic`` or ``optimistic``), as :func:`_rule_rows` computes them."""
        rows: list[RuleResult] = []
        if self.summary is not None:
            summary = self.summary
            if end == "optimistic":
                summary = summary.with_columns(pl.Series("c", self._raised, dtype=pl.Int64))
            rows.append(_threshold_row(self.rule, summary, policy, labels))
        if self.rule.test == "paired":
            rows.append(_paired_row(self.rule, lambda: self.pairing(end), policy))
        return rows

    def pairing(self, end: End) -> PairedCases:
        """The rule's cases paired at ``end`` (its pairing error raised again)."""
        if isinstance(self.paired, Exception):
            raise self.paired
        assert self.paired is not None  # a paired rule
        if end != "optimistic":
            return self.paired
        return _with_c(self.paired, self._moved)


def _with_c(paired: PairedCases, c: npt.NDArray[np.int64]) -> PairedCases:
    """``paired`` with the table's passes ``c``, each system's per-case values recomputed from them."""
    table = paired.table
    value = table.value.copy()
    for row in range(len(table.systems)):
        if np.array_equal(c[row], table.c[row]):
            continue
        found = case_values(table.n[row], c[row], k=table.k, metric=table.metric)
        value[row] = np.where(found.defined & table.present[row], found.values, np.nan)
    return replace(paired, table=replace(table, c=c, value=value))


def _rule_rows(
    rule: Rule,
    frames: CaseFrames,
    cases: set[str],
    policy: Policy,
    end: End,
    labels: JudgeLabels | None = None,
    counted: dict[int, _EndCounts] | None = None,
) -> list[RuleResult]:
    """The rows of ``rule`` at ``end`` (at a bound's end from its :class:`_EndCounts`, kept in ``counted``)."""
    rows: list[RuleResult] = []
    if not cases:
        why = f"no case in slice {rule.slice!r} (outside the severe slices)"
        if rule.threshold is not None:
            rows.append(_undefined(rule, _threshold_label(rule), "threshold", why))
        if rule.test == "paired":
            rows.append(_undefined(rule, _paired_label(rule), "paired", why))
        return rows
    if counted is not None and end != "observed":
        key = policy.rules.index(rule)
        if key not in counted:
            unimputed = frames.of(cases, (rule.slice, False))
            judged = _judge_outcomes(unimputed, rule.grader) if rule.grader is not None else unimputed
            counted[key] = _EndCounts(rule, judged)
        return counted[key].rows(end, policy, labels)
    if end == "observed" and rule.grader is None:
        return _observed_rows(rule, frames, cases, policy, labels)
    frame = _rule_frame(rule, frames, cases, end)
    if rule.threshold is not None:
        rows.append(_threshold_row(rule, case_summary(frame.filter(pl.col("system") == CANDIDATE)), policy, labels))
    if rule.test == "paired":
        rows.append(_paired_row(rule, lambda: _paired_cases(rule, frame), policy))
    return rows


def _pre_data(policy: Policy, both: pl.DataFrame, slices: pl.DataFrame | None) -> dict[tuple[str, str], str]:
    """The rows undecidable before any outcome is seen (:func:`~gatestats.gate.families.pre_data_removals`).

    Read from the design only: the cases of each rule's slice outside the severe slices, and whether
    the records carry cost fields. ``slices``: :func:`_case_slices` of ``both`` when the caller has it.
    """
    if both.height == 0:
        return {}
    slices = _case_slices(both) if slices is None else slices
    severe = _severe_cases(slices, policy.severe_slices)
    cases = {r.slice: _cases_of(slices, r.slice, severe) for r in policy.rules}
    units = {name: n_units(both, c) for name, c in cases.items()}
    no_cost = no_cost_fields(policy, both, (BASELINE, CANDIDATE))
    return pre_data_removals(policy, {name: len(c) for name, c in cases.items()}, no_cost, units)


def _judge_checks(
    policy: Policy, candidate: pl.DataFrame, given: JudgeCalibrations
) -> tuple[list[CheckResult], dict[str, JudgeStatus] | None]:
    graders = sorted({r.grader for r in policy.rules if r.grader is not None})
    if not graders:
        return [], None
    checks: list[CheckResult] = []
    status: dict[str, JudgeStatus] = {}
    for name in graders:
        req = policy.judges[name]
        try:
            calibrations = given.get(name)
            if calibrations is None:
                msg = f"no calibration of judge {name!r} was given to the gate (see load_judge_calibrations)"
                raise GatestatsError(msg)
            if isinstance(calibrations, str):
                raise GatestatsError(calibrations)
            jp = JudgePolicy(  # the policy's limits
                judge_model=req.judge_model,
                rubric_digest=req.rubric_digest,
                max_false_pass_rate=req.max_false_pass_rate,
                max_false_fail_rate=req.max_false_fail_rate,
                max_flip_rate=req.max_flip_rate,
                criterion=req.criterion,
            )
            eligibility = judge_eligibility(candidate, calibrations=calibrations, policies={name: jp})
        except (GatestatsError, ValueError, OSError) as exc:
            checks.append(
                CheckResult(name=f"judge:{name}", side="candidate", status="insufficient_evidence", detail=str(exc))
            )
            status[name] = JudgeStatus(can_vote=False, reasons=(str(exc),))
            continue
        votes = [v for v in eligibility.votes if v.grader == name]
        reasons = [reason for v in votes for reason in v.reasons]
        if not votes:
            reasons = [f"no record carries a verdict of judge grader {name!r}"]
        ok = bool(votes) and all(v.can_vote for v in votes)
        status[name] = JudgeStatus(
            can_vote=ok,
            reasons=tuple(reasons),
            calibration_versions=tuple(sorted({str(v.calibration_version) for v in votes})),
        )
        detail = "calibrated, current and within limits" if ok else "; ".join(reasons)
        checks.append(
            CheckResult(
                name=f"judge:{name}", side="candidate", status="ok" if ok else "insufficient_evidence", detail=detail
            )
        )
    return checks, status


def _overall(
    checks: list[CheckResult], rows: list[RuleResult], severe: list[SevereSliceResult]
) -> tuple[Decision, list[str]]:
    silent = [c for c in checks if c.status != "ok"]
    failing = [s.slice for s in severe if s.decision == "fail"] + [r.row for r in rows if r.decision == "fail"]
    unknown = [s.slice for s in severe if s.decision == "insufficient_evidence"] + [
        r.row for r in rows if r.decision == "insufficient_evidence"
    ]
    warns = [r for r in rows if r.decision == "warn"]
    reasons = [f"{c.name} ({c.side}): {c.detail}" for c in silent]
    reasons += [s.reason or f"severe slice {s.slice!r}: {s.decision}" for s in severe if s.decision != "pass"]
    reasons += [f"{r.row}: {r.decision}: {r.reason}" for r in rows if r.decision != "pass"]
    verdict: Decision
    if silent:
        verdict = "insufficient_evidence"
    elif failing:
        verdict = "fail"
    elif unknown:
        verdict = "insufficient_evidence"
    elif warns:
        verdict = "warn"
    else:
        verdict = "pass"
    return verdict, reasons


def _decided_on(
    policy: Policy, baseline: RecordSet, candidate: RecordSet
) -> tuple[SequentialStop | None, RecordSet, RecordSet]:
    """The record sets the gate decides on: for a sequential policy, its batches complete on both sides."""
    if policy.sequential is None:
        return None, baseline, candidate
    stop = sequential_stop(policy, baseline, candidate)
    return stop, stop.baseline, stop.candidate


def _silence_checks(
    policy: Policy,
    baseline: RecordSet,
    candidate: RecordSet,
    both: pl.DataFrame,
    stop: SequentialStop | None = None,
    summary: pl.DataFrame | None = None,
) -> list[CheckResult]:
    """The preconditions (:func:`~gatestats.gate.checks.silence_checks`) on the per-case summary of both sides.

    A sequential run's ``run_complete`` and ``cases_present`` are replaced by its ``sequential_order`` check.
    ``summary``: ``case_summary(both, allow_several_versions=True)`` when the caller has it.
    """
    needed = max([policy.min_trials, policy.k, *(r.k for r in policy.rules)])
    if summary is None and both.height:
        summary = case_summary(both, allow_several_versions=True)
    checks = silence_checks(
        policy,
        baseline,
        candidate,
        summary.rename({"system": "side"})
        if summary is not None
        else pl.DataFrame(schema={"side": pl.String, "n": pl.Int64}),
        needed,
    )
    return checks if stop is None else stop.checks(checks)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Evidence:
    """What the rules found (empty when a side has no records)."""

    severe: tuple[SevereSliceResult, ...] = ()
    rows: tuple[RuleResult, ...] = ()
    flips: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    cost: CostSummary | None = None
    curves: tuple[CurvePoint, ...] = ()
    rates: tuple[SliceRate, ...] = ()
    failure_classes: tuple[FailureClassCount, ...] = ()
    #: A sequential gate's rows (already decided), each with its label and its sequence's decision.
    sequential: tuple[tuple[str, SequentialDecision], ...] = ()
    flip_counts: tuple[FlipCount, ...] = ()
    #: :func:`_case_slices` of the records the evidence was computed on (None: not computed).
    slices: pl.DataFrame | None = None
    #: The records the rule rows read (None: not computed).
    frames: CaseFrames | None = None
    #: The bounded rules' per-case counts at the pessimistic end, by their place in the policy (:class:`_EndCounts`).
    counted: dict[int, _EndCounts] | None = None


def _evidence(
    policy: Policy,
    both: pl.DataFrame,
    stop: SequentialStop | None = None,
    end: End = "observed",
    labels: JudgeLabels | None = None,
    slices: pl.DataFrame | None = None,
    frames: CaseFrames | None = None,
    counted: dict[int, _EndCounts] | None = None,
    summary: pl.DataFrame | None = None,
) -> _Evidence:
    """Severe slices, rule rows (before multiplicity), flips, cost, curves and slice rates of both sides.

    ``end``: the imputation of the unresolved attempts the severe slices, rules and cost are computed
    at (:mod:`gatestats.gate.bounds`); flips, curves and rates always show the observed records, so
    they are computed at the ``observed`` end only (at the other ends they are left empty).
    ``slices``: :func:`_case_slices` of ``both`` when the caller has it; ``frames``: the rules' records
    (a :class:`CaseFrames` of ``both``) when it has them; ``counted``: the rules' :class:`_EndCounts`
    (filled on first use), from which the rule rows at either end of the bounds are computed;
    ``summary``: ``case_summary(both, allow_several_versions=True)`` when the caller has it (the flips,
    their counts, the curves and the observed rows of a slice of every case read it).
    """
    slices = _case_slices(both) if slices is None else slices
    frames = CaseFrames(both, summary) if frames is None else frames
    severe_cases = _severe_cases(slices, policy.severe_slices)
    framed = bound_frame(both, end, candidate=CANDIDATE)
    severe = tuple(_severe_result(s, framed, slices) for s in policy.severe_slices)
    if stop is not None:
        severe = severe_after_stop(severe, stop)
    observed = end == "observed"  # the summary shows the observed records (the other ends' were dropped)
    # before the rule rows: the cost summary's prepared frame (the largest the gate makes) is not
    # held beside the rules' frames (CaseFrames filters a slice's records on the first rule reading them)
    cost_results, cost = cost_rows(policy, framed, slices, severe_cases, BASELINE, CANDIDATE, summary=observed)
    rows: list[RuleResult] = []
    decisions: list[tuple[str, SequentialDecision]] = []
    sequential: list[tuple[Rule, pl.DataFrame, list[str]]] = []
    for rule in policy.rules:
        if rule.metric == "cost_per_accepted":
            continue
        cases = _cases_of(slices, rule.slice, severe_cases)
        if stop is not None:  # decided by its sequence (gate/sequential_rules.py), never by a fixed-size test
            sequential.append((rule, _rule_frame(rule, frames, cases, end), sorted(cases)))
            continue
        rows += _rule_rows(rule, frames, cases, policy, end, labels, counted)
    if stop is not None:
        rows, decisions = sequential_rows(policy, stop, sequential)
    if not observed:
        return _Evidence(severe=severe, rows=(*rows, *cost_results), cost=cost, sequential=tuple(decisions))
    flipped = flips(both, summary, None if summary is None else partial(frames.pairing, summary, "pass_hat_k", 1))
    analysis = curve_analysis(both, policy, summary)  # the curves' and the slice of every case's rates
    return _Evidence(
        severe=severe,
        rows=(*rows, *cost_results),
        flips=flipped,
        cost=cost,
        curves=curve_points(both, policy, analysis),
        rates=slice_rates(both, policy, analysis),
        failure_classes=failure_class_counts(both, policy, system=CANDIDATE),
        sequential=tuple(decisions),
        flip_counts=flip_counts(both, flipped, summary),
    )


def _row_counts(
    policy: Policy, frames: CaseFrames, rows: tuple[RuleResult, ...], slices: pl.DataFrame
) -> list[tuple[int, int]]:
    """Each row's unresolved attempts (the candidate's, the baseline's) among the records it is computed on."""
    severe_cases = _severe_cases(slices, policy.severe_slices)
    out = []
    for row in rows:
        # as gate/cost_rules.py: a cost row over "all" counts the severe cases too (their spend is real spend)
        everything = row.kind.startswith("cost") and row.slice == "all"
        cases = _cases_of(slices, row.slice, set() if everything else severe_cases)
        frame = frames.of(cases, (row.slice, everything))
        frame = _judge_outcomes(frame, row.grader) if row.grader is not None else frame
        n_cand, n_base = unresolved_counts(frame, candidate=CANDIDATE)
        out.append((n_cand, n_base if row.kind in {"paired", "cost_increase"} else 0))  # thresholds: no baseline
    return out


def _bounded_evidence(
    policy: Policy,
    both: pl.DataFrame,
    stop: SequentialStop | None,
    labels: JudgeLabels | None = None,
    summary: pl.DataFrame | None = None,
) -> _Evidence:
    """The evidence with unresolved attempts as bounds: each row and severe slice decided on both ends.

    With no unresolved attempt (and no judge rule, whose missing verdicts are unresolved too) this
    is :func:`_evidence` on the observed records, unchanged. ``summary``: as :func:`_evidence`'s.
    """
    slices = _case_slices(both)
    frames = CaseFrames(both, summary)  # every end, count and search below reads the rules' records from it
    found = _evidence(policy, both, stop, labels=labels, slices=slices, frames=frames, summary=summary)
    if unresolved_counts(frames.records, candidate=CANDIDATE) == (0, 0) and all(r.grader is None for r in policy.rules):
        return replace(found, slices=slices, frames=frames)
    counted: dict[int, _EndCounts] = {}  # each rule's counts, reduced once at the pessimistic end for both ends
    pess = _evidence(policy, both, stop, "pessimistic", labels, slices, frames, counted)
    opt = _evidence(policy, both, stop, "optimistic", labels, slices, frames, counted)
    combine = bounded_row if stop is None else bounded_decided_row
    counts = _row_counts(policy, frames, found.rows, slices)
    rows = tuple(combine(o, p, q, n) for o, p, q, n in zip(found.rows, pess.rows, opt.rows, counts, strict=True))
    severe = tuple(
        bounded_severe(o, p, q, _severe_unresolved(frames.records, slices, o.slice), policy.infra_retries)
        for o, p, q in zip(found.severe, pess.severe, opt.severe, strict=True)
    )
    return replace(found, rows=rows, severe=severe, slices=slices, frames=frames, counted=counted)


class _ImputedPasses:
    """A threshold or paired row with the first ``j`` of the candidate's unresolved attempts counted as passes.

    The row ``_to_decide`` searches over: the pessimistic end of the rule's records
    (:func:`~gatestats.gate.bounds.bound_frame`) but for the first ``j`` unresolved (case_id,
    trial)s of :func:`~gatestats.gate.bounds.unresolved_keys`, counted as passes
    (:func:`~gatestats.gate.bounds.imputed_passes`). The records are reduced to per-case counts
    once, at the pessimistic end; a pass counted there is one more success ``c`` of its case (the
    trial was a valid failure at that end), so the row at ``j`` is the same statistics on the same
    counts but for those cases' ``c``: :func:`~gatestats.gate.rules.threshold_evidence` on the
    candidate's per-case values, or :func:`~gatestats.gate.rules.paired_cases_evidence` on the
    pairing with the candidate's counts and values of those cases changed. No frame is rebuilt.

    As the search always did (imputing the passes, then the pessimistic end), a trial
    :func:`~gatestats.gate.bounds.mark_retried` marked is imputed again at that end (a failure):
    counting it as a pass changes nothing.
    """

    def __init__(self, counts: _EndCounts, kind: str, policy: Policy) -> None:
        self.rule, self.kind, self.policy = counts.rule, kind, policy
        trials = counts.trials
        #: The candidate's unresolved (case_id, trial)s, in :func:`unresolved_keys`' order.
        self.keys = [(str(c), int(t)) for c, t in trials.select("case_id", "trial").iter_rows()]
        first: dict[tuple[str, int], int] = {}
        # a key counts every unresolved attempt of its (case_id, trial) as a pass: from its first place on
        self._from = np.array([first.setdefault(key, i) for i, key in enumerate(self.keys)], dtype=np.int64)
        self._counted = ~trials.get_column("retried").to_numpy().astype(np.bool_)
        cases: list[tuple[object, ...]] = list(trials.select("case_id", "case_version").iter_rows())
        place: dict[object, int] = {}
        if kind == "threshold":
            assert counts.summary is not None  # a threshold rule
            self._summary, place = counts.summary, counts.summary_place
            self._c = self._summary.get_column("c").to_numpy()
        else:
            self._paired: PairedCases | Exception | None = counts.paired
            if isinstance(self._paired, PairedCases):
                self._row = self._paired.table.systems.index(CANDIDATE)
                place = counts.table_place
        #: The place of each key's case among the counts (every key's case has counts at the pessimistic end).
        self._column = np.array([place[key] for key in cases] if place else [], dtype=np.int64)

    def row(self, j: int) -> RuleResult:
        """The row with the first ``j`` keys' unresolved attempts counted as passes."""
        chosen = (self._from < j) & self._counted
        if self.kind == "threshold":
            c = self._c.copy()
            np.add.at(c, self._column[chosen], 1)
            summary = self._summary.with_columns(pl.Series("c", c, dtype=pl.Int64))
            return _threshold_row(self.rule, summary, self.policy, None)
        return _paired_row(self.rule, lambda: self._pairing(chosen), self.policy)

    def _pairing(self, chosen: npt.NDArray[np.bool_]) -> PairedCases:
        if isinstance(self._paired, Exception):
            raise self._paired
        assert self._paired is not None  # a paired rule
        c = self._paired.table.c.copy()
        np.add.at(c[self._row], self._column[chosen], 1)
        return _with_c(self._paired, c)


def _to_decide(
    policy: Policy,
    both: pl.DataFrame,
    row: RuleResult,
    slices: pl.DataFrame | None,
    frames: CaseFrames | None = None,
    counted: dict[int, _EndCounts] | None = None,
) -> RuleResult:
    """``row`` with ``unresolved.to_decide``: the most of its candidate's unresolved attempts that may fail for a pass.

    Searched over the number counted as passes (the first ones in case-id and trial order; the rest
    fail, the baseline's pass), for a threshold or paired row between the bounds without a judge;
    the row passes there when its raw ``pvalue_pass`` times the row's present multiplicity factor
    is at most its alpha. Left ``None`` when no number does, or for other rows. ``frames``: the
    rules' records (a :class:`CaseFrames` of ``both``) when the caller has them. Each step of the
    search is computed from the rule's per-case counts (:class:`_ImputedPasses`); ``counted``: those the ends
    of the bounds were computed from (:class:`_EndCounts`), when the caller has them.
    """
    rule = next((r for r in policy.rules if r.name == row.rule), None)
    bound = row.unresolved
    if (
        rule is None
        or rule.grader is not None
        or bound is None
        or bound.candidate == 0
        or row.kind not in {"threshold", "paired"}
        or row.decision != "insufficient_evidence"
        or row.pvalue_pass is None
        or row.pvalue_pass_adjusted is None
    ):
        return row
    factor = max(1.0, row.pvalue_pass_adjusted / row.pvalue_pass) if row.pvalue_pass > 0 else 1.0
    slices = _case_slices(both) if slices is None else slices
    cases = _cases_of(slices, rule.slice, _severe_cases(slices, policy.severe_slices))
    counts = (counted or {}).get(policy.rules.index(rule))
    if counts is None:
        counts = _EndCounts(rule, (CaseFrames(both) if frames is None else frames).of(cases, (rule.slice, False)))
    imputed = _ImputedPasses(counts, row.kind, policy)
    keys = imputed.keys

    seen: dict[int, bool] = {}  # each number's answer, once: the search asks again for some (and past the end)

    def passes(j: int) -> bool:
        at = min(j, len(keys))
        if at not in seen:
            found = imputed.row(at)
            p = found.pvalue_pass if found.decision != "insufficient_evidence" else None
            seen[at] = p is not None and p * factor <= row.alpha
        return seen[at]

    if not passes(len(keys)):  # not even with every one passed (the optimistic end)
        return row
    fewest_passes = min(fewest(passes, 0, limit=2 * len(keys)) or len(keys), len(keys))
    return replace(row, unresolved=replace(bound, to_decide=len(keys) - fewest_passes))


def _decided_rows(
    policy: Policy, both: pl.DataFrame, found: _Evidence, stop: SequentialStop | None
) -> list[RuleResult]:
    """The rows decided (multiplicity for a fixed-size gate), each bounded row with its ends in words."""
    if stop is not None:  # decided by their sequences
        return bound_words(list(found.rows), policy.infra_retries)
    rows = decide_families(list(found.rows), policy.multiplicity, _pre_data(policy, both, found.slices))
    searched = [_to_decide(policy, both, r, found.slices, found.frames, found.counted) for r in rows]
    return bound_words(searched, policy.infra_retries)


def _severe_unresolved(records: pl.DataFrame, slices: pl.DataFrame, slice_name: str) -> int:
    """The candidate's unresolved attempts in the cases of a severe slice (``records``: :attr:`CaseFrames.records`)."""
    cases = slices.filter(pl.col("slices").list.contains(slice_name)).get_column("case_id").to_list()
    return unresolved_counts(records.filter(pl.col("case_id").is_in(cases)), candidate=CANDIDATE)[0]


def evaluate_gate(
    policy: Policy,
    baseline: RecordSet,
    candidate: RecordSet,
    *,
    registration: Registration | None = None,
    calibrations: JudgeCalibrations | None = None,
    golden: GoldenFindings | None = None,
    now: str | None = None,
    labels: JudgeLabels | None = None,
    label_files: tuple[LabelsBinding, ...] = (),
) -> Verdict:
    """Decide whether ``candidate`` may ship against ``baseline`` under ``policy``, from data (reading no file).

    Parameters
    ----------
    policy
        The checked gate policy.
    baseline, candidate
        The record sets of both sides (the candidate's run set holds the policy's registration).
    registration
        The checked registration (``None``: checked here from the candidate's manifest, see
        :func:`~gatestats.gate.registration.check_registration`).
    calibrations, labels, label_files
        Per judge grader: its calibrations or why not; its human labels by case when its policy names
        ``labels``, and those files as read, whose digests the verdict binds (``load_judge_calibrations``,
        :func:`~gatestats.gate.judge_labels.load_bound_judge_labels`). A judge without an entry cannot vote.
    golden
        For a policy's ``golden_set``: :func:`gatestats.golden.check_graders`'s findings on the
        candidate's run set, or why none could be had (:func:`~gatestats.gate.graders.grader_checks`).
    now
        The verdict's ``created_at`` (tests; ``None``: the current UTC time).

    Returns
    -------
    Verdict
        The verdict: every check, rule row and severe slice, the reasons and the exit code.

    Raises
    ------
    RegistrationError
        The policy was not registered in the candidate's run set before execution, or was edited.
    """
    reg = registration if registration is not None else check_registration(policy, candidate)
    stop, base_used, cand_used = _decided_on(policy, baseline, candidate)
    both = _both_sides(policy, base_used, cand_used)
    summary = case_summary(both, allow_several_versions=True) if both.height else None  # checks, flips read it
    checks = _silence_checks(policy, base_used, cand_used, both, stop, summary)
    judge_checks, judges = _judge_checks(policy, cand_used.records, calibrations or {})
    checks += judge_checks + grader_checks(policy, golden)
    both_ran = base_used.records.height > 0 and cand_used.records.height > 0
    found = _bounded_evidence(policy, both, stop, labels=labels, summary=summary) if both_ran else _Evidence()
    rows = _decided_rows(policy, both, found, stop)
    verdict, reasons = _overall(checks, rows, list(found.severe))
    provenance = {"baseline": side_provenance(baseline), "candidate": side_provenance(candidate)}
    return Verdict(
        verdict=verdict,
        reasons=tuple(reasons),
        checks=tuple(checks),
        rules=tuple(rows),
        severe_slices=found.severe,
        flips_pass_to_fail=found.flips[0],
        flips_fail_to_pass=found.flips[1],
        cost=found.cost,
        judges=judges,
        policy=policy.binding(),
        registration=reg,
        baseline=provenance["baseline"],
        candidate=provenance["candidate"],
        infra=infra_sides(both) if both.height else {},
        curves=found.curves,
        slice_rates=found.rates,
        case_sets=case_sets(both, provenance, policy) if both_ran else None,
        failure_classes=found.failure_classes,
        sequential=_sequential_binding(policy, stop, found, rows),
        flip_counts=found.flip_counts,
        judge_labels=label_files,
        tool_version=f"gatestats {__version__}",
        created_at=now or datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    )


def _sequential_binding(
    policy: Policy, stop: SequentialStop | None, found: _Evidence, rows: list[RuleResult]
) -> SequentialBinding | None:
    """A sequential gate's run as the verdict binds it (None for a fixed-size gate)."""
    if stop is None:
        return None
    return stop.binding(found.sequential, gate_decided(policy, rows, found.severe, stop.n_cases))
