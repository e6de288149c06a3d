"""The release report's charts as Altair built them (session 36): the reference of ``_release_charts``.

``gatestats.report._release_charts`` writes each chart's Vega-Lite spec as plain dicts, so that the
report's process does not import Altair (≈ 0.3 CPU-s of its start-up, issue 28 item 4). This module
is the Altair code those specs replaced, kept unchanged as the reference:
``tests/report/test_chart_specs.py`` checks that each spec is the JSON Altair makes of the same
tables (``to_dict``, key order included) and valid against Altair's Vega-Lite schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

import altair as alt
import polars as pl

__all__ = ["cost_chart", "curve_chart", "release_chart_set", "slice_chart"]

#: Stems of the chart files in ``charts/`` (``<stem>.svg`` and ``<stem>.png``), in report order.
CHART_NAMES: Final = ("pass_hat_k", "pass_at_k", "slices", "cost")
#: Baseline grey-blue, candidate orange (distinguishable in greyscale and for colour-blind readers).
SIDE_COLOURS: Final[Mapping[str, str]] = {"baseline": "#4c78a8", "candidate": "#f58518"}
#: What the label of a row without any estimate says.
NO_ESTIMATE: Final = "insufficient evidence"
#: The subtitle of a chart that draws an estimate without its interval.
HOLLOW_NOTE: Final = "hollow dot: estimate without an interval (insufficient evidence)"
_WIDTH: Final = 560
_SIDE_OFFSET: Final = 0.06  # k units: baseline drawn just left of k, candidate just right
_TITLES: Final[Mapping[str, str]] = {
    "pass_hat_k": "pass^k: all k trials of a case pass (reliability)",
    "pass_at_k": "pass@k: at least one of k trials passes (capability)",
}


def _colour() -> alt.Color:
    """The side's colour; every layer carries the same legend (full-strength filled circles), so the
    legend's swatches match the lines and dots rather than a pale band."""
    scale = alt.Scale(domain=list(SIDE_COLOURS), range=list(SIDE_COLOURS.values()))
    legend = alt.Legend(title="side", symbolOpacity=1, symbolType="circle", symbolStrokeWidth=2, symbolSize=90)
    return alt.Color("side:N", scale=scale, legend=legend)


def _with_interval() -> pl.Expr:
    return pl.col("estimate").is_not_null() & pl.col("ci_low").is_not_null() & pl.col("ci_high").is_not_null()


def curve_chart(curves: pl.DataFrame, metric: str, *, confidence_level: float) -> alt.LayerChart | None:
    """pass^k or pass@k over k with error bars and bands, baseline and candidate (``None``: nothing to draw).

    Parameters
    ----------
    curves
        The ``curves`` table (one row per side, metric and k).
    metric
        ``pass_hat_k`` or ``pass_at_k``.
    confidence_level
        The level of the intervals, named in the legend.

    Returns
    -------
    altair.LayerChart or None
        The chart; ``None`` when no row of ``metric`` has an estimate with an interval.
    """
    rows = curves.filter((pl.col("metric") == metric) & _with_interval()).select(
        "side", "k", "estimate", "ci_low", "ci_high"
    )
    if rows.height == 0:
        return None
    rows = rows.with_columns(
        (pl.col("k") + pl.when(pl.col("side") == "baseline").then(-_SIDE_OFFSET).otherwise(_SIDE_OFFSET)).alias("at")
    )
    label = "pass^k" if metric == "pass_hat_k" else "pass@k"
    ks = sorted({int(k) for k in rows.get_column("k").to_list()})
    domain = [min(ks) - 0.25, max(ks) + 0.25] if len(ks) > 1 else [ks[0] - 0.5, ks[0] + 0.5]
    x = alt.X("at:Q", title="k (trials)", scale=alt.Scale(domain=domain, nice=False)).axis(values=ks, format="d")
    y_scale = alt.Scale(domain=[0, 1])
    tooltip = ["side:N", "k:Q", "estimate:Q", "ci_low:Q", "ci_high:Q"]
    base = alt.Chart(rows).encode(x=x)
    interval = {"y": alt.Y("ci_low:Q", scale=y_scale), "y2": "ci_high:Q", "color": _colour()}
    band = base.mark_area(opacity=0.12).encode(**interval)
    bars = base.mark_rule(strokeWidth=2).encode(**interval)
    caps = [
        base.mark_tick(thickness=2, size=10, orient="horizontal").encode(
            y=alt.Y(f"{end}:Q", scale=y_scale), color=_colour()
        )
        for end in ("ci_low", "ci_high")
    ]
    line = base.mark_line(point=alt.OverlayMarkDef(filled=True, size=60)).encode(
        y=alt.Y("estimate:Q", title=f"{label} [{confidence_level:.0%} CI]", scale=y_scale),
        color=_colour(),
        tooltip=tooltip,
    )
    chart = alt.layer(band, bars, *caps, line).properties(width=_WIDTH, height=260, title=_TITLES[metric])
    return cast(alt.LayerChart, chart)


