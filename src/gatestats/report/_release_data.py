"""The data of a release report: the verdict checked, its records re-digested, ``data/`` written.

Everything here except :func:`write_data` runs before anything is written (:func:`read_verdict`,
:func:`check_record_files`, :func:`load_sides`; the tables come from
:mod:`gatestats.report._release_tables`). :func:`write_data` writes ``data/`` with fixed settings:
Parquet (zstd level 3, statistics on, polars' own writer) for the tables, sorted keys and two-space
indentation for JSON. The same inputs and the same polars version give byte-identical files
(polars writes its version into the Parquet footer).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import polars as pl

from gatestats._digest import digest_bytes, digest_file
from gatestats.errors import GatestatsError, RecordFileError
from gatestats.gate import VERDICT_FORMAT, RecordSet, load_record_set, verdict_digest
from gatestats.jsonfile import parse_json_document, read_regular_file

__all__ = [
    "DATA_FORMAT",
    "JSON_FILES",
    "SIDES",
    "TABLES",
    "ReportInputError",
    "VerdictInput",
    "check_record_files",
    "json_bytes",
    "load_sides",
    "parquet_bytes",
    "read_verdict",
    "write_data",
]

#: ``format`` of ``data/digests.json``.
DATA_FORMAT: Final = "gatestats-release-data/1"
SIDES: Final = ("baseline", "candidate")
#: The tables of ``data/`` (one Parquet file each, ``<name>.parquet``).
TABLES: Final = (
    "rules",
    "checks",
    "severe_slices",
    "severe_failures",
    "flips",
    "curves",
    "slices",
    "cost",
    "judges",
    "infra",
    "bounds",
)
#: The JSON files of ``data/`` besides ``digests.json``.
JSON_FILES: Final = ("verdict.json", "provenance.json")
_REQUIRED_KEYS: Final = (
    "verdict",
    "reasons",
    "policy",
    "registration",
    "baseline",
    "candidate",
    "checks",
    "rules",
    "severe_slices",
    "flips",
    "infra",
    "tool_version",
    "created_at",
)
_PARQUET: Final[dict[str, Any]] = {"compression": "zstd", "compression_level": 3, "statistics": True}


#: The largest verdict file read (a verdict of 100,000 cases is far below this).
_MAX_VERDICT_BYTES = 256 << 20


class ReportInputError(GatestatsError, ValueError):
    """The verdict or the records it names cannot make a report; nothing was written."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VerdictInput:
    """A verdict file as read and checked: its bytes, its body and where it is."""

    path: Path
    raw: bytes
    body: Mapping[str, Any]

    @property
    def digest(self) -> str:
        """The verdict's own ``digest`` (checked against its content)."""
        return str(self.body["digest"])


def json_bytes(value: Any) -> bytes:
    """Canonical JSON text of the data files (sorted keys, indent 2, UTF-8, final newline)."""
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def parquet_bytes(frame: pl.DataFrame) -> bytes:
    """A table as Parquet with fixed settings (deterministic for one polars version)."""
    buffer = io.BytesIO()
    frame.write_parquet(buffer, **_PARQUET)
    return buffer.getvalue()


# --- reading and checking -----------------------------------------------------------------------


def read_verdict(path: str | os.PathLike[str]) -> VerdictInput:
    """Read a verdict file and check its format and its own digest.

    Raises
    ------
    ReportInputError
        The file is missing or not JSON, not a ``gatestats-verdict/1`` object, misses a field,
        or its content does not match its ``digest`` (it was edited after it was written).
    """
    file = Path(path)
    try:
        raw = read_regular_file(file, limit=_MAX_VERDICT_BYTES, what="verdict (written by `gatestats gate -o`)")
        body = parse_json_document(raw, source=file)
    except RecordFileError as exc:
        raise ReportInputError(str(exc)) from None
    if not isinstance(body, dict):
        msg = f"{file}: not a verdict file: expected a JSON object (got {type(body).__name__})"
        raise ReportInputError(msg)
    if body.get("format") != VERDICT_FORMAT:
        msg = f"{file}: field 'format': expected {VERDICT_FORMAT!r} (got {body.get('format')!r})"
        raise ReportInputError(msg)
    missing = [key for key in (*_REQUIRED_KEYS, "digest") if key not in body]
    if missing:
        msg = "\n".join(f"{file}: field '{key}': required field is missing" for key in missing)
        raise ReportInputError(msg)
    actual = verdict_digest(body)
    if body["digest"] != actual:
        msg = (
            f"{file}: field 'digest': the verdict's content does not match its digest: expected "
            f"{body['digest']} (stored in the file), got {actual} (recomputed); the verdict was edited after "
            "it was written"
        )
        raise ReportInputError(msg)
    for side in SIDES:
        files = body[side].get("files") if isinstance(body[side], dict) else None
        if not isinstance(files, list) or not files or not all(_file_entry(f) for f in files):
            msg = f"{file}: field '{side}.files': expected a non-empty list of {{path, digest}} (got {files!r})"
            raise ReportInputError(msg)
    return VerdictInput(path=file, raw=raw, body=body)


