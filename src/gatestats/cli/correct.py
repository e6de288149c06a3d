"""``gatestats correct``: the correction loop on external feedback, through the runner's public API.

A thin wrapper over :func:`gatestats_runner.correction.run_correction` (the sandbox controller owns
the loop) that prints each step, every case's stop reason and the recovery statistics of
:mod:`gatestats.estimators.recovery`. Exit codes: 0 every case's loop stopped with a recorded reason (whatever
the reason); 1 invalid input (cases, candidate, an output that exists or does not match on
``--resume``, a damaged journal); 2 usage error (an option no loop can have). See docs/correction.md.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from gatestats.cli._common import IsolationOption, checked_isolation, fail, usage_error
from gatestats.errors import InsufficientEvidenceError
from gatestats_runner.correction import CorrectionOptions, CorrectionSummary, run_correction
from gatestats_runner.launch import CaseError, OptionError, RunSetError, SandboxError

if TYPE_CHECKING:
    from gatestats.estimators.recovery import RecoverySummary

__all__ = ["correct_command", "reviser_argv"]


def reviser_argv(command: str) -> tuple[str, ...]:
    """Split ``--reviser`` like a shell line; an argument naming an existing relative path is made absolute.

    The reviser runs in its own directory, so ``python3 fix.py`` would otherwise look for ``fix.py`` there.

    Parameters
    ----------
    command
        The ``--reviser`` value.

    Returns
    -------
    tuple of str
        The argument vector.

    Raises
    ------
    typer.Exit
        Exit 2 (the message printed): the value is empty or does not split (an unclosed quote).
    """
    try:
        parts = shlex.split(command)
    except ValueError as exc:
        raise usage_error(f"--reviser: not a command line ({exc}) (got {command!r})") from None
    if not parts:
        raise usage_error(f"--reviser: expected a command (got {command!r})")
    return tuple(str(Path(p).resolve()) if not Path(p).is_absolute() and Path(p).exists() else p for p in parts)


def correct_command(
    cases: Annotated[Path, typer.Argument(help="Cases directory: one subdirectory with case.json per case.")],
    candidate: Annotated[
        Path, typer.Option("--candidate", help="Candidate directory: CASE_ID/ holds the files laid over that case.")
    ],
    reviser: Annotated[
        str,
        typer.Option(
            "--reviser",
            help="The reviser's command line (split like a shell line, no shell); it reads GATESTATS_FEEDBACK "
            "and writes the revised candidate into GATESTATS_OUTPUT.",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Output directory (new; or existing with --resume).")],
    max_rounds: Annotated[int, typer.Option("--max-rounds", help="Revisions allowed per case.")] = 3,
    budget_usd: Annotated[float | None, typer.Option("--budget-usd", help="Spend limit per case, USD.")] = None,
    budget_seconds: Annotated[
        float | None, typer.Option("--budget-seconds", help="Time limit per case: trials and reviser, seconds.")
    ] = None,
    trials: Annotated[int, typer.Option("--trials", help="Trials per round (k).")] = 1,
    reviser_timeout: Annotated[float, typer.Option("--reviser-timeout", help="Seconds per reviser call.")] = 600.0,
    infra_retries: Annotated[int, typer.Option("--infra-retries", help="Retries of an infra_error trial.")] = 2,
    isolation: IsolationOption = "auto",
    resume: Annotated[bool, typer.Option("--resume", help="Continue a killed loop from its journal.")] = False,
) -> None:
    """Run each case; on failure, give the reviser the deployable feedback and run its revision, until a stop.

    \f

    Parameters
    ----------
    cases, candidate, out
        The cases directory, the first candidate, and the loop's output directory.
    reviser, reviser_timeout
        The reviser's command line, and the seconds each call may take.
    max_rounds, budget_usd, budget_seconds
        The stops per case: revisions allowed, spend and time limits.
    trials, infra_retries, isolation, resume
        As in ``gatestats run``: trials per round, retries of an ``infra_error`` trial, the sandbox,
        continuing a killed loop.

    Raises
    ------
    typer.Exit
        1 on invalid input, 2 on a usage error.
    """
    mode = checked_isolation(isolation)
    options = CorrectionOptions(
        cases=cases,
        candidate=candidate,
        reviser=reviser_argv(reviser),
        out=out,
        max_rounds=max_rounds,
        budget_usd=budget_usd,
        budget_seconds=budget_seconds,
        trials=trials,
        reviser_timeout=reviser_timeout,
        infra_retries=infra_retries,
        resume=resume,
        isolation=mode,
    )
    err = Console(emoji=False, stderr=True, soft_wrap=True, highlight=False)
    if resume:
        _check_rounds(out)
    try:
        summary = run_correction(options, progress=lambda event: _step(err, event))
    except OptionError as exc:
        raise usage_error(str(exc)) from None
    except (CaseError, RunSetError, SandboxError, OSError) as exc:
        raise fail(str(exc)) from None
    from gatestats.estimators.recovery import load_rounds, recovery_summary

    _print(summary, recovery_summary(load_rounds(summary.out)))


def _check_rounds(out: Path) -> None:
    """The rounds a resumed loop reads, through the gate's door (exit 1 naming file, line, field; nothing run)."""
    from gatestats.errors import GatestatsError
    from gatestats.estimators.recovery import check_round_run_sets

    try:
        check_round_run_sets(out)
    except (GatestatsError, OSError) as exc:
        raise fail(str(exc)) from None


