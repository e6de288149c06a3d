"""A record set as the gate reads it: a run set directory (manifest + records) or record files.

The gate binds what it read by digest: each record file's SHA-256 and one digest over them, so
the verdict names exactly the bytes it decided on (and ``gatestats report`` can refuse records
that changed since).

Integrity (see docs/integrity.md for what is and is not protected). Every record file is read by
the strict reader, which verifies the runner's per-line checksums. A run set directory is checked
further, and any mismatch is a :class:`~gatestats.errors.RecordFileError` naming the file, the line
and the field (the gate then writes no verdict):

- the manifest is strict JSON of the expected shape;
- the records are the ones the manifest sealed (``records_seal``: digest, size and lines of
  ``records.jsonl`` when the last session ended; a complete run set must match it exactly, an
  interrupted one must still begin with the sealed bytes), so a line removed, reordered, copied in
  or edited with its checksum recomputed is refused;
- every record belongs to this run set: its ``run_set_id``, system, system digest, case version and
  candidate digest are the manifest's;
- a runner run set carries a checksum on every line, and every evidence file a record names
  (stdout, stderr, artifacts) is inside the run set and has the digest the record gives.

Records without checksums (record files from other tools) are read, and marked as such
(``checksums: "none"``): the policy's ``require_checksums`` decides whether the gate accepts them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

from gatestats._typing import JSONObject
from gatestats.errors import RecordFileError
from gatestats.gate._typed import to_json
from gatestats.io.digest import digest_json
from gatestats.records import POLARS_SCHEMA, load_record_files, read_run_set
from gatestats.records.io import RecordFileInfo
from gatestats.records.runset import MANIFEST, RECORDS, read_run_set_manifest

__all__ = [
    "MANIFEST",
    "RECORDS",
    "Checksums",
    "RecordFileDigest",
    "RecordSet",
    "load_record_set",
    "read_run_set_manifest",
]


#: ``verified``: every record carries a checksum that matched its line; ``none``: some records carry
#: none (records from another tool); ``empty``: no record.
Checksums = Literal["verified", "none", "empty"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordFileDigest:
    """A record file, the SHA-256 of its bytes, and whether its lines carried verified checksums."""

    path: str
    digest: str
    size: int
    checksums: Checksums = "none"
    n_records: int = 0

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping.

        Returns
        -------
        JSONObject
            ``path``, ``digest``, ``size``, ``checksums`` and ``n_records``, in this order.
        """
        data: JSONObject = to_json(self)
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordSet:
    """Records of one side of a gate, with the manifest when they come from a run set.

    ``digest`` is ``sha256:`` over the sorted ``(path name, file digest)`` pairs.
    """

    path: Path
    kind: Literal["run_set", "records"]
    manifest: Mapping[str, Any] | None
    records: pl.DataFrame = field(repr=False)
    files: tuple[RecordFileDigest, ...]
    digest: str
    checksums: Checksums = "none"

    @property
    def n_records(self) -> int:
        """Number of records (trial attempts)."""
        return self.records.height

    @property
    def origin(self) -> str:
        """``runner`` or ``import`` for a run set; ``record files`` otherwise."""
        if self.manifest is None:
            return "record files"
        return str(self.manifest.get("origin", "runner"))

    def to_dict(self) -> JSONObject:
        """Provenance of the record set as bound into a verdict.

        Returns
        -------
        JSONObject
            Path, kind, digests, files and manifest facts as JSON values.
        """
        manifest = self.manifest or {}
        return {
            "path": str(self.path),
            "kind": self.kind,
            "digest": self.digest,
            "files": [f.to_dict() for f in self.files],
            "n_records": self.n_records,
            "run_set_id": manifest.get("run_set_id"),
            "complete": manifest.get("complete"),
            "case_set_version": manifest.get("case_set_version"),
            "trials": manifest.get("trials"),
            "policy_digest": manifest.get("policy_digest"),
            "policy_registered_at": manifest.get("policy_registered_at"),
            "origin": manifest.get("origin", "runner" if self.kind == "run_set" else None),
            "checksums": self.checksums,
            "records_seal": manifest.get("records_seal"),
            "imported_from": manifest.get("source"),
            "imported_source_digest": manifest.get("source_digest"),
            "imported_by": manifest.get("imported_by"),
            "imported_at": manifest.get("imported_at"),
        }


