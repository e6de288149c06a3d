"""Late labels: ``WATCH/labels.jsonl``, append-only, one checksummed JSON object per line.

A label says something learned about an observation after it was written (an accepted outcome
found wrong a week later, reworked, or accepted only later); it names the record by its
``record_id`` and never rewrites it (docs/rollout.md, "Late labels"). One line::

    {"added_at":"2026-11-20T09:00:00Z","checksum":"sha256:...","label":"escaped_defect",
     "note":"wrong refund amount","observed_at":"2026-11-19T16:30:00Z","record_id":"obs-17",
     "source":"tickets.csv"}

The canonical JSON of the object (sorted keys, compact) with ``checksum`` = ``sha256:`` of the
canonical JSON without it (:func:`gatestats.io.digest.digest_json`, the runner's digest). Lines are
appended under ``WATCH/.lock`` in one write and fsynced; a last line without its newline (a writer
killed while appending) is found by :func:`read_labels` and cut by the next :func:`add_labels`, which
appends only after it (the cut line was never complete, so never read).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import polars as pl

from gatestats.errors import RecordFileError, RecordProblem
from gatestats.io.digest import canonical_json, digest_json
from gatestats.io.limits import name_problem
from gatestats.rollout.log import read_log, watch_lock
from gatestats.tables.inputs import CellKind, InputTable, read_input_table, typed_cell
from gatestats.vocabulary import LATE_LABELS, LateLabel
from gatestats_runner.contract import MAX_LINE_BYTES, decode_json, validate_field

__all__ = ["LABELS", "LABEL_COLUMNS", "Label", "add_labels", "read_labels"]

LABELS = "labels.jsonl"
#: The columns of a label table: the first three required, ``note`` and ``source`` optional.
LABEL_COLUMNS = ("record_id", "label", "observed_at", "note", "source")
_REQUIRED = LABEL_COLUMNS[:3]
_LINE_KEYS = frozenset({*LABEL_COLUMNS, "added_at", "checksum"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Label:
    """One late label as stored: the record it labels, what was learned, when, from where, its line."""

    record_id: str
    label: LateLabel
    observed_at: str
    note: str | None
    source: str | None
    added_at: str
    line: int

    def to_dict(self) -> dict[str, Any]:
        """The label's line without its checksum (what the checksum covers)."""
        return {
            "record_id": self.record_id,
            "label": self.label,
            "observed_at": self.observed_at,
            "note": self.note,
            "source": self.source,
            "added_at": self.added_at,
        }


def _read_lines(path: Path) -> tuple[list[bytes], int]:
    """The complete lines of the file and the length of its complete part (a torn tail left out)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return [], 0
    except OSError as exc:  # a symlink (ELOOP) or anything but a readable file
        problem = RecordProblem(file=str(path), field="<file>", message=f"not a regular file: {exc.strerror}")
        raise RecordFileError([problem]) from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise RecordFileError([RecordProblem(file=str(path), field="<file>", message="not a regular file")])
        data = handle.read()
    end = data.rfind(b"\n") + 1
    return data[:end].splitlines(), end


def _decoded(path: Path, number: int, raw: bytes) -> Label:
    """One line checked: strict JSON, exactly the label's keys, each typed, the checksum its content's."""

    def bad(field: str, message: str) -> RecordFileError:
        return RecordFileError([RecordProblem(file=str(path), line=number, field=field, message=message)])

    value, why = decode_json(raw, max_bytes=MAX_LINE_BYTES)
    if why is not None:
        raise bad(why.field, why.message)
    if not isinstance(value, dict) or set(value) != _LINE_KEYS:
        raise bad("<line>", f"expected a JSON object with the keys {sorted(_LINE_KEYS)}")
    body = {k: v for k, v in value.items() if k != "checksum"}
    if value["checksum"] != digest_json(body):
        raise bad("checksum", "does not match the line's content (the line was edited after it was written)")
    for key in LABEL_COLUMNS:
        if not isinstance(value[key], str) and not (key in ("note", "source") and value[key] is None):
            raise bad(key, f"expected a string (got {value[key]!r:.80})")
    if value["label"] not in LATE_LABELS:
        raise bad("label", f"expected one of {', '.join(LATE_LABELS)} (got {value['label']!r:.80})")
    return Label(
        record_id=value["record_id"],
        label=cast("LateLabel", value["label"]),
        observed_at=value["observed_at"],
        note=value["note"],
        source=value["source"],
        added_at=str(value["added_at"]),
        line=number,
    )


def read_labels(watch_dir: str | os.PathLike[str]) -> tuple[Label, ...]:
    """Every late label of the log, in the order they were added, each line's checksum verified.

    Parameters
    ----------
    watch_dir
        The log's directory.

    Returns
    -------
    tuple of Label
        The labels (empty when none was added).

    Raises
    ------
    RecordFileError
        A line is not strict JSON, lacks or adds a key, was edited (its checksum), or is the torn
        last line of a killed writer (file, line and field named).
    """
    path = Path(watch_dir) / LABELS
    lines, end = _read_lines(path)
    labels = tuple(_decoded(path, number, raw) for number, raw in enumerate(lines, start=1))
    if path.exists() and path.stat().st_size > end:
        message = (
            "torn last line (no newline: a writer was killed while appending); "
            "the next `watch label` removes it before it appends"
        )
        raise RecordFileError([RecordProblem(file=str(path), line=len(lines) + 1, field="<line>", message=message)])
    return labels


def _table(path: str | os.PathLike[str]) -> InputTable:
    """The label table's columns (``note`` and ``source`` only when the table has them)."""
    try:
        return read_input_table(path, LABEL_COLUMNS)
    except RecordFileError as exc:
        missing = {p.field for p in exc.problems if p.message.startswith("mapped column not in the table")}
        if not missing or missing != {p.field for p in exc.problems} or not missing <= {"note", "source"}:
            raise
    return read_input_table(path, [c for c in LABEL_COLUMNS if c not in missing])


