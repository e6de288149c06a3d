"""The README's promises: its two commands, and the table it shows is what the main job prints."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from typer.testing import CliRunner

from gatestats.cli import app
from tests.conftest import ROOT
from tests.runner.conftest import needs_sandbox


def test_quick_start_is_exactly_two_commands_that_dev_py_provides() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]
    assert commands == ["python3 dev.py demo", "python3 dev.py test"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 dev.py test" in ci


def test_readme_analyze_table_is_what_the_commands_print(tau_raw: Path, tmp_path: Path) -> None:
    # Snapshot: the table in the README is the output of its two commands (import, analyze --seed 0).
    records = tmp_path / "tau.jsonl"
    runner = CliRunner()
    imported = runner.invoke(app, ["import", "tau-bench", str(tau_raw), "--system", "gpt-4o", "-o", str(records)])
    assert imported.exit_code == 0, imported.stderr
    result = runner.invoke(app, ["analyze", str(records), "--k", "1,2,3,4", "--seed", "0"], terminal_width=200)
    assert result.exit_code == 0
    printed = [line.rstrip() for line in result.stdout.splitlines() if line.startswith(("┏", "┃", "┡", "│", "└"))]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = [line.rstrip() for line in re.findall(r"^[┏┃┡│└].*$", readme, flags=re.MULTILINE)]
    assert printed == shown
    assert "gatestats analyze tau.jsonl --k 1,2,3,4 --seed 0" in readme


@needs_sandbox
def test_readme_correction_output_is_what_the_command_prints(tmp_path: Path) -> None:
    # The README shows the bundled correction example's summary as `gatestats correct` prints it;
    # only the machine seconds (measured, so they vary) are compared as numbers of the right form.
    example = ROOT / "examples" / "correction"
    result = CliRunner().invoke(
        app,
        [
            "correct", str(example / "cases"), "--candidate", str(example / "candidate"),
            "--reviser", f"{sys.executable} {example / 'reviser.py'}", "--out", str(tmp_path / "out"),
        ],
        terminal_width=200,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    printed = ("\n" + result.stdout).split("\ncase ", 1)[1].rstrip("\n")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Correction on external feedback", 1)[1]
    shown = section.split("\n```\ncase ", 1)[1].split("\n```", 1)[0]
    seconds = re.compile(r"\d+\.\d+ s\b")
    assert seconds.sub("S s", printed) == seconds.sub("S s", shown)
    assert "rounds per accepted outcome: 5 / 2 = 2.50" in shown
