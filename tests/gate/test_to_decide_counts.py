"""``to_decide`` from per-case counts is the search it replaced, row for row (issue 28, item 3).

``engine._to_decide`` searches the fewest of the candidate's unresolved attempts that, counted as
passes, make a row between its bounds pass. It evaluated the whole rule again at every step (the
records imputed by :func:`~gatestats.gate.bounds.imputed_passes`, new frames, the rule's rows at
the pessimistic end); it now reduces the records to per-case counts once and changes the counts of
the imputed cases (``engine._ImputedPasses``). :func:`_old_to_decide` below is the search as it
was, kept as the oracle: every row of many random policies and run sets (threshold and paired
rules, pass^k and pass@k, slices, severe slices, each multiplicity correction, both
``infra_retries``, groups, ties, every candidate attempt unresolved, none) must come out equal,
field for field (the floats bit for bit).

The paired rows now pair the cases once per row (:func:`~gatestats.gate.rules.paired_cases_evidence`);
:func:`_old_paired_evidence` is the row as it was (:func:`gatestats.paired.compare` on the records,
once per test) and must give the same evidence.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatestats.gate import RecordSet, engine, parse_policy
from gatestats.gate.bounds import imputed_passes, unresolved_keys
from gatestats.gate.families import decide_families
from gatestats.gate.policy import Policy, Rule
from gatestats.gate.rules import RuleEvidence, paired_evidence
from gatestats.gate.verdict import RuleResult
from gatestats.paired import compare
from gatestats.paired.search import fewest
from gatestats.vocabulary import GATE_CORRECTIONS, metric_spec
from tests.gate.small_gates import record_set, records_frame
from tests.hypothesis_counts import examples
from tests.simulations import reps

CANDIDATE, BASELINE = engine.CANDIDATE, engine.BASELINE


def _old_to_decide(
    policy: Policy, both: pl.DataFrame, row: RuleResult, slices: pl.DataFrame, frames: engine.CaseFrames
) -> RuleResult:
    """The search before the counts (session 38's ``engine._to_decide``): the rule re-evaluated at every step."""
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
    cases = engine._cases_of(slices, rule.slice, engine._severe_cases(slices, policy.severe_slices))
    frame = frames.of(cases, (rule.slice, False))
    keys = unresolved_keys(frame, candidate=CANDIDATE)

    def passes(j: int) -> bool:
        imputed = engine.CaseFrames(imputed_passes(frame, keys[: min(j, len(keys))], candidate=CANDIDATE))
        found = engine._rule_rows(rule, imputed, cases, policy, "pessimistic")
        same = [r for r in found if r.kind == row.kind]
        p = same[0].pvalue_pass if same and same[0].decision != "insufficient_evidence" else None
        return p is not None and p * factor <= row.alpha

    if not passes(len(keys)):
        return row
    fewest_passes = min(fewest(passes, 0, limit=2 * len(keys)) or len(keys), len(keys))
    return replace(row, unresolved=replace(bound, to_decide=len(keys) - fewest_passes))


def _outcome(rng: np.random.Generator, p: float) -> str:
    u = rng.random()
    return "resource_killed" if u < 0.03 else "passed" if rng.random() < p else "failed"


def _draw(seed: int) -> tuple[Policy, RecordSet, RecordSet]:
    """A random policy and run sets whose rows often sit between their bounds."""
    rng = np.random.default_rng(seed)
    n_cases = int(rng.integers(1, 36))
    trials = int(rng.integers(1, 4))
    infra = float(rng.choice([0.0, 0.1, 0.25, 0.5, 1.0], p=[0.1, 0.3, 0.3, 0.2, 0.1]))
    infra_base = float(rng.choice([0.0, 0.1, 0.3]))
    retry = float(rng.choice([0.0, 0.2, 0.5]))
    ties = rng.random() < 0.25  # the baseline's outcomes are the candidate's (before its infra errors)
    grouped = rng.random() < 0.3
    severe = rng.random() < 0.3
    shift = float(rng.choice([-0.15, 0.0, 0.1, 0.25]))
    base_rows: list[tuple[str, int, int, str, list[str]]] = []
    cand_rows: list[tuple[str, int, int, str, list[str]]] = []
    for i in range(n_cases):
        case = f"g{i % 4}-c{i:03d}" if grouped else f"c{i:03d}"
        tags = [str(rng.choice(["a", "b"]))] + (["sev"] if severe and rng.random() < 0.15 else [])
        p = float(rng.beta(2, 1.2))
        for t in range(trials):
            b = _outcome(rng, p)
            c = b if ties else _outcome(rng, min(1.0, max(0.0, p + shift)))
            for rows, out, rate in ((base_rows, b, infra_base), (cand_rows, c, infra)):
                attempt = 0
                if rng.random() < retry:  # an infra error retried: the retry's outcome (maybe infra again)
                    rows.append((case, t, 0, "infra_error", tags))
                    attempt = 1
                final = "infra_error" if rng.random() < rate else out
                rows.append((case, t, attempt, final, tags))
    rules = []
    for r in range(int(rng.integers(1, 4))):
        metric = str(rng.choice(["pass_rate", "pass_rate", "pass_hat_k", "pass_at_k"]))
        k = 1 if metric == "pass_rate" else int(rng.integers(1, trials + 1))
        where = str(rng.choice(["all", "all", "a", "b"]))
        kind = str(rng.choice(["threshold", "paired", "both"]))
        text = f'[[rules]]\nname = "r{r}"\nmetric = "{metric}"\nslice = "{where}"\nalpha = {rng.choice([0.05, 0.2])}\n'
        text += "" if metric == "pass_rate" else f"k = {k}\n"
        if kind != "paired":
            text += f"threshold = {rng.choice([0.2, 0.4, 0.5, 0.6, 0.7, 0.85])}\n"
        if kind != "threshold":
            text += 'test = "paired"\n' + (f"margin = {rng.choice([0.1, 0.2])}\n" if rng.random() < 0.6 else "")
        rules.append(text)
    head = f"""format = "gatestats-policy/1"
name = "to-decide"
version = "1"
k = 1
min_cases = 1
min_trials = 1
max_infra_error_rate = 0.9
on_insufficient_evidence = "block"
seed = {int(rng.integers(0, 1000))}
multiplicity = "{rng.choice(GATE_CORRECTIONS)}"
infra_retries = "{rng.choice(["bounded", "counted"])}"
{'severe_slices = ["sev"]' if severe else ""}
{'case_grouping = "id_prefix:-"' if grouped else ""}

[baseline]
system = "baseline"

[candidate]
system = "candidate"

"""
    policy = parse_policy((head + "\n".join(rules)).encode())
    return (
        policy,
        record_set(BASELINE, records_frame(BASELINE, base_rows)),
        record_set(CANDIDATE, records_frame(CANDIDATE, cand_rows)),
    )


def _compared(seed: int) -> tuple[int, int]:
    """Old and new ``to_decide`` of every row of draw ``seed``: (rows searched, rows given a number)."""
    policy, base, cand = _draw(seed)
    both = engine._both_sides(policy, base, cand)
    found = engine._bounded_evidence(policy, both, None)
    assert found.slices is not None
    assert found.frames is not None
    rows = decide_families(list(found.rows), policy.multiplicity, engine._pre_data(policy, both, found.slices))
    searched = numbered = 0
    for row in rows:
        new = engine._to_decide(policy, both, row, found.slices, found.frames)
        old = _old_to_decide(policy, both, row, found.slices, found.frames)
        assert new == old, (seed, row.row)
        searched += row.unresolved is not None and row.decision == "insufficient_evidence"
        numbered += new.unresolved is not None and new.unresolved.to_decide is not None
    return searched, numbered


#: Seeded random gates compared (issue 28, item 3; sessions 41 and 47): the first 5 of the 40 in the suite (12 rows
#: between the bounds, 3 given a number), the fewest at which both planted breaks named below still fail it (the
#: off-by-one fails at seed 0, counting retried keys first at seed 4; RESULTS.md, session 47). Minimums per 40 draws.
GATE_DRAWS = reps(suite=5, full=40)


# Out of the fast loop (issue 28, item 3: 10 CPU-s, the largest single test there); the whole suite runs GATE_DRAWS seeds.
# The fast loop keeps the identity on fresh seeds: the property test below (planted off-by-one in the imputed keys and
# counting retried keys: each fails it at the inner loop's 10 examples, 3 runs of 3; session 47: counting retried keys
# failed it in 7 of 10 runs at 10 examples, 9 of 10 at 20 - this seeded test fails on it every time, at seed 4).
@pytest.mark.slow
def test_to_decide_from_counts_is_the_search_it_replaced_on_many_random_gates() -> None:
    searched = numbered = 0
    for seed in range(GATE_DRAWS):
        s, n = _compared(seed)
        searched, numbered = searched + s, numbered + n
    print(f"rows between the bounds: {searched}, given a to_decide: {numbered}")
    assert searched >= math.ceil(40 * GATE_DRAWS / 40)  # the draws reach the search
    assert numbered >= math.ceil(10 * GATE_DRAWS / 40)  # and it often finds a number


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=1000, max_value=2**32 - 1))
def test_to_decide_from_counts_is_the_search_it_replaced_property(seed: int) -> None:
    _compared(seed)


