"""Strict CSV reading: every row with the physical line it starts on, every defect with its line.

polars' CSV reader fills a short row with nulls, reports a ragged row or a broken quote for the whole
file, and counts lines by rows (a quoted newline shifts every later line by one). Files that decide a
release are read here instead, with the standard library's ``csv`` module in strict mode, so that an
error names the file and the line a person sees in an editor.

A leading UTF-8 byte-order mark (what spreadsheet programs write) is accepted; any other byte that
is not UTF-8 is an error naming its line.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path

from gatestats.errors import ProblemList, RecordFileError, RecordProblem
from gatestats.io.jsonfile import read_regular_file
from gatestats.io.limits import CSV_MAX_BYTES

__all__ = ["MAX_CSV_FIELD_BYTES", "CsvTable", "csv_row_lines", "read_csv_strict"]

#: The longest field a CSV file may hold (csv's own default limit is 128 KiB).
MAX_CSV_FIELD_BYTES = 1 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class CsvTable:
    """A CSV file as strings: the header, the rows (all as wide as the header), each row's first line."""

    path: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    lines: tuple[int, ...]


def _decode(path: Path, data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise RecordFileError.single(
            path, "<line>", f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {column})", line=line
        ) from None


def read_csv_strict(path: str | os.PathLike[str]) -> CsvTable:
    """Read a CSV file with a header row; refuse ragged rows, broken quoting and bad bytes.

    Parameters
    ----------
    path
        The CSV file (UTF-8; a leading byte-order mark is skipped).

    Returns
    -------
    CsvTable
        Its header, rows and the line each row starts on.

    Raises
    ------
    RecordFileError
        The file cannot be read, is not a regular file, is larger than :data:`gatestats.io.limits.CSV_MAX_BYTES`,
        is not UTF-8, has no header, a duplicate or empty column name,
        a row with more or fewer fields than the header, or a quote that is not closed; every
        problem names its line (the first 50 are kept, the count is exact).
    """
    file = Path(path)
    data = read_regular_file(file, limit=CSV_MAX_BYTES, what="CSV")
    text = _decode(file, data)
    problems = ProblemList()
    previous_limit = csv.field_size_limit(MAX_CSV_FIELD_BYTES)
    try:
        header, rows, lines = _parse(str(file), text, problems)
    finally:
        csv.field_size_limit(previous_limit)
    if header is None:
        problems.add(
            RecordProblem(file=str(file), line=1, field="<header>", message="empty file: expected a header row")
        )
    problems.raise_if_any()
    if header is None:  # pragma: no cover - an empty file added a problem above
        raise RecordFileError.single(file, "<header>", "empty file: expected a header row", line=1)
    return CsvTable(path=str(file), header=tuple(header), rows=tuple(rows), lines=tuple(lines))


def _parse(file: str, text: str, problems: ProblemList) -> tuple[list[str] | None, list[tuple[str, ...]], list[int]]:
    """The header (None: empty file), the rows as wide as it, each row's first line; defects go to ``problems``."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    rows: list[tuple[str, ...]] = []
    lines: list[int] = []
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.add(RecordProblem(file=file, line=start, field="<line>", message=f"not valid CSV: {exc}"))
            break
        if header is None:
            header = row
            _check_header(file, start, row, problems)
        elif not row:
            continue  # a blank line
        elif len(row) != len(header):
            message = f"expected {len(header)} fields like the header (got {len(row)})"
            problems.add(RecordProblem(file=file, line=start, field="<line>", message=message))
        else:
            rows.append(tuple(row))
            lines.append(start)
    return header, rows, lines


def _check_header(file: str, line: int, header: list[str], problems: ProblemList) -> None:
    """Add a problem for each empty or repeated column name."""
    seen: set[str] = set()
    for name in header:
        if not name.strip():
            problems.add(RecordProblem(file=file, line=line, field="<header>", message="empty column name"))
        elif name in seen:
            problems.add(RecordProblem(file=file, line=line, field=name, message="duplicate column name"))
        seen.add(name)


def csv_row_lines(path: str | os.PathLike[str]) -> tuple[int, ...]:
    """The line each data row of a CSV file starts on (quoted newlines counted), for error messages.

    Parameters
    ----------
    path
        The CSV file (read by :func:`read_csv_strict`).

    Returns
    -------
    tuple of int
        The 1-based first line of each data row.

    """
    return read_csv_strict(path).lines
