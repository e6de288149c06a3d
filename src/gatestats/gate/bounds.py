r"""Unresolved attempts enter every rule as a bound, never as missing at random.

An attempt is *unresolved* when it is its trial's final attempt
(:func:`gatestats.vocabulary.final_attempts`) and its outcome is ``infra_error``: the trial
says nothing about the system. Dropping it treats it as missing at random, and a candidate that
crashes its sandbox on the hard cases (or a harness that calls a failure "infrastructure") then
passes a rule its complete outcomes would not: 200 unresolved attempts out of 4,000 turned an
``insufficient_evidence`` at pass rate 0.600 into a ``pass`` at 0.633 (issue 30).

The gate follows the worst-case (partial-identification) bounds of Manski (1989, 1990) and
Horowitz & Manski (2000): the data identify the rule's quantity only up to an interval whose
ends are the two extreme imputations of the unresolved attempts, so

* the **pessimistic** end counts every unresolved attempt of the candidate as a failure and
  every one of the baseline as a pass; a row's ``pvalue_pass`` is computed there, so a ``pass``
  holds whatever the unresolved attempts would have been;
* the **optimistic** end counts the candidate's as passes and the baseline's as failures; a row's
  ``pvalue_fail`` is computed there, so a candidate is never failed for infrastructure;
* between the ends the row is ``insufficient_evidence`` and says so in words.

A trial *retried* after an infrastructure error (an ``infra_error`` attempt before its final one)
is unresolved too under the policy's default ``infra_retries = "bounded"``, whatever the retry
gave: when the error strikes failing trajectories and the retry is a fresh draw, the retry is a
second chance only those trials got, and counting it was liberal (0.147 false passes at a 0.05
rule; docs/gate.md). ``infra_retries = "counted"`` states, before the run, that the errors are
unrelated to the outcome, and the final attempt's outcome then counts (:func:`mark_retried`).

A one-sided test at each end of the identified interval is a valid test of the rule for every
value of the missing outcomes (Imbens & Manski 2004 discuss the confidence set of the whole
interval; the gate needs only the one end that decides each direction). With no unresolved
attempt both ends equal the observed data and every row is unchanged.

References
----------
Manski, C. F. (1989). Anatomy of the selection problem. *Journal of Human Resources* 24(3), 343-360.
Manski, C. F. (1990). Nonparametric bounds on treatment effects. *American Economic Review* 80(2), 319-323.
Horowitz, J. L. & Manski, C. F. (2000). Nonparametric analysis of randomized experiments with
missing covariate and outcome data. *Journal of the American Statistical Association* 95(449), 77-84.
Imbens, G. W. & Manski, C. F. (2004). Confidence intervals for partially identified parameters.
*Econometrica* 72(6), 1845-1857.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal, TypeAlias

import polars as pl

from gatestats.gate.bindings import UnresolvedBound
from gatestats.gate.verdict import RuleResult, SevereSliceResult
from gatestats.vocabulary import FAILED, INFRA_ERROR, PASSED, TRIAL_KEY, InfraRetries, is_final_attempt

__all__ = [
    "End",
    "bound_frame",
    "bound_words",
    "bounded_decided_row",
    "bounded_row",
    "bounded_severe",
    "imputed_passes",
    "mark_retried",
    "unresolved_counts",
    "unresolved_keys",
    "unresolved_trials",
]

#: Which extreme imputation of the unresolved attempts a frame carries (``observed``: none).
End: TypeAlias = Literal["observed", "pessimistic", "optimistic"]

#: What the candidate's unresolved attempts count as at each end (the baseline's: the other one).
_CANDIDATE_AS: dict[str, str] = {"pessimistic": FAILED, "optimistic": PASSED}
_OTHER = {FAILED: PASSED, PASSED: FAILED}


#: The column :func:`mark_retried` adds: the final attempt of a trial retried after an infra error.
RETRIED = "__retried_after_infra_error"


def _unresolved(frame: pl.DataFrame) -> pl.Expr:
    """Unresolved attempts: a final ``infra_error``, or the final attempt of a trial :func:`mark_retried` marked."""
    final_error = (pl.col("outcome") == INFRA_ERROR) & is_final_attempt()
    return final_error | pl.col(RETRIED) if RETRIED in frame.columns else final_error


def mark_retried(frame: pl.DataFrame, infra_retries: InfraRetries) -> pl.DataFrame:
    """``frame`` with the final attempt of every trial retried after an infra error marked unresolved.

    Under ``bounded`` a trial with an ``infra_error`` attempt before its final attempt stays
    unresolved whatever its retry gave (its observed outcome is kept for the estimate; both ends
    impute it). Under ``counted`` nothing is marked: the final attempt's outcome is the trial's.

    Parameters
    ----------
    frame
        Records of both sides (``system``, ``case_id``, ``trial``, ``attempt``, ``outcome``).
    infra_retries
        The policy's ``infra_retries``.

    Returns
    -------
    polars.DataFrame
        The frame with a boolean column the bound functions read (``bounded`` only).
    """
    if infra_retries == "counted" or frame.height == 0:
        return frame
    # Two columns tested and a column made as they are, no query (a small gate call paid ~0.2 ms for them).
    unmarked = pl.Series(RETRIED, [False], dtype=pl.Boolean).new_from_index(0, frame.height)
    if not (frame.get_column("attempt") > 0).any():  # no retry (most run sets): nothing to mark
        return frame.with_columns(unmarked)
    trial = list(TRIAL_KEY)
    earlier_error = (
        ((pl.col("outcome") == INFRA_ERROR) & (pl.col("attempt") < pl.col("attempt").max().over(trial)))
        .any()
        .over(trial)
    )
    # Only a trial with a retry (an attempt > 0; usually few) can have an earlier error: the nested
    # window runs on those rows alone (over the whole frame it grew faster than the rows: 0.4 s at
    # 100k records, 4.3 s at 300k), and the marked rows are set by their row number. The retried
    # trials are found by a semi join on their keys, not by a window over every record (at 10M
    # records that window's groups held ~1.4 GiB; session 38).
    row = "__row"
    retried = frame.lazy().filter(pl.col("attempt") > 0).select(trial).unique()
    marked = (
        frame.lazy()
        .select(pl.int_range(pl.len(), dtype=pl.UInt32).alias(row), *trial, "attempt", "outcome")
        .join(retried, on=trial, how="semi", nulls_equal=True)
        .filter(earlier_error & is_final_attempt())
        .select(row)
        .collect()
        .to_series()
    )
    return frame.with_columns(unmarked.scatter(marked, True))


def bound_frame(frame: pl.DataFrame, end: End, *, candidate: str) -> pl.DataFrame:
    """``frame`` with its unresolved attempts imputed at ``end`` (``observed``: unchanged).

    Parameters
    ----------
    frame
        Records of both sides (column ``system`` is the side's label).
    end
        ``pessimistic``: the candidate's unresolved attempts fail and every other side's pass;
        ``optimistic``: the opposite; ``observed``: nothing imputed.
    candidate
        The candidate's label in ``system``.

    Returns
    -------
    polars.DataFrame
        The frame, the outcome of each unresolved final attempt replaced.
    """
    if end == "observed" or frame.height == 0:
        return frame
    cand_as = _CANDIDATE_AS[end]
    return frame.with_columns(
        pl.when(_unresolved(frame))
        .then(pl.when(pl.col("system") == candidate).then(pl.lit(cand_as)).otherwise(pl.lit(_OTHER[cand_as])))
        .otherwise(pl.col("outcome"))
        .alias("outcome")
    )


def unresolved_keys(frame: pl.DataFrame, *, candidate: str) -> list[tuple[str, int]]:
    """The candidate's unresolved (case_id, trial)s, in case-id and trial order.

    Parameters
    ----------
    frame
        Records of both sides.
    candidate
        The candidate's label in ``system``.

    Returns
    -------
    list[tuple[str, int]]
        Each unresolved trial of the candidate once.
    """
    hit = unresolved_trials(frame, candidate=candidate).select("case_id", "trial")
    return [(str(c), int(t)) for c, t in hit.iter_rows()]


def unresolved_trials(frame: pl.DataFrame, *, candidate: str) -> pl.DataFrame:
    """The candidate's unresolved attempts, in :func:`unresolved_keys`' order, with their case version and retry mark.

    Parameters
    ----------
    frame
        Records of both sides.
    candidate
        The candidate's label in ``system``.

    Returns
    -------
    polars.DataFrame
        Columns ``case_id``, ``case_version``, ``trial`` and ``retried`` (the final attempt of a
        trial :func:`mark_retried` marked), one row per unresolved attempt of the candidate, sorted
        by case id and trial as :func:`unresolved_keys` lists them.
    """
    retried = pl.col(RETRIED) if RETRIED in frame.columns else pl.lit(False)
    return (
        frame.filter(_unresolved(frame) & (pl.col("system") == candidate))
        .select("case_id", "case_version", "trial", retried.alias("retried"))
        .sort("case_id", "trial")
    )


def imputed_passes(frame: pl.DataFrame, keys: list[tuple[str, int]], *, candidate: str) -> pl.DataFrame:
    """``frame`` with the candidate's unresolved attempts of ``keys`` counted as passes (the others untouched).

    Parameters
    ----------
    frame
        Records of both sides.
    keys
        The (case_id, trial)s whose unresolved attempt counts as a pass.
    candidate
        The candidate's label in ``system``.

    Returns
    -------
    polars.DataFrame
        The frame, those outcomes replaced.
    """
    if not keys:
        return frame
    chosen = pl.DataFrame(
        {"case_id": [k[0] for k in keys], "trial": [k[1] for k in keys]},
        schema={"case_id": pl.String, "trial": frame.schema["trial"]},
    )
    hit = pl.struct("case_id", "trial").is_in(chosen.select(pl.struct("case_id", "trial")).to_series().implode())
    return frame.with_columns(
        pl.when(_unresolved(frame) & (pl.col("system") == candidate) & hit)
        .then(pl.lit(PASSED))
        .otherwise(pl.col("outcome"))
        .alias("outcome")
    )


def unresolved_counts(frame: pl.DataFrame, *, candidate: str) -> tuple[int, int]:
    """The unresolved attempts of ``frame``: (the candidate's, the other side's).

    Parameters
    ----------
    frame
        Records of both sides.
    candidate
        The candidate's label in ``system``.

    Returns
    -------
    tuple[int, int]
        The candidate's unresolved attempts and the other side's.
    """
    if frame.height == 0:
        return 0, 0
    hit = frame.filter(_unresolved(frame)).get_column("system")
    n_cand = int((hit == candidate).sum())
    return n_cand, hit.len() - n_cand


def _value(row: RuleResult) -> float | None:
    """The row's estimate: the difference for a paired row, else the observed value."""
    if row.kind == "paired":
        return None if row.observed is None or row.baseline is None else row.observed - row.baseline
    return row.observed


def _bound(pess: RuleResult, opt: RuleResult, counts: tuple[int, int]) -> UnresolvedBound:
    return UnresolvedBound(
        candidate=counts[0], baseline=counts[1], observed_if_failed=_value(pess), observed_if_passed=_value(opt)
    )


def _ends(a: float | None, b: float | None, *, low: bool) -> float | None:
    if a is None or b is None:
        return None
    return min(a, b) if low else max(a, b)


def bounded_row(obs: RuleResult, pess: RuleResult, opt: RuleResult, counts: tuple[int, int]) -> RuleResult:
    """A row before multiplicity on the bound: ``pvalue_pass`` from the pessimistic end, ``pvalue_fail`` the optimistic.

    Parameters
    ----------
    obs, pess, opt
        The same row computed on the observed records and at each end.
    counts
        The row's unresolved attempts (the candidate's, the baseline's).

    Returns
    -------
    RuleResult
        ``obs`` itself when nothing is unresolved; else the pessimistic row with the optimistic
        end's ``pvalue_fail``, the interval spanning both ends' intervals, the observed (valid
        outcomes only) estimate and the bound. Undecidable at either end: undecidable.
    """
    if counts == (0, 0):
        return obs
    undecidable = "insufficient_evidence" in (pess.decision, opt.decision)
    return replace(
        pess,
        observed=obs.observed,
        baseline=obs.baseline,
        ci_low=_ends(pess.ci_low, opt.ci_low, low=True),
        ci_high=_ends(pess.ci_high, opt.ci_high, low=False),
        pvalue_fail=opt.pvalue_fail,
        decision="insufficient_evidence" if undecidable else pess.decision,
        reason=(pess.reason or opt.reason) if undecidable else pess.reason,
        unresolved=_bound(pess, opt, counts),
    )


def bounded_decided_row(obs: RuleResult, pess: RuleResult, opt: RuleResult, counts: tuple[int, int]) -> RuleResult:
    """A row already decided (sequential) on the bound: ``pass`` from the pessimistic end, ``fail`` from the optimistic.

    Parameters
    ----------
    obs, pess, opt
        The same decided row on the observed records and at each end.
    counts
        The row's unresolved attempts (the candidate's, the baseline's).

    Returns
    -------
    RuleResult
        ``obs`` when nothing is unresolved; the pessimistic row when it passes (or, warn-only,
        warns); the optimistic row when it fails; else ``insufficient_evidence``.
    """
    if counts == (0, 0):
        return obs
    bound = _bound(pess, opt, counts)
    if pess.decision in {"pass", "warn"}:
        return replace(pess, observed=obs.observed, baseline=obs.baseline, unresolved=bound)
    if opt.decision == "fail":
        return replace(opt, observed=obs.observed, baseline=obs.baseline, unresolved=bound)
    return replace(
        pess,
        observed=obs.observed,
        baseline=obs.baseline,
        decision="insufficient_evidence",
        reason=pess.reason if pess.decision == "insufficient_evidence" else opt.reason,
        unresolved=bound,
    )


def bounded_severe(
    obs: SevereSliceResult,
    pess: SevereSliceResult,
    opt: SevereSliceResult,
    unresolved: int,
    infra_retries: InfraRetries = "bounded",
) -> SevereSliceResult:
    """A severe slice on the bound: it passes only if no unresolved candidate attempt could hide a failure.

    Parameters
    ----------
    obs, pess, opt
        The slice scored on the observed records and at each end.
    unresolved
        The candidate's unresolved attempts in the slice's cases.
    infra_retries
        The policy's ``infra_retries`` (whether a re-run can resolve them).

    Returns
    -------
    SevereSliceResult
        ``obs`` when nothing is unresolved; a ``fail`` when a valid trial failed (the optimistic end
        fails); else ``insufficient_evidence`` naming the unresolved attempts.
    """
    if unresolved == 0:
        return obs
    if opt.decision == "fail" or pess.decision != "fail":
        return replace(opt if opt.decision == "fail" else pess, unresolved=unresolved)
    reason = (
        f"severe slice {obs.slice!r}: no valid trial failed, but {unresolved} unresolved attempt(s) of the "
        "candidate (final attempt infra_error, or retried after one) could hide a failure; "
        + (
            "it passes only when they are re-run and pass"
            if infra_retries == "counted"
            else 'under the policy\'s infra_retries = "bounded" a re-run stays a bound (docs/gate.md, "Retries")'
        )
    )
    return replace(obs, decision="insufficient_evidence", reason=reason, unresolved=unresolved)


def _attempts(n: int, side: str) -> str:
    return f"{'the' if n == 1 else f'all {n}'} unresolved attempt{'s' if n != 1 else ''} of the {side}"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _remedy(infra_retries: InfraRetries) -> str:
    """What decides a row left between its bounds, under the policy's ``infra_retries``."""
    if infra_retries == "counted":
        return "re-running the unresolved attempts decides it (docs/runner.md, --rerun-unresolved)"
    return (
        'more cases or trials decide it; a re-run stays a bound under the policy\'s infra_retries = "bounded" '
        '(docs/gate.md, "Retries")'
    )


def _summary(row: RuleResult, bound: UnresolvedBound, infra_retries: InfraRetries) -> str:
    n, m = bound.candidate, bound.baseline
    worst = [f"{_attempts(n, 'candidate')} had failed"] if n else []
    worst += [f"{_attempts(m, 'baseline')} had passed"] if m else []
    best = [f"{_attempts(n, 'candidate')} had passed"] if n else []
    best += [f"{_attempts(m, 'baseline')} had failed"] if m else []
    if row.decision == "pass":
        return f"passes even if {' and '.join(worst)}"
    if row.decision == "fail":
        return f"fails even if {' and '.join(best)}"
    decides = (
        f"; it would pass if at most {bound.to_decide} of the candidate's {n} had failed (the rest passed)"
        if bound.to_decide is not None and n
        else ""
    )
    return (
        f"between the bounds: {_num(bound.observed_if_failed)} if {' and '.join(worst)}, "
        f"{_num(bound.observed_if_passed)} if {' and '.join(best)}{decides}; {_remedy(infra_retries)}"
    )


def bound_words(rows: list[RuleResult], infra_retries: InfraRetries = "bounded") -> list[RuleResult]:
    """The decided rows, each bounded row with its ends in words (``unresolved.summary``; not passing: in ``reason``).

    Parameters
    ----------
    rows
        The decided verdict rows.
    infra_retries
        The policy's ``infra_retries`` (what decides a row left between its bounds).

    Returns
    -------
    list[RuleResult]
        The rows, bounded ones with their summary.
    """
    out: list[RuleResult] = []
    for r in rows:
        if r.unresolved is None:
            out.append(r)
            continue
        summary = _summary(r, r.unresolved, infra_retries)
        reason = r.reason if r.decision == "pass" else f"{r.reason}; {summary}" if r.reason else summary
        out.append(replace(r, reason=reason, unresolved=replace(r.unresolved, summary=summary)))
    return out
