"""25 SWE-bench Verified submissions on their 500 shared instances (data/swe_bench_verified, issue 26).

The resolved counts are the reference listing's (data/swe_bench_verified/PROVENANCE.md); the exact
McNemar p-values of the original five are checked against scipy's binomial test on the discordant
pairs; the ranking of all 25 is checked against the Holm-adjusted pairwise decisions of
:func:`compare_many` run on its own.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import polars as pl
import pytest
from scipy import stats

from gatestats.paired import compare_many
from gatestats.paired.multiplicity import MultipleComparison
from gatestats.paired.rank import Ranking, rank_systems

DATA = Path(__file__).resolve().parents[2] / "data" / "swe_bench_verified"

# Resolved of 500 = % resolved x 5, from the listing named in PROVENANCE.md (SWE-bench/experiments
# at commit 40f164d5, "overall Verified score as computed from their own files").
PUBLISHED = {
    "20240920_solver": 218,  # 43.6%
    "20240924_solver": 227,  # 45.4%
    "20241001_nfactorial": 129,  # 25.8%
    "20241002_lingma-agent_lingma-swe-gpt-72b": 144,  # 28.8%
    "20241002_lingma-agent_lingma-swe-gpt-7b": 91,  # 18.2%
    "20241007_nfactorial": 158,  # 31.6%
    "20241016_composio_swekit": 203,  # 40.6%
    "20241016_epam-ai-run-gpt-4o": 135,  # 27.0%
    "20241022_tools_claude-3-5-haiku": 203,  # 40.6%
    "20241022_tools_claude-3-5-sonnet-updated": 245,  # 49.0%
    "20241023_emergent": 233,  # 46.6%
    "20241025_composio_swekit": 243,  # 48.6%
    "20241028_agentless-1.5_gpt4o": 194,  # 38.8%
    "20241028_solver": 250,  # 50.0%
    "20241029_OpenHands-CodeAct-2.1-sonnet-20241022": 265,  # 53.0%
    "20241029_epam-ai-run-claude-3-5-sonnet": 198,  # 39.6%
    "20241030_nfactorial": 208,  # 41.6%
    "20241105_nfactorial": 246,  # 49.2%
    "20241106_navie-2-gpt4o-sonnet": 236,  # 47.2%
    "20241108_autocoderover-v2.0-claude-3-5-sonnet-20241022": 231,  # 46.2%
    "20241108_devlo": 271,  # 54.2%
    "20241113_nebius-search-open-weight-models-11-24": 203,  # 40.6%
    "20241120_artemis_agent": 160,  # 32.0%
    "20241125_enginelabs": 259,  # 51.8%
    "20241125_marscode-agent-dev": 250,  # 50.0%
}
# The original five-system comparison (October 2024), kept with systems= / --systems.
FIVE = (
    "20241022_tools_claude-3-5-sonnet-updated",
    "20241023_emergent",
    "20241025_composio_swekit",
    "20241028_agentless-1.5_gpt4o",
    "20241028_solver",
)
ALPHA = 0.05


@pytest.fixture(scope="module")
def records() -> pl.DataFrame:
    frame = pl.read_ndjson(DATA / "records.jsonl")
    return frame.with_columns(case_version=pl.lit(None, pl.String), case_group=pl.lit(None, pl.String))


@pytest.fixture(scope="module")
def ranking(records: pl.DataFrame) -> Ranking:
    return rank_systems(records)


@pytest.fixture(scope="module")
def family(records: pl.DataFrame) -> MultipleComparison:
    return compare_many(records)  # all 300 pairs, Holm, run apart from the ranking


def test_resolved_counts_are_the_published_ones(records: pl.DataFrame) -> None:
    counts = records.group_by("system").agg((pl.col("outcome") == "passed").sum().alias("n"), pl.len().alias("m"))
    assert {row["system"]: row["n"] for row in counts.iter_rows(named=True)} == PUBLISHED
    assert set(counts["m"].to_list()) == {500}
    assert records.select(pl.col("case_id").n_unique()).item() == 500


def test_exact_mcnemar_pvalues_and_family_decisions(records: pl.DataFrame) -> None:
    family = compare_many(records, systems=FIVE)
    assert len(family.comparisons) == 10
    for x, decision, s in zip(family.comparisons, family.decisions, family.simultaneous, strict=True):
        expected = stats.binomtest(x.c, x.b + x.c, 0.5).pvalue
        assert x.pvalue_exact == pytest.approx(expected, rel=1e-9)
        assert x.p_candidate == PUBLISHED[x.candidate] / 500
        assert s.decision == decision  # on these data the Holm intervals agree with every Holm decision
    assert sum(d != "no significant difference" for d in family.decisions) == 4  # agentless against each other


def test_ranking_of_the_five(records: pl.DataFrame) -> None:
    ranking = rank_systems(records, systems=FIVE)
    top = [x for x in ranking.ranks if x.group == 1]
    assert {x.system for x in top} == set(FIVE) - {"20241028_agentless-1.5_gpt4o"}
    assert {(x.rank_low, x.rank_high) for x in top} == {(1, 4)}
    last = ranking.get("20241028_agentless-1.5_gpt4o")
    assert (last.rank, last.rank_low, last.rank_high, last.group) == (5.0, 5, 5, 2)


def _significant(family: MultipleComparison) -> dict[tuple[str, str], str]:
    """(worse, better) for every pair whose Holm-adjusted p-value is at most alpha."""
    out = {}
    for x in family.comparisons:
        assert x.pvalue_adjusted is not None
        if x.pvalue_adjusted <= ALPHA:
            better, worse = (x.candidate, x.baseline) if x.c > x.b else (x.baseline, x.candidate)
            out[(worse, better)] = better
    return out


def test_systems_in_different_groups_differ_significantly_after_holm(
    ranking: Ranking, family: MultipleComparison
) -> None:
    significant = _significant(family)
    group = {x.system: x.group for x in ranking.ranks}
    estimate = {x.system: x.estimate for x in ranking.ranks}
    assert len(group) == 25
    apart = [(i, j) for i, j in combinations(sorted(group), 2) if group[i] != group[j]]
    assert apart  # the property is not vacuous here
    for i, j in apart:
        worse, better = (i, j) if group[i] > group[j] else (j, i)
        assert (worse, better) in significant, (i, j)
        high, low = estimate[better], estimate[worse]
        assert high is not None
        assert low is not None
        assert high > low


def test_who_beats_whom_is_the_holm_decision(ranking: Ranking, family: MultipleComparison) -> None:
    significant = _significant(family)
    assert len(significant) == 174  # of 300 pairs
    for x in ranking.ranks:
        assert set(x.worse_than) == {b for (w, b) in significant if w == x.system}
        assert set(x.better_than) == {w for (w, b) in significant if b == x.system}
        assert (x.rank_low, x.rank_high) == (1 + len(x.worse_than), 25 - len(x.better_than))


def test_rank_intervals_contain_the_point_rank(ranking: Ranking) -> None:
    for x in ranking.ranks:
        assert x.rank is not None
        assert x.rank_low <= x.rank <= x.rank_high, x.system
        assert x.estimate == PUBLISHED[x.system] / 500


def test_the_25_system_groups(ranking: Ranking) -> None:
    # Measured on these data (docs/paired.md, Ranks): "not significantly different" chains every
    # system but the last into one component; the rank intervals carry the rest.
    groups = {g: {x.system for x in ranking.ranks if x.group == g} for g in {x.group for x in ranking.ranks}}
    assert groups == {
        1: set(PUBLISHED) - {"20241002_lingma-agent_lingma-swe-gpt-7b"},
        2: {"20241002_lingma-agent_lingma-swe-gpt-7b"},
    }
    best = ranking.get("20241108_devlo")
    assert (best.rank, best.rank_low, best.rank_high) == (1.0, 1, 9)
    last = ranking.get("20241002_lingma-agent_lingma-swe-gpt-7b")
    assert (last.rank, last.rank_low, last.rank_high) == (25.0, 25, 25)


def test_per_comparison_intervals_against_holm_on_300_pairs(family: MultipleComparison) -> None:
    # docs/paired.md, "Which interval agrees with which decision": measured on these 25 systems.
    assert len(family.comparisons) == 300
    excludes_0 = []
    for x in family.comparisons:
        low, high = x.interval.ci_low, x.interval.ci_high
        assert low is not None
        assert high is not None
        excludes_0.append(low > 0 or high < 0)
    significant = [d != "no significant difference" for d in family.decisions]
    assert sum(excludes_0) == 225
    assert sum(e and not s for e, s in zip(excludes_0, significant, strict=True)) == 51
    assert sum(s and not e for e, s in zip(excludes_0, significant, strict=True)) == 0
    holm_interval = [s.decision != "no significant difference" for s in family.simultaneous]
    assert sum(s and not h for s, h in zip(significant, holm_interval, strict=True)) == 5
    assert sum(h and not s for s, h in zip(significant, holm_interval, strict=True)) == 0
