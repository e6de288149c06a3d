"""False-pass and false-fail rates: separate denominators, unparseable counted, slices, bad frames."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatestats.judges import judge_error_rates, read_judgments
from tests.judges.conftest import LLMBAR_MAP, as_kind, mt_bench_where


def _frame(rows: list[tuple[str, str | None]], slices: list[str] | None = None) -> pl.DataFrame:
    data: dict[str, list[str | None]] = {"label": [r[0] for r in rows], "verdict": [r[1] for r in rows]}
    if slices is not None:
        data["slice"] = list(slices)
    return pl.DataFrame(data, schema=dict.fromkeys(data, pl.String))


def test_rates_have_their_own_denominators(frame_kind: str) -> None:
    # 96% agreement on passes, 40% on fails: one averaged accuracy would hide the false-pass rate.
    rows = [("pass", "pass")] * 48 + [("pass", "fail")] * 2 + [("fail", "fail")] * 4 + [("fail", "pass")] * 6
    r = judge_error_rates(as_kind(_frame(rows), frame_kind), positive="pass", negative="fail")
    assert (r.false_pass_rate.numerator, r.false_pass_rate.n, r.false_pass_rate.estimate) == (6, 10, 0.6)
    assert (r.false_fail_rate.numerator, r.false_fail_rate.n, r.false_fail_rate.estimate) == (2, 50, 0.04)
    assert (r.accuracy.numerator, r.accuracy.n) == (52, 60)
    assert r.false_pass_rate.method == "wilson"
    assert r.confusion_matrix().rows() == [("pass", 48, 2, 0), ("fail", 6, 4, 0)]


def test_labelled_set_without_fails_gives_insufficient_evidence_not_zero(frame_kind: str) -> None:
    rows = [("pass", "pass")] * 9 + [("pass", "fail")]
    r = judge_error_rates(as_kind(_frame(rows), frame_kind), positive="pass", negative="fail")
    fpr = r.false_pass_rate
    assert (fpr.estimate, fpr.ci_low, fpr.ci_high, fpr.n, fpr.status) == (None, None, None, 0, "insufficient_evidence")
    assert (
        fpr.reason
        == "no item labelled 'fail' has a parseable verdict (0 unparseable): the false-pass rate is undefined"
    )
    assert r.false_fail_rate.estimate == pytest.approx(0.1)
    assert r.kappa.status == "insufficient_evidence"


def test_unparseable_verdicts_are_counted_per_label_and_left_out_of_denominators(frame_kind: str) -> None:
    rows = [("pass", "pass")] * 5 + [("pass", None)] * 2 + [("fail", "fail")] * 3 + [("fail", None)]
    r = judge_error_rates(as_kind(_frame(rows), frame_kind), positive="pass", negative="fail")
    assert (r.n_items, r.n_unparseable, r.n_unparseable_label_positive, r.n_unparseable_label_negative) == (11, 3, 2, 1)
    assert (r.false_pass_rate.n, r.false_fail_rate.n, r.accuracy.n) == (3, 5, 8)
    assert (r.unparseable_rate.numerator, r.unparseable_rate.n) == (3, 11)
    assert r.to_dict()["confusion"] == {
        "pass": {"pass": 5, "fail": 0, "unparseable": 2},
        "fail": {"pass": 0, "fail": 3, "unparseable": 1},
    }


def test_pairwise_ties_count_as_not_passing(frame_kind: str) -> None:
    rows = [("A", "A")] * 3 + [("A", "tie")] * 2 + [("B", "tie")] * 4 + [("B", "B")]
    r = judge_error_rates(as_kind(_frame(rows), frame_kind), positive="A", negative="B", tie="tie")
    assert (r.false_fail_rate.numerator, r.false_fail_rate.n) == (2, 5)
    assert (r.false_pass_rate.numerator, r.false_pass_rate.n) == (0, 5)
    assert r.n_ties == 6
    assert r.confusion_matrix().columns == ["label", "verdict=A", "verdict=B", "verdict=tie", "unparseable"]


def test_breakdown_by_slice(frame_kind: str) -> None:
    rows = [("pass", "pass"), ("fail", "pass"), ("pass", "fail"), ("fail", "fail")]
    r = judge_error_rates(as_kind(_frame(rows, ["x", "x", "y", "y"]), frame_kind), positive="pass", negative="fail")
    assert [s.slice for s in r.by_slice] == ["x", "y"]
    x, y = r.by_slice
    assert (x.false_pass_rate.estimate, x.false_fail_rate.estimate) == (1.0, 0.0)
    assert (y.false_pass_rate.estimate, y.false_fail_rate.estimate) == (0.0, 1.0)
    table = r.to_frame()
    assert table.columns == [
        "slice",
        "statistic",
        "estimate",
        "ci_low",
        "ci_high",
        "numerator",
        "n",
        "status",
        "reason",
    ]
    assert table.height == 15
    assert table.filter(pl.col("slice").is_null(), pl.col("statistic") == "false_pass_rate")["numerator"].item() == 1


def test_clopper_pearson_on_request() -> None:
    rows = [("pass", "pass")] * 8 + [("fail", "pass")] * 2 + [("fail", "fail")] * 8
    r = judge_error_rates(_frame(rows), positive="pass", negative="fail", method="clopper-pearson")
    assert r.false_pass_rate.method == "clopper-pearson"
    # R: binom.test(2, 10)$conf.int = 0.02521073 0.55609546
    assert (r.false_pass_rate.ci_low, r.false_pass_rate.ci_high) == pytest.approx((0.02521073, 0.55609546), abs=1e-8)


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (
            pl.DataFrame({"label": ["pass", "maybe"], "verdict": ["pass", "fail"]}),
            "judgments: column 'label' must hold 'pass' / 'fail' (got row 1: 'maybe')",
        ),
        (
            pl.DataFrame({"label": ["pass", None], "verdict": ["pass", "fail"]}),
            "judgments: column 'label' must hold 'pass' / 'fail' (got row 1: None)",
        ),
        (
            pl.DataFrame({"label": ["pass", "fail"], "verdict": ["PASS", "fail"]}),
            "judgments: column 'verdict' must hold 'pass' / 'fail' or null (unparseable) (got row 0: 'PASS')",
        ),
        (pl.DataFrame({"label": ["pass"]}), "judgments: missing column(s) ['verdict'] (got columns ['label'])"),
        (
            pl.DataFrame({"label": ["pass"], "verdict": [1]}),
            "judgments: column 'verdict' must hold strings (got Int64)",
        ),
    ],
)
def test_bad_frames_are_rejected_with_the_rows(frame: pl.DataFrame, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        judge_error_rates(frame.lazy(), positive="pass", negative="fail")


def test_mt_bench_gpt4_accuracy_in_both_orders(llmbar_judgments: Path) -> None:
    # LLMBar statistics.json, Processed/MT-Bench, GPT-4, Vanilla_NoRules: correct_False 159/200,
    # correct_True 165/200.
    s = read_judgments(llmbar_judgments, LLMBAR_MAP, positive="1", kind="pairwise", where=mt_bench_where("GPT-4"))
    original = judge_error_rates(s.frame, positive="1", negative="2")
    swapped = judge_error_rates(s.frame, positive="1", negative="2", verdict="verdict_swapped")
    assert (original.accuracy.numerator, original.accuracy.n) == (159, 200)
    assert (swapped.accuracy.numerator, swapped.accuracy.n) == (165, 200)
    # Label 1 (output 1 better) is 101 items, label 2 is 99: the two error rates.
    assert (original.false_pass_rate.numerator, original.false_pass_rate.n) == (21, 99)
    assert (original.false_fail_rate.numerator, original.false_fail_rate.n) == (20, 101)


@given(st.lists(st.tuples(st.sampled_from(["pass", "fail"]), st.sampled_from(["pass", "fail", None])), max_size=60))
def test_counts_add_up(rows: list[tuple[str, str | None]]) -> None:
    r = judge_error_rates(_frame(rows), positive="pass", negative="fail")
    assert r.n_items == len(rows)
    assert r.false_pass_rate.n + r.false_fail_rate.n + r.n_unparseable == len(rows)
    assert r.n_label_positive == sum(1 for label, _ in rows if label == "pass")
    assert r.accuracy.n == r.false_pass_rate.n + r.false_fail_rate.n
    wrong = r.false_pass_rate.numerator + r.false_fail_rate.numerator
    assert r.accuracy.numerator == r.accuracy.n - wrong
    for p in (r.false_pass_rate, r.false_fail_rate):
        assert (p.n == 0) == (p.status == "insufficient_evidence")
        if p.status == "ok":
            assert p.ci_low is not None
            assert p.ci_high is not None
            assert p.ci_low < p.ci_high
