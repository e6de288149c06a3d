"""gatestats' plain coercion of typer parameters gives typer's own results (issue 28, item 2).

``gatestats.cli._coercion`` spares typer's pydantic for the plain parameters (``str``, ``int``,
``float``, ``bool``, ``Path``, lists of ``str`` and ``Path``) and hands every value it does not read
unambiguously to typer's own coercion. Here both coerce the same grid of values (hostile ones
included: blanks, signs, underscores, other digits, hex, huge and tiny exponents, lone surrogates,
NaN) with a parameter of each kind taken from the real commands: every outcome, value and type
or error and message, must be the same.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main
from typer._click import Context
from typer._coercion import build_runtime_param
from typer.core import _TyperParameter

from gatestats.cli import COMMANDS, app
from gatestats.cli import _coercion as coercion

TEXTS = (
    "", " ", "0", "-0", "+1", "1", "007", "10", " 1", "1 ", "1_000", "١٢", "１２", "0x10", "1e5", "1E-3", "1e400",
    "-1e-400", "1.", ".5", "0.95", "-0.5", "3.14159265358979323846", "1.5e+07", "inf", "-inf", "nan", "NaN",
    "9" * 18, "9" * 19, "9" * 40, "-" + "9" * 18, "true", "false", "yes", "a", "records.jsonl", "dir/sub/f.jsonl",
    "-", "~/x", "ünïcode", "x\udcff", "\udcff", "a b", "\n", "1e5x",
)  # fmt: skip
OTHERS: tuple[Any, ...] = (None, True, False, 0, 2, -3, 2.5, math.nan, math.inf, Path("p.jsonl"), b"1", [], ())


def _params() -> dict[tuple[type, bool], tuple[Any, _TyperParameter]]:
    """One (command, parameter) of every plain kind among the real commands, by (kind, is list)."""
    found: dict[tuple[type, bool], tuple[Any, _TyperParameter]] = {}
    group = typer.main.get_command(app)

    def walk(command: Any) -> None:
        for sub in getattr(command, "commands", {}).values():
            walk(sub)
        for param in command.params:
            plain = coercion._plain(param.type_descriptor)
            if plain is not None:
                found.setdefault((plain.kind, plain.many), (command, param))

    for name in COMMANDS:
        walk(group.commands[name])  # type: ignore[attr-defined]
    return found


PARAMS = _params()


def _outcome(coerce: Any) -> tuple[Any, ...]:
    try:
        value = coerce()
    except Exception as exc:  # the outcome compared is the error and its message
        return ("error", type(exc).__name__, str(exc))
    types = tuple(map(type, value)) if isinstance(value, list) else type(value)
    return ("ok", types, repr(value))


def test_every_parameter_of_every_command_is_plain() -> None:
    group = typer.main.get_command(app)
    kinds: set[str] = set()

    def walk(command: Any, where: str) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{where} {name}")
        for param in command.params:
            assert coercion._plain(param.type_descriptor) is not None, f"{where} {param.name}"
            kinds.add(repr(param.type_descriptor.annotation))

    for name in COMMANDS:
        walk(group.commands[name], name)  # type: ignore[attr-defined]
    assert len(kinds) >= 6


@pytest.mark.parametrize("key", sorted(PARAMS, key=repr), ids=repr)
def test_plain_coercion_gives_typers_own_outcome(key: tuple[type, bool]) -> None:
    command, param = PARAMS[key]
    plain = coercion._plain(param.type_descriptor)
    assert plain is not None
    typer_own = build_runtime_param(param.type_descriptor)
    ctx = Context(command, info_name="x")
    values: list[Any] = [*TEXTS, *OTHERS]
    if key[1]:
        values += [[t] for t in TEXTS] + [list(TEXTS[:5]), ("a", "b"), ["1", None]]
    for value in values:
        ours = _outcome(functools.partial(plain._coerce_value, value, param=param, ctx=ctx))
        theirs = _outcome(functools.partial(typer_own._coerce_value, value, param=param, ctx=ctx))
        assert ours == theirs, f"{key} {value!r}"


def test_another_typer_version_keeps_typers_own_coercion(monkeypatch: pytest.MonkeyPatch) -> None:
    def typer_own(self: _TyperParameter) -> Any:
        return None

    monkeypatch.setattr(_TyperParameter, "get_runtime_param", typer_own)
    monkeypatch.setattr(typer, "__version__", "0.30.0")
    coercion.install()
    assert _TyperParameter.get_runtime_param is typer_own
    monkeypatch.setattr(typer, "__version__", coercion.TYPER_VERSION)
    coercion.install()
    assert _TyperParameter.get_runtime_param is not typer_own
    coercion.install()  # idempotent: installed once
    assert getattr(_TyperParameter.get_runtime_param, "plain", False)


@pytest.mark.parametrize(
    ("key", "text", "expected"),
    [
        ((str, False), "system", "system"),
        ((int, False), "12", 12),
        ((float, False), "0.95", 0.95),
        ((float, False), "1e-3", 0.001),
        ((Path, False), "records.jsonl", Path("records.jsonl")),
        ((str, True), "a", ["a"]),
        ((Path, True), "r.jsonl", [Path("r.jsonl")]),
    ],
)
def test_common_values_are_read_without_typers_pydantic(key: tuple[type, bool], text: str, expected: Any) -> None:
    command, param = PARAMS[key]
    plain = coercion._plain(param.type_descriptor)
    assert plain is not None
    ctx = Context(command, info_name="x")
    got = [plain._one(item, param, ctx) for item in [text]] if key[1] else plain._one(text, param, ctx)
    assert got == expected
