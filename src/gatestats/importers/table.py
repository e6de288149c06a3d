"""Import trial outcomes from any table (CSV, JSONL or Parquet) through a column mapping."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import polars as pl

from gatestats._mapping import parse_field_mapping
from gatestats.errors import RecordFileError, RecordProblem
from gatestats.importers._common import build_records, file_digest
from gatestats.records.contract import NESTED_FIELDS, POLARS_SCHEMA
from gatestats.records.io import relocate_problems

__all__ = ["OUTCOME_VALUES", "import_table", "parse_mapping"]

#: Accepted spellings of an outcome (case-insensitive, surrounding blanks ignored).
OUTCOME_VALUES: Mapping[str, str] = {
    "1": "passed",
    "1.0": "passed",
    "true": "passed",
    "pass": "passed",
    "passed": "passed",
    "0": "failed",
    "0.0": "failed",
    "false": "failed",
    "fail": "failed",
    "failed": "failed",
    "resource_killed": "resource_killed",
    "infra_error": "infra_error",
}
_GENERATED = {"schema_version", "record_id", "run_set_id", "source"}
_MAPPABLE = tuple(name for name in POLARS_SCHEMA if name not in _GENERATED and name not in NESTED_FIELDS)
_TABLE_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


def parse_mapping(text: str) -> dict[str, str]:
    """Parse ``field=COLUMN,field=COLUMN`` into a dict, rejecting unknown or repeated fields.

    >>> parse_mapping("case_id=task,outcome=ok")
    {'case_id': 'task', 'outcome': 'ok'}
    """
    return parse_field_mapping(text, _MAPPABLE, noun="record field")


def _read_table(path: Path) -> pl.DataFrame:
    kind = _TABLE_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        msg = f"unknown table type {path.suffix!r} (expected .csv, .jsonl, .ndjson or .parquet)"
        raise RecordFileError.single(path, "<file>", msg)
    try:
        if kind == "csv":
            return pl.read_csv(path, infer_schema=False, null_values=[""])
        if kind == "jsonl":
            return pl.read_ndjson(path, infer_schema_length=None)
        return pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise RecordFileError.single(path, "<file>", f"cannot read {kind.upper()} table: {exc}") from None


def _bad_rows(
    frame: pl.DataFrame, mask: pl.Expr, path: Path, field: str, column: str, expected: str
) -> list[RecordProblem]:
    bad = frame.with_row_index("__row").filter(mask).head(50)
    return relocate_problems(
        RecordProblem(
            file=str(path),
            row=int(row["__row"]),
            field=field,
            message=f"column {column!r}: expected {expected} (got {row[column]!r})",
        )
        for row in bad.iter_rows(named=True)
    )


def import_table(
    path: str | Path,
    mapping: Mapping[str, str],
    *,
    system: str | None = None,
    run_set_id: str | None = None,
) -> pl.DataFrame:
    """Turn a table of trial outcomes into validated run records (contract v1).

    Parameters
    ----------
    path
        A ``.csv``, ``.jsonl``/``.ndjson`` or ``.parquet`` table, one row per trial.
    mapping
        Record field -> table column. ``case_id`` and ``outcome`` are required; ``system``
        unless the ``system`` argument names it; ``trial`` optional (absent: one trial per case,
        so a case may appear only once). Outcome values ``1/0``, ``true/false``,
        ``pass/fail``, ``passed/failed`` (any case) map to ``passed``/``failed``;
        ``resource_killed`` and ``infra_error`` are kept.
    system
        System label for every row (instead of a mapped column).
    run_set_id
        Run-set id of the records; default ``import-<first 12 hex of the file's sha256>``.

    Raises
    ------
    RecordFileError
        With file, line (or Parquet row) and field of every defect; nothing is returned.
    ValueError
        The mapping is unusable.
    """
    file = Path(path)
    if not file.is_file():
        raise RecordFileError.single(file, "<file>", "no such table file")
    fields = dict(mapping)
    for field in fields:
        if field not in _MAPPABLE:
            msg = f"mapping: unknown record field {field!r} (mappable: {', '.join(_MAPPABLE)})"
            raise ValueError(msg)
    for needed in ("case_id", "outcome"):
        if needed not in fields:
            msg = f"mapping: {needed}=COLUMN is required"
            raise ValueError(msg)
    if ("system" in fields) == (system is not None):
        msg = (
            "mapping: give the system either as a column (system=COLUMN) or as a label (--system), not both or neither"
        )
        raise ValueError(msg)
    table = _read_table(file)
    missing = [column for column in fields.values() if column not in table.columns]
    if missing:
        raise RecordFileError(
            [
                RecordProblem(
                    file=str(file),
                    field=column,
                    message=f"mapped column not in the table (columns: {table.columns})",
                    line=1 if file.suffix.lower() == ".csv" else None,
                )
                for column in missing
            ]
        )
    text = table.select(pl.col(column).cast(pl.String).alias(field) for field, column in fields.items())
    outcome_key = pl.col("outcome").str.strip_chars().str.to_lowercase()
    problems = _bad_rows(
        text.with_columns(pl.col("outcome").alias(fields["outcome"])),
        outcome_key.is_null() | ~outcome_key.is_in(list(OUTCOME_VALUES)),
        file,
        "outcome",
        fields["outcome"],
        "one of 1/0, true/false, pass/fail, passed/failed, resource_killed, infra_error",
    )
    typed: dict[str, pl.Expr] = {}
    for field, column in fields.items():
        if field == "outcome":
            continue
        dtype = POLARS_SCHEMA[field]
        expr = pl.col(field).str.strip_chars()
        converted: pl.Expr
        if dtype == pl.Int64():
            number = expr.cast(pl.Float64, strict=False)
            converted = pl.when(number == number.round()).then(number.cast(pl.Int64, strict=False))
        else:
            converted = expr.cast(dtype, strict=False)
        typed[field] = converted
        problems += _bad_rows(
            text.with_columns(pl.col(field).alias(column)),
            pl.col(field).is_not_null() & converted.is_null(),
            file,
            field,
            column,
            str(dtype).lower(),
        )
    if problems:
        raise RecordFileError(problems)
    columns = text.select(
        *(expr.alias(field) for field, expr in typed.items()),
        outcome=outcome_key.replace_strict(dict(OUTCOME_VALUES), return_dtype=pl.String),
    )
    if system is not None:
        columns = columns.with_columns(system=pl.lit(system))
    if "trial" not in columns.columns:
        columns = columns.with_columns(trial=pl.lit(0, pl.Int64))
    digest = file_digest(file)
    return build_records(
        columns,
        source_file=file,
        run_set_id=run_set_id or f"import-{digest[:12]}",
        source=f"gatestats import table {file.name} (sha256 {digest})",
    )