def _step(console: Console, event: Mapping[str, Any]) -> None:
    """Print one event of the correction loop: a round finished, a revision made, a case stopped."""
    kind, case, rnd = event["event"], event.get("case_id"), event.get("round")
    if kind == "round_finished":
        console.print(f"{case} round {rnd}: {event['verdict']} ({event['detail']})")
    elif kind == "revision_finished":
        console.print(
            f"{case} round {rnd}: revised candidate {event['candidate_digest'][:19]}… "
            f"(parent {event['parent_digest'][:19]}…, feedback {event['feedback_digest'][:19]}…)"
        )
    elif kind == "stopped":
        console.print(f"{case}: stopped after round {rnd}: {event['reason']} — {event['detail']}")


def _money(value: float | None) -> str:
    return "undefined" if value is None else f"${value:.4f}"


def _print(summary: CorrectionSummary, rec: RecoverySummary) -> None:
    width = max(len(c.case_id) for c in summary.cases)
    typer.echo(f"{'case':<{width}}  {'stop':<26}  rounds  final candidate")
    for c in summary.cases:
        typer.echo(f"{c.case_id:<{width}}  {c.stop:<26}  {c.rounds:>6}  {c.final_digest[:23]}…")
    if rec.rate is None:
        typer.echo(f"recovery: undefined ({rec.rate_reason})")
    else:
        try:
            low, high = rec.confidence_interval()
            ci = f", 95% CI {low:.1%}–{high:.1%} (Wilson, the case as the unit)"
        except InsufficientEvidenceError:
            ci = ""
        typer.echo(
            f"recovery: {rec.recovered} of {rec.failed_first} failed cases passed after correction "
            f"({rec.rate:.1%}{ci}); blocked by infrastructure or evaluator: {rec.blocked}"
        )
    if rec.rounds_per_accepted is None:
        typer.echo(f"accepted outcomes: 0 ({rec.per_accepted_reason})")
        return
    typer.echo(f"rounds per accepted outcome: {rec.rounds_run} / {rec.accepted} = {rec.rounds_per_accepted:.2f}")
    typer.echo(
        f"cost per accepted outcome with correction (every round and reviser call): "
        f"{_money(rec.usd_per_accepted)}, {rec.seconds_per_accepted:.2f} s; "
        f"without correction (round 0 only): {_money(rec.usd_per_accepted_without_correction)}"
        + (
            ""
            if rec.seconds_per_accepted_without_correction is None
            else f", {rec.seconds_per_accepted_without_correction:.2f} s"
        )
    )
