"""``gatestats cases``: the protected golden set — approve, retire, reclassify, check, diff, trends.

Exit codes: 0 done; 1 invalid input or a refused change (no approver name, no such proposal, a
twin in the target split), and for ``check`` and ``verify-graders`` any finding (the run is blocked).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gatestats.cli._common import EXIT_INPUT_ERROR, load_cli_records, reports_errors
from gatestats.io.text import visible

if TYPE_CHECKING:
    from gatestats.golden import Finding

__all__ = ["app"]

app = typer.Typer(help="The protected golden set: approvals, splits, versions.", no_args_is_help=True)

SetOption = Annotated[Path, typer.Option("--set", help="Golden set directory.")]
ByOption = Annotated[str | None, typer.Option("--by", help="Who decides (a person's name; required).")]


def _date(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        msg = f"{option}: expected a date YYYY-MM-DD (got {value!r:.80})"
        raise ValueError(msg) from None


@app.command("approve")
@reports_errors
def approve_command(
    case_id: Annotated[str, typer.Argument(help="The proposed case.")],
    by: ByOption = None,
    golden_set: SetOption = Path("golden"),
    owner: Annotated[str | None, typer.Option("--owner", help="Who owns the case (default: the approver).")] = None,
    review_by: Annotated[str | None, typer.Option("--review-by", help="Review date (default: in 180 days).")] = None,
) -> None:
    """Move CASE_ID from the proposals into the set: the human decision, recorded in the set's manifest.

    \f

    Parameters
    ----------
    case_id, by, owner, golden_set
        As in :func:`gatestats.golden.approve` (``golden_set`` is its ``root``).
    review_by
        The review date, ``YYYY-MM-DD``.
    """
    from gatestats.golden import approve

    event = approve(golden_set, case_id, by=by, owner=owner, review_by=_date(review_by, "--review-by"))
    print(
        f"approved {case_id} by {visible(event['by'])}; owner {visible(event['owner'])}, review by {event['review_by']}"
    )
    print(f"set version: {event['set_version']}")


@app.command("retire")
@reports_errors
def retire_command(
    case_id: Annotated[str, typer.Argument(help="The approved case.")],
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why (workload gone, oracle no longer the contract).")
    ] = None,
    by: ByOption = None,
    golden_set: SetOption = Path("golden"),
) -> None:
    """Retire CASE_ID (kept under SET/retired/); the set gets a new version.

    \f
    Parameters as in :func:`gatestats.golden.retire` (``golden_set`` is its ``root``).
    """
    from gatestats.golden import retire

    event = retire(golden_set, case_id, reason=reason or "", by=by or "")
    print(f"retired {case_id}: {visible(event['reason'])}")
    print(f"set version: {event['set_version']}")


@app.command("reclassify")
@reports_errors
def reclassify_command(
    case_id: Annotated[str, typer.Argument(help="The case to move.")],
    split: Annotated[str, typer.Option("--split", help="development, validation, test or holdout.")],
    reason: Annotated[str | None, typer.Option("--reason", help="Why it moves.")] = None,
    by: ByOption = None,
    golden_set: SetOption = Path("golden"),
    override_twin: Annotated[
        str | None, typer.Option("--override-twin", help="Reason to put it in its twin's split.")
    ] = None,
) -> None:
    """Move CASE_ID to another split (a new case version; the approval carries over).

    \f
    Parameters as in :func:`gatestats.golden.reclassify` (``golden_set`` is its ``root``).
    """
    from gatestats.golden import reclassify

    event = reclassify(golden_set, case_id, split=split, reason=reason or "", by=by or "", override_twin=override_twin)
    print(f"reclassified {case_id}: {event['from']} -> {event['to']} ({visible(event['reason'])})")


@app.command("list")
@reports_errors
def list_command(
    golden_set: SetOption = Path("golden"),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the set's cases: status, split, failure class, owner, review date.

    \f

    Parameters
    ----------
    golden_set, as_json
        The set to list (``--set``); print JSON instead of lines (``--json``).
    """
    from gatestats.golden import case_states, set_version

    states = case_states(golden_set)
    if as_json:
        rows = [
            {
                k: getattr(s, k)
                for k in ("case_id", "status", "split", "failure_class", "severity", "owner", "review_by")
            }
            for s in states.values()
        ]
        print(json.dumps({"set_version": set_version(golden_set), "cases": rows}))
        return
    print(f"set version: {set_version(golden_set)}")
    for s in states.values():
        owner = visible(s.owner)
        print(
            f"{s.case_id}  {s.status}  {s.split}  {s.failure_class}  {s.severity}  owner={owner}  "
            f"review_by={s.review_by}"
        )


