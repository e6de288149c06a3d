"""Typer's coercion of plain parameters without pydantic, result and errors unchanged (issue 28, item 2).

typer 0.29 coerces every parameter of the command it runs through a pydantic ``TypeAdapter``:
importing pydantic and building the adapters costs ~0.06-0.1 s of CPU, a third to a half of
``import polars``, before a command does anything. Every gatestats parameter is a ``str``,
``int``, ``float``, ``bool``, ``Path`` or a list of ``str`` or ``Path``, without constraints, choices,
parsers or files. :func:`install` makes typer give each such parameter a coercion that returns
typer's own result for the values whose reading is unambiguous (a string that encodes as UTF-8,
a plain decimal integer or float, a ``bool``, a path string through typer's own path checks) and
hands every other value to typer's pydantic coercion, built on first need: the result and every
error message stay typer's. ``tests/cli/test_coercion.py`` compares both on a grid of values.
Only the typer version it was checked against (:data:`TYPER_VERSION`) is changed; any other
keeps its own coercion.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, get_args, get_origin

import typer
from typer._click import Context
from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import coerce_cli_path
from typer.core import _TyperParameter

__all__ = ["TYPER_VERSION", "install"]

#: The typer release whose coercion this module reproduces (the lock file's).
TYPER_VERSION: Final = "0.29.2"

_INT: Final = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_FLOAT: Final = re.compile(r"-?(?:0|[1-9][0-9]{0,15})(?:\.[0-9]{1,17})?(?:[eE][-+]?[1-9][0-9]?)?")
_MISS: Final = object()
_KINDS: Final = (str, int, float, bool, Path)


@dataclass(frozen=True)
class _PlainParam(RuntimeParam):
    """A plain parameter's coercion; whatever it cannot read unambiguously goes to typer's own."""

    descriptor: TypeDescriptor
    kind: type
    many: bool

    def _coerce_value(self, value: Any, param: _TyperParameter, ctx: Context) -> Any:
        if self.many:
            items = [self._one(item, param, ctx) for item in (value if isinstance(value, (list, tuple)) else [value])]
            if all(item is not _MISS for item in items):
                return items
        else:
            one = self._one(value, param, ctx)
            if one is not _MISS:
                return one
        return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    def _one(self, value: Any, param: _TyperParameter, ctx: Context) -> Any:
        one = self._read(value, param, ctx)
        low, high = self.parameter_info.min, self.parameter_info.max  # a number out of range: typer's message
        if one is _MISS or (low is not None and one < low) or (high is not None and one > high):
            return _MISS
        return one

    def _read(self, value: Any, param: _TyperParameter, ctx: Context) -> Any:
        kind = self.kind
        if kind is Path:
            if not isinstance(value, Path) and not (type(value) is str and value and _utf8(value)):
                return _MISS
            path = value if isinstance(value, Path) else Path(value)
            return coerce_cli_path(path, self.parameter_info, path_type=Path, param=param, ctx=ctx)
        if type(value) is str:
            return _from_text(kind, value)
        if type(value) is float:
            return value if kind is float and math.isfinite(value) else _MISS
        return value if type(value) is kind and kind in (int, bool) else _MISS


def _from_text(kind: type, text: str) -> Any:
    """A command-line string as ``kind`` when its reading is unambiguous, else :data:`_MISS`."""
    if kind is bool or not _utf8(text):
        return _MISS
    if kind is int:
        return int(text) if _INT.fullmatch(text) else _MISS
    if kind is float:
        return float(text) if _FLOAT.fullmatch(text) else _MISS
    return text


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (undecodable argv bytes): typer's own message
        return False
    return True


def _plain(descriptor: TypeDescriptor) -> _PlainParam | None:
    """The plain coercion of a parameter, or None when typer's own must serve it."""
    info = descriptor.parameter_info
    special = descriptor.file_annotation is not None or descriptor.is_choice
    if special or info.parser is not None or info.clamp or info.path_type is not None:
        return None
    annotation: Any = descriptor.annotation
    many = get_origin(annotation) is list
    if many:
        (annotation,) = get_args(annotation)
    if annotation not in _KINDS:
        return None
    return _PlainParam(
        parameter_info=info, annotation=descriptor.annotation, descriptor=descriptor, kind=annotation, many=many
    )


def install() -> None:
    """Make typer coerce plain parameters without pydantic (idempotent; only for :data:`TYPER_VERSION`)."""
    typer_own = _TyperParameter.get_runtime_param
    if typer.__version__ != TYPER_VERSION or getattr(typer_own, "plain", False):
        return

    def get_runtime_param(self: _TyperParameter) -> RuntimeParam:
        if self._runtime_param is None:
            self._runtime_param = _plain(self.type_descriptor)
        return typer_own(self)

    get_runtime_param.plain = True  # type: ignore[attr-defined]
    _TyperParameter.get_runtime_param = get_runtime_param  # type: ignore[method-assign]
