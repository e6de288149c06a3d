"""``--help`` reads like a man page: flags without a value, arguments by name (``RECORDS...``), on every command."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from gatestats.cli import app


def _command_paths(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    commands = getattr(group, "commands", None)
    if commands is None:
        yield path
        return
    for name, command in sorted(commands.items()):
        yield from _command_paths(command, (*path, name))


COMMANDS = list(_command_paths(typer.main.get_command(app)))


def test_every_command_is_reached() -> None:
    assert ("analyze",) in COMMANDS
    assert ("policy", "register") in COMMANDS
    assert ("import", "tau-bench") in COMMANDS
    assert len(COMMANDS) >= 15


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_no_help_shows_a_type_beside_a_flag_or_an_argument(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=120)
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.output
    assert "<list[" not in result.output
    usage = result.output.splitlines()[0]
    assert usage.startswith(f"Usage: gatestats {' '.join(path)} [OPTIONS]")
    assert "{" not in usage  # arguments are NAME, not {name}


def test_analyze_help_names_its_arguments_and_shows_json_as_a_flag() -> None:
    result = CliRunner().invoke(app, ["analyze", "--help"], terminal_width=120)
    lines = result.output.splitlines()
    assert lines[0] == "Usage: gatestats analyze [OPTIONS] RECORDS..."
    assert "  RECORDS...  Record files (.jsonl, .parquet, .csv).  [required]" in lines
    json_line = next(line for line in lines if line.lstrip().startswith("--json"))
    assert json_line.split() == ["--json", "Print", "one", "JSON", "object", "instead", "of", "tables."]
    assert any(line.lstrip().startswith("--seed <int>") for line in lines)  # an option that takes a value keeps it


def test_two_arguments_are_named_in_order() -> None:
    result = CliRunner().invoke(app, ["policy", "register", "--help"], terminal_width=120)
    assert result.output.splitlines()[0] == "Usage: gatestats policy register [OPTIONS] POLICY RUN_SET"


def test_a_missing_argument_is_named_as_help_names_it() -> None:
    result = CliRunner().invoke(app, ["analyze"])
    assert result.exit_code == 2
    assert "Missing argument 'RECORDS'." in result.output
