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
    Console(stderr=True).print(
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


def _observations(file: Path, mapping: str | None, system: str, id_column: str | None) -> pl.DataFrame:
    """The observations in ``file``: a table through the table importer (``--map``), else a record file."""
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
        Path, typer.Argument(help="Observations: a record file, or a table (.csv/.jsonl/.parquet) with --map.")
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
) -> None:
    """Add the observations in FILE as the next batch of WATCH (a sealed run set written by the runner).

    \f
    Parameters
    ----------
    watch, file, stage, mapping, id_column, plan
        The log, the observations, their stage, the table's columns, the id column and the plan.
    """
    from gatestats.rollout import add_batch, read_watch_manifest

    manifest = read_watch_manifest(watch)
    records = _observations(file, mapping, manifest.release, id_column)
    batch = add_batch(watch, records, stage=stage, plan_path=plan or manifest.plan_path, source=str(file))
    Console(stderr=True).print(
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
    Console(stderr=True).print(f"added {count} to {watch / 'labels.jsonl'}", highlight=False, markup=False)
