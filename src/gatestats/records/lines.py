"""The strict line pass over a JSONL record file: every line decoded, checked and its checksum verified.

Every reader of JSONL records goes through :func:`check_jsonl` before polars sees the file, so the
columnar reader only ever parses lines that are already known to be exactly what the contract says:
one JSON object per line, no duplicate key, no ``NaN``, no number that overflows, no unknown field,
every value of the right type at every depth (see :func:`gatestats_runner.contract.decode_line` and
:func:`~gatestats_runner.contract.validate_record`, the runner's own checker: one source of truth).

Checksums
---------
The runner writes a ``checksum`` on every line: ``sha256:`` of the canonical JSON of the record
without that field (:func:`gatestats_runner.runsets.record_checksum`). A line whose checksum does not
match its content was changed after it was written: that is an error, never a warning. A file is
either checksummed on every line or on none (a file of records from another tool); a file with
some lines checksummed and others not is an error too (stripping the checksum from an edited line
must not turn it into "unchecked evidence"). The pass also digests the file's bytes as it reads
them, so the digest a verdict binds is the digest of the bytes that were checked.
"""

from __future__ import annotations

import hashlib
import os
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gatestats.errors import MAX_PROBLEMS, ProblemList, RecordFileError, RecordProblem
from gatestats_runner.contract import decode_line, validate_record
from gatestats_runner.runsets import CHECKSUM_FIELD, record_checksum

__all__ = ["MAX_PROBLEMS", "ChecksumStatus", "JsonlCheck", "check_jsonl"]


ChecksumStatus = Literal["verified", "none", "empty"]


@dataclass(frozen=True, slots=True, kw_only=True)
class JsonlCheck:
    """What the line pass found in a JSONL record file that has no defect.

    ``lines[i]`` is the 1-based line number of the i-th record (blank lines are skipped); it
    is a ``range`` when the file has no blank line, so it costs no memory per record.
    ``checksums`` is ``verified`` when every line carries a checksum that matches its content,
    ``none`` when no line carries one, ``empty`` when the file has no record.
    """

    path: str
    digest: str
    size: int
    n_records: int
    checksums: ChecksumStatus
    run_set_ids: frozenset[str]
    lines: Sequence[int]


class _LineSample:
    """Line numbers counted, the first :data:`MAX_PROBLEMS` kept (a file's every line is never held)."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list[int] = []

    def append(self, number: int) -> None:
        self.count += 1
        if len(self.first) < MAX_PROBLEMS:
            self.first.append(number)


def _add(problems: ProblemList, file: Path, line: int, field: str, message: str) -> None:
    problems.add(RecordProblem(file=str(file), line=line, field=field, message=message))


def check_jsonl(path: str | os.PathLike[str]) -> JsonlCheck:
    """Decode, contract-check and checksum-verify every line of a JSONL record file.

    Parameters
    ----------
    path
        The JSONL record file.

    Returns
    -------
    JsonlCheck
        What the pass established: the digest, the line of each record, checksums, run set ids.

    Raises
    ------
    RecordFileError
        With every problem found (the first :data:`MAX_PROBLEMS` kept, ``total`` exact), each
        naming the file, the line and the field: a line that is not one strict JSON object, a
        field that breaks the contract, a checksum that does not match the line, a line without
        a checksum in a checksummed file, a torn last line (no newline: a writer crashed).
    """
    file = Path(path)
    problems = ProblemList()
    digest = hashlib.sha256()
    size = 0
    blank: list[int] = []
    with_checksum = _LineSample()
    without_checksum = _LineSample()
    run_set_ids: set[str] = set()
    number = 0
    torn = False
    try:
        handle = file.open("rb")
    except OSError as exc:
        raise RecordFileError.single(file, "<file>", f"cannot read: {exc.strerror or exc}") from None
    with handle:
        for raw in handle:
            number += 1
            digest.update(raw)
            size += len(raw)
            if not raw.endswith(b"\n"):
                torn = True
            body = raw.rstrip(b"\r\n")
            if not body.strip():
                blank.append(number)
                continue
            if torn and decode_line(body)[0] is None:
                _add(
                    problems,
                    file,
                    number,
                    "<line>",
                    "torn last line: not complete JSON and no final newline (a crashed writer?)",
                )
                break
            _check_line(file, body, number, problems, with_checksum, without_checksum, run_set_ids)
    if with_checksum.count and without_checksum.count:
        for line in without_checksum.first:
            _add(
                problems,
                file,
                line,
                CHECKSUM_FIELD,
                f"no checksum, but {with_checksum.count} other line(s) of this file have one: "
                "a line of a checksummed file was replaced or its checksum removed",
            )
        problems.total += without_checksum.count - len(without_checksum.first)
    problems.raise_if_any()
    lines = _record_lines(number, blank)
    status: ChecksumStatus = "empty" if not lines else "verified" if with_checksum.count else "none"
    return JsonlCheck(
        path=str(file),
        digest="sha256:" + digest.hexdigest(),
        size=size,
        n_records=len(lines),
        checksums=status,
        run_set_ids=frozenset(run_set_ids),
        lines=lines,
    )


def _record_lines(n_lines: int, blank: list[int]) -> Sequence[int]:
    """The line of each record: every line but the blank ones (8 bytes a record only when some are blank)."""
    if not blank:
        return range(1, n_lines + 1)
    skipped = set(blank)
    return array("q", (n for n in range(1, n_lines + 1) if n not in skipped))


def _check_line(
    file: Path,
    body: bytes,
    number: int,
    problems: ProblemList,
    with_checksum: _LineSample,
    without_checksum: _LineSample,
    run_set_ids: set[str],
) -> None:
    record, bad = decode_line(body)
    if bad is not None or record is None:
        _add(problems, file, number, bad.field if bad else "<line>", bad.message if bad else "not a JSON object")
        return
    checksum = record.get(CHECKSUM_FIELD)
    violations = validate_record(record)
    for v in violations:
        _add(problems, file, number, v.field, v.message)
    if checksum is None:
        without_checksum.append(number)
    elif not violations or all(v.field != CHECKSUM_FIELD for v in violations):
        with_checksum.append(number)
        if checksum != record_checksum(record):
            _add(
                problems,
                file,
                number,
                CHECKSUM_FIELD,
                "checksum does not match the line: the record was changed after it was written",
            )
    run_set = record.get("run_set_id")
    if isinstance(run_set, str):
        run_set_ids.add(run_set)
