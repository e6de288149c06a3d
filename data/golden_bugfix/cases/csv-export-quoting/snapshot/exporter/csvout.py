"""Rows of dictionaries to CSV text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def _field(value: Any) -> str:
    return "" if value is None else str(value)


def to_csv(rows: Iterable[Mapping[str, Any]], fieldnames: Sequence[str]) -> str:
    """CSV text with a header line ``fieldnames`` and one line per row."""
    lines = [",".join(fieldnames)]
    lines += [",".join(_field(row.get(name)) for name in fieldnames) for row in rows]
    return "\n".join(lines) + "\n"
