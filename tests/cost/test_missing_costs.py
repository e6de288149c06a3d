"""Cost per accepted outcome when some attempts carry no cost: the known part, the count, the bounds (issue 26, item 7)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.cost import cost_per_accepted, cost_ratio
from gatestats.importers import import_tau_bench
from tests.conftest import make_record
from tests.cost.conftest import frame

TAU = Path(__file__).parents[2] / "data" / "tau_bench" / "raw" / "gpt-4o-airline.json"


def _records(costs: list[Any], *, system: str = "a", fail_every: int = 3) -> list[dict[str, Any]]:
    """One attempt per case; every ``fail_every``-th case failed."""
    return [
        {
            "record_id": f"{system}-{i}",
            "system": system,
            "case_id": f"c{i}",
            "outcome": "failed" if i % fail_every == 0 else "passed",
            "cost_usd": cost,
        }
        for i, cost in enumerate(costs)
    ]


def test_tau_bench_five_lost_user_costs_give_the_known_total_the_count_and_bounds() -> None:
    # data/tau_bench/PROVENANCE.md: user cost empty for 5 of 200 records; the 195 others sum to $0.5031;
    # 84 of 200 trials succeed (21/22/20/21 per trial). The five are the 62-message trials that ran
    # into the turn limit (tasks 2, 9, 9, 33, 46), all failed: the dear ones lost their cost.
    records = import_tau_bench(TAU, system="gpt-4o")
    group = cost_per_accepted(records).group(system="gpt-4o")
    assert (group.status, group.estimate, group.n_attempts_cost_unknown) == ("insufficient_evidence", None, 5)
    m = group.missing_costs
    assert m is not None
    assert (m.n_attempts_missing, m.attempts_with_cost) == (5, 195)
    assert m.known_spend_usd == pytest.approx(0.5031, abs=1e-4)
    lost = records.filter(pl.col("cost_execution_usd").is_null())
    assert sorted(lost["case_id"].to_list()) == ["2", "33", "46", "9", "9"]
    assert set(m.record_ids) == set(lost["record_id"].to_list())
    assert m.cap_source == "largest observed"
    assert m.cap_usd_per_attempt == pytest.approx(records["cost_execution_usd"].max())
    assert m.estimate_low == pytest.approx(m.known_spend_usd / 84)
    assert m.estimate_high == pytest.approx((m.known_spend_usd + 5 * m.cap_usd_per_attempt) / 84)
    # every lost trial failed: the complete-case estimate drops no accepted outcome and equals the lower bound
    assert (m.complete_case_accepted, m.complete_case_estimate) == (84, pytest.approx(m.estimate_low))
    assert m.ci_low is not None
    assert m.ci_high is not None
    assert m.ci_low < m.estimate_low <= m.estimate_high < m.ci_high


def test_complete_data_has_no_missing_costs_entry_and_json_is_unchanged() -> None:
    analysis = cost_per_accepted(frame(_records([1.0] * 40)))
    assert analysis.groups[0].missing_costs is None
    body = analysis.to_dict()
    assert "missing_costs" not in json.dumps(body)
    assert "max_cost_per_attempt_usd" not in body
    # a given cap changes nothing on complete data but is echoed
    capped = cost_per_accepted(frame(_records([1.0] * 40)), max_cost_per_attempt_usd=5.0).to_dict()
    assert capped.pop("max_cost_per_attempt_usd") == 5.0
    assert capped == body


def test_bounds_by_hand_with_a_given_cap() -> None:
    costs: list[Any] = [1.0] * 36 + [None] * 4
    analysis = cost_per_accepted(frame(_records(costs)), max_cost_per_attempt_usd=10.0)
    m = analysis.groups[0].missing_costs
    assert m is not None
    accepted = sum(1 for i in range(40) if i % 3)
    assert (m.cap_usd_per_attempt, m.cap_source, m.missing_spend_high_usd) == (10.0, "given", 40.0)
    assert m.estimate_low == pytest.approx(36.0 / accepted)
    assert m.estimate_high == pytest.approx(76.0 / accepted)
    entry = analysis.to_dict()["groups"][0]["missing_costs"]
    assert entry["cost_per_accepted"]["low"] == pytest.approx(36.0 / accepted)
    assert entry["missing_spend_usd"] == {"low": 0.0, "high": 40.0}
    ci = m.confidence_interval(0.8)
    assert ci.ci_low is not None
    assert ci.ci_high is not None
    assert m.ci_low is not None
    assert m.ci_high is not None
    assert m.ci_low <= ci.ci_low < ci.ci_high <= m.ci_high


def test_all_costs_missing_is_insufficient_without_a_cap_and_bounded_from_zero_with_one() -> None:
    costs: list[Any] = [None] * 40
    m = cost_per_accepted(frame(_records(costs))).groups[0].missing_costs
    assert m is not None
    assert (m.estimate_low, m.estimate_high, m.ci_low, m.interval_status) == (None, None, None, "insufficient_evidence")
    assert "give a maximum cost per attempt" in (m.interval_reason or "")
    capped = cost_per_accepted(frame(_records(costs)), max_cost_per_attempt_usd=2.0).groups[0].missing_costs
    assert capped is not None
    assert capped.estimate_low == 0.0
    assert capped.ci_low == 0.0
    assert capped.ci_high is not None
    assert capped.ci_high >= capped.estimate_high


def test_too_few_cases_is_insufficient_evidence_with_the_bounds_still_given() -> None:
    m = cost_per_accepted(frame(_records([1.0] * 8 + [None] * 2))).groups[0].missing_costs
    assert m is not None
    assert m.estimate_low is not None
    assert m.estimate_high is not None
    assert (m.ci_low, m.ci_high, m.interval_status) == (None, None, "insufficient_evidence")
    assert "at least 30 independent cases" in (m.interval_reason or "")


def test_no_accepted_outcome_gives_no_bounds() -> None:
    m = cost_per_accepted(frame(_records([1.0] * 35 + [None] * 5, fail_every=1))).groups[0].missing_costs
    assert m is not None
    assert (m.estimate_low, m.estimate_high, m.complete_case_estimate) == (None, None, None)
    assert "no accepted outcome" in (m.interval_reason or "")


@pytest.mark.parametrize(
    ("bad", "field"),
    [(math.nan, "cost_usd"), (-1.0, "cost_usd"), (math.inf, "cost_usd"), ("0.5", "cost_usd"), (True, "cost_usd")],
)
def test_hostile_costs_are_refused_naming_the_field(bad: Any, field: str) -> None:
    rows = _records([1.0] * 30 + [None])
    rows[0]["cost_usd"] = bad
    with pytest.raises(ValueError, match=field):
        cost_per_accepted(pl.DataFrame(rows, strict=False))


@pytest.mark.parametrize("cap", [-1.0, math.nan, math.inf, "1", True])
def test_a_bad_cap_is_refused(cap: Any) -> None:
    with pytest.raises(ValueError, match="max_cost_per_attempt_usd"):
        cost_per_accepted(frame(_records([1.0] * 30)), max_cost_per_attempt_usd=cap)


def test_huge_costs_that_overflow_give_no_bounds_never_infinity() -> None:
    m = cost_per_accepted(frame(_records([1e308] * 3 + [None] * 2 + [1.0] * 40))).groups[0].missing_costs
    assert m is not None
    assert (m.known_spend_usd, m.estimate_high, m.interval_status) == (None, None, "insufficient_evidence")
    assert "overflows" in (m.interval_reason or "")
    json.dumps(m.to_dict(), allow_nan=False)  # no inf or NaN reaches the JSON


def test_a_lost_cost_on_an_accepted_attempt_counts_that_outcome() -> None:
    # the outcome is known even when the cost is not: the accepted outcome stays in the denominator
    costs: list[Any] = [1.0] * 39 + [None]  # case 39: 39 % 3 == 0 -> failed; make it passed
    rows = _records(costs)
    rows[39]["outcome"] = "passed"
    m = cost_per_accepted(frame(rows), max_cost_per_attempt_usd=1.0).groups[0].missing_costs
    assert m is not None
    accepted = sum(1 for i in range(39) if i % 3) + 1
    assert m.estimate_low == pytest.approx(39.0 / accepted)
    assert m.estimate_high == pytest.approx(40.0 / accepted)
    assert m.complete_case_accepted == accepted - 1


def test_missing_in_one_system_of_a_ratio_is_refused_by_default_and_filled_on_request() -> None:
    base = _records([1.0] * 60, system="b")
    cand = _records([1.0] * 50 + [None] * 10, system="c")
    records = frame(base + cand)
    plain = cost_ratio(records, baseline="b", candidate="c")
    assert plain.status == "insufficient_evidence"
    assert "spend unknown" in (plain.reason or "")
    upper = cost_ratio(records, baseline="b", candidate="c", fill_missing_costs="upper", max_cost_per_attempt_usd=3.0)
    lower = cost_ratio(records, baseline="b", candidate="c", fill_missing_costs="lower", max_cost_per_attempt_usd=3.0)
    assert upper.ratio == pytest.approx(80.0 / 60.0)  # same accepted counts on both sides
    assert lower.ratio == pytest.approx(50.0 / 60.0)
    assert upper.missing_costs_filled == (("c", 10, 3.0),)
    assert lower.missing_costs_filled == (("c", 10, 0.0),)
    assert upper.to_dict()["missing_costs_filled"] == [{"system": "c", "n_attempts": 10, "usd_per_attempt": 3.0}]
    assert (
        "missing_costs_filled"
        not in cost_ratio(frame(base + _records([1.0] * 60, system="c")), baseline="b", candidate="c").to_dict()
    )
    with pytest.raises(ValueError, match="fill_missing_costs"):
        cost_ratio(records, baseline="b", candidate="c", fill_missing_costs="middle")  # type: ignore[arg-type]


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, [*args])


def test_cli_shows_the_known_total_the_missing_count_and_the_bounds(write_jsonl: Callable[..., Path]) -> None:
    rows = [make_record(record_id=f"r{i}", case_id=f"c{i}", cost_usd=None if i < 3 else 1.0) for i in range(40)]
    path = write_jsonl(rows)
    table = _invoke("cost", str(path))
    assert table.exit_code == 0, table.output
    text = " ".join(table.stdout.split())
    assert "no cost" in text
    assert "≥37" in text
    assert "3 of 40 attempt(s) carry no cost" in text
    assert "the largest observed cost per attempt" in text
    body = json.loads(_invoke("cost", str(path), "--json", "--max-cost-per-attempt", "2").stdout)
    assert body["max_cost_per_attempt_usd"] == 2.0
    entry = body["groups"][0]["missing_costs"]
    assert (entry["n_attempts_missing"], entry["known_spend_usd"], entry["cap_source"]) == (3, 37.0, "given")


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_cli_refuses_a_bad_max_cost_per_attempt_with_exit_2(write_jsonl: Callable[..., Path], value: str) -> None:
    path = write_jsonl([make_record(record_id="r0")])
    result = _invoke("cost", str(path), "--max-cost-per-attempt", value)
    assert result.exit_code == 2
    assert "--max-cost-per-attempt" in result.output


def test_cli_note_shows_hostile_record_ids_escaped(write_jsonl: Callable[..., Path]) -> None:
    hostile = "x\x1b[31m[bold]red\u202e"
    rows = [make_record(record_id=f"r{i}", case_id=f"c{i}", cost_usd=1.0) for i in range(1, 40)]
    rows.insert(0, make_record(record_id=hostile, case_id="c0", cost_usd=None))
    result = _invoke("cost", str(write_jsonl(rows)))
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout
    assert "\u202e" not in result.stdout
    assert "(e.g. record(s) 'x\\x1b[31m[bold]red\\u202e';" in " ".join(result.stdout.split())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_filled_ratio_p_values_are_never_below_those_of_the_true_costs(seed: int) -> None:
    # same cases, same seed: the same resamples. With every hidden cost <= the cap, each resample of
    # the "upper" ratio is >= that of the true ratio, so p_within can only grow (and p_above for "lower").
    from tests.cost.conftest import many_cases

    rows = many_cases(80, system="b", seed=seed) + many_cases(80, system="c", seed=seed + 10, scale=1.1)
    truth = frame(rows)
    cap = float(truth["cost_model_usd"].max())
    hidden = truth.with_columns(
        pl.when(pl.int_range(pl.len()) % 7 == 0).then(None).otherwise(pl.col("cost_model_usd")).alias("cost_model_usd")
    )
    full = cost_ratio(truth, baseline="b", candidate="c", seed=seed)
    kw: dict[str, Any] = {"baseline": "b", "candidate": "c", "seed": seed, "max_cost_per_attempt_usd": cap}
    upper = cost_ratio(hidden, fill_missing_costs="upper", **kw)
    lower = cost_ratio(hidden, fill_missing_costs="lower", **kw)
    assert upper.ratio is not None
    assert lower.ratio is not None
    assert full.ratio is not None
    assert lower.ratio <= full.ratio <= upper.ratio
    for limit in (0.8, 1.0, 1.1, 1.3):
        assert upper.pvalues(limit)[0] >= full.pvalues(limit)[0]
        assert lower.pvalues(limit)[1] >= full.pvalues(limit)[1]
