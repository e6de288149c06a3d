"""A malformed number is refused before the command runs: exit 2, the option and the value named, no traceback.

typer is pinned below 0.29 (pyproject.toml: 0.29 coerces every parameter through pydantic, ≈0.1 s
at every start, issue 28 item 2). typer 0.28 reads numbers with click's types, whose error names
the value the user gave (``'abc' is not a valid int.``); these tests walk every numeric option of
every command, so a typer upgrade that changes how numbers are read is seen here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from gatestats.cli import app

#: click's names of the numeric types, as its errors write them.
_NUMERIC = {"int": "int", "float": "float", "int range": "int range"}


def _numeric_options(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str, str]]:
    commands = getattr(group, "commands", None)
    if commands is not None:
        for name in sorted(commands):
            yield from _numeric_options(commands[name], (*path, name))
        return
    for param in group.params:
        if param.param_type_name == "option" and param.type.name in _NUMERIC:
            yield path, param.opts[0], _NUMERIC[param.type.name]


NUMERIC_OPTIONS = list(_numeric_options(typer.main.get_command(app)))


def test_the_walk_reaches_the_numeric_options() -> None:
    assert (("analyze",), "--seed", "int") in NUMERIC_OPTIONS
    assert (("analyze",), "--confidence-level", "float") in NUMERIC_OPTIONS
    assert (("run",), "--trials", "int range") in NUMERIC_OPTIONS
    assert len(NUMERIC_OPTIONS) >= 40


@pytest.mark.parametrize(
    ("path", "option", "kind"), NUMERIC_OPTIONS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else v
)
@pytest.mark.parametrize("value", ["abc", "0x10", ""])
def test_a_value_that_is_no_number_is_refused_naming_option_and_value(
    path: tuple[str, ...], option: str, kind: str, value: str
) -> None:
    result = CliRunner().invoke(app, [*path, option, value])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # a usage error, never a traceback
    assert f"Error: Invalid value for '{option}': '{value}' is not a valid {kind}." in result.output


@pytest.mark.parametrize("value", ["1.0", "1e3", "nan", "inf", "1_0.5", " 0.5"])
def test_an_integer_option_refuses_what_is_not_an_integer(value: str) -> None:
    result = CliRunner().invoke(app, ["analyze", "--seed", value])
    assert result.exit_code == 2, result.output
    assert f"Error: Invalid value for '--seed': '{value}' is not a valid int." in result.output


def test_a_number_out_of_an_options_range_is_refused_with_the_range() -> None:
    result = CliRunner().invoke(app, ["run", "--workers", "0"])
    assert result.exit_code == 2, result.output
    assert "Error: Invalid value for '--workers': 0 is not in the range x>=1." in result.output