def _row_label(
    table: InputTable, index: int, known: set[str], default_source: str, problems: list[RecordProblem]
) -> dict[str, Any] | None:
    """One row of the table as a label's fields, or None (its problems appended)."""
    row = table.rows[index]
    before = len(problems)
    fields: dict[str, Any] = {}
    for column in LABEL_COLUMNS:
        cell = row.get(column)
        kind: CellKind = "id" if column == "record_id" else "string"
        value, why = (None, None) if cell is None else typed_cell(cell, kind, text=table.text)
        if why is None and value is not None and (bad_name := name_problem(value)) is not None:
            why = bad_name
        if why is None and value is None and column in _REQUIRED:
            why = "required value is missing"
        if why is not None:
            problems.append(table.problem(index, column, why))
        fields[column] = value
    if len(problems) == before:
        if fields["label"] not in LATE_LABELS:
            problems.append(table.problem(index, "label", f"expected one of {', '.join(LATE_LABELS)}"))
        if any(validate_field("started_at", fields["observed_at"])):
            problems.append(table.problem(index, "observed_at", "expected an RFC 3339 timestamp with offset"))
        if fields["record_id"] not in known:
            message = f"names no record of the log (record_id {fields['record_id']!r:.80})"
            problems.append(table.problem(index, "record_id", message))
    fields["source"] = fields["source"] or default_source
    return fields if len(problems) == before else None


def _new_labels(
    table: InputTable, known: set[str], existing: Sequence[Label], now: str
) -> tuple[list[dict[str, Any]], list[RecordProblem]]:
    problems: list[RecordProblem] = []
    seen: dict[tuple[str, str], str] = {(x.record_id, x.label): f"{LABELS} line {x.line}" for x in existing}
    out: list[dict[str, Any]] = []
    for index in range(len(table.rows)):
        fields = _row_label(table, index, known, Path(table.path).name, problems)
        if fields is None:
            continue
        key = (fields["record_id"], fields["label"])
        if key in seen:
            message = f"record {key[0]!r:.80} is already labelled {key[1]!r} ({seen[key]})"
            problems.append(table.problem(index, "record_id", message))
            continue
        seen[key] = table.where(index)
        out.append({**fields, "added_at": now})
    return out, problems


