"""Rows of dictionaries to CSV text (RFC 4180)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def to_csv(rows: Iterable[Mapping[str, Any]], fieldnames: Sequence[str]) -> str:
    """CSV text with a header line ``fieldnames`` and one CRLF-terminated line per row.

    Fields holding a comma, a double quote, CR or LF are quoted and embedded quotes doubled
    (RFC 4180, section 2); a missing key or ``None`` is an empty field.
    """
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(fieldnames)
    for row in rows:
        writer.writerow(["" if row.get(name) is None else row.get(name) for name in fieldnames])
    return buffer.getvalue()
