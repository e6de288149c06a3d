"""``gatestats run`` (the typer wrapper) and ``python -m gatestats_runner run``: exit codes and output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
    assert result.exit_code == 1
    assert "--isolation: expected auto, bwrap or none (got 'x')" in result.output


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
