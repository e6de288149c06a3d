"""Read and write run-record files: JSONL (the runner's format), Parquet and CSV.

One strict reader for every format. Frames have exactly the contract's columns and types. Every
defect (a torn or malformed line, a duplicate JSON key, NaN or an overflowing number, an unknown or
missing column, a value of the wrong type at any depth, a checksum that does not match its line, a
duplicate record key) raises :class:`~gatestats.errors.RecordFileError` naming the file, the line
(or Parquet row) and the field, with the exact count of problems. Nothing is coerced: a number is
never read from a string column, a short CSV row is never filled with nulls, ``1.0`` is not an
integer. Nothing downstream ever sees records that were not checked.

Only the columns a caller needs
-------------------------------
:func:`load_records` (and :func:`load_record_files`, :func:`read_record_file`) take
``columns=``: every record is still checked against every rule of the contract, on every
column, but the frame returned holds only the columns named. ``columns=None`` (the default)
keeps the promise of a frame with every contract column. With ``columns`` named, a JSONL or
Parquet record file is checked in streaming passes (JSONL: the strict line pass; Parquet: one
polars query that reduces every rule to a boolean) and only the named columns are
materialised, with one 8-byte hash of each record's key to prove that no key repeats (16 bytes
a record while it is sorted): memory follows the columns kept, not the file.
``gatestats.analyze`` needs :data:`gatestats.estimators.ANALYSIS_COLUMNS`, 7 of the contract's
54 columns. :func:`scan_records` keeps none: it checks the file the same way and returns a
scan of it, so ``analyze(scan_records(path))`` holds only the per-case summary (the way to
analyse a file larger than memory). A file with a problem, a CSV file and a run set's
``records.jsonl`` (checked against its manifest) take the whole-frame path, so every error names
the same file, line and field on every path. There a JSONL file is parsed in batches and only the
columns named, the record key and those the manifest checks read
(:data:`~gatestats.records.runset.RUN_SET_COLUMNS`) are kept (:mod:`gatestats.records.batched`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
from polars._typing import PolarsDataType

from gatestats.errors import RecordFileError, RecordProblem, at_lines
from gatestats.io.digest import digest_file
from gatestats.io.files import write_atomic, write_once
from gatestats.records.batched import read_checked_jsonl
from gatestats.records.contract import NESTED_FIELDS, POLARS_SCHEMA, RECORD_KEY, REQUIRED_FIELDS
from gatestats.records.lines import KEY_HASH, MAX_PROBLEMS, ChecksumStatus, JsonlCheck, check_jsonl
from gatestats.records.runset import MANIFEST, RECORDS, RUN_SET_COLUMNS, read_run_set_manifest, run_set_problems
from gatestats.records.schema import duplicate_problems, validate_records, value_checks
from gatestats_runner.contract import validate_record
from gatestats_runner.runsets import encode_record

if TYPE_CHECKING:
    from gatestats.tables.csvfile import CsvTable
    from gatestats.tables.inputs import CellKind

__all__ = [
    "RecordFileInfo",
    "load_record_files",
    "load_records",
    "read_record_file",
    "read_run_set",
    "record_format",
    "relocate_problems",
    "scan_records",
    "write_records_jsonl",
]

_EMPTY_DIGEST = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".csv": "csv"}


def record_format(path: str | os.PathLike[str]) -> str:
    """Return ``jsonl``, ``parquet`` or ``csv`` from the file suffix; raise for anything else.

    Parameters
    ----------
    path
        A record file (only its suffix is looked at: ``.jsonl``, ``.ndjson``, ``.parquet`` or ``.csv``).

    Returns
    -------
    str
        Its format.

    Raises
    ------
    RecordFileError
        The suffix is not a record file's.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMATS:
        known = ", ".join(sorted(_FORMATS))
        msg = f"{path}: unknown record file type {suffix!r} (expected one of {known})"
        raise RecordFileError.single(str(path), "<file>", msg.split(": ", 1)[1])
    return _FORMATS[suffix]


