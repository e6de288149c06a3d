"""The options every ``gatestats import`` command shares (where records go) stand where they always stood."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app

ORDER = {
    "table": ["--map", "--output", "--system", "--calibration", "--run-set-id", "--run-set", "--policy", "--where"],
    "tau-bench": ["--output", "--system", "--model-id", "--run-set-id", "--run-set", "--policy", "--where"],
    "inspect": [
        "--output",
        "--scorer",
        "--value",
        "--threshold",
        "--judge",
        "--system",
        "--run-set-id",
        "--run-set",
        "--policy",
        "--where",
    ],
    "promptfoo": ["--output", "--system", "--run-set-id", "--run-set", "--policy", "--where"],
    "swe-bench": [
        "--output",
        "--logs",
        "--costs",
        "--system",
        "--run-set-id",
        "--trust-infra-failures",
        "--run-set",
        "--policy",
        "--where",
    ],
}


@pytest.mark.parametrize("command", sorted(ORDER))
def test_output_follows_the_required_parameters_and_the_run_set_options_come_last(command: str) -> None:
    result = CliRunner().invoke(app, ["import", command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    options = re.findall(r"^\s+(?:-\w, )?(--[\w-]+)", result.output.split("Options:", 1)[1], re.M)
    assert options == [*ORDER[command], "--help"]


def test_the_target_is_checked_before_the_file_is_read(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["import", "promptfoo", str(tmp_path / "missing.json")])
    assert result.exit_code == 2
    assert "give exactly one of --output FILE and --run-set DIR" in result.output


def test_a_policy_without_a_run_set_is_a_usage_error(tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    result = CliRunner().invoke(
        app, ["import", "tau-bench", str(tmp_path / "missing.json"), "-o", str(out), "--policy", "p.toml"]
    )
    assert result.exit_code == 2
    assert "--policy registers a policy in a run set: it needs --run-set DIR" in result.output
    assert not out.exists()
