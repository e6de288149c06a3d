"""``gatestats run --until-decided``: the demo's sequential run end to end, its usage errors and refusals."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from gatestats.cli import app
from gatestats_runner.launch import RunSetOptions, run_run_set
from tests.conftest import DATA, ROOT
from tests.runner.conftest import needs_sandbox

EXAMPLE = ROOT / "examples" / "sequential"


def _args(out: Path, *extra: str, policy: Path = EXAMPLE / "policy.toml") -> list[str]:
    """The command ``python3 dev.py demo`` runs for its sequential variant."""
    return [
        "run",
        str(EXAMPLE / "cases"),
        "--until-decided",
        "--policy",
        str(policy),
        "--baseline",
        str(EXAMPLE / "candidates" / "baseline"),
        "--candidate",
        str(EXAMPLE / "candidates" / "candidate"),
        "--out",
        str(out),
        *extra,
    ]


@needs_sandbox
def test_demo_prints_each_batch_and_stops_at_32_of_48_cases(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, _args(out, "--workers", "2"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split(";")[0] for line in lines[:4]] == [
        "batch 1: 8 cases (candidate first)",
        "batch 2: 16 cases (baseline first)",
        "batch 3: 24 cases (candidate first)",
        "batch 4: 32 cases (baseline first)",
    ]
    assert "solves: pass rate ≥ 0.6: 1 [0.613, 1] e_pass 99.8 e_fail 1.53e-05 → pass" in lines[1]
    assert lines[3].endswith("e_pass 166 e_fail 0.00128 → pass")
    assert lines[4] == (
        f"{out}: stopped after 32 of 48 cases (decided; gate so far: pass); 128 of 192 trials used, 64 saved "
        f"(33%); the verdict: gatestats gate --policy {EXAMPLE / 'policy.toml'} --baseline {out / 'baseline'} "
        f"--candidate {out / 'candidate'}"
    )
    assert len(lines) == 5
    gate = CliRunner().invoke(
        app,
        ["gate", "--policy", str(EXAMPLE / "policy.toml"), "--baseline", str(out / "baseline"),
         "--candidate", str(out / "candidate"), "-o", str(tmp_path / "verdict.json")],
    )  # fmt: skip
    assert gate.exit_code == 0, gate.output


def test_usage_errors_exit_2_and_write_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for extra, message in [
        (["--trials", "2"], "--trials: the policy's [sequential] trials fixes the trials per case"),
        (["--resume"], "--resume: --until-decided resumes by itself (run the same command again)"),
        (["--system", "x"], "--system: with --until-decided the policy's [baseline] and [candidate] name the systems"),
        (["--executor", "spark"], "--executor: expected 'local' or 'ray' (got 'spark')"),
    ]:
        result = CliRunner().invoke(app, _args(out, *extra))
        assert result.exit_code == 2, result.output
        assert message in result.output
    no_design = DATA / "golden_bugfix" / "policy.toml"
    result = CliRunner().invoke(app, _args(out, policy=no_design))
    assert result.exit_code == 2
    assert f"{no_design}: --until-decided needs a policy with a [sequential] table" in result.output
    plain = _args(out)
    plain.remove("--until-decided")
    result = CliRunner().invoke(app, plain)
    assert result.exit_code == 2
    assert "--baseline: only with --until-decided" in result.output
    assert not out.exists()


def test_a_run_set_with_records_of_another_design_exits_1_and_nothing_runs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_run_set(
        RunSetOptions(
            cases=EXAMPLE / "cases",
            candidate=EXAMPLE / "candidates" / "candidate",
            out=out / "candidate",
            trials=1,
            isolation="none",
            workspace="dir-copy",
            case_ids=("product-01",),
        )
    )
    records = (out / "candidate" / "records.jsonl").read_bytes()
    result = CliRunner().invoke(app, _args(out))
    assert result.exit_code == 1, result.output
    assert f"{out / 'candidate'}: holds records under another design (registered policy none, 1 trials" in result.output
    assert "is a new design: nothing was run (use a new --out)" in result.output
    assert (out / "candidate" / "records.jsonl").read_bytes() == records
    assert not (out / "baseline").exists()
    assert not (out / "sequential.json").exists()


def test_a_hostile_rule_name_is_printed_as_text_not_markup_or_control_characters() -> None:
    """A policy author's rule name like ``[/]`` or one with ESC crashed rich's markup parser or reached the terminal."""
    from rich.console import Console

    from gatestats.cli._sequential_run import _batch_line, _print_batch

    hostile = "[/]bad\x1b[31mred\nline"
    entry = {
        "batch": 1,
        "n_cases": 4,
        "first": "baseline",
        "rules": [
            {
                "row": hostile,
                "estimate": 0.5,
                "lower": 0.1,
                "upper": 0.9,
                "e_pass": 1.0,
                "e_fail": 2.0,
                "status": "undecided",
            },
            {"row": hostile, "status": "pass", "decided_at": 4},
        ],
    }
    line = _batch_line(entry)
    assert "\x1b" not in line
    assert "\n" not in line
    console = Console(record=True, width=400, soft_wrap=True)
    _print_batch(console, entry)  # raised rich.errors.MarkupError before the fix
    assert console.export_text() == line + "\n"
    assert "[/]bad" in line
