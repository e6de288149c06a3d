"""Import trial outcomes from any table (CSV, JSONL or Parquet) through a column mapping.

The table is read strictly (:func:`gatestats.tables.inputs.read_input_table`) and every mapped cell
must already have the type of its record field (no coercion):

- CSV cells are text, parsed exactly: an empty cell is null, ``trial`` a 64-bit integer (``1.5``
  and ``1.0`` are not), a cost a finite number (``NaN``, ``inf`` and ``1e999`` are not);
- JSONL and Parquet cells keep their type: a string field needs a string, an integer field an
  integer (not ``1.0``), a number field a finite number (not a string, not NaN); lists, objects,
  dates and bytes are never accepted for a scalar field;
- the id fields ``system``, ``case_id`` and ``case_version`` accept a string or an integer, and an
  integer is written as its decimal text (``7`` -> ``"7"``, as τ-bench numbers its tasks);
- ``outcome`` accepts the spellings of :data:`OUTCOME_VALUES` (any case, surrounding blanks
  ignored) and, in JSONL and Parquet, ``true``/``false`` and the integers ``1``/``0``.

Labels and graders (formats in :mod:`gatestats.tables.cells` and ``docs/importers.md``):

- ``slices=COLUMN``: ``a;b`` or a JSON array in CSV, a list of strings in JSONL and Parquet.
  Slices describe the case: every row of a case (all systems, trials) gives the same set.
- ``grader:NAME=COLUMN`` (a code grader) and ``judge:NAME=COLUMN`` (a judge grader, with its
  calibration version from ``calibrations``): one verdict per cell; ``graders=COLUMN``: the
  contract's list of grader objects (CSV: a JSON array). A grader name appears once per record.
- ``trial_label=COLUMN`` instead of ``trial=COLUMN``: labels such as ``run-1`` or ``seed-7``; the
  distinct labels of each (system, case, case version) become trials 0, 1, ... in natural order
  (``run-2`` before ``run-10``, case-insensitive), and each record's ``source`` names its label.
  Two labels that differ only in case, blanks or leading zeros (``run-1``, ``Run-01``) are an error.

Every defect names the file, the line (Parquet: the row), the record field and the column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from gatestats._typing import JSONObject, JSONValue
from gatestats.errors import RecordFileError, RecordProblem
from gatestats.importers._common import imported_records
from gatestats.records.contract import NESTED_FIELDS, POLARS_SCHEMA
from gatestats.tables.cells import (
    GRADER_KINDS,
    grader_list,
    label_problem,
    number_labels,
    slice_list,
    verdict,
)
from gatestats.tables.inputs import CellKind, InputTable, ProblemList, describe, read_input_table, typed_cell
from gatestats.tables.mapping import parse_field_mapping
from gatestats.vocabulary import FAILED, OUTCOMES, PASSED, Outcome

__all__ = ["ID_FIELDS", "OUTCOME_VALUES", "import_table", "parse_mapping"]

#: Accepted spellings of an outcome (case-insensitive, surrounding blanks ignored).
OUTCOME_VALUES: Mapping[str, Outcome] = {
    "1": PASSED,
    "1.0": PASSED,
    "true": PASSED,
    "pass": PASSED,
    "0": FAILED,
    "0.0": FAILED,
    "false": FAILED,
    "fail": FAILED,
    **{outcome: outcome for outcome in OUTCOMES},  # the contract's own words
}
#: Fields whose column may hold integers (written as their decimal text) as well as strings.
ID_FIELDS: tuple[str, ...] = ("system", "case_id", "case_version")
_GENERATED = {"schema_version", "record_id", "run_set_id", "source", "checksum"}
_SCALARS = tuple(name for name in POLARS_SCHEMA if name not in _GENERATED and name not in NESTED_FIELDS)
_MAPPABLE = (*_SCALARS, "slices", "graders", "trial_label")
_OUTCOME_EXPECTED = "one of 1/0, true/false, pass/fail, passed/failed, resource_killed, infra_error"
_LETTER = re.compile(r"[^\W\d_]")


def _grader_key(field: str) -> tuple[str, str] | None:
    """``(kind, name)`` of a ``grader:NAME`` or ``judge:NAME`` mapping key, None for a record field."""
    prefix, colon, name = field.partition(":")
    return (GRADER_KINDS[prefix], name) if colon and prefix in GRADER_KINDS else None


def parse_mapping(text: str) -> dict[str, str]:
    """Parse ``field=COLUMN,...`` into a dict, rejecting unknown or repeated fields and graders.

    Besides the record fields, ``slices``, ``graders`` and ``trial_label`` may be mapped, and each
    ``grader:NAME=COLUMN`` (code grader) or ``judge:NAME=COLUMN`` (judge grader) adds a grader.

    Parameters
    ----------
    text
        The ``--map`` option's text (blanks around items and ``=`` ignored).

    Returns
    -------
    dict of str to str
        Record field (or ``grader:NAME``/``judge:NAME``) -> table column.

    Raises
    ------
    ValueError
        An entry is not ``field=COLUMN``, a field is unknown or repeated, a grader name is blank,
        not one line of printable text, or mapped twice.

    Examples
    --------
    >>> parse_mapping("case_id=task,outcome=ok,judge:helpful=h")
    {'case_id': 'task', 'outcome': 'ok', 'judge:helpful': 'h'}
    """
    fields: list[str] = []
    graders: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        key, sep, column = (piece.strip() for piece in item.partition("="))
        found = _grader_key(key)
        if found is None or not sep or not column:
            fields.append(item)
            continue
        _check_grader_name(found[1], graders)
        graders[key] = column
    try:
        mapping = parse_field_mapping(",".join(fields), _MAPPABLE, noun="record field")
    except ValueError as exc:
        hint = "; graders: grader:NAME=COLUMN, judge:NAME=COLUMN" if "unknown record field" in str(exc) else ""
        raise ValueError(f"{exc}{hint}") from None
    return mapping | graders


def _check_grader_name(name: str, graders: Mapping[str, str]) -> None:
    bad = label_problem(name, "grader name")
    if bad is None and name != name.strip():
        bad = f"a grader name has no surrounding blanks (got {name!r})"
    if bad is not None:
        msg = f"--map: {bad}"
        raise ValueError(msg)
    if any((key := _grader_key(other)) is not None and key[1] == name for other in graders):
        msg = f"--map: grader {name!r} is mapped twice"
        raise ValueError(msg)


def _kind(field: str) -> CellKind:
    dtype = POLARS_SCHEMA[field]
    if dtype == pl.Int64():
        return "integer"
    if dtype == pl.Float64():
        return "number"
    if dtype == pl.Boolean():
        return "boolean"  # the contract's booleans (``accepted``): true/false, never a word coerced
    return "id" if field in ID_FIELDS else "string"


def _outcome(value: Any, *, text: bool) -> tuple[str | None, str | None]:
    """A cell as a contract outcome, or why it is not one."""
    if isinstance(value, str):
        found = OUTCOME_VALUES.get(value.strip().lower())
        if found is not None:
            return found, None
    elif not text and isinstance(value, bool):
        return (PASSED if value else FAILED), None
    elif not text and isinstance(value, int) and value in (0, 1):
        return (PASSED if value == 1 else FAILED), None
    got = "an empty value" if value is None or value == "" else repr(value[:80]) if text else describe(value)
    return None, f"expected {_OUTCOME_EXPECTED} (got {got})"


def _check_mapping(fields: Mapping[str, str], *, system: str | None, calibrations: Mapping[str, str]) -> None:
    """Refuse unknown fields, no case_id or outcome, two trial columns, a system given twice or not at all."""
    for name in fields:
        if name not in _MAPPABLE and _grader_key(name) is None:
            known = ", ".join(_MAPPABLE)
            msg = f"mapping: unknown record field {name!r} (mappable: {known}, grader:NAME, judge:NAME)"
            raise ValueError(msg)
    for needed in ("case_id", "outcome"):
        if needed not in fields:
            msg = f"mapping: {needed}=COLUMN is required"
            raise ValueError(msg)
    if "trial" in fields and "trial_label" in fields:
        msg = "mapping: give trial=COLUMN (integers) or trial_label=COLUMN (labels), not both"
        raise ValueError(msg)
    if ("system" in fields) == (system is not None):
        msg = (
            "mapping: give the system either as a column (system=COLUMN) or as a label (--system), not both or neither"
        )
        raise ValueError(msg)
    judges = {key[1] for name in fields if (key := _grader_key(name)) is not None and key[0] == "judge"}
    for name, version in calibrations.items():
        if name not in judges:
            msg = f"calibrations: {name!r} is not a judge column (map judge:{name}=COLUMN)"
            raise ValueError(msg)
        if not isinstance(version, str) or label_problem(version, "calibration version") is not None:
            msg = f"calibrations: {name!r}: expected a calibration version (got {version!r})"
            raise ValueError(msg)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Reader:
    """Reads the mapped cells of a table row by row; every defect is collected (file, line, field, column)."""

    table: InputTable
    fields: Mapping[str, str]
    calibrations: Mapping[str, str]
    problems: ProblemList = field(default_factory=ProblemList)
    columns: dict[str, list[Any]] = field(default_factory=dict)

    def bad(self, index: int, name: str, column: str, message: str) -> None:
        self.problems.add(self.table.problem(index, name, f"column {column!r}: {message}"))

    def read(self) -> None:
        scalars = {name: column for name, column in self.fields.items() if name in _SCALARS}
        graders = {name: column for name, column in self.fields.items() if _grader_key(name) is not None}
        for name in [*scalars, *(n for n in ("slices", "trial_label") if n in self.fields)]:
            self.columns[name] = []
        if graders or "graders" in self.fields:
            self.columns["graders"] = []
        for index, row in enumerate(self.table.rows):
            for name, column in scalars.items():
                self.columns[name].append(self._scalar(index, name, column, row[column]))
            if "slices" in self.fields:
                self.columns["slices"].append(self._slices(index, row))
            if "trial_label" in self.fields:
                self.columns["trial_label"].append(self._label(index, row))
            if "graders" in self.columns:
                self.columns["graders"].append(self._graders(index, row, graders))

    def _scalar(self, index: int, name: str, column: str, cell: Any) -> Any:
        text = self.table.text
        value, bad = _outcome(cell, text=text) if name == "outcome" else typed_cell(cell, _kind(name), text=text)
        if bad is not None:
            if name == "trial" and isinstance(cell, str) and _LETTER.search(cell):
                bad += "; for labels such as run-1 map trial_label=COLUMN"
            self.bad(index, name, column, bad)
        return value

    def _slices(self, index: int, row: Mapping[str, object]) -> list[str] | None:
        value, bad = slice_list(row[self.fields["slices"]], text=self.table.text)
        if bad is not None:
            self.bad(index, "slices", self.fields["slices"], bad)
        return value

    def _label(self, index: int, row: Mapping[str, object]) -> str | None:
        column = self.fields["trial_label"]
        value, bad = typed_cell(row[column], "id", text=self.table.text)
        if bad is None and value is None:
            bad = "a trial label is required on every row (got an empty value)"
        if bad is None:
            bad = label_problem(value, "trial label")
        if bad is not None:
            self.bad(index, "trial_label", column, bad)
            return None
        return str(value)

    def _graders(self, index: int, row: JSONObject, graders: Mapping[str, str]) -> list[Mapping[str, JSONValue]] | None:
        found: list[Mapping[str, JSONValue]] = []
        if "graders" in self.fields:
            listed, bad = grader_list(row[self.fields["graders"]], text=self.table.text)
            if bad is not None:
                self.bad(index, "graders", self.fields["graders"], bad)
            found.extend(listed or [])
        for name, column in graders.items():
            kind, grader = _grader_key(name) or ("", "")
            value, bad = verdict(row[column], text=self.table.text)
            if bad is not None:
                self.bad(index, f"graders.{grader}", column, bad)
            elif value is not None and any(g["name"] == grader for g in found):
                why = f"grader {grader!r} is also in the graders column {self.fields['graders']!r}"
                self.bad(index, f"graders.{grader}", column, why)
            elif value is not None:
                version = self.calibrations.get(grader)
                found.append({"name": grader, "kind": kind, "verdict": value, "calibration_version": version})
        return found or None


def _problem(table: InputTable, index: int, name: str, message: str, first: int) -> RecordProblem:
    """A problem at row ``index`` that points back at row ``first``."""
    if table.lines is None:
        return RecordProblem(file=table.path, row=index, field=name, message=message, first_row=first)
    return RecordProblem(
        file=table.path, line=table.lines[index], field=name, message=message, first_line=table.lines[first]
    )


def _check_slices(table: InputTable, frame: pl.DataFrame, column: str) -> None:
    """Refuse a case whose rows give different slices (slices describe the case, not the trial)."""
    first: dict[tuple[str, str | None], tuple[int, frozenset[str]]] = {}
    problems = ProblemList()
    for index, (case_id, version, slices) in enumerate(frame.select("case_id", "case_version", "slices").iter_rows()):
        names = frozenset(slices or ())
        key = (case_id, version)
        if key not in first:
            first[key] = (index, names)
        elif first[key][1] != names:
            shown, earlier = sorted(names), sorted(first[key][1])
            msg = (
                f"column {column!r}: case {case_id!r} has slices {shown} here and {earlier} on another row "
                "(slices describe the case: give every row of a case the same)"
            )
            problems.add(_problem(table, index, "slices", msg, first[key][0]))
    problems.raise_if_any()


def _numbered_trials(table: InputTable, frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """``trial`` from ``trial_label``: each (system, case, version)'s labels numbered in natural order."""
    groups: dict[tuple[Any, ...], dict[str, int]] = {}
    for index, key in enumerate(frame.select("system", "case_id", "case_version", "trial_label").iter_rows()):
        groups.setdefault(key[:3], {}).setdefault(key[3], index)
    numbers: dict[tuple[Any, ...], dict[str, int]] = {}
    problems = ProblemList()
    for key, lines in groups.items():
        numbered, clash = number_labels(lines)
        if clash is not None:
            later, earlier = sorted(clash, key=lambda label: lines[label], reverse=True)
            msg = (
                f"column {column!r}: trial labels {later!r} and {earlier!r} of system {key[0]!r}, case {key[1]!r} "
                "differ only in case, blanks or leading zeros (which trial is which?)"
            )
            problems.add(_problem(table, lines[later], "trial_label", msg, lines[earlier]))
        numbers[key] = numbered
    problems.raise_if_any()
    trials = [
        numbers[key[:3]][key[3]] for key in frame.select("system", "case_id", "case_version", "trial_label").iter_rows()
    ]
    return frame.with_columns(
        trial=pl.Series(trials, dtype=pl.Int64),
        source_note=pl.format(
            "trial label {} (trials numbered per case in natural label order)", _quoted("trial_label")
        ),
    ).drop("trial_label")


