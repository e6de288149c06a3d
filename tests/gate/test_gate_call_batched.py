"""A small gate call made cheaper gives the same verdicts (issue 28, item 3: the observed end of a gate).

The curves of a verdict (pass^k and pass@k of both sides at k = 1..K) and its slice rates are read
from :func:`gatestats.estimators.analyze`, which computed one interval per k and metric
(:func:`~gatestats.estimators.case_mean_interval` on a one-row batch each) and summed each exact
value as a :class:`~fractions.Fraction`, one addition at a time. Now the intervals of one system
are computed in one batch (``intervals._case_mean_intervals``: every step but the bootstrap works
row by row) and the exact sum is taken over a common denominator in integers
(:func:`~gatestats.estimators.passk.pair_values`). :func:`_old_estimate` and
:func:`_old_pair_values` below are the functions as they were (word for word), kept as the
oracle: the analyses, and the whole verdict of ``evaluate_gate``, must be equal field for field
(floats ``==``) on seeded random gates and record sets: threshold and paired rules, pass^k and
pass@k at several k, slices, severe slices, groups, every multiplicity correction, both
``infra_retries``, infra errors and retries (unresolved attempts), costs present, partly missing
and absent, the cost limit and a cost rule, and every interval method of ``analyze``.

Session 43: the observed rule rows, the curves and the flips read the per-case summaries and the
pairings the gate already made (``engine.CaseFrames.summary`` and ``.pairing``,
``estimators.analyze.analyze_summary``) instead of reducing the same records again;
:func:`_old_rule_rows`, :func:`_old_curve_analysis` and :func:`_old_flips` are the functions as they
were. Gates whose case versions differ between the sides or within one, or whose slice one side
lacks, are compared too, and each rule's rows and the curves on their own (a refusal the verdict
shows only as the first of several).
"""

from __future__ import annotations

import importlib
import re
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
import pytest

from gatestats.cost import _frames, cost_per_accepted
from gatestats.errors import GatestatsError
from gatestats.estimators import case_summary, intervals, passk
from gatestats.estimators.analyze import METRICS, Analysis, MetricEstimate, analyze
from gatestats.estimators.intervals import case_mean_interval, case_mean_interval_at
from gatestats.estimators.passk import CasePairs, CaseValues
from gatestats.gate import RecordSet, bounds, engine, evaluate_gate, parse_policy, rules, sides, summaries
from gatestats.gate.bounds import End
from gatestats.gate.judge_labels import JudgeLabels
from gatestats.gate.policy import Policy, Rule
from gatestats.gate.registration import Registration
from gatestats.gate.sides import BASELINE, CANDIDATE
from gatestats.gate.verdict import RuleResult
from gatestats.paired import compare, compare_pair
from gatestats.paired.pairing import case_table, pair_table
from gatestats.vocabulary import (
    GATE_CORRECTIONS,
    INFRA_ERROR,
    TRIAL_KEY,
    InfraRetries,
    IntervalMethod,
    Metric,
    is_final_attempt,
    metric_spec,
)
from tests.gate.small_gates import record_set, records_frame

analyze_module = importlib.import_module("gatestats.estimators.analyze")  # the package names the function so
NOW = "2026-12-05T00:00:00Z"
REG = Registration(run_set="rs", policy_digest="d", registered_at=NOW, first_record_at=None, origin="register")


def _old_pair_values(pairs: CasePairs, *, k: int, metric: Metric) -> CaseValues:
    """``passk.pair_values`` as it was (session 40): the exact sum one Fraction addition at a time."""
    passk._exact(metric)  # checked
    table = np.full(pairs.n.size, np.nan)
    total = Fraction(0)
    for j, (n_j, c_j, count) in enumerate(zip(pairs.n.tolist(), pairs.c.tolist(), pairs.counts.tolist(), strict=True)):
        if n_j >= k:
            value, table[j] = passk._kept_value(metric, n_j, c_j, int(k))
            total += count * value
    return CaseValues(values=table[pairs.inverse], defined=pairs.case_n >= k, exact_sum=total)