def _old_paired_evidence(records: pl.DataFrame, rule: Rule, policy: Policy) -> dict[str, Any]:
    """The paired row's p-values, test and counts as session 38 computed them (``compare`` on the records per test)."""
    margin = float(rule.margin or 0.0)
    options: dict[str, Any] = {
        "baseline": BASELINE,
        "candidate": CANDIDATE,
        "metric": metric_spec(rule.metric).estimand or "pass_at_k",
        "k": rule.k,
        "confidence_level": policy.confidence_level,
        "alpha": rule.alpha,
        "seed": policy.seed,
    }
    if margin > 0:
        cmp = compare(records, margin=margin, **options)
        ni = cmp.noninferiority
        p_pass, p_fail = (None, None) if ni is None else (ni.pvalue, ni.pvalue_worse)
    else:
        cmp = compare(records, alternative="greater", test="exact", **options)
        if cmp.design == "one_trial" and not cmp.clustered:
            p_pass, p_fail = cmp.pvalue, compare(records, alternative="less", test="exact", **options).pvalue
        elif cmp.undefined_cases:
            p_pass = p_fail = None
        else:
            p_pass, p_fail = cmp.mean_difference_pvalues(margin=0.0)
    return {
        "pvalue_pass": p_pass,
        "pvalue_fail": p_fail,
        "observed": cmp.p_candidate,
        "baseline": cmp.p_baseline,
        "ci_low": cmp.diff_ci_low,
        "ci_high": cmp.diff_ci_high,
        "n_cases": cmp.n_pairs,
        "flips_pass_to_fail": cmp.flips_pass_to_fail,
        "flips_fail_to_pass": cmp.flips_fail_to_pass,
    }


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


