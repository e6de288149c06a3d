"""in-toto statements and strict JSON: what a signed payload must be, and what is refused."""

from __future__ import annotations

import json
import re

import pytest

from gatestats.attest import AttestationError, Statement, Subject
from gatestats.attest.statement import STATEMENT_TYPE, VERDICT_PREDICATE_TYPE, parse_statement, subject_for
from gatestats.attest.strict_json import loads_strict

HEX = "ab" * 32


def _statement(**overrides: object) -> bytes:
    body: dict[str, object] = {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": "verdict.json", "digest": {"sha256": HEX}}],
        "predicateType": VERDICT_PREDICATE_TYPE,
        "predicate": {"verdict": "pass"},
    }
    body.update(overrides)
    return json.dumps(body).encode()


def test_statement_round_trips_through_its_canonical_payload() -> None:
    statement = Statement(
        subjects=(subject_for("verdict.json", "sha256:" + HEX), Subject(name="r.jsonl", sha256="0" * 64)),
        predicate_type=VERDICT_PREDICATE_TYPE,
        predicate={"b": 1, "a": [1.5, None]},
    )
    payload = statement.to_payload()
    assert payload.startswith(b'{"_type":"https://in-toto.io/Statement/v1","predicate":{"a":[1.5,null],"b":1}')
    assert parse_statement(payload, source="p", predicate_types=[VERDICT_PREDICATE_TYPE]) == statement


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            _statement(_type="https://in-toto.io/Statement/v0.1"),
            "field '_type': expected 'https://in-toto.io/Statement/v1'",
        ),
        (
            _statement(predicateType="https://slsa.dev/provenance/v1"),
            "field 'predicateType': expected 'https://gatestats.dev/attestations/verdict/v1' (got 'https://slsa.dev/provenance/v1')",
        ),
        (_statement(subject=[]), "field 'subject': expected a non-empty array (got array)"),
        (
            _statement(subject=[{"name": "v", "digest": {"sha256": "AB" * 32}}]),
            "field 'subject[0]'.digest.sha256: expected 64 lower-case hex digits",
        ),
        (
            _statement(subject=[{"name": "v", "digest": {"sha512": HEX}}]),
            "field 'subject[0]'.digest: expected an object with a 'sha256' string",
        ),
        (_statement(predicate=[1]), "field 'predicate': expected an object (got array)"),
        (_statement(extra=1), "field 'extra': unknown statement field"),
    ],
)
def test_statements_that_are_not_gatestats_verdict_statements_are_refused(payload: bytes, message: str) -> None:
    with pytest.raises(AttestationError, match=re.escape(message)):
        parse_statement(payload, source="p", predicate_types=[VERDICT_PREDICATE_TYPE])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'\xef\xbb\xbf{"a": 1}', "starts with a UTF-8 byte-order mark"),
        (b'{"a": Infinity}', "x.json:1: field '<line>': not valid JSON: Infinity is not a JSON number"),
        (b'{"a": -1e400}', "x.json:1: field '<line>': not valid JSON: number -1e400 overflows a 64-bit float"),
        (b'{"a": ' + b"9" * 5000 + b"}", "integer of 5000 digits is out of the 64-bit range"),
        (b"[" * 65 + b"]" * 65, "nested deeper than 64 levels"),
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 64 levels"),
        (b'{"a": {"b": 1, "b": 1}}', "field 'b': duplicate key"),
        (b'{"a": 1}\n{"a": 2}', "x.json:2: field '<line>': not valid JSON: Extra data (line 2 column 1)"),
    ],
)
def test_strict_json_refuses_what_could_be_read_two_ways(data: bytes, message: str) -> None:
    with pytest.raises(AttestationError, match=re.escape(message)):
        loads_strict(data, source="x.json")


def test_strict_json_accepts_64_levels_and_large_finite_numbers() -> None:
    assert loads_strict(b"[" * 64 + b"]" * 64, source="x") is not None
    assert loads_strict(b"[1e308, 9223372036854775807]", source="x") == [1e308, 2**63 - 1]


def test_strict_json_refuses_integers_beyond_64_bits_as_every_reader_does() -> None:
    with pytest.raises(AttestationError, match="integer 18446744073709551616 is out of the 64-bit range"):
        loads_strict(b"[18446744073709551616]", source="x")
