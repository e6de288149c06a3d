"""Cost rows of a verdict: the limit on the increase of cost per accepted outcome, and cost rules.

The policy's ``max_cost_increase`` :math:`m` is a row that must show
:math:`\\text{CPA}_\\text{candidate} / \\text{CPA}_\\text{baseline} < 1 + m` (paired case bootstrap
of the ratio of sums, :func:`gatestats.cost.cost_ratio`); ``pvalue_pass`` tests
:math:`H_0: \\text{ratio} \\ge 1 + m` and ``pvalue_fail`` tests :math:`H_0: \\text{ratio} \\le 1 + m`,
both from :meth:`~gatestats.cost.CostRatio.decision_pvalues`: the percentile p-values tripled and
offered only from 50 effective paired units (Kish), because the plain percentile test passed a
ratio exactly at the limit in up to 0.12 of replications at a nominal 0.05 when spend per case is
heavy-tailed (``docs/size_study.md``, section D).
A ``cost_per_accepted`` rule with ``test = "paired"`` and margin :math:`m` is the same row for its
slice; with a ``threshold`` :math:`T` (USD) it must show the candidate's CPA is below :math:`T`.
The cost is computed over every case (severe slices included: their spend is real spend) unless
the rule names a slice.

**Missing costs.** When an attempt on a row's cases carries no cost, ``[cost]
require_complete_costs = true`` makes the row insufficient evidence. Without it the row decides
on the conservative side of the bounds (docs/cost.md): the missing costs counted from 0 up to a
cap (``[cost] max_cost_per_attempt_usd``, else the largest observed cost per attempt of that
side). A threshold row passes only if the upper end of the interval of the bounds (missing at the
cap) is below the threshold, and fails only if its lower end (missing at 0) is above it; a ratio
row tests "within" on the ratio with the candidate's missing costs at the cap and the baseline's
at 0, and "above" on the reverse. The row's label says how many costs were missing. Rows on
complete data are computed exactly as before.

**No cap stated.** The largest observed cost is an assumption about the costs that were lost, and
costs are rarely lost at random (a trial that ran away is the one whose bill went missing). So
without ``[cost] max_cost_per_attempt_usd`` the side of a row that rests on the cap is never
decided: a threshold row cannot pass (the lower end, with the missing costs at 0, can still show
it violated); a ratio row cannot pass when a candidate cost is missing, and cannot fail when a
baseline cost is missing. Its p-value is set to 1 and the label says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypedDict

import polars as pl

from gatestats.cost import CostEstimate, CostRatio, MissingCosts, cost_per_accepted, cost_ratio
from gatestats.cost.missing import attempts_without_cost
from gatestats.errors import GatestatsError
from gatestats.gate.bindings import CostSummary
from gatestats.gate.policy import Policy, Rule
from gatestats.gate.rules import RuleEvidence, interval_pvalues, rule_result
from gatestats.gate.verdict import RuleResult

__all__ = ["cost_rows"]


class _Rates(TypedDict):
    """The policy's cost options: the keyword arguments of ``cost_ratio`` and ``cost_per_accepted``, checked by mypy."""

    review_rate_usd_per_hour: float | None
    machine_rate_usd_per_hour: float | None
    confidence_level: float
    n_resamples: int
    seed: int


def _rates(policy: Policy) -> _Rates:
    return {
        "review_rate_usd_per_hour": policy.cost.review_rate_usd_per_hour,
        "machine_rate_usd_per_hour": policy.cost.machine_rate_usd_per_hour,
        "confidence_level": policy.confidence_level,
        "n_resamples": policy.cost.n_resamples,
        "seed": policy.seed,
    }


def _missing_costs(frame: pl.DataFrame, policy: Policy, systems: tuple[str, ...]) -> pl.DataFrame:
    """The attempts of ``systems`` without a cost (none when the records cannot be read: the row says why)."""
    try:
        missing = attempts_without_cost(
            frame.filter(pl.col("system").is_in(list(systems))),
            review_rate_usd_per_hour=policy.cost.review_rate_usd_per_hour,
            machine_rate_usd_per_hour=policy.cost.machine_rate_usd_per_hour,
        )
    except (GatestatsError, ValueError):
        return pl.DataFrame(schema={"system": pl.String, "record_id": pl.String})
    return missing


def _missing_text(missing: pl.DataFrame, frame: pl.DataFrame, sides: tuple[str, ...]) -> str:
    """``5 of 200 candidate attempt(s)`` (and the baseline's) without a cost, with up to five ids."""
    parts = []
    for side in sides:
        n = missing.filter(pl.col("system") == side).height
        if n:
            parts.append(f"{n} of {frame.filter(pl.col('system') == side).height} {side} attempt(s)")
    ids = ", ".join(repr(i) for i in missing["record_id"].head(5).to_list())
    more = f" and {missing.height - 5} more" if missing.height > 5 else ""
    return f"{' and '.join(parts)} carry no cost (e.g. {ids}{more})"