def add_labels(watch_dir: str | os.PathLike[str], table_path: str | os.PathLike[str]) -> tuple[Label, ...]:
    """Append the late labels of a table (CSV, JSONL or Parquet) to ``WATCH/labels.jsonl``.

    Columns: ``record_id``, ``label`` (escaped_defect | rework | accepted | not_accepted),
    ``observed_at`` (RFC 3339 with offset), and optionally ``note`` and ``source`` (default: the
    table's file name). Nothing is appended when any row is wrong: a label naming no record of the
    log, a word that is not a label, a hostile id, a record already given the same label (in the
    table or the file). Under ``WATCH/.lock``: a torn last line is cut, then every new line is
    written in one append and fsynced.

    Parameters
    ----------
    watch_dir
        The log's directory.
    table_path
        The label table.

    Returns
    -------
    tuple of Label
        The labels appended.

    Raises
    ------
    RecordFileError
        The table is not a strict table, or a row is wrong (file, line and column named); or the
        log or the label file cannot be read.
    WatchError
        ``watch_dir`` is not a watch directory.
    """
    root = Path(watch_dir)
    table = _table(table_path)
    with watch_lock(root):
        known = set(read_log(root).records.get_column("record_id").to_list())
        path = root / LABELS
        lines, end = _read_lines(path)
        existing = [_decoded(path, number, raw) for number, raw in enumerate(lines, start=1)]
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        new, problems = _new_labels(table, known, existing, now)
        if problems:
            raise RecordFileError(problems)
        if not new:
            return ()
        _append(path, end, [_line(fields) for fields in new])
    return tuple(_decoded(path, len(lines) + i, _line(fields).rstrip(b"\n")) for i, fields in enumerate(new, start=1))


def _line(fields: Mapping[str, Any]) -> bytes:
    body = dict(fields)
    body["checksum"] = digest_json(body)
    return (canonical_json(body) + "\n").encode("utf-8")


def _append(path: Path, end: int, lines: Sequence[bytes]) -> None:
    """Cut a torn tail at ``end``, append ``lines`` in one write, fsync the file (and a new file's directory)."""
    new_file = not path.exists()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        if os.fstat(fd).st_size > end:
            os.ftruncate(fd, end)
        os.lseek(fd, end, os.SEEK_SET)
        view = memoryview(b"".join(lines))
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    if new_file:
        directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def apply_labels(records: pl.DataFrame, labels: Sequence[Label], *, as_of: str | None = None) -> pl.DataFrame:
    """The records with what their late labels say, as columns (the records themselves unchanged).

    Added columns: ``escaped_defect`` and ``rework`` (Boolean: the record has such a label), and
    ``accepted_final`` (Boolean: the latest ``accepted`` / ``not_accepted`` label in the order they were
    added, else the record's own ``accepted``; null when neither says). With ``as_of``, only the labels
    added at or before that time count (``added_at``, RFC 3339 UTC ``...Z`` as written), so a reading can
    be replayed as it was.

    Parameters
    ----------
    records
        Records with ``record_id`` and ``accepted`` (e.g. :attr:`ObservationLog.records`).
    labels
        The labels (:func:`read_labels`).
    as_of
        The latest ``added_at`` counted (None: every label).

    Returns
    -------
    polars.DataFrame
        ``records`` with the three columns, in the same row order.

    Examples
    --------
    >>> frame = pl.DataFrame({"record_id": ["a", "b"], "accepted": [True, None]})
    >>> late = [Label(record_id="b", label="accepted", observed_at="2026-11-20T00:00:00Z", note=None,
    ...               source="crm", added_at="2026-11-21T00:00:00Z", line=1)]
    >>> apply_labels(frame, late)["accepted_final"].to_list()
    [True, True]
    >>> apply_labels(frame, late, as_of="2026-11-20T00:00:00Z")["accepted_final"].to_list()
    [True, None]
    """
    counted = [x for x in labels if as_of is None or x.added_at <= as_of]
    defects = {x.record_id for x in counted if x.label == "escaped_defect"}
    reworked = {x.record_id for x in counted if x.label == "rework"}
    verdicts: dict[str, bool] = {}
    for x in counted:
        if x.label in ("accepted", "not_accepted"):
            verdicts[x.record_id] = x.label == "accepted"
    late = pl.DataFrame(
        {"record_id": list(verdicts), "__late": list(verdicts.values())},
        schema={"record_id": pl.String(), "__late": pl.Boolean()},
    )
    ids = pl.col("record_id")
    return (
        records.join(late, on="record_id", how="left", maintain_order="left")
        .with_columns(
            ids.is_in(list(defects)).alias("escaped_defect"),
            ids.is_in(list(reworked)).alias("rework"),
            pl.coalesce("__late", "accepted").alias("accepted_final"),
        )
        .drop("__late")
    )
