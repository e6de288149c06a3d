"""The runner's public launch API and the manners of both command lines (progress, Ray, usage errors)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats_runner.executors import LocalExecutor
from gatestats_runner.launch import RAY_INSTALL_HINT, OptionError, make_executor
from tests.conftest import DATA, ROOT
from tests.runner.conftest import needs_sandbox, processes_with

GOLDEN = DATA / "golden_example"
ARGS = [str(GOLDEN / "cases"), "--candidate", str(GOLDEN / "candidates" / "fixed")]


def _runner_cli(*args: str, isolated: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m gatestats_runner run ...``; ``isolated``: without site-packages (the standard library alone)."""
    if isolated:
        code = "import sys, runpy; sys.path.insert(0, sys.argv.pop(1)); runpy.run_module('gatestats_runner', run_name='__main__')"
        command = [sys.executable, "-I", "-S", "-c", code, str(ROOT / "runner"), "run", *args]
        env = None
    else:
        command = [sys.executable, "-m", "gatestats_runner", "run", *args]
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | {"PYTHONPATH": str(ROOT / "runner")}
    return subprocess.run(command, capture_output=True, text=True, check=False, env=env, timeout=300)


def test_make_executor_knows_local_and_refuses_the_rest_as_usage_errors() -> None:
    assert isinstance(make_executor("local", workers=2, address=None), LocalExecutor)
    with pytest.raises(OptionError, match=r"^--executor: expected 'local' or 'ray' \(got 'spark'\)$"):
        make_executor("spark", workers=None, address=None)
    with pytest.raises(OptionError, match=r"^--workers: expected an integer >= 1 \(got 0\)$"):
        make_executor("local", workers=0, address=None)


def test_the_runner_module_keeps_make_executor_for_older_callers() -> None:
    from gatestats_runner.__main__ import make_executor as old

    assert old is make_executor


def test_an_input_error_is_printed_without_a_progress_bar(tmp_path: Path) -> None:
    missing = tmp_path / "no-cases"
    result = CliRunner().invoke(
        app, ["run", str(missing), "--candidate", str(tmp_path), "--trials", "1", "--out", str(tmp_path / "rs")]
    )
    assert result.exit_code == 1
    assert result.output == f"error: {missing}: cases directory does not exist\n"


def test_a_run_set_that_exists_is_refused_without_a_progress_bar(tmp_path: Path) -> None:
    out = tmp_path / "rs"
    (out / "x").mkdir(parents=True)
    result = CliRunner().invoke(app, ["run", *ARGS, "--trials", "1", "--out", str(out)])
    assert result.exit_code == 1
    assert result.output == f"error: {out}: exists and is not empty (use --resume to continue a run set)\n"


@needs_sandbox
def test_the_progress_bar_appears_once_trials_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", *ARGS, "--trials", "1", "--out", str(tmp_path / "rs"), "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert "trials" in result.stderr
    assert "3/3 passed=3" in result.stderr


@needs_sandbox
def test_prepare_runs_no_trial_and_shows_no_progress_bar(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", *ARGS, "--trials", "1", "--out", str(tmp_path / "rs"), "--prepare"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_ray_not_installed_is_a_usage_error_that_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if Ray were not installed
    out = tmp_path / "rs"
    result = CliRunner().invoke(app, ["run", *ARGS, "--trials", "1", "--out", str(out), "--executor", "ray"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --executor ray: Ray is not installed (")
    assert result.stderr.rstrip().endswith(f"); install it with: {RAY_INSTALL_HINT}")
    assert RAY_INSTALL_HINT == "pip install 'gatestats[ray]'"
    assert list(tmp_path.iterdir()) == []


def test_runner_cli_without_ray_says_how_to_install_and_exits_2(tmp_path: Path) -> None:
    done = _runner_cli(*ARGS, "--trials", "1", "--out", str(tmp_path / "rs"), "--executor", "ray", isolated=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "error: --executor ray: Ray is not installed (No module named 'ray'); "
        "install it with: pip install 'gatestats[ray]'\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("cli", ["gatestats", "runner"])
def test_zero_trials_is_a_usage_error_on_both_command_lines(tmp_path: Path, cli: str) -> None:
    args = [*ARGS, "--trials", "0", "--out", str(tmp_path / "rs")]
    if cli == "runner":
        done = _runner_cli(*args)
        assert done.returncode == 2, done.stderr
        assert done.stderr == "error: trials: expected an integer >= 1 (got 0)\n"
    else:
        result = CliRunner().invoke(app, ["run", *args])
        assert result.exit_code == 2, result.output
        assert "Invalid value for '--trials'" in result.output
    assert list(tmp_path.iterdir()) == []


def _ray_sessions() -> set[str]:
    return {p.name for p in Path("/tmp/ray").glob("session_*")} if Path("/tmp/ray").is_dir() else set()


@pytest.mark.slow  # a Ray cluster started end to end (issue 28, item 3: out of the fast loop)
@needs_sandbox
def test_a_ray_run_prints_no_token_notice_and_leaves_no_session_or_process(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="ray is not installed (pip install 'gatestats[ray]')")
    before_sessions = _ray_sessions()
    before_ours = set(Path("/tmp").glob("gatestats-ray-session-*"))
    before_processes = set(processes_with("gatestats-ray-session-"))
    out = tmp_path / "rs"
    done = _runner_cli(*ARGS, "--trials", "1", "--out", str(out), "--executor", "ray", "--workers", "2", "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{out}: complete, 3 trials (passed 3)")
    assert "Token authentication" not in done.stderr
    assert "RAY_AUTH_MODE" not in done.stderr
    assert _ray_sessions() - before_sessions == set()  # nothing new under Ray's default /tmp/ray
    assert set(Path("/tmp").glob("gatestats-ray-session-*")) - before_ours == set()
    assert set(processes_with("gatestats-ray-session-")) - before_processes == set()
