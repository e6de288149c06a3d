"""``gatestats validate``: check record files against the run-record contract v1."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gatestats.cli._common import reports_errors
from gatestats.records import load_records

__all__ = ["validate_command"]


@reports_errors
def validate_command(
    records: Annotated[list[Path], typer.Argument(help="Record files (.jsonl, .parquet, .csv).")],
) -> None:
    """Check record files (types, values, cross-field rules, duplicate keys); exit 1 on any defect."""
    frame = load_records(records)
    Console().print(
        f"ok: {frame.height} records in {len(records)} file(s) satisfy the run-record contract v1",
        highlight=False,
    )
