"""Zero records is never "ok": every command that reads records refuses an empty input, naming it (issue 24).

Each command of ``gatestats --help`` that reads records, a results table, judgments or a run set
is run on an empty file, a file of blank lines, a header without rows and an empty run set; the
exit must be non-zero, the file named, no traceback and nothing printed as a result.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import load_policy
from tests.fuzz.corpus import JUDGE_MAP, base_records, records_jsonl
from tests.gate.factory import policy_text, rewrite_records, write_run_set

EMPTY_INPUTS = {
    "empty.jsonl": b"",
    "blank.jsonl": b"\n\n   \n\t\n",
    "header.csv": b"schema_version,record_id,run_set_id,system,case_id,case_version,trial,attempt,outcome\n",
}


def _run(args: list[str]) -> Result:
    return CliRunner().invoke(app, args)


def _assert_refused(result: Result, named: Path, *, codes: tuple[int, ...] = (1,)) -> None:
    assert result.exit_code in codes, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert str(named) in result.output, result.output
    assert "ok:" not in result.output


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, data in EMPTY_INPUTS.items():
        out[name] = tmp_path / name
        out[name].write_bytes(data)
    good = tmp_path / "good.jsonl"
    good.write_bytes(records_jsonl(base_records()))
    out["good"] = good
    return out


@pytest.mark.parametrize("name", sorted(EMPTY_INPUTS))
@pytest.mark.parametrize(
    "command",
    [
        ["validate"],
        ["analyze"],
        ["analyze", "--json"],
        ["cost"],
        ["compare", "--baseline", "baseline", "--candidate", "candidate"],
        ["plan", "cases-trials", "--system", "baseline", "--mde", "0.1", "--pilot"],
    ],
    ids=lambda c: " ".join(c[:2]) if isinstance(c, list) else c,
)
def test_every_record_command_refuses_an_empty_file_naming_it(
    inputs: dict[str, Path], command: list[str], name: str
) -> None:
    result = _run([*command, str(inputs[name])])
    _assert_refused(result, inputs[name])


@pytest.mark.parametrize("command", [["validate"], ["analyze"], ["cost"], ["compare", "--baseline", "baseline"]])
def test_an_empty_file_beside_a_good_one_is_named(inputs: dict[str, Path], command: list[str]) -> None:
    args = [*command, "--candidate", "candidate"] if command[0] == "compare" else command
    result = _run([*args, str(inputs["good"]), str(inputs["blank.jsonl"])])
    _assert_refused(result, inputs["blank.jsonl"])
    assert _run([*args, str(inputs["good"])]).exit_code in (0, 11, 12)  # the good file alone is read


def test_validate_says_ok_only_with_records(inputs: dict[str, Path]) -> None:
    result = _run(["validate", str(inputs["good"])])
    assert result.exit_code == 0
    assert result.output.startswith("ok: 48 records in 1 file(s)")


def _empty_run_set(root: Path, *, system: str, policy: Path | None = None) -> Path:
    loaded = None if policy is None else load_policy(policy)
    write_run_set(root, system=system, outcomes={"c00": ["passed"]}, policy=loaded)
    rewrite_records(root, [])
    return root


def test_gate_refuses_an_empty_candidate_or_baseline_run_set(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(policy_text('[[rules]]\nname = "r"\nmetric = "pass_rate"\nthreshold = 0.5\n'), encoding="utf-8")
    outcomes = {f"c{i:02d}": ["passed"] for i in range(12)}
    base = write_run_set(tmp_path / "base", system="baseline", outcomes=outcomes)
    cand = _empty_run_set(tmp_path / "cand", system="candidate", policy=policy)
    verdict = tmp_path / "v.json"
    args = ["gate", "--policy", str(policy), "--baseline", str(base), "--candidate", str(cand), "-o", str(verdict)]
    result = _run(args)
    assert result.exit_code != 0, result.output
    assert "verdict: pass" not in result.output
    assert str(cand) in result.output
    if verdict.exists():  # an insufficient-evidence verdict may be written; never a pass
        assert json.loads(verdict.read_text(encoding="utf-8"))["verdict"] != "pass"
    empty_base = _empty_run_set(tmp_path / "base0", system="baseline")
    full_cand = write_run_set(tmp_path / "cand1", system="candidate", outcomes=outcomes, policy=load_policy(policy))
    result = _run(["gate", "--policy", str(policy), "--baseline", str(empty_base), "--candidate", str(full_cand)])
    assert result.exit_code != 0, result.output
    assert str(empty_base) in result.output


def test_drift_refuses_an_empty_run_set_as_the_rerun_naming_it(tmp_path: Path) -> None:
    outcomes = {f"c{i:02d}": ["passed"] for i in range(12)}
    stored = write_run_set(tmp_path / "stored", system="baseline", outcomes=outcomes)
    rerun = _empty_run_set(tmp_path / "rerun", system="baseline")
    result = _run(["drift", str(stored), str(rerun)])
    assert result.exit_code != 0, result.output
    assert str(rerun) in result.output
    assert "stable" not in result.output


def test_calibrate_refuses_judgments_without_rows_in_both_modes(tmp_path: Path) -> None:
    judgments = tmp_path / "j.csv"
    judgments.write_text("id,human,judge,score\n", encoding="utf-8")
    for extra in ([], ["--classes", "pass,fail"]):
        result = _run(
            ["calibrate", str(judgments), "--map", JUDGE_MAP.replace(",score=score", ""), "--positive", "pass", *extra]
        )
        _assert_refused(result, judgments)


@pytest.mark.parametrize(
    ("name", "data", "command"),
    [
        ("t.csv", b"task,run,ok\n", ["import", "table", "--map", "case_id=task,trial=run,outcome=ok"]),
        ("t.jsonl", b"\n\n", ["import", "table", "--map", "case_id=task,trial=run,outcome=ok"]),
        ("tau.json", b"[]\n", ["import", "tau-bench"]),
        ("tau2.json", b'{"tasks": [], "simulations": []}\n', ["import", "tau-bench"]),
        ("promptfoo.json", b'{"results": {"version": 3, "results": []}}\n', ["import", "promptfoo"]),
        (
            "swe.json",
            b'{"total_instances": 0, "submitted_ids": [], "completed_ids": [], "resolved_ids": [], '
            b'"unresolved_ids": [], "empty_patch_ids": [], "error_ids": [], "incomplete_ids": []}\n',
            ["import", "swe-bench"],
        ),
    ],
)
def test_importers_refuse_an_empty_source_and_write_nothing(
    tmp_path: Path, name: str, data: bytes, command: list[str]
) -> None:
    source = tmp_path / name
    source.write_bytes(data)
    out = tmp_path / "out.jsonl"
    result = _run([*command[:2], str(source), *command[2:], "--system", "s", "-o", str(out)])
    _assert_refused(result, source)
    assert not out.exists()


def test_recovery_refuses_an_output_folder_without_a_journal(tmp_path: Path) -> None:
    result = _run(["recovery", str(tmp_path)])
    assert result.exit_code != 0
    assert "journal" in result.output


@pytest.mark.parametrize("content", [b"", b"\n\n", b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}\n"])
def test_recovery_refuses_a_journal_without_a_round_naming_it(tmp_path: Path, content: bytes) -> None:
    journal = tmp_path / "journal.jsonl"
    journal.write_bytes(content)
    for extra in ([], ["--json"]):
        result = _run(["recovery", str(tmp_path), *extra])
        _assert_refused(result, journal)
        # empty: no round; blank lines and a 5,000-deep line: refused at their line (the journal's strict line check)
        assert any(why in result.output for why in ("no correction round recorded", "journal.jsonl:1: field '<line>'"))
