"""``plot()`` on Comparison, MultipleComparison and Analysis: the frames they draw from and the charts."""

from __future__ import annotations

import altair as alt
import polars as pl
import pytest

from gatestats.estimators import analyze
from gatestats.estimators.charts_frame import pass_curve_frame
from gatestats.paired import compare, compare_many
from gatestats.paired.charts_frame import forest_frame
from gatestats.publish.charts import INTERVAL_KINDS


def _records(outcomes: dict[str, list[list[int]]]) -> pl.DataFrame:
    rows = [
        {"system": s, "case_id": f"c{i}", "trial": t, "outcome": "passed" if o else "failed"}
        for s, trials in outcomes.items()
        for t, column in enumerate(trials)
        for i, o in enumerate(column)
    ]
    return pl.DataFrame(rows).with_columns(case_version=None, case_group=None, attempt=0)


RECORDS = _records(
    {
        "A": [[1, 1, 0, 1] * 10, [1, 0, 0, 1] * 10],
        "B": [[1, 0, 0, 1] * 10, [1, 0, 0, 0] * 10],
        "C": [[1, 1, 1, 1] * 10, [1, 1, 1, 0] * 10],
    }
)


def _rows(chart: alt.TopLevelMixin) -> list[dict[str, object]]:
    datasets = chart.to_dict()["datasets"]
    return next(rows for rows in datasets.values() if rows and "shown" in rows[0])


def test_comparison_plot_is_one_row_decided_on_the_raw_p() -> None:
    one = compare(RECORDS.filter(pl.col("trial") == 0), baseline="A", candidate="C")
    frame = forest_frame([one], adjusted=False)
    assert frame.to_dicts() == [
        {
            "label": "C − A",
            "estimate": one.diff,
            "ci_low": one.diff_ci_low,
            "ci_high": one.diff_ci_high,
            "interval": "per-comparison",
            "significant": one.pvalue is not None and one.pvalue <= 0.05,
        }
    ]
    chart = one.plot()
    assert isinstance(chart, alt.LayerChart)
    assert chart.to_dict()["layer"][2]["encoding"]["shape"]["title"] == "decision at α = 0.05"  # one test: unadjusted
    assert [r["shown"] for r in _rows(chart)] == ["C − A"]


def test_multiple_comparison_plot_decides_on_the_adjusted_p_and_takes_simultaneous_intervals() -> None:
    many = compare_many(RECORDS.filter(pl.col("trial") == 0), family="all_pairs", correction="holm")
    frame = forest_frame(many.comparisons, adjusted=True)
    expected = [x.pvalue_adjusted is not None and x.pvalue_adjusted <= 0.05 for x in many.comparisons]
    assert frame["significant"].to_list() == expected
    assert frame["label"].to_list() == ["B − A", "C − A", "C − B"]
    simultaneous = {("A", "B"): (-0.5, 0.1), ("A", "C"): (None, None)}
    both = forest_frame(many.comparisons, adjusted=True, simultaneous={INTERVAL_KINDS[1]: simultaneous})
    assert both.height == 5
    assert both.filter(pl.col("interval") == INTERVAL_KINDS[1])["ci_low"].to_list() == [-0.5, None]
    with pytest.raises(ValueError, match="simultaneous interval kind"):
        forest_frame(many.comparisons, adjusted=True, simultaneous={"adjusted": simultaneous})
    # The family's plot draws each pair's per-comparison and Holm-compatible simultaneous interval.
    rows = _rows(many.plot())
    assert len(rows) == 6
    assert sorted({row["interval"] for row in rows}) == sorted([INTERVAL_KINDS[0], "simultaneous (holm)"])


def test_a_comparison_that_cannot_resolve_is_drawn_not_significant_with_its_interval() -> None:
    one = compare(_records({"A": [[1]], "B": [[1]]}), baseline="A", candidate="B")
    assert one.status == "cannot_resolve"
    (row,) = _rows(one.plot())
    assert row["decision"] == "not significant"
    assert row["ci_low"] == one.diff_ci_low
    assert row["ci_high"] == one.diff_ci_high


def test_analysis_plot_draws_pass_at_k_and_pass_hat_k_per_system() -> None:
    analysis = analyze(RECORDS, ks=[1, 2], seed=0)
    frame = pass_curve_frame(analysis.to_frame())
    assert set(frame["metric"]) == {"pass@k", "pass^k"}
    assert frame.height == 3 * 2 * 2
    a2 = frame.filter(label="A", metric="pass^k", k=2).row(0, named=True)
    assert a2["estimate"] == pytest.approx(0.5)  # both trials pass on cases 0 and 3 of every 4
    chart = analysis.plot()
    assert isinstance(chart, alt.FacetChart)
    assert chart.to_dict()["spec"]["layer"][2]["encoding"]["y"]["title"] == "estimate [95% interval]"