@dataclass(frozen=True, slots=True, kw_only=True)
class _Missing:
    """Attempts of a row without a cost: the text the row shows, and the sides they belong to."""

    text: str
    sides: frozenset[str]


def _missing_note(frame: pl.DataFrame, policy: Policy, sides: tuple[str, ...]) -> _Missing | None:
    """What a row's label and reason say about attempts without a cost, or ``None`` when every attempt has one."""
    missing = _missing_costs(frame, policy, sides)
    if missing.is_empty():
        return None
    return _Missing(text=_missing_text(missing, frame, sides), sides=frozenset(missing["system"].to_list()))


_NO_CAP = "no [cost] max_cost_per_attempt_usd"


def _blocked(policy: Policy, missing: _Missing, baseline: str | None, candidate: str) -> tuple[bool, bool]:
    """Which sides (pass, fail) of a row rest on a cap the policy did not state."""
    if policy.cost.max_cost_per_attempt_usd is not None or policy.cost.require_complete_costs:
        return False, False
    return candidate in missing.sides, baseline is not None and baseline in missing.sides


def _labelled(label: str, missing: _Missing | None, blocked: tuple[bool, bool] = (False, False)) -> str:
    """The row's label, with the count of missing costs beside it when there are any (and what they block)."""
    if missing is None:
        return label
    cannot = " or ".join(w for w, b in zip(("pass", "be shown violated"), blocked, strict=True) if b)
    tail = f"; {_NO_CAP}: cannot {cannot}" if cannot else ""
    return f"{label} ({missing.text.split(' (e.g.')[0]}{tail})"


def _complete_required(kind: str, text: str, threshold: float, *, n_cases: int) -> RuleEvidence:
    reason = (
        f"[cost] require_complete_costs: {text}; a missing cost is insufficient evidence under this policy, "
        "never counted as 0"
    )
    return _missing(kind, reason, threshold, n_cases=n_cases)


def _bounded_ratio_evidence(
    frame: pl.DataFrame, policy: Policy, limit: float, sides: tuple[str, str], blocked: tuple[bool, bool]
) -> RuleEvidence:
    """The ratio row when costs are missing: "within" tested at the upper extreme, "above" at the lower.

    A side in ``blocked`` (pass, fail) rests on a cap the policy did not state: its p-value is 1.
    """
    baseline, candidate = sides
    extremes: list[CostRatio] = []
    for fill in ("upper", "lower"):
        try:
            ratio = cost_ratio(
                frame,
                baseline=baseline,
                candidate=candidate,
                fill_missing_costs=fill,
                max_cost_per_attempt_usd=policy.cost.max_cost_per_attempt_usd,
                **_rates(policy),
            )
        except (GatestatsError, ValueError) as exc:
            return _missing("cost_increase", str(exc), 1 + limit, n_cases=_n_cases(frame, candidate))
        extremes.append(ratio)
    upper, lower = extremes
    try:
        p_within = upper.decision_pvalues(1 + limit)[0]
        p_above = lower.decision_pvalues(1 + limit)[1]
    except (GatestatsError, ValueError) as exc:
        reason = f"with the missing costs bounded: {upper.reason or lower.reason or exc}"
        return _missing("cost_increase", reason, 1 + limit, upper.ratio, n_cases=upper.n_cases)
    no_pass, no_fail = blocked
    p_within, p_above = (1.0 if no_pass else p_within), (1.0 if no_fail else p_above)
    return _ratio_row(
        upper.ratio, (lower.ci_low, upper.ci_high), (p_within, p_above), limit, upper.n_cases, _BOUNDED["cost_increase"]
    )


def _ratio_evidence(
    frame: pl.DataFrame, policy: Policy, limit: float, baseline: str, candidate: str, *, missing: _Missing | None = None
) -> RuleEvidence:
    if missing is not None and policy.cost.require_complete_costs:
        return _complete_required("cost_increase", missing.text, 1 + limit, n_cases=_n_cases(frame, candidate))
    if missing is not None:
        blocked = _blocked(policy, missing, baseline, candidate)
        return _bounded_ratio_evidence(frame, policy, limit, (baseline, candidate), blocked)
    try:
        ratio = cost_ratio(frame, baseline=baseline, candidate=candidate, **_rates(policy))
    except (GatestatsError, ValueError) as exc:
        return _missing("cost_increase", str(exc), 1 + limit, n_cases=_n_cases(frame, candidate))
    try:
        p_within, p_above = ratio.decision_pvalues(1 + limit)
    except (GatestatsError, ValueError) as exc:
        return _missing("cost_increase", ratio.reason or str(exc), 1 + limit, ratio.ratio, n_cases=ratio.n_cases)
    return _ratio_row(
        ratio.ratio, (ratio.ci_low, ratio.ci_high), (p_within, p_above), limit, ratio.n_cases, _TESTS["cost_increase"]
    )


