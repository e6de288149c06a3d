"""Delay before a retry: exponential backoff with optional full jitter."""

from __future__ import annotations

import random


def backoff_delay(
    attempt: int,
    *,
    base: float = 0.5,
    factor: float = 2.0,
    max_delay: float = 30.0,
    jitter: bool = False,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait before retry number ``attempt`` (1 for the first retry)."""
    if attempt < 1:
        msg = f"attempt must be >= 1 (got {attempt})"
        raise ValueError(msg)
    delay = base * factor**attempt
    if jitter:
        delay += (rng or random.Random()).uniform(0, delay)
    return delay
