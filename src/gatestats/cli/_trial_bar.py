"""The trials progress bar of ``gatestats run``, and the one way its three kinds of run call the runner.

A plain run, a baseline re-run (``--baseline-sample``) and a sequential run (``--until-decided``)
each make the executor, run with the bar, print the runner's warnings after the bar stops and turn
the runner's errors into exits: :func:`run_with_bar` does it for all three.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from gatestats.cli._common import fail, usage_error
from gatestats.io.text import TEXT_LIMIT, visible
from gatestats_runner.launch import (
    CaseError,
    Executor,
    OptionError,
    RunSetError,
    SandboxError,
    make_executor,
)
from gatestats_runner.launch import Progress as TrialProgress

__all__ = ["INVALID_INPUT", "TrialBar", "run_with_bar"]

#: The runner's errors that are invalid input (exit 1) for a plain or a baseline run.
INVALID_INPUT: tuple[type[Exception], ...] = (CaseError, RunSetError, SandboxError, ValueError, ImportError, OSError)

T = TypeVar("T")


class TrialBar:
    """The progress bar, started by the runner's first progress report (sent once work starts), never before.

    Parameters
    ----------
    console
        Where the bar is drawn (standard error), and the runner's warnings printed.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __call__(self, p: TrialProgress) -> None:
        if self._bar is None or self._task is None:
            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=self.console,
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task("trials", total=p.total, counts="")
        counts = " ".join(f"{k}={v}" for k, v in sorted(p.counts.items()))
        self._bar.update(self._task, total=p.total, completed=p.done, counts=counts)

    def stop(self) -> None:
        """Stop the bar (its last state stays on screen) if it was started."""
        if self._bar is not None:
            self._bar.stop()


def run_with_bar(
    work: Callable[[Executor], T],
    bar: TrialBar,
    *,
    executor: str,
    workers: int | None,
    address: str | None,
    usage: tuple[type[Exception], ...] = (OptionError,),
    invalid: tuple[type[Exception], ...] = INVALID_INPUT,
) -> T:
    """Run ``work`` on a new executor; the bar is stopped, then the runner's warnings printed, its errors made exits.

    Parameters
    ----------
    work
        The run, given the executor (not started yet).
    bar
        The progress bar ``work`` reports to; the warnings go to its console.
    executor, workers, address
        ``--executor``, ``--workers``, ``--address``, as :func:`gatestats_runner.launch.make_executor` takes them.
    usage
        The errors that are usage errors (exit 2); an option no run can have, by default.
    invalid
        The errors that are invalid input (exit 1).

    Returns
    -------
    T
        What ``work`` returned.

    Raises
    ------
    typer.Exit
        2 on an error of ``usage``, 1 on an error of ``invalid``.
    """
    try:
        runner = make_executor(executor, workers=workers, address=address)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = work(runner)
            finally:
                bar.stop()
        for warning in caught:
            # a warning names paths and ids: text, never markup or control characters
            bar.console.print(
                f"warning: {visible(warning.message, keep=chr(10), limit=TEXT_LIMIT)}", highlight=False, markup=False
            )
    except usage as exc:
        raise usage_error(str(exc)) from None
    except invalid as exc:
        raise fail(str(exc)) from None
    return result
