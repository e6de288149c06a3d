"""Five SWE-bench Verified submissions on their 500 shared instances (data/swe_bench_verified, issue 26).

The resolved counts are the leaderboard's (data/swe_bench_verified/PROVENANCE.md); the exact McNemar
p-values are checked against scipy's binomial test on the discordant pairs.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from scipy import stats

from gatestats.paired import compare_many
from gatestats.paired.rank import rank_systems

DATA = Path(__file__).resolve().parents[2] / "data" / "swe_bench_verified"

# swebench.com leaderboard, % resolved of 500 (PROVENANCE.md)
PUBLISHED = {
    "20241022_tools_claude-3-5-sonnet-updated": 245,
    "20241023_emergent": 233,
    "20241025_composio_swekit": 243,
    "20241028_agentless-1.5_gpt4o": 194,
    "20241028_solver": 250,
}


@pytest.fixture(scope="module")
def records() -> pl.DataFrame:
    frame = pl.read_ndjson(DATA / "records.jsonl")
    return frame.with_columns(case_version=pl.lit(None, pl.String), case_group=pl.lit(None, pl.String))


def test_resolved_counts_are_the_published_ones(records: pl.DataFrame) -> None:
    counts = records.group_by("system").agg((pl.col("outcome") == "passed").sum().alias("n"), pl.len().alias("m"))
    assert {row["system"]: row["n"] for row in counts.iter_rows(named=True)} == PUBLISHED
    assert set(counts["m"].to_list()) == {500}


def test_exact_mcnemar_pvalues_and_family_decisions(records: pl.DataFrame) -> None:
    family = compare_many(records)
    assert len(family.comparisons) == 10
    for x, decision, s in zip(family.comparisons, family.decisions, family.simultaneous, strict=True):
        expected = stats.binomtest(x.c, x.b + x.c, 0.5).pvalue
        assert x.pvalue_exact == pytest.approx(expected, rel=1e-9)
        assert x.p_candidate == PUBLISHED[x.candidate] / 500
        assert s.decision == decision  # on these data the Holm intervals agree with every Holm decision
    assert sum(d != "no significant difference" for d in family.decisions) == 4  # agentless against each other


def test_ranking_of_the_five(records: pl.DataFrame) -> None:
    ranking = rank_systems(records)
    top = [x for x in ranking.ranks if x.group == 1]
    assert {x.system for x in top} == set(PUBLISHED) - {"20241028_agentless-1.5_gpt4o"}
    assert {(x.rank_low, x.rank_high) for x in top} == {(1, 4)}
    last = ranking.get("20241028_agentless-1.5_gpt4o")
    assert (last.rank, last.rank_low, last.rank_high, last.group) == (5.0, 5, 5, 2)