def _jsonl_line_numbers(path: Path) -> list[int]:
    """Line number (1-based) of each non-blank line: row i of the frame is line result[i]."""
    with path.open("rb") as handle:
        return [n for n, raw in enumerate(handle, start=1) if raw.strip()]


def _compatible(got: PolarsDataType, expected: PolarsDataType) -> bool:
    """Whether a stored column type holds the contract's type without loss (no string <-> number)."""
    if got == expected or got == pl.Null():
        return True
    if isinstance(expected, pl.Float64):
        return got in {pl.Float32(), pl.Float64()} or (got.is_integer() and got != pl.UInt64())
    if isinstance(expected, pl.Int64):
        return got.is_integer() and got != pl.UInt64()
    if isinstance(expected, pl.List) and isinstance(got, pl.List):
        return _compatible(got.inner, expected.inner)
    if isinstance(expected, pl.Struct) and isinstance(got, pl.Struct):
        fields = {f.name: f.dtype for f in expected.fields}
        return all(f.name in fields and _compatible(f.dtype, fields[f.name]) for f in got.fields)
    return False


def _read_jsonl(path: Path, keep: tuple[str, ...] | None, *, compact: bool = False) -> tuple[pl.DataFrame, JsonlCheck]:
    """The strict line pass, then polars reads the lines it proved well-formed (no coercion left to do).

    The columns ``keep`` (``None``: all) are read in batches, each compacted as it is read
    (:func:`gatestats.records.batched.read_checked_jsonl`): memory follows what is kept, not the file.
    """
    check = check_jsonl(path)
    if check.n_records == 0:
        return pl.DataFrame(schema=POLARS_SCHEMA), check
    frame = read_checked_jsonl(path, schema=POLARS_SCHEMA, columns=keep, digest=check.digest, compact=compact)
    _same_count(path, frame.height, check.n_records)
    return frame, check


def _same_count(path: Path, read: int, checked: int) -> None:
    """Refuse a columnar read that did not give one row per record of the checking pass."""
    if read != checked:
        why = f"the columnar read gave {read} records where the check counted {checked}; nothing was read"
        raise RecordFileError.single(path, "<file>", why)


def _unchanged(path: Path, digest: str) -> None:
    """Refuse a file whose bytes changed between the check and the columnar read."""
    if digest_file(path) != digest:
        raise RecordFileError.single(path, "<file>", "the file changed while it was being read; read it again")


def _read_parquet(path: Path) -> tuple[pl.DataFrame, str]:
    digest = digest_file(path)
    lazy = _parquet_contract_scan(path)
    try:
        frame = lazy.collect()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise RecordFileError.single(path, "<file>", f"not a readable Parquet file: {exc}") from None
    _unchanged(path, digest)
    return frame, digest


def _parquet_contract_scan(path: Path) -> pl.LazyFrame:
    """A scan of a Parquet record file as the contract's columns and types (absent columns null).

    Raises
    ------
    RecordFileError
        The file is not Parquet, or a column is unknown, missing or of a type the contract's
        cannot hold without loss.
    """
    try:
        schema = pl.scan_parquet(path).collect_schema()
    except (pl.exceptions.PolarsError, OSError) as exc:
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
        pl.col(name).cast(dtype, strict=True) if name in schema else pl.lit(None, dtype=dtype).alias(name)
        for name, dtype in POLARS_SCHEMA.items()
    )


_CELL_KINDS: dict[type[PolarsDataType], CellKind] = {pl.Int64: "integer", pl.Float64: "number", pl.Boolean: "boolean"}


def _csv_cell_kinds() -> dict[str, CellKind]:
    """Each contract column's kind of CSV cell (empty = null; no other coercion)."""
    return {name: _CELL_KINDS.get(type(dtype), "string") for name, dtype in POLARS_SCHEMA.items()}


def _csv_header_problems(path: Path, header: Sequence[str]) -> list[RecordProblem]:
    """Columns of a CSV header that are not in the contract or cannot be stored in CSV, and required ones missing."""
    problems: list[RecordProblem] = []
    for name in header:
        if name not in POLARS_SCHEMA:
            message = "unknown column (not in the run-record contract v1)"
        elif name in NESTED_FIELDS:
            message = "list/struct field cannot be stored in CSV (use JSONL or Parquet)"
        else:
            continue
        problems.append(RecordProblem(file=str(path), line=1, field=name, message=message))
    problems += [
        RecordProblem(file=str(path), line=1, field=name, message="required column is missing")
        for name in REQUIRED_FIELDS
        if name not in header
    ]
    return problems


