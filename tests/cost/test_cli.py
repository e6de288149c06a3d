"""``gatestats cost`` end to end: the table, the --json shape, exit codes and error messages."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.cost import cost_per_accepted
from gatestats.records import load_records
from tests.conftest import make_record
from tests.cost.conftest import many_cases

runner = CliRunner()


def _invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def records(write_jsonl: Callable[..., Path]) -> Path:
    rows = []
    for system, scale in (("base", 1.0), ("cand", 1.5)):
        for i, row in enumerate(many_cases(40, system=system, scale=scale, seed=len(system) + int(scale))):
            row["slices"] = ["easy"] if i % 2 else ["hard"]
            if i % 10 == 0:
                row |= {"reviewer": "ann", "review_started_at": "2024-05-01T10:00:00Z",
                        "review_ended_at": "2024-05-01T10:30:00Z"}  # fmt: skip
            rows.append(make_record(**row))
    rows.append(make_record(record_id="base-infra", system="base", case_id="c0", trial=1, outcome="infra_error",
                            cost_execution_usd=0.2, machine_seconds=30.0))  # fmt: skip
    return write_jsonl(rows)


def test_cost_prints_one_row_per_system_with_interval_and_time_columns(records: Path) -> None:
    result = _invoke("cost", records, "--review-rate", "60")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].strip() == "Cost per accepted outcome (USD) by system"
    header = " ".join(line for line in lines[1:4] if line.startswith("│"))
    for column in (
        "per accepted",
        "[95% CI]",
        "accepted/trials",
        "spend",
        "review",
        "human h",
        "machine h",
        "calendar h",
    ):
        assert column in header
    api = cost_per_accepted(load_records(records), review_rate_usd_per_hour=60.0)
    for group in api.groups:
        (row,) = [line for line in lines if line.startswith(f"│ {group.key['system']} ")]
        cells = [cell.strip() for cell in row.strip("│").split("│")]
        assert group.estimate is not None
        assert group.ci_low is not None
        assert group.ci_high is not None
        assert cells[1] == f"{group.estimate:.4g} [{group.ci_low:.4g}, {group.ci_high:.4g}]"
        assert cells[2] == f"{group.accepted}/{group.trials}"
    base_row = next(line for line in lines if line.startswith("│ base "))
    assert "41 (1)" in base_row  # 41 attempts, 1 infrastructure error
    assert "bca bootstrap over cases (case groups), 2000 resamples, seed 0" in " ".join(result.stdout.split())


def test_cost_by_slice_notes_why_there_is_no_interval(records: Path) -> None:
    result = _invoke("cost", records, "--review-rate", "0", "--by", "system,slice")
    assert result.exit_code == 0, result.stderr
    assert "by system, slice" in result.stdout
    assert "[no interval]" in result.stdout
    assert "system=base, slice=easy: no interval: an interval needs at least 30 independent cases (got 20)" in (
        result.stdout.replace("\n", " ")
    )


def test_cost_json_has_the_documented_shape(records: Path) -> None:
    result = _invoke("cost", records, "--review-rate", "60", "--machine-rate", "1.2", "--json", "--seed", "9")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert (payload["seed"], payload["by"], payload["review_rate_usd_per_hour"], payload["records"]) == (
        9,
        ["system"],
        60.0,
        [str(records)],
    )
    base, cand = payload["groups"]
    assert (base["group"], cand["group"]) == ({"system": "base"}, {"system": "cand"})
    cpa = base["cost_per_accepted"]
    assert set(cpa) >= {"estimate", "ci_low", "ci_high", "interval_status", "method", "seed", "n_resamples"}
    assert cpa["ci_low"] < cpa["estimate"] < cpa["ci_high"]
    for key in ("accepted", "attempts", "total_spend_usd", "human_hours", "machine_hours", "calendar_hours",
                "status", "reason"):  # fmt: skip
        assert key in base
    assert set(base["spend_usd"]) == {"attempts", "model", "tool", "execution", "undivided", "review"}
    # the infra-error attempt's execution spend is kept (0.2), nothing imputed (it has execution spend)
    assert (base["spend_usd"]["execution"], base["n_attempts_imputed"], base["attempts_infra_error"]) == (0.2, 0, 1)
    # ann reviewed 8 outcomes in the same half hour: 0.5 h in all, split over both systems
    assert base["human_hours"] + cand["human_hours"] == pytest.approx(0.5)
    assert payload["human_hours_total"] == pytest.approx(0.5)
    assert base["spend_usd"]["review"] == pytest.approx(base["human_hours"] * 60)


def test_cost_without_review_rate_when_review_time_exists_exits_1(records: Path) -> None:
    result = _invoke("cost", records)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: review_rate_usd_per_hour is required (CLI: --review-rate USD_PER_HOUR)")


def test_cost_of_a_bad_record_file_exits_1_naming_file_line_and_field(write_jsonl: Callable[..., Path]) -> None:
    path = write_jsonl([make_record(record_id="a"), make_record(record_id="b", case_id="y", cost_model_usd=-1.0)])
    result = _invoke("cost", path)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {path}:2: field 'cost_model_usd':")


def test_cost_with_missing_cost_reports_insufficient_evidence(write_jsonl: Callable[..., Path]) -> None:
    path = write_jsonl([make_record(record_id="a", cost_usd=1.0), make_record(record_id="b", case_id="y")])
    result = _invoke("cost", path, "--json")
    assert result.exit_code == 0
    (group,) = json.loads(result.stdout)["groups"]
    assert (group["status"], group["cost_per_accepted"]["estimate"], group["cost_unknown_record_ids"]) == (
        "insufficient_evidence",
        None,
        ["b"],
    )
    table = " ".join(_invoke("cost", path).stdout.split())
    # no estimate, but what is known is shown: the bounds (the cap is the largest observed cost, said
    # so), too few cases for their interval; the note says why once, never "insufficient evidence" twice
    assert "0.5–1 [no interval]" in table
    assert "no interval: missing costs at 0 and at the cap: an interval needs at least 30 independent cases" in table
    assert "system=baseline: 1 of 2 attempt(s) carry no cost (e.g. record(s) 'b'; a missing cost is never" in table
    assert "the largest observed cost per attempt in the group (an assumption" in table
    assert table.count("'b'") == 1


def test_cost_with_every_cost_missing_and_no_cap_is_insufficient_evidence(write_jsonl: Callable[..., Path]) -> None:
    path = write_jsonl([make_record(record_id="a"), make_record(record_id="b", case_id="y")])
    for fmt in ("terminal", "markdown"):
        text = " ".join(_invoke("cost", path, "--format", fmt).stdout.split())
        assert "insufficient evidence" in text
        assert "no bounds:" in text
        assert "0 [" not in text  # never a zero cost per accepted outcome


@pytest.mark.parametrize("fmt", ["markdown", "html", "latex"])
def test_every_format_shows_what_the_terminal_shows_when_costs_are_missing(
    write_jsonl: Callable[..., Path], fmt: str
) -> None:
    # session 36 found `gatestats cost` printing bounds in the terminal and "insufficient evidence" with
    # spend "—" in --format markdown for the same result: one builder now serves both
    rows = [make_record(record_id=f"r{i}", case_id=f"c{i}", cost_usd=None if i < 3 else 1.0) for i in range(40)]
    path = write_jsonl(rows)
    terminal = " ".join(_invoke("cost", path).stdout.split())
    published = " ".join(_invoke("cost", path, "--format", fmt).stdout.split())
    result = cost_per_accepted(load_records(path))
    (group,) = result.groups
    bounds = group.missing_costs
    assert bounds is not None
    assert (bounds.estimate_low, bounds.estimate_high) == (37 / 40, 40 / 40)
    cells = result.table().rows[0]
    assert cells[1] == "0.925–1 [no interval]" or cells[1].startswith("0.925–1 [")
    assert cells[4] == "≥37"
    for text in (terminal, published.replace("&amp;", "&").replace("\\", "")):
        for cell in cells[1:]:
            assert cell.split(" [")[0] in text
    assert "insufficient evidence" not in terminal
    assert "insufficient evidence" not in published


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (("--confidence-level", "1.2"), "--confidence-level"),
        (("--review-rate", "-1"), "--review-rate"),
        (("--n-resamples", "10"), "--n-resamples"),
        (("--by", " , "), "--by"),
    ],
)
def test_cost_usage_errors_exit_2(records: Path, args: tuple[str, ...], hint: str) -> None:
    result = _invoke("cost", records, *args)
    assert result.exit_code == 2
    assert hint in result.stderr


def test_cost_unknown_by_column_exits_1(records: Path) -> None:
    result = _invoke("cost", records, "--review-rate", "1", "--by", "team")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: by: no column 'team' in the records")


def test_csv_carries_the_bounds_only_when_a_group_lacks_costs(write_jsonl: Callable[..., Path]) -> None:
    import csv
    import io

    rows = [make_record(record_id=f"r{i}", case_id=f"c{i}", cost_usd=None if i < 3 else 1.0) for i in range(40)]
    (row,) = csv.DictReader(io.StringIO(_invoke("cost", write_jsonl(rows), "--format", "csv").stdout))
    assert (row["estimate"], row["known_total_usd"], row["bounds_low"], row["bounds_high"]) == (
        "",
        "37.0",
        "0.925",
        "1.0",
    )
    assert (row["cap_usd_per_attempt"], row["cap_source"]) == ("1.0", "largest observed")
    complete = [make_record(record_id=f"r{i}", case_id=f"c{i}", cost_usd=1.0) for i in range(40)]
    header = _invoke("cost", write_jsonl(complete), "--format", "csv").stdout.splitlines()[0]
    assert "bounds_low" not in header
