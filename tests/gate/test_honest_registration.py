"""A policy registered at import is said to be one, in words, wherever the verdict is read (issue 24, item 4).

``gatestats import … --run-set … --policy`` registers the policy after the outcomes existed (a 2024
τ-bench file, looked at before the policy was written). The verdict's ``registration`` says so
(``preregistered: false`` and a notice), and so do the terminal, the Markdown summary and the
release report; ``require_preregistration = true`` refuses such a run set (exit 2, no verdict).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import (
    PolicyError,
    Registration,
    RegistrationError,
    VerdictFileError,
    evaluate_gate,
    load_policy,
    load_record_set,
    parse_policy,
    write_verdict,
)
from gatestats.gate._typed import build
from gatestats.gate.registration import NOT_PREREGISTERED
from gatestats.gate.verdict import read_verdict
from gatestats.report.release import (
    check_record_files,
    compute_tables,
    load_release_data,
    load_sides,
    section_html,
    write_data,
)
from tests.gate.factory import policy_text, write_run_set

TAU_RAW = Path("data/tau_bench/raw/gpt-4o-airline.json")
RULE = """
[[rules]]
name = "floor"
metric = "pass_rate"
threshold = 0.2
"""
NOW = "2026-12-03T12:00:00Z"


def _tau_policy(directory: Path, *, require: bool | None = None) -> Path:
    extra = "" if require is None else f"require_preregistration = {str(require).lower()}\n"
    text = policy_text(RULE, min_cases=50, extra=extra)
    text = text.replace('pins = { model_id = "model-new" }', 'pins = { model_id = "gpt-4o" }')
    text = text.replace('system = "baseline"', 'system = "tc-gpt-4o"').replace(
        'system = "candidate"', 'system = "tc-gpt-4o"'
    )
    path = directory / "policy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _import(directory: Path, name: str, policy: Path | None) -> Path:
    args = ["import", "tau-bench", str(TAU_RAW), "--system", "tc-gpt-4o", "--model-id", "gpt-4o"]
    args += ["--run-set", str(directory / name)] + ([] if policy is None else ["--policy", str(policy)])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return directory / name


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A τ-bench baseline and a candidate whose policy was registered at import: (policy, base, cand)."""
    root = tmp_path_factory.mktemp("honest")
    policy = _tau_policy(root)
    return policy, _import(root, "base", None), _import(root, "cand", policy)


def test_the_verdict_says_the_registration_is_not_a_preregistration(imported: tuple[Path, Path, Path]) -> None:
    policy, base, cand = imported
    verdict = evaluate_gate(load_policy(policy), load_record_set(base), load_record_set(cand), now=NOW)
    reg = verdict.to_dict()["registration"]
    assert reg["origin"] == "import"
    assert reg["preregistered"] is False
    assert NOT_PREREGISTERED in reg["notice"]
    assert reg["registered_at"] in reg["notice"]
    assert list(reg)[-2:] == ["preregistered", "notice"]  # new fields at the end
    assert verdict.verdict == "pass"  # the default policy still gates imported results: said, not refused


def test_terminal_and_markdown_say_it_in_words(imported: tuple[Path, Path, Path], tmp_path: Path) -> None:
    policy, base, cand = imported
    md = tmp_path / "summary.md"
    args = ["gate", "--policy", str(policy), "--baseline", str(base), "--candidate", str(cand)]
    result = CliRunner().invoke(app, [*args, "--markdown", str(md)])
    assert result.exit_code == 0, result.output
    assert f"registration: policy {NOT_PREREGISTERED}" in " ".join(result.stdout.split())
    text = md.read_text(encoding="utf-8")
    assert f"<strong>Registration:</strong> policy {NOT_PREREGISTERED}" in text
    assert text.index("Registration:") < text.index("### Rules")  # at the top, beside the verdict


