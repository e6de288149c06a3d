"""Run set directories as the records layer reads them: the manifest, the seal, membership, evidence.

A run set (``manifest.json`` + ``records.jsonl`` + evidence, written by ``gatestats run`` or by an
import with ``--run-set``) is never read without its manifest. Besides the strict reading of every
record line (:mod:`gatestats.records.lines`), the records must be the ones the manifest describes:

- the manifest is strict JSON of the expected shape (:func:`read_run_set_manifest`);
- ``records_seal`` (digest, size and lines of ``records.jsonl`` when the last session ended): a
  complete run set must match it exactly, an interrupted one must still begin with the sealed bytes;
- every record belongs to this run set: its ``run_set_id``, system, system digest, case version and
  candidate digest are the manifest's;
- a runner run set carries a checksum on every line, and every evidence file a record names is
  inside the run set and has the digest the record gives;
- in a run set of any origin, every evidence path a record names (``stdout_path``, ``stderr_path``,
  ``artifacts[i].path``) is relative, has no ``..`` and resolves inside the run set (a symlink out
  is refused). :mod:`gatestats.records.evidence` reads an evidence file under the same rule.

See docs/integrity.md for what this does and does not protect against.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from gatestats.errors import RecordFileError, RecordProblem
from gatestats.io.digest import digest_file
from gatestats_runner.contract import RFC3339_PATTERN, decode_json

__all__ = [
    "MANIFEST",
    "MANIFEST_FORMAT",
    "MAX_MANIFEST_BYTES",
    "RECORDS",
    "RUN_SET_COLUMNS",
    "contained",
    "named_evidence",
    "read_run_set_manifest",
    "records_end_mid_line",
    "resolved_inside",
    "run_set_problems",
]

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
MANIFEST_FORMAT = "gatestats-run-set/1"
#: The largest manifest read (a manifest lists cases, not records).
MAX_MANIFEST_BYTES = 64 << 20
_SHOWN = 50
#: The evidence a record names: (path field, digest field) pairs; artifacts are ``artifacts[i].path``/``.digest``.
_EVIDENCE_FIELDS = (("stdout_path", "stdout_digest"), ("stderr_path", "stderr_digest"))
#: The record columns :func:`run_set_problems` reads (membership, then the evidence each record names).
RUN_SET_COLUMNS = (
    "run_set_id",
    "system",
    "system_digest",
    "case_id",
    "case_version",
    "candidate_digest",
    "trial",
    *(name for pair in _EVIDENCE_FIELDS for name in pair),
    "artifacts",
)
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")


def run_set_problems(
    root: Path, manifest: Mapping[str, Any], records: pl.DataFrame, *, size: int, digest: str, checksums: str
) -> list[RecordProblem]:
    """Every way the records of ``root`` are not the ones its manifest describes (rows 0-based, not lines).

    Parameters
    ----------
    root
        The run set directory.
    manifest
        Its manifest (as :func:`read_run_set_manifest` returns it).
    records
        The records read from its ``records.jsonl``.
    size, digest, checksums
        ``records.jsonl`` as it was read: its size in bytes, its digest, and whether its lines
        carry checksums (``verified``, ``none`` or ``empty``).

    Returns
    -------
    list of RecordProblem
        Every problem found (empty when the records are the manifest's).
    """
    path = root / RECORDS
    origin = str(manifest.get("origin", "runner"))
    problems = _seal_problems(root, manifest, size=size, digest=digest)
    if origin == "runner" and checksums == "none":
        problems.append(
            RecordProblem(
                file=str(path),
                line=1,
                field="checksum",
                message="a run set written by the runner carries a checksum on every line; these lines have none",
            )
        )
    problems += _membership_problems(path, manifest, records)
    problems += _evidence_problems(root, path, records, digests=origin == "runner")
    return problems


def records_end_mid_line(root: Path) -> bool:
    """Whether the run set's ``records.jsonl`` is a regular file whose last byte is not a newline.

    A writer killed mid-line leaves such a file; the runner's resume sets the torn line aside.

    Parameters
    ----------
    root
        The run set directory.

    Returns
    -------
    bool
        True for a torn end; False for a file that ends with a newline, is empty, missing or not regular.
    """
    path = root / RECORDS
    if path.is_symlink() or not path.is_file():
        return False
    with path.open("rb") as handle:
        if handle.seek(0, os.SEEK_END) == 0:
            return False
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


def read_run_set_manifest(path: Path) -> dict[str, Any]:
    """A run set's manifest, read strictly (duplicate keys, NaN, wrong types refused with the field).

    Parameters
    ----------
    path
        The run set's ``manifest.json`` file (beside ``records.jsonl``).

    Returns
    -------
    dict
        The manifest.

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


#: Manifest strings that are RFC 3339 timestamps when present.
_TIMESTAMPS = ("policy_registered_at", "imported_at")


def _is_timestamp(value: str) -> bool:
    """Whether ``value`` is an RFC 3339 timestamp on a real calendar day (as the records' line pass checks)."""
    if re.fullmatch(RFC3339_PATTERN, value) is None:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _kind(value: Any) -> str:
    return type(value).__name__


def _strings_shape(manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, what is wrong) for the manifest's strings: types, timestamps, the run set's id."""
    out: list[tuple[str, str]] = []
    for name in _OPTIONAL_STRINGS:
        value = manifest.get(name)
        if value is not None and not isinstance(value, str):
            out.append((name, f"expected a string or null (got {_kind(value)})"))
        elif name in _TIMESTAMPS and isinstance(value, str) and not _is_timestamp(value):
            out.append((name, f"expected an RFC 3339 timestamp (got {value[:80]!r})"))
    if not isinstance(manifest.get("run_set_id"), str) or not manifest["run_set_id"]:
        out.append(("run_set_id", "required: the id every record of the run set carries (a non-empty string)"))
    return out


def _manifest_shape(manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, what is wrong) for the manifest fields the gate reads."""
    out = _strings_shape(manifest)
    if manifest.get("origin", "runner") not in {"runner", "import"}:
        out.append(("origin", f"expected 'runner' or 'import' (got {manifest.get('origin')!r})"))
    if not isinstance(manifest.get("complete", False), bool):
        out.append(("complete", f"expected true or false (got {_kind(manifest.get('complete'))})"))
    trials = manifest.get("trials")
    if trials is not None and (isinstance(trials, bool) or not isinstance(trials, int) or trials < 0):
        out.append(("trials", f"expected an integer >= 0 (got {trials!r})"))
    cases = manifest.get("cases")
    if cases is not None:
        out += _cases_shape(cases)
    digests = manifest.get("candidate_case_digests")
    if digests is not None and (not isinstance(digests, dict) or not all(isinstance(v, str) for v in digests.values())):
        out.append(("candidate_case_digests", "expected an object of strings"))
    seal = manifest.get("records_seal")
    if seal is not None:
        out += _seal_shape(seal)
    return out


def _cases_shape(cases: Any) -> list[tuple[str, str]]:
    """(field, what is wrong) for the manifest's ``cases``."""
    if not isinstance(cases, list):
        return [("cases", f"expected a list (got {_kind(cases)})")]
    out: list[tuple[str, str]] = []
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("case_id"), str):
            out.append((f"cases[{i}].case_id", "expected a string"))
        elif case.get("case_version") is not None and not isinstance(case.get("case_version"), str):
            out.append((f"cases[{i}].case_version", "expected a string or null"))
    return out


