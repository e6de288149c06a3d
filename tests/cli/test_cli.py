"""The command line end to end: tables, --json, exit codes, nothing printed from bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from tests.conftest import DATA, make_record

runner = CliRunner()


def _invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def tau_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """τ-bench's result file imported once per module (≈ 0.25 CPU-s an import); no test writes to it."""
    tau_raw = DATA / "tau_bench" / "raw" / "gpt-4o-airline.json"
    out = tmp_path_factory.mktemp("tau") / "tau.jsonl"
    result = _invoke("import", "tau-bench", tau_raw, "--system", "gpt-4o", "-o", out)
    assert result.exit_code == 0, result.stderr
    assert "wrote 200 records (1 system(s), 50 case(s))" in result.stderr
    return out


def test_analyze_prints_published_tau_bench_table(tau_records: Path) -> None:
    result = _invoke("analyze", tau_records, "--k", "1-4")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    # pass^k column: τ-bench README, TC (gpt-4o) airline: 0.420, 0.273, 0.220, 0.200.
    for k, value, counts in [
        (1, "0.420", "21/50"),
        (2, "0.273", "(41/3)/50"),
        (3, "0.220", "11/50"),
        (4, "0.200", "10/50"),
    ]:
        (row,) = [line for line in lines if line.startswith(f"│ {k} │")]
        cells = [cell.strip() for cell in row.strip("│").split("│")]
        assert cells[1].startswith(value + " [")
        assert cells[2] == counts
    assert "gpt-4o: 50 cases, 200 trials (200 valid, 84 passed, 0 resource-killed, 0 infra errors)" in result.stdout


def test_analyze_json_shape_and_values(tau_records: Path) -> None:
    result = _invoke("analyze", tau_records, "--k", "1,2,4,5", "--json", "--seed", "7")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    (system,) = payload["systems"]
    assert {key: system[key] for key in ("system", "n_cases", "n_trials", "n_infra_errors")} == {
        "system": "gpt-4o",
        "n_cases": 50,
        "n_trials": 200,
        "n_infra_errors": 0,
    }
    hat2 = system["k"]["2"]["pass_hat_k"]
    assert set(hat2) >= {"estimate", "ci_low", "ci_high", "status"}
    assert (round(hat2["estimate"], 3), hat2["status"], hat2["numerator"], hat2["denominator"]) == (
        0.273,
        "ok",
        "41/3",
        50,
    )
    assert payload["seed"] == 7
    # 50 cases: the interval is Wilson's (the bootstrap is offered from 500 cases, docs/coverage.md).
    assert (hat2["method"], hat2["seed"]) == ("wilson", None)
    five = system["k"]["5"]["pass_at_k"]
    assert five["status"] == "insufficient_evidence"
    assert five["estimate"] is None
    assert five["ci_low"] is None
    assert five["reason"].startswith("pass@5 is undefined for 50 of 50 case(s) with fewer than 5 valid trials")


def test_table_import_through_cli_gives_same_json(tau_records: Path, tau_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "table.jsonl"
    imported = _invoke(
        "import",
        "table",
        tau_csv,
        "--map",
        "case_id=task_id,trial=trial,outcome=success",
        "--system",
        "gpt-4o",
        "-o",
        out,
    )
    assert imported.exit_code == 0, imported.stderr
    a = json.loads(_invoke("analyze", tau_records, "--k", "1-4", "--json").stdout)
    b = json.loads(_invoke("analyze", out, "--k", "1-4", "--json").stdout)
    assert a["systems"] == b["systems"]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda r: r.pop("case_id"), ":2: field 'case_id': required field is missing"),
        (lambda r: r.update(trial="one"), ":2: field 'trial': expected integer (got str 'one')"),
        (lambda r: r.update(outcome="flaky"), ":2: field 'outcome': must be one of"),
        (
            lambda r: r.update(record_id="dup", case_id="c0"),
            ":2: field 'system,case_id,case_version,trial,attempt': duplicate record",
        ),
    ],
)
def test_bad_records_exit_1_and_print_no_result(
    write_jsonl: Callable[..., Path], mutate: Callable[[dict[str, Any]], Any], expected: str
) -> None:
    rows = [make_record(record_id="a", case_id="c0"), make_record(record_id="b", case_id="c1")]
    mutate(rows[1])
    path = write_jsonl(rows)
    for args in (["analyze", path, "--json"], ["analyze", path], ["validate", path]):
        result = _invoke(*args)
        assert result.exit_code == 1
        assert result.stdout == ""
        assert f"error: {path}{expected}" in result.stderr


def test_torn_last_line_exit_1(write_jsonl: Callable[..., Path]) -> None:
    path = write_jsonl([make_record(), '{"schema_version": 1, "reco'], trailing_newline=False)
    result = _invoke("analyze", path)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"error: {path}:2: field '<line>': torn last line: not complete JSON and no final newline" in result.stderr


def test_import_never_overwrites(tau_records: Path, tau_raw: Path) -> None:
    before = tau_records.read_bytes()
    result = _invoke("import", "tau-bench", tau_raw, "-o", tau_records)
    assert result.exit_code == 1
    assert "record files are immutable" in result.stderr
    assert tau_records.read_bytes() == before


def test_validate_ok(tau_records: Path) -> None:
    result = _invoke("validate", tau_records)
    assert result.exit_code == 0
    assert result.stdout.strip() == "ok: 200 records in 1 file(s) satisfy the run-record contract v1"


@pytest.mark.parametrize(
    "args",
    [
        ["analyze", "--k", "0"],
        ["analyze", "--k", "x"],
        ["analyze", "--method", "wald"],
        ["analyze", "--confidence-level", "95"],
        ["analyze", "--n-resamples", "10"],
        ["analyze", "--seed", "-1"],
        ["analyze", "--nope"],
    ],
)
def test_usage_errors_exit_2(tau_records: Path, args: list[str]) -> None:
    result = _invoke(args[0], tau_records, *args[1:])
    assert result.exit_code == 2
    assert result.stdout == ""


def test_each_command_is_built_once_per_process_and_serves_every_later_invocation(tau_records: Path) -> None:
    """typer builds a new group at every in-process call; the subcommands it builds are kept for the next
    (``LazyGroup.built``: ≈ 7 ms a command, a third of the in-process CLI tests' CPU before, issue 28 item 3)."""
    import typer.main

    first, second = typer.main.get_command(app), typer.main.get_command(app)
    assert first is not second
    assert first.commands["analyze"] is second.commands["analyze"]  # type: ignore[attr-defined]
    outputs = {_invoke("analyze", tau_records, "--k", "1-4", "--json").stdout for _ in range(2)}
    assert len(outputs) == 1  # the kept command runs again with nothing left from its last invocation
