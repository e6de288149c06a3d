"""``gatestats recovery OUT_DIR``: the recovery statistics of a finished (or stopped) correction loop.

Reads the loop's journal (``OUT_DIR/journal.jsonl``, written by ``gatestats correct``) through
:func:`gatestats.estimators.recovery.load_rounds`, checks every round's run set with the gate's reader
(:func:`gatestats.estimators.recovery.check_round_run_sets`), and prints, with
:func:`gatestats.estimators.recovery.recovery_summary`:
recovery (fail → pass within r rounds) for r = 1 .. the most rounds any case ran, each with a
Wilson interval over cases (the case is the unit); rounds per accepted outcome; and cost per
accepted outcome (USD and seconds) with correction (every round and every reviser call) and
without it (round 0 only). An undefined number (no case failed round 0, no accepted outcome) is
shown as undefined with its reason, never as 0. Exit codes: 0; 1 invalid input (no journal, a
damaged journal, a round's run set the gate's reader refuses); 2 usage error (a confidence level outside (0, 1)).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypedDict, cast

import typer

from gatestats.cli._common import ConfidenceLevelOption, checked_option, echo_json, reports_errors
from gatestats.vocabulary import check_confidence_level

if TYPE_CHECKING:
    import polars as pl

    from gatestats._typing import JSONObject
    from gatestats.estimators.recovery import RecoverySummary

__all__ = ["recovery_command", "recovery_report"]


class RecoveryRate(TypedDict):
    """Recovery within ``within`` rounds (``None``: any round): the counts, the rate and its interval, or why not."""

    within: int | None
    recovered: int
    failed_first: int
    rate: float | None
    low: float | None
    high: float | None
    reason: str | None


class CostPerAccepted(TypedDict):
    """Cost per accepted outcome: dollars and seconds (``None`` when undefined)."""

    usd_per_accepted: float | None
    seconds_per_accepted: float | None


class RecoveryReport(TypedDict):
    """The statistics ``gatestats recovery`` prints (see :func:`recovery_report`)."""

    cases: int
    failed_first: int
    passed_first: int
    accepted: int
    blocked: int
    rounds_run: int
    max_round: int
    recovery: list[RecoveryRate]
    recovery_any_round: RecoveryRate
    rounds_per_accepted: float | None
    with_correction: CostPerAccepted
    without_correction: CostPerAccepted
    per_accepted_reason: str | None
    confidence_level: float


def _rate(summary: RecoverySummary) -> RecoveryRate:
    """One entry of the report's ``recovery``: the summary's rate with its Wilson interval."""
    low, high = summary.confidence_interval() if summary.rate is not None else (None, None)
    return {
        "within": summary.within,
        "recovered": summary.recovered,
        "failed_first": summary.failed_first,
        "rate": summary.rate,
        "low": low,
        "high": high,
        "reason": summary.rate_reason,
    }


def recovery_report(rounds: pl.DataFrame, *, confidence_level: float = 0.95) -> RecoveryReport:
    """The statistics ``gatestats recovery`` prints, as JSON values.

    Parameters
    ----------
    rounds
        One row per case and round (:func:`gatestats.estimators.recovery.load_rounds`).
    confidence_level
        Of every Wilson interval, in (0, 1).

    Returns
    -------
    RecoveryReport
        ``cases``, ``failed_first``, ``passed_first``, ``accepted``, ``blocked``, ``rounds_run``,
        ``max_round``; ``recovery``: one entry per r = 1 .. max(1, ``max_round``) (``within``,
        ``recovered``, ``failed_first``, ``rate``, ``low``, ``high``, ``reason``); ``recovery_any_round``;
        ``rounds_per_accepted``; ``with_correction`` and ``without_correction`` (``usd_per_accepted``,
        ``seconds_per_accepted``); ``per_accepted_reason``; ``confidence_level``.
    """
    from gatestats.estimators.recovery import recovery_summary

    overall = recovery_summary(rounds, confidence_level=confidence_level)
    max_round = max((int(r) for r in rounds.get_column("round").drop_nulls()), default=0)
    within = [
        recovery_summary(rounds, within=r, confidence_level=confidence_level) for r in range(1, max(1, max_round) + 1)
    ]
    return {
        "cases": overall.cases,
        "failed_first": overall.failed_first,
        "passed_first": overall.passed_first,
        "accepted": overall.accepted,
        "blocked": overall.blocked,
        "rounds_run": overall.rounds_run,
        "max_round": max_round,
        "recovery": [_rate(s) for s in within],
        "recovery_any_round": _rate(overall),
        "rounds_per_accepted": overall.rounds_per_accepted,
        "with_correction": {
            "usd_per_accepted": overall.usd_per_accepted,
            "seconds_per_accepted": overall.seconds_per_accepted,
        },
        "without_correction": {
            "usd_per_accepted": overall.usd_per_accepted_without_correction,
            "seconds_per_accepted": overall.seconds_per_accepted_without_correction,
        },
        "per_accepted_reason": overall.per_accepted_reason,
        "confidence_level": confidence_level,
    }


def _num(value: float | None, fmt: str) -> str:
    return "undefined" if value is None else format(value, fmt)


def _recovery(entry: RecoveryRate) -> str:
    """Recovered of failed first, the rate and its interval; or why the rate is undefined."""
    if entry["rate"] is None:
        return f"undefined ({entry['reason']})"
    return (
        f"{entry['recovered']} of {entry['failed_first']} = {entry['rate']:.1%} "
        f"[{entry['low']:.1%}, {entry['high']:.1%}]"
    )


def _lines(report: RecoveryReport) -> list[str]:
    """The report as the lines ``gatestats recovery`` prints."""
    level = f"{report['confidence_level']:.0%}"
    lines = [
        f"cases: {report['cases']} (passed round 0: {report['passed_first']}, failed round 0: "
        f"{report['failed_first']}, accepted: {report['accepted']}, blocked by infrastructure or evaluator: "
        f"{report['blocked']})",
        f"recovery (fail -> pass within r rounds; {level} Wilson interval over cases):",
    ]
    lines += [f"  r = {entry['within']}: {_recovery(entry)}" for entry in report["recovery"]]
    rounds = report["rounds_per_accepted"]
    lines.append(
        "rounds per accepted outcome: "
        + (
            f"undefined ({report['per_accepted_reason']})"
            if rounds is None
            else f"{report['rounds_run']} / {report['accepted']} = {rounds:.2f}"
        )
    )
    for name, cost in (
        ("with correction (every round and reviser call)", report["with_correction"]),
        ("without correction (round 0 only)", report["without_correction"]),
    ):
        lines.append(
            f"cost per accepted outcome {name}: ${_num(cost['usd_per_accepted'], '.4f')}, "
            f"{_num(cost['seconds_per_accepted'], '.2f')} s"
        )
    return [line.replace("$undefined", "undefined") for line in lines]


@reports_errors
def recovery_command(
    out: Annotated[Path, typer.Argument(help="A correction loop's output directory (`gatestats correct --out`).")],
    confidence_level: ConfidenceLevelOption = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
) -> None:
    """Print recovery within r rounds, rounds and cost per accepted outcome of a correction loop.

    \f
    Parameters
    ----------
    out
        The loop's output directory.
    confidence_level
        Of the Wilson intervals.
    as_json
        Print JSON instead of text.
    """
    checked_option(check_confidence_level, confidence_level, "--confidence-level")
    from gatestats.estimators.recovery import check_round_run_sets, load_rounds

    rounds = load_rounds(out)
    if rounds.height == 0:  # zero rounds is never a summary of nothing (issue 24)
        from gatestats.errors import RecordFileError

        msg = "no correction round recorded: zero rounds are not evidence (did `gatestats correct` run a round?)"
        raise RecordFileError.single(out / "journal.jsonl", "<file>", msg)
    check_round_run_sets(out)  # the rounds' run sets through the gate's door: an edited round is refused
    report = recovery_report(rounds, confidence_level=confidence_level)
    if as_json:
        echo_json({"out": str(out), **cast("JSONObject", report)})  # a RecoveryReport holds JSON values only
        return
    for line in _lines(report):
        typer.echo(line)
