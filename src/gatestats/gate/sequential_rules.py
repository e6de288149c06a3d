"""The sequential gate: the seeded case order, the batches complete on both sides, and each rule's sequence.

When the registered policy has a ``[sequential]`` table, the gate never applies a fixed-size test
to its rules: the cases were run in batches and the run may have stopped after any of them, so
each rule row is decided by :func:`gatestats.sequential.decide_rule` on the case-level values in
the order the cases were run, which the gate recomputes here from the policy's seed and the run
set's manifest (it never reads the controller's path file). Everything that is not a rule stays the
fixed-size gate's (see docs/sequential.md, "Running and gating").

The order (:func:`case_order`) is the case ids sorted by ``sha256("gatestats-sequential-order/1" NUL
seed NUL case_id)``: a permutation drawn from the seed that needs no random generator (so no
library version can change it) and that orders any subset of the cases as it orders the whole set.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import polars as pl

from gatestats.estimators import case_summary
from gatestats.estimators.passk import per_case_values
from gatestats.gate.bindings import SequencePointBinding, SequentialBinding, SequentialRulePath
from gatestats.gate.policy import Policy, Rule
from gatestats.gate.recordset import RecordSet
from gatestats.gate.rules import rule_row
from gatestats.gate.verdict import CheckResult, RuleResult, SevereSliceResult
from gatestats.paired.noninferiority import evalue_pvalue
from gatestats.sequential import SequentialDecision, SequentialDesign, decide_rule, split_alpha
from gatestats.vocabulary import INFRA_ERROR, Decision, final_attempts, metric_spec

__all__ = [
    "ORDER_FORMAT",
    "SequentialStop",
    "batch_first_side",
    "case_order",
    "gate_decided",
    "sequential_rows",
    "sequential_stop",
    "severe_after_stop",
]

ORDER_FORMAT = "gatestats-sequential-order/1"
#: The checks of a fixed-size gate that a sequential run set does not meet by design (it stops before
#: every case ran): replaced by the ``sequential_order`` check.
_REPLACED_CHECKS = frozenset({"run_complete", "cases_present"})
_SHOWN = 8


def _key(seed: int, case_id: str) -> bytes:
    return hashlib.sha256(f"{ORDER_FORMAT}\0{seed}\0{case_id}".encode()).digest()


def case_order(case_ids: Iterable[str], seed: int) -> tuple[str, ...]:
    """The order a sequential run runs ``case_ids`` in: a permutation drawn from ``seed``.

    Parameters
    ----------
    case_ids
        Distinct case ids (any order: the result does not depend on it).
    seed
        The policy's ``seed``.

    Returns
    -------
    tuple[str, ...]
        The ids sorted by ``sha256("gatestats-sequential-order/1\\0SEED\\0CASE_ID")``.

    Examples
    --------
    >>> order = case_order(["a", "b", "c", "d"], 0)
    >>> sorted(order), case_order(["d", "c", "b", "a"], 0) == order
    (['a', 'b', 'c', 'd'], True)
    >>> [c for c in order if c != "b"] == list(case_order(["a", "c", "d"], 0))
    True
    """
    return tuple(sorted(set(case_ids), key=lambda c: (_key(seed, c), c)))


def batch_first_side(seed: int, batch: int) -> Literal["baseline", "candidate"]:
    """Which system runs first in batch number ``batch`` (0-based): a fair coin drawn from ``seed``.

    Parameters
    ----------
    seed
        The policy's ``seed``.
    batch
        The batch's index.

    Returns
    -------
    str
        ``baseline`` or ``candidate``.
    """
    digest = hashlib.sha256(f"{ORDER_FORMAT}\0{seed}\0batch\0{batch}".encode()).digest()
    return "baseline" if digest[0] % 2 == 0 else "candidate"


def _ids(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def _manifest_ids(rs: RecordSet) -> tuple[str, ...] | None:
    cases = None if rs.manifest is None else rs.manifest.get("cases")
    if not isinstance(cases, list):
        return None
    return tuple(str(c["case_id"]) for c in cases if isinstance(c, dict) and "case_id" in c)


def _complete_cases(rs: RecordSet, trials: int) -> set[str]:
    """Cases of ``rs`` whose trials 0..trials-1 all have a final record (an infra error with retries left is not)."""
    records = rs.records
    if records.height == 0:
        return set()
    retries = rs.manifest.get("infra_retries", 0) if rs.manifest is not None else 0
    final = final_attempts(records.lazy()).collect()
    done = final.filter(
        (pl.col("trial") < trials) & ((pl.col("outcome") != INFRA_ERROR) | (pl.col("attempt") >= retries))
    )
    counts = done.group_by("case_id").agg(pl.col("trial").n_unique().alias("n"))
    return {str(c) for c, n in counts.iter_rows() if n == trials}


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialStop:
    """Where a sequential run stands: the order, the batches complete on both sides, the records they hold.

    ``baseline`` and ``candidate`` are the record sets restricted to the cases of the complete
    batches (the ones the gate decides on); ``problems`` are reasons no batch may be read (the
    ``sequential_order`` check blocks on them).
    """

    design: SequentialDesign
    order: tuple[str, ...]
    checkpoints: tuple[int, ...]
    baseline: RecordSet
    candidate: RecordSet
    problems: tuple[str, ...]
    trials_used: int

    @property
    def n_cases(self) -> int:
        """The cases decided on: the last checkpoint reached (0 when none is)."""
        return self.checkpoints[-1] if self.checkpoints else 0

    def checks(self, checks: Sequence[CheckResult]) -> list[CheckResult]:
        """The fixed-size gate's checks with ``run_complete`` and ``cases_present`` replaced by ``sequential_order``.

        Parameters
        ----------
        checks
            The silence checks computed on the restricted record sets.

        Returns
        -------
        list[CheckResult]
            ``sequential_order`` first, then the other checks in their order.
        """
        if self.problems:
            head = CheckResult(
                name="sequential_order", side="both", status="insufficient_evidence", detail="; ".join(self.problems)
            )
        else:
            n = self.n_cases
            detail = (
                f"{n} of at most {self.design.max_cases} cases, in the order drawn from the policy's seed, "
                f"{len(self.checkpoints)} batch(es) of {self.design.batch_cases} complete on both sides"
            )
            head = CheckResult(name="sequential_order", side="both", status="ok", detail=detail)
        return [head, *(c for c in checks if c.name not in _REPLACED_CHECKS)]

    def binding(self, decisions: Sequence[tuple[str, SequentialDecision]], decided: bool) -> SequentialBinding:
        """The verdict's ``sequential`` part.

        Parameters
        ----------
        decisions
            Each rule row's label and its sequential decision, in row order.
        decided
            Whether the gate's decision is determined at :attr:`n_cases` (:func:`gate_decided`).

        Returns
        -------
        SequentialBinding
            The design, the order, the stop and the path of every rule row.
        """
        design = self.design
        fixed = design.max_cases * design.trials * 2
        return SequentialBinding(
            max_cases=design.max_cases,
            trials=design.trials,
            batch_cases=design.batch_cases,
            method=design.method,
            alpha_pass_share=design.alpha_pass_share,
            order=self.order,
            checkpoints=self.checkpoints,
            stopped_at=self.n_cases,
            decided=decided,
            trials_used=self.trials_used,
            trials_fixed=fixed,
            trials_saved=max(fixed - self.trials_used, 0),
            rules=tuple(_rule_path(row, d) for row, d in decisions),
        )


def _rule_path(row: str, d: SequentialDecision) -> SequentialRulePath:
    """The verdict's path of one rule row: its label and the decision's fields of the same names."""
    return SequentialRulePath(
        row=row,
        status=d.status,
        decided_at=d.decided_at,
        boundary=d.boundary,
        alpha_pass=d.alpha_pass,
        alpha_fail=d.alpha_fail,
        cases_needed=d.cases_needed,
        path=tuple(SequencePointBinding.of(p) for p in d.path),
    )


def _restricted(rs: RecordSet, cases: set[str]) -> RecordSet:
    return replace(rs, records=rs.records.filter(pl.col("case_id").is_in(sorted(cases))))


def _clustered(baseline: RecordSet, candidate: RecordSet) -> str | None:
    """Why the run sets cannot be read sequentially when a case group holds several cases, else None.

    The sequences treat each case as an independent unit in arrival order. Cases that share a
    ``case_group`` (a repository, a template) are not independent: fed one at a time, the betting
    sequence passed a candidate at the boundary in 0.064 of replications at a one-sided 0.025
    (40 groups of 5; tests/sequential/test_simulation.py), so the sequential gate is not offered there.
    """
    parts = [rs.records.select("case_id", "case_group") for rs in (baseline, candidate) if rs.records.height]
    if not parts:
        return None
    pairs = pl.concat(parts).drop_nulls("case_group").unique()
    sizes = pairs.group_by("case_group").agg(pl.col("case_id").n_unique().alias("n")).filter(pl.col("n") > 1)
    if not sizes.height:
        return None
    groups = sorted(str(g) for g in sizes.get_column("case_group").to_list())
    return (
        f"cases share a case_group ({_ids(groups)}): anytime-valid sequences need independent cases, and "
        "clustered cases fed one at a time make them liberal; run this golden set with the fixed-size gate"
    )


def sequential_stop(policy: Policy, baseline: RecordSet, candidate: RecordSet) -> SequentialStop:
    """Recompute the case order from the seed and find the batches complete on both sides.

    Parameters
    ----------
    policy
        A policy with a ``[sequential]`` design.
    baseline, candidate
        The two run sets as read (every record).

    Returns
    -------
    SequentialStop
        The order (the first ``max_cases`` ids), the checkpoints reached, the record sets restricted
        to their cases, and the problems that forbid reading any batch: record files without a
        manifest, the two manifests listing different cases, fewer cases than ``max_cases``, or a
        case run outside the seeded order (a record of a case beyond the batch that follows the last
        complete one).

    Raises
    ------
    ValueError
        The policy has no ``[sequential]`` table.
    """
    design = policy.sequential
    if design is None:
        msg = f"{policy.path}: the policy has no [sequential] table"
        raise ValueError(msg)
    problems: list[str] = []
    base_ids, cand_ids = _manifest_ids(baseline), _manifest_ids(candidate)
    if base_ids is None or cand_ids is None:
        problems.append("a sequential gate reads run sets (their manifests list the cases the order is drawn from)")
    elif set(base_ids) != set(cand_ids):
        only = sorted(set(base_ids) ^ set(cand_ids))
        problems.append(f"the two run sets list different cases (in one only: {_ids(only)})")
    full = case_order(cand_ids or (), policy.seed)
    if cand_ids is not None and len(full) < design.max_cases:
        problems.append(f"the run sets list {len(full)} cases; the design's max_cases is {design.max_cases}")
    order = full[: design.max_cases]
    position = {c: i for i, c in enumerate(order)}
    done = _complete_cases(baseline, design.trials) & _complete_cases(candidate, design.trials)
    reached = tuple(c for c in design.checkpoints() if c <= len(order) and all(x in done for x in order[:c]))
    n = reached[-1] if reached else 0
    allowed = next((c for c in design.checkpoints() if c > n), n)  # the batch after the last complete one
    for side, rs in (("baseline", baseline), ("candidate", candidate)):
        ran = {str(c) for c in rs.records.get_column("case_id").unique().to_list()} if rs.records.height else set()
        outside = sorted(c for c in ran if position.get(c, len(order)) >= allowed)
        if outside and not problems:
            problems.append(
                f"{side}: cases run outside the order drawn from the policy's seed "
                f"(after the first {allowed} cases): {_ids(outside)}"
            )
    clustered = _clustered(baseline, candidate)
    if clustered and not problems:
        problems.append(clustered)
    units = set()
    for rs in (baseline, candidate):
        if rs.records.height:
            units |= {(rs.path, c, t) for c, t in rs.records.select("case_id", "trial").unique().iter_rows()}
    cases = set(order[:n])
    return SequentialStop(
        design=design,
        order=order,
        checkpoints=reached,
        baseline=_restricted(baseline, cases),
        candidate=_restricted(candidate, cases),
        problems=tuple(problems),
        trials_used=len(units),
    )


def _values(summary: pl.DataFrame, rule: Rule) -> pl.DataFrame:
    """Per-case value of ``rule``'s metric at its k (null for a case with fewer than k valid trials)."""
    estimand = metric_spec(rule.metric).estimand
    values = per_case_values(summary, k=rule.k, metric=estimand)  # type: ignore[arg-type]
    return values.select("case_id", "value")


