"""DSSE: PAE against the specification's published example, envelopes read strictly, sign and verify."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from hypothesis import given
from hypothesis import strategies as st

from gatestats.attest import AttestationError, key_id, pae, parse_envelope, verify_envelope
from gatestats.attest.dsse import IN_TOTO_PAYLOAD_TYPE, decode_base64, read_envelope_bundle, sign_envelope

# secure-systems-lab/dsse, protocol.md, "Test Vectors" (protocol version 1.0.0).
SPEC_TYPE = "http://example.com/HelloWorld"
SPEC_BODY = b"hello world"
SPEC_PAE = b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
SPEC_ENVELOPE = (
    '{"payload": "aGVsbG8gd29ybGQ=",\n "payloadType": "http://example.com/HelloWorld",\n'
    ' "signatures": [{"sig": "A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHqJPcIAriEGAHTVeCUjW2JIZA=="}]}'
)
SPEC_X = 46950820868899156662930047687818585632848591499744589407958293238635476079160
SPEC_Y = 5640078356564379163099075877009565129882514886557779369047442380624545832820


def test_pae_matches_dsse_protocol_test_vector() -> None:
    assert pae(SPEC_TYPE, SPEC_BODY) == SPEC_PAE


def test_dsse_spec_example_signature_verifies_over_our_pae() -> None:
    # The spec's ECDSA P-256 signature (raw r || s) must verify over the bytes our PAE produces.
    envelope = parse_envelope(SPEC_ENVELOPE.encode(), source="spec.json")
    assert (envelope.payload_type, envelope.payload) == (SPEC_TYPE, SPEC_BODY)
    (signature,) = envelope.signatures
    assert signature.keyid is None
    r, s = int.from_bytes(signature.sig[:32], "big"), int.from_bytes(signature.sig[32:], "big")
    public = ec.EllipticCurvePublicNumbers(SPEC_X, SPEC_Y, ec.SECP256R1()).public_key()
    public.verify(encode_dss_signature(r, s), pae(envelope.payload_type, envelope.payload), ec.ECDSA(hashes.SHA256()))


def test_pae_counts_bytes_not_characters() -> None:
    assert pae("tÿpe", "é".encode()) == b"DSSEv1 5 t\xc3\xbfpe 2 \xc3\xa9"
    assert pae("", b"") == b"DSSEv1 0  0 "


@given(st.text(max_size=8), st.binary(max_size=8), st.text(max_size=8), st.binary(max_size=8))
def test_pae_is_injective(type_a: str, body_a: bytes, type_b: str, body_b: bytes) -> None:
    if (type_a, body_a) != (type_b, body_b):
        assert pae(type_a, body_a) != pae(type_b, body_b)


def _key(seed: int) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32)


def test_sign_then_verify_round_trip_through_json() -> None:
    key = _key(1)
    envelope = sign_envelope(b'{"x": 1}', IN_TOTO_PAYLOAD_TYPE, key)
    line = envelope.to_json_line()
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    again = parse_envelope(line, source="e.jsonl:1")
    assert again == envelope
    assert verify_envelope(again, key.public_key(), source="e.jsonl:1").keyid == key_id(key)


def test_another_key_is_refused_as_key_id_mismatch() -> None:
    envelope = sign_envelope(b"body", IN_TOTO_PAYLOAD_TYPE, _key(2))
    with pytest.raises(AttestationError, match=r"key id mismatch: signed with key sha256:[0-9a-f]{64}, not with"):
        verify_envelope(envelope, _key(1).public_key(), source="e")


def test_payload_changed_after_signing_is_a_bad_signature() -> None:
    key = _key(1)
    envelope = sign_envelope(b"verdict: fail", IN_TOTO_PAYLOAD_TYPE, key)
    forged = type(envelope)(
        payload_type=envelope.payload_type, payload=b"verdict: pass", signatures=envelope.signatures
    )
    with pytest.raises(AttestationError, match="bad signature: it does not verify under the given key"):
        verify_envelope(forged, key.public_key(), source="e")
    retyped = type(envelope)(payload_type="text/plain", payload=envelope.payload, signatures=envelope.signatures)
    with pytest.raises(AttestationError, match="bad signature"):
        verify_envelope(retyped, key.public_key(), source="e")


def test_a_forged_keyid_does_not_make_a_signature_valid() -> None:
    mine, theirs = _key(1), _key(2)
    envelope = sign_envelope(b"body", IN_TOTO_PAYLOAD_TYPE, theirs)
    relabelled = parse_envelope(
        envelope.to_json_line().replace(key_id(theirs).encode(), key_id(mine).encode()), source="e"
    )
    with pytest.raises(AttestationError, match="bad signature"):
        verify_envelope(relabelled, mine.public_key(), source="e")


def test_url_safe_and_unpadded_base64_are_accepted() -> None:
    assert decode_base64("-_-_", where="x") == base64.urlsafe_b64decode("-_-_")
    assert decode_base64("aGVsbG8gd29ybGQ", where="x") == b"hello world"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "expected a DSSE envelope object (got array)"),
        (
            '{"payload": "", "payloadType": "t"}',
            "field 'signatures': expected a non-empty array of signatures (got nothing)",
        ),
        ('{"payload": "", "payloadType": "t", "signatures": []}', "field 'signatures': expected a non-empty array"),
        (
            '{"payload": "", "payloadType": 3, "signatures": [{"sig": ""}]}',
            "field 'payloadType': expected a string (got integer 3)",
        ),
        ('{"payload": "%%%", "payloadType": "t", "signatures": [{"sig": ""}]}', "field 'payload': not base64"),
        (
            '{"payload": "", "payloadType": "t", "signatures": [{"sig": "@"}]}',
            "field 'signatures[0]'.sig: not base64",
        ),
        (
            '{"payload": "", "payloadType": "t", "signatures": [{"sig": "", "alg": "x"}]}',
            "field 'alg': unknown signature field",
        ),
        (
            '{"payload": "", "payloadType": "t", "signatures": [{"sig": ""}], "extra": 1}',
            "field 'extra': unknown envelope field",
        ),
        (
            '{"payload": "", "payload": "eA==", "payloadType": "t", "signatures": [{"sig": ""}]}',
            "field 'payload': duplicate key",
        ),
        ('{"payload": "", "payloadType": "t", "signatures": [NaN]}', "NaN is not a JSON number"),
        ('{"payload": "", "payloadType": "t", "signa', "not valid JSON"),
    ],
)
def test_malformed_envelopes_are_refused_naming_the_field(text: str, message: str) -> None:
    with pytest.raises(AttestationError, match=re.escape(message)):
        parse_envelope(text.encode(), source="env.json")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty: no envelope"),
        (b'{"payload": ""}', "the last line has no newline"),
        (b"\n", r":1: empty line"),
        (b"\x00\xff\xfe\n", r":1: field '<line>': not valid UTF-8 at byte 1"),
    ],
)
def test_bundle_reader_refuses_truncated_and_garbage_files(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "v.json.intoto.jsonl"
    path.write_bytes(data)
    with pytest.raises(AttestationError, match=message):
        read_envelope_bundle(path)


def test_bundle_reader_reads_every_line(tmp_path: Path) -> None:
    key = _key(3)
    lines = [sign_envelope(json.dumps({"n": i}).encode(), IN_TOTO_PAYLOAD_TYPE, key) for i in range(2)]
    path = tmp_path / "b.intoto.jsonl"
    path.write_bytes(b"".join(e.to_json_line() for e in lines))
    bundle = read_envelope_bundle(path)
    assert [source.rsplit(":", 1)[1] for source, _ in bundle] == ["1", "2"]
    assert [e for _, e in bundle] == lines
