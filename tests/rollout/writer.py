"""The writer process of ``test_two_writers_at_once_get_different_batch_numbers``: one batch, its number.

A module of its own so that each spawned writer imports only the log (``gatestats.rollout.log`` and
polars, about 0.4 CPU-s), not the test module and its conftest (the gate's engine and scipy, about
1.5 CPU-s each, three times per run). The observations are made by the parent and sent pickled.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from gatestats.rollout.log import add_batch


def write_shadow_batch(args: tuple[str, str, pl.DataFrame]) -> int:
    """Add ``frame`` as one shadow batch of the log ``watch`` under ``plan``; the batch's number."""
    watch, plan, frame = args
    return add_batch(Path(watch), frame, stage="shadow", plan_path=Path(plan)).number
