"""Tests of ``gatestats.estimators.analyze``: pass@k / pass^k per system with case-level intervals.

Sources
-------
- τ-bench README leaderboard (sierra-research/tau-bench, commit 59a200c6), "Airline" table, row
  "TC (gpt-4o)": pass^1..4 = 0.420, 0.273, 0.220, 0.200; per-trial data from
  ``historical_trajectories/gpt-4o-airline.json`` (see data/tau_bench/PROVENANCE.md). τ-bench's own
  formula (``tau_bench/run.py``, ``display_metrics``): mean over tasks of
  ``comb(c, k) / comb(num_trials, k)`` with one global ``num_trials``.
- Chen et al. (2021), arXiv:2107.03374, section 2.1 (pass@k); Yao et al. (2024), arXiv:2406.12045
  (pass^k).
- Miller, E. (2024). Adding Error Bars to Evals. arXiv:2411.00640, eq. 1 (SE over questions) and
  eq. 4 (clustered SE).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from math import comb, sqrt
from pathlib import Path
from statistics import NormalDist
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.estimators import CaseSetError, analyze
from tests.hypothesis_counts import examples

AsFrame = Callable[[pl.DataFrame], pl.DataFrame | pl.LazyFrame]
FRAME_KINDS: dict[str, AsFrame] = {
    "DataFrame": lambda frame: frame,
    "LazyFrame": lambda frame: frame.lazy(),
}
RECORD_SCHEMA = {
    "system": pl.String,
    "case_id": pl.String,
    "case_version": pl.String,
    "case_group": pl.String,
    "trial": pl.Int64,
    "attempt": pl.Int64,
    "outcome": pl.String,
}
OUTCOMES = ("passed", "failed", "resource_killed", "infra_error")
# The bundled copy of the τ-bench data (data/tau_bench/, provenance in its PROVENANCE.md).
TAU_BENCH_DIR = Path(__file__).resolve().parents[2] / "data" / "tau_bench"
# Φ⁻¹(0.975), from the standard library, independent of the scipy call in the package.
Z_975 = NormalDist().inv_cdf(0.975)


@pytest.fixture(params=list(FRAME_KINDS), ids=list(FRAME_KINDS))
def as_frame(request: pytest.FixtureRequest) -> AsFrame:
    """Hand the function under test a DataFrame, then a LazyFrame (STYLE.md: both modes)."""
    return FRAME_KINDS[request.param]


def records(rows: Sequence[dict[str, Any]], extra: dict[str, Any] | None = None) -> pl.DataFrame:
    """Run records with defaults: system 's', no version, no group, attempt 0."""
    defaults = {"system": "s", "case_version": None, "case_group": None, "attempt": 0}
    schema = dict(RECORD_SCHEMA)
    if extra:
        schema.update(extra)
    return pl.DataFrame([{**defaults, **row} for row in rows], schema=schema)


def trials(case_id: str, outcomes: Sequence[str], **fields: Any) -> list[dict[str, Any]]:
    """One record per trial of one case, trial numbers 0.."""
    return [{"case_id": case_id, "trial": i, "outcome": o, **fields} for i, o in enumerate(outcomes)]


def tau_bench_file(name: str) -> Path:
    path = TAU_BENCH_DIR / name
    if not path.exists():
        pytest.fail(f"reference data {path} is missing")
    return path


@pytest.fixture(scope="module")
def tau_bench_airline() -> pl.DataFrame:
    """τ-bench gpt-4o airline trials (50 tasks x 4 trials) as gatestats run records."""
    raw = pl.read_csv(tau_bench_file("tau_bench_gpt4o_airline_trials.csv"))
    return raw.select(
        pl.lit("gpt-4o").alias("system"),
        pl.col("task_id").cast(pl.String).alias("case_id"),
        pl.lit(None, dtype=pl.String).alias("case_version"),
        pl.lit(None, dtype=pl.String).alias("case_group"),
        pl.col("trial").cast(pl.Int64),
        pl.lit(0, dtype=pl.Int64).alias("attempt"),
        pl.when(pl.col("success") == 1).then(pl.lit("passed")).otherwise(pl.lit("failed")).alias("outcome"),
    )


# --- τ-bench: the published numbers -----------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "published", "numerator"),
    [(1, 0.420, "21"), (2, 0.273, "41/3"), (3, 0.220, "11"), (4, 0.200, "10")],
)
def test_pass_hat_k_reproduces_tau_bench_readme_airline_gpt4o(
    tau_bench_airline: pl.DataFrame,
    as_frame: AsFrame,
    k: int,
    published: float,
    numerator: str,
) -> None:
    # README "Airline" table, row TC (gpt-4o): 0.420 / 0.273 / 0.220 / 0.200.
    estimate = analyze(as_frame(tau_bench_airline), ks=[1, 2, 3, 4]).system("gpt-4o").get("pass_hat_k", k)
    assert estimate.status == "ok"
    assert estimate.estimate is not None
    assert round(estimate.estimate, 3) == published
    assert estimate.numerator == numerator
    assert estimate.denominator == 50
    assert estimate.estimate == float(Fraction(numerator) / 50)
    assert estimate.ci_low is not None
    assert estimate.ci_high is not None
    assert estimate.ci_low < estimate.estimate < estimate.ci_high


@pytest.mark.parametrize(
    ("k", "expected", "numerator"),
    [(1, 0.42, "21"), (2, 0.5667, "85/3"), (3, 0.66, "33"), (4, 0.72, "36")],
)
def test_pass_at_k_on_tau_bench_airline_gpt4o_matches_provenance(
    tau_bench_airline: pl.DataFrame, k: int, expected: float, numerator: str
) -> None:
    # PROVENANCE.md: pass@k with 1 - C(n-c,k)/C(n,k) is 0.42 / 0.5667 / 0.66 / 0.72
    # (10 tasks pass all 4 trials, 14 pass none -> pass@4 = 36/50, pass^4 = 10/50).
    estimate = analyze(tau_bench_airline, ks=[1, 2, 3, 4]).system("gpt-4o").get("pass_at_k", k)
    assert estimate.status == "ok"
    assert estimate.estimate is not None
    assert round(estimate.estimate, 4) == expected
    assert estimate.numerator == numerator
    assert estimate.denominator == 50


def test_tau_bench_readme_reference_file_row_is_reproduced(tau_bench_airline: pl.DataFrame) -> None:
    reference = pl.read_csv(tau_bench_file("reference_tau_bench_readme_passk.csv"), infer_schema=False)
    row = reference.filter((pl.col("domain") == "airline") & (pl.col("strategy") == "TC (gpt-4o)")).row(0, named=True)
    system = analyze(tau_bench_airline, ks=[1, 2, 3, 4]).system("gpt-4o")
    for k in (1, 2, 3, 4):
        got = system.get("pass_hat_k", k).estimate
        assert got is not None
        assert f"{got:.3f}" == row[f"pass_hat_{k}"]


def test_tau_bench_airline_counts(tau_bench_airline: pl.DataFrame) -> None:
    # PROVENANCE.md: 200 records; successes per trial 21/22/20/21 = 84.
    system = analyze(tau_bench_airline).system("gpt-4o")
    assert (system.n_cases, system.n_trials, system.n_valid_trials, system.n_passed) == (
        50,
        200,
        200,
        84,
    )
    assert (system.n_infra_errors, system.n_resource_killed, system.clustered) == (0, 0, False)


def test_pass_hat_k_equals_tau_bench_display_metrics_formula_exactly(
    tau_bench_airline: pl.DataFrame,
) -> None:
    # tau_bench/run.py display_metrics: num_trials = len({trial}); per task comb(c, k) /
    # comb(num_trials, k); mean over tasks. Re-derived here with exact fractions.
    num_trials = tau_bench_airline["trial"].n_unique()
    c_per_task: dict[str, int] = {}
    for case_id, outcome in tau_bench_airline.select("case_id", "outcome").iter_rows():
        c_per_task[case_id] = c_per_task.get(case_id, 0) + (outcome == "passed")
    analysis = analyze(tau_bench_airline, ks=range(1, num_trials + 1))
    for k in range(1, num_trials + 1):
        tau_sum = sum((Fraction(comb(c, k), comb(num_trials, k)) for c in c_per_task.values()), Fraction(0))
        estimate = analysis.system("gpt-4o").get("pass_hat_k", k)
        assert Fraction(estimate.numerator) == tau_sum  # type: ignore[arg-type]
        assert estimate.estimate == float(tau_sum / len(c_per_task))


def test_per_case_n_differs_from_tau_bench_global_trial_count_when_a_trial_is_lost() -> None:
    # τ-bench scores every task against the global num_trials and records a crashed trial as
    # reward 0; gatestats drops the infra_error and uses the case's own n (DESIGN.md).
    frame = records(
        trials("a", ["passed", "passed", "passed", "infra_error"])
        + trials("b", ["passed", "failed", "failed", "failed"])
    )
    estimate = analyze(frame, ks=2).system("s").get("pass_hat_k", 2)
    # ours: a -> C(3,2)/C(3,2) = 1, b -> C(1,2)/C(4,2) = 0; mean 1/2
    assert (estimate.numerator, estimate.denominator, estimate.estimate) == ("1", 2, 0.5)
    # τ-bench: a -> C(3,2)/C(4,2) = 1/2, b -> 0; mean 1/4
    tau_bench = (Fraction(comb(3, 2), comb(4, 2)) + 0) / 2
    assert estimate.estimate != float(tau_bench)


# --- Miller (2024) standard errors ---------------------------------------------------------------


def test_clt_se_matches_miller_2024_eq_1_hand_computed(
    as_frame: AsFrame,
) -> None:
    # 2040 cases x 2 trials (the CLT interval is offered from 2000 cases): 680 pass both, 680 pass
    # one, 680 pass none.
    # pass@1 case values 1, 1/2, 0 (680 each): mean 1/2, Σ(s - s̄)² = 680/4 + 0 + 680/4 = 340,
    #   SE² = Σ(s - s̄)² / (N (N - 1)) = 340 / (2040 * 2039).
    # pass^2 case values 1 (680), 0 (1360): mean 1/3, Σ(s - s̄)² = 680*4/9 + 1360/9 = 1360/3,
    #   SE² = (1360/3) / (2040 * 2039).
    n_cases = 2040
    rows: list[dict[str, Any]] = []
    for i in range(n_cases):
        outcomes = [["passed", "passed"], ["passed", "failed"], ["failed", "failed"]][i % 3]
        rows += trials(f"case-{i:04d}", outcomes)
    system = analyze(as_frame(records(rows)), ks=[1, 2], method="clt").system("s")
    for metric, k, mean, se2 in (
        ("pass_at_k", 1, Fraction(1, 2), Fraction(340, n_cases * (n_cases - 1))),
        ("pass_hat_k", 2, Fraction(1, 3), Fraction(1360, 3 * n_cases * (n_cases - 1))),
    ):
        estimate = system.get(metric, k)  # type: ignore[arg-type]
        assert estimate.status == "ok"
        assert estimate.method == "clt"
        assert estimate.se == pytest.approx(sqrt(se2), rel=1e-12)
        assert estimate.estimate == pytest.approx(float(mean), rel=1e-15)
        assert estimate.ci_low == pytest.approx(float(mean) - Z_975 * sqrt(se2), rel=1e-9)
        assert estimate.ci_high == pytest.approx(float(mean) + Z_975 * sqrt(se2), rel=1e-9)


def test_clustered_se_matches_miller_2024_eq_4_hand_computed(
    as_frame: AsFrame,
) -> None:
    # 4000 one-trial cases in 2000 groups of two identical cases (1000 groups pass, 1000 fail; the
    # CLT interval is offered from 2000 units). s̄ = 1/2, every deviation ±1/2.
    # Eq. 1: SE² = 4000 * 1/4 / (4000 * 3999) = 1/15996.
    # Eq. 4 adds (1/N²) Σ_g Σ_{i≠j∈g} d_i d_j = (2000 * 2 * 1/4) / 4000² = 1/16000.
    rows: list[dict[str, Any]] = []
    for g in range(2000):
        outcome = "passed" if g < 1000 else "failed"
        for member in range(2):
            rows += trials(f"g{g:04d}-{member}", [outcome], case_group=f"g{g:04d}")
    system = analyze(as_frame(records(rows)), ks=1, method="clt").system("s")
    assert system.clustered is True
    estimate = system.get("pass_hat_k", 1)
    assert estimate.status == "ok"
    assert estimate.se == pytest.approx(sqrt(1 / 15996 + 1 / 16000), rel=1e-12)
    assert estimate.ci_low == pytest.approx(0.5 - Z_975 * sqrt(1 / 15996 + 1 / 16000), rel=1e-9)


def test_confidence_interval_method_reproduces_the_stored_interval(
    tau_bench_airline: pl.DataFrame,
) -> None:
    estimate = analyze(tau_bench_airline, ks=2, seed=11).system("gpt-4o").get("pass_hat_k", 2)
    again = estimate.confidence_interval(0.95)
    assert (again.ci_low, again.ci_high, again.method, again.seed) == (
        estimate.ci_low,
        estimate.ci_high,
        estimate.method,
        estimate.seed,
    )
    wider = estimate.confidence_interval(0.99)
    assert wider.ci_low is not None
    assert wider.ci_high is not None
    assert estimate.ci_low is not None
    assert estimate.ci_high is not None
    assert wider.ci_low <= estimate.ci_low
    assert wider.ci_high >= estimate.ci_high


# --- insufficient evidence and outcome semantics ----------------------------------------------


def test_case_thinned_below_k_by_infra_error_is_insufficient_and_named(
    as_frame: AsFrame,
) -> None:
    frame = records(
        trials("a", ["passed", "passed"])
        + trials("b", ["passed", "infra_error"], case_version="v3")
        + trials("c", ["failed", "passed"])
    )
    system = analyze(as_frame(frame), ks=[1, 2]).system("s")
    for metric, label in (("pass_hat_k", "pass^2"), ("pass_at_k", "pass@2")):
        estimate = system.get(metric, 2)  # type: ignore[arg-type]
        assert estimate.status == "insufficient_evidence"
        assert estimate.estimate is None  # never 0.0
        assert (estimate.ci_low, estimate.ci_high, estimate.se) == (None, None, None)
        assert (estimate.numerator, estimate.denominator) == (None, None)
        assert estimate.undefined_cases == ("b@v3",)
        assert estimate.reason == (
            f"{label} is undefined for 1 of 3 case(s) with fewer than 2 valid trials (fewest: 1): b@v3"
        )
    # at k = 1 every case is defined: (1 + 1 + 1/2) / 3, the infra error counted nowhere
    k1 = system.get("pass_hat_k", 1)
    assert k1.status == "ok"
    assert (k1.numerator, k1.denominator) == ("5/2", 3)
    assert system.n_infra_errors == 1
    assert system.n_valid_trials == 5


def test_infra_error_is_neither_pass_nor_failure_in_the_pass_rate(
    as_frame: AsFrame,
) -> None:
    frame = records(
        trials("a", ["passed", "infra_error", "failed", "infra_error"])
        + trials("b", ["infra_error", "passed", "passed", "passed"])
    )
    estimate = analyze(as_frame(frame)).system("s").get("pass_hat_k", 1)
    # a: 1/2 over valid trials (not 1/4, not 3/4); b: 3/3 (not 3/4) -> (1/2 + 1) / 2 = 3/4
    assert (estimate.numerator, estimate.denominator, estimate.estimate) == ("3/2", 2, 0.75)


def test_resource_killed_counts_as_a_valid_non_pass(
    as_frame: AsFrame,
) -> None:
    frame = records(trials("a", ["passed", "resource_killed"]) + trials("b", ["resource_killed", "resource_killed"]))
    system = analyze(as_frame(frame), ks=[1, 2]).system("s")
    assert (system.n_valid_trials, system.n_passed, system.n_resource_killed) == (4, 1, 3)
    assert system.get("pass_hat_k", 1).numerator == "1/2"  # (1/2 + 0)
    assert system.get("pass_at_k", 2).numerator == "1"  # (1 + 0)
    assert system.get("pass_hat_k", 2).numerator == "0"


def test_highest_attempt_wins_in_analyze(as_frame: AsFrame) -> None:
    frame = records(
        [
            {"case_id": "a", "trial": 0, "attempt": 1, "outcome": "passed"},
            {"case_id": "a", "trial": 0, "attempt": 0, "outcome": "failed"},
            {"case_id": "b", "trial": 0, "attempt": 0, "outcome": "passed"},
            {"case_id": "b", "trial": 0, "attempt": 1, "outcome": "failed"},
        ]
    )
    system = analyze(as_frame(frame)).system("s")
    assert system.get("pass_hat_k", 1).numerator == "1"  # a passed, b failed
    assert system.n_trials == 2


def test_system_with_zero_valid_trials_is_insufficient_everywhere(
    as_frame: AsFrame,
) -> None:
    frame = records(
        trials("a", ["infra_error", "infra_error"], system="broken")
        + trials("b", ["infra_error"], system="broken")
        + trials("a", ["passed", "failed"], system="fine")
        + trials("b", ["passed", "passed"], system="fine")
    )
    analysis = analyze(as_frame(frame), ks=[1, 2])
    assert [s.system for s in analysis.systems] == ["broken", "fine"]
    broken = analysis.system("broken")
    assert (broken.n_trials, broken.n_valid_trials, broken.n_infra_errors) == (3, 0, 3)
    for estimate in broken.estimates:
        assert estimate.status == "insufficient_evidence"
        assert estimate.estimate is None
        assert estimate.undefined_cases == ("a", "b")
    assert broken.get("pass_hat_k", 1).reason == (
        "pass^1 is undefined for 2 of 2 case(s) with fewer than 1 valid trials (fewest: 0): a, b"
    )
    assert broken.variance.status == "insufficient_evidence"
    fine = analysis.system("fine").get("pass_hat_k", 1)
    assert fine.status == "ok"
    assert fine.numerator == "3/2"


def test_insufficient_status_never_carries_an_estimate() -> None:
    # MetricEstimate's docstring: 'When status == "insufficient_evidence", estimate and interval
    # are None'. Here every case is defined, but an interval is impossible (one case) or not
    # offered (clt below 50 cases), so the status is insufficient_evidence.
    one_case = analyze(records(trials("a", ["passed", "failed"]))).system("s").get("pass_hat_k", 1)
    few_cases = (
        analyze(
            records(trials("a", ["passed", "failed"]) + trials("b", ["passed", "passed"])),
            method="clt",
        )
        .system("s")
        .get("pass_hat_k", 1)
    )
    for estimate in (one_case, few_cases):
        assert estimate.status == "insufficient_evidence"
        assert estimate.reason
        assert (estimate.ci_low, estimate.ci_high) == (None, None)
        assert estimate.estimate is None


def test_mixed_case_versions_raise_through_analyze(
    as_frame: AsFrame,
) -> None:
    frame = records(trials("a", ["passed"], case_version="1") + trials("a", ["failed"], case_version="2"))
    expected = (
        "case 'a' of system 's' has records at several case versions (got ['1', '2']); "
        "analyse one case-set version at a time"
    )
    with pytest.raises(CaseSetError, match=f"^{re.escape(expected)}$"):
        analyze(as_frame(frame))


@pytest.mark.parametrize(
    ("ks", "message"),
    [
        ([], "ks must name at least one k"),
        ([1, 0], "every k must be an integer >= 1 (got 0)"),
        ([True], "every k must be an integer >= 1 (got True)"),
    ],
)
def test_invalid_ks_raise_with_exact_message(ks: list[Any], message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        analyze(records(trials("a", ["passed"])), ks=ks)


# --- by=, clustering and output shapes ---------------------------------------------------------


def test_by_another_column_names_the_systems(as_frame: AsFrame) -> None:
    rows = (
        trials("a", ["passed", "passed"], model="m1")
        + trials("b", ["failed", "passed"], model="m1")
        + trials("a", ["failed", "failed"], model="m2")
        + trials("b", ["passed", "failed"], model="m2")
    )
    # the 'system' column is the same for all rows; 'model' is what separates them
    analysis = analyze(as_frame(records(rows, extra={"model": pl.String})), ks=[1, 2], by="model")
    assert analysis.by == "model"
    assert [s.system for s in analysis.systems] == ["m1", "m2"]
    assert analysis.system("m1").get("pass_hat_k", 1).numerator == "3/2"
    assert analysis.system("m2").get("pass_hat_k", 1).numerator == "1/2"
    assert analysis.system("m1").n_trials == 4


def test_by_a_column_shared_by_two_systems_keeps_every_trial() -> None:
    # The record key is (system, case_id, case_version, trial, attempt) (runner contract
    # RECORD_KEY): trial 0 of system A and trial 0 of system B are different trials. Grouping
    # by 'model', shared by A and B, must pool them -- 4 trials of case 'a', 2 passes -- not
    # keep one of each colliding pair, and must not depend on row order.
    rows = trials("a", ["passed", "passed"], system="A", model="m1") + trials(
        "a", ["failed", "failed"], system="B", model="m1"
    )
    frame = records(rows, extra={"model": pl.String})
    for ordered in (frame, frame.reverse()):
        system = analyze(ordered, by="model").system("m1")
        assert (system.n_trials, system.n_valid_trials, system.n_passed) == (4, 4, 2)
        assert system.get("pass_hat_k", 1).numerator == "1/2"


def test_by_an_integer_column_is_cast_to_text(as_frame: AsFrame) -> None:
    rows = trials("a", ["passed"], seed=1) + trials("a", ["failed"], seed=2)
    analysis = analyze(as_frame(records(rows, extra={"seed": pl.Int64})), by="seed")
    assert [s.system for s in analysis.systems] == ["1", "2"]


def test_by_a_missing_column_raises_with_exact_message() -> None:
    frame = records(trials("a", ["passed"]))
    expected = f"by: no column 'model' in the records (got {list(RECORD_SCHEMA)})"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        analyze(frame, by="model")


def test_by_a_column_with_nulls_raises_with_exact_message() -> None:
    frame = records(
        trials("a", ["passed"], model=None) + trials("b", ["passed"], model="m"),
        extra={"model": pl.String},
    )
    expected = "by: column 'model' is null for some records; every record needs a system"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        analyze(frame, by="model")


def test_clustered_flag_follows_case_group(as_frame: AsFrame) -> None:
    plain = records(trials("a", ["passed", "failed"]) + trials("b", ["passed", "passed"]))
    grouped = records(trials("a", ["passed", "failed"], case_group="g") + trials("b", ["passed", "passed"]))
    assert analyze(as_frame(plain)).system("s").clustered is False
    assert analyze(as_frame(grouped)).system("s").clustered is True
    assert analyze(as_frame(grouped)).to_dict()["systems"][0]["clustered"] is True


def test_to_dict_has_the_documented_json_shape(tau_bench_airline: pl.DataFrame) -> None:
    frame = pl.concat([tau_bench_airline, tau_bench_airline.with_columns(pl.lit("other").alias("system"))])
    result = analyze(frame, ks=[1, 2], seed=3).to_dict()
    json.dumps(result)  # JSON-ready: no numpy scalars, tuples of objects, NaN-free
    assert (result["ks"], result["by"], result["seed"], result["confidence_level"]) == (
        [1, 2],
        "system",
        3,
        0.95,
    )
    assert [s["system"] for s in result["systems"]] == ["gpt-4o", "other"]
    system = result["systems"][0]
    assert (system["n_cases"], system["n_trials"], system["n_infra_errors"]) == (50, 200, 0)
    assert set(system["k"]) == {"1", "2"}
    for k in ("1", "2"):
        assert set(system["k"][k]) == {"pass_hat_k", "pass_at_k"}
        for metric in ("pass_hat_k", "pass_at_k"):
            entry = system["k"][k][metric]
            assert {"estimate", "ci_low", "ci_high", "status", "numerator", "denominator"} <= set(entry)
            assert entry["status"] == "ok"
    assert system["k"]["1"]["pass_hat_k"]["estimate"] == 0.42
    assert system["k"]["2"]["pass_hat_k"]["numerator"] == "41/3"
    assert system["k"]["2"]["pass_hat_k"]["denominator"] == 50
    assert system["variance"]["status"] == "ok"


def test_to_dict_of_insufficient_estimate_uses_null_not_zero() -> None:
    result = analyze(records(trials("a", ["passed", "infra_error"])), ks=2).to_dict()
    entry = result["systems"][0]["k"]["2"]["pass_hat_k"]
    assert entry["status"] == "insufficient_evidence"
    assert (entry["estimate"], entry["ci_low"], entry["ci_high"]) == (None, None, None)
    assert entry["undefined_cases"] == ["a"]


def test_to_frame_has_fixed_columns_and_one_row_per_system_k_metric(
    as_frame: AsFrame,
) -> None:
    frame = records(
        trials("a", ["passed", "failed"], system="x")
        + trials("b", ["passed", "infra_error"], system="x")
        + trials("a", ["passed", "passed"], system="y")
    )
    table = analyze(as_frame(frame), ks=[1, 2]).to_frame()
    assert table.schema == pl.Schema(
        {
            "system": pl.String,
            "k": pl.Int64,
            "metric": pl.String,
            "status": pl.String,
            "estimate": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "method": pl.String,
            "numerator": pl.String,
            "denominator": pl.Int64,
            "n_cases": pl.Int64,
            "reason": pl.String,
        }
    )
    assert table.height == 2 * 2 * 2
    assert set(table.select("system", "k", "metric").rows()) == {
        (s, k, m) for s in ("x", "y") for k in (1, 2) for m in ("pass_hat_k", "pass_at_k")
    }
    undefined = table.filter((pl.col("system") == "x") & (pl.col("k") == 2))
    assert undefined["status"].to_list() == ["insufficient_evidence"] * 2
    assert undefined["estimate"].null_count() == 2


def test_to_frame_of_no_estimates_keeps_the_columns() -> None:
    # the schema is fixed even when a frame would otherwise be inferred from the rows
    table = analyze(records(trials("a", ["infra_error"]))).to_frame()
    assert table["estimate"].dtype == pl.Float64
    assert table["estimate"].null_count() == table.height


# --- hypothesis: exactness, oracle and row-order invariance -------------------------------------


@st.composite
def record_frames(draw: st.DrawFn) -> pl.DataFrame:
    """1-2 systems, 1-40 cases each, 1-5 trials per case, 1-2 attempts per trial."""
    rows: list[dict[str, Any]] = []
    grouped = draw(st.booleans())
    for system in draw(st.lists(st.sampled_from(["base", "cand"]), min_size=1, max_size=2, unique=True)):
        for case in range(draw(st.integers(min_value=1, max_value=40))):
            group = f"g{case % 7}" if grouped else None
            for trial in range(draw(st.integers(min_value=1, max_value=5))):
                outcomes = draw(st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=2))
                rows.extend(
                    {
                        "system": system,
                        "case_id": f"case-{case:02d}",
                        "case_group": group,
                        "trial": trial,
                        "attempt": attempt,
                        "outcome": outcome,
                    }
                    for attempt, outcome in enumerate(outcomes)
                )
    return records(rows)


def oracle_means(frame: pl.DataFrame, k: int) -> dict[tuple[str, str], Fraction | None]:
    """Mean over cases of the per-case estimators, from the raw records in plain Python."""
    final: dict[tuple[str, str, int], tuple[int, str]] = {}
    for row in frame.iter_rows(named=True):
        key = (row["system"], row["case_id"], row["trial"])
        if key not in final or row["attempt"] > final[key][0]:
            final[key] = (row["attempt"], row["outcome"])
    counts: dict[str, dict[str, list[int]]] = {}
    for (system, case_id, _), (_, outcome) in final.items():
        n_c = counts.setdefault(system, {}).setdefault(case_id, [0, 0])
        n_c[0] += outcome in ("passed", "failed", "resource_killed")
        n_c[1] += outcome == "passed"
    out: dict[tuple[str, str], Fraction | None] = {}
    for system, cases in counts.items():
        if any(n < k for n, _ in cases.values()):
            out[(system, "pass_at_k")] = out[(system, "pass_hat_k")] = None
            continue
        at = sum((1 - Fraction(comb(n - c, k), comb(n, k)) for n, c in cases.values()), Fraction(0))
        hat = sum((Fraction(comb(c, k), comb(n, k)) for n, c in cases.values()), Fraction(0))
        out[(system, "pass_at_k")] = at / len(cases)
        out[(system, "pass_hat_k")] = hat / len(cases)
    return out


@settings(max_examples=examples(40), deadline=None)
@given(frame=record_frames())
def test_estimate_is_exactly_numerator_over_denominator_and_matches_oracle(
    frame: pl.DataFrame,
) -> None:
    analysis = analyze(frame, ks=[1, 2, 3], n_resamples=200)
    for k in (1, 2, 3):
        expected = oracle_means(frame, k)
        for system in analysis.systems:
            for metric in ("pass_at_k", "pass_hat_k"):
                estimate = system.get(metric, k)  # type: ignore[arg-type]
                want = expected[(system.system, metric)]
                if want is None:
                    assert estimate.status == "insufficient_evidence"
                    assert estimate.estimate is None
                    assert estimate.undefined_cases
                    continue
                if estimate.status != "ok":
                    # every case is defined but no interval is possible (e.g. a single case)
                    assert estimate.ci_low is None
                    assert estimate.estimate in (None, float(want))
                    continue
                assert estimate.numerator is not None
                assert estimate.denominator == system.n_cases
                assert Fraction(estimate.numerator) / estimate.denominator == want
                assert estimate.estimate == float(want)


@settings(max_examples=examples(25), deadline=None)
@given(frame=record_frames(), data=st.data())
def test_analyze_is_invariant_to_row_order(frame: pl.DataFrame, data: st.DataObject) -> None:
    order = data.draw(st.permutations(range(frame.height)))
    original = analyze(frame, ks=[1, 2], n_resamples=200, seed=5)
    shuffled = analyze(frame[list(order)].lazy(), ks=[1, 2], n_resamples=200, seed=5)
    assert shuffled.to_dict() == original.to_dict()
    assert shuffled.to_frame().equals(original.to_frame())
