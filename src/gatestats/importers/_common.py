"""Shared pieces of the importers: building contract records from columns, ids, digests."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from gatestats.errors import RecordFileError, at_lines
from gatestats.io.digest import digest_file
from gatestats.records.contract import CONTRACT_VERSION, POLARS_SCHEMA
from gatestats.records.schema import validate_records

__all__ = ["build_records", "file_digest", "imported_records"]


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes, hex (without the ``sha256:`` prefix: run-set ids are made from it).

    Parameters
    ----------
    path
        The file.

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    return digest_file(path).removeprefix("sha256:")


def build_records(
    columns: pl.DataFrame,
    *,
    source_file: Path,
    run_set_id: str,
    source: str,
    lines: Sequence[int] | None = None,
) -> pl.DataFrame:
    """Complete ``columns`` (a frame with some contract fields) into validated contract records.

    Adds ``schema_version``, ``run_set_id``, ``attempt`` (0) when absent, a deterministic
    ``record_id`` (a digest of the record key), ``source`` (followed by ``; <note>`` on rows where
    an optional ``source_note`` column says more about that record), and null for every other field.
    Row ``i`` of ``columns`` must come from row ``i`` of ``source_file``: errors name line
    ``lines[i]`` of it, or row ``i`` when ``lines`` is None (Parquet, a JSON document's items).

    Parameters
    ----------
    columns
        Contract fields, one row per trial: at least ``system``, ``case_id``, ``trial`` and ``outcome``.
    source_file
        The file the rows come from (errors name it).
    run_set_id
        The records' run-set id.
    source
        What the records were imported from, recorded in ``source``.
    lines
        The line of ``source_file`` each row comes from (None: errors name the row).

    Returns
    -------
    polars.DataFrame
        The validated records, with exactly the contract's columns.

    Raises
    ------
    RecordFileError
        A record breaks the contract (the problems name the file's lines or rows).
    """
    frame = columns
    if "attempt" not in frame.columns:
        frame = frame.with_columns(attempt=pl.lit(0, pl.Int64))
    note = pl.col("source_note") if "source_note" in frame.columns else pl.lit(None, pl.String)
    frame = frame.with_columns(
        schema_version=pl.lit(CONTRACT_VERSION, pl.Int64),
        run_set_id=pl.lit(run_set_id),
        source=pl.when(note.is_null()).then(pl.lit(source)).otherwise(pl.lit(f"{source}; ") + note),
    )
    if "case_version" not in frame.columns:
        frame = frame.with_columns(case_version=pl.lit(None, pl.String))
    key = pl.concat_str(
        [
            pl.col("run_set_id"),
            pl.col("system"),
            pl.col("case_id"),
            pl.col("case_version").fill_null("\x00"),
            pl.col("trial").cast(pl.String),
            pl.col("attempt").cast(pl.String),
        ],
        separator="\x1f",
    )
    frame = frame.with_columns(
        record_id=pl.lit("rec-")
        + key.map_elements(lambda text: hashlib.sha256(text.encode()).hexdigest()[:20], return_dtype=pl.String)
    )
    frame = frame.select(
        pl.col(name).cast(dtype) if name in frame.columns else pl.lit(None, dtype=dtype).alias(name)
        for name, dtype in POLARS_SCHEMA.items()
    )
    try:
        return validate_records(frame, source=str(source_file))
    except RecordFileError as exc:
        raise RecordFileError(at_lines(exc.problems, lines), total=exc.total) from None


def imported_records(
    columns: pl.DataFrame,
    *,
    files: Path | Sequence[Path],
    command: str,
    run_set_id: str | None,
    tool: str | None = None,
    lines: Sequence[int] | None = None,
) -> pl.DataFrame:
    """:func:`build_records` for ``gatestats import COMMAND FILE...``: provenance and default run-set id from digests.

    Every importer records its input the same way: ``source`` is ``gatestats import COMMAND
    NAME (sha256 HEX)`` for each file (comma-separated), then ``; TOOL`` when the source tool's
    version or format is known; the default run-set id is ``import-<first 12 hex of the first
    file's sha256>``.

    Parameters
    ----------
    columns
        Contract fields, one row per trial (see :func:`build_records`).
    files
        The imported file, or files (errors of the records name the first).
    command
        The import subcommand (``table``, ``inspect``, ``swe-bench`` ...), recorded in ``source``.
    run_set_id
        The records' run-set id; None: from the first file's digest.
    tool
        What the files say about the tool that wrote them (e.g. ``promptfoo 0.121.20, results format 3``).
    lines
        The line of the first file each row comes from (None: errors name the row).

    Returns
    -------
    polars.DataFrame
        The records, validated by :func:`build_records` (which raises their errors).
    """
    named = [files] if isinstance(files, Path) else list(files)
    digests = [file_digest(file) for file in named]
    inputs = ", ".join(f"{file.name} (sha256 {digest})" for file, digest in zip(named, digests, strict=True))
    return build_records(
        columns,
        source_file=named[0],
        run_set_id=run_set_id or f"import-{digests[0][:12]}",
        source=f"gatestats import {command} {inputs}" + (f"; {tool}" if tool else ""),
        lines=lines,
    )
