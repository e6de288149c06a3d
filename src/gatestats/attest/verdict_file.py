"""Read a verdict file strictly: the exact bytes, and a body whose every field the verifier uses is typed.

A verdict that is verified must mean one thing: duplicate keys, ``NaN``, wrong types, unknown
top-level fields or a decision outside the vocabulary are errors that name the field, before any
digest is compared.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from gatestats._digest import digest_bytes
from gatestats.attest.errors import AttestationError
from gatestats.attest.strict_json import MAX_JSON_BYTES, loads_strict, read_regular_file, type_name
from gatestats.gate import EXIT_CODES, VERDICT_FORMAT
from gatestats.gate.verdict import Decision

__all__ = ["VerdictFile", "read_verdict_file"]

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_DECISIONS: tuple[str, ...] = get_args(Decision)

Check = Callable[[Any], str | None]


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) else "a string"


def _optional_string(value: Any) -> str | None:
    return None if value is None or isinstance(value, str) else "a string or null"


def _digest(value: Any) -> str | None:
    return None if isinstance(value, str) and _DIGEST.fullmatch(value) else "a 'sha256:<64 hex>' digest"


def _optional_digest(value: Any) -> str | None:
    return None if value is None else _digest(value)


def _count(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63
    return None if ok else "an integer in [0, 2^63)"


def _object(value: Any) -> str | None:
    return None if isinstance(value, dict) else "an object"


def _optional_object(value: Any) -> str | None:
    return None if value is None or isinstance(value, dict) else "an object or null"


def _list_of(item: Check, what: str) -> Check:
    def check(value: Any) -> str | None:
        if not isinstance(value, list) or any(item(v) is not None for v in value):
            return f"an array of {what}"
        return None

    return check


def _one_of(*choices: Any) -> Check:
    def check(value: Any) -> str | None:
        ok = any(value == c and type(value) is type(c) for c in choices)
        return None if ok else "one of " + ", ".join(repr(c) for c in choices)

    return check


_SIDE: dict[str, Check] = {
    "path": _string,
    "kind": _one_of("run_set", "records"),
    "digest": _digest,
    "files": _list_of(_object, "objects {path, digest, size}"),
    "n_records": _count,
    "run_set_id": _optional_string,
    "policy_digest": _optional_digest,
    "policy_registered_at": _optional_string,
}
_FILE: dict[str, Check] = {"path": _string, "digest": _digest, "size": _count}
_POLICY: dict[str, Check] = {"path": _string, "digest": _digest, "name": _string, "version": _string}
_REGISTRATION: dict[str, Check] = {
    "run_set": _string,
    "policy_digest": _digest,
    "registered_at": _string,
    "first_record_at": _optional_string,
    "origin": _string,
}
_ROW_DECISION: dict[str, Check] = {"decision": _one_of(*_DECISIONS)}
_TOP: dict[str, Check] = {
    "format": _one_of(VERDICT_FORMAT),
    "verdict": _one_of(*_DECISIONS),
    "exit_code": _one_of(*sorted(set(EXIT_CODES.values()))),
    "reasons": _list_of(_string, "strings"),
    "policy": _object,
    "registration": _object,
    "baseline": _object,
    "candidate": _object,
    "tool_version": _string,
    "created_at": _string,
    "checks": _list_of(_object, "objects"),
    "rules": _list_of(_object, "objects"),
    "multiplicity": _optional_string,
    "severe_slices": _list_of(_object, "objects"),
    "flips": _object,
    "cost": _optional_object,
    "judges": _optional_object,
    "infra": _object,
    "digest": _digest,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class VerdictFile:
    """A verdict file as read: its path, exact bytes, their digest, and the parsed body."""

    path: Path
    data: bytes = field(repr=False)
    file_digest: str
    body: Mapping[str, Any] = field(repr=False)


def _check(source: str, obj: Mapping[str, Any], spec: Mapping[str, Check], prefix: str) -> None:
    for key, check in spec.items():
        name = f"{prefix}{key}"
        if key not in obj:
            msg = f"{source}: field {name!r}: required field is missing"
            raise AttestationError(msg)
        expected = check(obj[key])
        if expected is not None:
            shown = repr(obj[key])
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            msg = f"{source}: field {name!r}: expected {expected} (got {type_name(obj[key])} {shown})"
            raise AttestationError(msg)


def read_verdict_file(path: str | os.PathLike[str]) -> VerdictFile:
    """Read and type-check a ``gatestats-verdict/1`` file.

    Raises
    ------
    AttestationError
        Unreadable, not strict JSON (duplicate keys, NaN, ...), an unknown top-level field, or a
        missing or mistyped field (named, with what was expected and got).
    """
    where = Path(path)
    source = str(where)
    data = read_regular_file(where, limit=MAX_JSON_BYTES, what="verdict")
    body = loads_strict(data, source=source)
    if not isinstance(body, dict):
        msg = f"{source}: expected a verdict object (got {type_name(body)})"
        raise AttestationError(msg)
    unknown = sorted(set(body) - set(_TOP))
    if unknown:
        msg = f"{source}: field {unknown[0]!r}: unknown verdict field (a {VERDICT_FORMAT} verdict has no such field)"
        raise AttestationError(msg)
    _check(source, body, _TOP, "")
    _check(source, body["policy"], _POLICY, "policy.")
    _check(source, body["registration"], _REGISTRATION, "registration.")
    for side in ("baseline", "candidate"):
        _check(source, body[side], _SIDE, f"{side}.")
        for i, item in enumerate(body[side]["files"]):
            _check(source, item, _FILE, f"{side}.files[{i}].")
    for kind in ("rules", "severe_slices"):
        for i, row in enumerate(body[kind]):
            _check(source, row, _ROW_DECISION, f"{kind}[{i}].")
    _check(source, body["flips"], {"pass_to_fail": _list_of(_string, "strings")}, "flips.")
    _check(source, body["flips"], {"fail_to_pass": _list_of(_string, "strings")}, "flips.")
    return VerdictFile(path=where, data=data, file_digest=digest_bytes(data), body=body)
