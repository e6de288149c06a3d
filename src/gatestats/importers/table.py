"""Import trial outcomes from any table (CSV, JSONL or Parquet) through a column mapping.

The table is read strictly (:func:`gatestats.input_tables.read_input_table`) and every mapped cell
must already have the type of its record field (no coercion):

- CSV cells are text, parsed exactly: an empty cell is null, ``trial`` a 64-bit integer (``1.5``
  and ``1.0`` are not), a cost a finite number (``NaN``, ``inf`` and ``1e999`` are not);
- JSONL and Parquet cells keep their type: a string field needs a string, an integer field an
  integer (not ``1.0``), a number field a finite number (not a string, not NaN); lists, objects,
  dates and bytes are never accepted for a mapped field;
- the id fields ``system``, ``case_id`` and ``case_version`` accept a string or an integer, and an
  integer is written as its decimal text (``7`` -> ``"7"``, as τ-bench numbers its tasks);
- ``outcome`` accepts the spellings of :data:`OUTCOME_VALUES` (any case, surrounding blanks
  ignored) and, in JSONL and Parquet, ``true``/``false`` and the integers ``1``/``0``.

Every defect names the file, the line (Parquet: the row), the record field and the column.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from gatestats._mapping import parse_field_mapping
from gatestats.errors import RecordFileError
from gatestats.importers._common import imported_records
from gatestats.input_tables import CellKind, InputTable, ProblemList, describe, read_input_table, typed_cell
from gatestats.records.contract import NESTED_FIELDS, POLARS_SCHEMA
from gatestats.vocabulary import OUTCOMES, Outcome

__all__ = ["ID_FIELDS", "OUTCOME_VALUES", "import_table", "parse_mapping"]

#: Accepted spellings of an outcome (case-insensitive, surrounding blanks ignored).
OUTCOME_VALUES: Mapping[str, Outcome] = {
    "1": "passed",
    "1.0": "passed",
    "true": "passed",
    "pass": "passed",
    "0": "failed",
    "0.0": "failed",
    "false": "failed",
    "fail": "failed",
    **{outcome: outcome for outcome in OUTCOMES},  # the contract's own words
}
#: Fields whose column may hold integers (written as their decimal text) as well as strings.
ID_FIELDS: tuple[str, ...] = ("system", "case_id", "case_version")
_GENERATED = {"schema_version", "record_id", "run_set_id", "source", "checksum"}
_MAPPABLE = tuple(name for name in POLARS_SCHEMA if name not in _GENERATED and name not in NESTED_FIELDS)
_OUTCOME_EXPECTED = "one of 1/0, true/false, pass/fail, passed/failed, resource_killed, infra_error"


def parse_mapping(text: str) -> dict[str, str]:
    """Parse ``field=COLUMN,field=COLUMN`` into a dict, rejecting unknown or repeated fields.

    Parameters
    ----------
    text
        The mapping as the command line gives it.

    Returns
    -------
    dict of str to str
        Record field -> table column.

    Raises
    ------
    ValueError
        An entry is not ``field=COLUMN``, a field is unknown or repeated.

    Examples
    --------
    >>> parse_mapping("case_id=task,outcome=ok")
    {'case_id': 'task', 'outcome': 'ok'}
    """
    return parse_field_mapping(text, _MAPPABLE, noun="record field")


def _kind(field: str) -> CellKind:
    dtype = POLARS_SCHEMA[field]
    if dtype == pl.Int64():
        return "integer"
    if dtype == pl.Float64():
        return "number"
    return "id" if field in ID_FIELDS else "string"


def _outcome(value: Any, *, text: bool) -> tuple[str | None, str | None]:
    """A cell as a contract outcome, or why it is not one."""
    if isinstance(value, str):
        found = OUTCOME_VALUES.get(value.strip().lower())
        if found is not None:
            return found, None
    elif not text and isinstance(value, bool):
        return ("passed" if value else "failed"), None
    elif not text and isinstance(value, int) and value in (0, 1):
        return ("passed" if value == 1 else "failed"), None
    got = "an empty value" if value is None or value == "" else repr(value[:80]) if text else describe(value)
    return None, f"expected {_OUTCOME_EXPECTED} (got {got})"


def _check_mapping(fields: Mapping[str, str], *, system: str | None) -> None:
    """Refuse an unknown field, a missing ``case_id`` or ``outcome``, and a system given twice or not at all."""
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


def _typed_frame(table: InputTable, fields: Mapping[str, str]) -> pl.DataFrame:
    """Every mapped cell as its record field's type, in a column named for the field; every defect raised at once."""
    problems = ProblemList()
    columns: dict[str, list[Any]] = {field: [] for field in fields}
    for index, row in enumerate(table.rows):
        for field, column in fields.items():
            cell = row[column]
            if field == "outcome":
                value, bad = _outcome(cell, text=table.text)
            else:
                value, bad = typed_cell(cell, _kind(field), text=table.text)
            if bad is not None:
                problems.add(table.problem(index, field, f"column {column!r}: {bad}"))
            columns[field].append(value)
    problems.raise_if_any()
    return pl.DataFrame(
        [pl.Series(field, values, dtype=POLARS_SCHEMA[field], strict=True) for field, values in columns.items()]
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
        ``resource_killed`` and ``infra_error`` are kept. Every other column must hold its
        field's type already (see the module docstring); ``system``, ``case_id`` and
        ``case_version`` may be integers, written as their decimal text.
    system
        System label for every row (instead of a mapped column).
    run_set_id
        Run-set id of the records; default ``import-<first 12 hex of the file's sha256>``.

    Raises
    ------
    RecordFileError
        With file, line (or Parquet row) and field of every defect (the count is exact);
        nothing is returned.
    ValueError
        The mapping is unusable.

    Returns
    -------
    polars.DataFrame
        The validated records, one per row of the table.
    """
    file = Path(path)
    if not file.is_file():
        raise RecordFileError.single(file, "<file>", "no such table file")
    fields = dict(mapping)
    _check_mapping(fields, system=system)
    table = read_input_table(file, list(fields.values()))
    frame = _typed_frame(table, fields)
    if system is not None:
        frame = frame.with_columns(system=pl.lit(system))
    if "trial" not in frame.columns:
        frame = frame.with_columns(trial=pl.lit(0, pl.Int64))
    return imported_records(frame, file=file, command="table", run_set_id=run_set_id, lines=table.lines)