def _ratio_row(
    observed: float | None,
    ci: tuple[float | None, float | None],
    pvalues: tuple[float, float],
    limit: float,
    n_cases: int,
    test: str,
) -> RuleEvidence:
    """A ratio row's evidence: the ratio, its interval, and the p-values of "within" and "above" ``1 + limit``."""
    return RuleEvidence(
        kind="cost_increase",
        observed=observed,
        baseline=1.0,
        ci_low=ci[0],
        ci_high=ci[1],
        test=test,
        threshold=1 + limit,
        pvalue_pass=pvalues[0],
        pvalue_fail=pvalues[1],
        status="ok",
        reason=None,
        n_cases=n_cases,
    )


def _bounded_threshold_evidence(frame: pl.DataFrame, policy: Policy, threshold: float, candidate: str) -> RuleEvidence:
    """The threshold row when costs are missing: decided on the interval of the bounds (union of both extremes).

    Without a stated cap the upper end rests on the largest observed cost, an assumption: the row cannot pass.
    """
    cap = policy.cost.max_cost_per_attempt_usd
    try:
        analysis = cost_per_accepted(
            frame.filter(pl.col("system") == candidate),
            **_rates(policy),
            max_cost_per_attempt_usd=cap,
            cap_source="policy",
        )
    except (GatestatsError, ValueError) as exc:
        return _missing("cost_threshold", str(exc), threshold, n_cases=_n_cases(frame, candidate))
    est = analysis.groups[0] if analysis.groups else None
    bounds = None if est is None else est.missing_costs
    if est is None or bounds is None or bounds.interval_status != "ok":
        reason = "no candidate cost" if bounds is None else f"with the missing costs bounded: {bounds.interval_reason}"
        observed = None if bounds is None else bounds.estimate_high
        return _missing("cost_threshold", reason, threshold, observed, n_cases=_n_cases(frame, candidate))
    ev = _inverted(
        bounds, observed=bounds.estimate_high, threshold=threshold, n_cases=est.n_cases, test=_BOUNDED["cost_threshold"]
    )
    return replace(ev, pvalue_pass=1.0) if cap is None else ev


def _threshold_evidence(
    frame: pl.DataFrame, policy: Policy, threshold: float, candidate: str, *, missing: _Missing | None = None
) -> RuleEvidence:
    if missing is not None and policy.cost.require_complete_costs:
        return _complete_required("cost_threshold", missing.text, threshold, n_cases=_n_cases(frame, candidate))
    if missing is not None:
        return _bounded_threshold_evidence(frame, policy, threshold, candidate)
    try:
        analysis = cost_per_accepted(frame.filter(pl.col("system") == candidate), **_rates(policy))
    except (GatestatsError, ValueError) as exc:
        return _missing("cost_threshold", str(exc), threshold, n_cases=_n_cases(frame, candidate))
    est = analysis.groups[0] if analysis.groups else None
    if est is None or est.status != "ok" or est.interval_status != "ok":
        reason = "no candidate cost" if est is None else (est.reason or est.interval_reason or "no interval")
        observed, n_cases = (None, _n_cases(frame, candidate)) if est is None else (est.estimate, est.n_cases)
        return _missing("cost_threshold", reason, threshold, observed, n_cases=n_cases)
    return _inverted(
        est, observed=est.estimate, threshold=threshold, n_cases=est.n_cases, test=_TESTS["cost_threshold"]
    )


def _inverted(
    source: CostEstimate | MissingCosts, *, observed: float | None, threshold: float, n_cases: int, test: str
) -> RuleEvidence:
    """A threshold row from the inversion of ``source``'s interval (each end a one-sided bound)."""

    def bounds(alpha: float) -> tuple[float | None, float | None]:
        ci = source.confidence_interval(1 - 2 * alpha)
        return ci.ci_low, ci.ci_high

    p_above, p_within = interval_pvalues(bounds, threshold)
    return RuleEvidence(
        kind="cost_threshold",
        observed=observed,
        baseline=None,
        ci_low=source.ci_low,
        ci_high=source.ci_high,
        test=test,
        threshold=threshold,
        pvalue_pass=p_within,
        pvalue_fail=p_above,
        status="ok",
        reason=None,
        n_cases=n_cases,
    )


_TESTS = {
    "cost_increase": "paired case bootstrap of the CPA ratio (calibrated)",
    "cost_threshold": "case bootstrap of the CPA",
}
_BOUNDED = {kind: f"{test}, missing costs bounded" for kind, test in _TESTS.items()}


