"""Registering a policy before the first record: run --policy, run --prepare + policy register, import --policy."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import RegistrationError, load_policy, load_record_set, register_policy
from tests.gate.factory import policy_text, write_run_set

RULE = """
[[rules]]
name = "floor"
metric = "pass_rate"
threshold = 0.2
"""

TAU_RAW = Path("data/tau_bench/raw/gpt-4o-airline.json")


def _policy(tmp_path: Path, text: str | None = None) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text or policy_text(RULE))
    return path


def test_register_writes_digest_and_time_before_any_record(tmp_path: Path) -> None:
    policy = load_policy(_policy(tmp_path))
    rs = write_run_set(tmp_path / "rs", system="candidate", outcomes={"a": ["passed"]})
    (rs / "records.jsonl").write_text("")
    reg = register_policy(policy, rs)
    manifest = json.loads((rs / "manifest.json").read_text())
    assert manifest["policy_digest"] == policy.digest
    assert manifest["policy_registered_at"] == reg.registered_at
    assert register_policy(policy, rs).registered_at == reg.registered_at  # the same policy again: no-op
    (tmp_path / "o").mkdir()
    other = load_policy(_policy(tmp_path / "o", policy_text(RULE + "\n")))
    with pytest.raises(RegistrationError, match="another policy is registered"):
        register_policy(other, rs)


def test_register_is_refused_once_a_record_exists(tmp_path: Path) -> None:
    _policy(tmp_path)
    rs = write_run_set(tmp_path / "rs", system="candidate", outcomes={"a": ["passed"]})
    result = CliRunner().invoke(app, ["policy", "register", str(tmp_path / "policy.toml"), str(rs)])
    assert result.exit_code == 2
    assert (
        "the run set already has records: a policy must be registered before the first record exists" in result.output
    )
    assert json.loads((rs / "manifest.json").read_text())["policy_digest"] is None


def test_import_with_policy_registers_at_import_and_gates(tmp_path: Path) -> None:
    text = policy_text(RULE, min_cases=50).replace(
        'pins = { model_id = "model-new" }', 'pins = { model_id = "gpt-4o" }'
    )
    text = text.replace('system = "baseline"', 'system = "tc-gpt-4o"').replace(
        'system = "candidate"', 'system = "tc-gpt-4o"'
    )
    policy_path = _policy(tmp_path, text)
    runner = CliRunner()
    base = runner.invoke(
        app, ["import", "tau-bench", str(TAU_RAW), "--system", "tc-gpt-4o", "--run-set", str(tmp_path / "base")]
    )
    assert base.exit_code == 0, base.output
    cand = runner.invoke(
        app,
        [
            "import", "tau-bench", str(TAU_RAW), "--system", "tc-gpt-4o", "--model-id", "gpt-4o",
            "--run-set", str(tmp_path / "cand"), "--policy", str(policy_path),
        ],
    )  # fmt: skip
    assert cand.exit_code == 0, cand.output
    manifest = json.loads((tmp_path / "cand" / "manifest.json").read_text())
    assert manifest["origin"] == "import"
    assert manifest["policy_digest"] == load_policy(policy_path).digest
    assert load_record_set(tmp_path / "cand").n_records == 200
    gate = runner.invoke(
        app,
        [
            "gate",
            "--policy",
            str(policy_path),
            "--baseline",
            str(tmp_path / "base"),
            "--candidate",
            str(tmp_path / "cand"),
            "--json",
        ],
    )
    body = json.loads(gate.stdout)
    assert body["registration"]["origin"] == "import"
    assert body["verdict"] == "pass", body["reasons"]  # pass rate 0.42 is shown above 0.2 on 50 tasks
    again = runner.invoke(app, ["import", "tau-bench", str(TAU_RAW), "--run-set", str(tmp_path / "cand")])
    assert again.exit_code == 1
    assert "exists; an imported run set is written once" in again.output


def test_import_policy_needs_a_run_set(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["import", "tau-bench", str(TAU_RAW), "-o", str(tmp_path / "x.jsonl"), "--policy", str(_policy(tmp_path))],
    )
    assert result.exit_code == 2
    assert "--policy registers a policy in a run set: it needs --run-set DIR" in result.output


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("bwrap") is None, reason="the sandboxed runner needs root and bwrap"
)
def test_prepare_register_then_resume_runs_under_the_registered_policy(tmp_path: Path) -> None:
    cases = Path("data/golden_example/cases")
    fixed = Path("data/golden_example/candidates/fixed")
    policy_path = _policy(tmp_path, policy_text(RULE, min_cases=3))
    out = tmp_path / "rs"
    runner = CliRunner()
    common = [
        "run",
        str(cases),
        "--candidate",
        str(fixed),
        "--trials",
        "1",
        "--out",
        str(out),
        "--system",
        "candidate",
        "--model-id",
        "model-new",
    ]
    prepared = runner.invoke(app, [*common, "--prepare"])
    assert prepared.exit_code == 0, prepared.output
    assert not (out / "records.jsonl").exists() or (out / "records.jsonl").stat().st_size == 0
    registered = runner.invoke(app, ["policy", "register", str(policy_path), str(out)])
    assert registered.exit_code == 0, registered.output
    resumed = runner.invoke(app, [*common, "--resume"])
    assert resumed.exit_code == 0, resumed.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True
    assert manifest["policy_digest"] == load_policy(policy_path).digest
    records = load_record_set(out)
    assert records.n_records == 3