def _old_estimate(
    cases: pl.DataFrame,
    *,
    pairs: CasePairs,
    metric: Metric,
    k: int,
    groups: npt.NDArray[Any] | None,
    method: IntervalMethod,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> MetricEstimate:
    """``analyze._estimate`` as it was (session 40): one :func:`case_mean_interval` per k and metric."""
    computed = _old_pair_values(pairs, k=k, metric=metric)
    short = pairs.case_n < k
    undefined = cases.filter(pl.Series(short)) if short.any() else None
    labels = (
        tuple(
            sorted(
                (
                    analyze_module._case_label(r)
                    for r in undefined.select("case_id", "case_version").iter_rows(named=True)
                ),
                key=analyze_module._natural_key,
            )
        )
        if undefined is not None
        else ()
    )
    base = analyze_module._EstimateBasis(
        metric=metric, k=k, confidence_level=confidence_level, n_cases=cases.height, undefined_cases=labels
    )
    empty: dict[str, Any] = dict.fromkeys(("estimate", "numerator", "denominator", *analyze_module._FROM_INTERVAL))
    name = metric_spec(metric).label(k)
    if cases.height == 0:
        return MetricEstimate(status="insufficient_evidence", reason="no cases", **base, **empty)
    if labels and undefined is not None:
        shown_cases = analyze_module._SHOWN_CASES
        shown = ", ".join(labels[:shown_cases]) + (" ..." if len(labels) > shown_cases else "")
        min_n = int(undefined["n"].min())  # type: ignore[arg-type]
        reason = (
            f"{name} is undefined for {len(labels)} of {cases.height} case(s) with fewer than {k} valid "
            f"trials (fewest: {min_n}): {shown}"
        )
        return MetricEstimate(status="insufficient_evidence", reason=reason, **base, **empty)
    values, total = computed.values, computed.exact_sum
    max_eff = float(cases["n"].sum()) / k
    interval = case_mean_interval(
        values,
        groups=groups,
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
        max_effective_n=max_eff,
    )
    return MetricEstimate(
        status=interval.status,
        reason=interval.reason,
        estimate=float(total / cases.height) if interval.status == "ok" else None,
        numerator=analyze_module._fraction_text(total),
        denominator=cases.height,
        **{name: getattr(interval, name) for name in analyze_module._FROM_INTERVAL},
        _values=values,
        _groups=groups,
        _max_effective_n=max_eff,
        _method=method,
        **base,
    )


def _old_mark_retried(frame: pl.DataFrame, infra_retries: InfraRetries) -> pl.DataFrame:
    """``bounds.mark_retried`` as it was (session 40: the window query also when no trial was retried). ``frame`` with the final attempt of every trial retried after an infra error marked unresolved.

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
    flag = pl.repeat(False, frame.height, dtype=pl.Boolean, eager=True).scatter(marked, True)
    return frame.with_columns(flag.alias(bounds.RETRIED))


def _old_threshold_pvalues(
    values: npt.NDArray[np.float64], groups: npt.NDArray[Any] | None, threshold: float, seed: int
) -> tuple[float, float]:
    """``rules._threshold_pvalues`` as it was (session 40): a whole ``case_mean_interval`` at each step."""
    return rules.interval_pvalues(lambda alpha: rules._one_sided_bounds(values, groups, alpha, seed), threshold)


def _old_estimates(cases: pl.DataFrame, *, ks: tuple[int, ...], **options: Any) -> tuple[MetricEstimate, ...]:
    """``_system_analysis``'s estimates as they were: k by k, metric by metric, each on its own."""
    return tuple(_old_estimate(cases, metric=metric, k=k, **options) for k in ks for metric in METRICS)


def _old_rule_rows(
    rule: Rule,
    frames: engine.CaseFrames,
    cases: set[str],
    policy: Policy,
    end: End,
    labels: JudgeLabels | None = None,
    counted: dict[int, Any] | None = None,
) -> list[RuleResult]:
    """``engine._rule_rows`` as it was (session 42): each observed row reduces its records itself.

    The threshold row its candidate's records (``case_summary``), each paired row its records again
    (``pair_cases``), where now one summary of a slice's records serves every row of the slice.
    """
    rows: list[RuleResult] = []
    if not cases:
        why = f"no case in slice {rule.slice!r} (outside the severe slices)"
        if rule.threshold is not None:
            rows.append(engine._undefined(rule, engine._threshold_label(rule), "threshold", why))
        if rule.test == "paired":
            rows.append(engine._undefined(rule, engine._paired_label(rule), "paired", why))
        return rows
    if counted is not None and end != "observed":
        key = policy.rules.index(rule)
        if key not in counted:
            unimputed = frames.of(cases, (rule.slice, False))
            judged = engine._judge_outcomes(unimputed, rule.grader) if rule.grader is not None else unimputed
            counted[key] = engine._EndCounts(rule, judged)
        return counted[key].rows(end, policy, labels)  # type: ignore[no-any-return]
    frame = engine._rule_frame(rule, frames, cases, end)
    if rule.threshold is not None:
        rows.append(
            engine._threshold_row(rule, case_summary(frame.filter(pl.col("system") == CANDIDATE)), policy, labels)
        )
    if rule.test == "paired":
        rows.append(engine._paired_row(rule, lambda: engine._paired_cases(rule, frame), policy))
    return rows


def _old_curve_analysis(both: pl.DataFrame, policy: Policy) -> Analysis | None:
    """``summaries.curve_analysis`` as it was (session 42): ``analyze`` reads the records again."""
    if both.height == 0:
        return None
    ks = range(1, summaries.curve_max_k(both, policy) + 1)
    return analyze(both, ks=ks, confidence_level=policy.confidence_level, seed=policy.seed)


def _old_flips(both: pl.DataFrame, summary: pl.DataFrame | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``sides.flips`` as it was (session 42): its own pairing, where a paired rule may now have made it."""
    try:
        if summary is None:
            cmp = compare(both, baseline=BASELINE, candidate=CANDIDATE, metric="pass_hat_k", k=1)
        else:  # as compare() pairs the records and compares them, with its default options
            paired = pair_table(case_table(summary), baseline=BASELINE, candidate=CANDIDATE)
            cmp = compare_pair(paired, sides._FLIP_OPTIONS)
    except (GatestatsError, ValueError):
        return (), ()
    return cmp.flips_pass_to_fail, cmp.flips_fail_to_pass


def _old_path(m: pytest.MonkeyPatch) -> None:
    """Put the old functions back where the new ones are read."""
    m.setattr(engine, "_rule_rows", _old_rule_rows)
    m.setattr(engine, "flips", lambda both, summary=None, pairing=None: _old_flips(both, summary))
    m.setattr(engine, "curve_analysis", lambda both, policy, summary=None: _old_curve_analysis(both, policy))
    m.setattr(analyze_module, "_estimates", _old_estimates)
    m.setattr(analyze_module, "pair_values", _old_pair_values)
    m.setattr(passk, "pair_values", _old_pair_values)  # case_values, per_case_values: the rule rows, pairings
    m.setattr(engine, "mark_retried", _old_mark_retried)
    m.setattr(rules, "_threshold_pvalues", _old_threshold_pvalues)
    m.setattr(_frames, "_check_values", _old_check_values)


def _draw(seed: int) -> tuple[Policy, RecordSet, RecordSet, str]:
    """A random small gate: rules, slices, groups, infra errors and retries, costs present, partly missing or absent."""
    rng = np.random.default_rng(seed)
    n_cases = int(rng.integers(1, 30))
    trials = int(rng.integers(1, 7))
    infra = float(rng.choice([0.0, 0.1, 0.3]))
    retry = float(rng.choice([0.0, 0.2]))
    ties = rng.random() < 0.2
    grouped = rng.random() < 0.3
    severe = rng.random() < 0.3
    costs = str(rng.choice(["absent", "present", "partial"]))
    shift = float(rng.choice([-0.2, 0.0, 0.15]))
    rows: dict[str, list[tuple[Any, ...]]] = {"baseline": [], "candidate": []}
    for i in range(n_cases):
        case = f"g{i % 4}-c{i:03d}" if grouped else f"c{i:03d}"
        tags = [str(rng.choice(["a", "b"]))] + (["sev"] if severe and rng.random() < 0.15 else [])
        p = float(rng.beta(2, 1.2))
        for t in range(trials):
            b = "passed" if rng.random() < p else "failed"
            c = b if ties else ("passed" if rng.random() < min(1.0, max(0.0, p + shift)) else "failed")
            for side, out, rate in (("baseline", b, 0.05), ("candidate", c, infra)):
                cost = None if costs == "partial" and rng.random() < 0.3 else round(float(rng.gamma(2, 0.01)), 6)
                attempt = 0
                if rng.random() < retry:
                    rows[side].append((case, t, 0, "infra_error", tags, cost))
                    attempt = 1
                final = "infra_error" if rng.random() < rate else out
                rows[side].append((case, t, attempt, final, tags, cost))
    rules = []
    for r in range(int(rng.integers(1, 4))):
        metric = str(rng.choice(["pass_rate", "pass_hat_k", "pass_at_k"]))
        k = 1 if metric == "pass_rate" else int(rng.integers(1, trials + 1))
        where = str(rng.choice(["all", "all", "a", "b"]))
        kind = str(rng.choice(["threshold", "paired", "both"]))
        text = f'[[rules]]\nname = "r{r}"\nmetric = "{metric}"\nslice = "{where}"\nalpha = {rng.choice([0.05, 0.2])}\n'
        text += "" if metric == "pass_rate" else f"k = {k}\n"
        if kind != "paired":
            text += f"threshold = {rng.choice([0.3, 0.5, 0.7])}\n"
        if kind != "threshold":
            text += 'test = "paired"\n' + (f"margin = {rng.choice([0.1, 0.2])}\n" if rng.random() < 0.6 else "")
        rules.append(text)
    if costs != "absent" and rng.random() < 0.5:
        rules.append('[[rules]]\nname = "spend"\nmetric = "cost_per_accepted"\ndirection = "lower"\nthreshold = 0.05\n')
    head = f"""format = "gatestats-policy/1"
name = "gate-call"
version = "1"
k = 1
min_cases = 1
min_trials = 1
max_infra_error_rate = 0.9
on_insufficient_evidence = "block"
seed = {int(rng.integers(0, 1000))}
confidence_level = {rng.choice([0.9, 0.95])}
multiplicity = "{rng.choice(GATE_CORRECTIONS)}"
infra_retries = "{rng.choice(["bounded", "counted"])}"
{"max_cost_increase = 0.2" if costs != "absent" and rng.random() < 0.5 else ""}
{'severe_slices = ["sev"]' if severe else ""}
{'case_grouping = "id_prefix:-"' if grouped else ""}

[baseline]
system = "baseline"

[candidate]
system = "candidate"

"""
    policy = parse_policy((head + "\n".join(rules)).encode())
    base, cand = (
        record_set(
            s, records_frame(s, [r[:5] for r in rows[s]], None if costs == "absent" else [r[5] for r in rows[s]])
        )
        for s in ("baseline", "candidate")
    )
    return policy, base, cand, costs


def _verdicts(seed: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The verdict of draw ``seed`` by the new path and by the old; what the draw covered."""
    policy, base, cand, costs = _draw(seed)
    new = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
    with monkeypatch.context() as m:
        _old_path(m)
        old = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
    assert new.to_dict() == old.to_dict(), seed
    assert new.rules == old.rules, seed  # the floats as floats, not as written
    assert new.curves == old.curves, seed
    assert new.slice_rates == old.slice_rates, seed
    assert new.cost == old.cost, seed
    return {
        "multiplicity": policy.multiplicity,
        "infra_retries": policy.infra_retries,
        "costs": costs,
        "cost_rows": sum(r.kind.startswith("cost") for r in new.rules),
        "cost_summary": new.cost is not None and new.cost.per_system is not None,
        "curves_ok": sum(p.status == "ok" for p in new.curves),
        "curves_undefined": sum(p.status != "ok" and "undefined" in (p.reason or "") for p in new.curves),
        "k_max": max((p.k for p in new.curves), default=0),
        "paired": sum(r.kind == "paired" for r in new.rules),
        "bounded": sum(r.unresolved is not None and r.unresolved.candidate > 0 for r in new.rules),
        "severe": len(new.severe_slices),
        "flips": len(new.flips_pass_to_fail) + len(new.flips_fail_to_pass),
        "retried": (policy.infra_retries, max(int(rs.records["attempt"].max() or 0) for rs in (base, cand)) > 0),
    }


def test_a_gate_call_gives_the_verdicts_of_the_old_path_on_many_random_gates(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = [_verdicts(seed, monkeypatch) for seed in range(10)]
    total = {
        key: sum(s[key] for s in seen)
        for key in (
            "cost_rows",
            "cost_summary",
            "curves_ok",
            "curves_undefined",
            "paired",
            "bounded",
            "severe",
            "flips",
        )
    }
    print(f"{len(seen)} draws: {total}")
    assert {s["infra_retries"] for s in seen} == {"bounded", "counted"}
    assert {s["multiplicity"] for s in seen} == set(GATE_CORRECTIONS)
    assert {s["costs"] for s in seen} == {"absent", "present", "partial"}
    assert {("bounded", True), ("bounded", False)} <= {s["retried"] for s in seen}  # retries marked, or none
    assert max(s["k_max"] for s in seen) >= 5  # curves at several k
    assert total["cost_rows"] >= 3
    assert total["cost_summary"] >= 8
    assert total["curves_ok"] >= 80
    assert total["curves_undefined"] >= 4
    assert total["paired"] >= 5
    assert total["bounded"] >= 5
    assert total["severe"] >= 2
    assert total["flips"] >= 10


def _frame(seed: int) -> pl.DataFrame:
    """Records of up to three systems: cases with 1 to 8 trials, groups, infra errors, constant systems."""
    rng = np.random.default_rng(seed)
    n_cases = int(rng.integers(1, 60))
    grouped = rng.random() < 0.4
    rows = []
    for system in ("a", "b", "c")[: int(rng.integers(1, 4))]:
        constant = rng.random() < 0.15
        trials, short = int(rng.integers(2, 9)), rng.random() < 0.3  # short: some cases with fewer trials
        for i in range(n_cases):
            p = float(rng.beta(1.5, 1.0))
            for t in range(int(rng.integers(1, trials + 1)) if short and rng.random() < 0.1 else trials):
                u = rng.random()
                out = (
                    "passed" if constant else "infra_error" if u < 0.05 else "passed" if rng.random() < p else "failed"
                )
                rows.append((system, f"c{i}", None, f"g{i % 5}" if grouped else None, t, 0, out))
    return pl.DataFrame(
        rows,
        schema=["system", "case_id", "case_version", "case_group", "trial", "attempt", "outcome"],
        orient="row",
    )


def _analyses(seed: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """``analyze`` of record set ``seed`` by the new path and the old: the estimates computed at k > 1."""
    records = _frame(seed)
    method: IntervalMethod = ("auto", "wilson", "clt", "bootstrap")[seed % 4]  # type: ignore[assignment]
    options = {"ks": range(1, 10), "confidence_level": (0.9, 0.95)[seed % 2], "method": method, "seed": seed}
    options["n_resamples"] = 200
    new = analyze(records, **options)  # type: ignore[arg-type]
    with monkeypatch.context() as m:
        _old_path(m)
        old = analyze(records, **options)  # type: ignore[arg-type]
    assert new.to_dict() == old.to_dict(), seed
    for s_new, s_old in zip(new.systems, old.systems, strict=True):
        assert s_new.estimates == s_old.estimates, seed  # every public field, floats ==
        for e_new, e_old in zip(s_new.estimates, s_old.estimates, strict=True):
            assert e_new._max_effective_n == e_old._max_effective_n, seed
            np.testing.assert_array_equal(
                np.asarray(e_new._values, dtype=float), np.asarray(e_old._values, dtype=float), strict=True
            )
    return sum(e.numerator is not None and e.k > 1 for s in new.systems for e in s.estimates)


def test_analyze_gives_the_estimates_of_the_old_path(monkeypatch: pytest.MonkeyPatch) -> None:
    computed = [_analyses(seed, monkeypatch) for seed in range(16)]
    assert sum(computed) >= 100  # estimates (an interval or its refusal) at several k, not only k = 1
    assert sum(c > 0 for c in computed) >= 10


def test_the_batched_intervals_refuse_what_each_interval_refuses() -> None:
    rows = [np.array([0.5, 1.0, 0.0]), np.array([0.5, np.nan, 0.0])]
    with pytest.raises(ValueError, match=re.escape("values must be case-level estimates in [0, 1] without NaN")):
        intervals._case_mean_intervals(rows, max_effective_n=[3.0, 3.0])
    with pytest.raises(ValueError, match="one cap per sample"):
        intervals._case_mean_intervals(rows[:1], max_effective_n=[3.0, 3.0])
    with pytest.raises(ValueError, match="the same cases"):
        intervals._case_mean_intervals([rows[0], rows[0][:2]], max_effective_n=[3.0, 2.0])
    mixed = intervals._case_mean_intervals([rows[0], rows[0]], max_effective_n=[None, 2.0])
    assert mixed == [case_mean_interval(rows[0]), case_mean_interval(rows[0], max_effective_n=2.0)]


def _old_check_values(frame: pl.DataFrame) -> None:
    """``cost._frames._check_values`` as it was (session 40): one filter per field, in order."""
    for name in _frames._REQUIRED:
        nulls = frame.filter(pl.col(name).is_null())
        if not nulls.is_empty():
            where = "a record" if name == "record_id" else f"record {nulls['record_id'][0]!r}"
            msg = f"records: {where}: field {name!r}: expected a value (got null); {nulls.height} record(s) in all"
            raise ValueError(msg)
    dupes = _frames._duplicate_keys(frame)
    if not dupes.is_empty():
        first = dupes.sort("__row").row(0, named=True)
        same = dupes.filter(pl.all_horizontal(pl.col(k).eq_missing(first[k]) for k in _frames._KEY))
        msg = (
            f"records: duplicate key (system, case_id, case_version, trial, attempt) = "
            f"{tuple(first[k] for k in _frames._KEY)!r} in records {_frames.record_ids_text(same['record_id'].to_list(), same.height)}"
        )
        raise ValueError(msg)
    for name in ("attempt", "trial"):
        _frames._first_bad(frame, pl.col(name) < 0, name, "an integer >= 0")
    for name in ("cost_usd", *_frames.COST_PARTS, "machine_seconds"):
        _frames._first_bad(
            frame, pl.col(name).is_nan() | pl.col(name).is_infinite() | (pl.col(name) < 0), name, "a number >= 0"
        )
    parts_set = pl.any_horizontal(pl.col(p).is_not_null() for p in _frames.COST_PARTS)
    _frames._first_bad(
        frame,
        pl.col("cost_usd").is_not_null() & parts_set,
        "cost_usd",
        "null when a cost part is set (spend would be counted twice)",
    )
    for name in _frames.TIMESTAMPS:
        _frames._first_bad(
            frame,
            pl.col(name).is_not_null() & pl.col(f"__{name}").is_null(),
            name,
            "an RFC 3339 timestamp with offset",
        )
    for start, end in (("started_at", "ended_at"), *_frames._INTERVALS):
        _frames._first_bad(
            frame,
            pl.col(f"__{end}") < pl.col(f"__{start}"),
            end,
            f"a time at or after {start}",
        )
    if frame.get_column("case_group").null_count() == frame.height:
        return  # no case carries a group: none carries two
    groups = (
        frame.group_by("case_id", "case_version")
        .agg(pl.col("case_group").unique().sort(nulls_last=True))
        .filter(pl.col("case_group").list.len() > 1)
    )
    if not groups.is_empty():
        row = groups.sort("case_id", "case_version").row(0, named=True)
        msg = (
            f"records: case {row['case_id']!r} carries several case_group values (got {row['case_group']}); "
            "a case belongs to exactly one group (or to none)"
        )
        raise ValueError(msg)


_PLANTS = ("negative cost", "nan part", "both costs", "duplicate", "null outcome", "negative trial", "bad time",
           "ends first", "two groups", "negative machine")  # fmt: skip


def _cost_records(seed: int) -> tuple[pl.DataFrame, list[str]]:
    """Cost records of two systems with up to three of :data:`_PLANTS` planted (none for a third of the seeds)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 40))
    frame = pl.DataFrame(
        {
            "record_id": [f"r{i}" for i in range(n)],
            "system": [("a", "b")[i % 2] for i in range(n)],
            "case_id": [f"c{i // 2}" for i in range(n)],
            "case_version": ["v1"] * n,
            "case_group": [f"g{i // 6}" if seed % 2 else None for i in range(n)],
            "trial": [0] * n,
            "attempt": [0] * n,
            "outcome": [str(rng.choice(["passed", "failed", "infra_error"])) for _ in range(n)],
            "cost_usd": [float(rng.gamma(2, 0.01)) if rng.random() < 0.7 else None for _ in range(n)],
            "cost_model_usd": [None] * n,
            "machine_seconds": [float(rng.integers(1, 100)) for _ in range(n)],
            "started_at": [f"2026-12-05T00:00:{i % 60:02d}Z" for i in range(n)],
            "ended_at": [f"2026-12-05T00:01:{i % 60:02d}Z" for i in range(n)],
        },
        schema_overrides={"cost_model_usd": pl.Float64, "case_group": pl.String},
    )
    plants = [] if seed % 3 == 0 else list(rng.choice(_PLANTS, size=int(rng.integers(1, 4)), replace=False))
    for plant in plants:
        i = int(rng.integers(0, n))
        at = pl.int_range(pl.len()) == i

        def put(column: str, value: Any, where: pl.Expr = at) -> pl.Expr:
            return pl.when(where).then(pl.lit(value)).otherwise(pl.col(column)).alias(column)

        if plant == "duplicate":
            frame = pl.concat([frame, frame[i].with_columns(pl.lit(f"dup{i}").alias("record_id"))])
            continue
        frame = frame.with_columns(
            {
                "negative cost": put("cost_usd", -1.0),
                "nan part": put("cost_model_usd", float("nan")),
                "both costs": put("cost_model_usd", 0.5),
                "null outcome": put("outcome", None),
                "negative trial": put("trial", -1),
                "bad time": put("started_at", "yesterday"),
                "ends first": put("ended_at", "2026-12-04T00:00:00Z"),
                "two groups": put(
                    "case_group", "other", (pl.int_range(pl.len()) == i) & (pl.int_range(pl.len()) % 2 == 0)
                ),
                "negative machine": put("machine_seconds", -5.0),
            }[plant]
        )
    return frame, plants


def _cost_result(frame: pl.DataFrame) -> Any:
    try:
        return cost_per_accepted(frame, machine_rate_usd_per_hour=1.0).to_dict()
    except ValueError as exc:
        return f"{type(exc).__name__}: {exc}"


def test_the_cost_checks_refuse_what_they_refused_first(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = 0
    for seed in range(45):
        frame, plants = _cost_records(seed)
        new = _cost_result(frame)
        with monkeypatch.context() as m:
            m.setattr(_frames, "_check_values", _old_check_values)
            old = _cost_result(frame)
        assert new == old, (seed, plants)
        refused += isinstance(new, str)
    assert refused >= 20  # most planted records are refused, each with the message the old order gave


def test_an_interval_as_a_function_of_the_level_is_the_interval_at_that_level() -> None:
    rng = np.random.default_rng(7)
    checked = 0
    for draw in range(60):
        n = int(rng.choice([1, 2, 3, 12, 40, 520]))
        values = np.round(rng.random(n) * 4) / 4 if draw % 3 else np.full(n, float(draw % 2))
        groups = None if draw % 2 else [f"g{i % max(1, n // 3)}" for i in range(n)]
        method = ("auto", "wilson", "clt", "bootstrap")[draw % 4]
        cap = None if draw % 5 else float(n) / 3
        options = {"groups": groups, "method": method, "n_resamples": 100, "seed": draw, "max_effective_n": cap}
        at = case_mean_interval_at(values, **options)  # type: ignore[arg-type]
        for level in (0.5, 0.9, 0.95, 1 - 2e-12, 0.8, 0.9):
            assert at(level) == case_mean_interval(values, confidence_level=level, **options), (draw, level)  # type: ignore[arg-type]
            checked += 1
    assert checked == 360
    with pytest.raises(ValueError, match="confidence_level"):
        case_mean_interval_at([0.5, 1.0])(1.5)
    with pytest.raises(ValueError, match="without NaN"):
        case_mean_interval_at([0.5, float("nan")])(0.9)


_EDGE_RULES = {
    "both": (
        '[[rules]]\nname = "t"\nmetric = "pass_rate"\nthreshold = 0.5\n'
        '[[rules]]\nname = "p"\nmetric = "pass_hat_k"\nk = 2\ntest = "paired"\nmargin = 0.1\n'
        '[[rules]]\nname = "b"\nmetric = "pass_rate"\nslice = "b"\nthreshold = 0.3\ntest = "paired"\n'
    ),
    "paired": '[[rules]]\nname = "p"\nmetric = "pass_rate"\ntest = "paired"\n',
}


def _edge_gate(versions: str, rules_text: str) -> tuple[Policy, RecordSet, RecordSet]:
    """A gate whose case versions or cases differ between or within the sides (the summaries' refusals)."""
    rows: dict[str, list[tuple[Any, ...]]] = {"baseline": [], "candidate": []}
    for i in range(12):
        for t in range(3):
            for side, kept in rows.items():
                tags = ["b"] if i % 3 == 0 else ["a"]
                if side == "baseline" and versions == "baseline-lacks-b" and tags == ["b"]:
                    continue
                outcome = "passed" if (i + t + (side == "candidate")) % 3 else "failed"
                kept.append((f"c{i:03d}", t, 0, outcome, tags))
    frames = {s: records_frame(s, r) for s, r in rows.items()}
    cand = frames["candidate"]
    if versions == "candidate-v2":  # one case at another version than the baseline's
        one = pl.col("case_id") == "c001"
        cand = cand.with_columns(pl.when(one).then(pl.lit("v2")).otherwise("case_version").alias("case_version"))
    if versions == "candidate-two-versions":  # one case at two versions on one side
        two = (pl.col("case_id") == "c001") & (pl.col("trial") == 0)
        cand = cand.with_columns(pl.when(two).then(pl.lit("v2")).otherwise("case_version").alias("case_version"))
    head = (
        'format = "gatestats-policy/1"\nname = "edge"\nversion = "1"\nk = 1\nmin_cases = 1\nmin_trials = 1\n'
        'max_infra_error_rate = 0.9\non_insufficient_evidence = "block"\nseed = 3\n\n'
        '[baseline]\nsystem = "baseline"\n\n[candidate]\nsystem = "candidate"\n\n'
    )
    policy = parse_policy((head + rules_text).encode())
    return policy, record_set("baseline", frames["baseline"]), record_set("candidate", cand)


def _outcome(policy: Policy, base: RecordSet, cand: RecordSet) -> Any:
    """The verdict's dict and rules, or the error's type and message."""
    try:
        verdict = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
    except Exception as exc:  # any error: the old path must raise the same
        return type(exc).__name__, str(exc)
    return verdict.to_dict(), verdict.rules, verdict.curves


@pytest.mark.parametrize("rules_text", sorted(_EDGE_RULES))
@pytest.mark.parametrize("versions", ["same", "candidate-v2", "candidate-two-versions", "baseline-lacks-b"])
def test_rows_read_from_one_summary_refuse_and_pair_as_before(
    versions: str, rules_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy, base, cand = _edge_gate(versions, _EDGE_RULES[rules_text])
    new = _outcome(policy, base, cand)
    with monkeypatch.context() as m:
        _old_path(m)
        old = _outcome(policy, base, cand)
    assert new == old
    _rows_and_curves_as_before(policy, base, cand)
    if versions == "candidate-two-versions":  # the threshold row's, or the curves' refusal, as before
        assert new[0] == "CaseSetError", new
        assert "several case versions" in new[1]
        return
    reasons = " ".join(r.reason or "" for r in new[1])
    if versions == "candidate-v2":  # the pairing's refusal, an undefined row
        assert "were run at different versions" in reasons
    if versions == "baseline-lacks-b" and rules_text == "both":  # a slice's pairing with one side only
        assert "no records for system 'baseline'" in reasons


def _caught(compute: Any) -> Any:
    """``compute()``, or its error's type and message."""
    try:
        return compute()
    except Exception as exc:  # any error: the old function must raise the same
        return type(exc).__name__, str(exc)


def _rows_and_curves_as_before(policy: Policy, base: RecordSet, cand: RecordSet) -> None:
    """Each rule's observed rows and the curves' analysis, new and old, on their own.

    A refusal the verdict shows only as the first of several (the threshold row's several versions,
    refused again by the curves with the same message) is compared where it is made.
    """
    both = engine._both_sides(policy, base, cand)
    summary = case_summary(both, allow_several_versions=True)
    slices = engine._case_slices(both)
    for rule in policy.rules:
        cases = engine._cases_of(slices, rule.slice, set())
        new = _caught(partial(engine._rule_rows, rule, engine.CaseFrames(both, summary), cases, policy, "observed"))
        old = _caught(partial(_old_rule_rows, rule, engine.CaseFrames(both), cases, policy, "observed"))
        assert new == old, rule.name
    new_curves = _caught(partial(summaries.curve_analysis, both, policy, summary))
    assert new_curves == _caught(partial(_old_curve_analysis, both, policy))
