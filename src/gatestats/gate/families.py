r"""The multiplicity families a policy declares, the rows removed before the data, and what would decide a row.

A gate policy holds rules of two kinds: blocking rules (``action = "block"``), whose failure or
inconclusiveness stops the release, and warn-only rules (``action = "warn"``), which can only
warn. The release's false pass is a blocking rule that passes while it is violated, so the
**blocking rows are the family** whose family-wise error rate the gate controls (weighted Holm by
default, at :math:`\alpha_F = \max_i \alpha_i`); the **warn-only rows are adjusted in their own
family** and never take alpha from a blocking row (a warn-only row cannot make the verdict pass,
so its errors are not release errors). A row that can be known to be undecidable **before any
outcome is seen** — from the policy, the number of cases N, k and which fields the records carry,
never from an outcome — is in no family: the family is then a function of the design, not of the
data, and Holm's proof (closed testing over a fixed family; Holm 1979; Marcus, Peritz & Gabriel
1976) holds for it. A row undecidable for a reason seen only in the data (a spread, a discordance,
cases left with too few valid trials) stays in its family with :math:`p = 1`, as before: dropping
it would make the family depend on the data.

The verdict writes the choice: every row has ``family`` (``blocking``, ``warn_only`` or
``removed_before_data``) and ``family_size`` (the rows adjusted together), and a removed row's
reason says why it was removed. ``benchmarks/family_simulation.py`` measures the family-wise
false-pass rate at the null boundary of every blocking rule at once (docs/gate.md).

An inconclusive row also says about how many cases would decide it (:func:`decide_hint`): the
normal approximation :math:`N' = N (z_{\alpha'} / z_{\text{obs}})^2` with :math:`z_\text{obs}` the
probit of the raw one-sided p-value nearest to deciding and :math:`\alpha'` the level Holm's first
step gives the row (its alpha divided by its family's size, a conservative planning value): the
standard sample-size scaling of a test whose statistic grows with :math:`\sqrt N` (Chow, Shao &
Wang 2008, ch. 3). It is a plan at the observed effect, not a promise.

References
----------
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
    Statistics 6(2), 65-70.
Marcus, R., Peritz, E. & Gabriel, K. R. (1976). On closed testing procedures with special reference
    to ordered analysis of variance. Biometrika 63(3), 655-660.
Chow, S.-C., Shao, J. & Wang, H. (2008). Sample Size Calculations in Clinical Research, 2nd ed.
    Chapman & Hall/CRC.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Literal, TypeAlias

import numpy as np
import polars as pl
from scipy import stats

from gatestats._query import collect_small
from gatestats.gate.policy import Policy
from gatestats.gate.rules import threshold_resolution
from gatestats.gate.verdict import RuleResult
from gatestats.paired import adjust_pvalues
from gatestats.paired.multiplicity import adjust_pvalues_weighted
from gatestats.vocabulary import WEIGHTED_CORRECTIONS, Decision, GateCorrection

__all__ = [
    "COST_FIELDS",
    "FamilyName",
    "adjusted_family",
    "decide_families",
    "decide_hint",
    "no_cost_fields",
    "pre_data_removals",
    "row_family",
]

FamilyName: TypeAlias = Literal["blocking", "warn_only", "removed_before_data"]

#: The cost fields a cost row reads (with the policy's machine rate, ``machine_seconds`` too).
COST_FIELDS = ("cost_usd", "cost_model_usd", "cost_tool_usd", "cost_execution_usd")

#: The row label of the policy's ``max_cost_increase`` limit (as :mod:`gatestats.gate.cost_rules` names it).
_COST_LIMIT_RULE = "cost per accepted outcome"


def no_cost_fields(policy: Policy, records: pl.DataFrame, sides: tuple[str, ...]) -> str | None:
    """Why no cost row can be decided whatever the outcomes: a side whose records carry no cost field.

    Parameters
    ----------
    policy
        The policy (its machine rate decides whether ``machine_seconds`` is a cost field).
    records
        Both sides' records, column ``system`` holding the side labels ``sides``.
    sides
        The side labels.

    Returns
    -------
    str | None
        The reason, or ``None`` when every side's records carry at least one cost field.
    """
    machine = ["machine_seconds"] if policy.cost.machine_rate_usd_per_hour is not None else []
    fields = [*COST_FIELDS, *machine]
    read = [f for f in fields if f in records.columns]
    # only the cost fields' null counts, every side's in one query: a filter of a side's every column was a
    # copy of its records, and a query per side most of this check's cost on a gate's few hundred records
    if not sides:
        return None
    counts = []
    for side in sides:
        mine = pl.col("system") == side
        counts += [mine.sum(), *(pl.col(f).filter(mine).null_count() for f in read)]
    query = records.lazy().select(e.alias(str(i)) for i, e in enumerate(counts))
    row = collect_small(query, records.height).row(0)
    for i, side in enumerate(sides):
        height, *nulls = row[i * (len(read) + 1) : (i + 1) * (len(read) + 1)]
        present = [f for f, n in zip(read, nulls, strict=True) if n < height]
        if height and not present:
            return f"no {side} record carries a cost field ({', '.join(fields)})"
    return None


def pre_data_removals(
    policy: Policy, n_cases: Mapping[str, int], no_cost: str | None, n_units: Mapping[str, int] | None = None
) -> dict[tuple[str, str], str]:
    """The rows undecidable before any outcome is seen, by (rule name, row kind), each with why.

    Parameters
    ----------
    policy
        The gate policy (its rules, alphas and seed).
    n_cases
        For each rule's slice (``all`` included), its number of cases outside the severe slices.
    no_cost
        :func:`no_cost_fields`'s finding (``None``: the records carry cost fields).
    n_units
        For each rule's slice, its paired units (the policy's groups; ``None``: the cases), whose
        weight a non-inferiority margin is compared with, as the paired test counts them.

    Returns
    -------
    dict[tuple[str, str], str]
        ``(rule name, kind)`` → why: a slice with no case; a threshold no all-pass sample of the
        slice's N cases could show at the rule's alpha (the resolution check, from N alone); a
        non-inferiority margin finer than one case's weight 1/N; a cost row when a side's records
        carry no cost field at all.
    """
    out: dict[tuple[str, str], str] = {}
    if no_cost is not None and policy.max_cost_increase is not None:
        out[_COST_LIMIT_RULE, "cost_increase"] = no_cost
    for rule in policy.rules:
        if rule.metric == "cost_per_accepted":
            if no_cost is not None:
                out |= {(rule.name, "cost_threshold"): no_cost, (rule.name, "cost_increase"): no_cost}
            continue
        n = n_cases.get(rule.slice, 0)
        if n == 0:
            why = f"no case in slice {rule.slice!r} (outside the severe slices)"
            out |= {(rule.name, "threshold"): why, (rule.name, "paired"): why}
            continue
        if rule.threshold is not None:
            status, words, _ = threshold_resolution(n, rule.threshold, rule.alpha, policy.seed)
            if status == "cannot_resolve" and words is not None:
                out[rule.name, "threshold"] = words
        units = (n_units or {}).get(rule.slice, n)
        if rule.test == "paired" and rule.margin and units and rule.margin < 1 / units:
            out[rule.name, "paired"] = f"the margin {rule.margin:g} is finer than one case's weight 1/{units}"
    return out


def row_family(row: RuleResult, removed: Mapping[tuple[str, str], str]) -> FamilyName:
    """The multiplicity family of a row: removed before the data, else by its action.

    Parameters
    ----------
    row
        A verdict row.
    removed
        :func:`pre_data_removals`'s rows.

    Returns
    -------
    FamilyName
        ``removed_before_data``, ``blocking`` or ``warn_only``.
    """
    if (row.rule, row.kind) in removed:
        return "removed_before_data"
    return "blocking" if row.action == "block" else "warn_only"


def adjusted_family(
    rows: list[RuleResult], members: list[int], multiplicity: GateCorrection
) -> dict[int, tuple[float, float]]:
    """Adjusted (pass, fail) p-values of the decidable rows among ``members`` (one family).

    Every member is in the family; one that cannot be decided (no p-value, or ``cannot_resolve``)
    counts with p = 1, as in :func:`gatestats.paired.compare_many`. ``holm`` and ``bonferroni`` are
    weighted by the rules' alphas (:func:`~gatestats.paired.multiplicity.adjust_pvalues_weighted`);
    ``hochberg`` is unweighted.

    Parameters
    ----------
    rows
        Every verdict row, before the decision.
    members
        The indices of the family's rows.
    multiplicity
        The policy's correction.

    Returns
    -------
    dict[int, tuple[float, float]]
        Row index → adjusted (pass, fail) p-values, for the decidable members only.
    """
    decidable = {i for i in members if rows[i].decision != "insufficient_evidence" and rows[i].pvalue_pass is not None}
    if not decidable:
        return {}
    p_pass = np.array([rows[i].pvalue_pass if i in decidable else 1.0 for i in members], dtype=float)
    p_fail = np.array([rows[i].pvalue_fail if i in decidable else 1.0 for i in members], dtype=float)
    alphas = np.array([rows[i].alpha for i in members], dtype=float)
    if multiplicity in WEIGHTED_CORRECTIONS:
        p_pass = adjust_pvalues_weighted(p_pass, alphas, method=multiplicity)
        p_fail = adjust_pvalues_weighted(p_fail, alphas, method=multiplicity)
    elif multiplicity != "none":
        p_pass = adjust_pvalues(p_pass, method=multiplicity)
        p_fail = adjust_pvalues(p_fail, method=multiplicity)
    return {i: (float(p_pass[j]), float(p_fail[j])) for j, i in enumerate(members) if i in decidable}


def decide_hint(row: RuleResult, family_size: int) -> tuple[int | None, str]:
    """About how many cases would decide an inconclusive row at its observed effect, and the words.

    Parameters
    ----------
    row
        An inconclusive verdict row (raw p-values present).
    family_size
        The rows adjusted with it.

    Returns
    -------
    tuple[int | None, str]
        The cases (``None`` when no sample size would decide it at the observed value, e.g. the
        observed value sits on the threshold) and a sentence to append to the row's reason.
    """
    raw = min(p for p in (row.pvalue_pass, row.pvalue_fail) if p is not None)
    side = "hold" if row.pvalue_pass is not None and raw == row.pvalue_pass else "be violated"
    level = row.alpha / max(family_size, 1)
    if not 0 < raw < 0.5:
        return None, "; at the observed value no number of cases would decide it (it sits on the boundary)"
    z_obs = float(stats.norm.isf(raw))
    z_need = float(stats.norm.isf(level))
    needed = max(row.n_cases + 1, math.ceil(row.n_cases * (z_need / z_obs) ** 2))
    return needed, (
        f"; about {needed} cases (now {row.n_cases}) would show it to {side} if the observed effect held "
        f"(normal approximation at alpha {level:.3g})"
    )


def decide_families(
    rows: list[RuleResult], multiplicity: GateCorrection, removed: Mapping[tuple[str, str], str] | None = None
) -> list[RuleResult]:
    """Adjust each family's p-values and decide every row.

    The policy declares the families (:mod:`gatestats.gate.families`, docs/gate.md): the blocking
    rows are the family whose false-pass the gate controls; the warn-only rows are adjusted in their
    own family and never take alpha from a blocking row; a row in ``removed`` (undecidable before any
    outcome is seen) is in no family and says so. An inconclusive row says about how many cases would
    decide it (``cases_needed``).

    Parameters
    ----------
    rows
        Every verdict row with its raw p-values, before the decision.
    multiplicity
        The policy's correction.
    removed
        (rule, kind) → why the row was undecidable before any outcome was seen
        (:func:`pre_data_removals`).

    Returns
    -------
    list[RuleResult]
        The rows decided, each with its adjusted p-values, family and family size.
    """
    removed = removed or {}
    families = [row_family(r, removed) for r in rows]
    adjusted: dict[int, tuple[float, float]] = {}
    for name in ("blocking", "warn_only"):
        adjusted |= adjusted_family(rows, [i for i, f in enumerate(families) if f == name], multiplicity)
    out: list[RuleResult] = []
    for i, r in enumerate(rows):
        reason, needed = r.reason, r.cases_needed
        size = 0 if families[i] == "removed_before_data" else families.count(families[i])
        if families[i] == "removed_before_data":
            why = removed[r.rule, r.kind]
            said = bool(reason) and why in str(reason)  # the row's own reason already says why: not twice
            note = "left out of the multiplicity family before the data" + ("" if said else f": {why}")
            reason = note if not reason or reason in note else f"{reason}; {note}"
        if i in adjusted:
            p_pass, p_fail = adjusted[i]
            if p_pass <= r.alpha:
                decision: Decision = "pass"
            elif p_fail <= r.alpha:
                decision = "fail"
                reason = f"shown violated: adjusted p = {p_fail:.3g} ≤ alpha {r.alpha:g}"
            else:
                decision = "insufficient_evidence"
                needed, hint = decide_hint(r, size)
                reason = (
                    f"inconclusive: neither holding (adjusted p = {p_pass:.3g}) nor violated "
                    f"(adjusted p = {p_fail:.3g}) is shown at alpha {r.alpha:g}{hint}"
                )
        else:
            decision = "insufficient_evidence"
        if r.action == "warn" and decision in {"fail", "insufficient_evidence"}:
            reason = f"warn-only rule ({decision}): {reason}"
            decision = "warn"
        out.append(
            replace(
                r,
                decision=decision,
                reason=reason,
                cases_needed=needed,
                pvalue_pass_adjusted=adjusted[i][0] if i in adjusted else None,
                pvalue_fail_adjusted=adjusted[i][1] if i in adjusted else None,
                family=families[i],
                family_size=size,
            )
        )
    return out
