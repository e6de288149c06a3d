"""The published tables of paired comparisons: p headers name the test, the decision column, CSV = to_frame()."""

from __future__ import annotations

import io

import numpy as np
import polars as pl
import pytest

from gatestats.paired import compare, compare_many
from gatestats.publish import Labels, LabelsError, render
from tests.paired.conftest import table_records, trial_records


def test_one_comparison_names_its_test_and_decides() -> None:
    # b = 1, c = 7: the exact McNemar p is 2 * P(X <= 1 | 8, 1/2) = 2 * 9/256 = 0.0703 and the mid-p
    # 2 * (1/256 + 8/256 / 2) = 0.0391 (Fagerland, Lydersen & Laake 2013, eq. 3 and 6).
    x = compare(table_records(1, 1, 7, 12), baseline="base", candidate="cand")
    table = x.table()
    headers = [c.header for c in table.columns]
    assert headers == [
        "baseline",
        "candidate",
        "pairs",
        "baseline pass rate",
        "candidate pass rate",
        "b",
        "c",
        "difference [95% CI]",
        "p (mid-p)",
        "decision",
    ]
    assert table.rows == (
        (
            "base",
            "cand",
            "21",
            "0.095 (2/21)",
            "0.381 (8/21)",
            "1",
            "7",
            "+0.286 [0.026, 0.517]",
            "0.0391 *",
            "candidate better",
        ),
    )
    assert table.legend == ("* : p (mid-p) <= 0.05",)
    exact = compare(table_records(1, 1, 7, 12), baseline="base", candidate="cand", test="exact").table()
    assert exact.columns[8].header == "p (exact)"
    assert exact.rows[0][8:] == ("0.0703", "no significant difference")


@pytest.mark.parametrize(
    ("cells", "decision"),
    [
        ((10, 0, 20, 10), "candidate better"),
        ((10, 20, 0, 10), "baseline better"),
        ((10, 6, 9, 10), "no significant difference"),
        ((5, 0, 1, 5), "insufficient evidence"),  # cannot resolve: one discordant case
    ],
)
def test_the_decision_column(cells: tuple[int, int, int, int], decision: str) -> None:
    x = compare(table_records(*cells), baseline="base", candidate="cand")
    assert x.table().rows[0][-1] == decision
    assert x.table().data["decision"].to_list() == [decision]


def test_trials_and_permutation_tests_are_named() -> None:
    rng = np.random.default_rng(3)
    outcomes = {
        s: [[int(rng.random() < 0.4 + d) for _ in range(3)] for _ in range(40)] for s, d in (("A", 0), ("B", 0.3))
    }
    records = trial_records(outcomes)
    sign = compare(records, baseline="A", candidate="B", metric="pass_hat_k", k=1)
    assert sign.table().columns[8].header == "p (exact)"
    assert sign.table().columns[3].header == "baseline pass@k / pass^k"
    perm = compare(records, baseline="A", candidate="B", test="permutation", n_permutations=999)
    assert perm.table().columns[8].header == "p (permutation)"
    assert perm.table().rows[0][-1] == "candidate better"


def _family() -> pl.DataFrame:
    rng = np.random.default_rng(2)
    ease = rng.random(60)
    outcomes = {s: [[int(rng.random() < min(1, e + d))] for e in ease] for s, d in (("A", 0), ("B", 0.05), ("C", 0.3))}
    return trial_records(outcomes)


