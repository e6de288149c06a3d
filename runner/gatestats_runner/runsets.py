"""Run sets for other owners (the public API gatestats uses): read, register a policy, write an import.

Not to be confused with :mod:`gatestats_runner.runset` (runs the trials) or
:mod:`gatestats_runner.store` (the file format it builds on); this module runs nothing.

The runner owns a run set's files (``manifest.json``, ``records.jsonl``; see
:mod:`gatestats_runner.store` for the layout). The release controller (:mod:`gatestats`) never
writes them itself; it goes through this module, the runner's public run-set API:

- :func:`read_manifest`, :func:`seal_records`, :func:`record_checksum`, :func:`encode_record` —
  reading a run set and checking its lines the way the runner wrote them;
- :func:`register_policy` — a gate policy's digest written into the manifest before the first
  record, under the run set's lock, atomically;
- :func:`write_imported_run_set` — records made by another harness written as a run set
  (``origin: "import"``), with their seal, whole or not at all.

A policy is anything with ``digest``, ``name`` and ``version`` (:class:`PolicyRef`): the runner
stores the digest and never reads the policy itself.
"""

from __future__ import annotations

import errno
import getpass
import os
import platform
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from gatestats_runner._util import JSONObject, fsync_dir, now_rfc3339, write_all
from gatestats_runner.digests import digest_file
from gatestats_runner.fsops import rename_once
from gatestats_runner.store import (
    CHECKSUM_FIELD,
    MANIFEST,
    MANIFEST_FORMAT,
    RECORDS,
    RunSetError,
    RunSetLock,
    encode_record,
    read_manifest,
    record_checksum,
    seal_records,
    write_manifest,
)

__all__ = [
    "BASELINE_SAMPLE_FORMAT",
    "CHECKSUM_FIELD",
    "MANIFEST",
    "MANIFEST_FORMAT",
    "RECORDS",
    "PolicyRef",
    "PolicyRegistration",
    "RunSetError",
    "encode_record",
    "read_manifest",
    "record_checksum",
    "register_policy",
    "seal_records",
    "write_imported_run_set",
]

#: ``baseline_sample.format`` in the manifest of a baseline re-run (:mod:`gatestats_runner.baseline`
#: writes it; a drift test checks it). Here, not in ``baseline``, so that a reader needs no module that
#: starts runs.
BASELINE_SAMPLE_FORMAT = "gatestats-baseline-sample/1"


