"""Ranks with rank intervals and tie groups from adjusted pairwise tests (gatestats.paired.rank, issue 26 item 4)."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.paired import NoPairedCasesError, UnknownSystemError
from gatestats.paired.rank import RANK_FRAME_SCHEMA, Ranking, rank_systems
from tests.hypothesis_counts import examples
from tests.paired.conftest import SCHEMA


def _records(outcomes: dict[str, list[int]]) -> pl.DataFrame:
    """One trial per case: ``outcomes[system][i]`` is 1 (passed), 0 (failed) or -1 (infra error, no valid trial)."""
    names = {1: "passed", 0: "failed", -1: "infra_error"}
    rows = [
        (system, f"case-{i}", None, None, 0, 0, names[x])
        for system, column in outcomes.items()
        for i, x in enumerate(column)
    ]
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


def _check_invariants(ranking: Ranking) -> None:
    """The rank interval and group properties that hold for every ranking."""
    m = len(ranking.ranks)
    decided = {}
    for x, d in zip(ranking.comparisons.comparisons, ranking.comparisons.decisions, strict=True):
        decided[(x.baseline, x.candidate)] = decided[(x.candidate, x.baseline)] = d in (
            "candidate better",
            "baseline better",
        )
    for r in ranking.ranks:
        assert 1 <= r.rank_low <= r.rank_high <= m
        assert r.rank_low == 1 + len(r.worse_than)
        assert r.rank_high == m - len(r.better_than)
        if r.rank is not None:
            assert r.rank_low <= r.rank <= r.rank_high  # one trial per case: decisions follow the estimates
    for a, b in itertools.combinations(ranking.ranks, 2):
        if a.group != b.group:  # the property of issue 26: different groups differ significantly
            assert decided[(a.system, b.system)], (a.system, b.system)
        if b.system in a.better_than:
            assert a.estimate is not None
            assert b.estimate is not None
            assert a.estimate > b.estimate
    groups = [r.group for r in ranking.ranks]
    assert groups == sorted(groups)
    assert set(groups) == set(range(1, max(groups) + 1))


def test_three_clearly_different_systems_are_three_groups() -> None:
    ranking = rank_systems(_records({"A": [1, 1, 1, 0] * 25, "B": [1, 0, 0, 0] * 25, "C": [1, 1, 0, 0] * 25}))
    assert [(x.system, x.rank, x.rank_low, x.rank_high, x.group) for x in ranking.ranks] == [
        ("A", 1.0, 1, 1, 1),
        ("C", 2.0, 2, 2, 2),
        ("B", 3.0, 3, 3, 3),
    ]
    assert ranking.get("B").worse_than == ("A", "C")
    assert (ranking.n_cases, ranking.n_excluded_cases, ranking.alpha) == (100, 0, 0.05)
    _check_invariants(ranking)
    with pytest.raises(KeyError, match="not ranked"):
        ranking.get("Z")


def test_all_tied_systems_are_one_group_with_the_full_interval() -> None:
    column = [1, 0, 1, 1, 0] * 20
    ranking = rank_systems(_records(dict.fromkeys("ABCD", column)))
    assert {(x.rank, x.rank_low, x.rank_high, x.group) for x in ranking.ranks} == {(2.5, 1, 4, 1)}
    _check_invariants(ranking)


def test_a_chain_of_non_differences_is_one_group() -> None:
    """A ~ B ~ C but A better than C: connected components put all three in one group."""
    cases = [(1, 1, 0)] * 9 + [(1, 0, 0)] * 10 + [(0, 1, 1)] * 2 + [(0, 0, 1)] * 3 + [(0, 1, 0)] * 1
    cases += [(1, 1, 1)] * 30 + [(0, 0, 0)] * 45
    a, b, c = ([x[i] for x in cases] for i in range(3))
    ranking = rank_systems(_records({"A": a, "B": b, "C": c}))
    assert ranking.get("A").better_than == ("C",)
    assert ranking.get("B").better_than == ()
    assert {x.group for x in ranking.ranks} == {1}
    assert [(x.system, x.rank_low, x.rank_high) for x in ranking.ranks] == [("A", 1, 2), ("B", 1, 3), ("C", 2, 3)]
    _check_invariants(ranking)


def test_only_cases_every_system_ran_are_used() -> None:
    records = _records({"A": [1, 1, 1, 0] * 25, "B": [1, 0, 0, 0] * 25, "C": [1, 1, 0, 0] * 25})
    extra = pl.DataFrame([("A", "only-a", None, None, 0, 0, "passed")], schema=SCHEMA, orient="row")
    ranking = rank_systems(pl.concat([records, extra]))
    assert (ranking.n_cases, ranking.n_excluded_cases) == (100, 1)
    assert ranking.get("A").estimate == 0.75


def test_to_frame_has_the_publish_columns() -> None:
    ranking = rank_systems(_records({"A": [1, 1, 1, 0] * 25, "B": [1, 0, 0, 0] * 25}))
    frame = ranking.to_frame()
    assert frame.schema == pl.Schema(RANK_FRAME_SCHEMA)
    assert {"label", "rank", "rank_low", "rank_high", "group"} <= set(frame.columns)
    assert frame["system"].to_list() == ["A", "B"]
    payload = ranking.to_dict()
    assert payload["n_groups"] == 2
    assert len(payload["comparisons"]) == 1  # type: ignore[arg-type]


def test_insufficient_evidence_is_no_decision_and_no_point_rank() -> None:
    """A system whose per-case estimate is undefined on a shared case: its comparisons decide nothing."""
    records = _records({"A": [1, 1, 1, 0] * 25, "B": [1, 0, 0, 0] * 25, "C": [-1] + [1, 1, 0, 0] * 24 + [1, 1, 0]})
    ranking = rank_systems(records)
    c = ranking.get("C")
    assert (c.rank, c.estimate, c.rank_low, c.rank_high) == (None, None, 1, 3)
    assert ranking.get("A").rank_low == 1
    decisions = dict(
        zip(
            ((x.baseline, x.candidate) for x in ranking.comparisons.comparisons),
            ranking.comparisons.decisions,
            strict=True,
        )
    )
    assert decisions[("A", "C")] == decisions[("B", "C")] == "insufficient evidence"
    assert decisions[("A", "B")] == "baseline better"


def test_refusals() -> None:
    records = _records({"A": [1, 0] * 10, "B": [0, 1] * 10})
    with pytest.raises(ValueError, match="at least two systems"):
        rank_systems(records, systems=["A"])
    with pytest.raises(UnknownSystemError, match="'Z'"):
        rank_systems(records, systems=["A", "Z"])
    with pytest.raises(ValueError, match="family-wise"):
        rank_systems(records, correction="bh")
    apart = pl.concat([_records({"A": [1, 0]}), _records({"B": [1, 0]}).with_columns(case_id=pl.lit("other"))])
    with pytest.raises(NoPairedCasesError, match="no case was run by all 2 systems"):
        rank_systems(apart)


@settings(max_examples=examples(25), deadline=None)
@given(
    st.integers(2, 6),
    st.lists(st.floats(0.05, 0.95), min_size=6, max_size=6),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["holm", "bonferroni", "hochberg"]),
)
def test_property_groups_agree_with_the_adjusted_decisions(
    m: int, rates: list[float], seed: int, correction: str
) -> None:
    """Systems in different groups differ significantly; rank intervals are 1 + #better .. m - #worse."""
    rng = np.random.default_rng(seed)
    shared = rng.uniform(size=80)
    outcomes = {
        f"s{i}": [int(u < rates[i]) for u in np.where(rng.uniform(size=80) < 0.5, shared, rng.uniform(size=80))]
        for i in range(m)
    }
    _check_invariants(rank_systems(_records(outcomes), correction=correction))  # type: ignore[arg-type]


def test_average_ranks_are_scipys_rankdata_floats() -> None:
    # The point ranks were scipy.stats.rankdata(..., method="average") before session 40: the same floats.
    from scipy import stats

    from gatestats.paired.rank import _average_ranks

    rng = np.random.default_rng(40)
    for _ in range(500):
        n = int(rng.integers(0, 25))
        values = (rng.integers(0, 5, n) / 4 - 0.5).tolist() if rng.random() < 0.7 else rng.random(n).tolist()
        assert _average_ranks(values) == stats.rankdata(values, method="average").tolist(), values
