"""``gatestats correct``: the demo end to end, and its exit codes."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.cli.correct import reviser_argv
from tests.runner.conftest import needs_sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "correction"


def _args(out: Path, *extra: str) -> list[str]:
    return [
        "correct",
        str(EXAMPLE / "cases"),
        "--candidate",
        str(EXAMPLE / "candidate"),
        "--reviser",
        f"{sys.executable} {EXAMPLE / 'reviser.py'}",
        "--out",
        str(out),
        *extra,
    ]


@needs_sandbox
def test_demo_prints_each_stop_and_the_recovery_statistics(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, _args(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split()[:3] for line in lines[1:4]] == [
        ["initials", "passed", "1"],
        ["median", "repeated_failure", "2"],
        ["title-case", "passed", "2"],
    ]
    assert lines[4].startswith(
        "recovery: 1 of 2 failed cases passed after correction (50.0%, 95% CI 9.5%–90.5% (Wilson, the case as the unit))"
    )
    assert lines[5] == "rounds per accepted outcome: 5 / 2 = 2.50"
    assert lines[6].startswith("cost per accepted outcome with correction (every round and reviser call): $0.00")
    assert "median: stopped after round 1: repeated_failure" in result.stderr


def test_usage_errors_exit_2_and_write_nothing(tmp_path: Path) -> None:
    for extra, message in [
        (["--max-rounds", "-1"], "--max-rounds: expected an integer >= 0 (got -1)"),
        (["--trials", "0"], "--trials: expected an integer >= 1 (got 0)"),
        (["--isolation", "vm"], "--isolation: expected auto, bwrap or none (got 'vm')"),
    ]:
        result = CliRunner().invoke(app, _args(tmp_path / "out", *extra))
        assert result.exit_code == 2, result.output
        assert message in result.output
    result = CliRunner().invoke(
        app, [*_args(tmp_path / "out")[:4], "--reviser", "'unclosed", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 2
    assert "--reviser: not a command line" in result.output
    assert not (tmp_path / "out").exists()


def test_invalid_input_exits_1_naming_the_path(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, [*_args(tmp_path / "out")[:1], str(tmp_path / "nope"), *_args(tmp_path / "out")[2:]]
    )
    assert result.exit_code == 1
    assert f"{tmp_path / 'nope'}: cases directory does not exist" in result.output
    shutil.copytree(EXAMPLE / "candidate", tmp_path / "out" / "x")  # an output that exists, without --resume
    result = CliRunner().invoke(app, _args(tmp_path / "out"))
    assert result.exit_code == 1
    assert "exists and is not empty (use --resume to continue a correction loop)" in result.output


def test_reviser_relative_paths_are_made_absolute_for_its_own_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fix.py").write_text("")
    monkeypatch.chdir(tmp_path)
    assert reviser_argv("python3 fix.py --flag 'two words'") == (
        "python3",
        str(tmp_path / "fix.py"),
        "--flag",
        "two words",
    )
