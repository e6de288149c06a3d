"""Strict reading of the tables users bring (``import table``, ``calibrate``): CSV, JSONL or Parquet.

Every cell comes back with where it is (the line of a CSV or JSONL file, the row of a Parquet file),
and every defect is a :class:`~gatestats.errors.RecordFileError` naming the file, that line or row
and the column. The readers are the strict ones of the record files:

- CSV: :func:`gatestats.tables.csvfile.read_csv_strict` (ragged rows, broken quotes and bytes that are not
  UTF-8 named with their line; a quoted newline counted);
- JSONL: each non-blank line through :func:`gatestats_runner.contract.decode_json` (one JSON object
  per line; no duplicate key, ``NaN``/``Infinity``, overflowing number, integer beyond 64 bits,
  byte-order mark or nesting deeper than 32 levels; a line longer than 1 MiB is refused);
- Parquet: polars, reading only the columns asked for.

Cells are then typed with :func:`typed_cell`, without coercion: a CSV cell is text and is parsed
exactly (``""`` is null, ``1.5`` is not an integer, ``NaN``/``inf``/``1e999`` are not finite
numbers); a JSONL or Parquet cell must already have the type asked for (a number is never read from
a string, ``1.0`` is not an integer, a list or an object is never a string). The one conversion:
an *id* (case, system, item, label ...) may be a string or an integer, and an integer is written
as its decimal text (``7`` -> ``"7"``).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

import polars as pl

from gatestats.errors import MAX_PROBLEMS, ProblemList, RecordFileError, RecordProblem
from gatestats.tables.csvfile import read_csv_strict
from gatestats_runner.contract import INT64_MAX, INT64_MIN, MAX_LINE_BYTES, decode_json

__all__ = [
    "MAX_PROBLEMS",
    "TABLE_SUFFIXES",
    "CellKind",
    "InputTable",
    "ProblemList",
    "TableKind",
    "describe",
    "read_input_table",
    "typed_cell",
]

TableKind: TypeAlias = Literal["csv", "jsonl", "parquet"]
#: ``string``: text only; ``id``: text, or an integer written as its decimal text; ``integer``: a
#: 64-bit integer; ``number``: a finite number; ``boolean``: true or false.
CellKind: TypeAlias = Literal["string", "id", "integer", "number", "boolean"]

#: File suffix -> table kind.
TABLE_SUFFIXES: dict[str, TableKind] = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
_INTEGER = re.compile(r"[-+]?[0-9]+")
# A decimal number as CSV cells write it. ``[0-9]+(?:\.[0-9]*)?``, not ``[0-9]+\.?[0-9]*``: without the dot the two
# digit runs could split a run of digits anywhere, and a cell of n digits and a letter took O(n²) to refuse (40,000
# digits: 30 s; a cell may hold 1 MiB).
_NUMBER = re.compile(r"[-+]?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?")
_EXPECTED: dict[CellKind, str] = {
    "string": "a string",
    "id": "a string or an integer",
    "integer": "an integer",
    "number": "a finite number",
    "boolean": "true or false",
}


def describe(value: Any) -> str:
    """A value as an error message shows it: its JSON type and a short repr.

    Parameters
    ----------
    value
        A cell's value.

    Returns
    -------
    str
        For example ``integer 7`` or ``null``; a repr longer than 80 characters is cut.

    Examples
    --------
    >>> describe(["a"]), describe(float("nan")), describe(None), describe("x" * 100)[-5:]
    ("array ['a']", 'number nan', 'null', 'xx...')
    """
    if value is None:
        return "null"
    names = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array", dict: "object"}
    name = names.get(type(value), type(value).__name__)
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{name} {text}"


def typed_cell(value: Any, kind: CellKind, *, text: bool) -> tuple[Any, str | None]:
    """One cell as ``kind``: ``(value, None)``, or ``(None, why)`` when it is not one.

    ``text`` says the cell is CSV text (empty = null, parsed exactly); otherwise it is a JSON or
    Parquet value that must already have the type (None = null).

    Parameters
    ----------
    value
        The cell.
    kind
        The type it must have.
    text
        Whether the cell is CSV text.

    Returns
    -------
    tuple
        ``(value, None)`` with the typed value (None for null), or ``(None, why)``.

    Examples
    --------
    >>> typed_cell("12", "integer", text=True), typed_cell(12.0, "integer", text=False)[1]
    ((12, None), 'expected an integer (got number 12.0)')
    >>> typed_cell(7, "id", text=False), typed_cell("1e999", "number", text=True)[1]
    (('7', None), "expected a finite number (got '1e999')")
    """
    if text:
        return _text_cell(str(value), kind)
    if value is None:
        return None, None
    # A bool is a JSON boolean, never an integer or a number.
    typed = (value if kind == "boolean" else None) if isinstance(value, bool) else _VALUE_CELLS[kind](value)
    if typed is None:
        return None, f"expected {_EXPECTED[kind]} (got {describe(value)})"
    return typed, None


def _int64(value: Any) -> int | None:
    """``value`` when it is a 64-bit integer (not a bool: the caller handles those)."""
    return value if isinstance(value, int) and INT64_MIN <= value <= INT64_MAX else None


def _finite_number(value: Any) -> float | None:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    integer = _int64(value)
    return None if integer is None else float(integer)


#: A JSON or Parquet cell (not null, not a bool) as each kind, or None when it is not one.
_VALUE_CELLS: dict[CellKind, Callable[[Any], Any]] = {
    "string": lambda value: value if isinstance(value, str) else None,
    "id": lambda value: value if isinstance(value, str) else (None if _int64(value) is None else str(value)),
    "integer": _int64,
    "number": _finite_number,
    "boolean": lambda value: None,
}


def _text_integer(text: str) -> int | None:
    if not _INTEGER.fullmatch(text) or len(text) > 20 or not INT64_MIN <= int(text) <= INT64_MAX:
        return None
    return int(text)


def _text_number(text: str) -> float | None:
    number = float(text) if _NUMBER.fullmatch(text) else math.nan
    return number if math.isfinite(number) else None


def _text_boolean(text: str) -> bool | None:
    return text.lower() == "true" if text.lower() in ("true", "false") else None


#: A CSV cell (not empty) as each kind, or None when it is not one; and what the message says was expected.
_TEXT_CELLS: dict[CellKind, tuple[Callable[[str], Any], str]] = {
    "string": (lambda text: text, "a string"),
    "id": (lambda text: text, "a string or an integer"),
    "integer": (_text_integer, "a 64-bit integer"),
    "number": (_text_number, "a finite number"),
    "boolean": (_text_boolean, "true or false"),
}


def _text_cell(text: str, kind: CellKind) -> tuple[Any, str | None]:
    if text == "":
        return None, None
    parse, expected = _TEXT_CELLS[kind]
    typed = parse(text)
    if typed is None:
        shown = repr(text if len(text) <= 80 else text[:77] + "...")
        return None, f"expected {expected} (got {shown})"
    return typed, None


@dataclass(frozen=True, slots=True, kw_only=True)
class InputTable:
    """A table's requested columns, cell by cell, with where each row is.

    ``rows[i][column]`` is the cell (CSV: text; JSONL: the JSON value, ``None`` when the line has no
    such key; Parquet: the Python value). ``lines[i]`` is the 1-based line row ``i`` starts on (CSV,
    JSONL), or None for Parquet, where row ``i`` is named by its 0-based index.
    """

    path: str
    kind: TableKind
    columns: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    lines: tuple[int, ...] | None

    @property
    def text(self) -> bool:
        """Whether the cells are text (CSV)."""
        return self.kind == "csv"

    def problem(self, index: int, field: str, message: str) -> RecordProblem:
        """A problem at row ``index`` (its line, or its Parquet row).

        Parameters
        ----------
        index
            The row (0-based).
        field
            The column.
        message
            What is wrong.

        Returns
        -------
        RecordProblem
            The problem, naming the file and the row's line (or Parquet row).
        """
        if self.lines is None:
            return RecordProblem(file=self.path, row=index, field=field, message=message)
        return RecordProblem(file=self.path, line=self.lines[index], field=field, message=message)

    def where(self, index: int) -> str:
        """``line N`` or ``row N`` of row ``index`` (for messages that point at another row).

        Parameters
        ----------
        index
            The row (0-based).

        Returns
        -------
        str
            Where the row is.
        """
        return f"row {index}" if self.lines is None else f"line {self.lines[index]}"


def _missing_columns(file: Path, kind: TableKind, present: Sequence[str], wanted: Sequence[str]) -> None:
    missing = [c for c in wanted if c not in present]
    if missing:
        shown = list(present)[:30]
        raise RecordFileError(
            [
                RecordProblem(
                    file=str(file),
                    line=1 if kind == "csv" else None,
                    field=column,
                    message=f"mapped column not in the table (columns: {shown})",
                )
                for column in missing
            ]
        )


def read_input_table(path: str | os.PathLike[str], columns: Sequence[str]) -> InputTable:
    """Read the ``columns`` of a ``.csv``, ``.jsonl``/``.ndjson`` or ``.parquet`` table strictly.

    Parameters
    ----------
    path
        The table.
    columns
        The columns to read (repeats are read once).

    Returns
    -------
    InputTable
        The cells of those columns, with where each row is.

    Raises
    ------
    RecordFileError
        The file is missing or of an unknown type; a column is absent (CSV and Parquet: from the
        header or schema; JSONL: from every line); a CSV file is not strict CSV; a JSONL line is not
        one strict JSON object; a Parquet file cannot be read. Each problem names the file, the line
        or row and the field; the count is exact.
    """
    file = Path(path)
    kind = TABLE_SUFFIXES.get(file.suffix.lower())
    if kind is None:
        msg = f"unknown table type {file.suffix!r} (expected .csv, .jsonl, .ndjson or .parquet)"
        raise RecordFileError.single(file, "<file>", msg)
    if not file.is_file():
        raise RecordFileError.single(file, "<file>", "no such file")
    wanted = list(dict.fromkeys(columns))
    if kind == "csv":
        table = read_csv_strict(file)
        _missing_columns(file, kind, list(table.header), wanted)
        index = {name: i for i, name in enumerate(table.header)}
        rows = tuple({c: row[index[c]] for c in wanted} for row in table.rows)
        return InputTable(path=str(file), kind=kind, columns=tuple(wanted), rows=rows, lines=table.lines)
    if kind == "jsonl":
        return _read_jsonl(file, wanted)
    return _read_parquet(file, wanted)


def _read_jsonl(file: Path, wanted: list[str]) -> InputTable:
    problems = ProblemList()
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    seen: dict[str, None] = {}
    try:
        handle = file.open("rb")
    except OSError as exc:
        raise RecordFileError.single(file, "<file>", f"cannot read: {exc.strerror or exc}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            body = raw.rstrip(b"\r\n")
            if not body.strip():
                continue
            value, bad = decode_json(body, max_bytes=MAX_LINE_BYTES)
            if bad is not None:
                problems.add(RecordProblem(file=str(file), line=number, field=bad.field, message=bad.message))
                continue
            if not isinstance(value, dict):
                message = f"expected a JSON object (got {describe(value)})"
                problems.add(RecordProblem(file=str(file), line=number, field="<line>", message=message))
                continue
            if len(seen) < 1000:
                seen.update(dict.fromkeys(value))
            rows.append({c: value.get(c) for c in wanted})
            lines.append(number)
    problems.raise_if_any()
    if not rows:
        raise RecordFileError.single(file, "<file>", "the table has no rows")
    _missing_columns(file, "jsonl", list(seen), wanted)
    return InputTable(path=str(file), kind="jsonl", columns=tuple(wanted), rows=tuple(rows), lines=tuple(lines))


def _read_parquet(file: Path, wanted: list[str]) -> InputTable:
    try:
        schema = pl.read_parquet_schema(file)
        _missing_columns(file, "parquet", list(schema), wanted)
        frame = pl.read_parquet(file, columns=wanted)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise RecordFileError.single(file, "<file>", f"not a readable Parquet file: {exc}") from None
    values = {c: frame.get_column(c).to_list() for c in wanted}
    rows = tuple({c: values[c][i] for c in wanted} for i in range(frame.height))
    return InputTable(path=str(file), kind="parquet", columns=tuple(wanted), rows=rows, lines=None)
