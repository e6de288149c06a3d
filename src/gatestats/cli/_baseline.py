"""``gatestats run CASES --baseline-sample N --against STORED --out DIR [--seed S]``: re-run a stored baseline's sample.

The work is :func:`gatestats_runner.baseline.run_baseline_sample` (the runner's public API): the
stored run set's own candidate copy runs again on a seeded random sample of ``N`` of its cases,
with its number of trials, system label and parts, under today's infrastructure; the new run
set's manifest records the sample, the seed and the stored run set's digest. ``gatestats drift
STORED DIR`` then tests whether the baseline moved. Options that the stored run set decides
(``--trials``, ``--system`` and the system parts, a policy, ``--prepare``) are usage errors here.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from gatestats.cli._common import fail, usage_error
from gatestats_runner.baseline import BaselineSampleOptions, run_baseline_sample
from gatestats_runner.launch import (
    CaseError,
    OptionError,
    Progress,
    RunSetError,
    RunSetSummary,
    SandboxError,
    make_executor,
)

__all__ = ["check_baseline_options", "run_baseline"]


def check_baseline_options(*, baseline_sample: int | None, against: Path | None, decided: dict[str, Any]) -> None:
    """Refuse a half-given baseline re-run, or options the stored run set decides, as usage errors (exit 2).

    Parameters
    ----------
    baseline_sample, against
        ``--baseline-sample`` and ``--against``: both or neither.
    decided
        Option name -> value of the options a baseline re-run takes from the stored run set; any
        value that is not None or False is refused.
    """
    if (baseline_sample is None) != (against is None):
        raise usage_error("--baseline-sample N and --against STORED_RUN_SET go together")
    given = sorted(name for name, value in decided.items() if value not in (None, False))
    if baseline_sample is not None and given:
        raise usage_error(
            f"--baseline-sample: {', '.join(given)}: taken from the stored run set (trials, system, policy); "
            "leave them out"
        )


def run_baseline(
    options: BaselineSampleOptions,
    console: Console,
    progress: Callable[[Progress], None],
    *,
    executor: str,
    workers: int | None,
    address: str | None,
) -> RunSetSummary:
    """Run the sample with ``progress`` (the command's bar); warnings printed after it, errors made exits.

    Parameters
    ----------
    options
        The baseline re-run.
    console
        Where warnings go (standard error).
    progress
        The progress callback (``gatestats run``'s bar); its ``stop()`` is called when present.
    executor, workers, address
        As ``gatestats run``'s ``--executor``, ``--workers``, ``--address``.

    Returns
    -------
    RunSetSummary
        The new run set.

    Raises
    ------
    typer.Exit
        2 on an option no run can have (the sample size, the seed, the executor); 1 on invalid input.
    """
    try:
        runner = make_executor(executor, workers=workers, address=address)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                summary = run_baseline_sample(options, executor=runner, progress=progress)
            finally:
                stop = getattr(progress, "stop", None)
                if callable(stop):
                    stop()
        for warning in caught:
            console.print(f"warning: {warning.message}", highlight=False)
    except OptionError as exc:
        raise usage_error(str(exc)) from None
    except (CaseError, RunSetError, SandboxError, ValueError, ImportError, OSError) as exc:
        raise fail(str(exc)) from None
    return summary
