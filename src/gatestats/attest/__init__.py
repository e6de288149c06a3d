"""Verifiable release records: sign verdicts and policy registrations, verify them and what they name.

Statistics-free. Signatures are Ed25519 (the ``cryptography`` package) over DSSE's pre-authentication
encoding of an in-toto Statement v1, stored as one-line JSON Lines bundles (``*.intoto.jsonl``).

- :mod:`gatestats.attest.dsse`: PAE, envelopes, sign and verify.
- :mod:`gatestats.attest.statement`: in-toto statements and gatestats' predicate types.
- :mod:`gatestats.attest.keys`: PEM key files, key ids, key generation.
- :mod:`gatestats.attest.sign`: the statements about a verdict and a registration, and where envelopes live.
- :mod:`gatestats.attest.verdict_file`: read a verdict file strictly.
- :mod:`gatestats.attest.verify`: verify a verdict and everything it names.
"""

from gatestats.attest.dsse import IN_TOTO_PAYLOAD_TYPE, Envelope, Signature, pae, parse_envelope, verify_envelope
from gatestats.attest.errors import AttestationError, KeyFileError
from gatestats.attest.keys import generate_key_pair, key_id, load_private_key, load_public_key
from gatestats.attest.sign import (
    ENVELOPE_SUFFIX,
    REGISTRATION_ENVELOPE,
    registration_statement,
    sign_registration,
    sign_verdict,
    verdict_envelope_path,
    write_registration_envelope,
)
from gatestats.attest.statement import (
    REGISTRATION_PREDICATE_TYPE,
    STATEMENT_TYPE,
    VERDICT_PREDICATE_TYPE,
    Statement,
    Subject,
)
from gatestats.attest.verdict_file import VerdictFile, read_verdict_file
from gatestats.attest.verify import VerificationReport, VerifyCheck, check_registration_envelope, verify_verdict

__all__ = [
    "ENVELOPE_SUFFIX",
    "IN_TOTO_PAYLOAD_TYPE",
    "REGISTRATION_ENVELOPE",
    "REGISTRATION_PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "VERDICT_PREDICATE_TYPE",
    "AttestationError",
    "Envelope",
    "KeyFileError",
    "Signature",
    "Statement",
    "Subject",
    "VerdictFile",
    "VerificationReport",
    "VerifyCheck",
    "check_registration_envelope",
    "generate_key_pair",
    "key_id",
    "load_private_key",
    "load_public_key",
    "pae",
    "parse_envelope",
    "read_verdict_file",
    "registration_statement",
    "sign_registration",
    "sign_verdict",
    "verdict_envelope_path",
    "verify_envelope",
    "verify_verdict",
    "write_registration_envelope",
]
