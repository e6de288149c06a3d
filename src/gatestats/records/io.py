"""Read and write run-record files: JSONL (the runner's format), Parquet and CSV.

Readers return a polars ``LazyFrame`` with exactly the contract's columns and types. Structural
defects (a torn or malformed line, an unknown or missing column, a value of the wrong type) raise
:class:`~gatestats.errors.RecordFileError` naming the file, the line (or Parquet row) and the
field. :func:`load_records` additionally validates the data with the pandera schema, including
duplicate keys across files, and returns the collected frame: nothing downstream ever sees
records that were not checked.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import polars as pl
from polars._typing import PolarsDataType

from gatestats.errors import RecordFileError, RecordProblem
from gatestats.records.contract import NESTED_FIELDS, POLARS_SCHEMA, RECORD_KEY, REQUIRED_FIELDS
from gatestats.records.schema import validate_records
from gatestats_runner.contract import validate_record

__all__ = [
    "load_records",
    "record_format",
    "relocate_problems",
    "scan_records",
    "write_records_jsonl",
]

_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".csv": "csv"}
_MAX_PROBLEMS = 50


def record_format(path: str | os.PathLike[str]) -> str:
    """Return ``jsonl``, ``parquet`` or ``csv`` from the file suffix; raise for anything else."""
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMATS:
        known = ", ".join(sorted(_FORMATS))
        msg = f"{path}: unknown record file type {suffix!r} (expected one of {known})"
        raise RecordFileError.single(str(path), "<file>", msg.split(": ", 1)[1])
    return _FORMATS[suffix]


def _explain_jsonl(path: Path) -> list[RecordProblem]:
    """Slow path: decode line by line with the runner's contract checker to locate defects."""
    problems: list[RecordProblem] = []
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn_last = not data.endswith(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            last = number == len(lines) and torn_last
            hint = " (torn last line: the file does not end with a newline)" if last else ""
            problems.append(
                RecordProblem(
                    file=str(path),
                    line=number,
                    field="<line>",
                    message=f"not valid JSON: {exc}{hint}",
                )
            )
        else:
            problems.extend(
                RecordProblem(file=str(path), line=number, field=v.field, message=v.message)
                for v in validate_record(record)
            )
        if len(problems) >= _MAX_PROBLEMS:
            break
    return problems


def _jsonl_line_numbers(path: Path) -> list[int]:
    """Line number (1-based) of each non-blank line: row i of the frame is line result[i]."""
    with path.open("rb") as handle:
        return [n for n, raw in enumerate(handle, start=1) if raw.strip()]


def _compatible(got: PolarsDataType, expected: PolarsDataType) -> bool:
    if got == expected or got == pl.Null():
        return True
    if isinstance(expected, pl.Float64):
        return got.is_numeric()
    if isinstance(expected, pl.Int64):
        return got.is_integer()
    if isinstance(expected, pl.List) and isinstance(got, pl.List):
        return _compatible(got.inner, expected.inner)
    if isinstance(expected, pl.Struct) and isinstance(got, pl.Struct):
        fields = {f.name: f.dtype for f in expected.fields}
        return all(f.name in fields and _compatible(f.dtype, fields[f.name]) for f in got.fields)
    return False


def _scan_jsonl(path: Path) -> pl.LazyFrame:
    try:
        inferred = pl.scan_ndjson(path, infer_schema_length=None).collect_schema()
    except pl.exceptions.PolarsError:
        inferred = None
    if inferred is None or any(
        name not in POLARS_SCHEMA or not _compatible(dtype, POLARS_SCHEMA[name]) for name, dtype in inferred.items()
    ):
        problems = _explain_jsonl(path)
        if not problems:  # pragma: no cover - polars and the contract checker disagree
            problems = [RecordProblem(file=str(path), field="<file>", message="polars could not read this JSONL file")]
        raise RecordFileError(problems)
    return pl.scan_ndjson(path, schema=POLARS_SCHEMA)


def _scan_parquet(path: Path) -> pl.LazyFrame:
    try:
        schema = pl.scan_parquet(path).collect_schema()
    except pl.exceptions.PolarsError as exc:
        raise RecordFileError.single(path, "<file>", f"not a readable Parquet file: {exc}") from None
    problems = [
        RecordProblem(file=str(path), field=name, message="unknown column (not in the run-record contract v1)")
        for name in schema
        if name not in POLARS_SCHEMA
    ]
    problems += [
        RecordProblem(
            file=str(path),
            field=name,
            message=f"wrong type: expected {expected} (got {schema[name]})",
        )
        for name, expected in POLARS_SCHEMA.items()
        if name in schema and not _compatible(schema[name], expected)
    ]
    problems += [
        RecordProblem(file=str(path), field=name, message="required column is missing")
        for name in REQUIRED_FIELDS
        if name not in schema
    ]
    if problems:
        raise RecordFileError(problems)
    return pl.scan_parquet(path).select(
        pl.col(name).cast(dtype) if name in schema else pl.lit(None, dtype=dtype).alias(name)
        for name, dtype in POLARS_SCHEMA.items()
    )


def _scan_csv(path: Path) -> pl.LazyFrame:
    try:
        raw = pl.read_csv(path, infer_schema=False, null_values=[""])
    except pl.exceptions.PolarsError as exc:
        raise RecordFileError.single(path, "<file>", f"not a readable CSV file: {exc}") from None
    problems: list[RecordProblem] = []
    for name in raw.columns:
        if name not in POLARS_SCHEMA:
            problems.append(
                RecordProblem(
                    file=str(path),
                    line=1,
                    field=name,
                    message="unknown column (not in the run-record contract v1)",
                )
            )
        elif name in NESTED_FIELDS:
            problems.append(
                RecordProblem(
                    file=str(path),
                    line=1,
                    field=name,
                    message="list/struct field cannot be stored in CSV (use JSONL or Parquet)",
                )
            )
    problems += [
        RecordProblem(file=str(path), line=1, field=name, message="required column is missing")
        for name in REQUIRED_FIELDS
        if name not in raw.columns
    ]
    if problems:
        raise RecordFileError(problems)
    casts = {name: pl.col(name).cast(POLARS_SCHEMA[name], strict=False) for name in raw.columns}
    typed = raw.with_columns(**casts)
    for name in raw.columns:
        bad = raw.with_row_index("__row").filter(pl.col(name).is_not_null() & typed[name].is_null())
        problems.extend(
            RecordProblem(
                file=str(path),
                line=int(row["__row"]) + 2,
                field=name,
                message=f"expected {POLARS_SCHEMA[name]} (got {row[name]!r})",
            )
            for row in bad.head(_MAX_PROBLEMS).iter_rows(named=True)
        )
    if problems:
        raise RecordFileError(problems)
    return typed.lazy().select(
        pl.col(name) if name in raw.columns else pl.lit(None, dtype=dtype).alias(name)
        for name, dtype in POLARS_SCHEMA.items()
    )


def scan_records(path: str | os.PathLike[str]) -> pl.LazyFrame:
    """Read one record file (``.jsonl``/``.ndjson``, ``.parquet`` or ``.csv``) as a LazyFrame.

    The frame has exactly the contract's columns, in contract order, with contract types;
    optional columns absent from the file are null. Values are *not* yet checked against the
    contract's rules: use :func:`load_records` (or :func:`~gatestats.records.validate_records`)
    before computing anything.

    Raises
    ------
    RecordFileError
        The file is missing, unreadable, torn, or has unknown/missing columns or mistyped values;
        the message names the file, line (or row) and field.
    """
    file = Path(path)
    if not file.is_file():
        raise RecordFileError.single(file, "<file>", "no such record file")
    kind = record_format(file)
    if kind == "jsonl":
        return _scan_jsonl(file)
    if kind == "parquet":
        return _scan_parquet(file)
    return _scan_csv(file)


def relocate_problems(problems: Iterable[RecordProblem]) -> list[RecordProblem]:
    """Turn frame rows into file lines (JSONL: n-th non-blank line; CSV: row + 2; Parquet: row)."""
    line_maps: dict[str, list[int]] = {}

    def line_of(file: str, kind: str, row: int) -> int:
        if kind == "csv":
            return row + 2
        if file not in line_maps:
            line_maps[file] = _jsonl_line_numbers(Path(file))
        return line_maps[file][row]

    relocated = []
    for p in problems:
        kind = _FORMATS.get(Path(p.file).suffix.lower())
        if kind not in {"jsonl", "csv"} or (p.row is None and p.first_row is None):
            relocated.append(p)
            continue
        relocated.append(
            RecordProblem(
                file=p.file,
                field=p.field,
                message=p.message,
                line=p.line if p.row is None else line_of(p.file, kind, p.row),
                first_line=p.first_line if p.first_row is None else line_of(p.file, kind, p.first_row),
            )
        )
    return relocated


def load_records(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> pl.DataFrame:
    """Read, validate and concatenate record files; every row checked against the contract.

    Duplicate record keys are errors within a file and across files.

    Raises
    ------
    RecordFileError
        With every problem found (file, line or row, field, what was expected, what was got).
    """
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not items:
        raise RecordFileError.single("<arguments>", "RECORDS", "at least one record file is required")
    frames: list[pl.DataFrame] = []
    for item in items:
        path = Path(item)
        kind = record_format(path)
        lazy = scan_records(path)
        try:
            frame = validate_records(lazy, source=str(path))
        except RecordFileError as exc:
            raise RecordFileError(relocate_problems(exc.problems)) from None
        except pl.exceptions.PolarsError as exc:
            if kind == "jsonl":
                raise RecordFileError(
                    _explain_jsonl(path) or [RecordProblem(file=str(path), field="<file>", message=str(exc))]
                ) from None
            raise RecordFileError.single(path, "<file>", str(exc)) from None
        frames.append(frame)
    if len(frames) == 1:
        return frames[0]  # no cross-file duplicates to look for: no file/row tags to build
    tagged = [
        frame.with_columns(pl.lit(str(Path(item))).alias("__file"), pl.int_range(pl.len()).alias("__row"))
        for frame, item in zip(frames, items, strict=True)
    ]
    combined = pl.concat(tagged, how="vertical")
    _check_cross_file_duplicates(combined)
    return combined.drop("__file", "__row")


def _check_cross_file_duplicates(combined: pl.DataFrame) -> None:
    dupes = combined.filter(pl.len().over(RECORD_KEY) > 1).select(*RECORD_KEY, "__file", "__row")
    if dupes.is_empty():
        return
    problems: list[RecordProblem] = []
    for _, group in dupes.group_by(RECORD_KEY, maintain_order=True):
        rows = group.rows(named=True)
        first = rows[0]
        where = relocate_problems([RecordProblem(file=first["__file"], field="", message="", row=first["__row"])])[0]
        first_at = f"line {where.line}" if where.line is not None else f"row {where.row}"
        key = ", ".join(f"{name}={first[name]!r}" for name in RECORD_KEY)
        problems.extend(
            RecordProblem(
                file=other["__file"],
                row=other["__row"],
                field="system,case_id,case_version,trial,attempt",
                message=f"duplicate record ({key}) already in {first['__file']} at {first_at}",
            )
            for other in rows[1:]
        )
    raise RecordFileError(relocate_problems(problems[:_MAX_PROBLEMS]))


def write_records_jsonl(records: pl.DataFrame, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Validate ``records`` and write them as JSONL atomically (temporary file, then rename).

    An existing file is never replaced unless ``overwrite`` is true: record files are immutable.
    Nothing is written if validation fails.
    """
    target = Path(path)
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target}: record file already exists (record files are immutable; choose a new name)")
    checked = validate_records(records, source=str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        checked.write_ndjson(tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
