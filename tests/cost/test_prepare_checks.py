"""``prepare``'s fast checks answer as the exact ones (issue 28, item 5).

Distinct key hashes prove that no key repeats without the exact (memory-hungry) duplicate search,
and records that carry no ``case_group`` at all skip the search for a case in two groups: both
still refuse what they refused.
"""

from __future__ import annotations

import polars as pl
import pytest

from gatestats.cost._frames import TIMESTAMPS, prepare


def _frame(n: int = 60) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "record_id": [f"r-{i}" for i in range(n)],
            "system": ["a" if i < n // 2 else "b" for i in range(n)],
            "case_id": [f"c-{(i % (n // 2)) // 3:02d}" for i in range(n)],
            "case_version": [None if i % 5 else "v1" for i in range(n)],
            "trial": [i % 3 for i in range(n)],
            "attempt": 0,
            "outcome": ["passed" if i % 4 else "failed" for i in range(n)],
            "cost_usd": [0.1 * (i % 7) + 1e-9 * i for i in range(n)],
        }
    ).sort("system", "case_id", "case_version", "trial", "attempt", nulls_last=False)


def test_repeated_keys_in_order_are_still_refused() -> None:
    frame = _frame()
    twice = pl.concat([frame.head(1), frame]).with_columns(pl.Series("record_id", [f"x-{i}" for i in range(61)]))
    with pytest.raises(ValueError, match=r"duplicate key .* in records 'x-0', 'x-1'"):
        prepare(twice, by=("system",), review_rate=None, machine_rate=None)


def test_a_case_in_a_group_and_in_none_is_still_refused() -> None:
    frame = _frame().with_columns(pl.when(pl.col("record_id") == "r-0").then(pl.lit("g")).alias("case_group"))
    with pytest.raises(ValueError, match="several case_group values"):
        prepare(frame, by=("system",), review_rate=None, machine_rate=None)
    no_group = _frame().with_columns(pl.lit(None, dtype=pl.String).alias("case_group"))
    prepared, _ = prepare(no_group, by=("system",), review_rate=None, machine_rate=None)
    assert prepared.height == 60


def test_a_column_null_on_every_record_is_prepared_as_before() -> None:
    """Added after the sort as one null: the same columns, order, types and values as read and sorted."""
    base = _frame().with_columns(pl.col("cost_usd").alias("machine_seconds"))
    nulls = base.with_columns(
        pl.lit(None, dtype=pl.Float64).alias("cost_model_usd"),
        pl.lit(None, dtype=pl.String).alias("reviewer"),
        pl.lit(None, dtype=pl.String).alias("review_started_at"),
        pl.lit(None, dtype=pl.Null).alias("correction_ended_at"),
        pl.lit(None, dtype=pl.String).alias("case_group"),
    )
    shuffled = nulls.sample(fraction=1.0, shuffle=True, seed=2836)
    eager, _ = prepare(shuffled, by=("system",), review_rate=None, machine_rate=0.5)
    lazy, _ = prepare(shuffled.lazy(), by=("system",), review_rate=None, machine_rate=0.5)  # read once: sorted whole
    assert eager.columns == lazy.columns
    assert eager.schema == lazy.schema
    assert eager.equals(lazy)


def test_a_mistyped_column_is_refused_even_when_every_value_is_null() -> None:
    frame = _frame().with_columns(pl.lit(None, dtype=pl.String).alias("cost_tool_usd"))
    with pytest.raises(ValueError, match="cost_tool_usd"):
        prepare(frame, by=("system",), review_rate=None, machine_rate=None)
    naive = _frame().with_columns(pl.lit(None, dtype=pl.Datetime("us")).alias("review_ended_at"))
    with pytest.raises(ValueError, match="time zone"):
        prepare(naive, by=("system",), review_rate=None, machine_rate=None)


def test_the_prepared_frame_holds_the_parsed_times_not_their_texts() -> None:
    """The timestamp texts are checked and parsed, then dropped: ~80 bytes a runner record not held (issue 28)."""
    frame = _frame().with_columns(
        pl.lit("2026-11-01T09:00:00Z").alias("started_at"), pl.lit("2026-11-01T09:00:05.5Z").alias("ended_at")
    )
    prepared, _ = prepare(frame, by=("system",), review_rate=None, machine_rate=None)
    assert not set(TIMESTAMPS) & set(prepared.columns)
    assert {f"__{name}" for name in TIMESTAMPS} <= set(prepared.columns)
    assert prepared.get_column("__end_us").unique().to_list() == [prepared.get_column("__start_us")[0] + 5_500_000]
    late = frame.with_columns(pl.lit("2026-11-01T08:00:00Z").alias("ended_at"))
    with pytest.raises(ValueError, match=r"field 'ended_at'.*got '2026-11-01T08:00:00Z'"):
        prepare(late, by=("system",), review_rate=None, machine_rate=None)  # still named with its text
