"""False-pass rate of paired gate rows with the candidate exactly at the margin (issue 12).

Two scenarios of ``docs/size_study.md`` run through :func:`evaluate_gate`: the regression
concentrated in a few cases, and cases in few groups. In both the population mean difference is
exactly ``-margin`` (the boundary of "the rule is violated"), so a ``pass`` is a false pass; it
must not happen more often than alpha plus two binomial standard errors. The old rule (case-level
t test with Miller's SE) passed these scenarios in 0.08-0.15 of replications (issue 12; the size
study's ``case t NI`` rows).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from gatestats.gate import RecordSet, Registration, evaluate_gate, parse_policy
from gatestats.records.contract import POLARS_SCHEMA
from tests.gate.factory import policy_text

ALPHA = 0.05


def _rule(margin: float) -> str:
    return f"""
[[rules]]
name = "pass rate non-inferior"
metric = "pass_rate"
test = "paired"
margin = {margin}
alpha = {ALPHA}
"""


def _records(system: str, p: np.ndarray, trials: int, rng: np.random.Generator, groups: np.ndarray | None
             ) -> pl.DataFrame:  # fmt: skip
    passed = rng.random((p.size, trials)) < p[:, None]
    n = p.size * trials
    frame = pl.DataFrame(
        {
            "schema_version": [1] * n,
            "record_id": [f"{system}-{i}" for i in range(n)],
            "run_set_id": [f"rs-{system}"] * n,
            "system": [system] * n,
            "case_id": np.repeat([f"c{i:04d}" for i in range(p.size)], trials),
            "case_version": ["v1"] * n,
            "case_group": None if groups is None else np.repeat([f"g{g:03d}" for g in groups], trials),
            "trial": np.tile(np.arange(trials), p.size),
            "attempt": [0] * n,
            "outcome": np.where(passed.ravel(), "passed", "failed"),
            "model_id": ["model-new"] * n,
            "system_digest": ["sd"] * n,
        }
    )
    return frame.with_columns(
        [pl.lit(None, dtype=dtype).alias(name) for name, dtype in POLARS_SCHEMA.items() if name not in frame.columns]
    ).select(list(POLARS_SCHEMA))


def _set(name: str, records: pl.DataFrame) -> RecordSet:
    manifest = {"complete": True, "cases": [{"case_id": c, "case_version": "v1"} for c in records["case_id"].unique()]}
    return RecordSet(path=Path(name), kind="run_set", manifest=manifest, records=records, files=(), digest=name)


def _pass_rate(
    *,
    n_cases: int,
    trials: int,
    margin: float,
    broken_share: float,
    group_size: int,
    reps: int,
    seed: int,
    at_margin: bool = True,
) -> tuple[float, dict[str, int]]:
    """Share of ``pass`` decisions of the rule row, candidate exactly at the margin (or equal to the baseline).

    The row decision is counted, not the verdict: the verdict also blocks on preconditions (records
    without checksums here) that say nothing about the statistics.

    Each case (or group of ``group_size`` cases) is broken with probability ``broken_share``: the
    baseline passes it always, the candidate with probability ``1 - margin / broken_share``; the
    other cases are unchanged (``p ~ Beta(2, 1)``). The mean difference is ``-margin``; with
    ``at_margin=False`` nothing is broken for the candidate (difference 0: the power).
    """
    rng = np.random.default_rng(seed)
    drop = margin / broken_share if at_margin else 0.0
    assert drop <= 1
    text = policy_text(_rule(margin), k=1, min_trials=trials, min_cases=n_cases)
    text = text.replace('pins = { model_id = "model-new" }', "")
    policy = parse_policy(text.encode())
    reg = Registration(
        run_set="x", policy_digest=policy.digest, registered_at="t", first_record_at=None, origin="runner"
    )
    n_groups = n_cases // group_size
    groups = np.repeat(np.arange(n_groups), group_size) if group_size > 1 else None
    verdicts: list[str] = []
    for _ in range(reps):
        broken = np.repeat(rng.random(n_groups) < broken_share, group_size)
        p_b = np.where(broken, 1.0, rng.beta(2.0, 1.0, n_cases))
        p_c = np.where(broken, 1.0 - drop, p_b)
        base = _set("baseline", _records("baseline", p_b, trials, rng, groups))
        cand = _set("candidate", _records("candidate", p_c, trials, rng, groups))
        verdicts.append(evaluate_gate(policy, base, cand, registration=reg, now="t").rules[0].decision)
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    return counts.get("pass", 0) / reps, counts


def _limit(reps: int) -> float:
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


@pytest.mark.simulation
def test_regression_concentrated_in_five_cases_is_not_passed_more_than_alpha() -> None:
    # 100 cases x 20 trials, margin 0.05: about 5 cases broken completely (the size study's conc-5).
    reps = 200
    setting = {"n_cases": 100, "trials": 20, "margin": 0.05, "broken_share": 0.05, "group_size": 1}
    rate, counts = _pass_rate(**setting, reps=reps, seed=121)  # type: ignore[arg-type]
    power, shown = _pass_rate(**setting, reps=50, seed=131, at_margin=False)  # a sanity check: 50 do  # type: ignore[arg-type]
    print(f"concentrated: at the margin {counts}; candidate equal to the baseline {shown}")
    assert rate <= _limit(reps), counts
    assert power >= 0.25, shown  # the gate is not blocking everything: about 0.4 in the size study's terms


@pytest.mark.simulation
def test_few_case_groups_at_the_margin_are_not_passed_more_than_alpha() -> None:
    # 40 groups of 5 cases, 4 trials, margin 0.2: a fifth of the groups broken (the size study's groups-40x5).
    reps = 200
    setting = {"n_cases": 200, "trials": 4, "margin": 0.2, "broken_share": 0.2, "group_size": 5}
    rate, counts = _pass_rate(**setting, reps=reps, seed=122)  # type: ignore[arg-type]
    power, shown = _pass_rate(**setting, reps=50, seed=132, at_margin=False)  # a sanity check: 50 do  # type: ignore[arg-type]
    print(f"groups: at the margin {counts}; candidate equal to the baseline {shown}")
    assert rate <= _limit(reps), counts
    assert power >= 0.25, shown


def test_twenty_groups_say_insufficient_evidence_with_the_groups_needed() -> None:
    rng = np.random.default_rng(5)
    text = policy_text(_rule(0.1), k=1, min_trials=4, min_cases=100).replace('pins = { model_id = "model-new" }', "")
    policy = parse_policy(text.encode())
    reg = Registration(
        run_set="x", policy_digest=policy.digest, registered_at="t", first_record_at=None, origin="runner"
    )
    groups = np.repeat(np.arange(20), 5)
    p = rng.beta(2.0, 1.0, 100)
    verdict = evaluate_gate(
        policy,
        _set("baseline", _records("baseline", p, 4, rng, groups)),
        _set("candidate", _records("candidate", p, 4, rng, groups)),
        registration=reg,
        now="t",
    )
    row = verdict.rules[0]
    assert (verdict.verdict, row.decision, row.test) == (
        "insufficient_evidence",
        "insufficient_evidence",
        "bounded-mean betting test",
    )
    assert row.reason is not None
    assert row.reason.endswith("with 20 independent case groups: at least 44 groups (about 220 cases) are needed")
    assert row.cases_needed == 220


def test_identical_deterministic_systems_pass_non_inferiority_without_an_interval() -> None:
    # Every per-case difference is 0: no interval can be drawn (no spread), yet the bounded-mean test is
    # valid and 150 clean cases show "not worse by 0.05" (p = 0.0044 <= 0.05); the old t rule said
    # insufficient evidence here.
    rng = np.random.default_rng(8)
    text = policy_text(_rule(0.05), k=1, min_trials=3, min_cases=150).replace('pins = { model_id = "model-new" }', "")
    policy = parse_policy(text.encode())
    reg = Registration(
        run_set="x", policy_digest=policy.digest, registered_at="t", first_record_at=None, origin="runner"
    )
    p = (rng.random(150) < 0.7).astype(float)
    verdict = evaluate_gate(
        policy,
        _set("baseline", _records("baseline", p, 3, rng, None)),
        _set("candidate", _records("candidate", p, 3, rng, None)),
        registration=reg,
        now="t",
    )
    row = verdict.rules[0]
    assert (row.decision, row.test) == ("pass", "bounded-mean betting test")
    assert row.pvalue_pass == pytest.approx(0.0043671, abs=1e-6)
    assert (row.ci_low, row.ci_high) == (None, None)
