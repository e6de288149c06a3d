"""in-toto Statement v1: what was signed (subjects by digest), of which kind (predicate type), and the facts.

A statement is the DSSE payload (``payloadType`` ``application/vnd.in-toto+json``), serialized as
canonical JSON (sorted keys, compact, UTF-8)::

    {"_type": "https://in-toto.io/Statement/v1",
     "subject": [{"name": "verdict.json", "digest": {"sha256": "<hex>"}}, ...],
     "predicateType": "https://gatestats.dev/attestations/verdict/v1",
     "predicate": {...}}

gatestats signs two kinds: a gate verdict (:data:`VERDICT_PREDICATE_TYPE`; the first subject is the
verdict file, then the policy file and every record file the verdict names; the predicate is the
verdict body) and a policy registration (:data:`REGISTRATION_PREDICATE_TYPE`; the subject is the
policy file; the predicate names the run set, the policy digest and the registration time).

References
----------
.. [1] in-toto Attestation Framework, "Statement layer specification, v1" (2023),
   https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gatestats._typing import JSONObject
from gatestats.attest.errors import AttestationError
from gatestats.attest.strict_json import loads_strict, strict_object, type_name
from gatestats.io.digest import canonical_json

__all__ = [
    "REGISTRATION_PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "VERDICT_PREDICATE_TYPE",
    "Statement",
    "Subject",
    "parse_statement",
    "subject_for",
]

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
VERDICT_PREDICATE_TYPE = "https://gatestats.dev/attestations/verdict/v1"
REGISTRATION_PREDICATE_TYPE = "https://gatestats.dev/attestations/policy-registration/v1"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_STATEMENT_KEYS = ("_type", "subject", "predicateType", "predicate")


@dataclass(frozen=True, slots=True, kw_only=True)
class Subject:
    """One artifact a statement is about: a name and the SHA-256 of its bytes (lower-case hex)."""

    name: str
    sha256: str

    def __post_init__(self) -> None:
        if not _HEX64.fullmatch(self.sha256):
            msg = f"subject {self.name!r}: expected 64 lower-case hex digits of SHA-256 (got {self.sha256!r})"
            raise ValueError(msg)

    @property
    def digest(self) -> str:
        """The digest in gatestats' form, ``sha256:<hex>``."""
        return "sha256:" + self.sha256

    def to_dict(self) -> JSONObject:
        """The in-toto ResourceDescriptor ``{"name", "digest": {"sha256"}}``."""
        return {"name": self.name, "digest": {"sha256": self.sha256}}


def subject_for(name: str, digest: str) -> Subject:
    """A subject from a gatestats digest (``sha256:<hex>``).

    Parameters
    ----------
    name
        The subject's name (the path of the file the digest is of).
    digest
        Its digest, ``sha256:<hex>``.

    Returns
    -------
    Subject
        The subject (the digest's hex under ``sha256``).

    Raises
    ------
    ValueError
        ``digest`` does not begin with ``sha256:``.

    Examples
    --------
    >>> subject_for("v.json", "sha256:" + "0" * 64).to_dict()["digest"]["sha256"] == "0" * 64
    True
    """
    if not digest.startswith("sha256:"):
        msg = f"subject {name!r}: expected a 'sha256:<hex>' digest (got {digest!r})"
        raise ValueError(msg)
    return Subject(name=name, sha256=digest.removeprefix("sha256:"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Statement:
    """An in-toto Statement v1."""

    subjects: tuple[Subject, ...]
    predicate_type: str
    predicate: Mapping[str, Any] = field(repr=False)

    def to_dict(self) -> JSONObject:
        """The statement's JSON object."""
        return {
            "_type": STATEMENT_TYPE,
            "subject": [s.to_dict() for s in self.subjects],
            "predicateType": self.predicate_type,
            "predicate": dict(self.predicate),
        }

    def to_payload(self) -> bytes:
        """The canonical JSON bytes that are signed (the DSSE payload)."""
        return canonical_json(self.to_dict()).encode("utf-8")


def _subjects(raw: Any, source: str) -> tuple[Subject, ...]:
    if not isinstance(raw, list) or not raw:
        msg = f"{source}: field 'subject': expected a non-empty array (got {type_name(raw)})"
        raise AttestationError(msg)
    out: list[Subject] = []
    for i, item in enumerate(raw):
        where = f"{source}: field 'subject[{i}]'"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            msg = f"{where}: expected an object with a string 'name' (got {type_name(item)})"
            raise AttestationError(msg)
        digest = item.get("digest")
        if not isinstance(digest, dict) or not isinstance(digest.get("sha256"), str):
            msg = f"{where}.digest: expected an object with a 'sha256' string (got {type_name(digest)})"
            raise AttestationError(msg)
        if not _HEX64.fullmatch(digest["sha256"]):
            msg = f"{where}.digest.sha256: expected 64 lower-case hex digits (got {digest['sha256'][:80]!r})"
            raise AttestationError(msg)
        out.append(Subject(name=item["name"], sha256=digest["sha256"]))
    return tuple(out)


def parse_statement(payload: bytes, *, source: str, predicate_types: Sequence[str]) -> Statement:
    """Read a signed payload as an in-toto Statement v1 of one of ``predicate_types``, strictly.

    Parameters
    ----------
    payload
        The signed payload.
    source
        How errors name it.
    predicate_types
        The predicate types accepted.

    Returns
    -------
    Statement
        The statement.

    Raises
    ------
    AttestationError
        Not JSON, not a Statement v1, an unexpected predicate type, or a malformed subject.
    """
    value = strict_object(
        loads_strict(payload, source=source),
        _STATEMENT_KEYS,
        source=source,
        expected="an in-toto statement object",
        noun="statement",
    )
    if value.get("_type") != STATEMENT_TYPE:
        msg = f"{source}: field '_type': expected {STATEMENT_TYPE!r} (got {value.get('_type')!r})"
        raise AttestationError(msg)
    kind = value.get("predicateType")
    if not isinstance(kind, str) or kind not in predicate_types:
        msg = f"{source}: field 'predicateType': expected {' or '.join(map(repr, predicate_types))} (got {kind!r})"
        raise AttestationError(msg)
    predicate = value.get("predicate")
    if not isinstance(predicate, dict):
        msg = f"{source}: field 'predicate': expected an object (got {type_name(predicate)})"
        raise AttestationError(msg)
    return Statement(subjects=_subjects(value.get("subject"), source), predicate_type=kind, predicate=predicate)