#: The record columns the gate keeps: every contract column but the line ``checksum``
#: (verified on every line as the records are read; nothing decides on it, and at 64 hex digits a
#: record it would be the largest column held).
_KEPT = tuple(name for name in POLARS_SCHEMA if name != "checksum")


def _set_digest(files: Sequence[RecordFileDigest]) -> str:
    return digest_json(sorted([Path(f.path).name, f.digest] for f in files))


def load_record_set(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> RecordSet:
    """Read one side of a gate: a run set directory, or one or more record files.

    A directory must hold ``manifest.json``; its ``records.jsonl`` is read strictly and checked
    against the manifest (see the module docstring). A run set that was prepared but never ran
    (no ``records.jsonl``, or an empty one) gives a record set with no records: the gate answers
    insufficient evidence.

    Parameters
    ----------
    paths
        A run set directory, or one or more record files (``.jsonl``).

    Returns
    -------
    RecordSet
        The records with their provenance (digests, checksums, manifest).

    Raises
    ------
    RecordFileError
        A file is missing or damaged, records break the contract, a checksum does not match its
        line, or the records are not the ones the manifest describes (file, line and field named).
    """
    items = [Path(paths)] if isinstance(paths, str | os.PathLike) else [Path(p) for p in paths]
    if not items:
        msg = "no record set given"
        raise ValueError(msg)
    if len(items) == 1 and items[0].is_dir():
        return _load_run_set(items[0])
    for item in items:
        if not item.is_file():
            raise RecordFileError.single(str(item), "<file>", "no such record file or run set directory")
    records, infos = load_record_files(items)
    files = tuple(_file_digest(info) for info in infos)
    return RecordSet(
        path=items[0],
        kind="records",
        manifest=None,
        records=_compact(records.select(_KEPT)),
        files=files,
        digest=_set_digest(files),
        checksums=_overall(infos),
    )


#: The types a column kept as one value may have (a list, struct or time column is kept as read unless null).
_SCALAR_TYPES = (pl.String, pl.Int64, pl.Float64, pl.Boolean)


def _compact(records: pl.DataFrame) -> pl.DataFrame:
    """``records`` as one chunk per column, a column with one value on every record kept as that value once.

    The same frame (schema, values, order), held compactly: a record file read in pieces gives
    columns of hundreds of chunks, which every later filter, join and window pays for again (a
    gate on 300k records spent about 3x the CPU and 4x the memory), and the contract's ~30 columns
    a runner leaves null (costs, review, lineage) cost a 16-byte view or a value per record each
    (about 1.2 of the 1.6 KiB a record took). Such a column becomes a constant (a polars scalar
    column, materialised only where an operation needs it).
    """
    if records.height == 0:
        return records
    schema = records.schema  # built anew at every access (~0.1 ms for the contract's columns)
    constant = records.select(
        (pl.col(c).is_null().all() | (pl.col(c).null_count() == 0) & (pl.col(c).n_unique() == 1)).alias(c)
        for c, dtype in schema.items()
        if dtype in _SCALAR_TYPES
    ).row(0, named=True)
    nulls = [c for c in records.columns if records.get_column(c).null_count() == records.height]
    fixed = {c: records.get_column(c).head(1) for c, one in constant.items() if one and c not in nulls}
    return records.with_columns(
        *(pl.lit(None, dtype=schema[c]).alias(c) for c in nulls),
        *(pl.lit(value.item(), dtype=value.dtype).alias(c) for c, value in fixed.items()),
    ).rechunk()


def _file_digest(info: RecordFileInfo) -> RecordFileDigest:
    return RecordFileDigest(
        path=info.path, digest=info.digest, size=info.size, checksums=info.checksums, n_records=info.n_records
    )


def _overall(infos: Sequence[RecordFileInfo]) -> Checksums:
    if all(i.checksums == "empty" for i in infos):
        return "empty"
    return "none" if any(i.checksums == "none" for i in infos) else "verified"


def _load_run_set(root: Path) -> RecordSet:
    # compacted as it is read (records.batched: the columns of one value, floats too, held once),
    # so not again here: a second pass counted the distinct values of every column of every record
    records, info = read_run_set(root, columns=_KEPT, compact=True)
    manifest = info.manifest if info.manifest is not None else {}
    files = (_file_digest(info),) if info.size > 0 or (root / RECORDS).exists() else ()
    return RecordSet(
        path=root,
        kind="run_set",
        manifest=manifest,
        records=records,
        files=files,
        digest=_set_digest(files),
        checksums=_overall([info]),
    )