def _checkpoints(order: Sequence[str], ids: Sequence[str], reached: Sequence[int]) -> tuple[int, ...]:
    """The global checkpoints as counts of the rule's cases (a slice rule sees only its own), repeats dropped."""
    mine = set(ids)
    out: list[int] = []
    for c in reached:
        n = sum(1 for x in order[:c] if x in mine)
        if n and (not out or n > out[-1]):
            out.append(n)
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Row:
    label: str
    kind: Literal["threshold", "paired"]
    boundary: float
    lo: float
    hi: float
    values: np.ndarray[Any, np.dtype[np.float64]] | None
    baseline_mean: float | None
    why: str | None


def _why_none(rule: Rule, cases: Sequence[str], thin: Sequence[str]) -> str | None:
    """Why a row of ``rule`` has no values: no case in its slice, or ``thin`` cases short of k trials (else None)."""
    if not cases:
        return f"no case in slice {rule.slice!r} (outside the severe slices)"
    return f"cases with fewer than k = {rule.k} valid trials: {_ids(thin)}" if thin else None


def _rule_inputs(rule: Rule, frame: pl.DataFrame, cases: Sequence[str], label: str) -> list[_Row]:
    """The threshold and paired rows of ``rule``: case-level values in ``cases`` order, or why there are none."""
    rows: list[_Row] = []
    where = "" if rule.slice == "all" else f" [{rule.slice}]"
    summary = case_summary(frame, allow_several_versions=True) if frame.height else None
    by_side: dict[str, dict[str, float | None]] = {"baseline": {}, "candidate": {}}
    if summary is not None:
        for side in by_side:
            part = summary.filter(pl.col("system") == side)
            if part.height:
                by_side[side] = dict(_values(part, rule).iter_rows())
    cand = [by_side["candidate"].get(c) for c in cases]
    base = [by_side["baseline"].get(c) for c in cases]
    thin = [c for c, v in zip(cases, cand, strict=True) if v is None]
    if rule.threshold is not None:
        row = f"{rule.name}: {label}{where} ≥ {rule.threshold:g}"
        why = _why_none(rule, cases, thin)
        values = None if why else np.array(cand, dtype=np.float64)
        rows.append(
            _Row(
                label=row,
                kind="threshold",
                boundary=rule.threshold,
                lo=0.0,
                hi=1.0,
                values=values,
                baseline_mean=None,
                why=why,
            )
        )
    if rule.test == "paired":
        margin = float(rule.margin or 0.0)
        shown = f"not worse by more than {margin:g}" if margin > 0 else "better"
        row = f"{rule.name}: {label}{where} {shown} than baseline"
        thin_base = [c for c, v in zip(cases, base, strict=True) if v is None]
        why = _why_none(rule, cases, sorted(set(thin) | set(thin_base)))
        diff = None if why else np.array(cand, dtype=np.float64) - np.array(base, dtype=np.float64)
        base_mean = None if why else float(np.mean(np.array(base, dtype=np.float64)))
        rows.append(
            _Row(
                label=row,
                kind="paired",
                boundary=-margin,
                lo=-1.0,
                hi=1.0,
                values=diff,
                baseline_mean=base_mean,
                why=why,
            )
        )
    return rows


