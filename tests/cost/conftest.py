"""Builders of small record frames for the cost tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from tests.conftest import make_record


def frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Records (contract v1 defaults from ``make_record``) with ids ``r-0, r-1, ...`` unless given."""
    records = [make_record(**{"record_id": f"r-{i}", **row}) for i, row in enumerate(rows)]
    return pl.DataFrame(records, infer_schema_length=None)


def many_cases(
    n: int,
    *,
    system: str = "a",
    seed: int = 0,
    pass_rate: float = 0.6,
    scale: float = 1.0,
    trials: int = 1,
    group_size: int | None = None,
) -> list[dict[str, Any]]:
    """``n`` cases with random outcomes and lognormal model spend (``scale`` times)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        for t in range(trials):
            rows.append(
                {
                    "record_id": f"{system}-{i}-{t}",
                    "system": system,
                    "case_id": f"c{i}",
                    "case_group": None if group_size is None else f"g{i // group_size}",
                    "trial": t,
                    "outcome": "passed" if rng.random() < pass_rate else "failed",
                    "cost_model_usd": float(scale * rng.lognormal(0.0, 0.7)),
                }
            )
    return rows