def _file_entry(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("path"), str) and isinstance(entry.get("digest"), str)


def _resolve(recorded: str, verdict_dir: Path) -> Path:
    """A recorded path: as is when absolute; else relative to the working directory, else to the verdict."""
    path = Path(recorded)
    if path.is_absolute():
        return path
    return path if path.exists() else (verdict_dir / path if (verdict_dir / path).exists() else path)


def check_record_files(verdict: VerdictInput) -> dict[str, tuple[Path, ...]]:
    """Re-digest every record file the verdict names; every missing or changed file is an error.

    Relative paths are looked up in the working directory first, then beside the verdict file
    (the digest decides: a file found elsewhere must still have the bytes the verdict bound).

    Returns
    -------
    dict
        ``side -> record file paths`` as found.

    Raises
    ------
    ReportInputError
        Names each file, the digest the verdict bound (expected) and the one found (actual).
    """
    problems: list[str] = []
    found: dict[str, tuple[Path, ...]] = {}
    for side in SIDES:
        paths = []
        for entry in verdict.body[side]["files"]:
            path = _resolve(entry["path"], verdict.path.parent)
            expected = entry["digest"]
            try:
                actual = digest_file(path)
            except FileNotFoundError:
                problems.append(f"{side} record file {path}: missing (expected {expected}, got no file)")
                continue
            except OSError as exc:
                problems.append(f"{side} record file {path}: unreadable (expected {expected}; {exc.strerror or exc})")
                continue
            if actual != expected:
                problems.append(
                    f"{side} record file {path}: digest mismatch: expected {expected} (bound in the verdict), "
                    f"got {actual}; the records changed after the verdict was made"
                )
            paths.append(path)
        found[side] = tuple(paths)
    if problems:
        msg = f"{verdict.path}: the records no longer match the verdict:\n" + "\n".join(f"  {p}" for p in problems)
        raise ReportInputError(msg)
    return found


def load_sides(verdict: VerdictInput, files: Mapping[str, Sequence[Path]]) -> dict[str, RecordSet]:
    """Load both record sets (:func:`gatestats.gate.load_record_set`) and check they are the bound bytes."""
    sides: dict[str, RecordSet] = {}
    for side in SIDES:
        paths = list(files[side])
        kind = verdict.body[side].get("kind")
        source: Path | list[Path] = paths[0].parent if kind == "run_set" and len(paths) == 1 else paths
        try:
            record_set = load_record_set(source)
        except (GatestatsError, ValueError, OSError) as exc:
            msg = f"{verdict.path}: cannot load the {side} records: {exc}"
            raise ReportInputError(msg) from None
        expected = sorted(f["digest"] for f in verdict.body[side]["files"])
        actual = sorted(f.digest for f in record_set.files)
        if expected != actual:
            msg = (
                f"{verdict.path}: {side} records at {source}: expected the files {expected} bound in the verdict, "
                f"got {actual}"
            )
            raise ReportInputError(msg)
        sides[side] = record_set
    return sides


def write_data(
    directory: Path, verdict: VerdictInput, tables: Mapping[str, pl.DataFrame], provenance: Any
) -> dict[str, str]:
    """Write ``data/``: the verdict copy, the tables, the provenance and ``digests.json``.

    Returns
    -------
    dict
        File name → ``sha256:`` digest of every data file (``digests.json`` excluded).
    """
    directory.mkdir()
    contents: dict[str, bytes] = {"verdict.json": verdict.raw, "provenance.json": json_bytes(provenance)}
    for name in TABLES:
        contents[f"{name}.parquet"] = parquet_bytes(tables[name])
    digests = {name: digest_bytes(data) for name, data in sorted(contents.items())}
    for name, data in contents.items():
        (directory / name).write_bytes(data)
    (directory / "digests.json").write_bytes(json_bytes({"format": DATA_FORMAT, "files": digests}))
    return digests