def _result(rule: Rule, r: _Row, d: SequentialDecision | None, method: str) -> RuleResult:
    """The verdict row of one sequential decision (``d`` None: the row could not be computed)."""
    last = d.path[-1] if d is not None and d.path else None
    decision: Decision
    reason: str | None
    p_pass = p_fail = adj_pass = adj_fail = None
    if d is None or last is None:
        decision, reason = "insufficient_evidence", r.why or "no batch is complete on both sides"
    else:
        e_pass = max(p.e_pass for p in d.path)
        e_fail = max(p.e_fail for p in d.path)
        p_pass, p_fail = evalue_pvalue(e_pass), evalue_pvalue(e_fail)
        # Scaled so that "adjusted p <= alpha" is "e-value >= 1 / alpha_side", as in the fixed-size rows.
        adj_pass = min(1.0, p_pass * rule.alpha / d.alpha_pass)
        adj_fail = min(1.0, p_fail * rule.alpha / d.alpha_fail)
        if d.status == "pass":
            decision, reason = "pass", None
        elif d.status == "fail":
            decision = "fail"
            reason = (
                f"shown violated at {d.decided_at} cases: e-value {e_fail:.3g} ≥ 1/{d.alpha_fail:.3g} "
                f"(anytime-valid, {method})"
            )
        else:
            decision = "insufficient_evidence"
            needed = "" if d.cases_needed is None else f"; about {d.cases_needed} more cases would be needed"
            reason = (
                f"undecided after {last.n_cases} cases: neither e-value reached its level "
                f"(pass {e_pass:.3g} < {1 / d.alpha_pass:.3g}, fail {e_fail:.3g} < {1 / d.alpha_fail:.3g}){needed}"
            )
    if rule.action == "warn" and decision in {"fail", "insufficient_evidence"}:
        reason = f"warn-only rule ({decision}): {reason}"
        decision = "warn"
    return rule_row(
        rule,
        row=r.label,
        kind=r.kind,
        observed=None if last is None else last.estimate + (r.baseline_mean or 0.0),  # paired: the candidate's
        baseline=r.baseline_mean,
        ci_low=None if last is None else last.lower,
        ci_high=None if last is None else last.upper,
        threshold=r.boundary,
        margin=(rule.margin or 0.0) if r.kind == "paired" else None,
        test=f"sequential ({method})",
        pvalue_pass=p_pass,
        pvalue_fail=p_fail,
        pvalue_pass_adjusted=adj_pass,
        pvalue_fail_adjusted=adj_fail,
        n_cases=0 if last is None else last.n_cases,
        decision=decision,
        reason=reason,
        cases_needed=None if d is None else d.cases_needed,
    )