def _headroom(rows: pl.DataFrame) -> float:
    """The end of an axis from 0 that leaves a margin right of the largest estimate or interval end
    (a dot on the plot's border reads as cut off)."""
    ends = [v for c in ("estimate", "ci_high") for v in rows.get_column(c).drop_nulls().to_list()]
    largest = max((float(v) for v in ends), default=0.0)
    return largest * 1.15 if largest > 0 else 1.0


def _interval_dots(
    rows: pl.DataFrame, *, y_title: str, x_title: str, zero_one: bool, title: str, height: int
) -> alt.LayerChart | None:
    """Dots with horizontal interval bars per ``label`` row and side; hollow dots have no interval.

    ``rows`` has ``label``, ``side``, ``estimate``, ``ci_low``, ``ci_high`` (nulls allowed); ``None``
    when no row has an estimate (nothing to draw).
    """
    if rows.height == 0 or rows.get_column("estimate").is_null().all():
        return None
    labels = list(dict.fromkeys(rows.get_column("label").to_list()))
    scale = alt.Scale(domain=[0, 1]) if zero_one else alt.Scale(domain=[0, _headroom(rows)])
    y = alt.Y("label:N", title=y_title, sort=labels, scale=alt.Scale(domain=labels))
    tooltip = ["label:N", "side:N", "estimate:Q", "ci_low:Q", "ci_high:Q"]
    full = rows.filter(_with_interval())
    hollow = rows.filter(pl.col("estimate").is_not_null() & ~_with_interval())
    layers: list[alt.Chart] = []
    if full.height:
        base = alt.Chart(full).encode(y=y, yOffset=alt.YOffset("side:N", sort=list(SIDE_COLOURS)))
        layers.append(
            base.mark_rule(strokeWidth=2).encode(
                x=alt.X("ci_low:Q", title=x_title, scale=scale), x2="ci_high:Q", color=_colour()
            )
        )
        layers.append(
            base.mark_point(filled=True, size=70, opacity=1).encode(
                x=alt.X("estimate:Q", title=x_title, scale=scale), color=_colour(), tooltip=tooltip
            )
        )
    if hollow.height:
        base = alt.Chart(hollow).encode(y=y, yOffset=alt.YOffset("side:N", sort=list(SIDE_COLOURS)))
        layers.append(
            base.mark_point(filled=False, size=70, strokeWidth=2, opacity=1).encode(
                x=alt.X("estimate:Q", title=x_title, scale=scale),
                color=_colour(),
                tooltip=tooltip,
            )
        )
    missing = rows.filter(pl.col("estimate").is_null())
    if missing.height:
        base = alt.Chart(missing.with_columns(pl.lit(f"{NO_ESTIMATE}: no estimate").alias("note"))).encode(
            y=y, yOffset=alt.YOffset("side:N", sort=list(SIDE_COLOURS))
        )
        layers.append(
            base.mark_text(align="left", dx=4, fontStyle="italic", fontSize=10).encode(
                x=alt.datum(0), text="note:N", color=_colour()
            )
        )
    subtitle = [HOLLOW_NOTE] if hollow.height else []
    chart = alt.layer(*layers).properties(width=_WIDTH, height=height, title=alt.TitleParams(title, subtitle=subtitle))
    return cast(alt.LayerChart, chart)


