"""Event ingestion."""

from events.timeparse import parse_timestamp

__all__ = ["parse_timestamp"]