def sequential_rows(
    policy: Policy, stop: SequentialStop, rule_frames: Sequence[tuple[Rule, pl.DataFrame, Sequence[str]]]
) -> tuple[list[RuleResult], list[tuple[str, SequentialDecision]]]:
    """Decide every rule row by its sequence over the batches (no fixed-size test, no multiplicity step).

    Parameters
    ----------
    policy
        The policy (its ``[sequential]`` design and its rules' alphas).
    stop
        Where the run stands (:func:`sequential_stop`).
    rule_frames
        For each rule (cost rules excluded): the records of both sides it is computed on (column
        ``system`` is ``baseline`` or ``candidate``; a judge rule's outcomes already its judge's) and
        its cases (its slice, severe slices left out).

    Returns
    -------
    tuple
        The verdict rows (decided: a row's alpha is split between its pass and fail sides and
        across the rows, Bonferroni), and each computed row's label with its sequential decision.
    """
    design = stop.design
    position = {c: i for i, c in enumerate(stop.order)}
    prepared: list[tuple[Rule, _Row, tuple[int, ...]]] = []
    for rule, frame, cases in rule_frames:
        ordered = sorted(
            (c for c in cases if position.get(c, len(stop.order)) < stop.n_cases), key=position.__getitem__
        )
        label = metric_spec(rule.metric).label(rule.k)
        for r in _rule_inputs(rule, frame, ordered, label):
            prepared.append((rule, r, _checkpoints(stop.order, ordered, stop.checkpoints)))
    m = max(len(prepared), 1)
    rows: list[RuleResult] = []
    decisions: list[tuple[str, SequentialDecision]] = []
    for rule, r, checkpoints in prepared:
        d: SequentialDecision | None = None
        if r.values is not None and checkpoints and not stop.problems:
            alpha_pass, alpha_fail = split_alpha(rule.alpha, m, design.alpha_pass_share)
            d = decide_rule(
                r.values,
                checkpoints=checkpoints,
                boundary=r.boundary,
                higher_is_better=True,
                lo=r.lo,
                hi=r.hi,
                alpha_pass=alpha_pass,
                alpha_fail=alpha_fail,
                method=design.method,
            )
            decisions.append((r.label, d))
        rows.append(_result(rule, r, d, design.method))
    return rows, decisions


