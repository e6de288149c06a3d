"""Type aliases shared by gatestats' modules (the one typing module, as polars' ``_typing``).

``JSONValue`` is any value :func:`json.dumps` writes as JSON without a ``default`` hook: a string, a
number, a boolean, null, an array (any sequence) or an object (any mapping with string keys) of
JSON values. ``JSONObject`` is the object a ``to_dict`` returns: a ``dict`` (its caller may add keys,
as the verdict adds its ``digest``) whose values mypy checks to be JSON, where an ``Any``-valued dict
would let a ``Path``, a ``set`` or a dataclass through to fail only when the file is written.

Read JSON (``json.loads``) is typed at the point where it is checked, by the reader that checks it
(:func:`gatestats.gate._typed.build`, the record contract): these aliases are for what is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

__all__ = ["JSONObject", "JSONValue"]

JSONValue: TypeAlias = "str | int | float | bool | Sequence[JSONValue] | Mapping[str, JSONValue] | None"
JSONObject: TypeAlias = "dict[str, JSONValue]"
