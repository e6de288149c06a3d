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

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

from gatestats._digest import digest_file, digest_json
from gatestats.errors import RecordFileError, RecordProblem
from gatestats.records import load_record_files
from gatestats.records.contract import POLARS_SCHEMA
from gatestats.records.io import RecordFileInfo, relocate_problems
from gatestats_runner.contract import decode_json

__all__ = ["MANIFEST", "RECORDS", "Checksums", "RecordFileDigest", "RecordSet", "load_record_set"]

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
MANIFEST_FORMAT = "gatestats-run-set/1"
#: The largest manifest the gate reads (a manifest lists cases, not records).
MAX_MANIFEST_BYTES = 64 << 20
_SHOWN = 50

#: ``verified``: every record carries a checksum that matched its line; ``none``: some records carry
#: none (records from another tool); ``empty``: no record.
Checksums = Literal["verified", "none", "empty"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordFileDigest:
    """A record file, the SHA-256 of its bytes, and whether its lines carried verified checksums."""

    path: str
    digest: str
    size: int
    checksums: str = "none"
    n_records: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {
            "path": self.path,
            "digest": self.digest,
            "size": self.size,
            "checksums": self.checksums,
            "n_records": self.n_records,
        }


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
            "checksums": self.checksums,
            "records_seal": manifest.get("records_seal"),
            "imported_from": manifest.get("source"),
            "imported_source_digest": manifest.get("source_digest"),
            "imported_by": manifest.get("imported_by"),
            "imported_at": manifest.get("imported_at"),
        }


def _set_digest(files: Sequence[RecordFileDigest]) -> str:
    return digest_json(sorted([Path(f.path).name, f.digest] for f in files))


