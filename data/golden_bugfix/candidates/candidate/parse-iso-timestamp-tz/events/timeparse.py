"""Timestamps of incoming events."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_timestamp(text: str) -> datetime:
    """The instant an ISO 8601 timestamp such as ``2024-03-10T12:00:00+02:00`` names, as an aware UTC datetime.

    A timestamp without an offset is taken to be UTC (the API's documented convention).
    """
    stripped = text.strip()
    if stripped.endswith(("Z", "z")):
        stripped = stripped[:-1] + "+00:00"
    moment = datetime.fromisoformat(stripped)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
