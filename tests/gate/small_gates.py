"""Small gates built row by row for the oracle tests (old code against new on many random gates).

``tests/gate/test_to_decide_counts.py`` and ``tests/gate/test_gate_call_batched.py`` draw their gates at random
and compare whole verdicts; both lay their rows out as records and record sets here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from gatestats.gate import RecordSet
from gatestats.records.contract import POLARS_SCHEMA

#: One record: (case_id, trial, attempt, outcome, slices).
Row = tuple[str, int, int, str, list[str]]


def records_frame(system: str, rows: Sequence[Row], cost_usd: Sequence[float | None] | None = None) -> pl.DataFrame:
    """``rows`` of ``system`` as records of the contract (case version ``v1``; every other field null).

    Parameters
    ----------
    system
        The records' system (and the prefix of their ids and run set id).
    rows
        (case_id, trial, attempt, outcome, slices) of each record.
    cost_usd
        Each record's ``cost_usd``, or ``None``: no cost.

    Returns
    -------
    polars.DataFrame
        The records, every column of :data:`~gatestats.records.contract.POLARS_SCHEMA` in its order and type.
    """
    n = len(rows)
    columns: dict[str, Any] = {
        "schema_version": [1] * n,
        "record_id": [f"{system}-{i}" for i in range(n)],
        "run_set_id": [f"rs-{system}"] * n,
        "system": [system] * n,
        "case_id": [r[0] for r in rows],
        "case_version": ["v1"] * n,
        "trial": [r[1] for r in rows],
        "attempt": [r[2] for r in rows],
        "outcome": [r[3] for r in rows],
        "slices": [r[4] for r in rows],
        "model_id": ["m"] * n,
        "system_digest": ["sd"] * n,
    }
    overrides: dict[str, Any] = {"trial": pl.Int64, "attempt": pl.Int64, "slices": pl.List(pl.String)}
    if cost_usd is not None:
        columns["cost_usd"], overrides["cost_usd"] = list(cost_usd), pl.Float64
    frame = pl.DataFrame(columns, schema_overrides=overrides)
    missing = [pl.lit(None, dtype=t).alias(c) for c, t in POLARS_SCHEMA.items() if c not in frame.columns]
    return frame.with_columns(missing).select(list(POLARS_SCHEMA)).cast(POLARS_SCHEMA)  # type: ignore[arg-type]


def record_set(system: str, records: pl.DataFrame) -> RecordSet:
    """``records`` as a complete run set of ``system`` whose cases are those of the records, at ``v1``.

    Parameters
    ----------
    system
        The run set's name (its path and digest).
    records
        Its records (:func:`records_frame`).

    Returns
    -------
    RecordSet
        The run set.
    """
    cases = [{"case_id": c, "case_version": "v1"} for c in records["case_id"].unique().sort()]
    return RecordSet(
        path=Path(system),
        kind="run_set",
        manifest={"complete": True, "cases": cases},
        records=records,
        files=(),
        digest=system,
    )
