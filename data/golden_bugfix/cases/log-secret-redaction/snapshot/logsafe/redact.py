"""Remove credentials from a log line before it is written."""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

_PASSWORD = re.compile(r"password=\S+")


def redact(line: str) -> str:
    """``line`` with every credential replaced by :data:`REDACTED`."""
    return _PASSWORD.sub(f"password={REDACTED}", line)