@app.command("stale")
@reports_errors
def stale_command(
    golden_set: SetOption = Path("golden"),
    today: Annotated[
        str | None, typer.Option("--today", help="The date to compare with (default: today, UTC).")
    ] = None,
) -> None:
    """List approved cases past their review date.

    \f
    Parameters as in :func:`gatestats.golden.stale` (``golden_set`` is its ``root``; ``today`` a ``YYYY-MM-DD``).
    """
    day = _date(today, "--today") or datetime.now(UTC).date()
    from gatestats.golden import stale

    late = stale(golden_set, today=day)
    for s in late:
        print(f"{s.case_id}  review by {s.review_by}  owner {visible(s.owner)}")
    print(f"{len(late)} case(s) past review on {day.isoformat()}")


def _report(findings: tuple[Finding, ...], what: str) -> None:
    for finding in findings:
        print(visible(str(finding), limit=4000))
    if findings:
        print(f"{len(findings)} finding(s): {what}")
        raise typer.Exit(EXIT_INPUT_ERROR)
    print("no finding")


@app.command("check")
@reports_errors
def check_command(
    golden_set: Annotated[Path, typer.Argument(help="Golden set directory.")],
    run_sets: Annotated[
        list[Path] | None, typer.Argument(help="Run set directories to check for test-split use.")
    ] = None,
) -> None:
    """Flag test-split cases used outside gate runs, and judges that cannot vote (no calibration).

    \f
    Parameters as in :func:`gatestats.golden.check_split_use`.
    """
    from gatestats.golden import check_split_use, judges_without_calibration

    findings = check_split_use(golden_set, run_sets or []) + judges_without_calibration(golden_set)
    _report(findings, "reclassify leaked test cases; name a calibration for each judge")


@app.command("verify-graders")
@reports_errors
def verify_graders_command(
    golden_set: Annotated[Path, typer.Argument(help="Golden set directory.")],
    run_set: Annotated[Path, typer.Argument(help="Run set directory.")],
) -> None:
    """Block RUN_SET when a case's verifier is not the approved one (names the case and who changed it).

    \f
    Parameters as in :func:`gatestats.golden.check_graders`.
    """
    from gatestats.golden import check_graders

    _report(check_graders(golden_set, run_set), "the run is blocked until each change is approved")


@app.command("diff")
@reports_errors
def diff_command(
    old: Annotated[Path, typer.Argument(help="Old golden set (or case set) directory.")],
    new: Annotated[Path, typer.Argument(help="New golden set (or case set) directory.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Added, retired and changed cases between two versions of a set.

    \f
    Parameters as in :func:`gatestats.golden.diff_sets`; ``as_json`` prints JSON instead of lines.
    """
    from gatestats.golden import diff_sets

    diff = diff_sets(old, new)
    if as_json:
        print(json.dumps(diff.to_dict()))
        return
    print(f"old {diff.old_version}\nnew {diff.new_version}")
    for cid in diff.added:
        print(f"added    {cid}")
    for cid in diff.retired:
        print(f"retired  {cid}")
    for change in diff.changed:
        print(f"changed  {change.case_id}{'  (grader changed)' if change.grader_changed else ''}")
    print(f"{len(diff.unchanged)} unchanged")


@app.command("trends")
@reports_errors
def trends_command(
    golden_set: Annotated[Path, typer.Argument(help="Golden set directory.")],
    last: Annotated[int, typer.Option("--last", help="How many recent promotions to count.")] = 10,
    records: Annotated[
        list[Path] | None, typer.Option("--records", help="Record files or run sets: the failed cases.")
    ] = None,
) -> None:
    """Failure classes of the recent promotions and failed cases, counted once per case, with 95% Wilson intervals.

    \f

    Parameters
    ----------
    golden_set, last
        The set whose events are counted, and as in :func:`gatestats.golden.failure_class_trends`.
    records
        Record files or run sets whose failed cases are counted.
    """
    from gatestats.golden import events, failure_class_of, failure_class_trends

    frame = load_cli_records(records)[0] if records else None
    trends = failure_class_trends(events(golden_set), last=last, records=frame, classes=failure_class_of(golden_set))
    print(f"last {trends.promotions} promotion(s); {trends.failed_cases} failed case(s)")
    for r in trends.rows:
        print(f"{r.source:<10}  {r.failure_class:<24}  {r.count} of {r.n}  [{r.low:.2f}, {r.high:.2f}]")
