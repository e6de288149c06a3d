"""Retrying calls to flaky network services."""

from netretry.backoff import backoff_delay

__all__ = ["backoff_delay"]