def _read_csv(path: Path) -> tuple[pl.DataFrame, str, tuple[int, ...]]:
    from gatestats.tables.csvfile import read_csv_strict  # noqa: PLC0415 - CSV only, not on a JSONL read's path

    digest = digest_file(path)
    table = read_csv_strict(path)
    problems = _csv_header_problems(path, table.header)
    if problems:
        raise RecordFileError(problems)
    columns, problems, total = _csv_columns(path, table)
    if problems:
        raise RecordFileError(problems, total=total)
    frame = pl.DataFrame(
        {
            name: pl.Series(name, columns.get(name, [None] * len(table.rows)), dtype=dtype, strict=True)
            for name, dtype in POLARS_SCHEMA.items()
        },
    )
    _unchanged(path, digest)
    return frame, digest, table.lines


def _csv_columns(path: Path, table: CsvTable) -> tuple[dict[str, list[Any]], list[RecordProblem], int]:
    """Every CSV cell typed and every row checked against the contract: the columns, the first problems, their count."""
    from gatestats.tables.inputs import typed_cell  # noqa: PLC0415 - CSV only

    kinds = _csv_cell_kinds()
    problems: list[RecordProblem] = []
    columns: dict[str, list[Any]] = {name: [] for name in table.header}
    total = 0
    for row, line in zip(table.rows, table.lines, strict=True):
        record: dict[str, Any] = {}
        mistyped: set[str] = set()
        for name, text in zip(table.header, row, strict=True):
            value, bad = typed_cell(text, kinds[name], text=True)
            if bad is not None:
                mistyped.add(name)
                total += 1
                if len(problems) < MAX_PROBLEMS:
                    problems.append(RecordProblem(file=str(path), line=line, field=name, message=bad))
            record[name] = value
            columns[name].append(value)
        present = {k: v for k, v in record.items() if v is not None}
        for v in validate_record(present):
            if v.field in mistyped:
                continue  # already named with the text that is not of the field's type
            total += 1
            if len(problems) < MAX_PROBLEMS:
                problems.append(RecordProblem(file=str(path), line=line, field=v.field, message=v.message))
    return columns, problems, total


def scan_records(path: str | os.PathLike[str]) -> pl.LazyFrame:
    """Check one record file (``.jsonl``/``.ndjson``, ``.parquet`` or ``.csv``); return it as a LazyFrame.

    The frame has exactly the contract's columns, in contract order, with contract types;
    optional columns absent from the file are null. Every record is checked first, exactly as
    by :func:`read_record_file` (duplicate keys included). A JSONL or Parquet record file is
    checked in one streaming pass and the frame returned is a scan of the file, so memory stays
    bounded by what the query keeps (``analyze(scan_records(path))`` holds the per-case
    summary, not the records): the way to analyse a file larger than memory. The scan reads
    the file again when collected, and every batch it reads is checked to come from the file as
    it was checked (same inode, size, modification and change times): a file edited or replaced
    since raises :class:`RecordFileError` from the collect instead of being analysed. CSV files
    and a run set's ``records.jsonl`` are read whole.

    Parameters
    ----------
    path
        The record file.

    Returns
    -------
    polars.LazyFrame
        Its records.

    Raises
    ------
    RecordFileError
        The file is missing, unreadable, torn, or has unknown/missing columns or mistyped values;
        the message names the file, line (or row) and field.
    """
    file = Path(path)
    kind = record_format(file)
    manifest = _run_set_manifest(file) if file.is_file() else None
    if kind != "csv" and file.is_file() and manifest is None:
        streamed = _read_streaming(file, kind, ())
        if streamed is not None:
            return streamed[2]
    return _read_file(file, kind, None, manifest)[0].lazy()


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordFileInfo:
    """What reading one record file established: its bytes' digest and whether its lines carry checksums.

    ``checksums`` is ``verified`` (every line's checksum matched its content), ``none`` (no line
    carries one: records from another tool, or a CSV or Parquet file) or ``empty`` (no record).
    """

    path: str
    format: str
    digest: str
    size: int
    n_records: int
    checksums: ChecksumStatus
    run_set_ids: tuple[str, ...]
    #: The run set's manifest when the file is a run set's ``records.jsonl`` (checked against it).
    manifest: Mapping[str, Any] | None = None


