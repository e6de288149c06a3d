"""The run set's file format: manifest, append-only records and evidence, read and written line by line.

Not to be confused with :mod:`gatestats_runner.runset` (decides and runs the trials that append here)
or :mod:`gatestats_runner.runsets` (the public API for other owners, built on this module).

::

    RUN_SET_DIR/
      manifest.json        run set id, case-set version, system digest and parts, policy digest
                           slot, isolation (what is enforced by which mechanism), sessions,
                           started/finished times, ``complete``
      records.jsonl        one record per trial attempt, appended and fsync'd by the runner only
      candidate/           an immutable copy of the candidate's bytes (what the trials ran)
      trials/CASE/tTTTT-aA/stdout, stderr, artifacts/..., evidence.json

Each line of ``records.jsonl`` is the canonical JSON (sorted keys, compact) of one record whose
``checksum`` field is ``sha256:`` of the canonical JSON of the record without that field. A line
is written with one ``write`` on an ``O_APPEND`` descriptor and fsync'd before the trial counts as
done. A crash can only tear the last line (no trailing newline): it is set aside into
``records.jsonl.torn-N`` with a warning and never parsed. A damaged line anywhere else, a checksum
mismatch or a duplicate trial attempt is an error: the run set is not silently repaired.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from gatestats_runner import contract
from gatestats_runner._util import (
    atomic_write_json,
    fsync_dir,
    read_json_file,
    set_aside_tail,
    write_all,
)
from gatestats_runner.contract import RunRecord
from gatestats_runner.digests import canonical_json, digest_bytes, digest_file, digest_json

__all__ = [
    "CHECKSUM_FIELD",
    "MANIFEST",
    "RECORDS",
    "TRIALS",
    "RecordFile",
    "RecordWriter",
    "RunSetError",
    "RunSetLock",
    "TornLineWarning",
    "encode_record",
    "read_manifest",
    "read_records",
    "record_checksum",
    "seal_records",
    "write_manifest",
]

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
TRIALS = "trials"
LOCK = ".lock"
CHECKSUM_FIELD = "checksum"
MANIFEST_FORMAT = "gatestats-run-set/1"
#: :data:`~gatestats_runner.contract.OBSERVATION_FIELDS` as a set: one lookup per null field of every line written.
_OBSERVATION_FIELDS = frozenset(contract.OBSERVATION_FIELDS)
#: The checksum's name in a line, as canonical JSON writes a key.
_CHECKSUM_KEY = canonical_json(CHECKSUM_FIELD) + ":"


class RunSetError(ValueError):
    """The run set directory is unusable: damaged records, a mismatch on resume, a lock held elsewhere."""


class TornLineWarning(UserWarning):
    """The last line of records.jsonl was torn by a crash; it was set aside, not parsed."""


def record_checksum(record: Mapping[str, object]) -> str:
    """``sha256:`` of the canonical JSON of ``record`` without its checksum field.

    Parameters
    ----------
    record
        A record (its ``checksum`` field, if any, is left out).

    Returns
    -------
    str
        ``sha256:`` and 64 hex digits.
    """
    return digest_json({k: v for k, v in record.items() if k != CHECKSUM_FIELD})


def _violations(record: Mapping[str, object]) -> list[str]:
    body = record if CHECKSUM_FIELD in contract.FIELDS else {k: v for k, v in record.items() if k != CHECKSUM_FIELD}
    return [str(v) for v in contract.validate_record(body)]


def encode_record(record: Mapping[str, object]) -> bytes:
    """Validate ``record`` against the contract and return its line (with checksum and newline).

    Parameters
    ----------
    record
        The record, without its checksum. A null observation field
        (:data:`~gatestats_runner.contract.OBSERVATION_FIELDS`: ``stage``, ``cohort``, ...) is
        left out of the line, so that a record without them keeps the bytes and the checksum it
        had before the contract gained them.

    Returns
    -------
    bytes
        Its canonical JSON with the checksum added, and a newline.

    Raises
    ------
    RunSetError
        The record breaks the run-record contract (a runner bug: nothing is written).
    """
    body = {k: v for k, v in record.items() if k != CHECKSUM_FIELD and not (v is None and k in _OBSERVATION_FIELDS)}
    problems = _violations(body)
    if problems:
        msg = f"record {body.get('record_id')!r} breaks the run-record contract: " + "; ".join(problems)
        raise RunSetError(msg)
    return _checksummed_line(body)


def _checksummed_line(body: Mapping[str, object]) -> bytes:
    """The canonical JSON of ``body`` (string keys, no checksum) with its checksum added, and a newline.

    One canonical encoding, not two: canonical JSON sorts the keys, so the line is the canonical JSON of the fields
    before the checksum's name, the checksum, and the canonical JSON of the fields after it; the checksum is over
    the two halves joined without it, which is ``canonical_json(body)``: :func:`record_checksum`'s digest (its
    ``digest_json``), asserted on every line by tests/runner/test_encode_record_oracle.py.
    """
    before = canonical_json({k: v for k, v in body.items() if k < CHECKSUM_FIELD})[:-1]
    after = canonical_json({k: v for k, v in body.items() if k > CHECKSUM_FIELD})[1:]
    joint = "," if len(before) > 1 and len(after) > 1 else ""
    checksum = digest_bytes((before + joint + after).encode("utf-8"))
    mid = f'{"," if len(before) > 1 else ""}{_CHECKSUM_KEY}"{checksum}"'  # sha256: and hex: nothing to escape
    return (before + mid + ("," if len(after) > 1 else "") + after + "\n").encode("utf-8")


@dataclass(slots=True, kw_only=True)
class RecordFile:
    """The records of a run set as read back, and a torn last line if one was set aside."""

    records: list[RunRecord] = field(default_factory=list)
    torn_path: Path | None = None
    torn_bytes: int = 0


def read_records(path: Path, *, set_aside_torn: bool = True) -> RecordFile:
    """Read and check every line of ``records.jsonl``.

    A last line without its newline (a crash mid-write) is moved to ``records.jsonl.torn-N``
    (when ``set_aside_torn``) and a :class:`TornLineWarning` is issued; it is never parsed.

    Parameters
    ----------
    path
        The ``records.jsonl`` file (a missing file holds no records).
    set_aside_torn
        Move a torn last line aside (the runner, resuming); False only reads past it.

    Returns
    -------
    RecordFile
        The records in file order, and the torn line's size and new path, if any.

    Raises
    ------
    RunSetError
        A complete line that is not JSON, fails its checksum or the contract, or repeats a trial
        attempt; the message names the file and line.
    """
    result = RecordFile()
    if not path.exists():
        return result
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    if cut < len(data):
        torn = data[cut:]
        result.torn_bytes = len(torn)
        if set_aside_torn:
            result.torn_path = set_aside_tail(path, cut, torn)
        warnings.warn(
            f"{path}: the last line ({len(torn)} bytes, no newline) was torn by a crash and set aside"
            + (f" in {result.torn_path.name}" if result.torn_path else "")
            + "; it was not parsed",
            TornLineWarning,
            stacklevel=2,
        )
        data = data[:cut]
    seen: dict[tuple[Any, ...], int] = {}
    for lineno, raw in enumerate(data.splitlines(), start=1):
        where = f"{path}:{lineno}"
        record, bad = contract.decode_line(raw)
        if record is None:
            msg = f"{where}: not a JSON record ({bad}); the run set is damaged"
            raise RunSetError(msg)
        if record.get(CHECKSUM_FIELD) != record_checksum(record):
            msg = f"{where}: checksum mismatch (field '{CHECKSUM_FIELD}'); the run set is damaged"
            raise RunSetError(msg)
        problems = _violations(record)
        if problems:
            msg = f"{where}: " + "; ".join(problems)
            raise RunSetError(msg)
        key = (record["case_id"], record["trial"], record["attempt"])
        if key in seen:
            msg = f"{where}: duplicate of line {seen[key]} (case_id, trial, attempt) = {key}"
            raise RunSetError(msg)
        seen[key] = lineno
        result.records.append(cast(RunRecord, record))  # checked against the contract above
    return result


class RecordWriter:
    """Appends records to ``records.jsonl``: one write per line, fsync'd, serialised between threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        existed = path.exists()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        if not existed:
            fsync_dir(path.parent)
        self._lock = threading.Lock()

    def append(self, record: RunRecord) -> RunRecord:
        """Validate, checksum, write and fsync one record; return it as written.

        Parameters
        ----------
        record
            A record without its checksum; one that breaks the contract writes nothing
            (:func:`encode_record` raises).

        Returns
        -------
        dict
            The record with its checksum.
        """
        line = encode_record(record)
        with self._lock:
            write_all(self._fd, line)
            os.fsync(self._fd)
        written: RunRecord = json.loads(line)
        return written

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


