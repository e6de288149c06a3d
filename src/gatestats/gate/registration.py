"""Registering a gate policy in a run set *before* its first record, and checking it at gate time.

``register_policy`` writes the policy's digest, name, version and the registration time into the
run set's ``manifest.json`` (under the runner's lock, atomically) and refuses once any record
exists. ``gatestats run --policy`` registers at creation. At gate time, :func:`check_registration`
refuses a candidate run set whose registered digest differs from the policy given (the policy was
edited after the run) or whose registration is later than its first record's start (the policy
was written after results could be seen).
"""

from __future__ import annotations

import getpass
import os
import platform
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from gatestats._digest import digest_file
from gatestats._files import rename_directory_once
from gatestats.errors import GatestatsError
from gatestats.gate.policy import Policy
from gatestats.gate.recordset import MANIFEST, RECORDS, RecordSet
from gatestats.records import write_records_jsonl
from gatestats_runner._util import now_rfc3339
from gatestats_runner.store import RunSetError, RunSetLock, read_manifest, seal_records, write_manifest

__all__ = [
    "Registration",
    "RegistrationError",
    "check_registration",
    "register_policy",
    "write_imported_run_set",
]


class RegistrationError(GatestatsError, ValueError):
    """The policy cannot be registered, or the gate must refuse the registration it found."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Registration:
    """A policy registration as found in (or written to) a run set's manifest."""

    run_set: str
    policy_digest: str
    registered_at: str
    first_record_at: str | None
    origin: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {
            "run_set": self.run_set,
            "policy_digest": self.policy_digest,
            "registered_at": self.registered_at,
            "first_record_at": self.first_record_at,
            "origin": self.origin,
        }


def register_policy(policy: Policy, run_set: str | os.PathLike[str]) -> Registration:
    """Write ``policy``'s digest and the time into the manifest of ``run_set``, which has no record yet.

    Registering the same digest again is a no-op that returns the first registration.

    Raises
    ------
    RegistrationError
        ``run_set`` is not a run set, already holds records, or has another policy registered.
    """
    root = Path(run_set)
    try:
        read_manifest(root)  # a run set directory at all, before a lock file is made in it
        lock = RunSetLock(root)
    except (RunSetError, OSError) as exc:
        raise RegistrationError(str(exc)) from None
    try:
        try:
            manifest = read_manifest(root)  # again, under the lock: a runner may have written it meanwhile
        except (RunSetError, OSError) as exc:
            raise RegistrationError(str(exc)) from None
        records = root / RECORDS
        existing = manifest.get("policy_digest")
        if existing is not None and existing != policy.digest:
            msg = (
                f"{root / MANIFEST}: field 'policy_digest': another policy is registered ({existing}); "
                f"a run set is gated by the one policy registered before it ran (got {policy.digest})"
            )
            raise RegistrationError(msg)
        if existing == policy.digest and manifest.get("policy_registered_at"):
            return Registration(
                run_set=str(root),
                policy_digest=existing,
                registered_at=manifest["policy_registered_at"],
                first_record_at=None,
                origin=manifest.get("origin", "runner"),
            )
        if records.exists() and records.stat().st_size > 0:
            msg = (
                f"{records}: the run set already has records: a policy must be registered before the first "
                "record exists (start a new run set with `gatestats run --policy`)"
            )
            raise RegistrationError(msg)
        manifest["policy_digest"] = policy.digest
        manifest["policy_registered_at"] = now_rfc3339()
        manifest["policy_name"] = policy.name
        manifest["policy_version"] = policy.version
        manifest.pop("format", None)
        write_manifest(root, manifest)
    finally:
        lock.release()
    return Registration(
        run_set=str(root),
        policy_digest=policy.digest,
        registered_at=manifest["policy_registered_at"],
        first_record_at=None,
        origin=manifest.get("origin", "runner"),
    )


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def check_registration(policy: Policy, candidate: RecordSet) -> Registration:
    """The registration the gate relies on; refuse anything else.

    Raises
    ------
    RegistrationError
        The candidate is not a run set (nothing proves when the policy was written), has no policy
        registered, has another policy's digest registered, or was registered after its first record.
    """
    if candidate.kind != "run_set" or candidate.manifest is None:
        msg = (
            f"{candidate.path}: the candidate is record files, not a run set: nothing shows the policy was "
            "registered before execution (run with `gatestats run --policy`, or import with --run-set and --policy)"
        )
        raise RegistrationError(msg)
    manifest = candidate.manifest
    where = f"{candidate.path / MANIFEST}"
    registered = manifest.get("policy_digest")
    at = manifest.get("policy_registered_at")
    if registered is None or at is None:
        msg = (
            f"{where}: field 'policy_digest': no policy was registered before execution; "
            "a policy written after the results were seen cannot gate them"
        )
        raise RegistrationError(msg)
    if registered != policy.digest:
        msg = (
            f"{where}: field 'policy_digest': the policy {policy.path} (digest {policy.digest}) is not the one "
            f"registered before execution ({registered}): the policy was edited after registration"
        )
        raise RegistrationError(msg)
    origin = str(manifest.get("origin", "runner"))
    first: str | None = None
    starts = candidate.records.get_column("started_at").drop_nulls() if candidate.n_records else None
    if starts is not None and starts.len() > 0:
        first = min(starts.to_list(), key=_parse_time)
        if origin != "import" and _parse_time(at) > _parse_time(first):
            msg = (
                f"{where}: field 'policy_registered_at': the policy was registered at {at}, after the first "
                f"record started ({first}): a policy registered after execution began cannot gate it"
            )
            raise RegistrationError(msg)
    return Registration(
        run_set=str(candidate.path), policy_digest=registered, registered_at=at, first_record_at=first, origin=origin
    )


