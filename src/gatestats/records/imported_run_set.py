"""Imported records as a run set: checked here, written by the runner (:mod:`gatestats_runner.runsets`).

Records made by another harness (``gatestats import ... --run-set DIR``) become a run set so that
a gate policy can be registered at import. The records layer checks them against the contract,
schema and data (:func:`~gatestats.records.validate_records`) with errors that name the row and
field; the runner, which owns every run set's files, writes ``records.jsonl`` (each line
checksummed), the manifest (``origin: "import"``, the source's digest, who imported it, the policy)
and the seal, whole or not at all.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from gatestats.records.runset import RECORDS
from gatestats.records.schema import validate_records
from gatestats_runner.runsets import PolicyRef
from gatestats_runner.runsets import write_imported_run_set as _write_run_set

__all__ = ["PolicyRef", "write_imported_run_set"]


def write_imported_run_set(
    records: pl.DataFrame, out: str | os.PathLike[str], *, policy: PolicyRef | None, source: str
) -> Path:
    """Write imported records as a run set directory (``manifest.json`` + ``records.jsonl``).

    Parameters
    ----------
    records
        Contract records, as the importers return them.
    out
        The run set directory to create; an existing one is refused (an imported run set is
        written once).
    policy
        The gate policy to register at import (a :class:`~gatestats.gate.Policy`), or None.
    source
        The file the records came from (its digest goes into the manifest).

    Returns
    -------
    pathlib.Path
        The run set directory, written whole by the runner.

    Raises
    ------
    FileExistsError
        ``out`` exists: nothing is checked or written.
    RecordFileError
        The records break the contract, schema or data checks (nothing is written).
    """
    target = Path(out)
    if target.exists():
        msg = f"{target}: exists; an imported run set is written once (choose a new directory)"
        raise FileExistsError(msg)
    checked = validate_records(records, source=str(target / RECORDS))
    return _write_run_set(target, checked.iter_rows(named=True), source=source, policy=policy)