def read_run_set(
    root: str | os.PathLike[str], *, columns: Sequence[str] | None = None, compact: bool = False
) -> tuple[pl.DataFrame, RecordFileInfo]:
    """Read a run set directory: its manifest, then its ``records.jsonl`` checked against the manifest.

    A run set prepared (``gatestats run --prepare``) and never run has no ``records.jsonl``: its
    records are empty, which is not an error (the gate answers insufficient evidence).

    Parameters
    ----------
    root
        The run set directory.
    columns
        The columns to return; every record is still checked on every column and against the
        manifest. ``None``: every contract column. Either way the records are read in batches
        (:mod:`gatestats.records.batched`): memory follows the columns returned.
    compact
        Hold a column null or of one value on every record as that value once (a polars scalar
        column: same values; the gate's reading, where ~30 contract columns a runner leaves null
        cost nothing). ``False``: every column materialised.

    Returns
    -------
    tuple of (polars.DataFrame, RecordFileInfo)
        Its records, and what was read of ``records.jsonl`` (with the manifest).

    Raises
    ------
    RecordFileError
        The manifest is missing or malformed, a record breaks the contract or its checksum, or the
        records are not the ones the manifest describes (see :mod:`gatestats.records.runset`).
    """
    directory = Path(root)
    wanted = _wanted_columns(columns)
    manifest = read_run_set_manifest(directory / MANIFEST)
    path = directory / RECORDS
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise RecordFileError.single(path, "<file>", "records.jsonl must be a regular file inside the run set")
    if path.exists():
        return _read_file(path, "jsonl", wanted, manifest, compact=compact)  # the manifest read once, passed on
    empty = pl.DataFrame(schema=POLARS_SCHEMA)
    problems = run_set_problems(directory, manifest, empty, size=0, digest=_EMPTY_DIGEST, checksums="empty")
    if problems:
        raise RecordFileError(problems)
    info = RecordFileInfo(
        path=str(path),
        format="jsonl",
        digest=_EMPTY_DIGEST,
        size=0,
        n_records=0,
        checksums="empty",
        run_set_ids=(),
        manifest=manifest,
    )
    return (empty if wanted is None else empty.select(wanted)), info


def read_record_file(
    path: str | os.PathLike[str], *, columns: Sequence[str] | None = None
) -> tuple[pl.DataFrame, RecordFileInfo]:
    """Read one record file strictly and check every row against the contract (duplicates included).

    JSONL is checked line by line before polars reads it (:func:`gatestats.records.lines.check_jsonl`:
    strict JSON, the contract at every depth, checksums). CSV is read with the standard library in
    strict mode (every value typed without coercion: empty is null). Parquet columns must have the
    contract's types (lossless integer and float widths accepted). Then every row is validated.

    Parameters
    ----------
    path
        The record file (a run set's ``records.jsonl`` is checked against the manifest beside it).
    columns
        The columns to return (every record is still checked on every column); ``None``: every
        contract column. With columns named, JSONL and Parquet files are checked in one
        streaming pass and only these columns are materialised (see the module docstring).

    Returns
    -------
    tuple of (polars.DataFrame, RecordFileInfo)
        The checked records, and what was read of the file.

    Raises
    ------
    RecordFileError
        Every problem found, each naming the file, the line (or Parquet row) and the field.
    TypeError, ValueError
        ``columns`` is one string, names a field the contract does not have, or one twice.
    """
    file = Path(path)
    kind = record_format(file)
    wanted = _wanted_columns(columns)
    return _read_file(file, kind, wanted, _run_set_manifest(file) if file.is_file() else None)