def _labelled(frame: pl.DataFrame, name: pl.Expr) -> pl.DataFrame:
    """``frame`` with ``label``: ``name``, plus "(insufficient evidence)" when a side has no interval."""
    flagged = (
        frame.with_columns(name.alias("__name"))
        .with_columns((~_with_interval()).any().over("__name").alias("__short"))
        .with_columns(
            pl.when(pl.col("__short"))
            .then(pl.concat_str([pl.col("__name"), pl.lit(f" ({NO_ESTIMATE})")]))
            .otherwise(pl.col("__name"))
            .alias("label")
        )
    )
    return flagged.select("label", "side", "estimate", "ci_low", "ci_high")


def slice_chart(slices: pl.DataFrame, *, confidence_level: float) -> alt.LayerChart | None:
    """Per-slice pass rate (pass^1) with intervals, baseline and candidate (``None``: no estimate at all).

    Every slice has its row; one whose estimate has no interval is drawn as a hollow dot and its
    label says "(insufficient evidence)".

    Parameters
    ----------
    slices
        The ``slices`` table (one row per slice and side).
    confidence_level
        The level of the intervals, named in the x-axis title (as in :func:`curve_chart`).

    Returns
    -------
    altair.LayerChart or None
        The chart; ``None`` when no slice has an estimate.
    """
    rows = _labelled(slices.sort("slice", "side"), pl.col("slice"))
    n_slices = rows.get_column("label").n_unique()
    return _interval_dots(
        rows,
        y_title="slice",
        x_title=f"pass rate [{confidence_level:.0%} CI]",
        zero_one=True,
        title="Pass rate per slice (severe slices included)",
        height=max(60, 44 * n_slices),
    )


def cost_chart(cost: pl.DataFrame, *, confidence_level: float) -> alt.LayerChart | None:
    """Cost per accepted outcome (USD) per side, with its interval when it has one (``None``: no estimate).

    Money on the axis is written in plain decimals (d3 format ``$,.2~r``), never in scientific notation.

    Parameters
    ----------
    cost, confidence_level
        The ``cost`` table (one row per side), and the level of its intervals (as in :func:`curve_chart`).

    Returns
    -------
    altair.LayerChart or None
        The chart; ``None`` when neither side has an estimate.
    """
    rows = cost.sort("side").with_columns(
        pl.when(_with_interval())
        .then(pl.col("side"))
        .otherwise(pl.concat_str([pl.col("side"), pl.lit(" (no interval)")]))
        .alias("label")
    )
    chart = _interval_dots(
        rows.select("label", "side", "estimate", "ci_low", "ci_high"),
        y_title="side",
        x_title=f"USD per accepted outcome [{confidence_level:.0%} CI]",
        zero_one=False,
        title="Cost per accepted outcome",
        height=110,
    )
    return None if chart is None else cast(alt.LayerChart, chart.configure_axisX(format="$,.2~r"))


def release_chart_set(tables: Mapping[str, pl.DataFrame], *, confidence_level: float) -> dict[str, alt.LayerChart]:
    """Every chart of a release report that has something to draw, keyed by :data:`CHART_NAMES` stem.

    Parameters
    ----------
    tables
        The report's tables by name (``curves``, ``slices``, ``cost`` are drawn).
    confidence_level
        As in :func:`curve_chart`.

    Returns
    -------
    dict[str, altair.LayerChart]
        Chart stem → chart, only for the charts that have something to draw.
    """
    charts = {
        "pass_hat_k": curve_chart(tables["curves"], "pass_hat_k", confidence_level=confidence_level),
        "pass_at_k": curve_chart(tables["curves"], "pass_at_k", confidence_level=confidence_level),
        "slices": slice_chart(tables["slices"], confidence_level=confidence_level),
        "cost": cost_chart(tables["cost"], confidence_level=confidence_level),
    }
    return {name: chart for name, chart in charts.items() if chart is not None}
