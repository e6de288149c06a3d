"""Build frozen dataclasses from JSON values, checking every field against its annotation.

One reader for every typed part of the verdict file (:mod:`gatestats.gate.verdict`): a field's
annotation says what JSON may hold there, and anything else is a :class:`TypedFieldError` naming
the field's dotted path, what was expected and what was found. Supported annotations: ``str``,
``int`` (not ``bool``; every integer of a verdict is a count, an index, a size or a seed, so it
must lie in [0, 2^63)), ``float`` (an integer is accepted and converted), ``bool``, ``None``,
``Literal[...]``, unions, ``tuple[X, ...]``, ``Mapping[str, X]``, ``Any`` (a JSON value, kept as is)
and nested frozen dataclasses.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from gatestats.errors import GatestatsError

__all__ = ["TypedFieldError", "build", "to_json"]

T = TypeVar("T")


class TypedFieldError(GatestatsError, ValueError):
    """A JSON value does not have the type its field declares (the message names the field)."""

    def __init__(self, path: str, expected: str, value: object = dataclasses.MISSING) -> None:
        self.path = path
        if value is dataclasses.MISSING:
            super().__init__(f"field {path!r}: {expected}")
            return
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        super().__init__(f"field {path!r}: expected {expected} (got {_json_type(value)} {shown})")


_JSON_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (type(None), "null"),
    (bool, "boolean"),
    ((int, float), "number"),
    (str, "string"),
    ((list, tuple), "array"),
    (Mapping, "object"),
)


def _json_type(value: object) -> str:
    """The JSON name of ``value``'s type (``null``, ``boolean``, ``number`` ...)."""
    for kinds, name in _JSON_TYPES:
        if isinstance(value, kinds):
            return name
    return type(value).__name__


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


_Kind = Literal["any", "null", "union", "literal", "scalar", "tuple", "mapping", "dataclass", "other"]


_KIND_OF_ORIGIN: dict[Any, _Kind] = {
    Union: "union",
    types.UnionType: "union",
    Literal: "literal",
    tuple: "tuple",
    Mapping: "mapping",
    dict: "mapping",
}


def _kind(tp: Any) -> _Kind:
    """Which kind of annotation ``tp`` is (the key of the describe and convert tables)."""
    if tp is Any:
        return "any"
    if tp is type(None):
        return "null"
    if tp in (str, int, float, bool):
        return "scalar"
    origin = get_origin(tp) or (dict if tp is dict else None)
    if origin in _KIND_OF_ORIGIN:
        return _KIND_OF_ORIGIN[origin]
    return "dataclass" if isinstance(tp, type) and dataclasses.is_dataclass(tp) else "other"


_SCALAR_WORDS = {str: "a string", int: "an integer in [0, 2^63)", float: "a number", bool: "a boolean"}

_DESCRIBE: dict[_Kind, Callable[[Any], str]] = {
    "null": lambda tp: "null",
    "scalar": lambda tp: _SCALAR_WORDS[tp],
    "literal": lambda tp: "one of " + ", ".join(repr(a) for a in get_args(tp)),
    "union": lambda tp: " or ".join(_describe(a) for a in get_args(tp)),
    "tuple": lambda tp: f"an array of {_describe(get_args(tp)[0])}",
    "mapping": lambda tp: "an object",
    "dataclass": lambda tp: "an object",
}


def _describe(tp: Any) -> str:
    """What JSON the annotation ``tp`` accepts, in words for messages."""
    describe = _DESCRIBE.get(_kind(tp))
    return describe(tp) if describe is not None else "a JSON value"


def _convert(tp: Any, value: Any, path: str) -> Any:
    """``value`` checked against (and converted to) the annotation ``tp``."""
    return _CONVERT[_kind(tp)](tp, value, path)


def _as_is(tp: Any, value: Any, path: str) -> Any:
    """``Any``: a JSON value, kept as is."""
    return value


def _null(tp: Any, value: Any, path: str) -> None:
    """``None``: only JSON null."""
    if value is not None:
        raise TypedFieldError(path, "null", value)