def _read_file(
    file: Path, kind: str, wanted: tuple[str, ...] | None, manifest: dict[str, Any] | None, *, compact: bool = False
) -> tuple[pl.DataFrame, RecordFileInfo]:
    """Read a record file given its run set's manifest (read once by the caller; None: not a run set's)."""
    if not file.is_file():
        why = "not a regular file" if file.exists() else "no such record file"
        raise RecordFileError.single(file, "<file>", why)
    if wanted is not None and kind != "csv" and manifest is None:
        streamed = _read_streaming(file, kind, wanted)
        if streamed is not None:
            return streamed[0], streamed[1]
    checked, info = _read_whole(file, kind, manifest, _checked_columns(wanted, manifest), compact=compact)
    return (checked if wanted is None else checked.select(wanted)), info


def _checked_columns(wanted: tuple[str, ...] | None, manifest: dict[str, Any] | None) -> tuple[str, ...] | None:
    """The columns a whole read keeps for ``wanted``: those, the record key, and what the manifest checks read."""
    if wanted is None:
        return None
    return tuple(dict.fromkeys((*wanted, *RECORD_KEY, *(RUN_SET_COLUMNS if manifest is not None else ()))))


def _wanted_columns(columns: Sequence[str] | None) -> tuple[str, ...] | None:
    """``columns`` checked: contract fields, each once (``None`` stays ``None``: every column)."""
    if columns is None:
        return None
    if isinstance(columns, str):
        msg = f"columns must be a sequence of column names, not one string (got {columns!r})"
        raise TypeError(msg)
    names = tuple(columns)
    unknown = [name for name in names if name not in POLARS_SCHEMA]
    if unknown:
        msg = f"columns: {unknown} are not fields of the run-record contract v1 (got {list(names)})"
        raise ValueError(msg)
    if len(set(names)) != len(names):
        msg = f"columns: name each column once (got {list(names)})"
        raise ValueError(msg)
    return names


def _identity(file: Path) -> tuple[int, ...]:
    """What changes when a file's bytes change: device, inode, size, modification and change times (ns)."""
    st = file.stat()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _still_checked(file: Path, identity: tuple[int, ...], batch: pl.DataFrame) -> pl.DataFrame:
    """``batch`` of a checked file's scan, once the file is known unchanged since its check."""
    try:
        same = _identity(file) == identity
    except OSError:
        same = False
    if not same:
        raise RecordFileError.single(file, "<file>", "the file changed after it was checked; check it again")
    return batch