def severe_after_stop(severe: Sequence[SevereSliceResult], stop: SequentialStop) -> tuple[SevereSliceResult, ...]:
    """The severe slices of a sequential run: none passes before every case of the design has run.

    A severe slice passes when no trial of any of its cases failed. A run that stopped early leaves
    cases unrun, and neither the manifests nor the records say which of them carry a severe slice:
    a severe failure could sit among them. So a severe slice that passed on the cases run so far is
    ``insufficient_evidence`` until all ``max_cases`` cases ran (a failure seen is final and stops
    the run at once); a sequential policy with severe slices saves trials only on the way to ``fail``.

    Parameters
    ----------
    severe
        The severe slices scored on the batches complete on both sides.
    stop
        Where the run stands (:func:`sequential_stop`).

    Returns
    -------
    tuple of SevereSliceResult
        ``severe`` with every ``pass`` withheld while cases remain unrun.
    """
    unrun = len(stop.order) - stop.n_cases
    if unrun <= 0:
        return tuple(severe)
    why = (
        f"{stop.n_cases} of the design's {len(stop.order)} cases ran and none of this slice failed, "
        f"but a severe case may be among the {unrun} not run yet: a severe slice passes only when every case ran"
    )
    return tuple(
        replace(s, decision="insufficient_evidence", reason=f"severe slice {s.slice!r}: {why}")
        if s.decision == "pass"
        else s
        for s in severe
    )


def gate_decided(policy: Policy, rows: Sequence[RuleResult], severe: Sequence[SevereSliceResult], n_cases: int) -> bool:
    """Whether more batches could no longer change the gate's decision.

    A blocking row or a severe slice failed (stopping is final: it stays failed), or every blocking
    row passed, every severe slice has a case and passed, with at least ``min_cases`` cases decided
    on (warn-only rows never block).

    Parameters
    ----------
    policy
        The policy (``min_cases``).
    rows
        The decided rule rows.
    severe
        The severe slices' results.
    n_cases
        The cases decided on.

    Returns
    -------
    bool
        True when the run may stop.
    """
    blocking = [r for r in rows if r.action == "block"]
    if any(r.decision == "fail" for r in blocking) or any(s.decision == "fail" for s in severe):
        return True
    passed = bool(blocking) and all(r.decision == "pass" for r in blocking)
    return passed and all(s.decision == "pass" for s in severe) and n_cases >= policy.min_cases
