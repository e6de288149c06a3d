"""Sign a verdict or a policy registration: an in-toto statement in a DSSE envelope, one JSON line.

Where the envelopes live:

- a verdict ``V`` (written with ``gate -o V --sign KEY``): ``V.intoto.jsonl`` beside it
  (:func:`verdict_envelope_path`);
- a registration (``policy register --sign KEY``): ``RUN_SET_DIR/registration.intoto.jsonl``
  (:data:`REGISTRATION_ENVELOPE`).

Each file is a JSON Lines bundle of DSSE envelopes (the in-toto convention for ``.intoto.jsonl``);
gatestats writes exactly one envelope, once, and never replaces the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gatestats.attest.dsse import IN_TOTO_PAYLOAD_TYPE, Envelope, sign_envelope
from gatestats.attest.statement import (
    REGISTRATION_PREDICATE_TYPE,
    VERDICT_PREDICATE_TYPE,
    Statement,
    Subject,
    subject_for,
)
from gatestats.gate import Policy, Registration
from gatestats.io.digest import digest_bytes
from gatestats.io.files import write_new_files

__all__ = [
    "ENVELOPE_SUFFIX",
    "REGISTRATION_ENVELOPE",
    "registration_statement",
    "sign_registration",
    "sign_verdict",
    "verdict_envelope_path",
    "verdict_statement",
    "write_registration_envelope",
]

ENVELOPE_SUFFIX = ".intoto.jsonl"
REGISTRATION_ENVELOPE = "registration.intoto.jsonl"


def verdict_envelope_path(verdict: str | os.PathLike[str]) -> Path:
    """Where the envelope of the verdict file ``verdict`` lives: ``<verdict>.intoto.jsonl`` beside it.

    Parameters
    ----------
    verdict
        The verdict file's path (the file itself is not read).

    Returns
    -------
    Path
        Its envelope bundle's path.

    Examples
    --------
    >>> verdict_envelope_path("out/verdict.json").as_posix()
    'out/verdict.json.intoto.jsonl'
    """
    path = Path(verdict)
    return path.with_name(path.name + ENVELOPE_SUFFIX)


def verdict_statement(body: Mapping[str, Any], data: bytes, *, name: str) -> Statement:
    """The statement about a verdict file: its bytes first, then the policy and every record file it names.

    Parameters
    ----------
    body
        The verdict body (the file's parsed content).
    data
        The verdict file's exact bytes.
    name
        The verdict file's name (informational; verification compares digests).

    Returns
    -------
    Statement
        The statement, its first subject the verdict file.
    """
    subjects: list[Subject] = [subject_for(name, digest_bytes(data))]
    policy = body.get("policy") or {}
    subjects.append(subject_for(str(policy.get("path")), str(policy.get("digest"))))
    for side in ("baseline", "candidate"):
        for item in (body.get(side) or {}).get("files", []):
            subjects.append(subject_for(str(item["path"]), str(item["digest"])))
    return Statement(subjects=tuple(subjects), predicate_type=VERDICT_PREDICATE_TYPE, predicate=dict(body))


def sign_verdict(body: Mapping[str, Any], data: bytes, *, name: str, key: Ed25519PrivateKey) -> Envelope:
    """Sign the statement about the verdict file ``data`` (see :func:`verdict_statement`).

    Parameters
    ----------
    body, data, name
        As :func:`verdict_statement`.
    key
        The signing key.

    Returns
    -------
    Envelope
        The signed statement.
    """
    statement = verdict_statement(body, data, name=name)
    return sign_envelope(statement.to_payload(), IN_TOTO_PAYLOAD_TYPE, key)


def registration_statement(
    *,
    policy_path: str,
    policy_digest: str,
    policy_name: str,
    policy_version: str,
    run_set: str,
    run_set_id: str | None,
    registered_at: str,
) -> Statement:
    """The statement about a policy registration: the policy file's bytes, registered in a run set at a time.

    Parameters
    ----------
    policy_path, policy_digest, policy_name, policy_version
        The registered policy file and what it says of itself.
    run_set, run_set_id
        The run set it is registered in, and that run set's id.
    registered_at
        The registration time, as the manifest records it.

    Returns
    -------
    Statement
        The statement, its subject the policy file.
    """
    predicate = {
        "run_set": run_set,
        "run_set_id": run_set_id,
        "policy_digest": policy_digest,
        "policy_name": policy_name,
        "policy_version": policy_version,
        "registered_at": registered_at,
    }
    return Statement(
        subjects=(subject_for(policy_path, policy_digest),),
        predicate_type=REGISTRATION_PREDICATE_TYPE,
        predicate=predicate,
    )


def sign_registration(statement: Statement, key: Ed25519PrivateKey) -> Envelope:
    """Sign a registration statement (see :func:`registration_statement`).

    Parameters
    ----------
    statement
        The registration statement.
    key
        The Ed25519 private key of whoever registers the policy.

    Returns
    -------
    Envelope
        The DSSE envelope of the statement.
    """
    return sign_envelope(statement.to_payload(), IN_TOTO_PAYLOAD_TYPE, key)


def write_registration_envelope(
    policy: Policy, registration: Registration, *, run_set_id: str | None, key: Ed25519PrivateKey
) -> Path:
    """Sign ``registration`` of ``policy`` and write ``RUN_SET/registration.intoto.jsonl`` once.

    Parameters
    ----------
    policy
        The registered policy.
    registration
        Its registration in the run set.
    run_set_id
        The run set's id (from its manifest).
    key
        The signing key.

    Returns
    -------
    Path
        The envelope file written.

    Raises
    ------
    FileExistsError
        The run set already has a registration envelope (it is never replaced).
    """
    statement = registration_statement(
        policy_path=str(policy.path),
        policy_digest=registration.policy_digest,
        policy_name=policy.name,
        policy_version=policy.version,
        run_set=registration.run_set,
        run_set_id=run_set_id,
        registered_at=registration.registered_at,
    )
    target = Path(registration.run_set) / REGISTRATION_ENVELOPE
    write_new_files([(target, sign_registration(statement, key).to_json_line())])
    return target
