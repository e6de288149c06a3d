"""Remove credentials from a log line before it is written."""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

_SECRET_WORDS = ("password", "passwd", "secret", "token", "api_key", "api-key", "apikey")


def _is_secret_name(name: str) -> bool:
    return name.lower().endswith(_SECRET_WORDS)


def _key_value(match: re.Match[str]) -> str:
    key = match["key"]
    return f"{key}={REDACTED}" if _is_secret_name(key) else match[0]


def _json_member(match: re.Match[str]) -> str:
    return f'{match["head"]}"{REDACTED}"' if _is_secret_name(match["key"]) else match[0]


_KEY_VALUE = re.compile(r"(?P<key>[A-Za-z0-9_.-]+)=(?P<value>[^\s&;,]+)")
_JSON_MEMBER = re.compile(r'(?P<head>"(?P<key>[^"\\]+)"\s*:\s*)"(?:[^"\\]|\\.)*"')
_AUTHORIZATION = re.compile(r"(?i)(?P<scheme>\bauthorization:\s*(?:bearer|basic))\s+\S+")


def redact(line: str) -> str:
    """``line`` with every credential replaced by :data:`REDACTED`."""
    line = _JSON_MEMBER.sub(_json_member, line)
    line = _KEY_VALUE.sub(_key_value, line)
    return _AUTHORIZATION.sub(lambda m: f"{m['scheme']} {REDACTED}", line)