def load_record_set(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> RecordSet:
    """Read one side of a gate: a run set directory, or one or more record files.

    A directory must hold ``manifest.json``; its ``records.jsonl`` is read strictly and checked
    against the manifest (see the module docstring). A run set that was prepared but never ran
    (no ``records.jsonl``, or an empty one) gives a record set with no records: the gate answers
    insufficient evidence.

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
        records=records,
        files=files,
        digest=_set_digest(files),
        checksums=_overall(infos),
    )


def _file_digest(info: RecordFileInfo) -> RecordFileDigest:
    return RecordFileDigest(
        path=info.path, digest=info.digest, size=info.size, checksums=info.checksums, n_records=info.n_records
    )


def _overall(infos: Sequence[RecordFileInfo]) -> Checksums:
    if all(i.checksums == "empty" for i in infos):
        return "empty"
    return "none" if any(i.checksums == "none" for i in infos) else "verified"


def _load_run_set(root: Path) -> RecordSet:
    manifest = read_run_set_manifest(root / MANIFEST)
    path = root / RECORDS
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise RecordFileError.single(path, "<file>", "records.jsonl must be a regular file inside the run set")
    if path.exists():
        records, (info,) = load_record_files([path])
    else:  # prepared (``run --prepare``) and never run: no evidence, not an error
        records = pl.DataFrame(schema=POLARS_SCHEMA)
        info = RecordFileInfo(
            path=str(path),
            format="jsonl",
            digest=digest_file(os.devnull),
            size=0,
            n_records=0,
            checksums="empty",
            run_set_ids=(),
        )
    origin = str(manifest.get("origin", "runner"))
    problems = _seal_problems(root, manifest, info)
    if origin == "runner" and info.checksums == "none":
        problems.append(
            RecordProblem(
                file=str(path),
                line=1,
                field="checksum",
                message="a run set written by the runner carries a checksum on every line; these lines have none",
            )
        )
    problems += _membership_problems(path, manifest, records)
    if origin == "runner":
        problems += _evidence_problems(root, path, records)
    if problems:
        raise RecordFileError(problems[:_SHOWN], total=len(problems))
    files = (_file_digest(info),) if path.exists() else ()
    return RecordSet(
        path=root,
        kind="run_set",
        manifest=manifest,
        records=records,
        files=files,
        digest=_set_digest(files),
        checksums=_overall([info]),
    )


def read_run_set_manifest(path: Path) -> dict[str, Any]:
    """A run set's manifest, read strictly (duplicate keys, NaN, wrong types refused with the field).

    Raises
    ------
    RecordFileError
        The manifest is missing, is not strict JSON, or a field the gate relies on has the wrong type.
    """
    if path.exists() and not path.is_file():  # a FIFO or a device would block or never end
        raise RecordFileError.single(path, "<file>", "the manifest must be a regular file")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RecordFileError.single(path, "<file>", "no run-set manifest (not a run set directory)") from None
    except OSError as exc:
        raise RecordFileError.single(path, "<file>", f"unreadable manifest: {exc.strerror or exc}") from None
    manifest, bad = decode_json(raw, max_bytes=MAX_MANIFEST_BYTES)
    if bad is not None:
        raise RecordFileError.single(path, bad.field, bad.message)
    if not isinstance(manifest, dict):
        raise RecordFileError.single(path, "<file>", f"expected a JSON object (got {type(manifest).__name__})")
    if manifest.get("format") != MANIFEST_FORMAT:
        raise RecordFileError.single(path, "format", f"expected {MANIFEST_FORMAT!r} (got {manifest.get('format')!r})")
    problems = [RecordProblem(file=str(path), field=name, message=why) for name, why in _manifest_shape(manifest)]
    if problems:
        raise RecordFileError(problems)
    return manifest


_OPTIONAL_STRINGS = (
    "run_set_id",
    "system",
    "system_digest",
    "case_set_version",
    "policy_digest",
    "policy_registered_at",
    "policy_name",
    "policy_version",
    "source",
    "source_digest",
    "imported_by",
    "imported_at",
    "error",
)


def _manifest_shape(manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, what is wrong) for the manifest fields the gate reads."""
    out: list[tuple[str, str]] = []

    def kind(value: Any) -> str:
        return type(value).__name__

    for name in _OPTIONAL_STRINGS:
        value = manifest.get(name)
        if value is not None and not isinstance(value, str):
            out.append((name, f"expected a string or null (got {kind(value)})"))
    if manifest.get("origin", "runner") not in {"runner", "import"}:
        out.append(("origin", f"expected 'runner' or 'import' (got {manifest.get('origin')!r})"))
    if not isinstance(manifest.get("complete", False), bool):
        out.append(("complete", f"expected true or false (got {kind(manifest.get('complete'))})"))
    trials = manifest.get("trials")
    if trials is not None and (isinstance(trials, bool) or not isinstance(trials, int) or trials < 0):
        out.append(("trials", f"expected an integer >= 0 (got {trials!r})"))
    cases = manifest.get("cases")
    if cases is not None:
        if not isinstance(cases, list):
            out.append(("cases", f"expected a list (got {kind(cases)})"))
        else:
            for i, case in enumerate(cases):
                if not isinstance(case, dict) or not isinstance(case.get("case_id"), str):
                    out.append((f"cases[{i}].case_id", "expected a string"))
                elif case.get("case_version") is not None and not isinstance(case.get("case_version"), str):
                    out.append((f"cases[{i}].case_version", "expected a string or null"))
    digests = manifest.get("candidate_case_digests")
    if digests is not None and (not isinstance(digests, dict) or not all(isinstance(v, str) for v in digests.values())):
        out.append(("candidate_case_digests", "expected an object of strings"))
    seal = manifest.get("records_seal")
    if seal is not None:
        if not isinstance(seal, dict):
            out.append(("records_seal", f"expected an object (got {kind(seal)})"))
        else:
            if seal.get("digest") is not None and not isinstance(seal.get("digest"), str):
                out.append(("records_seal.digest", "expected a string or null"))
            for name in ("bytes", "lines"):
                value = seal.get(name)
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    out.append((f"records_seal.{name}", f"expected an integer >= 0 (got {value!r})"))
    return out


def _prefix_digest(path: Path, size: int) -> str:
    digest = hashlib.sha256()
    remaining = size
    with path.open("rb") as handle:
        while remaining > 0:
            chunk = handle.read(min(remaining, 1 << 20))
            if not chunk:
                break
            digest.update(chunk)
            remaining -= len(chunk)
    return "sha256:" + digest.hexdigest()


def _seal_problems(root: Path, manifest: Mapping[str, Any], info: RecordFileInfo) -> list[RecordProblem]:
    seal = manifest.get("records_seal")
    where = str(root / MANIFEST)
    if seal is None:
        if manifest.get("complete") is True:
            why = (
                "a complete run set seals its records (digest, size, lines of records.jsonl); this one has no seal, "
                "so nothing shows its records are the ones that ran"
            )
            return [RecordProblem(file=where, field="records_seal", message=why)]
        return []
    sealed_bytes = int(seal["bytes"])
    path = root / RECORDS
    if manifest.get("complete") is True:
        if info.size != sealed_bytes or (info.size > 0 and info.digest != seal.get("digest")):
            why = (
                f"records.jsonl is not the file the run set sealed ({sealed_bytes} bytes, {seal.get('lines')} lines, "
                f"{seal.get('digest')}; found {info.size} bytes, {info.digest}): records were edited, removed, "
                "reordered or added after the run"
            )
            return [RecordProblem(file=str(path), field="records_seal", message=why)]
        return []
    if sealed_bytes == 0:
        return []
    if info.size < sealed_bytes or _prefix_digest(path, sealed_bytes) != seal.get("digest"):
        why = (
            f"the first {sealed_bytes} bytes of records.jsonl are not the ones the last session sealed "
            f"({seal.get('digest')}): records written before the interruption were changed"
        )
        return [RecordProblem(file=str(path), field="records_seal", message=why)]
    return []


def _membership_problems(path: Path, manifest: Mapping[str, Any], records: pl.DataFrame) -> list[RecordProblem]:
    """Records that are not this run set's: another run set's id, system, case version or candidate."""
    if records.height == 0:
        return []
    indexed = records.with_row_index("__row")
    problems: list[RecordProblem] = []

    def refuse(mask: pl.Expr, field: str, why: str) -> None:
        for row in indexed.filter(mask).head(_SHOWN).iter_rows(named=True):
            problems.append(
                RecordProblem(file=str(path), row=int(row["__row"]), field=field, message=why.format(**row))
            )

    ids = _listed(manifest.get("run_set_id"))
    if ids is not None:
        refuse(~pl.col("run_set_id").is_in(ids), "run_set_id", "{run_set_id!r} is not this run set's (copied in?)")
    systems = _listed(manifest.get("system"))
    if systems is not None:
        refuse(~pl.col("system").is_in(systems), "system", "{system!r} is not the run set's system")
    if isinstance(manifest.get("system_digest"), str):
        refuse(
            pl.col("system_digest").ne_missing(manifest["system_digest"]),
            "system_digest",
            "{system_digest!r} is not the run set's system digest",
        )
    cases = manifest.get("cases")
    if isinstance(cases, list) and cases:
        table = pl.DataFrame(
            {"case_id": [c["case_id"] for c in cases], "__version": [c.get("case_version") for c in cases]},
            schema={"case_id": pl.String, "__version": pl.String},
        ).unique("case_id", keep="first")
        joined = indexed.join(table, on="case_id", how="left")
        unknown = joined.filter(~pl.col("case_id").is_in(table["case_id"].implode()))
        for row in unknown.head(_SHOWN).iter_rows(named=True):
            problems.append(
                RecordProblem(
                    file=str(path),
                    row=int(row["__row"]),
                    field="case_id",
                    message=f"{row['case_id']!r} is not a case of the run set's manifest",
                )
            )
        wrong = joined.filter(
            pl.col("case_id").is_in(table["case_id"].implode()) & pl.col("case_version").ne_missing(pl.col("__version"))
        )
        for row in wrong.head(_SHOWN).iter_rows(named=True):
            problems.append(
                RecordProblem(
                    file=str(path),
                    row=int(row["__row"]),
                    field="case_version",
                    message=f"{row['case_version']!r} is not the manifest's version of {row['case_id']!r} "
                    f"({row['__version']!r})",
                )
            )
    digests = manifest.get("candidate_case_digests")
    if isinstance(digests, dict) and digests:
        expected = pl.col("case_id").replace_strict(digests, default=None, return_dtype=pl.String)
        refuse(
            pl.col("candidate_digest").ne_missing(expected),
            "candidate_digest",
            "{candidate_digest!r} is not the digest of the candidate the run set copied for {case_id!r}",
        )
    trials = manifest.get("trials")
    if isinstance(trials, int) and not isinstance(trials, bool) and manifest.get("origin", "runner") == "runner":
        refuse(pl.col("trial") >= trials, "trial", "trial {trial} is beyond the run set's " + f"{trials} trials")
    return relocate_problems(problems)


def _listed(value: Any) -> list[str] | None:
    """A manifest's run set id or system: one value, or several joined by commas (an import)."""
    if not isinstance(value, str) or not value:
        return None
    return value.split(",")


def _evidence_problems(root: Path, path: Path, records: pl.DataFrame) -> list[RecordProblem]:
    """Every evidence file a runner record names is inside the run set and has the record's digest."""
    problems: list[RecordProblem] = []
    base = root.resolve()
    columns = ["stdout_path", "stdout_digest", "stderr_path", "stderr_digest", "artifacts"]
    for row, (out_path, out_digest, err_path, err_digest, artifacts) in enumerate(records.select(columns).iter_rows()):
        named: list[tuple[str, str | None, str | None]] = [
            ("stdout_digest", out_path, out_digest),
            ("stderr_digest", err_path, err_digest),
        ]
        named += [(f"artifacts[{i}].digest", a.get("path"), a.get("digest")) for i, a in enumerate(artifacts or [])]
        for field_name, rel, digest in named:
            if rel is None or digest is None:
                continue
            why = _evidence_mismatch(base, rel, digest)
            if why is not None:
                problems.append(RecordProblem(file=str(path), row=row, field=field_name, message=why))
    return relocate_problems(problems)


def _evidence_mismatch(base: Path, rel: str, digest: str) -> str | None:
    target = (base / rel).resolve()
    if not target.is_relative_to(base):
        return f"evidence path {rel!r} points outside the run set"
    if not target.is_file():
        return f"evidence file {rel} is missing"
    found = digest_file(target)
    if found != digest:
        return f"evidence file {rel} was changed after the run (its digest is {found}, the record says {digest})"
    return None
