"""Timestamps of incoming events."""

from __future__ import annotations

from datetime import datetime


def parse_timestamp(text: str) -> datetime:
    """The instant an ISO 8601 timestamp such as ``2024-03-10T12:00:00+02:00`` names."""
    return datetime.strptime(text.strip()[:19], "%Y-%m-%dT%H:%M:%S")
