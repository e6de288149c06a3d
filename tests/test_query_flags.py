"""gatestats._query.EAGER: polars' eager-operation flags on the locked polars, the default flags without them.

The flags choose how a plan runs, never what it computes; the case table and grouping queries use them
because on a gate's few rows the default optimizer passes cost more than the query (issue 28). They come
from a constructor polars does not make public: the first test fails when the locked polars stops having
it (look for its replacement then), the second shows the fallback computes the same frames.
"""

from __future__ import annotations

import polars as pl
import pytest

from gatestats import _query


def test_the_locked_polars_gives_its_eager_flags() -> None:
    assert callable(getattr(pl.QueryOptFlags, "_eager", None)), "polars has no QueryOptFlags._eager any more"
    flags = _query.EAGER
    default = pl.QueryOptFlags()
    assert default.predicate_pushdown  # what the eager flags turn off
    assert default.projection_pushdown
    assert not flags.predicate_pushdown
    assert not flags.projection_pushdown
    assert not flags.comm_subplan_elim
    assert flags.simplify_expression


def test_without_them_the_default_flags_give_the_same_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(pl.QueryOptFlags, "_eager")
    fallback = _query._eager_flags()
    assert fallback.predicate_pushdown
    assert fallback.projection_pushdown
    left = pl.DataFrame({"case_id": ["b", "a", "a", None], "case_version": [None, "2", "1", None], "n": [1, 2, 3, 4]})
    right = pl.DataFrame({"case_id": ["a", "b"], "group": ["g", None]})
    plan = (
        left.lazy()
        .join(right.lazy(), on="case_id", how="left", nulls_equal=True)
        .with_row_index("__row")
        .filter(pl.col("n") > 1)
        .group_by("case_id", maintain_order=True)
        .agg(pl.col("n").sum(), pl.col("group").drop_nulls().first())
    )
    eager = plan.collect(optimizations=_query.EAGER)
    assert eager.equals(plan.collect(optimizations=fallback))
    assert eager.equals(plan.collect())
