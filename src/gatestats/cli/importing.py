"""``gatestats import table`` and ``gatestats import tau-bench``: other harnesses' results in, records out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import polars as pl
import typer
from rich.console import Console

from gatestats.cli._common import reports_errors
from gatestats.importers import import_table, import_tau_bench, parse_mapping
from gatestats.records import write_records_jsonl

__all__ = ["app"]

app = typer.Typer(help="Import trial outcomes from other tools as run records (JSONL).", no_args_is_help=True)

Output = Annotated[Path, typer.Option("--output", "-o", help="Record file to write (.jsonl); never overwritten.")]


def _written(records: pl.DataFrame, output: Path) -> None:
    path = write_records_jsonl(records, output)
    systems = records["system"].n_unique()
    cases = records.select("system", "case_id", "case_version").unique().height
    Console(stderr=True).print(
        f"wrote {records.height} records ({systems} system(s), {cases} case(s)) to {path}",
        highlight=False,
    )


@app.command("table")
@reports_errors
def table_command(
    file: Annotated[Path, typer.Argument(help="Table of trial outcomes: .csv, .jsonl or .parquet.")],
    mapping: Annotated[
        str,
        typer.Option(
            "--map",
            help=(
                "Record field = table column, comma-separated: "
                "case_id=COL,outcome=COL[,system=COL,trial=COL,cost_usd=COL,...]."
            ),
        ),
    ],
    output: Output,
    system: Annotated[str | None, typer.Option(help="System label for every row (instead of system=COL).")] = None,
    run_set_id: Annotated[str | None, typer.Option(help="Run-set id (default: from the file's digest).")] = None,
) -> None:
    """Import any table. Outcomes 1/0, true/false, pass/fail, passed/failed; no trial column = one trial per case."""
    records = import_table(file, parse_mapping(mapping), system=system, run_set_id=run_set_id)
    _written(records, output)


@app.command("tau-bench")
@reports_errors
def tau_bench_command(
    file: Annotated[Path, typer.Argument(help="τ-bench results (JSON list) or τ²-bench results file.")],
    output: Output,
    system: Annotated[str | None, typer.Option(help="System label (default: the file name).")] = None,
    model_id: Annotated[str | None, typer.Option(help="Model id to record (τ-bench files lack it).")] = None,
    run_set_id: Annotated[str | None, typer.Option(help="Run-set id (default: from the file's digest).")] = None,
) -> None:
    """Import τ-bench results: success = reward within 1e-6 of 1; costs from info where present."""
    records = import_tau_bench(file, system=system, model_id=model_id, run_set_id=run_set_id)
    _written(records, output)
