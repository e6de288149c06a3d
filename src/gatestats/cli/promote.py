"""``gatestats promote``: a trace becomes a *proposed* case of a golden set (docs/golden.md).

Exit codes: 0 written; 1 invalid input (a trace or expectation field missing or wrong, a duplicate
case id, an unknown split or severity, a hostile id, a near-duplicate in the same split without
``--override-twin``): the message names file and field, and nothing is written.
"""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Annotated

import typer

from gatestats.cli._common import reports_errors
from gatestats.io.text import visible

__all__ = ["promote_command"]


@reports_errors
def promote_command(
    trace: Annotated[Path, typer.Argument(help="Trace: gatestats-trace/1 JSON, OTLP/JSON GenAI spans, or a run set.")],
    case_id: Annotated[str, typer.Option("--case-id", help="Id of the new case (letters, digits, '.', '_', '-').")],
    failure_class: Annotated[str, typer.Option("--failure-class", help="Failure class, e.g. policy_misread.")],
    severity: Annotated[str, typer.Option("--severity", help="low, medium, high or critical.")],
    split: Annotated[str, typer.Option("--split", help="development, validation, test or holdout.")],
    expect: Annotated[Path, typer.Option("--expect", help="Expected outcome (gatestats-expect/1 JSON).")],
    golden_set: Annotated[Path, typer.Option("--set", help="Golden set directory.")] = Path("golden"),
    by: Annotated[str | None, typer.Option("--by", help="Who proposes (default: the login name).")] = None,
    why: Annotated[str | None, typer.Option("--why", help="Why this trace becomes a case.")] = None,
    record: Annotated[str | None, typer.Option("--record", help="Record id, when TRACE is a run set.")] = None,
    override_twin: Annotated[
        str | None, typer.Option("--override-twin", help="Reason to put a near-duplicate in its twin's split.")
    ] = None,
) -> None:
    """Write a proposed case from TRACE into SET/proposed/ (a person approves it with `gatestats cases approve`).

    \f

    Parameters
    ----------
    trace, record
        The trace file, or a run set and the id of one of its records.
    case_id, failure_class, severity, split, expect
        The new case: as in :func:`gatestats.golden.promote` (``expect``: its ``expect.json`` file).
    golden_set, by, why, override_twin
        The set's directory, and the rest as in :func:`gatestats.golden.promote`.

    Raises
    ------
    ValueError
        TRACE is a run set and ``--record`` is missing (exit 1).
    """
    from gatestats.golden import promote, read_expect, read_run_record_trace, read_trace

    if trace.is_dir() or record is not None:
        if record is None:
            msg = f"{trace}: a run set needs --record RECORD_ID"
            raise ValueError(msg)
        source = read_run_record_trace(trace, record)
    else:
        source = read_trace(trace)
    expectation = read_expect(expect)
    done = promote(
        golden_set,
        source,
        case_id=case_id,
        failure_class=failure_class,
        severity=severity,
        split=split,
        expectation=expectation,
        by=by if by is not None else getpass.getuser(),
        why=why,
        override_twin=override_twin,
    )
    print(f"proposed {done.case_id} ({done.split}) at {visible(done.path)}")
    print(f"case version: {done.case_version}")
    for twin in done.twins:
        print(f"near-duplicate: {twin.case_id} ({twin.status}, {twin.split}, Jaccard {twin.jaccard:.2f})")
    if done.override_twin is not None:
        print(f"twin override recorded: {visible(done.override_twin)}")
    uncalibrated = [j.name for j in expectation.judges if not j.can_vote]
    if uncalibrated:
        print(f"judges without a calibration (cannot vote until one is named): {', '.join(uncalibrated)}")
    print(f"approve with: gatestats cases approve {done.case_id} --set {visible(golden_set)} --by NAME")
