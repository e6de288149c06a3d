"""The helpers ``run`` and ``correct`` share: comma lists, ``--isolation``, and the runner call behind the bar."""

from __future__ import annotations

import io
import warnings

import pytest
import typer
from rich.console import Console

from gatestats.cli._common import checked_isolation, comma_separated
from gatestats.cli._trial_bar import TrialBar, run_with_bar
from gatestats_runner.launch import CaseError, Executor, OptionError


def _bar() -> tuple[TrialBar, io.StringIO]:
    out = io.StringIO()
    return TrialBar(Console(file=out, width=200)), out


@pytest.mark.parametrize(
    ("text", "items"),
    [("memory, disk", ("memory", "disk")), (" memory ,, disk ,", ("memory", "disk")), ("", ()), (" , ", ())],
)
def test_comma_separated_strips_items_and_drops_blank_ones(text: str, items: tuple[str, ...]) -> None:
    assert comma_separated(text) == items


@pytest.mark.parametrize("mode", ["auto", "bwrap", "none"])
def test_checked_isolation_returns_each_known_mode(mode: str) -> None:
    assert checked_isolation(mode) == mode


def test_checked_isolation_refuses_another_mode_as_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as caught:
        checked_isolation("docker")
    assert caught.value.exit_code == 2
    assert capsys.readouterr().err == "error: --isolation: expected auto, bwrap or none (got 'docker')\n"


def test_run_with_bar_returns_the_result_and_prints_the_warnings() -> None:
    bar, out = _bar()

    def work(executor: Executor) -> int:
        warnings.warn("bound 'disk' not checked", UserWarning, stacklevel=1)
        return 7

    assert run_with_bar(work, bar, executor="local", workers=1, address=None) == 7
    assert out.getvalue() == "warning: bound 'disk' not checked\n"


def test_a_warning_naming_a_hostile_path_is_printed_as_text() -> None:
    """``runs/[/]x`` crashed rich's markup parser (the run summary was lost); ESC reached the terminal."""
    bar, out = _bar()

    def work(executor: Executor) -> int:
        warnings.warn("runs/[/]x\x1b[31m: a half-built run set", UserWarning, stacklevel=1)
        return 0

    assert run_with_bar(work, bar, executor="local", workers=1, address=None) == 0
    assert out.getvalue() == "warning: runs/[/]x\\x1b[31m: a half-built run set\n"


def test_run_with_bar_makes_an_unknown_executor_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    bar, _ = _bar()
    with pytest.raises(typer.Exit) as caught:
        run_with_bar(lambda executor: 0, bar, executor="cloud", workers=None, address=None)
    assert caught.value.exit_code == 2
    assert capsys.readouterr().err == "error: --executor: expected 'local' or 'ray' (got 'cloud')\n"


def test_run_with_bar_makes_a_runner_input_error_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    bar, _ = _bar()

    def work(executor: Executor) -> int:
        raise CaseError("cases/a/case.json: field 'timeout_s': expected a number (got 'x')")

    with pytest.raises(typer.Exit) as caught:
        run_with_bar(work, bar, executor="local", workers=1, address=None)
    assert caught.value.exit_code == 1
    assert capsys.readouterr().err == "error: cases/a/case.json: field 'timeout_s': expected a number (got 'x')\n"


def test_run_with_bar_takes_the_callers_usage_and_input_errors() -> None:
    bar, _ = _bar()

    def work(executor: Executor) -> int:
        raise OptionError("--trials: fixed by the design")

    with pytest.raises(OptionError):  # neither a usage error nor invalid input here: it propagates
        run_with_bar(work, bar, executor="local", workers=1, address=None, usage=(KeyError,), invalid=(OSError,))