def _read_streaming(
    file: Path, kind: str, wanted: tuple[str, ...]
) -> tuple[pl.DataFrame, RecordFileInfo, pl.LazyFrame] | None:
    """Check a JSONL or Parquet file in one streaming pass and materialise ``wanted`` only.

    Returns the ``wanted`` columns, what was read, and a scan of the file as contract columns.
    ``None`` when the pass finds anything to report (a broken rule, a repeated key hash, a
    nested value that needs the contract's own checker, a value polars cannot cast): the
    whole-frame path then names every problem exactly as it always has.
    """
    identity = _identity(file)  # before the check reads a byte: the scan is tied to what was checked
    proved: pl.DataFrame | None = None
    if kind == "jsonl":
        # Every value at every depth, checksums, torn lines: it streams. When every block is proved,
        # the wanted columns and the key hashes come from the bytes it checked and digested.
        check = check_jsonl(file, keep=wanted, key=RECORD_KEY)
        digest, checksums, run_set_ids = check.digest, check.checksums, tuple(sorted(check.run_set_ids))
        n_records, proved = check.n_records, check.frame
        lazy = pl.scan_ndjson(file, schema=POLARS_SCHEMA) if n_records else pl.LazyFrame(schema=POLARS_SCHEMA)
    else:
        digest = digest_file(file)
        lazy = _parquet_contract_scan(file)
    try:
        if kind == "parquet":
            # The rules of every column reduce to booleans in one streaming pass (pandera only explains a failure).
            checks = [
                pl.len().alias("__n"),
                *value_checks(),
                *(pl.col(name).is_null().all().alias(f"__flat_{name}") for name in NESTED_FIELDS),
                pl.col("run_set_id").unique().sort().implode().alias("__run_sets"),
            ]
            stats = lazy.select(checks).collect(engine="streaming").row(0, named=True)
            if not all(v for k, v in stats.items() if k.startswith(("rule_", "__flat_"))):
                return None
            n_records = int(stats["__n"])
            checksums = "empty" if n_records == 0 else "none"
            run_set_ids = tuple(str(x) for x in stats["__run_sets"])
        # The wanted columns, and one 8-byte hash of each record's key: sorted, it proves that no
        # key repeats in 16 bytes a record, where a hash set would take several times that.
        key_hash = pl.struct(RECORD_KEY).hash(seed=0).alias(KEY_HASH)
        frame = proved if proved is not None else lazy.select(*wanted, key_hash).collect(engine="streaming")
    except (pl.exceptions.PolarsError, OSError):
        return None
    _same_count(file, frame.height, n_records)
    if _repeats(frame.get_column(KEY_HASH)):
        return None  # a repeated key (or a hash collision): the whole-frame path names it exactly
    frame = frame.drop(KEY_HASH)
    if proved is None:  # read again by polars: the bytes it read must be those checked
        _unchanged(file, digest)
    if _identity(file) != identity:
        raise RecordFileError.single(file, "<file>", "the file changed while it was being read; read it again")
    # The scan reads the file again when collected: each batch it reads is checked to come from the
    # file as it was checked (an edit since, even in place, changes its inode change time or size).
    lazy = lazy.map_batches(
        functools.partial(_still_checked, file, identity),
        streamable=True,
        projection_pushdown=True,
        predicate_pushdown=True,
        slice_pushdown=True,
    )
    info = RecordFileInfo(
        path=str(file),
        format=kind,
        digest=digest,
        size=file.stat().st_size,
        n_records=n_records,
        checksums=checksums,
        run_set_ids=run_set_ids,
    )
    return frame, info, lazy


def _repeats(hashes: pl.Series) -> bool:
    """Whether any value repeats (sorted, then each compared with the next; in polars, so no numpy import)."""
    if hashes.len() < 2:
        return False
    ordered = hashes.sort()
    return bool((ordered.slice(1) == ordered.slice(0, ordered.len() - 1)).any())


def _read_whole(
    file: Path,
    kind: str,
    manifest: dict[str, Any] | None,
    keep: tuple[str, ...] | None = None,
    *,
    compact: bool = False,
) -> tuple[pl.DataFrame, RecordFileInfo]:
    """Read ``file`` and check every row, and against ``manifest`` when it is a run set's.

    Every column is checked; a JSONL file's frame holds the columns ``keep`` only (``None``: all;
    the record key and, for a run set, :data:`~gatestats.records.runset.RUN_SET_COLUMNS` among them).
    """
    read = _read_any(file, kind, keep, compact=compact)
    try:
        checked = _validated(file, kind, read.frame)
        if manifest is not None:
            problems = run_set_problems(
                file.parent, manifest, checked, size=file.stat().st_size, digest=read.digest, checksums=read.checksums
            )
            if problems:
                raise RecordFileError(problems[:MAX_PROBLEMS], total=len(problems))
    except RecordFileError as exc:
        raise RecordFileError(at_lines(exc.problems, read.lines), total=exc.total) from None
    info = RecordFileInfo(
        path=str(file),
        format=kind,
        digest=read.digest,
        size=file.stat().st_size,
        n_records=checked.height,
        checksums=read.checksums,
        run_set_ids=read.run_set_ids,
        manifest=manifest,
    )
    return checked, info


@dataclass(frozen=True, slots=True, kw_only=True)
class _FileRead:
    """One file read in its format, before the checks across rows."""

    frame: pl.DataFrame
    digest: str
    #: The file line of each frame row (None for Parquet: a row is its own place).
    lines: Sequence[int] | None
    checksums: ChecksumStatus
    run_set_ids: tuple[str, ...]