def _seal_shape(seal: Any) -> list[tuple[str, str]]:
    """(field, what is wrong) for the manifest's ``records_seal``."""
    if not isinstance(seal, dict):
        return [("records_seal", f"expected an object (got {_kind(seal)})")]
    out: list[tuple[str, str]] = []
    digest = seal.get("digest")
    if digest is not None and (not isinstance(digest, str) or not _SHA256.fullmatch(digest)):
        out.append(("records_seal.digest", "expected 'sha256:' and 64 hexadecimal digits, or null"))
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


def _seal_problems(root: Path, manifest: Mapping[str, Any], *, size: int, digest: str) -> list[RecordProblem]:
    seal = manifest.get("records_seal")
    complete = manifest.get("complete") is True
    if seal is None:
        if not complete:
            return []
        unsealed = (
            "a complete run set seals its records (digest, size, lines of records.jsonl); this one has no seal, "
            "so nothing shows its records are the ones that ran"
        )
        return [RecordProblem(file=str(root / MANIFEST), field="records_seal", message=unsealed)]
    path = root / RECORDS
    why = _complete_seal_mismatch(seal, size, digest) if complete else _interrupted_seal_mismatch(path, seal, size)
    return [] if why is None else [RecordProblem(file=str(path), field="records_seal", message=why)]


