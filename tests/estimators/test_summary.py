"""Tests of ``gatestats.estimators.case_summary``: per-case sufficient statistics.

Outcome semantics come from /work/shared/DESIGN.md ("The run record"): ``resource_killed`` is a
candidate outcome (a valid non-pass), ``infra_error`` is neither a pass nor a failure and only
thins the case; a trial's outcome is that of its highest ``attempt`` (correction lineage).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.errors import GatestatsError
from gatestats.estimators import CaseSetError, case_summary
from tests.hypothesis_counts import examples

AsFrame = Callable[[pl.DataFrame], pl.DataFrame | pl.LazyFrame]
FRAME_KINDS: dict[str, AsFrame] = {
    "DataFrame": lambda frame: frame,
    "LazyFrame": lambda frame: frame.lazy(),
}
RECORD_SCHEMA = {
    "system": pl.String,
    "case_id": pl.String,
    "case_version": pl.String,
    "case_group": pl.String,
    "trial": pl.Int64,
    "attempt": pl.Int64,
    "outcome": pl.String,
}
SUMMARY_COLUMNS = [
    "system",
    "case_id",
    "case_version",
    "case_group",
    "n_trials",
    "n",
    "c",
    "n_resource_killed",
    "n_infra_errors",
]
OUTCOMES = ("passed", "failed", "resource_killed", "infra_error")


@pytest.fixture(params=list(FRAME_KINDS), ids=list(FRAME_KINDS))
def as_frame(request: pytest.FixtureRequest) -> AsFrame:
    """Hand the function under test a DataFrame, then a LazyFrame (STYLE.md: both modes)."""
    return FRAME_KINDS[request.param]


def records(rows: Sequence[dict[str, Any]]) -> pl.DataFrame:
    """Run records with defaults: system 's', no version, no group, attempt 0."""
    defaults = {"system": "s", "case_version": None, "case_group": None, "attempt": 0}
    return pl.DataFrame([{**defaults, **row} for row in rows], schema=RECORD_SCHEMA)


def trials(case_id: str, outcomes: Sequence[str], **fields: Any) -> list[dict[str, Any]]:
    """One record per trial of one case, trial numbers 0.."""
    return [{"case_id": case_id, "trial": i, "outcome": o, **fields} for i, o in enumerate(outcomes)]


def summary_row(summary: pl.DataFrame, case_id: str, system: str = "s") -> dict[str, Any]:
    rows = summary.filter((pl.col("case_id") == case_id) & (pl.col("system") == system)).to_dicts()
    assert len(rows) == 1
    return rows[0]


def test_case_summary_counts_every_outcome_kind(
    as_frame: AsFrame,
) -> None:
    frame = records(
        trials("b", ["passed", "failed", "resource_killed", "infra_error", "passed"])
        + trials("a", ["failed", "failed"])
    )
    summary = case_summary(as_frame(frame))
    assert isinstance(summary, pl.DataFrame)
    assert summary.columns == SUMMARY_COLUMNS
    assert summary["case_id"].to_list() == ["a", "b"]  # sorted by system and case
    assert summary_row(summary, "b") == {
        "system": "s",
        "case_id": "b",
        "case_version": None,
        "case_group": None,
        "n_trials": 5,
        "n": 4,  # passed + failed + resource_killed, infra_error excluded
        "c": 2,
        "n_resource_killed": 1,
        "n_infra_errors": 1,
    }
    assert summary_row(summary, "a")["n"] == 2
    assert summary_row(summary, "a")["c"] == 0
    for column in ("n_trials", "n", "c", "n_resource_killed", "n_infra_errors"):
        assert summary.schema[column] == pl.Int64


def test_infra_error_is_neither_a_pass_nor_a_failure(
    as_frame: AsFrame,
) -> None:
    frame = records(trials("a", ["passed", "infra_error", "infra_error", "passed"]))
    row = summary_row(case_summary(as_frame(frame)), "a")
    # counted as failures the pass rate would be 2/4; as passes 4/4; it must be 2/2
    assert (row["n"], row["c"], row["n_infra_errors"], row["n_trials"]) == (2, 2, 2, 4)


def test_resource_killed_is_a_valid_non_pass(
    as_frame: AsFrame,
) -> None:
    frame = records(trials("a", ["passed", "resource_killed", "resource_killed"]))
    row = summary_row(case_summary(as_frame(frame)), "a")
    assert (row["n"], row["c"], row["n_resource_killed"], row["n_infra_errors"]) == (3, 1, 2, 0)


def test_highest_attempt_of_a_trial_wins_whatever_the_row_order(
    as_frame: AsFrame,
) -> None:
    frame = records(
        [
            # trial 0: corrected from failed (attempt 0) to passed (attempt 2); rows out of order
            {"case_id": "a", "trial": 0, "attempt": 2, "outcome": "passed"},
            {"case_id": "a", "trial": 0, "attempt": 0, "outcome": "failed"},
            {"case_id": "a", "trial": 0, "attempt": 1, "outcome": "infra_error"},
            # trial 1: a later infra_error replaces an earlier pass
            {"case_id": "a", "trial": 1, "attempt": 0, "outcome": "passed"},
            {"case_id": "a", "trial": 1, "attempt": 1, "outcome": "infra_error"},
            # trial 2: attempt 10 beats attempt 9 numerically, not lexically
            {"case_id": "a", "trial": 2, "attempt": 10, "outcome": "failed"},
            {"case_id": "a", "trial": 2, "attempt": 9, "outcome": "passed"},
        ]
    )
    row = summary_row(case_summary(as_frame(frame)), "a")
    assert (row["n_trials"], row["n"], row["c"], row["n_infra_errors"]) == (3, 2, 1, 1)


def test_systems_are_summarised_separately(
    as_frame: AsFrame,
) -> None:
    frame = records(trials("a", ["passed", "passed"], system="base") + trials("a", ["failed", "passed"], system="cand"))
    summary = case_summary(as_frame(frame))
    assert summary.select("system", "case_id", "n", "c").rows() == [
        ("base", "a", 2, 2),
        ("cand", "a", 2, 1),
    ]


def test_case_group_is_carried_per_case(
    as_frame: AsFrame,
) -> None:
    frame = records(trials("a", ["passed", "failed"], case_group="g1") + trials("b", ["passed"]))
    summary = case_summary(as_frame(frame))
    assert summary.select("case_id", "case_group").rows() == [("a", "g1"), ("b", None)]


def test_mixed_case_versions_raise_case_set_error_with_exact_message(
    as_frame: AsFrame,
) -> None:
    frame = records(
        [
            *trials("a", ["passed"], case_version="v1"),
            {"case_id": "a", "trial": 1, "outcome": "failed", "case_version": "v2"},
        ]
    )
    expected = (
        "case 'a' of system 's' has records at several case versions (got ['v1', 'v2']); "
        "analyse one case-set version at a time"
    )
    with pytest.raises(CaseSetError, match=f"^{re.escape(expected)}$"):
        case_summary(as_frame(frame))


def test_the_case_named_among_several_at_mixed_versions_is_the_first_by_system_and_case_id() -> None:
    # Many cases of many systems at two versions: the message names the first by (system, case id), every time
    # (the versions' group_by ran without keeping order, so the case named changed from run to run).
    rows = [
        {"system": f"sys{s}", "case_id": f"c{c:03d}", "trial": t, "outcome": "passed", "case_version": f"v{t}"}
        for s in reversed(range(8))
        for c in reversed(range(40))
        for t in (0, 1)
    ]
    frame = records(rows)
    found = set()
    for _ in range(20):
        with pytest.raises(CaseSetError) as caught:
            case_summary(frame)
        found.add(str(caught.value))
    assert found == {
        "case 'c000' of system 'sys0' has records at several case versions (got ['v0', 'v1']); "
        "analyse one case-set version at a time"
    }


def test_a_versioned_and_an_unversioned_record_of_one_case_are_mixed_versions(
    as_frame: AsFrame,
) -> None:
    frame = records(
        [
            *trials("a", ["passed"], case_version="v1"),
            {"case_id": "a", "trial": 1, "outcome": "failed"},
        ]
    )
    with pytest.raises(CaseSetError, match=r"^case 'a' of system 's' has records at several case versions"):
        case_summary(as_frame(frame))


def test_case_set_error_is_a_value_error_and_a_gatestats_error() -> None:
    assert issubclass(CaseSetError, ValueError)
    assert issubclass(CaseSetError, GatestatsError)


def test_one_case_in_two_groups_raises_case_set_error_with_exact_message(
    as_frame: AsFrame,
) -> None:
    frame = records(
        [
            {"case_id": "a", "trial": 0, "outcome": "passed", "case_group": "g1"},
            {"case_id": "a", "trial": 1, "outcome": "passed", "case_group": "g2"},
        ]
    )
    expected = "case 'a' of system 's' carries more than one case_group; a case belongs to exactly one group"
    with pytest.raises(CaseSetError, match=f"^{re.escape(expected)}$"):
        case_summary(as_frame(frame))


def test_missing_required_column_raises_with_exact_message(
    as_frame: AsFrame,
) -> None:
    frame = records(trials("a", ["passed"])).drop("attempt", "case_group")
    with pytest.raises(ValueError, match=re.escape("records lack required column(s) ['case_group', 'attempt']")):
        case_summary(as_frame(frame))


def test_non_polars_input_raises_type_error_with_exact_message() -> None:
    with pytest.raises(TypeError, match=r"^records must be a polars DataFrame or LazyFrame \(got dict\)$"):
        case_summary({"case_id": ["a"]})  # type: ignore[arg-type]


@st.composite
def record_frames(draw: st.DrawFn) -> pl.DataFrame:
    """Random run records: systems x cases x trials, each trial with 1-3 attempts."""
    rows: list[dict[str, Any]] = []
    for system in draw(st.lists(st.sampled_from(["base", "cand", "x"]), min_size=1, max_size=2, unique=True)):
        n_cases = draw(st.integers(min_value=1, max_value=8))
        for case in range(n_cases):
            group = draw(st.sampled_from([None, "g0", "g1"]))
            n_trials = draw(st.integers(min_value=1, max_value=5))
            for trial in range(n_trials):
                outcomes = draw(st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=3))
                rows.extend(
                    {
                        "system": system,
                        "case_id": f"case-{case}",
                        "case_group": group,
                        "trial": trial,
                        "attempt": attempt,
                        "outcome": outcome,
                    }
                    for attempt, outcome in enumerate(outcomes)
                )
    return records(rows)


def oracle_summary(frame: pl.DataFrame) -> dict[tuple[str, str], tuple[int, int, int, int, int]]:
    """Independent reduction in plain Python: the last attempt of each trial decides."""
    final: dict[tuple[str, str, int], tuple[int, str]] = {}
    for row in frame.iter_rows(named=True):
        key = (row["system"], row["case_id"], row["trial"])
        if key not in final or row["attempt"] > final[key][0]:
            final[key] = (row["attempt"], row["outcome"])
    out: dict[tuple[str, str], list[int]] = {}
    for (system, case_id, _), (_, outcome) in final.items():
        counts = out.setdefault((system, case_id), [0, 0, 0, 0, 0])
        counts[0] += 1
        counts[1] += outcome != "infra_error"
        counts[2] += outcome == "passed"
        counts[3] += outcome == "resource_killed"
        counts[4] += outcome == "infra_error"
    return {key: (a, b, c, d, e) for key, (a, b, c, d, e) in out.items()}


@settings(max_examples=examples(60), deadline=None)
@given(frame=record_frames(), data=st.data())
def test_case_summary_matches_plain_python_reduction_and_ignores_row_order(
    frame: pl.DataFrame, data: st.DataObject
) -> None:
    expected = oracle_summary(frame)
    summary = case_summary(frame)
    got = {
        (r["system"], r["case_id"]): (
            r["n_trials"],
            r["n"],
            r["c"],
            r["n_resource_killed"],
            r["n_infra_errors"],
        )
        for r in summary.iter_rows(named=True)
    }
    assert got == expected
    order = data.draw(st.permutations(range(frame.height)))
    assert case_summary(frame[list(order)].lazy()).equals(summary)
