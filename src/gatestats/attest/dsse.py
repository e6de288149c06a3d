"""DSSE, the Dead Simple Signing Envelope (secure-systems-lab/dsse, protocol v1.0.0): PAE, sign, verify.

A signature is ``Sign(PAE(UTF8(payloadType), payload))`` where

.. math::

    \\mathrm{PAE}(t, b) = \\texttt{"DSSEv1"} \\,\\|\\, \\texttt{SP} \\,\\|\\, \\mathrm{LEN}(t) \\,\\|\\, \\texttt{SP}
    \\,\\|\\, t \\,\\|\\, \\texttt{SP} \\,\\|\\, \\mathrm{LEN}(b) \\,\\|\\, \\texttt{SP} \\,\\|\\, b

with ``LEN`` the ASCII decimal byte length (no leading zeros) and ``SP`` one space. The JSON
envelope is ``{"payload": base64, "payloadType": str, "signatures": [{"keyid": str, "sig": base64}]}``;
verifiers accept standard and URL-safe base64. ``keyid`` is an unauthenticated hint: it only
explains a refusal ("signed with another key"); acceptance rests on the signature alone.

References
----------
.. [1] Secure Systems Lab, "DSSE: Dead Simple Signing Envelope", protocol.md and envelope.md,
   version 1.0.0 (2021), https://github.com/secure-systems-lab/dsse
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from gatestats._typing import JSONObject
from gatestats.attest.errors import AttestationError
from gatestats.attest.keys import key_id
from gatestats.attest.strict_json import loads_strict, read_regular_file, strict_object, type_name

__all__ = [
    "IN_TOTO_PAYLOAD_TYPE",
    "MAX_BUNDLE_BYTES",
    "Envelope",
    "Signature",
    "decode_base64",
    "pae",
    "parse_envelope",
    "read_envelope_bundle",
    "sign_envelope",
    "verify_envelope",
]

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
_ENVELOPE_KEYS = ("payload", "payloadType", "signatures")
#: Largest envelope bundle read (a verdict's envelope is about 4/3 of the verdict's size).
MAX_BUNDLE_BYTES = 512 * 1024 * 1024


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding of ``payload_type`` and ``payload`` (the bytes that are signed).

    Parameters
    ----------
    payload_type
        The payload's type (a URI).
    payload
        The payload's bytes.

    Returns
    -------
    bytes
        ``DSSEv1 <len(type)> <type> <len(payload)> <payload>``.

    Examples
    --------
    The DSSE protocol's published test vector:

    >>> pae("http://example.com/HelloWorld", b"hello world")
    b'DSSEv1 29 http://example.com/HelloWorld 11 hello world'
    """
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


@dataclass(frozen=True, slots=True, kw_only=True)
class Signature:
    """One signature of an envelope: the signer's key id (a hint) and the raw signature bytes."""

    keyid: str | None
    sig: bytes

    def to_dict(self) -> dict[str, str]:
        """JSON-ready mapping (``sig`` in standard base64)."""
        out = {"sig": base64.b64encode(self.sig).decode("ascii")}
        if self.keyid is not None:
            out = {"keyid": self.keyid, **out}
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Envelope:
    """A DSSE JSON envelope: the payload's bytes and type, and one or more signatures."""

    payload_type: str
    payload: bytes
    signatures: tuple[Signature, ...]

    def to_dict(self) -> JSONObject:
        """The envelope's JSON object (``payload`` in standard base64)."""
        return {
            "payload": base64.b64encode(self.payload).decode("ascii"),
            "payloadType": self.payload_type,
            "signatures": [s.to_dict() for s in self.signatures],
        }

    def to_json_line(self) -> bytes:
        """The envelope as one compact JSON line with its newline (a JSON Lines bundle entry)."""
        return (json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=True) + "\n").encode("ascii")


def sign_envelope(payload: bytes, payload_type: str, key: Ed25519PrivateKey) -> Envelope:
    """Sign ``PAE(payload_type, payload)`` with ``key`` (Ed25519) and wrap it in an envelope.

    Parameters
    ----------
    payload
        The bytes to sign.
    payload_type
        Their type (a URI).
    key
        The signing key.

    Returns
    -------
    Envelope
        The envelope with one signature, named by the key's id.
    """
    signature = Signature(keyid=key_id(key), sig=key.sign(pae(payload_type, payload)))
    return Envelope(payload_type=payload_type, payload=payload, signatures=(signature,))


def decode_base64(text: str, *, where: str) -> bytes:
    """Standard or URL-safe base64 (padding optional), strictly: any other character is an error.

    Parameters
    ----------
    text
        The base64 text.
    where
        How errors name the field.

    Returns
    -------
    bytes
        The decoded bytes.

    Raises
    ------
    AttestationError
        A character outside the alphabet, or a bad length or padding.

    Examples
    --------
    >>> decode_base64("aGVsbG8gd29ybGQ=", where="x"), decode_base64("-_8", where="x")
    (b'hello world', b'\\xfb\\xff')
    """
    normal = text.replace("-", "+").replace("_", "/")
    normal += "=" * (-len(normal) % 4)
    try:
        return base64.b64decode(normal, validate=True)
    except (binascii.Error, ValueError):
        msg = f"{where}: not base64 (got {text[:40]!r}{'...' if len(text) > 40 else ''})"
        raise AttestationError(msg) from None