def _complete_seal_mismatch(seal: Mapping[str, Any], size: int, digest: str) -> str | None:
    """Why a complete run set's ``records.jsonl`` is not the file it sealed, or None."""
    sealed_bytes = int(seal["bytes"])
    if size == sealed_bytes and (size == 0 or digest == seal.get("digest")):
        return None
    return (
        f"records.jsonl is not the file the run set sealed ({sealed_bytes} bytes, {seal.get('lines')} lines, "
        f"{seal.get('digest')}; found {size} bytes, {digest}): records were edited, removed, "
        "reordered or added after the run"
    )


def _interrupted_seal_mismatch(path: Path, seal: Mapping[str, Any], size: int) -> str | None:
    """Why an interrupted run set's ``records.jsonl`` does not begin with the sealed bytes, or None."""
    sealed_bytes = int(seal["bytes"])
    if sealed_bytes == 0:
        return None
    if size >= sealed_bytes and _prefix_digest(path, sealed_bytes) == seal.get("digest"):
        return None
    return (
        f"the first {sealed_bytes} bytes of records.jsonl are not the ones the last session sealed "
        f"({seal.get('digest')}): records written before the interruption were changed"
    )


def _rows_problems(path: Path, rows: pl.DataFrame, field: str, why: str) -> list[RecordProblem]:
    """A problem for each of the first rows of ``rows`` (``__row``: frame row); ``why`` is formatted with the row."""
    return [
        RecordProblem(file=str(path), row=int(row["__row"]), field=field, message=why.format(**row))
        for row in rows.head(_SHOWN).iter_rows(named=True)
    ]


def _membership_problems(path: Path, manifest: Mapping[str, Any], records: pl.DataFrame) -> list[RecordProblem]:
    """Records that are not this run set's: another run set's id, system, case version or candidate.

    Every check's refusal is first reduced to one boolean in one query: a run set whose records are all
    its own costs that query only; otherwise each check names its first refused rows, in the checks' order.
    """
    if records.height == 0:
        return []
    checks, shown = _membership_checks(manifest)
    if not checks or not any(records.select(*(m.any().alias(str(i)) for i, (m, _, _) in enumerate(checks))).row(0)):
        return []
    indexed = records.with_row_index("__row").with_columns(shown)
    problems: list[RecordProblem] = []
    for mask, field, why in checks:
        problems += _rows_problems(path, indexed.filter(mask), field, why)
    return problems


def _membership_checks(manifest: Mapping[str, Any]) -> tuple[list[tuple[pl.Expr, str, str]], list[pl.Expr]]:
    """Each check the manifest calls for, in the order its problems are reported, and the columns they name.

    A check is a row mask (true on a refused record), the field it names and its message (formatted with the
    row); the columns are what a message names beside the record's own (the manifest's version of a case,
    ``__version``: the first listing of a repeated case).
    """
    checks: list[tuple[pl.Expr, str, str]] = []
    shown: list[pl.Expr] = []
    ids = _listed(manifest.get("run_set_id"))
    if ids is not None:
        checks.append(
            (~pl.col("run_set_id").is_in(ids), "run_set_id", "{run_set_id!r} is not this run set's (copied in?)")
        )
    systems = _listed(manifest.get("system"))
    if systems is not None:
        checks.append((~pl.col("system").is_in(systems), "system", "{system!r} is not the run set's system"))
    if isinstance(manifest.get("system_digest"), str):
        checks.append(
            (
                pl.col("system_digest").ne_missing(manifest["system_digest"]),
                "system_digest",
                "{system_digest!r} is not the run set's system digest",
            )
        )
    cases = manifest.get("cases")
    if isinstance(cases, list) and cases:
        versions: dict[str, Any] = {}
        for case in cases:  # the first of a repeated case
            versions.setdefault(case["case_id"], case.get("case_version"))
        listed = pl.col("case_id").is_in(list(versions))
        version = pl.col("case_id").replace_strict(versions, default=None, return_dtype=pl.String)
        shown.append(version.alias("__version"))
        checks.append((~listed, "case_id", "{case_id!r} is not a case of the run set's manifest"))
        checks.append(
            (
                listed & pl.col("case_version").ne_missing(version),
                "case_version",
                "{case_version!r} is not the manifest's version of {case_id!r} ({__version!r})",
            )
        )
    digests = manifest.get("candidate_case_digests")
    if isinstance(digests, dict) and digests:
        expected = pl.col("case_id").replace_strict(digests, default=None, return_dtype=pl.String)
        checks.append(
            (
                pl.col("candidate_digest").ne_missing(expected),
                "candidate_digest",
                "{candidate_digest!r} is not the digest of the candidate the run set copied for {case_id!r}",
            )
        )
    trials = manifest.get("trials")
    if isinstance(trials, int) and not isinstance(trials, bool) and manifest.get("origin", "runner") == "runner":
        checks.append(
            (pl.col("trial") >= trials, "trial", "trial {trial} is beyond the run set's " + f"{trials} trials")
        )
    return checks, shown


