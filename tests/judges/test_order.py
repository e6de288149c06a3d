"""Order sensitivity (LLMBar's published figures, Zheng et al. Table 2) and the persuasion test."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatestats.judges import order_sensitivity, persuasion_test, read_judgments
from tests.judges.conftest import LLMBAR_MAP, as_kind, mt_bench_where

# LLMBar (Zeng et al. 2024) statistics.json of Dataset/Processed/MT-Bench/evaluators/<judge>/
# Vanilla_NoRules at commit caa7bee: correct_False, correct_True, correct_both, equal (of 200).
PUBLISHED = {
    "GPT-4": (159, 165, 149, 174),
    "ChatGPT": (140, 145, 100, 115),
    "LLaMA2": (146, 142, 111, 134),
    "PaLM2": (138, 143, 114, 147),
}


@pytest.mark.parametrize("judge", sorted(PUBLISHED))
def test_reproduces_llmbar_published_figures(llmbar_judgments: Path, judge: str) -> None:
    s = read_judgments(llmbar_judgments, LLMBAR_MAP, positive="1", kind="pairwise", where=mt_bench_where(judge))
    r = order_sensitivity(s.frame, positive="1", negative="2")
    correct_original, correct_swapped, correct_both, equal = PUBLISHED[judge]
    assert (r.n_correct_original, r.n_correct_swapped, r.n_correct_both) == (
        correct_original,
        correct_swapped,
        correct_both,
    )
    # LLMBar's "equal" also counts pairs unparseable in both orders as equal; the flip rate leaves
    # them out (PaLM2: 7 such pairs, 8 with any). `calibrate --positional-agreement
    # both-unparseable-agree` prints LLMBar's number (tests/judges/test_pairwise_llmbar.py, all 24
    # configurations read off the terminal under both conventions).
    both_unparseable = s.frame.filter(pl.col("verdict").is_null() & pl.col("verdict_swapped").is_null()).height
    assert r.n_consistent + both_unparseable == equal
    assert r.n_pairs == 200
    assert r.n_consistent + r.n_biased_first + r.n_biased_second + r.n_unparseable == 200


def test_gpt4_mt_bench_order_statistics(llmbar_judgments: Path, frame_kind: str) -> None:
    s = read_judgments(llmbar_judgments, LLMBAR_MAP, positive="1", kind="pairwise", where=mt_bench_where("GPT-4"))
    r = order_sensitivity(as_kind(s.frame, frame_kind), positive="1", negative="2")
    assert (r.n_consistent, r.n_biased_first, r.n_biased_second, r.n_unparseable) == (174, 15, 11, 0)
    assert (r.flip_rate.numerator, r.flip_rate.n) == (26, 200)
    # R: binom.test(15, 26)$p.value = 0.5572
    assert r.position_bias_pvalue == pytest.approx(0.5572, abs=5e-5)


def test_palm2_unparseable_pairs_are_counted_not_dropped(llmbar_judgments: Path) -> None:
    s = read_judgments(llmbar_judgments, LLMBAR_MAP, positive="1", kind="pairwise", where=mt_bench_where("PaLM2"))
    r = order_sensitivity(s.frame, positive="1", negative="2")
    assert (r.n_unparseable, r.flip_rate.n, r.n_consistent) == (8, 192, 140)
    assert (r.n_biased_first, r.n_biased_second) == (45, 7)


def _zheng_gpt4(kind: str) -> pl.DataFrame | pl.LazyFrame:
    # Zheng et al. (2023), Table 2, GPT-4 default: consistency 65.0%, biased toward first 30.0%,
    # biased toward second 5.0%, error 0.0%, of 80 pairs.
    frame = pl.DataFrame(
        {
            "verdict": ["A"] * 40 + ["B"] * 12 + ["A"] * 24 + ["B"] * 4,
            "verdict_swapped": ["A"] * 40 + ["B"] * 12 + ["B"] * 24 + ["A"] * 4,
        }
    )
    return as_kind(frame, kind)


def test_position_bias_sign_test_on_zheng_2023_table_2(frame_kind: str) -> None:
    r = order_sensitivity(_zheng_gpt4(frame_kind), positive="A", negative="B")
    assert (r.n_consistent, r.n_biased_first, r.n_biased_second) == (52, 24, 4)
    assert r.consistency_rate.estimate == pytest.approx(0.65)
    assert r.flip_rate.estimate == pytest.approx(0.35)
    # R: binom.test(24, 28)$p.value = 0.0001800
    assert r.position_bias_pvalue == pytest.approx(0.00017999, abs=1e-8)
    assert r.n_correct_original is None


def test_presented_coding_gives_the_same_answer() -> None:
    frame = _zheng_gpt4("DataFrame")
    assert isinstance(frame, pl.DataFrame)
    presented = frame.with_columns(pl.col("verdict_swapped").replace({"A": "B", "B": "A"}))
    a = order_sensitivity(frame, positive="A", negative="B")
    b = order_sensitivity(presented, positive="A", negative="B", swapped_coding="presented")
    assert a.to_dict() == b.to_dict()


def test_ties_in_one_order_lean_toward_the_other_verdicts_position() -> None:
    frame = pl.DataFrame(
        {"verdict": ["A", "tie", "B", "tie", "tie"], "verdict_swapped": ["tie", "A", "tie", "B", "tie"]}
    )
    r = order_sensitivity(frame, positive="A", negative="B", tie="tie")
    # A then tie: first; tie then A (A shown second): second; B then tie: second; tie then B: first.
    assert (r.n_consistent, r.n_biased_first, r.n_biased_second) == (1, 2, 2)


def test_order_by_slice(frame_kind: str) -> None:
    frame = pl.DataFrame({"verdict": ["A", "A", "B"], "verdict_swapped": ["B", "A", "B"], "slice": ["s1", "s1", "s2"]})
    r = order_sensitivity(as_kind(frame, frame_kind), positive="A", negative="B")
    assert [(s.slice, s.n_pairs, s.n_biased_first) for s in r.by_slice] == [("s1", 2, 1), ("s2", 1, 0)]
    assert r.to_frame()["slice"].to_list() == [None, "s1", "s2"]
    assert r.by_slice[1].position_bias.status == "insufficient_evidence"


@given(st.lists(st.tuples(st.sampled_from(["A", "B", "T", None]), st.sampled_from(["A", "B", "T", None])), max_size=50))
def test_order_counts_partition_the_pairs_and_swapping_roles_swaps_the_bias(
    pairs: list[tuple[str | None, str | None]],
) -> None:
    frame = pl.DataFrame(
        {"verdict": [p[0] for p in pairs], "verdict_swapped": [p[1] for p in pairs]},
        schema={"verdict": pl.String, "verdict_swapped": pl.String},
    )
    r = order_sensitivity(frame, positive="A", negative="B", tie="T")
    assert r.n_consistent + r.n_biased_first + r.n_biased_second + r.n_unparseable == len(pairs)
    # Showing the swapped order first is the same experiment with the positions exchanged.
    exchanged = frame.select(verdict=pl.col("verdict_swapped"), verdict_swapped=pl.col("verdict"))
    e = order_sensitivity(exchanged, positive="A", negative="B", tie="T")
    assert (e.n_biased_first, e.n_biased_second, e.n_consistent) == (
        r.n_biased_second,
        r.n_biased_first,
        r.n_consistent,
    )
    assert e.position_bias_pvalue == r.position_bias_pvalue


def test_persuasion_exact_mcnemar(frame_kind: str) -> None:
    # 30 equally correct outputs: 12 pass in both, 9 flip to pass with self-advocacy, 1 the other way.
    plain = ["pass"] * 12 + ["fail"] * 9 + ["pass"] + ["fail"] * 8
    persuaded = ["pass"] * 12 + ["pass"] * 9 + ["fail"] + ["fail"] * 8
    frame = pl.DataFrame({"verdict": plain, "verdict_persuaded": persuaded})
    t = persuasion_test(as_kind(frame, frame_kind), positive="pass", negative="fail")
    assert (t.n_pass_both, t.n_pass_with_text_only, t.n_pass_without_text_only, t.n_pass_neither) == (12, 9, 1, 8)
    # R: binom.test(9, 10)$p.value = 0.02148438 (exact McNemar on the discordant pairs)
    assert t.pvalue == pytest.approx(0.02148438, abs=1e-8)
    assert t.test.midp_pvalue == pytest.approx(0.02148438 - 10 / 1024, abs=1e-8)
    assert t.difference.estimate == pytest.approx(8 / 30)
    assert t.difference.ci_low is not None
    assert t.difference.ci_low > 0
    assert (t.pass_rate_without_text.numerator, t.pass_rate_with_text.numerator) == (13, 21)


def test_persuasion_counts_unparseable_pairs() -> None:
    frame = pl.DataFrame({"verdict": ["pass", None, "fail"], "verdict_persuaded": ["pass", "pass", None]})
    t = persuasion_test(frame, positive="pass", negative="fail")
    assert (t.n_pairs, t.n_unparseable, t.test.status) == (3, 2, "insufficient_evidence")
    assert t.test.reason == "no discordant pairs: the text changed no verdict, the McNemar test is undefined"
