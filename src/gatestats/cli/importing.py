"""``gatestats import table`` and ``gatestats import tau-bench``: other harnesses' results in, records out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import polars as pl
import typer
from rich.console import Console

from gatestats.cli._common import reports_errors, usage_error
from gatestats.gate import Policy, PolicyError, load_policy
from gatestats.importers import import_table, import_tau_bench, parse_mapping
from gatestats.records import write_imported_run_set, write_records_jsonl

__all__ = ["app"]

app = typer.Typer(help="Import trial outcomes from other tools as run records (JSONL).", no_args_is_help=True)

Output = Annotated[
    Path | None, typer.Option("--output", "-o", help="Record file to write (.jsonl); never overwritten.")
]
RunSet = Annotated[
    Path | None,
    typer.Option("--run-set", help="Write a run set directory (manifest + records) instead, for `gatestats gate`."),
]
PolicyOption = Annotated[
    Path | None,
    typer.Option("--policy", help="Gate policy to register in the run set at import (with --run-set)."),
]


def _target(output: Path | None, run_set: Path | None, policy: Path | None) -> Policy | None:
    if (output is None) == (run_set is None):
        raise usage_error("give exactly one of --output FILE and --run-set DIR")
    if policy is not None and run_set is None:
        raise usage_error("--policy registers a policy in a run set: it needs --run-set DIR")
    if policy is None:
        return None
    try:
        return load_policy(policy)
    except PolicyError as exc:
        raise usage_error(str(exc)) from None


def _written(
    records: pl.DataFrame, output: Path | None, run_set: Path | None, policy: Policy | None, source: Path
) -> None:
    if run_set is not None:
        path = write_imported_run_set(records, run_set, policy=policy, source=str(source))
    else:
        assert output is not None  # checked by _target
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
    output: Output = None,
    system: Annotated[str | None, typer.Option(help="System label for every row (instead of system=COL).")] = None,
    run_set_id: Annotated[str | None, typer.Option(help="Run-set id (default: from the file's digest).")] = None,
    run_set: RunSet = None,
    policy: PolicyOption = None,
) -> None:
    """Import any table. Outcomes 1/0, true/false, pass/fail, passed/failed; no trial column = one trial per case."""
    loaded = _target(output, run_set, policy)
    records = import_table(file, parse_mapping(mapping), system=system, run_set_id=run_set_id)
    _written(records, output, run_set, loaded, file)


@app.command("tau-bench")
@reports_errors
def tau_bench_command(
    file: Annotated[Path, typer.Argument(help="τ-bench results (JSON list) or τ²-bench results file.")],
    output: Output = None,
    system: Annotated[str | None, typer.Option(help="System label (default: the file name).")] = None,
    model_id: Annotated[str | None, typer.Option(help="Model id to record (τ-bench files lack it).")] = None,
    run_set_id: Annotated[str | None, typer.Option(help="Run-set id (default: from the file's digest).")] = None,
    run_set: RunSet = None,
    policy: PolicyOption = None,
) -> None:
    """Import τ-bench results: success = reward within 1e-6 of 1; costs from info where present."""
    loaded = _target(output, run_set, policy)
    records = import_tau_bench(file, system=system, model_id=model_id, run_set_id=run_set_id)
    _written(records, output, run_set, loaded, file)