def _listed(value: Any) -> list[str] | None:
    """A manifest's run set id or system: one value, or several joined by commas (an import)."""
    if not isinstance(value, str) or not value:
        return None
    return value.split(",")


_ARTIFACT = re.compile(r"artifacts\[(0|[1-9][0-9]*)\]\.path")


def named_evidence(record: Mapping[str, Any]) -> list[tuple[str, str, Any, Any]]:
    """(path field, digest field, path, digest) of every evidence file ``record`` names (a path may be None).

    Parameters
    ----------
    record
        A run record (``stdout_path``/``stdout_digest``, ``stderr_path``/``stderr_digest``, ``artifacts``).

    Returns
    -------
    list of tuple
        ``stdout_path`` and ``stderr_path`` first, then ``artifacts[i].path`` for each artifact.
    """
    named = [(p, d, record.get(p), record.get(d)) for p, d in _EVIDENCE_FIELDS]
    artifacts = record.get("artifacts") or []
    named += [
        (f"artifacts[{i}].path", f"artifacts[{i}].digest", a.get("path"), a.get("digest"))
        for i, a in enumerate(artifacts)
        if isinstance(a, Mapping)
    ]
    return named


def _evidence_problems(root: Path, path: Path, records: pl.DataFrame, *, digests: bool) -> list[RecordProblem]:
    """Every evidence path a record names is inside the run set; with ``digests``, each file has the record's digest."""
    problems: list[RecordProblem] = []
    base = root.resolve()
    links: dict[str, bool] = {}  # each path under base checked once: is it a symbolic link?
    columns = ["stdout_path", "stdout_digest", "stderr_path", "stderr_digest", "artifacts"]
    # Only the records that name some evidence (most name none: no Python loop over every record).
    naming = (
        records.lazy()
        .select(columns)
        .with_row_index("__row")
        .filter(pl.any_horizontal(pl.col(columns).is_not_null()))
        .collect()
    )
    for record in naming.iter_rows(named=True):
        row = int(record.pop("__row"))
        for path_field, digest_field, rel, digest in named_evidence(record):
            if rel is None:
                continue
            why, of_digest = _evidence_refusal(base, rel, digest if digests else None, links)
            if why is not None:
                field = digest_field if of_digest else path_field
                problems.append(RecordProblem(file=str(path), row=row, field=field, message=why))
    return problems


def _evidence_refusal(base: Path, rel: Any, digest: Any, links: dict[str, bool]) -> tuple[str | None, bool]:
    """Why evidence path ``rel`` is refused (:func:`contained`) or None, and whether its file is, for ``digest``.

    ``digest`` None: the containment rule only. A path with no symbolic link under ``base`` is checked as a
    string (:func:`_joined_inside`: inside by construction), any other by :func:`contained` itself.
    """
    why = _refused_path(rel)
    if why is not None:
        return why, False
    target: str | Path | None = _joined_inside(str(base), _components(rel), links)
    if target is None:  # through a symbolic link: resolved, then it must still be inside
        target, why = contained(base, rel, links=links)
        if why is not None or target is None:
            return why, False
    if digest is None:
        return None, False
    why = _file_mismatch(target, rel, digest)
    return why, why is not None


def contained(base: Path, rel: Any, *, links: dict[str, bool] | None = None) -> tuple[Path | None, str | None]:
    """The file ``rel`` names inside the resolved run set ``base``, or why it is refused (the gate's rule).

    Refused: a path that is not a non-empty string, an absolute path, a ``..`` component, a NUL byte,
    and a path that resolves outside ``base`` (through a symlink). A path inside that names no file
    is not refused here (the caller says it is missing).

    Parameters
    ----------
    base
        The run set directory, resolved.
    rel
        An evidence path as a record gives it.
    links
        Paths under ``base`` already looked at, each mapped to whether it is a symbolic link: pass one dict
        to many calls over one run set so that each directory is looked at once (:func:`resolved_inside`).

    Returns
    -------
    tuple of (Path or None, str or None)
        The resolved file and None, or None and why the path is refused.
    """
    why = _refused_path(rel)
    if why is not None:
        return None, why
    try:
        target = resolved_inside(base, rel, {} if links is None else links)
    except (OSError, RuntimeError) as exc:  # a symlink loop
        return None, f"evidence path {rel!r} cannot be resolved ({exc})"
    if not target.is_relative_to(base):
        return None, f"evidence path {rel!r} points outside the run set (through a symlink)"
    return target, None


