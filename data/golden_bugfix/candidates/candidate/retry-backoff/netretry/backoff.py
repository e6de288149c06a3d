"""Delay before a retry: capped exponential backoff with optional full jitter."""

from __future__ import annotations

import math
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
    """Seconds to wait before retry number ``attempt`` (1 for the first retry).

    ``min(max_delay, base * factor ** (attempt - 1))``; with ``jitter`` a uniform draw from
    ``[0, delay]`` ("full jitter").
    """
    if attempt < 1:
        msg = f"attempt must be >= 1 (got {attempt})"
        raise ValueError(msg)
    exponent = attempt - 1
    if base > 0 and factor > 1:
        # Past this exponent the cap applies; stopping there also keeps factor**exponent finite.
        exponent = min(exponent, math.ceil(math.log(max_delay / base, factor)) + 1)
    delay = min(max_delay, base * factor**exponent)
    if jitter:
        delay = (rng or random.Random()).uniform(0.0, delay)
    return delay
