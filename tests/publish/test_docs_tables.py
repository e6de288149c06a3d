"""docs/paired.md shows a paper table with the command that made it: the block must be that command's output."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app

ROOT = Path(__file__).resolve().parents[2]
HEADING = "### A paper table from one command (SWE-bench Verified, 5 systems)"


def _section() -> tuple[str, str]:
    """The command (the ``sh`` block) and the Markdown table printed below it in docs/paired.md."""
    text = (ROOT / "docs" / "paired.md").read_text(encoding="utf-8")
    section = text[text.index(HEADING) :]
    command = section.split("```sh\n", 1)[1].split("\n```", 1)[0].strip()
    after = section.split("\n```\n", 1)[1].lstrip("\n")
    table = after.split("\n\nThe same command with", 1)[0]
    return command, table


def test_the_docs_table_is_what_the_command_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    command, table = _section()
    words = shlex.split(command.replace("\\\n", " "))  # the block continues its lines with a backslash
    assert words[:2] == ["gatestats", "compare"]
    monkeypatch.chdir(ROOT)  # the command's paths are relative to the repository
    result = CliRunner().invoke(app, words[1:], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip("\n") == table.rstrip("\n")
    # the published counts and the exact p-values' order of magnitude are in the table
    for count in ("245/500", "233/500", "243/500", "194/500", "250/500"):
        assert count in table
    assert "p (exact)" in table
    assert "p adjusted (holm, exact)" in table
