"""Remove credentials from a log line before it is written."""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

# A credential's name: one of these words, alone or ending a longer name (access_token, client_secret).
_NAME = r"[A-Za-z0-9_.-]*?(?:password|passwd|secret|token|api[_-]?key)"

_KEY_VALUE = re.compile(rf"(?i)(?<![A-Za-z0-9_.-])({_NAME})=[^\s&;,]+")
_JSON = re.compile(rf'(?i)("{_NAME}"\s*:\s*)"(?:[^"\\]|\\.)*"')
_AUTHORIZATION = re.compile(r"(?i)(\bauthorization\s*:\s*(?:bearer|basic))\s+[A-Za-z0-9._~+/=-]+")


def redact(line: str) -> str:
    """``line`` with every credential replaced by :data:`REDACTED`."""
    line = _JSON.sub(rf'\1"{REDACTED}"', line)
    line = _KEY_VALUE.sub(rf"\1={REDACTED}", line)
    return _AUTHORIZATION.sub(rf"\1 {REDACTED}", line)
