"""``gatestats run`` (the typer wrapper) and ``python -m gatestats_runner run``: exit codes and output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from gatestats.cli.run import run_command
from gatestats_runner.store import RECORDS, read_records
from tests.conftest import DATA, ROOT
from tests.runner.conftest import needs_sandbox

GOLDEN = DATA / "golden_example"


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command("run")(run_command)

    @app.command("noop", hidden=True)
    def _noop() -> None:  # a second command keeps "run" a subcommand, as in the real CLI
        """Unused."""

    return app


@needs_sandbox
def test_gatestats_run_writes_a_complete_run_set(tmp_path: Path) -> None:
    out = tmp_path / "rs"
    args = ["run", str(GOLDEN / "cases"), "--candidate", str(GOLDEN / "candidates" / "fixed")]
    result = CliRunner().invoke(_app(), [*args, "--trials", "1", "--out", str(out), "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert f"{out}: complete — 3 trials (passed 3); 3 attempts run now" in result.stdout
    assert len(read_records(out / RECORDS).records) == 3


def test_gatestats_run_reports_a_bad_cases_directory_with_exit_1(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        _app(), ["run", str(tmp_path / "none"), "--candidate", str(tmp_path), "--trials", "1", "--out", str(tmp_path)]
    )
    assert result.exit_code == 1
    assert f"error: {tmp_path / 'none'}: cases directory does not exist" in result.output


def test_gatestats_run_rejects_an_unknown_isolation(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        _app(),
        [
            "run",
            str(tmp_path),
            "--candidate",
            str(tmp_path),
            "--trials",
            "1",
            "--out",
            str(tmp_path),
            "--isolation",
            "x",
        ],
    )
    assert result.exit_code == 2
    assert "--isolation: expected auto, bwrap or none (got 'x')" in result.output


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--trials", "0"], "trials: expected an integer >= 1 (got 0)"),
        (["--workers", "0"], "--workers: expected an integer >= 1 (got 0)"),
        (["--infra-retries", "-1"], "infra_retries: expected an integer >= 0 (got -1)"),
        (["--require-enforced", "memory,gpu"], "require_enforced: unknown bound(s) gpu (expected some of wall_clock,"),
        (["--executor", "spark"], "executor"),
        (["--isolation", "vm"], "isolation"),
        (["--no-such-option"], "no-such-option"),
    ],
)
def test_both_command_lines_exit_2_on_a_usage_error_and_write_nothing(
    tmp_path: Path, option: list[str], message: str
) -> None:
    out = tmp_path / "rs"
    base = [str(GOLDEN / "cases"), "--candidate", str(GOLDEN / "candidates" / "fixed"), "--out", str(out)]
    trials = [] if option[0] == "--trials" else ["--trials", "1"]
    runner = subprocess.run(
        [sys.executable, "-m", "gatestats_runner", "run", *base, *trials, *option],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT / "runner")},
    )
    assert runner.returncode == 2, runner.stderr
    assert message in runner.stderr
    result = CliRunner().invoke(_app(), ["run", *base, *trials, *option])
    assert result.exit_code == 2, result.output
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_gatestats_run_refuses_policy_and_policy_digest_together_as_a_usage_error(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("")
    args = [str(GOLDEN / "cases"), "--candidate", str(GOLDEN / "candidates" / "fixed"), "--trials", "1"]
    result = CliRunner().invoke(
        _app(), ["run", *args, "--out", str(tmp_path / "rs"), "--policy", str(policy), "--policy-digest", "sha256:x"]
    )
    assert result.exit_code == 2
    assert "give --policy or --policy-digest, not both" in result.output


def test_every_bound_the_manifest_reports_can_be_required() -> None:
    from gatestats_runner.runset import ENFORCEABLE
    from gatestats_runner.sandbox import detect_capabilities

    for isolation in ("auto", "none"):
        enforcement = detect_capabilities(isolation).enforcement()  # type: ignore[arg-type]
        assert set(enforcement["enforced"]) | set(enforcement["not_enforced"]) == set(ENFORCEABLE)


def test_runner_module_cli_needs_only_the_standard_library(tmp_path: Path) -> None:
    """``python -I -S`` with only runner/ on the path: the runner's CLI starts without site-packages."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from gatestats_runner.__main__ import main; "
        "sys.exit(main(['run', sys.argv[2], '--candidate', sys.argv[2], '--trials', '1', '--out', sys.argv[3]]))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(ROOT / "runner"), str(tmp_path / "no-cases"), str(tmp_path / "o")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "cases directory does not exist" in done.stderr