def _field(obj: Mapping[str, object], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        got = "nothing" if key not in obj else f"{type_name(value)} {value!r}"[:80]
        msg = f"{where}: field {key!r}: expected a string (got {got})"
        raise AttestationError(msg)
    return value


def parse_envelope(data: bytes, *, source: str) -> Envelope:
    """Read one DSSE JSON envelope strictly (no unknown or duplicate keys, at least one signature).

    Parameters
    ----------
    data
        The envelope's JSON bytes.
    source
        How errors name it (a path, or ``path:line``).

    Returns
    -------
    Envelope
        The envelope.

    Raises
    ------
    AttestationError
        Not JSON, not an object, a missing or mistyped field, bad base64 (file and field named).
    """
    value = strict_object(
        loads_strict(data, source=source, max_bytes=MAX_BUNDLE_BYTES),
        _ENVELOPE_KEYS,
        source=source,
        expected="a DSSE envelope object",
        noun="envelope",
    )
    payload_type = _field(value, "payloadType", source)
    payload = decode_base64(_field(value, "payload", source), where=f"{source}: field 'payload'")
    raw = value.get("signatures")
    if not isinstance(raw, list) or not raw:
        got = "nothing" if "signatures" not in value else type_name(raw) if not isinstance(raw, list) else "[]"
        msg = f"{source}: field 'signatures': expected a non-empty array of signatures (got {got})"
        raise AttestationError(msg)
    signatures: list[Signature] = []
    for i, item in enumerate(raw):
        where = f"{source}: field 'signatures[{i}]'"
        if not isinstance(item, dict):
            msg = f"{where}: expected an object {{keyid, sig}} (got {type_name(item)})"
            raise AttestationError(msg)
        extra = sorted(set(item) - {"keyid", "sig"})
        if extra:
            msg = f"{where}: field {extra[0]!r}: unknown signature field (expected keyid, sig)"
            raise AttestationError(msg)
        keyid = _field(item, "keyid", where) if "keyid" in item else None
        sig = decode_base64(_field(item, "sig", where), where=f"{where}.sig")
        signatures.append(Signature(keyid=keyid or None, sig=sig))
    return Envelope(payload_type=payload_type, payload=payload, signatures=tuple(signatures))


def verify_envelope(envelope: Envelope, key: Ed25519PublicKey, *, source: str) -> Signature:
    """The first signature of ``envelope`` that verifies under ``key``; refuse with every reason otherwise.

    Acceptance rests on the signature alone (DSSE: ``keyid`` must not decide); a ``keyid`` that is not
    ``key``'s id explains the refusal ("signed with another key").

    Parameters
    ----------
    envelope
        The envelope.
    key
        The public key a signature must verify under.
    source
        How errors name the envelope.

    Returns
    -------
    Signature
        The signature that verifies.

    Raises
    ------
    AttestationError
        No signature verifies under ``key`` (each signature's reason given).
    """
    expected = key_id(key)
    message = pae(envelope.payload_type, envelope.payload)
    reasons: list[str] = []
    for i, signature in enumerate(envelope.signatures):
        try:
            key.verify(signature.sig, message)
        except InvalidSignature:
            if signature.keyid is not None and signature.keyid != expected:
                reasons.append(
                    f"signatures[{i}]: key id mismatch: signed with key {signature.keyid}, "
                    f"not with the given key {expected}"
                )
            else:
                reasons.append(
                    f"signatures[{i}]: bad signature: it does not verify under the given key {expected} "
                    "(the payload or the signature was changed after signing)"
                )
            continue
        return signature
    msg = f"{source}: field 'signatures': no signature verifies: " + "; ".join(reasons)
    raise AttestationError(msg)


def read_envelope_bundle(path: str | os.PathLike[str]) -> tuple[tuple[str, Envelope], ...]:
    """Read a JSON Lines bundle of envelopes (``*.intoto.jsonl``): ``(path:line, envelope)`` for each line.

    Parameters
    ----------
    path
        The bundle file.

    Returns
    -------
    tuple of (str, Envelope)
        Each envelope with where it is (``path:line``).

    Raises
    ------
    AttestationError
        The file is missing, unreadable, empty, or a line is not a strict DSSE envelope (line named).
    """
    where = Path(path)
    data = read_regular_file(where, limit=MAX_BUNDLE_BYTES, what="envelope")
    if data and not data.endswith(b"\n"):
        msg = f"{where}: the last line has no newline (a truncated envelope file)"
        raise AttestationError(msg)
    out: list[tuple[str, Envelope]] = []
    for number, line in enumerate(data.split(b"\n")[:-1], start=1):
        source = f"{where}:{number}"
        if not line.strip():
            msg = f"{source}: empty line (expected one DSSE envelope per line)"
            raise AttestationError(msg)
        out.append((source, parse_envelope(line, source=source)))
    if not out:
        msg = f"{where}: empty: no envelope"
        raise AttestationError(msg)
    return tuple(out)