def test_the_release_report_says_it_beside_the_verdict_and_in_provenance(
    imported: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    policy, base, cand = imported
    verdict = evaluate_gate(load_policy(policy), load_record_set(base), load_record_set(cand), now=NOW)
    read = read_verdict(write_verdict(verdict, tmp_path / "verdict.json"))
    tables, provenance = compute_tables(read, load_sides(read, check_record_files(read)))
    write_data(tmp_path / "data", read, tables, provenance)
    data = load_release_data(tmp_path / "data")
    top = section_html(data, "verdict")
    assert f"<strong>Registration:</strong> policy {NOT_PREREGISTERED}" in top
    assert top.index("Registration:") < top.index("Reasons")
    assert f"<strong>no</strong>: policy {NOT_PREREGISTERED}" in section_html(data, "provenance")


def test_require_preregistration_refuses_an_import_registration(
    imported: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, base, _ = imported
    (tmp_path / "p").mkdir()
    strict = _tau_policy(tmp_path / "p", require=True)
    assert load_policy(strict).require_preregistration is True
    cand = _import(tmp_path, "cand-strict", strict)  # the import registers the strict policy itself
    with pytest.raises(RegistrationError, match="require_preregistration = true") as caught:
        evaluate_gate(load_policy(strict), load_record_set(base), load_record_set(cand), now=NOW)
    assert NOT_PREREGISTERED in str(caught.value)
    # Through the CLI: a refused registration is exit 2 with no verdict written (as for an edited policy).
    out = tmp_path / "verdict.json"
    args = ["gate", "--policy", str(strict), "--baseline", str(base), "--candidate", str(cand), "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "require_preregistration = true" in " ".join(result.output.split())
    assert NOT_PREREGISTERED in " ".join(result.output.split())
    assert not out.exists()


def test_require_preregistration_passes_a_runner_registration(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(policy_text(RULE, extra="require_preregistration = true\n"), encoding="utf-8")
    policy = load_policy(path)
    outcomes = {f"c{i}": ["passed"] for i in range(12)}
    base = write_run_set(tmp_path / "b", system="baseline", outcomes=outcomes)
    cand = write_run_set(tmp_path / "c", system="candidate", outcomes=outcomes, policy=policy)
    verdict = evaluate_gate(policy, load_record_set(base), load_record_set(cand), now=NOW)
    assert verdict.verdict == "pass", verdict.reasons
    assert verdict.registration.preregistered is True
    assert verdict.registration.notice is None
    assert "Registration:" not in verdict.to_markdown()


def test_require_preregistration_must_be_a_boolean() -> None:
    text = policy_text(RULE, extra='require_preregistration = "yes"\n').encode()
    with pytest.raises(PolicyError, match=r"key 'require_preregistration': expected a boolean \(got a string 'yes'\)"):
        parse_policy(text)
    assert parse_policy(policy_text(RULE).encode()).require_preregistration is False  # the default


def test_a_verdict_written_before_the_fields_reads_back_unchanged_and_still_says_it() -> None:
    old = {
        "run_set": "runs/cand",
        "policy_digest": "sha256:ab",
        "registered_at": "2026-01-01T00:00:00Z",
        "first_record_at": "2024-05-01T00:00:00Z",
        "origin": "import",
    }
    reg = build(Registration, old)
    assert reg.to_dict() == old  # the verdict's digest still checks: no field appears on reading
    assert reg.is_preregistration is False
    assert NOT_PREREGISTERED in (reg.notice_text or "")
    runner = build(Registration, {**old, "origin": "runner"})
    assert runner.is_preregistration is True
    assert runner.notice_text is None


def test_an_edited_verdict_cannot_claim_a_preregistration_without_breaking_its_digest(
    imported: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    policy, base, cand = imported
    verdict = evaluate_gate(load_policy(policy), load_record_set(base), load_record_set(cand), now=NOW)
    path = write_verdict(verdict, tmp_path / "v.json")
    edited = json.loads(path.read_text())
    edited["registration"]["preregistered"] = True
    edited["registration"]["notice"] = None
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    with pytest.raises(VerdictFileError, match="does not match its digest"):
        read_verdict(tmp_path / "edited.json")


def _edited_copy(cand: Path, tmp_path: Path, drop: tuple[str, ...] = ()) -> Path:
    """The imported candidate with its manifest's origin edited to "runner" (and ``drop`` fields removed)."""
    copy = tmp_path / "edited"
    shutil.copytree(cand, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["origin"] = "runner"
    for key in drop:
        del manifest[key]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


def test_an_origin_edited_to_runner_does_not_make_an_import_a_preregistration(
    imported: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    policy, base, cand = imported
    edited = _edited_copy(cand, tmp_path)
    reg = evaluate_gate(load_policy(policy), load_record_set(base), load_record_set(edited), now=NOW).registration
    assert reg.origin == "runner"
    assert reg.preregistered is False
    assert NOT_PREREGISTERED in (reg.notice or "")
    assert "the manifest says origin 'runner' but carries the import's imported_at" in (reg.notice or "")


def test_records_without_start_times_cannot_show_a_preregistration(
    imported: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    policy, base, cand = imported
    edited = _edited_copy(cand, tmp_path, drop=("imported_at", "imported_by", "source_digest"))
    reg = evaluate_gate(load_policy(policy), load_record_set(base), load_record_set(edited), now=NOW).registration
    assert reg.preregistered is False  # τ-bench records carry no start time: nothing to compare the registration with
    assert "no record carries a start time" in (reg.notice or "")
    assert "not a pre-registration" in (reg.notice or "")
