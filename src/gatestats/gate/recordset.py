"""A record set as the gate reads it: a run set directory (manifest + records) or record files.

The gate binds what it read by digest: each record file's SHA-256 and one digest over them, so
the verdict names exactly the bytes it decided on (and ``gatestats report`` can refuse records
that changed since).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

from gatestats._digest import digest_file, digest_json
from gatestats.errors import RecordFileError
from gatestats.records import load_records
from gatestats.records.contract import POLARS_SCHEMA

__all__ = ["MANIFEST", "RECORDS", "RecordFileDigest", "RecordSet", "load_record_set"]

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordFileDigest:
    """A record file and the SHA-256 of its bytes."""

    path: str
    digest: str
    size: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {"path": self.path, "digest": self.digest, "size": self.size}


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

    @property
    def n_records(self) -> int:
        """Number of records (trial attempts)."""
        return self.records.height

    def to_dict(self) -> dict[str, Any]:
        """Provenance of the record set as bound into a verdict."""
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
        }


def _set_digest(files: Sequence[RecordFileDigest]) -> str:
    return digest_json(sorted([Path(f.path).name, f.digest] for f in files))


def load_record_set(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> RecordSet:
    """Read one side of a gate: a run set directory, or one or more record files.

    A directory must hold ``manifest.json`` and ``records.jsonl`` (as written by ``gatestats run``
    or by an import with ``--run-set``); its records are validated like every record file. An empty
    ``records.jsonl`` gives a record set with no records (the gate answers insufficient evidence).

    Raises
    ------
    RecordFileError
        A file is missing or damaged, or records break the contract (file, line and field named).
    """
    items = [Path(paths)] if isinstance(paths, str | os.PathLike) else [Path(p) for p in paths]
    if not items:
        msg = "no record set given"
        raise ValueError(msg)
    manifest: dict[str, Any] | None = None
    kind: Literal["run_set", "records"] = "records"
    if len(items) == 1 and items[0].is_dir():
        root = items[0]
        manifest = _read_manifest(root / MANIFEST)
        kind = "run_set"
        items = [root / RECORDS]
        if not items[0].exists():
            raise RecordFileError.single(str(items[0]), "(file)", "the run set has no records.jsonl")
    for item in items:
        if not item.is_file():
            raise RecordFileError.single(str(item), "(file)", "no such record file or run set directory")
    files = tuple(RecordFileDigest(path=str(p), digest=digest_file(p), size=p.stat().st_size) for p in items)
    nonempty = [p for p in items if p.stat().st_size > 0]
    records = load_records(nonempty) if nonempty else _empty()
    return RecordSet(
        path=items[0].parent if kind == "run_set" else items[0],
        kind=kind,
        manifest=manifest,
        records=records,
        files=files,
        digest=_set_digest(files),
    )


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordFileError.single(str(path), "(file)", "no run-set manifest (not a run set directory)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordFileError.single(str(path), "(file)", f"unreadable manifest: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != "gatestats-run-set/1":
        raise RecordFileError.single(str(path), "format", "expected a gatestats-run-set/1 manifest")
    return manifest


def _empty() -> pl.DataFrame:
    return pl.DataFrame(schema=POLARS_SCHEMA)
