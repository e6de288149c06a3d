"""Cases or trials: the sample-size formulas that split variance between cases and trials.

Model (Miller 2024, arXiv:2411.00640, sections 3 and 5): case i has success probability θ_i; with
K trials per case the mean pass rate over n cases has variance (ω² + σ²/K)/n, ω² = Var(θ_i),
σ² = E[θ_i(1 - θ_i)], and n(K) = (z_{1-α/2} + z_{1-β})² (ω² + σ²/K) / δ² cases detect δ.

Worked example (by hand): ω² = 0.04, σ² = 0.12, δ = 0.05, α = 0.05 two-sided, power 0.8:
(1.959964 + 0.841621)² = 7.848879; / 0.0025 = 3139.55; K = 1: 0.16 × 3139.55 = 502.3 → 503;
K = 2: 0.10 × 3139.55 = 313.96 → 314; K = 4: 0.07 × 3139.55 = 219.8 → 220; K = 8: 0.055 × 3139.55
= 172.7 → 173; K → ∞: 0.04 × 3139.55 = 125.6 → 126. With 300 cases: K ≥ 0.12 / (300/3139.55 −
0.04) = 2.16 → 3 trials per case.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from gatestats.estimators import case_summary, variance_decomposition
from gatestats.paired import cases_for_trials, plan_cases_trials, plan_cases_trials_from_pilot
from tests.paired.conftest import AsFrame, trial_records

COMPONENTS = {"between_case_variance": 0.04, "within_case_variance": 0.12}


def test_cases_needed_match_the_worked_example() -> None:
    plan = plan_cases_trials(0.05, **COMPONENTS, available_cases=300)
    rows = [(o.trials, o.cases_needed, o.total_trials) for o in plan.options]
    assert rows == [(1, 503, 503), (2, 314, 628), (4, 220, 880), (8, 173, 1384)]
    assert plan.cases_floor == 126
    assert plan.trials_for_available_cases == 3
    assert cases_for_trials(0.05, **COMPONENTS, trials=1) == pytest.approx(0.16 * 7.848879 / 0.0025, rel=1e-6)
    assert [round(o.share_from_trials, 4) for o in plan.options] == [0.75, 0.6, 0.4286, 0.2727]


def test_more_trials_need_fewer_cases_never_below_the_floor_and_more_trials_in_total() -> None:
    plan = plan_cases_trials(0.03, **COMPONENTS, trials=[1, 2, 3, 5, 10, 100])
    cases = [o.cases_needed for o in plan.options]
    totals = [o.total_trials for o in plan.options]
    assert cases == sorted(cases, reverse=True)
    assert totals == sorted(totals)
    assert min(cases) >= (plan.cases_floor or 0)


def test_trials_for_available_cases_is_the_fewest_that_reach_the_target() -> None:
    for available in (130, 200, 300, 502):
        plan = plan_cases_trials(0.05, **COMPONENTS, available_cases=available)
        k = plan.trials_for_available_cases
        assert k is not None
        assert cases_for_trials(0.05, **COMPONENTS, trials=k) <= available
        if k > 1:
            assert cases_for_trials(0.05, **COMPONENTS, trials=k - 1) > available


def test_with_too_few_cases_no_number_of_trials_is_enough() -> None:
    plan = plan_cases_trials(0.05, **COMPONENTS, available_cases=125)
    assert plan.trials_for_available_cases is None
    assert plan.advice is not None
    assert plan.advice.endswith(
        "with 125 cases no number of trials reaches power 0.8 for 0.05: at least 126 cases are needed"
    )


def test_one_sided_plans_need_fewer_cases_than_two_sided() -> None:
    two = plan_cases_trials(0.05, **COMPONENTS)
    one = plan_cases_trials(0.05, **COMPONENTS, alternative="less")
    # (1.644854 + 0.841621)^2 / (1.959964 + 0.841621)^2 = 0.7874
    assert one.options[0].cases_needed == math.ceil(0.16 * (1.644854 + 0.841621) ** 2 / 0.0025)
    assert all(a.cases_needed < b.cases_needed for a, b in zip(one.options, two.options, strict=True))


def test_a_pilot_without_variation_gives_insufficient_evidence_not_zero_cases() -> None:
    plan = plan_cases_trials(0.05, between_case_variance=0.0, within_case_variance=0.0)
    assert (plan.status, plan.options, plan.cases_floor) == ("insufficient_evidence", (), None)
    assert plan.reason is not None
    assert plan.reason.startswith("no variation in the pass rate")
    assert plan.to_frame().height == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mde": 0.0}, "mde must lie strictly between 0 and 1 (got 0.0)"),
        ({"mde": 0.05, "power": 1.0}, "power must lie strictly between 0 and 1 (got 1.0)"),
        ({"mde": 0.05, "between_case_variance": -0.1}, "between_case_variance must lie in [0, 1] (got -0.1)"),
        ({"mde": 0.05, "trials": [0, 2]}, "trials must be a non-empty list of integers in [1, 10000] (got [0, 2])"),
        ({"mde": 0.05, "available_cases": 0}, "available_cases must be an integer >= 1 (got 0)"),
        ({"mde": 0.05, "alternative": "both"}, "alternative must be one of"),
    ],
)
def test_plan_rejects_bad_options(kwargs: dict[str, Any], message: str) -> None:
    arguments = {**COMPONENTS, **kwargs}
    with pytest.raises(ValueError, match=re.escape(message)):
        plan_cases_trials(**arguments)


def _pilot(theta: np.ndarray, trials: int, rng: np.random.Generator, system: str = "A") -> pl.DataFrame:
    outcomes = (rng.random((theta.size, trials)) < theta[:, None]).astype(int).tolist()
    return trial_records({system: outcomes})


def test_pilot_plan_uses_the_variance_split_of_the_estimators(as_frame: AsFrame) -> None:
    rng = np.random.default_rng(7)
    records = pl.concat([_pilot(rng.beta(2, 3, 60), 4, rng), _pilot(rng.beta(5, 1, 30), 4, rng, system="B")])
    plan = plan_cases_trials_from_pilot(as_frame(records), system="A", mde=0.05, available_cases=400)
    split = variance_decomposition(case_summary(records).filter(pl.col("system") == "A"))
    assert plan.status == "ok"
    assert (plan.between_case_variance, plan.within_case_variance) == (
        split.between_case_variance,
        split.within_case_variance,
    )
    assert (plan.pilot_system, plan.pilot_cases, plan.pilot_mean_trials) == ("A", 60, 4.0)
    direct = plan_cases_trials(
        0.05,
        between_case_variance=split.between_case_variance or 0,
        within_case_variance=split.within_case_variance or 0,
        available_cases=400,
    )
    assert plan.options == direct.options
    assert plan.to_frame().columns == [
        "trials",
        "cases_needed",
        "total_trials",
        "variance_per_case",
        "share_from_trials",
    ]


def test_pilot_with_one_trial_per_case_cannot_split_the_variance(as_frame: AsFrame) -> None:
    records = trial_records({"A": [[1], [0], [1], [1]]})
    plan = plan_cases_trials_from_pilot(as_frame(records), system="A", mde=0.1)
    assert plan.status == "insufficient_evidence"
    assert plan.reason == (
        "the pilot cannot split the variance: 4 case(s) have fewer than 2 valid trials; within-case variance "
        "needs repeats; run at least 2 trials of every case to split case and trial variance"
    )


def test_pilot_plan_names_the_systems_when_the_system_is_missing() -> None:
    records = trial_records({"A": [[1, 0]], "B": [[1, 1]]})
    with pytest.raises(ValueError, match=r"system 'C' has no records in the pilot \(systems present: A, B\)"):
        plan_cases_trials_from_pilot(records, system="C", mde=0.1)


def test_simulation_confirms_the_variance_and_the_power_of_the_plan() -> None:
    """Cases from Beta(2, 2)-distributed success probabilities (ω² = 0.05, σ² = 0.2), K = 2.

    The plan's n detects δ = 0.05 above a null pass rate with power 0.8; 4000 simulated
    evaluations of n cases × 2 trials test the observed mean with the case-level standard error
    (Miller eq. 1). Expected: the variance of the mean is (ω² + σ²/2)/n and the power is 0.80 ± 3 SE.
    """
    rng = np.random.default_rng(20240611)
    a = b = 2.0
    omega2 = a * b / ((a + b) ** 2 * (a + b + 1))  # Var(θ) = 0.05
    sigma2 = a * b / ((a + b) * (a + b + 1))  # E[θ(1 - θ)] = 0.2
    k, delta, reps = 2, 0.05, 4000
    plan = plan_cases_trials(delta, between_case_variance=omega2, within_case_variance=sigma2, trials=[k])
    n = plan.options[0].cases_needed
    theta = rng.beta(a, b, size=(reps, n))  # true mean 0.5: test H0 mean = 0.45
    passes = rng.binomial(k, theta)
    case_means = passes / k
    means = case_means.mean(axis=1)
    assert means.var(ddof=1) == pytest.approx((omega2 + sigma2 / k) / n, rel=0.07)
    se = case_means.std(axis=1, ddof=1) / math.sqrt(n)
    rejected = np.abs(means - (0.5 - delta)) / se > 1.959964
    power = float(rejected.mean())
    assert abs(power - 0.8) < 3 * math.sqrt(0.8 * 0.2 / reps)


def test_simulated_pilot_recovers_the_components() -> None:
    rng = np.random.default_rng(3)
    theta = rng.beta(2, 2, 400)
    plan = plan_cases_trials_from_pilot(_pilot(theta, 6, rng), system="A", mde=0.05)
    assert plan.between_case_variance == pytest.approx(0.05, abs=0.012)
    assert plan.within_case_variance == pytest.approx(0.2, abs=0.012)


# --- the CLI ------------------------------------------------------------------------------------


def _write(frame: pl.DataFrame, path: Path) -> Path:
    lines = []
    for i, row in enumerate(frame.iter_rows(named=True)):
        record = {"schema_version": 1, "record_id": f"r-{i}", "run_set_id": "set-1"}
        record.update({key: value for key, value in row.items() if value is not None})
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _invoke(*args: str | Path) -> Any:
    import typer
    from typer.testing import CliRunner

    from gatestats.cli.plan import plan_command

    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command("plan")(plan_command)
    app.command("unused")(lambda: None)
    return CliRunner().invoke(app, ["plan", *[str(a) for a in args]], catch_exceptions=False)


@pytest.fixture
def pilot(tmp_path: Path) -> Path:
    rng = np.random.default_rng(11)
    return _write(_pilot(rng.beta(2, 2, 80), 4, rng), tmp_path / "pilot.jsonl")


def test_cli_cases_trials_json_and_table(pilot: Path) -> None:
    result = _invoke("cases-trials", "--pilot", pilot, "--system", "A", "--mde", "0.05", "--trials", "1,4", "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["plan"], out["status"], out["pilot_cases"], out["records"]) == ("cases-trials", "ok", 80, [str(pilot)])
    assert [o["trials"] for o in out["options"]] == [1, 4]
    expected = plan_cases_trials(
        0.05,
        between_case_variance=out["between_case_variance"],
        within_case_variance=out["within_case_variance"],
        trials=[1, 4],
    )
    assert [o["cases_needed"] for o in out["options"]] == [o.cases_needed for o in expected.options]
    table = _invoke("cases-trials", "--pilot", pilot, "--system", "A", "--mde", "0.05", "--cases", "200")
    assert table.exit_code == 0
    assert "trials per case" in table.stdout
    assert "cases needed however many trials are run" in table.stdout


def test_cli_cases_trials_unknown_system_is_an_input_error(pilot: Path) -> None:
    result = _invoke("cases-trials", "--pilot", pilot, "--system", "Z", "--mde", "0.05")
    assert result.exit_code == 1
    assert "system 'Z' has no records in the pilot (systems present: A)" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--system", "A", "--mde", "0.05"), "--pilot"),
        (("--mde", "0.05"), "--system"),
        (("--system", "A", "--mde", "1.5"), "must lie strictly between 0 and 1 (got 1.5)"),
        (("--system", "A", "--mde", "0.05", "--trials", "1,x"), "expected comma-separated integers in [1, 10000]"),
        (("--system", "A", "--mde", "0.05", "--trials", "100000"), "(got '100000')"),
        (("--system", "A", "--mde", "0.05", "--cases", "0"), "must be an integer >= 1 (got 0)"),
    ],
)
def test_cli_cases_trials_usage_errors_exit_2(pilot: Path, args: tuple[str, ...], message: str) -> None:
    full = args if message == "--pilot" else ("--pilot", str(pilot), *args)
    result = _invoke("cases-trials", *full)
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.replace("│", " ").split())
