"""Verify a verdict file: its own digest, its signature, the policy, the registration and every record file.

:func:`verify_verdict` returns a :class:`VerificationReport` with one :class:`VerifyCheck` per thing
checked; each failed check names the file, the field, what was expected and what was found. Paths
in the verdict are resolved as written (relative ones against the current directory, as at gate
time). Without a public key the verdict's digest only shows the file is internally consistent:
anyone can recompute it. With a key, the signed statement must verify under that key and its first
subject's digest must equal the verdict file's bytes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from gatestats._typing import JSONObject
from gatestats.attest.dsse import IN_TOTO_PAYLOAD_TYPE, read_envelope_bundle, verify_envelope
from gatestats.attest.errors import AttestationError
from gatestats.attest.keys import key_id
from gatestats.attest.sign import REGISTRATION_ENVELOPE, verdict_envelope_path
from gatestats.attest.statement import (
    REGISTRATION_PREDICATE_TYPE,
    VERDICT_PREDICATE_TYPE,
    Statement,
    parse_statement,
)
from gatestats.attest.verdict_file import VerdictFile, read_verdict_file
from gatestats.errors import GatestatsError, RecordFileError
from gatestats.gate import EXIT_CODES, load_record_set, verdict_digest
from gatestats.io.digest import canonical_json, digest_file
from gatestats.records.runset import MANIFEST, RECORDS, read_run_set_manifest

__all__ = [
    "CheckStatus",
    "VerificationReport",
    "VerifyCheck",
    "check_registration_envelope",
    "verify_verdict",
]

CheckStatus: TypeAlias = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyCheck:
    """One thing verified: what (``check``), its status, where (file, field) and why."""

    check: str
    status: CheckStatus
    file: str
    detail: str
    field: str | None = None
    expected: str | None = None
    got: str | None = None

    def __str__(self) -> str:
        where = self.file + (f": field {self.field!r}" if self.field else "")
        text = f"{where}: {self.detail}"
        if self.expected is not None or self.got is not None:
            text += f" (expected {self.expected}, got {self.got})"
        return text

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping."""
        return {
            "check": self.check,
            "status": self.status,
            "file": self.file,
            "field": self.field,
            "expected": self.expected,
            "got": self.got,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class VerificationReport:
    """Every check made on one verdict file; ``ok`` when none failed."""

    verdict: str
    file_digest: str
    key_id: str | None
    checks: tuple[VerifyCheck, ...]

    @property
    def ok(self) -> bool:
        """No check failed (skipped checks are listed, and do not fail)."""
        return all(c.status != "failed" for c in self.checks)

    @property
    def failures(self) -> tuple[VerifyCheck, ...]:
        """The failed checks."""
        return tuple(c for c in self.checks if c.status == "failed")

    @property
    def counts(self) -> dict[str, int]:
        """The number of checks per status: ``ok``, ``failed``, ``skipped`` (in this order)."""
        return {s: sum(c.status == s for c in self.checks) for s in ("ok", "failed", "skipped")}

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (``verified``, counts, every check)."""
        counts: JSONObject = dict(self.counts)
        return {
            "verdict": self.verdict,
            "verified": self.ok,
            "file_digest": self.file_digest,
            "key_id": self.key_id,
            "counts": counts,
            "checks": [c.to_dict() for c in self.checks],
        }


def _failed(check: str, file: str, detail: str) -> VerifyCheck:
    """A failed check of ``file``."""
    return VerifyCheck(check=check, status="failed", file=file, detail=detail)


def _passed(check: str, file: str, detail: str) -> VerifyCheck:
    """A check of ``file`` that passed."""
    return VerifyCheck(check=check, status="ok", file=file, detail=detail)


def _skipped(check: str, file: str, detail: str) -> VerifyCheck:
    """A check of ``file`` that could not be made here (the detail says why)."""
    return VerifyCheck(check=check, status="skipped", file=file, detail=detail)


def _differs(check: str, file: str, field: str, expected: Any, got: Any, detail: str, out: list[VerifyCheck]) -> bool:
    """Append a failed check when ``expected != got``; return whether it differed."""
    if expected == got and type(expected) is type(got):
        return False
    out.append(
        VerifyCheck(
            check=check, status="failed", file=file, field=field, expected=repr(expected), got=repr(got), detail=detail
        )
    )
    return True


def _verdict_itself(verdict: VerdictFile, out: list[VerifyCheck]) -> None:
    body, file = verdict.body, str(verdict.path)
    recomputed = verdict_digest(dict(body))
    if not _differs(
        "verdict digest",
        file,
        "digest",
        recomputed,
        body["digest"],
        "the verdict's own digest does not match its content: the verdict was edited after it was written",
        out,
    ):
        out.append(_passed("verdict digest", file, f"digest {recomputed} matches"))
    # (field, expected, got, detail) of every consistency check, in the order they are reported.
    pairs: list[tuple[str, Any, Any, str]] = [
        (
            "exit_code",
            EXIT_CODES[body["verdict"]],
            body["exit_code"],
            f"the exit code does not belong to the verdict {body['verdict']!r}",
        ),
        (
            "registration.policy_digest",
            body["policy"]["digest"],
            body["registration"]["policy_digest"],
            "the registration names another policy than the verdict's policy",
        ),
    ]
    if body["candidate"]["kind"] == "run_set":
        pairs.append(
            (
                "candidate.policy_digest",
                body["policy"]["digest"],
                body["candidate"]["policy_digest"],
                "the candidate run set's registered policy is not the verdict's policy",
            )
        )
    bad = False
    for field, expected, got, detail in pairs:
        bad |= _differs("verdict consistency", file, field, expected, got, detail, out)
    if not bad:
        out.append(_passed("verdict consistency", file, "exit code and policy digests agree"))


def _signed_statement(
    envelope_path: Path, key: Ed25519PublicKey, predicate_type: str, check: str, out: list[VerifyCheck]
) -> tuple[str, Statement] | None:
    """The statement of the first envelope in the bundle that verifies under ``key``; failures appended."""
    try:
        bundle = read_envelope_bundle(envelope_path)
    except AttestationError as exc:
        out.append(_failed(check, str(envelope_path), str(exc)))
        return None
    reasons: list[VerifyCheck] = []
    for source, envelope in bundle:
        try:
            verify_envelope(envelope, key, source=source)
            if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE:
                msg = (
                    f"{source}: field 'payloadType': expected {IN_TOTO_PAYLOAD_TYPE!r} (got {envelope.payload_type!r})"
                )
                raise AttestationError(msg)
            statement = parse_statement(envelope.payload, source=f"{source} payload", predicate_types=[predicate_type])
        except AttestationError as exc:
            reasons.append(_failed(check, source, str(exc)))
            continue
        return source, statement
    out.extend(reasons)
    return None


def _signature(verdict: VerdictFile, key: Ed25519PublicKey, envelope_path: Path, out: list[VerifyCheck]) -> None:
    file = str(envelope_path)
    if not envelope_path.exists():
        detail = "no envelope: a key was given, so the verdict must be signed (gate -o VERDICT --sign KEY)"
        out.append(_failed("signature", file, detail))
        return
    found = _signed_statement(envelope_path, key, VERDICT_PREDICATE_TYPE, "signature", out)
    if found is None:
        return
    source, statement = found
    bad = _differs(
        "signature",
        source,
        "subject[0].digest.sha256",
        verdict.file_digest,
        statement.subjects[0].digest,
        f"the signed statement is about other bytes than {verdict.path}: the verdict file changed after signing",
        out,
    )
    if not bad and canonical_json(dict(statement.predicate)) != canonical_json(dict(verdict.body)):
        out.append(
            VerifyCheck(
                check="signature",
                status="failed",
                file=source,
                field="predicate",
                detail="the signed predicate is not the verdict's body",
            )
        )
        bad = True
    named = {verdict.body["policy"]["path"]: verdict.body["policy"]["digest"]}
    for side in ("baseline", "candidate"):
        named |= {f["path"]: f["digest"] for f in verdict.body[side]["files"]}
    for i, subject in enumerate(statement.subjects[1:], start=1):
        bad |= _differs(
            "signature",
            source,
            f"subject[{i}].digest.sha256",
            named.get(subject.name),
            subject.digest,
            f"the signed subject {subject.name!r} does not match the file the verdict names",
            out,
        )
    if not bad:
        out.append(
            _passed(
                "signature",
                source,
                f"signed by key {key_id(key)}; the statement's subject is this verdict file's bytes",
            )
        )


def _policy(verdict: VerdictFile, override: Path | None, out: list[VerifyCheck]) -> None:
    expected = verdict.body["policy"]["digest"]
    path = override if override is not None else Path(verdict.body["policy"]["path"])
    if not path.is_file():
        out.append(
            _skipped(
                "policy file",
                str(path),
                "the policy file is not reachable here, so its bytes are not re-checked (the verdict and "
                "the run set's registration still name its digest; give --policy PATH to check it)",
            )
        )
        return
    try:
        got = digest_file(path)
    except OSError as exc:
        out.append(_failed("policy file", str(path), f"unreadable: {exc}"))
        return
    if not _differs(
        "policy file", str(path), "policy.digest", expected, got, "the policy file is not the verdict's policy", out
    ):
        out.append(_passed("policy file", str(path), f"digest {got} matches"))


def _judge_labels(verdict: VerdictFile, out: list[VerifyCheck]) -> None:
    """Each human labels file a judge rule decided on (``judge_labels``): its bytes must be the ones bound."""
    for i, bound in enumerate(verdict.verdict.judge_labels):
        path = Path(bound.path)
        check = f"labels of judge {bound.judge}"
        if not path.is_file():
            why = "the labels file is not reachable here: its bytes are not re-checked (the verdict holds its digest)"
            out.append(_skipped(check, str(path), why))
            continue
        try:
            got = digest_file(path)
        except OSError as exc:
            out.append(_failed(check, str(path), f"unreadable: {exc}"))
            continue
        field = f"judge_labels[{i}].digest"
        why = "the labels file was edited after the gate decided on it"
        if not _differs(check, str(path), field, bound.digest, got, why, out):
            out.append(_passed(check, str(path), f"digest {got} matches ({bound.n_labels} labels)"))


def _read_manifest(path: Path) -> Mapping[str, Any]:
    """The run set's manifest through the records layer's strict reader (one reader, one set of rules)."""
    try:
        return read_run_set_manifest(path)
    except RecordFileError as exc:  # the caller names the file: the detail says what is wrong in it
        raise AttestationError("; ".join(f"field '{p.field}': {p.message}" for p in exc.problems)) from None


def check_registration_envelope(
    run_set: str | os.PathLike[str], key: Ed25519PublicKey, manifest: Mapping[str, Any] | None = None
) -> list[VerifyCheck]:
    """Verify ``RUN_SET/registration.intoto.jsonl`` under ``key`` against the run set's manifest.

    The statement must verify under ``key``, be a registration, and name the manifest's
    ``policy_digest``, ``policy_registered_at`` and ``run_set_id``.

    Parameters
    ----------
    run_set
        The run set directory.
    key
        The public key the registration must be signed with.
    manifest
        The run set's manifest, when already read (None: read here).

    Returns
    -------
    list of VerifyCheck
        The checks made; a failed one names file, field, expected and got.
    """
    root = Path(run_set)
    out: list[VerifyCheck] = []
    envelope_path = root / REGISTRATION_ENVELOPE
    if manifest is None:
        try:
            manifest = _read_manifest(root / MANIFEST)
        except AttestationError as exc:
            return [_failed("registration signature", str(root), str(exc))]
    found = _signed_statement(envelope_path, key, REGISTRATION_PREDICATE_TYPE, "registration signature", out)
    if found is None:
        return out
    source, statement = found
    predicate = statement.predicate
    file = str(root / MANIFEST)
    bad = False
    for field, manifest_key in (
        ("policy_digest", "policy_digest"),
        ("registered_at", "policy_registered_at"),
        ("run_set_id", "run_set_id"),
    ):
        bad |= _differs(
            "registration signature",
            file,
            manifest_key,
            predicate.get(field),
            manifest.get(manifest_key),
            f"the manifest's {manifest_key} is not the one signed at registration ({source})",
            out,
        )
    bad |= _differs(
        "registration signature",
        source,
        "subject[0].digest.sha256",
        predicate.get("policy_digest"),
        statement.subjects[0].digest,
        "the signed policy file is not the registered policy",
        out,
    )
    if not bad:
        out.append(
            _passed(
                "registration signature",
                source,
                f"registration of {predicate.get('policy_digest')} signed by key {key_id(key)}",
            )
        )
    return out


def _registration(verdict: VerdictFile, key: Ed25519PublicKey | None, side: str, out: list[VerifyCheck]) -> None:
    body = verdict.body
    info = body[side]
    if info["kind"] != "run_set":
        return
    root = Path(info["path"])
    path = root / MANIFEST
    try:
        manifest = _read_manifest(path)
    except AttestationError as exc:
        out.append(_failed("registration", str(path), str(exc)))
        return
    file = str(path)
    pairs: list[tuple[str, Any, str]] = [
        ("policy_digest", info["policy_digest"], f"{side}.policy_digest"),
        ("policy_registered_at", info["policy_registered_at"], f"{side}.policy_registered_at"),
        ("run_set_id", info["run_set_id"], f"{side}.run_set_id"),
    ]
    if side == "candidate":
        pairs += [
            ("policy_digest", body["registration"]["policy_digest"], "registration.policy_digest"),
            ("policy_registered_at", body["registration"]["registered_at"], "registration.registered_at"),
        ]
    bad = False
    for key_name, expected, where in pairs:
        bad |= _differs(
            "registration",
            file,
            key_name,
            expected,
            manifest.get(key_name),
            f"the run set's manifest no longer says what the verdict recorded ({where})",
            out,
        )
    if not bad:
        out.append(
            _passed("registration", file, f"{side}: policy digest, registration time and run set id match the verdict")
        )
    if side != "candidate":
        return
    envelope_path = root / REGISTRATION_ENVELOPE
    if key is None or not envelope_path.exists():
        why = (
            "not checked: no --key given"
            if envelope_path.exists()
            else "the registration is not signed (policy register --sign KEY)"
        )
        out.append(_skipped("registration signature", str(envelope_path), why))
        return
    out.extend(check_registration_envelope(root, key, manifest))


def _records(verdict: VerdictFile, side: str, out: list[VerifyCheck]) -> None:
    info = verdict.body[side]
    files: Sequence[Mapping[str, Any]] = info["files"]
    all_present = True
    if info["kind"] == "run_set":
        # A run set is its directory's manifest.json and records.jsonl: the verdict must name exactly those.
        expected = [str(Path(info["path"]) / RECORDS)]
        if _differs(
            "verdict consistency",
            str(verdict.path),
            f"{side}.files",
            expected,
            [f["path"] for f in files],
            f"{side}: a run set's record file is its records.jsonl",
            out,
        ):
            return
        manifest = Path(info["path"]) / MANIFEST
        if not manifest.is_file():
            all_present = False  # reported by the registration check; never hand a FIFO or device to the loader
    all_present &= _record_files(files, side, out)
    if all_present:
        _record_set(info, files, side, out)


def _record_files(files: Sequence[Mapping[str, Any]], side: str, out: list[VerifyCheck]) -> bool:
    """Check each record file's size and digest against the verdict; return whether every file is there."""
    all_present = True
    for item in files:
        path = Path(item["path"])
        file = str(path)
        if not path.is_file():
            out.append(_failed("record file", file, f"{side}: the record file the verdict names is missing"))
            all_present = False
            continue
        try:
            size, digest = path.stat().st_size, digest_file(path)
        except OSError as exc:
            out.append(_failed("record file", file, f"unreadable: {exc}"))
            all_present = False
            continue
        bad = _differs("record file", file, "size", item["size"], size, f"{side}: the record file's size changed", out)
        bad |= _differs(
            "record file", file, "digest", item["digest"], digest, f"{side}: the record file's bytes changed", out
        )
        if not bad:
            out.append(_passed("record file", file, f"{side}: {digest}, {size} bytes"))
    return all_present


def _record_set(info: Mapping[str, Any], files: Sequence[Mapping[str, Any]], side: str, out: list[VerifyCheck]) -> None:
    """Load the side's records as the gate did and check the set digest and record count against the verdict."""
    target: str | list[str] = info["path"] if info["kind"] == "run_set" else [f["path"] for f in files]
    where = str(info["path"])
    try:
        records = load_record_set(target)
    except (GatestatsError, ValueError, OSError) as exc:
        out.append(_failed("record set", where, f"{side}: does not load: {exc}"))
        return
    bad = _differs("record set", where, f"{side}.digest", info["digest"], records.digest, f"{side}: set digest", out)
    bad |= _differs(
        "record set", where, f"{side}.n_records", info["n_records"], records.n_records, f"{side}: record count", out
    )
    if not bad:
        out.append(
            _passed(
                "record set", where, f"{side}: {records.n_records} records load and check (digest {records.digest})"
            )
        )


def verify_verdict(
    verdict: str | os.PathLike[str],
    *,
    key: Ed25519PublicKey | None = None,
    envelope: str | os.PathLike[str] | None = None,
    policy: str | os.PathLike[str] | None = None,
) -> VerificationReport:
    """Re-check a verdict file and everything it names.

    Parameters
    ----------
    verdict
        The verdict file (``gatestats-verdict/1``).
    key
        Ed25519 public key: when given, the verdict must carry a signature by it
        (``<verdict>.intoto.jsonl``), and a signed registration in the candidate run set is checked.
    envelope
        Another place of the verdict's envelope bundle.
    policy
        Another place of the policy file (default: the path the verdict names).

    Returns
    -------
    VerificationReport
        One check per item: verdict digest, consistency, signature, policy file, registration per
        run set, each record file and each record set as loaded.

    Raises
    ------
    AttestationError
        The verdict file cannot be read strictly (file and field named).
    """
    read = read_verdict_file(verdict)
    out: list[VerifyCheck] = []
    _verdict_itself(read, out)
    envelope_path = Path(envelope) if envelope is not None else verdict_envelope_path(read.path)
    if key is not None:
        _signature(read, key, envelope_path, out)
    else:
        why = (
            "not checked: no --key given (without a key the digest shows consistency, not authorship)"
            if envelope_path.exists()
            else "the verdict is not signed (gate -o VERDICT --sign KEY); anyone can recompute its digest"
        )
        out.append(_skipped("signature", str(envelope_path), why))
    _policy(read, None if policy is None else Path(policy), out)
    _judge_labels(read, out)
    for side in ("baseline", "candidate"):
        _registration(read, key, side, out)
    for side in ("baseline", "candidate"):
        _records(read, side, out)
    return VerificationReport(
        verdict=str(read.path),
        file_digest=read.file_digest,
        key_id=None if key is None else key_id(key),
        checks=tuple(out),
    )
