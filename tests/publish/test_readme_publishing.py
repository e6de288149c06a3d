"""The README's "Publishing tables" block is what its command prints."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from gatestats.cli import app
from tests.conftest import ROOT


def test_the_readme_markdown_is_the_command_output(tau_raw: Path, tmp_path: Path) -> None:
    records = tmp_path / "tau.jsonl"
    runner = CliRunner()
    imported = runner.invoke(
        app, ["import", "tau-bench", str(tau_raw), "--system", "tau-bench/gpt-4o-airline", "-o", str(records)]
    )
    assert imported.exit_code == 0, imported.stderr
    args = ["analyze", str(records), "--k", "1,2,4", "--seed", "0", "--format", "markdown"]
    result = runner.invoke(app, [*args, "--label", "tau-bench/gpt-4o-airline=gpt-4o"])
    assert result.exit_code == 0, result.stderr
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Publishing tables", 1)[1]
    block = section.split("```markdown\n", 1)[1].split("```", 1)[0]
    assert block == result.stdout
    assert "--format markdown --label tau-bench/gpt-4o-airline=gpt-4o" in section