def _who() -> str:
    """The account and host that ran the import (provenance, not authentication)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid {os.getuid()}"
    return f"{user}@{platform.node() or 'unknown-host'}"


def write_imported_run_set(
    records: pl.DataFrame, out: str | os.PathLike[str], *, policy: Policy | None, source: str
) -> Path:
    """Write imported records as a run set directory (``manifest.json`` + ``records.jsonl``).

    For records made by other harnesses, registration happens at import: the manifest says
    ``origin: "import"`` and carries the policy's digest and the import time, the source file's
    digest, who imported it, and the seal of the records (each line is checksummed by the writer). The directory is
    built beside ``out`` and renamed into place (it exists whole or not at all); an existing
    ``out`` is refused.

    Raises
    ------
    FileExistsError
        ``out`` exists.
    RecordFileError
        The records break the contract (nothing is written).
    """
    target = Path(out)
    if target.exists():
        msg = f"{target}: exists; an imported run set is written once (choose a new directory)"
        raise FileExistsError(msg)
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.importing-", dir=target.parent))
    try:
        write_records_jsonl(records, building / RECORDS)
        cases = records.select("case_id", "case_version").unique().sort("case_id", "case_version", nulls_last=True)
        now = now_rfc3339()
        manifest: dict[str, Any] = {
            "run_set_id": ",".join(sorted(str(x) for x in records.get_column("run_set_id").unique().to_list())),
            "origin": "import",
            "source": source,
            "source_digest": digest_file(source) if Path(source).is_file() else None,
            "imported_by": _who(),
            "imported_at": now,
            "complete": True,
            "case_set_version": None,
            "cases": [{"case_id": c, "case_version": v} for c, v in cases.iter_rows()],
            "trials": records.select(pl.col("trial").max() + 1).item() if records.height else 0,
            "system": ",".join(sorted(str(x) for x in records.get_column("system").unique().to_list())),
            "policy_digest": None if policy is None else policy.digest,
            "policy_registered_at": None if policy is None else now,
            "policy_name": None if policy is None else policy.name,
            "policy_version": None if policy is None else policy.version,
            "records_seal": seal_records(building),
        }
        write_manifest(building, manifest)
        try:
            rename_directory_once(building, target)  # a plain rename would replace an empty directory
        except FileExistsError:
            msg = f"{target}: exists; an imported run set is written once (choose a new directory)"
            raise FileExistsError(msg) from None
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return target