def test_a_family_names_its_correction_and_says_the_intervals_are_per_comparison() -> None:
    many = compare_many(_family(), family="all_pairs")
    table = many.table(Labels.from_options(["C=Cee"]))
    headers = [c.header for c in table.columns]
    # Holm: the simultaneous intervals compatible with the adjustment sit after the per-comparison ones.
    assert headers[8:] == ["simultaneous [95% CI] (holm)", "p (mid-p)", "p adjusted (holm, mid-p)", "decision"]
    assert table.legend == ("* : p adjusted (holm, mid-p) <= 0.05",)
    assert any("the 3 intervals hold together at 95%" in note for note in table.notes)
    assert [row[:2] for row in table.rows] == [("A", "B"), ("A", "Cee"), ("B", "Cee")]
    for x, row in zip(many.comparisons, table.rows, strict=True):
        significant = x.pvalue_adjusted is not None and x.pvalue_adjusted <= 0.05
        assert row[10].endswith(" *") == significant
        assert (row[11] in ("candidate better", "baseline better")) == significant
    hochberg = compare_many(_family(), family="all_pairs", correction="hochberg").table()
    assert any("per-comparison, not adjusted for the 3 comparisons" in note for note in hochberg.notes)
    none = compare_many(_family(), family="all_pairs", correction="none").table()
    assert not any("per-comparison" in note for note in none.notes)
    with pytest.raises(LabelsError, match="'D' is none of the ids shown here"):
        many.table(Labels.from_options(["D=dee"]))


def test_the_csv_holds_the_numbers_of_to_frame_and_the_labels() -> None:
    many = compare_many(_family(), family="vs_baseline", baseline="A")
    text = render(many.table(Labels.from_options(['B=Bee,"quoted"'])), "csv")
    frame = pl.read_csv(io.StringIO(text), schema_overrides={"pvalue_adjusted": pl.Float64, "non_inferior": pl.Boolean})
    expected = many.to_frame()
    assert frame.select(expected.columns).equals(expected, null_equal=True)
    assert frame["candidate_label"].to_list() == ['Bee,"quoted"', "C"]
    assert frame["baseline_label"].to_list() == ["A", "A"]


def test_summary_and_html_repr() -> None:
    x = compare(table_records(1, 1, 7, 12), baseline="base", candidate="cand")
    summary = x.summary()
    assert "candidate better" in summary
    assert "* : p (mid-p) <= 0.05" in summary
    assert len(summary.splitlines()) <= 15
    html = x._repr_html_()
    assert html.startswith('<div id="gatestats-')
    assert "candidate better" in html
    many = compare_many(_family(), family="all_pairs")
    assert "p adjusted (holm, mid-p)" in many._repr_html_()
    assert len(repr(x)) > 0


def test_a_simultaneous_column_goes_beside_the_per_comparison_intervals() -> None:
    # The hook the lead fills from h26-rank's MultipleComparison fields; here Bonferroni intervals
    # made by hand: each comparison's interval at level 1 - alpha/m (m = 3).
    from gatestats.paired.published import SimultaneousColumn, multiple_comparison_table

    many = compare_many(_family(), family="all_pairs")
    wide = [x.confidence_interval(1 - 0.05 / 3) for x in many.comparisons]
    sim = SimultaneousColumn(
        method="bonferroni",
        ci_low=tuple(w.ci_low for w in wide),
        ci_high=tuple(w.ci_high for w in wide),
        confidence_level=0.95,
    )
    table = multiple_comparison_table(many, simultaneous=sim)
    headers = [c.header for c in table.columns]
    assert headers[7:9] == ["difference [95% CI]", "simultaneous [95% CI] (bonferroni)"]
    for x, w, row in zip(many.comparisons, wide, table.rows, strict=True):
        assert row[8] == f"[{w.ci_low:.3f}, {w.ci_high:.3f}]".replace("-0.000", "0.000")
        assert x.diff_ci_low is not None
        assert w.ci_low is not None
        assert w.ci_low <= x.diff_ci_low  # wider than the per-comparison interval
    assert not any(n.startswith("The intervals are per-comparison") for n in table.notes)
    assert any("simultaneous (bonferroni): the 3 intervals hold together at 95%" in n for n in table.notes)
    assert table.data["simultaneous_ci_low"].to_list() == [w.ci_low for w in wide]
    assert "| simultaneous \\[95% CI\\] (bonferroni) |" in render(table, "markdown")
    with pytest.raises(ValueError, match="one simultaneous interval per comparison"):
        multiple_comparison_table(
            many, simultaneous=SimultaneousColumn(method="holm", ci_low=(), ci_high=(), confidence_level=0.95)
        )