def _quoted(name: str) -> pl.Expr:
    return (
        pl.lit("'")
        + pl.col(name).str.replace_all("\\", "\\\\", literal=True).str.replace_all("'", "\\'", literal=True)
        + pl.lit("'")
    )


def import_table(
    path: str | Path,
    mapping: Mapping[str, str],
    *,
    system: str | None = None,
    calibrations: Mapping[str, str] | None = None,
    run_set_id: str | None = None,
) -> pl.DataFrame:
    """Turn a table of trial outcomes into validated run records (contract v1).

    Parameters
    ----------
    path
        A ``.csv``, ``.jsonl``/``.ndjson`` or ``.parquet`` table, one row per trial.
    mapping
        Record field -> table column (see :func:`parse_mapping`). ``case_id`` and ``outcome`` are
        required; ``system`` unless the ``system`` argument names it; ``trial`` (integers) or
        ``trial_label`` (labels, numbered per case in natural order) optional (neither: one trial
        per case, so a case may appear only once). Outcome values ``1/0``, ``true/false``,
        ``pass/fail``, ``passed/failed`` (any case) map to ``passed``/``failed``;
        ``resource_killed`` and ``infra_error`` are kept. ``slices``, ``graders``,
        ``grader:NAME`` and ``judge:NAME`` columns as the module docstring says. Every other
        column must hold its field's type already; ``system``, ``case_id`` and ``case_version``
        may be integers, written as their decimal text.
    system
        System label for every row (instead of a mapped column).
    calibrations
        Judge name -> calibration version, recorded in each ``judge:NAME`` grader's verdicts
        (a judge without one cannot vote in a gate).
    run_set_id
        Run-set id of the records; default ``import-<first 12 hex of the file's sha256>``.

    Returns
    -------
    polars.DataFrame
        The validated records, one per row of the table.

    Raises
    ------
    RecordFileError
        With file, line (or Parquet row) and field of every defect (the count is exact);
        nothing is returned.
    ValueError
        The mapping or the calibrations are unusable.
    """
    file = Path(path)
    if not file.is_file():
        raise RecordFileError.single(file, "<file>", "no such table file")
    fields = dict(mapping)
    _check_mapping(fields, system=system, calibrations=calibrations or {})
    table = read_input_table(file, list(fields.values()))
    if not table.rows:
        raise RecordFileError.single(file, "<file>", "the table has no rows (nothing to import)")
    reader = _Reader(table=table, fields=fields, calibrations=calibrations or {})
    reader.read()
    reader.problems.raise_if_any()
    frame = pl.DataFrame(
        [
            pl.Series(name, values, dtype=POLARS_SCHEMA.get(name, pl.String()), strict=True)
            for name, values in reader.columns.items()
        ]
    )
    if system is not None:
        frame = frame.with_columns(system=pl.lit(system))
    if "case_version" not in frame.columns:
        frame = frame.with_columns(case_version=pl.lit(None, pl.String))
    if "slices" in frame.columns:
        _check_slices(table, frame, fields["slices"])
    if "trial_label" in frame.columns:
        frame = _numbered_trials(table, frame, fields["trial_label"])
    elif "trial" not in frame.columns:
        frame = frame.with_columns(trial=pl.lit(0, pl.Int64))
    return imported_records(frame, files=file, command="table", run_set_id=run_set_id, lines=table.lines)
