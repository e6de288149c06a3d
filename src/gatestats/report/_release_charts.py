"""Altair charts of a release report: pass^k and pass@k over k, per-slice pass rates, cost per accepted outcome.

Each chart shows baseline and candidate with their intervals (bands for the curves, rules for
the slices and the cost); estimates with ``status = insufficient_evidence`` are left out of the
chart (the tables beside the charts say why). A chart with nothing to draw is not made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

import altair as alt
import polars as pl

__all__ = ["CHART_NAMES", "SIDE_COLOURS", "cost_chart", "curve_chart", "release_chart_set", "slice_chart"]

#: Stems of the chart files in ``charts/`` (``<stem>.svg`` and ``<stem>.png``), in report order.
CHART_NAMES: Final = ("pass_hat_k", "pass_at_k", "slices", "cost")
#: Baseline grey-blue, candidate orange (distinguishable in greyscale and for colour-blind readers).
SIDE_COLOURS: Final[Mapping[str, str]] = {"baseline": "#4c78a8", "candidate": "#f58518"}
_WIDTH: Final = 560
_TITLES: Final[Mapping[str, str]] = {
    "pass_hat_k": "pass^k: all k trials of a case pass (reliability)",
    "pass_at_k": "pass@k: at least one of k trials passes (capability)",
}


def _colour() -> alt.Color:
    return alt.Color(
        "side:N",
        title="side",
        scale=alt.Scale(domain=list(SIDE_COLOURS), range=list(SIDE_COLOURS.values())),
    )


def _ok_rows(frame: pl.DataFrame, columns: tuple[str, ...]) -> pl.DataFrame:
    """The rows with an estimate and an interval (``insufficient_evidence`` rows are not drawn)."""
    ok = frame.filter(
        (pl.col("status") == "ok")
        & pl.col("estimate").is_not_null()
        & pl.col("ci_low").is_not_null()
        & pl.col("ci_high").is_not_null()
    )
    return ok.select(columns)


def curve_chart(curves: pl.DataFrame, metric: str, *, confidence_level: float) -> alt.LayerChart | None:
    """pass^k or pass@k over k with interval bands, baseline and candidate (``None``: nothing to draw)."""
    rows = _ok_rows(curves.filter(pl.col("metric") == metric), ("side", "k", "estimate", "ci_low", "ci_high"))
    if rows.height == 0:
        return None
    label = "pass^k" if metric == "pass_hat_k" else "pass@k"
    ks = sorted({int(k) for k in rows.get_column("k").to_list()})
    x = alt.X("k:Q", title="k (trials)", scale=alt.Scale(domain=[min(ks), max(ks)] if len(ks) > 1 else [0.5, 1.5]))
    x = x.axis(values=ks, format="d")
    base = alt.Chart(rows).encode(x=x, color=_colour())
    band = base.mark_area(opacity=0.18).encode(y=alt.Y("ci_low:Q"), y2=alt.Y2("ci_high:Q"))
    line = base.mark_line(point=True).encode(
        y=alt.Y("estimate:Q", title=f"{label} [{confidence_level:.0%} CI]", scale=alt.Scale(domain=[0, 1])),
        tooltip=["side:N", "k:Q", "estimate:Q", "ci_low:Q", "ci_high:Q"],
    )
    return cast(alt.LayerChart, alt.layer(band, line).properties(width=_WIDTH, height=260, title=_TITLES[metric]))


def _interval_dots(rows: pl.DataFrame, category: str, title: str, x_title: str, zero_one: bool) -> alt.LayerChart:
    scale = alt.Scale(domain=[0, 1]) if zero_one else alt.Scale(zero=True)
    y = alt.Y(f"{category}:N", title=title, sort=None)
    base = alt.Chart(rows).encode(y=y, yOffset=alt.YOffset("side:N"), color=_colour())
    rule = base.mark_rule(strokeWidth=2).encode(x=alt.X("ci_low:Q", title=x_title, scale=scale), x2="ci_high:Q")
    dot = base.mark_point(filled=True, size=70).encode(
        x="estimate:Q", tooltip=[f"{category}:N", "side:N", "estimate:Q", "ci_low:Q", "ci_high:Q"]
    )
    return cast(alt.LayerChart, alt.layer(rule, dot))


def slice_chart(slices: pl.DataFrame, *, confidence_level: float) -> alt.LayerChart | None:
    """Per-slice pass rate (pass^1) with intervals, baseline and candidate (``None``: nothing to draw)."""
    rows = _ok_rows(slices, ("slice", "side", "estimate", "ci_low", "ci_high"))
    if rows.height == 0:
        return None
    n_slices = rows.get_column("slice").n_unique()
    chart = _interval_dots(rows, "slice", "slice", f"pass rate [{confidence_level:.0%} CI]", True)
    title = "Pass rate per slice (severe slices included)"
    return chart.properties(width=_WIDTH, height=max(60, 44 * n_slices), title=title)


def cost_chart(cost: pl.DataFrame, *, confidence_level: float) -> alt.LayerChart | None:
    """Cost per accepted outcome (USD) with its interval per side (``None``: nothing to draw)."""
    rows = _ok_rows(cost, ("side", "estimate", "ci_low", "ci_high"))
    if rows.height == 0:
        return None
    rows = rows.with_columns(pl.col("side").alias("which"))
    chart = _interval_dots(rows, "which", "side", f"USD per accepted outcome [{confidence_level:.0%} CI]", False)
    return chart.properties(width=_WIDTH, height=110, title="Cost per accepted outcome")


def release_chart_set(tables: Mapping[str, pl.DataFrame], *, confidence_level: float) -> dict[str, alt.LayerChart]:
    """Every chart of a release report that has something to draw, keyed by :data:`CHART_NAMES` stem."""
    charts = {
        "pass_hat_k": curve_chart(tables["curves"], "pass_hat_k", confidence_level=confidence_level),
        "pass_at_k": curve_chart(tables["curves"], "pass_at_k", confidence_level=confidence_level),
        "slices": slice_chart(tables["slices"], confidence_level=confidence_level),
        "cost": cost_chart(tables["cost"], confidence_level=confidence_level),
    }
    return {name: chart for name, chart in charts.items() if chart is not None}