#: Seeds (every fifth) of the paired-once draws (issue 28, item 3, session 47): the first 5 of the 40 in the suite and
#: the inner loop, the fewest at which each planted break still fails it: the McNemar row's worse tail two-sided (the
#: break of session 39) first at seed 20; the non-inferiority row's worse p-value its better one, and the bounded-mean
#: test's two p-values swapped, at seed 0 (RESULTS.md, session 47).
PAIRED_ONCE_DRAWS = reps(suite=5, full=40)


@pytest.mark.parametrize("seed", range(0, 5 * PAIRED_ONCE_DRAWS, 5))
def test_a_paired_row_on_cases_paired_once_is_the_row_compare_gave(seed: int) -> None:
    policy, base, cand = _draw(seed)
    both = engine._both_sides(policy, base, cand)
    for rule in (r for r in policy.rules if r.test == "paired"):
        for end in ("observed", "pessimistic", "optimistic"):
            frame = engine._rule_frame(rule, engine.CaseFrames(both), set(both["case_id"].to_list()), end)  # type: ignore[arg-type]
            try:
                old = _old_paired_evidence(frame, rule, policy)
            except ValueError as exc:  # the pairing fails: so must the new row
                with pytest.raises(type(exc)):
                    paired_evidence(frame, rule=rule, baseline=BASELINE, candidate=CANDIDATE, alpha=rule.alpha,
                                    confidence_level=policy.confidence_level, seed=policy.seed)  # fmt: skip
                continue
            new: RuleEvidence = paired_evidence(frame, rule=rule, baseline=BASELINE, candidate=CANDIDATE,
                                                alpha=rule.alpha, confidence_level=policy.confidence_level,
                                                seed=policy.seed)  # fmt: skip
            for name, value in old.items():
                assert _same(getattr(new, name), value), (seed, rule.name, end, name)