def _read_any(file: Path, kind: str, keep: tuple[str, ...] | None = None, *, compact: bool = False) -> _FileRead:
    """Read ``file`` as ``kind`` (jsonl, parquet or csv) strictly, with its digest, lines, checksums and run sets."""
    lines: Sequence[int] | None = None
    checksums: ChecksumStatus = "none"
    run_set_ids: tuple[str, ...] = ()
    if kind == "jsonl":
        frame, check = _read_jsonl(file, keep, compact=compact)
        digest, lines, checksums = check.digest, check.lines, check.checksums
        run_set_ids = tuple(sorted(check.run_set_ids))
    elif kind == "parquet":
        frame, digest = _read_parquet(file)
    else:
        frame, digest, lines = _read_csv(file)
    if frame.height == 0:
        checksums = "empty"
    elif kind != "jsonl":
        run_set_ids = tuple(sorted(str(x) for x in frame.get_column("run_set_id").unique().to_list()))
    return _FileRead(frame=frame, digest=digest, lines=lines, checksums=checksums, run_set_ids=run_set_ids)


def _validated(file: Path, kind: str, frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` checked against the contract (JSONL's line pass checked every value: only keys across lines remain)."""
    if kind != "jsonl":
        return validate_records(frame, source=str(file))
    duplicates = duplicate_problems(frame, str(file))
    if duplicates:
        raise RecordFileError(duplicates)
    return frame


def _run_set_manifest(file: Path) -> dict[str, Any] | None:
    """The manifest beside a run set's ``records.jsonl``: its records are never read without it."""
    if file.name != RECORDS or not (file.parent / MANIFEST).exists():
        return None
    return read_run_set_manifest(file.parent / MANIFEST)


def relocate_problems(problems: Iterable[RecordProblem]) -> list[RecordProblem]:
    """Turn frame rows into file lines.

    JSONL: the n-th non-blank line; CSV: the row's physical first line, quoted newlines counted;
    Parquet: the row stays.

    Parameters
    ----------
    problems
        Problems that name a frame ``row`` (or ``first_row``) of their file.

    Returns
    -------
    list of RecordProblem
        The same problems, naming the file's lines instead where the file has lines.
    """
    from gatestats.tables.csvfile import csv_row_lines  # noqa: PLC0415 - CSV only

    line_maps: dict[str, Sequence[int]] = {}

    def line_of(file: str, kind: str, row: int) -> int:
        if file not in line_maps:
            line_maps[file] = csv_row_lines(file) if kind == "csv" else _jsonl_line_numbers(Path(file))
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


def load_record_files(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    columns: Sequence[str] | None = None,
) -> tuple[pl.DataFrame, tuple[RecordFileInfo, ...]]:
    """Read, validate and concatenate record files; return the records and what was read of each file.

    A directory is read as a run set (:func:`read_run_set`), and a run set's ``records.jsonl`` is
    always checked against the manifest beside it.

    Duplicate record keys are errors within a file and across files.

    Parameters
    ----------
    paths
        Record files or run set directories (one or several).
    columns
        The columns to return; every record is still checked on every column (see
        :func:`read_record_file`). ``None``: every contract column.

    Returns
    -------
    tuple of (polars.DataFrame, tuple of RecordFileInfo)
        The records of every file, in the order given, and what was read of each file.

    Raises
    ------
    RecordFileError
        With every problem found (file, line or row, field, what was expected, what was got).
    TypeError, ValueError
        ``columns`` is one string, names a field the contract does not have, or one twice.
    """
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    wanted = _wanted_columns(columns)
    if not items:
        raise RecordFileError.single("<arguments>", "RECORDS", "at least one record file is required")
    # Several files: the record key is needed to look for duplicates across them.
    reading = wanted if wanted is None or len(items) == 1 else tuple(dict.fromkeys((*wanted, *RECORD_KEY)))
    frames: list[pl.DataFrame] = []
    infos: list[RecordFileInfo] = []
    for item in items:
        if Path(item).is_dir():
            frame, info = read_run_set(item, columns=reading)
        else:
            frame, info = read_record_file(item, columns=reading)
        frames.append(frame)
        infos.append(info)
    if len(frames) == 1:
        return frames[0], tuple(infos)  # no cross-file duplicates to look for: no file/row tags to build
    tagged = [
        frame.with_columns(pl.lit(str(Path(item))).alias("__file"), pl.int_range(pl.len()).alias("__row"))
        for frame, item in zip(frames, items, strict=True)
    ]
    combined = pl.concat(tagged, how="vertical")
    _check_cross_file_duplicates(combined)
    combined = combined.drop("__file", "__row")
    return (combined if wanted is None else combined.select(wanted)), tuple(infos)


def load_records(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *, columns: Sequence[str] | None = None
) -> pl.DataFrame:
    """Read, validate and concatenate record files; every row checked against the contract.

    Duplicate record keys are errors within a file and across files. Lines that carry the
    runner's checksum are verified (see :func:`read_record_file`).

    Parameters
    ----------
    paths
        As :func:`load_record_files`.
    columns
        The columns to return (every record is still checked on every column); ``None``, the
        default, returns every contract column. Naming the columns an analysis needs
        (:data:`gatestats.estimators.ANALYSIS_COLUMNS`) streams JSONL and Parquet files and
        holds only those columns in memory.

    Returns
    -------
    polars.DataFrame
        The records of every file, in the order given.

    Raises
    ------
    RecordFileError, TypeError, ValueError
        As :func:`load_record_files` raises them.

    Examples
    --------
    >>> from gatestats.estimators import ANALYSIS_COLUMNS
    >>> ANALYSIS_COLUMNS
    ('system', 'case_id', 'case_version', 'case_group', 'trial', 'attempt', 'outcome')
    """
    return load_record_files(paths, columns=columns)[0]


def _check_cross_file_duplicates(combined: pl.DataFrame) -> None:
    dupes = combined.filter(pl.len().over(RECORD_KEY) > 1).select(*RECORD_KEY, "__file", "__row")
    if dupes.is_empty():
        return
    total = dupes.height - dupes.select(RECORD_KEY).n_unique()  # every record after its key's first
    problems: list[RecordProblem] = []
    for _, group in dupes.group_by(RECORD_KEY, maintain_order=True):
        if len(problems) >= MAX_PROBLEMS:  # the rest are counted, not located (locating reads the file)
            break
        rows = group.rows(named=True)
        first = rows[0]
        where = relocate_problems([RecordProblem(file=first["__file"], field="", message="", row=first["__row"])])[0]
        first_at = f"line {where.line}" if where.line is not None else f"row {where.row}"
        key = ", ".join(f"{name}={first[name]!r}" for name in RECORD_KEY)
        problems.extend(
            RecordProblem(
                file=other["__file"],
                row=other["__row"],
                field=",".join(RECORD_KEY),
                message=f"duplicate record ({key}) already in {first['__file']} at {first_at}",
            )
            for other in rows[1:]
        )
    raise RecordFileError(relocate_problems(problems[:MAX_PROBLEMS]), total=total)


def write_records_jsonl(records: pl.DataFrame, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Validate ``records`` and write them as JSONL, whole or not at all, each line with its checksum.

    Each line is the runner's encoding (:func:`gatestats_runner.runsets.encode_record`): canonical JSON
    with a ``checksum`` of its content, so an edit after the write is detected by every reader.

    The file is created exclusively (a temporary file, fsync'd, then hard-linked into place): of two
    writers racing for one path exactly one wins and the other gets :class:`FileExistsError`; an
    existing file is never replaced unless ``overwrite`` is true (record files are immutable).
    Nothing is written if validation fails.

    Parameters
    ----------
    records
        The records to write.
    path
        The new file.
    overwrite
        Replace an existing file (atomically) instead of refusing.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    RecordFileError
        A record breaks the contract.
    FileExistsError
        The file exists and ``overwrite`` is false.
    """
    target = Path(path)
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target}: record file already exists (record files are immutable; choose a new name)")
    checked = validate_records(records, source=str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(encode_record(row) for row in checked.iter_rows(named=True))
    if overwrite:
        write_atomic(target, data)
        return target
    try:
        write_once(target, data)
    except FileExistsError:
        msg = f"{target}: record file already exists (record files are immutable; choose a new name)"
        raise FileExistsError(msg) from None
    return target
