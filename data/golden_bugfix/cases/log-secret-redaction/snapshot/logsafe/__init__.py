"""Logging helpers."""

from logsafe.redact import REDACTED, redact

__all__ = ["REDACTED", "redact"]
