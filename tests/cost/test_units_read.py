"""The cost analysis builds the resampling units only when a group reads them, and its ids are the five smallest.

Reference: the code before session 39 built every group's units (``_units_read`` always true) and took
the shown record ids as ``filter().sort().head(5)``. Both are compared on drawn records: with and without
costs per side, with and without a cap, review time with one end missing, duplicate-prone ids.
Planted (checked by hand): ``_units_read`` always false fails the first test on records with a cost;
``bottom_k(4)`` fails the second.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.cost import cost_per_accepted, per_accepted
from gatestats.cost._frames import prepare
from tests.hypothesis_counts import examples

OUTCOMES = ("passed", "failed", "infra_error")


@st.composite
def records(draw: st.DrawFn) -> pl.DataFrame:
    """Two systems' attempts; each system's costs all present, all missing or mixed."""
    rows: list[dict[str, Any]] = []
    for system in ("a", "b"):
        mode = draw(st.sampled_from(("none", "all", "some")))
        for case in range(draw(st.integers(1, 12))):
            for trial in range(draw(st.integers(1, 2))):
                missing = mode == "none" or (mode == "some" and draw(st.booleans()))
                cost = None if missing else float(case)
                half = draw(st.integers(0, 20)) == 0  # a review with one end missing: human time unknown
                rows.append(
                    {
                        "record_id": f"{draw(st.sampled_from('zyx'))}-{system}-{case}-{trial}",
                        "system": system,
                        "case_id": f"c{case}",
                        "trial": trial,
                        "attempt": 0,
                        "outcome": draw(st.sampled_from(OUTCOMES)),
                        "cost_usd": cost,
                        "review_started_at": "2024-05-01T10:00:00Z" if half else None,
                    }
                )
    return pl.DataFrame(rows, schema_overrides={"cost_usd": pl.Float64, "review_started_at": pl.String})


@settings(max_examples=examples(80), deadline=None)
@given(frame=records(), cap=st.none() | st.floats(0.5, 20.0))
def test_units_only_when_read_gives_the_same_analysis(frame: pl.DataFrame, cap: float | None) -> None:
    kwargs: dict[str, Any] = {"n_resamples": 100, "max_cost_per_attempt_usd": cap, "review_rate_usd_per_hour": 30.0}
    got = cost_per_accepted(frame, **kwargs).to_dict()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(per_accepted, "_units_read", lambda *_: True)
        reference = cost_per_accepted(frame, **kwargs).to_dict()
    assert got == reference


@settings(max_examples=examples(80), deadline=None)
@given(frame=records())
def test_shown_ids_are_the_five_smallest_as_before(frame: pl.DataFrame) -> None:
    prepared, by = prepare(frame, by=("system",), review_rate=30.0, machine_rate=None)
    got = per_accepted.group_statistics(prepared, by)
    reference = prepared.group_by(*by).agg(
        pl.col("record_id").filter(pl.col("__spend").is_null()).sort().head(5).alias("cost_unknown_ids"),
        pl.col("record_id").filter(pl.col("__human_unknown")).sort().head(5).alias("human_unknown_ids"),
    )
    assert got.select(*by, "cost_unknown_ids", "human_unknown_ids").equals(reference.sort(*by))


def test_no_cost_and_no_cap_builds_no_units(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pl.DataFrame(
        {"record_id": ["r1", "r2"], "system": "a", "case_id": ["x", "y"], "trial": 0, "attempt": 0,
         "outcome": ["passed", "failed"]}
    )  # fmt: skip
    built: list[int] = []
    real = per_accepted._units_by_group
    monkeypatch.setattr(per_accepted, "_units_by_group", lambda *a: built.append(1) or real(*a))
    group = cost_per_accepted(frame).group(system="a")
    assert built == []
    assert group.status == "insufficient_evidence"
    assert group.n_units == 2
    assert group.missing_costs is not None
    assert group.missing_costs.interval_status == "insufficient_evidence"
    cost_per_accepted(frame, max_cost_per_attempt_usd=1.0)
    assert built == [1]