def resolved_inside(base: Path, rel: str, links: dict[str, bool]) -> Path:
    """``(base / rel).resolve()`` for a resolved ``base`` and a ``rel`` without ``..``, looking at each path once.

    ``Path.resolve`` (``os.path.realpath``) looks at every component from ``/`` on, for every file: a run set
    of 48 records with 4 evidence files each spent 60% of its reading there (issue 28, session 45). ``base`` has
    no symbolic link (it is resolved) and ``rel`` no ``..`` (refused before), so when no component of ``rel``
    under ``base`` is a symbolic link the resolved path is ``base`` joined with ``rel``'s components (``.`` and
    empty ones dropped), whether or not they exist, as ``realpath`` leaves a missing or non-directory component.
    Each component's path is looked at once (``os.lstat``; an error counts as not a link, as in ``realpath``)
    and remembered in ``links``; a path through a symbolic link is resolved by ``Path.resolve`` itself (loops
    raise as there). ``tests/records/test_resolved_inside.py`` compares it with ``Path.resolve`` on random trees.

    Parameters
    ----------
    base
        A resolved directory.
    rel
        A relative path with no ``..`` component.
    links
        Paths already looked at and whether each is a symbolic link; filled in.

    Returns
    -------
    Path
        The resolved path.
    """
    parts = _components(rel)
    if _joined_inside(str(base), parts, links) is None:
        return (base / rel).resolve()
    return base.joinpath(*parts)


def _components(rel: str) -> list[str]:
    """The components of a relative path (``.`` and empty ones dropped)."""
    return [part for part in rel.split("/") if part not in ("", ".")]


def _joined_inside(base: str, parts: list[str], links: dict[str, bool]) -> str | None:
    """``base`` joined with ``parts`` when no component under ``base`` is a symbolic link (None when one is).

    The string of :func:`resolved_inside`'s ``base.joinpath(*parts)``; each path looked at once (``links``).
    """
    here = base
    for part in parts:
        here = os.path.join(here, part)
        link = links.get(here)
        if link is None:
            try:
                link = stat.S_ISLNK(os.lstat(here).st_mode)
            except OSError:  # missing, not a directory, too long: realpath keeps the rest as written
                link = False
            links[here] = link
        if link:
            return None
    return here


def _refused_path(rel: Any) -> str | None:
    """Why ``rel`` is refused as written (not a non-empty string, NUL, absolute, ``..``), or None."""
    if not isinstance(rel, str) or not rel:
        return f"evidence path {rel!r}: expected a non-empty path relative to the run set"
    if "\x00" in rel:
        return f"evidence path {rel!r} holds a NUL byte"
    # On POSIX a path is absolute exactly when it starts with "/" (``PurePosixPath.is_absolute``): no Path built.
    if rel.startswith(("/", "\\")) or (os.name != "posix" and Path(rel).is_absolute()):
        return f"evidence path {rel!r} is absolute: evidence must be inside the run set"
    if ".." in rel.replace("\\", "/").split("/"):
        return f"evidence path {rel!r} climbs out with '..': evidence must be inside the run set"
    return None


def _file_mismatch(target: str | Path, rel: str, digest: str) -> str | None:
    """Why the contained evidence file ``target`` is not the one the record names (missing, other digest), or None."""
    if not _is_file(target):
        return f"evidence file {rel} is missing"
    found = digest_file(target)
    if found != digest:
        return f"evidence file {rel} was changed after the run (its digest is {found}, the record says {digest})"
    return None


def _is_file(target: str | Path) -> bool:
    """``Path(target).is_file()``: one ``os.stat``, and ``Path.is_file`` itself on any error (it raises or not)."""
    try:
        return stat.S_ISREG(os.stat(target).st_mode)
    except (OSError, ValueError):
        return Path(target).is_file()
