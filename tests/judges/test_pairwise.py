"""``pairwise_agreement``: counts partition the pairs, codings agree, conventions differ only by unparseable pairs."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatestats.judges import order_sensitivity, pairwise_agreement

VERDICT = st.sampled_from(["A", "B", "T", None])


@given(st.lists(st.tuples(st.sampled_from(["A", "B"]), VERDICT, VERDICT), max_size=40))
def test_counts_partition_and_conventions_differ_by_both_unparseable(
    rows: list[tuple[str, str | None, str | None]],
) -> None:
    frame = pl.DataFrame(
        {"label": [r[0] for r in rows], "verdict": [r[1] for r in rows], "verdict_swapped": [r[2] for r in rows]},
        schema={"label": pl.String, "verdict": pl.String, "verdict_swapped": pl.String},
    )
    ours = pairwise_agreement(frame, positive="A", negative="B", tie="T")
    llmbar = pairwise_agreement(frame, positive="A", negative="B", tie="T", convention="both-unparseable-agree")
    for o in (ours.original, ours.swapped):
        assert o is not None
        assert o.n_agreed + o.n_worse + o.n_tie + o.n_unparseable == len(rows)
    assert ours.n_both_unparseable is not None
    assert ours.n_consistent is not None
    assert ours.positional_agreement is not None
    assert llmbar.positional_agreement is not None
    assert llmbar.positional_agreement.numerator == ours.n_consistent + ours.n_both_unparseable
    assert llmbar.positional_agreement.n == len(rows)
    flips = order_sensitivity(frame, positive="A", negative="B", tie="T").flip_rate
    assert (ours.positional_agreement.n, ours.n_flips) == (flips.n, flips.numerator)


def test_presented_coding_gives_the_same_agreement() -> None:
    frame = pl.DataFrame({"label": ["A", "B", "A"], "verdict": ["A", "A", None], "verdict_swapped": ["A", "B", "B"]})
    presented = frame.with_columns(pl.col("verdict_swapped").replace({"A": "B", "B": "A"}))
    a = pairwise_agreement(frame, positive="A", negative="B")
    b = pairwise_agreement(presented, positive="A", negative="B", swapped_coding="presented")
    assert a.to_dict() == b.to_dict()


def test_one_order_only_and_bad_options() -> None:
    r = pairwise_agreement(pl.DataFrame({"label": ["A"], "verdict": ["B"]}), positive="A", negative="B")
    assert (r.original.n_worse, r.swapped, r.positional_agreement, r.two_order_accuracy) == (1, None, None, None)
    with pytest.raises(ValueError, match="convention"):
        pairwise_agreement(pl.DataFrame({"label": ["A"], "verdict": ["B"]}), positive="A", negative="B", convention="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="verdict"):
        pairwise_agreement(pl.DataFrame({"label": ["A"], "verdict": ["C"]}), positive="A", negative="B")
