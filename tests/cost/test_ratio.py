"""Paired cost ratio for the gate: hand-computed values, pairing, p-values, statuses and errors."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import polars as pl
import pytest

from gatestats.cost import MIN_UNITS_RATIO, cost_ratio
from gatestats.errors import InsufficientEvidenceError
from gatestats.paired import CaseVersionMismatchError, NoPairedCasesError, UnknownSystemError
from tests.cost.conftest import frame, many_cases

LAZY = pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])


def _pair(n: int, *, seed: int = 0, factor: float = 1.3) -> list[dict[str, Any]]:
    base = many_cases(n, system="base", seed=seed)
    cand = many_cases(n, system="cand", seed=seed + 1, scale=factor)
    return base + cand


@LAZY
def test_ratio_is_candidate_over_baseline_cost_per_accepted_on_shared_cases(lazy: bool) -> None:
    rows = [
        {"system": "base", "case_id": "x", "cost_usd": 1.0},
        {"system": "base", "case_id": "y", "cost_usd": 3.0, "outcome": "failed"},
        {"system": "base", "case_id": "only-base", "cost_usd": 100.0},
        {"system": "cand", "case_id": "x", "cost_usd": 2.0},
        {"system": "cand", "case_id": "y", "cost_usd": 2.0},
        {"system": "cand", "case_id": "y", "trial": 1, "cost_usd": 2.0, "outcome": "infra_error"},
        {"system": "cand", "case_id": "only-cand", "cost_usd": 100.0},
    ]
    data = frame(rows)
    r = cost_ratio(data.lazy() if lazy else data, baseline="base", candidate="cand")
    # by hand, shared cases x and y: baseline (1 + 3) / 1 = 4; candidate (2 + 2 + 2) / 2 = 3
    assert (r.baseline_cpa, r.candidate_cpa, r.ratio) == (4.0, 3.0, 0.75)
    assert (r.baseline_accepted, r.candidate_accepted, r.baseline_spend_usd, r.candidate_spend_usd) == (1, 2, 4.0, 6.0)
    assert (r.unpaired_baseline, r.unpaired_candidate, r.n_cases) == (("only-base",), ("only-cand",), 2)
    assert r.status == "ok"
    assert r.interval_status == "insufficient_evidence"


def test_paired_resampling_draws_the_same_cases_for_both_systems() -> None:
    # The candidate costs exactly twice the baseline on every case with the same outcomes: every
    # paired resample has ratio 2 (independent resampling of the two sides would scatter it).
    base = many_cases(MIN_UNITS_RATIO, system="base")
    cand = [{**row, "system": "cand", "record_id": "c" + row["record_id"],
             "cost_model_usd": 2 * row["cost_model_usd"]} for row in base]  # fmt: skip
    r = cost_ratio(frame(base + cand), baseline="base", candidate="cand", n_resamples=500)
    assert r.ratio == pytest.approx(2.0)
    assert r.interval_status == "insufficient_evidence"
    assert r.interval_reason == "the resampled values do not vary (all 2): the interval would have zero width"
    # every resample is 2: below the limit 2.5 in all 500, above 1.5 in all 500
    assert r.pvalues(2.5) == (1 / 501, 1.0)
    assert r.pvalues(1.5) == (1.0, 1 / 501)


def test_pvalues_count_resamples_on_the_wrong_side() -> None:
    r = cost_ratio(frame(_pair(60)), baseline="base", candidate="cand", seed=11)
    assert r.status == "ok"
    assert r.interval_status == "ok"
    assert r.ci_low is not None
    assert r.ci_high is not None
    draws = r._bootstrap.draws  # type: ignore[union-attr]
    for limit in (r.ci_low, r.ratio, r.ci_high, 1.0, 2.0):
        assert limit is not None
        p_within, p_above = r.pvalues(limit)
        assert p_within == (1 + np.sum(draws >= limit)) / (draws.size + 1)
        assert p_above == (1 + np.sum(draws <= limit)) / (draws.size + 1)
    # the percentile bounds sit at the 2.5% tails: the one-sided p-values there are about 0.025
    assert r.pvalues(r.ci_high)[0] == pytest.approx(0.025, abs=0.002)
    assert r.pvalues(r.ci_low)[1] == pytest.approx(0.025, abs=0.002)
    assert r.seed == 11
    assert r.method == "percentile"


def test_swapping_baseline_and_candidate_inverts_ratio_and_interval() -> None:
    rows = _pair(50)
    ab = cost_ratio(frame(rows), baseline="base", candidate="cand")
    ba = cost_ratio(frame(rows), baseline="cand", candidate="base")
    assert ab.ratio is not None
    assert ba.ratio is not None
    assert ab.ci_low is not None
    assert ab.ci_high is not None
    assert ba.ci_low is not None
    assert ba.ci_high is not None
    assert ab.ratio * ba.ratio == pytest.approx(1.0)
    # same seed, same resampled cases: the draws are reciprocal, rank 50 <-> rank 1951 of 2000
    assert (ab.ci_low, ab.ci_high) == (pytest.approx(1 / ba.ci_high), pytest.approx(1 / ba.ci_low))


def test_a_side_without_accepted_outcome_is_insufficient_evidence() -> None:
    rows = _pair(40)
    for row in rows:
        if row["system"] == "cand":
            row["outcome"] = "failed"
    r = cost_ratio(frame(rows), baseline="base", candidate="cand")
    assert (r.status, r.ratio, r.candidate_cpa) == ("insufficient_evidence", None, None)
    assert r.baseline_cpa is not None
    assert r.reason == (
        "candidate 'cand': no accepted outcome: none of the 40 trial(s) ended (final attempt) in 'passed'; "
        "cost per accepted outcome is undefined"
    )
    with pytest.raises(InsufficientEvidenceError, match=re.escape("cost ratio 'cand'/'base': no p-values: candidate")):
        r.pvalues(1.2)


def test_unknown_cost_on_a_paired_case_is_insufficient_evidence() -> None:
    rows = _pair(40)
    rows[0]["cost_model_usd"] = None
    r = cost_ratio(frame(rows), baseline="base", candidate="cand")
    assert r.status == "insufficient_evidence"
    assert r.baseline_spend_usd is None
    assert r.reason is not None
    assert r.reason.startswith("baseline 'base': spend unknown: 1 of 40 attempt(s)")


def test_pvalues_need_the_minimum_number_of_paired_cases() -> None:
    r = cost_ratio(frame(_pair(MIN_UNITS_RATIO - 1)), baseline="base", candidate="cand")
    assert r.status == "ok"
    assert r.ratio is not None
    assert r.interval_status == "insufficient_evidence"
    with pytest.raises(InsufficientEvidenceError, match="p-values need at least 50 paired independent units"):
        r.pvalues(1.2)
    with pytest.raises(ValueError, match=re.escape("limit_ratio must be a finite number > 0 (got 0.0)")):
        r.pvalues(0.0)


def test_slice_restricts_the_comparison_to_its_cases() -> None:
    rows = _pair(40)
    for row in rows:
        row["slices"] = ["even"] if int(row["case_id"][1:]) % 2 == 0 else ["odd"]
    whole = cost_ratio(frame(rows), baseline="base", candidate="cand")
    even = cost_ratio(frame(rows), baseline="base", candidate="cand", slice="even")
    sub = [row for row in rows if row["slices"] == ["even"]]
    direct = cost_ratio(frame(sub), baseline="base", candidate="cand")
    assert (even.n_cases, whole.n_cases, even.slice) == (20, 40, "even")
    assert even.ratio == pytest.approx(direct.ratio)


def test_review_time_enters_both_sides() -> None:
    review = {"reviewer": "ann", "review_started_at": "2024-05-01T10:00:00Z", "review_ended_at": "2024-05-01T11:00:00Z"}
    rows = [
        {"system": "base", "case_id": "x", "cost_usd": 1.0},
        {"system": "cand", "case_id": "x", "cost_usd": 1.0, **review},
    ]
    r = cost_ratio(frame(rows), baseline="base", candidate="cand", review_rate_usd_per_hour=9.0)
    assert (r.baseline_cpa, r.candidate_cpa, r.ratio) == (1.0, 10.0, 10.0)


def test_pairing_errors_match_the_paired_comparison() -> None:
    rows = [{"system": "base", "case_id": "x", "cost_usd": 1.0}, {"system": "cand", "case_id": "y", "cost_usd": 1.0}]
    with pytest.raises(NoPairedCasesError, match="share no case"):
        cost_ratio(frame(rows), baseline="base", candidate="cand")
    with pytest.raises(UnknownSystemError, match="cand2"):
        cost_ratio(frame(rows), baseline="base", candidate="cand2")
    versions = [
        {"system": "base", "case_id": "x", "case_version": "v1", "cost_usd": 1.0},
        {"system": "cand", "case_id": "x", "case_version": "v2", "cost_usd": 1.0},
        {"system": "base", "case_id": "y", "cost_usd": 1.0},
        {"system": "cand", "case_id": "y", "cost_usd": 2.0},
    ]
    with pytest.raises(CaseVersionMismatchError, match="different versions"):
        cost_ratio(frame(versions), baseline="base", candidate="cand")
    r = cost_ratio(frame(versions), baseline="base", candidate="cand", shared_versions_only=True)
    assert (r.ratio, r.n_cases, r.excluded_versions) == (2.0, 1, ("x@v1", "x@v2"))


@LAZY
def test_dataframe_and_lazyframe_give_the_same_ratio(lazy: bool) -> None:
    data = frame(_pair(45))
    eager = cost_ratio(data, baseline="base", candidate="cand", seed=4)
    other = cost_ratio(data.lazy() if lazy else data.clone(), baseline="base", candidate="cand", seed=4)
    assert eager.to_dict() == other.to_dict()
    assert eager.to_frame().equals(other.to_frame())
    assert eager.to_frame().columns[:5] == ["baseline", "candidate", "slice", "status", "ratio"]


def test_confidence_interval_at_another_level_reuses_the_resamples() -> None:
    r = cost_ratio(frame(_pair(60)), baseline="base", candidate="cand")
    same = r.confidence_interval(0.95)
    assert (same.ci_low, same.ci_high) == (r.ci_low, r.ci_high)
    wide = r.confidence_interval(0.99)
    assert wide.ci_low is not None
    assert r.ci_low is not None
    assert wide.ci_high is not None
    assert r.ci_high is not None
    assert wide.ci_low < r.ci_low
    assert wide.ci_high > r.ci_high
    assert isinstance(r.to_frame(), pl.DataFrame)
