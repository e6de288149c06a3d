"""Registering a gate policy in a run set *before* its first record, and checking it at gate time.

``register_policy`` has the runner write the policy's digest, name, version and the registration
time into the run set's ``manifest.json`` (:func:`gatestats_runner.runsets.register_policy`: under
the runner's lock, atomically), which refuses once any record exists. ``gatestats run --policy``
registers at creation. At gate time, :func:`check_registration` refuses a candidate run set whose
registered digest differs from the policy given (the policy was edited after the run) or whose
registration is later than its first record's start (the policy was written after results could
be seen). A policy registered at import (``gatestats import … --run-set … --policy``) comes after
outcomes that already existed: the registration says so in words (:data:`NOT_PREREGISTERED`, in the
verdict's ``registration.notice`` and on every surface that shows the verdict), and a policy with
``require_preregistration = true`` refuses it like any other registration that cannot gate.

The manifest is the runner's file: this module reads what the gate needs from it and writes it
only through the runner's public run-set API. Imported records are written as a run set by the
records layer (:func:`gatestats.records.write_imported_run_set`, re-exported here for older callers).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl

from gatestats._typing import JSONObject
from gatestats.errors import GatestatsError
from gatestats.gate._typed import to_json
from gatestats.gate.policy import Policy
from gatestats.gate.recordset import MANIFEST, RecordSet
from gatestats.records import write_imported_run_set
from gatestats_runner import runsets

__all__ = [
    "NOT_PREREGISTERED",
    "Registration",
    "RegistrationError",
    "check_registration",
    "import_notice",
    "register_policy",
    "write_imported_run_set",
]


#: The words every surface uses for a policy registered at import, after the outcomes existed.
NOT_PREREGISTERED = "registered when the records were imported; not a pre-registration"


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
    #: False when the policy was registered at import, after the outcomes existed (None: a verdict
    #: written before this field, see :attr:`is_preregistration`).
    preregistered: bool | None = None
    #: For a registration that is not a pre-registration, the sentence that says so.
    notice: str | None = None

    @property
    def is_preregistration(self) -> bool:
        """Whether the policy was registered before the outcomes existed (read from ``origin`` when unrecorded)."""
        return self.preregistered if self.preregistered is not None else self.origin != "import"

    @property
    def notice_text(self) -> str | None:
        """The sentence every surface shows for a registration that is not a pre-registration (else None)."""
        if self.is_preregistration:
            return None
        return self.notice or import_notice(self.registered_at, self.first_record_at)

    def to_dict(self) -> JSONObject:
        """The registration as the verdict binds it.

        Returns
        -------
        JSONObject
            Run set, policy digest, registration and first-record times, origin, whether it is a
            pre-registration and its notice, in field order (the last two absent when unrecorded).
        """
        data: JSONObject = to_json(self)
        if self.preregistered is None and self.notice is None:  # a verdict written before the fields
            del data["preregistered"], data["notice"]
        return data


def import_notice(registered_at: str, first_record_at: str | None) -> str:
    """The notice of a policy registered at import (it contains :data:`NOT_PREREGISTERED`).

    Parameters
    ----------
    registered_at
        When the policy was registered (the import).
    first_record_at
        The first imported record's start, when the records carry one.

    Returns
    -------
    str
        One sentence for the verdict, the terminal, the Markdown summary and the report.
    """
    first = f"; the first record started {first_record_at}" if first_record_at else ""
    return (
        f"policy {NOT_PREREGISTERED} (registered {registered_at}{first}): the outcomes existed before "
        "the policy, which may have been written after they were seen"
    )


def register_policy(policy: Policy, run_set: str | os.PathLike[str]) -> Registration:
    """Write ``policy``'s digest and the time into the manifest of ``run_set``, which has no record yet.

    Registering the same digest again is a no-op that returns the first registration.

    Parameters
    ----------
    policy
        The loaded gate policy.
    run_set
        The run set directory (``gatestats run --prepare`` makes one without records).

    Returns
    -------
    Registration
        The registration now in the manifest (``first_record_at`` is None: there is no record yet).

    Raises
    ------
    RegistrationError
        ``run_set`` is not a run set, is in use by a runner, already holds records, or has another
        policy registered.
    """
    try:
        written = runsets.register_policy(run_set, policy)
    except (runsets.RunSetError, OSError) as exc:
        raise RegistrationError(str(exc)) from None
    return Registration(
        run_set=str(written.run_set),
        policy_digest=written.policy_digest,
        registered_at=written.registered_at,
        first_record_at=None,
        origin=written.origin,
        preregistered=written.origin != "import",
    )


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


#: How far polars' reading of a start time may be from Python's and the earliest still be found (both
#: read RFC 3339; they could differ only by an offset misread, at most 14 hours).
_SLACK = timedelta(days=2)


def _earliest(starts: pl.Series) -> str:
    """The earliest of ``starts`` (text, no null) as written: the first of equal instants in record order.

    Decided by :func:`_parse_time` as always, over the starts polars reads within :data:`_SLACK` of
    its own earliest (all of them when polars cannot read one): a Python parse of every start was
    1.4 s per 300k records.
    """
    instants = starts.str.to_datetime(time_zone="UTC", strict=False)
    near = starts
    if instants.null_count() == 0:
        low = instants.min()
        if isinstance(low, datetime):
            near = starts.filter(instants <= low + _SLACK)
    return str(min(near.to_list(), key=_parse_time))


#: Manifest fields only an imported run set has (an ``origin`` edited to "runner" does not hide them).
_IMPORT_FIELDS = ("imported_at", "imported_by", "source_digest")


def _notice(manifest: Mapping[str, Any], *, imported: bool, at: str, first: str | None, n_records: int) -> str | None:
    """Why a registration is not a pre-registration, in words (None: it is one)."""
    if imported:
        origin = manifest.get("origin", "runner")
        fields = ", ".join(key for key in _IMPORT_FIELDS if key in manifest)
        said = "" if origin == "import" else f"; the manifest says origin {origin!r} but carries the import's {fields}"
        return import_notice(at, first) + said
    if n_records and first is None:
        return (
            f"no record carries a start time, so nothing shows that the policy (registered {at}) came before "
            "execution; not a pre-registration"
        )
    return None


def check_registration(policy: Policy, candidate: RecordSet) -> Registration:
    """The registration the gate relies on; refuse anything else.

    Parameters
    ----------
    policy
        The gate policy (its digest must be the registered one).
    candidate
        The candidate's record set (a run set whose manifest holds the registration).

    Returns
    -------
    Registration
        The registration: policy digest, when it was registered and the first record's time.

    Raises
    ------
    RegistrationError
        The candidate is not a run set (nothing proves when the policy was written), has no policy
        registered, has another policy's digest registered, was registered after its first record,
        or was registered at import while the policy has ``require_preregistration = true``.
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
    imported = origin == "import" or any(key in manifest for key in _IMPORT_FIELDS)
    first: str | None = None
    starts = candidate.records.get_column("started_at").drop_nulls() if candidate.n_records else None
    if starts is not None and starts.len() > 0:
        first = _earliest(starts)
        if not imported and _parse_time(at) > _parse_time(first):
            msg = (
                f"{where}: field 'policy_registered_at': the policy was registered at {at}, after the first "
                f"record started ({first}): a policy registered after execution began cannot gate it"
            )
            raise RegistrationError(msg)
    notice = _notice(manifest, imported=imported, at=at, first=first, n_records=candidate.n_records)
    if notice is not None and policy.require_preregistration:
        msg = (
            f"{where}: field 'origin': the policy requires a pre-registration (require_preregistration = true), "
            f"but this registration is not one: {notice}; a release policy that requires a pre-registration "
            "cannot gate these results"
        )
        raise RegistrationError(msg)
    return Registration(
        run_set=str(candidate.path),
        policy_digest=registered,
        registered_at=at,
        first_record_at=first,
        origin=origin,
        preregistered=notice is None,
        notice=notice,
    )