def _literal(tp: Any, value: Any, path: str) -> Any:
    """``Literal[...]``: one of the listed values, of the same type."""
    if not any(value == a and type(value) is type(a) for a in get_args(tp)):
        raise TypedFieldError(path, _describe(tp), value)
    return value


def _tuple(tp: Any, value: Any, path: str) -> tuple[Any, ...]:
    """``tuple[X, ...]``: a JSON array of X."""
    if not isinstance(value, list | tuple):
        raise TypedFieldError(path, _describe(tp), value)
    item = get_args(tp)[0]
    return tuple(_convert(item, v, f"{path}[{i}]") for i, v in enumerate(value))


def _mapping(tp: Any, value: Any, path: str) -> dict[str, Any]:
    """``Mapping[str, X]``: a JSON object of X."""
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise TypedFieldError(path, "an object", value)
    item = get_args(tp)[1] if get_args(tp) else Any
    return {k: _convert(item, v, f"{path}.{k}") for k, v in value.items()}


def _dataclass(tp: Any, value: Any, path: str) -> Any:
    """A nested frozen dataclass."""
    return build(tp, value, path)


def _unsupported(tp: Any, value: Any, path: str) -> Any:
    """An annotation this reader does not know (a programming error, not bad input)."""
    msg = f"field {path!r}: unsupported annotation {tp!r}"
    raise TypeError(msg)


def _union(tp: Any, value: Any, path: str) -> Any:
    """A union: null where allowed, else the first member that accepts ``value``."""
    args = get_args(tp)
    if value is None and type(None) in args:
        return None
    candidates = [a for a in args if a is not type(None)]
    if len(candidates) == 1:
        return _convert(candidates[0], value, path)
    for candidate in candidates:
        try:
            return _convert(candidate, value, path)
        except TypedFieldError:
            continue
    raise TypedFieldError(path, _describe(tp), value)


def _scalar(tp: type, value: Any, path: str) -> Any:
    """``str``, ``int`` (a count in [0, 2^63)), ``float`` (finite) or ``bool``."""
    if tp is bool:
        ok = isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63
    elif tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    else:
        ok = isinstance(value, str)
    if not ok:
        raise TypedFieldError(path, _describe(tp), value)
    return float(value) if tp is float else value


_CONVERT: dict[_Kind, Callable[[Any, Any, str], Any]] = {
    "any": _as_is,
    "null": _null,
    "union": _union,
    "literal": _literal,
    "scalar": _scalar,
    "tuple": _tuple,
    "mapping": _mapping,
    "dataclass": _dataclass,
    "other": _unsupported,
}


def build(cls: type[T], data: Any, path: str = "") -> T:
    """Build the frozen dataclass ``cls`` from the JSON object ``data``, checking every field.

    Parameters
    ----------
    cls
        A dataclass whose field annotations describe the JSON (see the module docstring).
    data
        The parsed JSON object.
    path
        The object's dotted path in its document (for messages).

    Returns
    -------
    T
        The instance.

    Raises
    ------
    TypedFieldError
        ``data`` is not an object, lacks a field without a default, has a field the class does
        not declare, or a value of another type than declared (the dotted path is named).
    """
    where = path or "(top)"
    if not isinstance(data, Mapping):
        raise TypedFieldError(where, "an object", data)
    hints = _hints(typing.cast(type, cls))
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        name = f"{path}.{unknown[0]}" if path else unknown[0]
        what = getattr(cls, "JSON_NAME", cls.__name__)
        raise TypedFieldError(name, f"unknown {what} field (a {what} has no such field)")
    values: dict[str, Any] = {}
    for name, spec in fields.items():
        dotted = f"{path}.{name}" if path else name
        if name not in data:
            has_default = spec.default is not dataclasses.MISSING or spec.default_factory is not dataclasses.MISSING
            if has_default:
                continue
            raise TypedFieldError(dotted, "required field is missing")
        values[name] = _convert(hints[name], data[name], dotted)
    return cls(**values)


def to_json(value: Any) -> Any:
    """A dataclass instance (fields in declaration order), tuple or mapping as plain JSON values.

    Parameters
    ----------
    value
        Anything :func:`build` can produce.

    Returns
    -------
    Any
        Dicts, lists and scalars, ready for ``json.dumps``.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    return value