class RunSetLock:
    """An exclusive lock on the run set for the duration of one runner (``flock``; released by a crash)."""

    def __init__(self, root: Path) -> None:
        self._fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            msg = f"{root}: another runner is using this run set"
            raise RunSetError(msg) from None

    def release(self) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)


def read_manifest(root: Path) -> dict[str, Any]:
    """The run set's manifest.

    Parameters
    ----------
    root
        The run set directory.

    Returns
    -------
    dict
        The manifest as written.

    Raises
    ------
    RunSetError
        There is no manifest, or it is not a gatestats run-set manifest.
    """
    path = root / MANIFEST
    manifest = read_json_file(path, RunSetError, missing="no run-set manifest (not a run set directory)")
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        msg = f"{path}: field 'format': expected {MANIFEST_FORMAT!r}"
        raise RunSetError(msg)
    return manifest


class RecordsSeal(TypedDict):
    """The seal of ``records.jsonl`` (:func:`seal_records`): its bytes' digest (``None``: no file), size, lines."""

    digest: str | None
    bytes: int
    lines: int


def seal_records(root: Path) -> RecordsSeal:
    """The seal of ``records.jsonl`` as it is now: its bytes' digest, its size and its number of lines.

    The runner writes it into the manifest (``records_seal``) whenever a session ends, so a reader can
    tell that the records the manifest describes are the ones on disk: a line removed, reordered,
    added or edited (even with its checksum recomputed) changes the digest. It does not protect
    against someone who rewrites the manifest too; see docs/integrity.md.

    Parameters
    ----------
    root
        As in :func:`read_manifest`.

    Returns
    -------
    dict
        ``{"digest": "sha256:...", "bytes": N, "lines": N}`` (digest ``None`` when there is no file).
    """
    path = root / RECORDS
    if not path.exists():
        return {"digest": None, "bytes": 0, "lines": 0}
    with path.open("rb") as handle:
        lines = sum(1 for _ in handle)
    return {"digest": digest_file(path), "bytes": path.stat().st_size, "lines": lines}


def write_manifest(root: Path, manifest: Mapping[str, object]) -> None:
    """Replace the manifest atomically (temporary file, fsync, rename).

    Parameters
    ----------
    root
        The run set directory.
    manifest
        The whole manifest.
    """
    atomic_write_json(root / MANIFEST, {"format": MANIFEST_FORMAT, **manifest})
