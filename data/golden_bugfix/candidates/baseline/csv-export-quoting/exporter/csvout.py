"""Rows of dictionaries to CSV text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def _field(value: Any) -> str:
    text = "" if value is None else str(value)
    if "," in text or "\n" in text:
        return f'"{text}"'
    return text


def to_csv(rows: Iterable[Mapping[str, Any]], fieldnames: Sequence[str]) -> str:
    """CSV text with a header line ``fieldnames`` and one line per row (fields with commas quoted)."""
    lines = [",".join(_field(name) for name in fieldnames)]
    lines += [",".join(_field(row.get(name)) for name in fieldnames) for row in rows]
    return "\r\n".join(lines) + "\r\n"
