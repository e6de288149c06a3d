"""Reading a rollout plan's TOML: the limits before :mod:`tomllib`, typed values, problems with their line.

Private to :mod:`gatestats.rollout.plan` (which exports :class:`PlanError` and :class:`PlanProblem`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, cast

from gatestats.io.limits import name_problem
from gatestats.io.text import visible
from gatestats.io.toml_lines import KeyPath, TomlError, TomlProblem, key_text, line_of, locate

__all__ = ["PlanError", "PlanProblem"]  # Reader and shown serve plan.py only


class PlanProblem(TomlProblem):
    """One thing wrong with a plan file: the file, the line (when known), the key path and what."""

    __slots__ = ()


class PlanError(TomlError):
    """The file is not a valid rollout plan; ``problems`` lists every finding."""


class Reader:
    """Typed access to the TOML mapping that records problems with their line instead of raising."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.lines = locate(text)
        self.problems: list[PlanProblem] = []

    def problem(self, path: KeyPath, message: str) -> None:
        line = line_of(self.lines, path)
        self.problems.append(PlanProblem(file=self.file, key=key_text(path), line=line, message=message))

    def table(self, value: Any, path: KeyPath, allowed: tuple[str, ...]) -> Mapping[str, Any]:
        """``value`` as a table with only ``allowed`` keys (each other key a problem); ``{}`` if not a table."""
        if not isinstance(value, dict):
            self.problem(path, f"expected a table (got {_kind(value)})")
            return {}
        for key in value:
            if key not in allowed:
                self.problem((*path, key), f"unknown key (expected one of: {', '.join(allowed)})")
        return cast("Mapping[str, Any]", value)

    def text(self, table: Mapping[str, Any], path: KeyPath, key: str, *, required: bool = True) -> str | None:
        """A name: a non-empty string without control characters, of bounded length."""
        if key not in table:
            if required:
                self.problem((*path, key), "required key is missing")
            return None
        return self.name_value(table[key], (*path, key))

    def name_value(self, value: Any, path: KeyPath) -> str | None:
        """``value`` when it is a good name, else None (and the problem recorded at ``path``)."""
        if not isinstance(value, str) or not value:
            self.problem(path, f"expected a non-empty string (got {_kind(value)} {shown(value)})")
            return None
        if (why := name_problem(value)) is not None:
            self.problem(path, why)
            return None
        return value

    def choice(self, table: Mapping[str, Any], path: KeyPath, key: str, choices: tuple[str, ...]) -> str | None:
        value = self.text(table, path, key)
        if value is not None and value not in choices:
            self.problem((*path, key), f"expected one of {', '.join(repr(c) for c in choices)} (got {value!r})")
            return None
        return value

    def number(
        self, table: Mapping[str, Any], path: KeyPath, key: str, low: float, high: float, *, open_low: bool = False
    ) -> float | None:
        """A finite number in ``[low, high]`` (``(low, high]`` when ``open_low``); None when absent or wrong."""
        if key not in table:
            return None
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.problem((*path, key), f"expected a number (got {_kind(value)} {shown(value)})")
            return None
        number = float(value) if abs(value) < 1e308 else math.inf
        if not math.isfinite(number) or number > high or number < low or (open_low and number == low):
            bracket = "(" if open_low else "["
            self.problem((*path, key), f"expected a number in {bracket}{low:g}, {high:g}] (got {shown(value)})")
            return None
        return number

    def integer(self, table: Mapping[str, Any], path: KeyPath, key: str, low: int, high: int) -> int | None:
        if key not in table:
            self.problem((*path, key), "required key is missing")
            return None
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem((*path, key), f"expected an integer (got {_kind(value)} {shown(value)})")
            return None
        if not low <= value <= high:
            self.problem((*path, key), f"expected an integer in [{low}, {high}] (got {shown(value)})")
            return None
        return value

    def array(self, table: Mapping[str, Any], path: KeyPath, key: str) -> list[Any] | None:
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, list):
            self.problem((*path, key), f"expected an array (got {_kind(value)})")
            return None
        return value


def _kind(value: Any) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "an array"}
    return names.get(type(value), "a table" if isinstance(value, dict) else type(value).__name__)


def shown(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"an integer of {len(str(abs(value)))} digits"
    return visible(repr(value), limit=80)
