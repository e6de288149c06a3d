"""``gatestats watch init|observe|label``: the observation log of a release after the gate (docs/rollout.md).

Exit codes: 0 written; 2 a usage or input error (an unknown release or stage, a plan edited after
its registration, a label naming no record, a hostile id, a bad table: nothing written); 1 the
log's own evidence cannot be read (a batch or the label file edited after it was written).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ParamSpec, TypeVar

import typer
from rich.console import Console

from gatestats.cli._common import fail, usage_error
from gatestats.errors import GatestatsError, RecordFileError

if TYPE_CHECKING:
    import polars as pl

    from gatestats.rollout.decision import WatchDecision

__all__ = ["app"]

app = typer.Typer(
    help="Watch a release after the gate: register its rollout plan, add observations and late labels.",
    no_args_is_help=True,
)

P = ParamSpec("P")
R = TypeVar("R")
WatchDir = Annotated[Path, typer.Argument(help="The watch directory (made by `gatestats watch init`).")]


def _inputs_named(exc: RecordFileError, inputs: tuple[Path, ...]) -> bool:
    """Whether every problem is in one of the files the user gave (not in the log's own evidence)."""
    given = {str(p) for p in inputs} | {"<records>"}
    return all(problem.file in given for problem in exc.problems)


def _reports(*inputs: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Errors as messages: the user's input (the named parameters' files) exit 2, the log's evidence exit 1."""

    def decorate(command: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(command)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            from gatestats.gate import VerdictFileError
            from gatestats.rollout import PlanError, WatchError

            given = tuple(Path(str(kwargs[name])) for name in inputs if kwargs.get(name) is not None)
            try:
                return command(*args, **kwargs)
            except (WatchError, PlanError, VerdictFileError, FileExistsError) as exc:
                raise usage_error(str(exc)) from None
            except RecordFileError as exc:
                raise (usage_error(str(exc)) if _inputs_named(exc, given) else fail(str(exc))) from None
            except (GatestatsError, ValueError, OSError) as exc:
                raise fail(str(exc)) from None

        return wrapper

    return decorate


@app.command("init")
@_reports("plan", "verdict")
def init_command(
    watch: WatchDir,
    plan: Annotated[Path, typer.Option("--plan", help="The rollout plan (TOML, [rollout]) to register.")],
    verdict: Annotated[Path, typer.Option("--verdict", help="The gate's verdict of the release (pass or warn).")],
) -> None:
    """Create WATCH and register the release, its verdict and its rollout plan before any observation.

    \f
    Parameters
    ----------
    watch, plan, verdict
        The new directory, the plan and the verdict.
    """
    from gatestats.rollout import init_log

    manifest = init_log(watch, plan_path=plan, verdict_path=verdict)
    Console(emoji=False, stderr=True).print(
        f"watching release {manifest.release!r} in {watch}: plan {manifest.plan_digest} registered "
        f"at {manifest.created_at}",
        highlight=False,
        markup=False,
    )


def _with_ids(records: pl.DataFrame, file: Path, column: str) -> pl.DataFrame:
    """The records with their ``record_id`` taken from the table's ``column`` (row i from row i)."""
    import polars as pl

    from gatestats.errors import RecordProblem
    from gatestats.tables.inputs import read_input_table, typed_cell

    table = read_input_table(file, [column])
    ids: list[str | None] = []
    problems: list[RecordProblem] = []
    for index, row in enumerate(table.rows):
        value, why = typed_cell(row[column], "id", text=table.text)
        if why is None and value is None:
            why = "required value is missing (the record id of an observation)"
        if why is not None:
            problems.append(table.problem(index, column, why))
        ids.append(value)
    if problems:
        raise RecordFileError(problems)
    if len(ids) != records.height:
        raise RecordFileError.single(file, column, f"{len(ids)} ids for {records.height} records")
    return records.with_columns(pl.Series("record_id", ids, dtype=pl.String))


def _spans_or_traces(file: Path, source_format: str, system: str) -> pl.DataFrame:
    """The observations of OTLP/JSON GenAI spans or ``gatestats-trace/1`` files (a file or a directory)."""
    from gatestats.importers import import_otel_observations, import_trace_observations

    read = import_otel_observations if source_format == "otel" else import_trace_observations
    try:
        return read(file, system=system)
    except RecordFileError as exc:  # the user's files (also those inside a directory FILE): exit 2
        raise usage_error(str(exc)) from None


def _observations(
    file: Path, mapping: str | None, system: str, id_column: str | None, source_format: str | None = None
) -> pl.DataFrame:
    """The observations in ``file``: spans or traces (``--from``), a table (``--map``), else a record file."""
    if source_format is not None:
        if source_format not in ("otel", "trace"):
            raise usage_error(f"--from: expected otel or trace (got {source_format!r:.80})")
        if mapping is not None or id_column is not None:
            raise usage_error("--map/--id-column: only for a table (spans and traces carry their trace id)")
        return _spans_or_traces(file, source_format, system)
    if mapping is None:
        if id_column is not None:
            raise usage_error("--id-column: only with --map (a record file carries its record_id)")
        from gatestats.records import read_record_file

        return read_record_file(file)[0]
    from gatestats.importers import import_table, parse_mapping

    try:
        fields = parse_mapping(mapping)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    records = import_table(file, fields, system=None if "system" in fields else system)
    return records if id_column is None else _with_ids(records, file, id_column)


@app.command("observe")
@_reports("file", "plan")
def observe_command(
    watch: WatchDir,
    file: Annotated[
        Path,
        typer.Argument(
            help="Observations: a record file, a table (.csv/.jsonl/.parquet) with --map, or spans/traces with --from."
        ),
    ],
    stage: Annotated[str, typer.Option("--stage", help="The stage they come from (one of the plan's stages).")],
    mapping: Annotated[
        str | None,
        typer.Option(
            "--map",
            help=(
                "Record field = table column, as `gatestats import table --map` (case_id=COL,outcome=COL,"
                "accepted=COL,review_minutes=COL,unauthorized_actions=COL,cohort=COL,cost_usd=COL,...)."
            ),
        ),
    ] = None,
    id_column: Annotated[
        str | None, typer.Option("--id-column", help="With --map: the column holding each observation's record id.")
    ] = None,
    plan: Annotated[
        Path | None, typer.Option("--plan", help="The rollout plan (default: the registered one's path).")
    ] = None,
    source_format: Annotated[
        str | None,
        typer.Option(
            "--from",
            help=(
                "otel: OTLP/JSON GenAI spans, one observation per trace id; trace: gatestats-trace/1 files, "
                "one each (FILE may be a directory). Default: a table with --map, else a record file."
            ),
        ),
    ] = None,
) -> None:
    """Add the observations in FILE as the next batch of WATCH (a sealed run set written by the runner).

    \f
    Parameters
    ----------
    watch, file, stage, mapping, id_column, plan, source_format
        The log, the observations, their stage, the table's columns, the id column, the plan and
        the format of FILE (``otel`` or ``trace``; None: a table or a record file).
    """
    from gatestats.rollout import add_batch, read_watch_manifest

    manifest = read_watch_manifest(watch)
    records = _observations(file, mapping, manifest.release, id_column, source_format)
    batch = add_batch(watch, records, stage=stage, plan_path=plan or manifest.plan_path, source=str(file))
    Console(emoji=False, stderr=True).print(
        f"wrote batch {batch.number:04d} (stage {batch.stage}): {batch.n_records} observation"
        + ("" if batch.n_records == 1 else "s")
        + f" to {batch.path}",
        highlight=False,
        markup=False,
    )


@app.command("label")
@_reports("file")
def label_command(
    watch: WatchDir,
    file: Annotated[
        Path,
        typer.Argument(help="Late labels: a table with record_id, label, observed_at[, note, source]."),
    ],
) -> None:
    """Append the late labels in FILE to WATCH/labels.jsonl (each must name a record of the log).

    \f
    Parameters
    ----------
    watch, file
        The log and the label table.
    """
    from gatestats.rollout import add_labels

    added = add_labels(watch, file)
    count = f"{len(added)} late label" + ("" if len(added) == 1 else "s")
    Console(emoji=False, stderr=True).print(f"added {count} to {watch / 'labels.jsonl'}", highlight=False, markup=False)


def _evalue(log_e: float | None, threshold: float | None) -> str:
    """The e-value now against 1/α, plain decimals; a count has none."""
    import math

    if log_e is None or threshold is None:
        return "— (a count)"
    shown = "> 1e300" if log_e > 690 else f"{math.exp(log_e):.3g}"
    return f"{shown} / {math.exp(threshold):.3g}"


def _print_reading(decision: WatchDecision, written: Path | None) -> None:
    """The reading as two tables (stages, triggers) and its decision line, on stdout."""
    from rich.table import Table

    from gatestats.io.text import visible

    console = Console(emoji=False, width=200, highlight=False)
    stages = Table(title=f"rollout of {visible(decision.release)}: stages", title_justify="left")
    for column in ("stage", "owner", "observations", "pending", "days", "action", "reason"):
        stages.add_column(column, overflow="fold")
    for s in decision.stages:
        days = "—" if s.days_observed is None else f"{s.days_observed:.1f}"
        stages.add_row(
            s.stage,
            visible(s.owner),
            f"{s.n_observations}/{s.min_observations}",
            str(s.pending),
            days,
            s.action,
            visible(s.reason, limit=300),
        )
    console.print(stages, markup=False)
    triggers = Table(title="triggers (anytime-valid: read after every batch)", title_justify="left")
    for column in ("stage", "trigger", "level", "α", "n", "estimate", "e-value / 1/α", "status", "fired at"):
        triggers.add_column(column, overflow="fold")
    for s in decision.stages:
        for t in s.triggers:
            where = "—" if t.fired_record is None else f"{visible(t.fired_record)} ({t.fired_batch}, {t.fired_time})"
            triggers.add_row(
                s.stage,
                visible(t.name),
                "—" if t.level is None else f"{t.level:.4g}",
                "—" if t.alpha is None else f"{t.alpha:g}",
                str(t.n),
                "—" if t.estimate is None else f"{t.estimate:.4f}",
                "—" if t.status == "insufficient_evidence" else _evalue(t.log_evalue, t.threshold),
                t.status.replace("_", " "),
                where if t.status != "insufficient_evidence" else visible(t.reason),
            )
    console.print(triggers, markup=False)
    word = {"roll_back": "ROLL BACK", "advance": "ADVANCE", "continue": "CONTINUE"}[decision.action]
    print(f"rollout: {word} (exit {decision.exit_code}) at {decision.created_at}")
    for reason in decision.reasons:
        print(f"  - {visible(reason, limit=500)}")
    if decision.escaped_defects:
        print(f"escaped defects: {len(decision.escaped_defects)} (gatestats watch defects lists them for promotion)")
    if written is not None:
        print(f"decision file: {written}")


@app.command("status")
@_reports("plan", "previous")
def status_command(
    watch: WatchDir,
    plan: Annotated[
        Path | None, typer.Option("--plan", help="The rollout plan (default: the registered one's path).")
    ] = None,
    previous: Annotated[
        Path | None,
        typer.Option("--previous", help="The previous release's watch directory (for vs_previous triggers)."),
    ] = None,
    record: Annotated[
        bool, typer.Option("--record/--no-record", help="Write the reading as WATCH/decisions/NNNN.json.")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the reading as one JSON object.")] = False,
) -> None:
    """Read the rollout once: per stage continue, advance or roll back (exit 0 / 20 / 21).

    Every trigger of the plan is read on the observations and late labels so far with an
    anytime-valid test (reading after every batch keeps the false-rollback rate at most α).

    \f
    Parameters
    ----------
    watch, plan, previous
        The log, its plan (its digest must be the registered one), the previous release's log.
    record
        Write the reading as a decision file (the release record's path after the gate).
    as_json
        Print the reading as JSON instead of the tables.

    Raises
    ------
    typer.Exit
        With the reading's exit code: 0 continue, 20 advance, 21 roll back.
    """
    import json
    import sys

    from gatestats.rollout import read_watch_manifest
    from gatestats.rollout.record import write_decision
    from gatestats.rollout.watch import watch as read_rollout

    plan_path = plan if plan is not None else Path(read_watch_manifest(watch).plan_path)
    decision = read_rollout(watch, plan_path=plan_path, previous=previous)
    written = write_decision(watch, decision) if record else None
    if as_json:
        body = decision.to_dict() | {"decision_file": None if written is None else str(written)}
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    else:
        _print_reading(decision, written)
    raise typer.Exit(decision.exit_code)


@app.command("defects")
@_reports()
def defects_command(watch: WatchDir) -> None:
    """List the escaped defects (late labels) with the `gatestats promote` command that proposes each as a case.

    An observation carries no request to replay; its production trace does (``gatestats-trace/1`` or
    OTLP spans, its ``trace_id`` the record id). A person writes the expected outcome (``--expect``) and
    runs the command; the case is proposed, never approved automatically (``gatestats cases approve``),
    and its ``--why`` names the production record and the batch it is in.

    \f
    Parameters
    ----------
    watch
        The log.
    """
    import shlex

    from gatestats.io.text import visible
    from gatestats.rollout import read_labels, read_log

    log = read_log(watch)
    ids, batches = log.records.get_column("record_id").to_list(), log.records.get_column("batch").to_list()
    where = dict(zip(ids, batches, strict=True))
    defects = [label for label in read_labels(watch) if label.label == "escaped_defect"]
    if not defects:
        print("no escaped defect has been labelled")
        return
    for label in defects:
        batch = watch / "batches" / f"{where[label.record_id]:04d}"
        case = "escaped-" + "".join(c if c.isalnum() or c in "._-" else "-" for c in label.record_id)[:80]
        why = f"escaped defect: production record {label.record_id} ({batch}), found {label.observed_at}"
        command = [
            "gatestats",
            "promote",
            "TRACE.json",
            "--case-id",
            case,
            "--failure-class",
            "escaped_defect",
            "--severity",
            "high",
            "--split",
            "development",
            "--expect",
            "EXPECT.json",
            "--why",
            why,
        ]
        found = f"batch {where[label.record_id]}, found {label.observed_at}"
        print(f"{visible(label.record_id)} ({found}): {visible(label.note or '')}")
        print("  " + " ".join(shlex.quote(part) for part in command))
    print(
        "TRACE.json: the production trace of the record (its trace_id the record id); EXPECT.json: the expected outcome"
    )