def _n_cases(frame: pl.DataFrame, candidate: str) -> int:
    """The candidate's cases: what a cost row that could not be computed still reports it looked at."""
    return frame.filter(pl.col("system") == candidate).select("case_id", "case_version").unique().height


def _missing(kind: str, reason: str, threshold: float, observed: float | None = None, *, n_cases: int) -> RuleEvidence:
    return RuleEvidence.insufficient(
        kind,  # type: ignore[arg-type]
        test=_TESTS[kind],
        threshold=threshold,
        reason=reason,
        n_cases=n_cases,
        observed=observed,
    )


def cost_rows(
    policy: Policy,
    both: pl.DataFrame,
    slices: pl.DataFrame,
    severe_cases: set[str],
    baseline: str,
    candidate: str,
    *,
    summary: bool = True,
) -> tuple[list[RuleResult], CostSummary | None]:
    """The cost rows of a verdict and the cost summary per side.

    The summary is computed whether or not the policy has a cost rule (the report shows it);
    only rows decide.

    Parameters
    ----------
    policy
        The registered policy (cost rules, rates, alpha, seed).
    both
        Both sides' records, ``system`` relabelled ``baseline`` / ``candidate``.
    slices
        Per case, its slices (``case_id``, ``slices``).
    severe_cases
        Cases of the severe slices (left out of sliced cost rules).
    baseline, candidate
        The side labels in ``both``.
    summary
        Compute the summary (``False``: the rows only, the summary ``None``; the gate's rows at the
        ends of the bounds, whose records no summary shows).

    Returns
    -------
    tuple
        The rule rows (before multiplicity) and the :class:`CostSummary` (``None`` without ``summary``).
    """
    rules = [r for r in policy.rules if r.metric == "cost_per_accepted"]
    rows: list[RuleResult] = []
    if policy.max_cost_increase is not None:
        limit = policy.max_cost_increase
        rule = Rule(
            name="cost per accepted outcome",
            metric="cost_per_accepted",
            slice="all",
            direction="lower",
            threshold=None,
            test="paired",
            margin=limit,
            alpha=policy.cost.alpha,
            action=policy.cost.action,
            k=1,
            grader=None,
        )
        missing = _missing_note(both, policy, (baseline, candidate))
        ev = _ratio_evidence(both, policy, limit, baseline, candidate, missing=missing)
        label = f"cost per accepted outcome rises by at most {limit:.0%}"
        blocked = (False, False) if missing is None else _blocked(policy, missing, baseline, candidate)
        rows.append(rule_result(rule, _labelled(label, missing, blocked), ev, margin=limit))
    for rule in rules:
        frame = both
        where = ""
        if rule.slice != "all":
            cases = set(slices.filter(pl.col("slices").list.contains(rule.slice)).get_column("case_id").to_list())
            frame = both.filter(pl.col("case_id").is_in(list(cases - severe_cases)))
            where = f" [{rule.slice}]"
        if rule.threshold is not None:
            missing = _missing_note(frame, policy, (candidate,))
            ev = _threshold_evidence(frame, policy, rule.threshold, candidate, missing=missing)
            label = f"{rule.name}: cost per accepted{where} ≤ ${rule.threshold:g}"
            blocked = (False, False) if missing is None else _blocked(policy, missing, None, candidate)
            rows.append(rule_result(rule, _labelled(label, missing, blocked), ev, margin=None))
        if rule.test == "paired":
            margin = float(rule.margin or 0.0)
            missing = _missing_note(frame, policy, (baseline, candidate))
            ev = _ratio_evidence(frame, policy, margin, baseline, candidate, missing=missing)
            label = f"{rule.name}: cost per accepted{where} rises by at most {margin:.0%}"
            blocked = (False, False) if missing is None else _blocked(policy, missing, baseline, candidate)
            rows.append(rule_result(rule, _labelled(label, missing, blocked), ev, margin=margin))
    return rows, (_summary(policy, both) if summary else None)


def _summary(policy: Policy, both: pl.DataFrame) -> CostSummary:
    """The cost per accepted outcome of each side, as the verdict's cost summary shows it (or why none)."""
    cap = policy.cost.max_cost_per_attempt_usd
    extra = {} if cap is None else {"max_cost_per_attempt_usd": cap, "cap_source": "policy"}
    try:
        analysis = cost_per_accepted(both, **_rates(policy), **extra)  # type: ignore[arg-type]
    except (GatestatsError, ValueError) as exc:
        return CostSummary(error=str(exc), max_cost_increase=policy.max_cost_increase)
    return CostSummary(per_system=analysis.to_dict(), max_cost_increase=policy.max_cost_increase)
