"""Hypothesis properties of the cost per accepted outcome and of the human-time attribution."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gatestats.cost import attribute_overlaps, cost_per_accepted, merge_intervals
from tests.cost.conftest import frame, many_cases
from tests.hypothesis_counts import examples

FINAL = ("passed", "failed", "resource_killed", "infra_error")
EARLIER = ("failed", "infra_error")
costs = st.floats(min_value=0.0, max_value=50.0, allow_nan=False).map(lambda x: round(x, 3))


@st.composite
def trial_records(draw: st.DrawFn, *, min_cases: int = 1, max_cases: int = 6) -> list[dict[str, Any]]:
    """Cases x trials x attempts (earlier attempts failed or infra_error), each with a spend."""
    rows: list[dict[str, Any]] = []
    for case in range(draw(st.integers(min_cases, max_cases))):
        for trial in range(draw(st.integers(1, 3))):
            attempts = draw(st.integers(1, 3))
            for attempt in range(attempts):
                outcome = draw(st.sampled_from(FINAL if attempt == attempts - 1 else EARLIER))
                rows.append(
                    {
                        "record_id": f"r-{case}-{trial}-{attempt}",
                        "case_id": f"c{case}",
                        "trial": trial,
                        "attempt": attempt,
                        "outcome": outcome,
                        "bound": "wall_clock" if outcome == "resource_killed" else None,
                        "cost_model_usd": draw(costs),
                        "cost_tool_usd": draw(st.none() | costs),
                    }
                )
    return rows


def _cpa(rows: list[dict[str, Any]], **kwargs: Any) -> Any:
    return cost_per_accepted(frame(rows), n_resamples=100, **kwargs).groups[0]


@settings(max_examples=examples(60))
@given(rows=trial_records(), extra=costs, data=st.data())
def test_adding_a_failed_attempt_never_lowers_the_cost_per_accepted_outcome(
    rows: list[dict[str, Any]], extra: float, data: st.DataObject
) -> None:
    before = _cpa(rows)
    assume(before.status == "ok")
    trials = sorted({(r["case_id"], r["trial"]) for r in rows})
    where = data.draw(st.sampled_from([*trials, None]))
    if where is None:  # a new trial of a new case
        added = {"case_id": "new", "trial": 0, "attempt": 0}
    else:  # a new, final attempt of an existing trial (it supersedes the trial's outcome)
        top = max(r["attempt"] for r in rows if (r["case_id"], r["trial"]) == where)
        added = {"case_id": where[0], "trial": where[1], "attempt": top + 1}
    after = _cpa([*rows, {**added, "record_id": "added", "outcome": "failed", "cost_model_usd": extra}])
    if after.status == "ok":
        assert after.estimate >= before.estimate * (1 - 1e-12)
    else:  # the only accepted outcome was superseded: undefined, never lower
        assert after.accepted == 0


@settings(max_examples=examples(25))
@given(seed=st.integers(0, 2**16), scale=st.floats(min_value=0.01, max_value=100.0))
def test_scaling_every_cost_and_rate_scales_estimate_and_interval(seed: int, scale: float) -> None:
    rows = many_cases(36, seed=seed)
    for i, row in enumerate(rows):
        if i % 3 == 0:  # execution spend imputed from machine time
            row["machine_seconds"] = 60.0 * (i + 1)
        if i % 4 == 0:  # overlapping review by one reviewer
            row |= {"reviewer": "ann", "review_started_at": f"2024-05-01T10:{i:02d}:00Z",
                    "review_ended_at": f"2024-05-01T11:{i:02d}:00Z"}  # fmt: skip
    scaled = [{**row, "cost_model_usd": row["cost_model_usd"] * scale} for row in rows]
    rates = {"review_rate_usd_per_hour": 40.0, "machine_rate_usd_per_hour": 3.0}
    base = cost_per_accepted(frame(rows), seed=seed, n_resamples=400, **rates).groups[0]
    big = cost_per_accepted(
        frame(scaled), seed=seed, n_resamples=400, **{k: v * scale for k, v in rates.items()}
    ).groups[0]
    assert base.interval_status == big.interval_status == "ok"
    for name in ("estimate", "ci_low", "ci_high", "total_spend_usd", "review_usd", "imputed_execution_usd"):
        assert getattr(big, name) == pytest.approx(getattr(base, name) * scale, rel=1e-9), name
    assert big.human_hours == pytest.approx(base.human_hours, rel=1e-12)


@settings(max_examples=examples(40))
@given(rows=trial_records())
def test_estimate_is_the_ratio_of_sums(rows: list[dict[str, Any]]) -> None:
    g = _cpa(rows)
    spend = sum(r["cost_model_usd"] + (r["cost_tool_usd"] or 0.0) for r in rows)
    final: dict[tuple[str, int], tuple[int, str]] = {}
    for r in rows:
        key = (r["case_id"], r["trial"])
        final[key] = max(final.get(key, (-1, "")), (r["attempt"], r["outcome"]))
    accepted = sum(outcome == "passed" for _, outcome in final.values())
    assert (g.accepted, g.trials, g.attempts) == (accepted, len(final), len(rows))
    assert g.total_spend_usd == pytest.approx(spend)
    if accepted:
        assert g.estimate == pytest.approx(spend / accepted)
    else:
        assert (g.status, g.estimate) == ("insufficient_evidence", None)


def test_ratio_of_sums_is_not_the_mean_of_per_case_ratios() -> None:
    rows = [
        {"case_id": "x", "cost_usd": 1.0},  # 1 USD for 1 accepted
        *({"case_id": "y", "trial": t, "cost_usd": 3.0} for t in range(3)),  # 9 USD for 3 accepted
    ]
    g = _cpa(rows)
    # ratio of sums (1 + 9) / (1 + 3) = 2.5; the mean of per-case ratios (1 + 3) / 2 = 2 would be wrong
    assert g.estimate == 2.5
    assert g.estimate != (1.0 / 1 + 9.0 / 3) / 2


@settings(max_examples=examples(20))
@given(seed=st.integers(0, 2**16), order=st.randoms(use_true_random=False))
def test_row_order_does_not_change_the_result(seed: int, order: random.Random) -> None:
    rows = many_cases(32, seed=seed, trials=2, group_size=None)
    rows[0] |= {
        "reviewer": "ann",
        "review_started_at": "2024-05-01T10:00:00Z",
        "review_ended_at": "2024-05-01T11:00:00Z",
    }
    rows[5] |= {
        "reviewer": "ann",
        "review_started_at": "2024-05-01T10:30:00Z",
        "review_ended_at": "2024-05-01T12:00:00Z",
    }
    shuffled = rows.copy()
    order.shuffle(shuffled)
    kwargs: dict[str, Any] = {"review_rate_usd_per_hour": 30.0, "n_resamples": 300, "seed": seed}
    assert cost_per_accepted(frame(rows), **kwargs).to_dict() == cost_per_accepted(frame(shuffled), **kwargs).to_dict()


@settings(max_examples=examples(20))
@given(rows=trial_records(min_cases=1, max_cases=8), by_slice=st.booleans())
def test_dataframe_and_lazyframe_give_identical_results(rows: list[dict[str, Any]], by_slice: bool) -> None:
    for i, row in enumerate(rows):
        row["slices"] = [["a"], ["a", "b"], None][i % 3]
    data = frame(rows)
    by = ("system", "slice") if by_slice else ("system",)
    eager = cost_per_accepted(data, by=by, n_resamples=100)
    lazy = cost_per_accepted(data.lazy(), by=by, n_resamples=100)
    assert eager.to_dict() == lazy.to_dict()
    assert eager.to_frame().equals(lazy.to_frame())


intervals = st.lists(
    st.tuples(st.integers(0, 100), st.integers(0, 30), st.sampled_from(["ann", "bob", None])), max_size=25
)


@settings(max_examples=examples(100))
@given(items=intervals, order=st.randoms(use_true_random=False))
def test_attributed_shares_sum_to_each_reviewers_merged_time(
    items: list[tuple[int, int, str | None]], order: random.Random
) -> None:
    starts = np.array([s for s, _, _ in items], dtype=float)
    ends = starts + np.array([d for _, d, _ in items], dtype=float)
    owners = [o for _, _, o in items]
    shares = attribute_overlaps(starts, ends, owners=owners)
    assert np.all(shares >= 0)
    assert np.all(shares <= ends - starts + 1e-9)
    for owner in ("ann", "bob"):
        mask = np.array([o == owner for o in owners], dtype=bool)
        merged_start, merged_end = merge_intervals(starts[mask], ends[mask])
        assert shares[mask].sum() == pytest.approx(float((merged_end - merged_start).sum()), abs=1e-9)
    unknown = np.array([o is None for o in owners], dtype=bool)
    assert np.allclose(shares[unknown], (ends - starts)[unknown])  # unknown reviewers: never merged
    permutation = list(range(len(items)))
    order.shuffle(permutation)
    again = attribute_overlaps(starts[permutation], ends[permutation], owners=[owners[i] for i in permutation])
    assert np.allclose(again, shares[permutation])


def test_attribution_splits_an_overlap_equally_by_hand() -> None:
    # ann 10:00-10:45 and 10:30-11:00 (minutes from 10:00): alone 30 + 15 shared / 2; alone 15 + 15 / 2
    shares = attribute_overlaps([0, 30], [45, 60], owners=["ann", "ann"])
    assert shares.tolist() == [37.5, 22.5]
    assert attribute_overlaps([0, 10], [10, 20]).tolist() == [10.0, 10.0]  # touching: no overlap
    with pytest.raises(ValueError, match=r"^interval 1 ends before it starts \(got start 5, end 4\)$"):
        attribute_overlaps([0, 5], [1, 4])
