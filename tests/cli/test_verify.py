"""``gatestats verify``, ``gate --sign``, ``policy register --sign`` and ``key generate`` through the CLI.

Each refusal is checked for its reason (file, field, expected and got), exit 1 and no traceback.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from gatestats.attest import generate_key_pair, load_private_key, sign_verdict
from gatestats.attest.dsse import IN_TOTO_PAYLOAD_TYPE, sign_envelope
from gatestats.attest.statement import VERDICT_PREDICATE_TYPE, Statement, Subject
from gatestats.gate import verdict_digest
from gatestats.gate.verdict import verdict_file_bytes
from tests.attest.scenario import Scenario, build, cli


@pytest.fixture
def signed(tmp_path: Path) -> Scenario:
    """A ``fail`` verdict written with ``gate -o --sign``, its registration signed too."""
    scenario = build(tmp_path, sign_registration=True)
    result = scenario.gate("-o", scenario.verdict, "--sign", scenario.private_key)
    assert result.exit_code == 11, result.output
    return scenario


def _verify(scenario: Scenario, *extra: object, key: bool = True) -> tuple[Result, dict[str, Any]]:
    args: list[object] = ["verify", scenario.verdict, "--json", *extra]
    if key:
        args += ["--key", scenario.public_key]
    result = cli(*args)
    _no_traceback(result)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        report = {}
    return result, report


def _failed(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["status"] == "failed"]


def _no_traceback(result: Result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


def _rewrite(path: Path, change: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    change(body)
    path.chmod(0o644)
    path.write_bytes(verdict_file_bytes(body))
    return body


def test_signed_verdict_and_registration_verify_with_the_public_key(signed: Scenario) -> None:
    assert signed.envelope.is_file()
    result, report = _verify(signed)
    assert result.exit_code == 0, result.output
    assert report["verified"] is True
    statuses = {(c["check"], c["status"]) for c in report["checks"]}
    assert ("signature", "ok") in statuses
    assert ("registration signature", "ok") in statuses
    assert report["counts"] == {"ok": 11, "failed": 0, "skipped": 0}
    text = cli("verify", signed.verdict, "--key", signed.public_key)
    assert text.exit_code == 0
    assert "verified: 11 checks passed, 0 skipped" in text.stdout


def test_decision_changed_and_digest_recomputed_is_caught_only_by_the_signature(signed: Scenario) -> None:
    def forge(body: dict[str, Any]) -> None:
        body["verdict"], body["exit_code"], body["reasons"] = "pass", 0, []
        for row in body["rules"]:
            row["decision"] = "pass"
        body["digest"] = verdict_digest(body)

    _rewrite(signed.verdict, forge)
    unsigned_check, _ = _verify(signed, key=False)
    assert unsigned_check.exit_code == 0  # without a key a recomputed digest is indistinguishable: why we sign
    result, report = _verify(signed)
    _no_traceback(result)
    assert result.exit_code == 1
    (failure,) = _failed(report)
    assert failure["check"] == "signature"
    assert failure["field"] == "subject[0].digest.sha256"
    assert failure["expected"] == repr(report["file_digest"])
    assert "the verdict file changed after signing" in failure["detail"]
    assert "error: " in result.stderr
    assert "field 'subject[0].digest.sha256'" in result.stderr


def test_edited_verdict_without_new_digest_fails_its_own_digest(signed: Scenario) -> None:
    body = _rewrite(signed.verdict, lambda b: b.update(verdict="pass", exit_code=0))
    result, report = _verify(signed, key=False)
    assert result.exit_code == 1
    (failure,) = _failed(report)
    assert (failure["check"], failure["field"]) == ("verdict digest", "digest")
    assert failure["got"] == repr(body["digest"])
    assert "edited after it was written" in failure["detail"]


def test_exit_code_that_does_not_belong_to_the_verdict_is_refused(signed: Scenario) -> None:
    def forge(body: dict[str, Any]) -> None:
        body["exit_code"] = 0
        body["digest"] = verdict_digest(body)

    _rewrite(signed.verdict, forge)
    result, report = _verify(signed, key=False)
    assert result.exit_code == 1
    (failure,) = _failed(report)
    assert (failure["check"], failure["field"], failure["expected"], failure["got"]) == (
        "verdict consistency",
        "exit_code",
        "11",
        "0",
    )


def test_edited_record_file_is_refused_naming_file_and_field(signed: Scenario) -> None:
    records = signed.candidate / "records.jsonl"
    lines = records.read_text(encoding="utf-8").splitlines(keepends=True)
    i = next(n for n, line in enumerate(lines) if '"outcome":"failed"' in line)
    lines[i] = lines[i].replace('"outcome":"failed"', '"outcome":"passed"')
    records.write_text("".join(lines), encoding="utf-8")
    result, report = _verify(signed)
    _no_traceback(result)
    assert result.exit_code == 1
    failures = _failed(report)
    digest = next(f for f in failures if f["check"] == "record file")
    assert digest["file"] == str(records)
    assert digest["field"] == "digest"
    assert "candidate: the record file's bytes changed" in digest["detail"]
    assert {f["check"] for f in failures} <= {"record file", "record set"}


def test_record_file_removed_is_refused(signed: Scenario) -> None:
    (signed.baseline / "records.jsonl").unlink()
    result, report = _verify(signed)
    assert result.exit_code == 1
    (failure,) = _failed(report)
    assert failure["detail"] == "baseline: the record file the verdict names is missing"


def test_verdict_resigned_with_another_key_is_refused_as_key_id_mismatch(signed: Scenario, tmp_path: Path) -> None:
    other = generate_key_pair(tmp_path / "attacker")

    def forge(body: dict[str, Any]) -> None:
        body["verdict"], body["exit_code"] = "pass", 0
        body["digest"] = verdict_digest(body)

    body = _rewrite(signed.verdict, forge)
    envelope = sign_verdict(body, signed.verdict.read_bytes(), name="verdict.json", key=load_private_key(other.private))
    signed.envelope.unlink()
    signed.envelope.write_bytes(envelope.to_json_line())
    result, report = _verify(signed)
    _no_traceback(result)
    assert result.exit_code == 1
    (failure,) = _failed(report)
    assert failure["check"] == "signature"
    assert f"key id mismatch: signed with key {other.key_id}, not with the given key" in failure["detail"]
    # Under the attacker's own key the forged verdict's signature verifies (the verifier chooses the key it
    # trusts), but the candidate's registration, signed with the real key, then does not.
    result = cli("verify", signed.verdict, "--key", other.public, "--json")
    assert result.exit_code == 1
    checks = {(c["check"], c["status"]) for c in json.loads(result.stdout)["checks"]}
    assert ("signature", "ok") in checks
    assert ("registration signature", "failed") in checks


def test_envelope_about_other_bytes_is_refused_even_when_the_key_is_right(signed: Scenario) -> None:
    key = load_private_key(signed.private_key)
    statement = Statement(
        subjects=(Subject(name="verdict.json", sha256="0" * 64),),
        predicate_type=VERDICT_PREDICATE_TYPE,
        predicate=json.loads(signed.verdict.read_text(encoding="utf-8")),
    )
    signed.envelope.unlink()
    signed.envelope.write_bytes(sign_envelope(statement.to_payload(), IN_TOTO_PAYLOAD_TYPE, key).to_json_line())
    result, report = _verify(signed)
    assert result.exit_code == 1
    (failure,) = _failed(report)
    assert failure["field"] == "subject[0].digest.sha256"
    assert failure["got"] == repr("sha256:" + "0" * 64)


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda b: b[: len(b) // 2], "the last line has no newline (a truncated envelope file)"),
        (lambda b: b[: len(b) // 2] + b"\n", "not valid JSON"),
        (lambda b: b"\x00\xff garbage\n", "not valid UTF-8"),
        (lambda b: b"", "empty: no envelope"),
        (lambda b: b"{}\n", "field 'payloadType': expected a string (got nothing)"),
        (lambda b: b.replace(b'"sig":"', b'"sig":"!!'), "not base64"),
        (lambda b: b.replace(b'"payload":"', b'"payload":"AAAA'), "bad signature"),
    ],
    ids=["truncated", "cut-with-newline", "garbage", "empty", "empty-object", "bad-base64", "payload-changed"],
)
def test_damaged_envelope_exits_1_with_reason_and_no_traceback(signed: Scenario, mangle: Any, message: str) -> None:
    data = signed.envelope.read_bytes()
    signed.envelope.unlink()
    signed.envelope.write_bytes(mangle(data))
    result, report = _verify(signed)
    _no_traceback(result)
    assert result.exit_code == 1
    (failure,) = _failed(report)
    assert failure["check"] == "signature"
    assert message in failure["detail"]
    assert str(signed.envelope) in failure["file"]


def test_a_key_without_an_envelope_is_refused(signed: Scenario) -> None:
    signed.envelope.unlink()
    result, report = _verify(signed)
    assert result.exit_code == 1
    (failure,) = _failed(report)
    assert failure["detail"].startswith("no envelope: a key was given")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t.replace('"verdict": "fail"', '"verdict": "fail", "verdict": "pass"'),
            "field 'verdict': duplicate key",
        ),
        (lambda t: t.replace('"exit_code": 11', '"exit_code": NaN'), "NaN is not a JSON number"),
        (
            lambda t: t.replace('"exit_code": 11', '"exit_code": "11"'),
            "field 'exit_code': expected one of 0, 10, 11, 12 (got string '11')",
        ),
        (
            lambda t: t.replace('"exit_code": 11', '"exit_code": true'),
            "field 'exit_code': expected one of 0, 10, 11, 12 (got boolean True)",
        ),
        (
            lambda t: t.replace('"verdict": "fail"', '"verdict": "maybe"'),
            "field 'verdict': expected one of 'pass', 'warn', 'fail', 'insufficient_evidence'",
        ),
        (lambda t: t.replace('"format"', '"forged": 1, "format"', 1), "field 'forged': unknown verdict field"),
        (
            lambda t: t.replace('"n_records": 100,', '"n_records": -1,', 1),
            "field 'baseline.n_records': expected an integer in [0, 2^63)",
        ),
        (
            lambda t: t.replace('"size": ', '"size": 1e999, "x": ', 1),
            "not valid JSON: number 1e999 overflows a 64-bit float",
        ),
        (lambda t: "[" * 100 + "]" * 100, "nested deeper than 32 levels"),
        (lambda t: t[:100], "not valid JSON"),
    ],
    ids=[
        "duplicate",
        "nan",
        "string-int",
        "bool-int",
        "unknown-verdict",
        "unknown-field",
        "negative",
        "overflow",
        "deep",
        "cut",
    ],
)
def test_verdict_is_read_strictly(signed: Scenario, edit: Any, message: str) -> None:
    text = signed.verdict.read_text(encoding="utf-8")
    changed = edit(text)
    assert changed != text
    signed.verdict.unlink()
    signed.verdict.write_text(changed, encoding="utf-8")
    result = cli("verify", signed.verdict)
    _no_traceback(result)
    assert result.exit_code == 1
    assert f"error: {signed.verdict}" in result.stderr
    assert message in result.stderr


def test_policy_edited_after_the_gate_is_refused_and_a_missing_policy_is_said_plainly(signed: Scenario) -> None:
    original = signed.policy.read_bytes()
    signed.policy.write_bytes(original + b"\n# edited\n")
    result, report = _verify(signed)
    assert result.exit_code == 1
    (failure,) = _failed(report)
    assert (failure["check"], failure["field"]) == ("policy file", "policy.digest")
    signed.policy.unlink()
    result, report = _verify(signed)
    assert result.exit_code == 0
    (skipped,) = [c for c in report["checks"] if c["status"] == "skipped"]
    assert "the policy file is not reachable here" in skipped["detail"]
    moved = signed.policy.with_name("elsewhere.toml")
    moved.write_bytes(original)
    result, report = _verify(signed, "--policy", moved)
    assert result.exit_code == 0
    assert report["counts"]["skipped"] == 0


def test_registration_edited_in_the_manifest_is_refused(signed: Scenario) -> None:
    manifest_path = signed.candidate / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["policy_registered_at"] = "2020-01-01T00:00:00Z"
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    result, report = _verify(signed)
    assert result.exit_code == 1
    fields = {(f["check"], f["field"]) for f in _failed(report)}
    assert ("registration", "policy_registered_at") in fields
    assert ("registration signature", "policy_registered_at") in fields


def test_gate_sign_needs_output_and_a_usable_key_and_writes_nothing_otherwise(tmp_path: Path) -> None:
    scenario = build(tmp_path)
    result = scenario.gate("--sign", scenario.private_key)
    assert result.exit_code == 2
    assert "--sign: signs the verdict file, so it needs -o/--output VERDICT" in result.stderr
    result = scenario.gate("-o", scenario.verdict, "--sign", scenario.public_key)
    assert result.exit_code == 2
    assert "(got a public key)" in result.stderr
    assert not scenario.verdict.exists()
    scenario.envelope.parent.mkdir()
    scenario.envelope.write_text("someone else's")
    result = scenario.gate("-o", scenario.verdict, "--sign", scenario.private_key)
    assert result.exit_code == 2
    assert "the envelope already exists; it is never replaced" in result.stderr
    assert not scenario.verdict.exists()


def test_unsigned_verdict_verifies_and_says_it_is_not_signed(tmp_path: Path) -> None:
    scenario = build(tmp_path)
    assert scenario.gate("-o", scenario.verdict).exit_code == 11
    result, report = _verify(scenario, key=False)
    assert result.exit_code == 0
    details = [c["detail"] for c in report["checks"] if c["status"] == "skipped"]
    assert any("the verdict is not signed" in d for d in details)
    assert any("the registration is not signed" in d for d in details)
    refused, _ = _verify(scenario)
    assert refused.exit_code == 1


def test_policy_register_sign_twice_keeps_the_first_envelope(tmp_path: Path, signed: Scenario) -> None:
    run_set = tmp_path / "prepared"
    run_set.mkdir()
    (run_set / "manifest.json").write_text(json.dumps({"format": "gatestats-run-set/1", "run_set_id": "rs-x"}))
    first = cli("policy", "register", signed.policy, run_set, "--sign", signed.private_key)
    assert first.exit_code == 0, first.output
    envelope = run_set / "registration.intoto.jsonl"
    data = envelope.read_bytes()
    again = cli("policy", "register", signed.policy, run_set, "--sign", signed.private_key)
    assert again.exit_code == 0
    assert "already signed" in again.stdout
    other = generate_key_pair(tmp_path / "other")
    refused = cli("policy", "register", signed.policy, run_set, "--sign", other.private)
    assert refused.exit_code == 2
    assert "key id mismatch" in refused.stderr
    assert envelope.read_bytes() == data


def test_key_generate_writes_a_0600_private_key_once(tmp_path: Path) -> None:
    result = cli("key", "generate", "--out", tmp_path / "release")
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE((tmp_path / "release.key").stat().st_mode) == 0o600
    assert "key id:      sha256:" in result.stdout
    before = (tmp_path / "release.key").read_bytes()
    again = cli("key", "generate", "--out", tmp_path / "release")
    assert again.exit_code == 2
    assert "release.key: exists; a key file is never replaced" in again.stderr
    assert (tmp_path / "release.key").read_bytes() == before


def test_verify_key_option_refuses_a_private_key(signed: Scenario) -> None:
    result = cli("verify", signed.verdict, "--key", signed.private_key)
    assert result.exit_code == 2
    assert "expected an Ed25519 public key (got a private key" in result.stderr


def test_paths_in_an_unsigned_verdict_cannot_block_verify_or_forge_its_output(tmp_path: Path) -> None:
    scenario = build(tmp_path)
    assert scenario.gate("-o", scenario.verdict).exit_code == 11
    trap = tmp_path / "trap"
    trap.mkdir()
    os.mkfifo(trap / "manifest.json")  # opening a FIFO for reading would wait for a writer forever

    def forge(body: dict[str, Any]) -> None:
        body["candidate"]["path"] = str(trap)
        body["policy"]["path"] = "x\n\x1b[2Jverified: 11 checks passed"
        body["digest"] = verdict_digest(body)

    _rewrite(scenario.verdict, forge)
    result = cli("verify", scenario.verdict)
    _no_traceback(result)
    assert result.exit_code == 1
    assert f"{trap / 'manifest.json'}: field '<file>': the manifest must be a regular file" in result.stderr
    assert "\x1b" not in result.output
    assert "\nverified" not in result.output
    assert "x\\n\\x1b[2Jverified" in result.stdout