class PolicyRef(Protocol):
    """What the runner stores of a gate policy: its digest, name and version (never its rules)."""

    @property
    def digest(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyRegistration:
    """A policy registration as written to (or already found in) a run set's manifest."""

    run_set: Path
    policy_digest: str
    registered_at: str
    origin: str


def register_policy(run_set: str | os.PathLike[str], policy: PolicyRef) -> PolicyRegistration:
    """Write ``policy``'s digest, name, version and the time into the manifest of a run set with no record yet.

    The manifest is read again under the run set's lock (a runner may have rewritten it meanwhile)
    and replaced atomically. Registering the same digest again is a no-op that returns the first
    registration.

    Parameters
    ----------
    run_set
        The run set directory (made by ``gatestats run --prepare``, or by a runner before its first record).
    policy
        The gate policy: its ``digest``, ``name`` and ``version`` are stored.

    Returns
    -------
    PolicyRegistration
        The registration now in the manifest.

    Raises
    ------
    RunSetError
        ``run_set`` is not a run set, another runner holds it, it already holds records, or another
        policy is registered in it.
    OSError
        The lock or the manifest cannot be written.
    """
    root = Path(run_set)
    read_manifest(root)  # a run set directory at all, before a lock file is made in it
    lock = RunSetLock(root)
    try:
        manifest = read_manifest(root)  # again, under the lock: a runner may have written it meanwhile
        origin = str(manifest.get("origin", "runner"))
        existing = manifest.get("policy_digest")
        if existing is not None and existing != policy.digest:
            msg = (
                f"{root / MANIFEST}: field 'policy_digest': another policy is registered ({existing}); "
                f"a run set is gated by the one policy registered before it ran (got {policy.digest})"
            )
            raise RunSetError(msg)
        if existing == policy.digest and manifest.get("policy_registered_at"):
            return PolicyRegistration(
                run_set=root, policy_digest=existing, registered_at=manifest["policy_registered_at"], origin=origin
            )
        records = root / RECORDS
        if records.exists() and records.stat().st_size > 0:
            msg = (
                f"{records}: the run set already has records: a policy must be registered before the first "
                "record exists (start a new run set with `gatestats run --policy`)"
            )
            raise RunSetError(msg)
        manifest["policy_digest"] = policy.digest
        manifest["policy_registered_at"] = now_rfc3339()
        manifest["policy_name"] = policy.name
        manifest["policy_version"] = policy.version
        manifest.pop("format", None)
        write_manifest(root, manifest)
    finally:
        lock.release()
    return PolicyRegistration(
        run_set=root, policy_digest=policy.digest, registered_at=manifest["policy_registered_at"], origin=origin
    )


def _who() -> str:
    """The account and host that wrote the run set (provenance, not authentication)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid {os.getuid()}"
    return f"{user}@{platform.node() or 'unknown-host'}"


def _joined(values: set[Any]) -> str:
    return ",".join(sorted(str(v) for v in values))


def _write_lines(path: Path, records: Iterable[Mapping[str, Any]]) -> JSONObject:
    """Encode and write every record (contract-checked, checksummed); return what the manifest says of them."""
    run_set_ids: set[Any] = set()
    systems: set[Any] = set()
    cases: set[tuple[str, str | None]] = set()
    last_trial = -1
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        for record in records:
            write_all(fd, encode_record(dict(record)))
            run_set_ids.add(record.get("run_set_id"))
            systems.add(record.get("system"))
            cases.add((str(record["case_id"]), record.get("case_version")))
            last_trial = max(last_trial, int(record["trial"]))
        os.fsync(fd)
    finally:
        os.close(fd)
    ordered = sorted(cases, key=lambda c: (c[0], c[1] is None, c[1] or ""))
    return {
        "run_set_id": _joined(run_set_ids),
        "cases": [{"case_id": c, "case_version": v} for c, v in ordered],
        "trials": last_trial + 1,
        "system": _joined(systems),
    }


def _rename_into_place(building: Path, target: Path) -> None:
    """Rename the finished directory to ``target``; an existing ``target`` (even an empty one) is refused."""
    exists = f"{target}: exists; an imported run set is written once (choose a new directory)"
    if os.path.lexists(target):
        raise FileExistsError(exists)
    try:
        rename_once(building, target)  # an empty directory that appeared meanwhile is not replaced either
    except FileExistsError:
        raise FileExistsError(exists) from None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            raise FileExistsError(exists) from None
        raise
    fsync_dir(target.parent)


def write_imported_run_set(
    out: str | os.PathLike[str],
    records: Iterable[Mapping[str, Any]],
    *,
    source: str,
    policy: PolicyRef | None,
) -> Path:
    """Write records made by another harness as a run set directory (``manifest.json`` + ``records.jsonl``).

    For imported records, registration happens at import: the manifest says ``origin: "import"``
    and carries the policy's digest and the import time, the source file's digest, who imported
    it, and the seal of the records (:func:`seal_records`); each line is checked against the
    contract and checksummed (:func:`encode_record`). The directory is built beside ``out`` and
    renamed into place: it exists whole or not at all; an existing ``out`` is refused.

    Parameters
    ----------
    out
        The run set directory to create (must not exist).
    records
        Contract records (JSON-ready mappings), in the order they are to be written.
    source
        The file the records were imported from (its digest is recorded when it is a file).
    policy
        The gate policy registered at import, or None.

    Returns
    -------
    pathlib.Path
        ``out``.

    Raises
    ------
    FileExistsError
        ``out`` exists (or appeared while the run set was being built).
    RunSetError
        A record breaks the run-record contract (nothing is written).
    """
    target = Path(out)
    if os.path.lexists(target):
        msg = f"{target}: exists; an imported run set is written once (choose a new directory)"
        raise FileExistsError(msg)
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.importing-", dir=target.parent))
    try:
        described = _write_lines(building / RECORDS, records)
        now = now_rfc3339()
        manifest: dict[str, object] = {
            "run_set_id": described["run_set_id"],
            "origin": "import",
            "source": source,
            "source_digest": digest_file(source) if Path(source).is_file() else None,
            "imported_by": _who(),
            "imported_at": now,
            "complete": True,
            "case_set_version": None,
            "cases": described["cases"],
            "trials": described["trials"],
            "system": described["system"],
            "policy_digest": None if policy is None else policy.digest,
            "policy_registered_at": None if policy is None else now,
            "policy_name": None if policy is None else policy.name,
            "policy_version": None if policy is None else policy.version,
            "records_seal": seal_records(building),
        }
        write_manifest(building, manifest)
        _rename_into_place(building, target)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return target
