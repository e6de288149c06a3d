"""A record's evidence files (stdout, stderr, artifacts), read under the gate's containment rule.

The one way any command reads an evidence file a run record names. The path must be relative,
have no ``..`` component and resolve inside the run set (a symlink out is refused): the rule
:func:`gatestats.records.runset.contained` that the gate applies to every record of a run set.
When the record gives the file's digest, the bytes returned are the bytes whose digest was
checked (no window between the check and the read). Read the run set with
:func:`gatestats.records.read_run_set` first (checksums, seal, membership): this reads one file.

See docs/integrity.md ("One door").
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gatestats.errors import RecordFileError, RecordProblem
from gatestats.io.digest import digest_bytes
from gatestats.records.io import relocate_problems
from gatestats.records.runset import RECORDS, contained, named_evidence

__all__ = ["evidence_file", "read_record_evidence"]

#: The largest evidence file read into memory (the runner caps a trial's output far below this).
MAX_EVIDENCE_BYTES = 256 << 20
_FIELD = re.compile(r"stdout_path|stderr_path|artifacts\[(0|[1-9][0-9]*)\]\.path")


def evidence_file(root: str | os.PathLike[str], rel: str) -> Path:
    """The file an evidence path names, checked to lie inside the run set ``root`` (the gate's rule).

    Parameters
    ----------
    root
        The run set directory.
    rel
        An evidence path as a record gives it (``stdout_path``, ``stderr_path``, an artifact's ``path``).

    Returns
    -------
    Path
        The resolved file (it may not exist).

    Raises
    ------
    ValueError
        ``rel`` is absolute, has a ``..`` component or a NUL byte, or resolves outside ``root``
        (through a symlink); the message says which.

    Examples
    --------
    >>> evidence_file("/tmp/run", "/etc/passwd")
    Traceback (most recent call last):
    ...
    ValueError: evidence path '/etc/passwd' is absolute: evidence must be inside the run set
    """
    target, why = contained(Path(root).resolve(), rel)
    if why is not None or target is None:
        raise ValueError(why)
    return target


def read_record_evidence(
    root: str | os.PathLike[str], record: Mapping[str, Any], field: str, *, row: int | None = None
) -> bytes | None:
    """The bytes of the evidence file ``record[field]`` names: inside the run set, with the record's digest.

    Parameters
    ----------
    root
        The run set directory the record was read from (by :func:`gatestats.records.read_run_set`).
    record
        The record, as a mapping (a row of the run set's frame).
    field
        ``stdout_path``, ``stderr_path`` or ``artifacts[i].path``.
    row
        The record's row in the frame (0-based), to name its line of ``records.jsonl`` in an error.

    Returns
    -------
    bytes or None
        The file's bytes; None when the record names no such file (the field is null, no such artifact).

    Raises
    ------
    RecordFileError
        The path is absolute, climbs out with ``..``, resolves outside the run set, names no regular
        file, is too large, or the bytes read do not have the record's digest (file, line and field named).
    ValueError
        ``field`` is not an evidence path field.
    """
    if not _FIELD.fullmatch(field):
        msg = f"field: expected stdout_path, stderr_path or artifacts[i].path (got {field!r})"
        raise ValueError(msg)
    named = {path: (digest_field, rel, digest) for path, digest_field, rel, digest in named_evidence(record)}
    digest_field, rel, digest = named.get(field, (field, None, None))
    if rel is None:
        return None
    target, why = contained(Path(root).resolve(), rel)
    data: bytes | None = None
    if target is not None:
        why, data = _read(target, rel)
    if data is not None and digest is not None and digest_bytes(data) != digest:
        why, field = (
            (
                f"evidence file {rel} was changed after the run (its digest is {digest_bytes(data)}, "
                f"the record says {digest})"
            ),
            digest_field,
        )
    if why is not None or data is None:
        problem = RecordProblem(file=str(Path(root) / RECORDS), row=row, field=field, message=str(why))
        raise RecordFileError(relocate_problems([problem]))
    return data


def _read(target: Path, rel: str) -> tuple[str | None, bytes | None]:
    """The bytes of a contained evidence file, or why there are none (missing, not a regular file, too large)."""
    if not target.is_file():
        return f"evidence file {rel} is missing (or is not a regular file)", None
    try:
        with target.open("rb") as handle:
            data = handle.read(MAX_EVIDENCE_BYTES + 1)
    except OSError as exc:
        return f"evidence file {rel} is unreadable: {exc.strerror or exc}", None
    if len(data) > MAX_EVIDENCE_BYTES:
        return f"evidence file {rel} is larger than {MAX_EVIDENCE_BYTES} bytes", None
    return None, data
