"""Charts of a release report: pass^k and pass@k over k, per-slice pass rates, cost per accepted outcome.

Each chart shows baseline and candidate with their intervals: error bars at every k (visible also
when there is one k, where a band has no width) over a light band for the curves, horizontal bars
for the slices and the cost. Nothing is dropped silently: an estimate without an interval is a
hollow dot, and a slice or side with no estimate at all keeps its row, its label saying
"insufficient evidence" (the tables beside the charts say why). The legend shows each side's colour
at full strength, as its line and dots are drawn. A chart with no estimate at all is not made.

Each chart is a Vega-Lite spec written as plain dicts (:data:`ChartSpec`), drawn by vl-convert
(:func:`gatestats.report.quarto.chart_svg`): the report's process does not import Altair (≈ 0.3 CPU-s
of its start-up, issue 28 item 4). The specs are the JSON Altair made of the same tables with the
charts these functions replaced — the same keys in the same order, the inline data named by the same
digest (:func:`dataset_name`) — so the SVG is the same text; ``tests/report/test_chart_specs.py``
checks it against that Altair code (``tests/report/altair_charts.py``) and validates each spec against
Altair's Vega-Lite schema. ``altair.LayerChart.from_dict(spec)`` gives the Altair chart of a spec.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

import polars as pl

__all__ = [
    "CHART_NAMES",
    "SIDE_COLOURS",
    "VEGA_LITE_SCHEMA",
    "ChartSpec",
    "cost_chart",
    "curve_chart",
    "dataset_name",
    "release_chart_set",
    "slice_chart",
]

#: A Vega-Lite spec (a JSON object).
ChartSpec: TypeAlias = dict[str, Any]
#: Stems of the chart files in ``charts/`` (``<stem>.svg`` and ``<stem>.png``), in report order.
CHART_NAMES: Final = ("pass_hat_k", "pass_at_k", "slices", "cost")
#: The Vega-Lite schema of the specs: Altair's ``SCHEMA_URL`` of the pinned Altair (tested).
VEGA_LITE_SCHEMA: Final = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
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
#: Altair's default view size, which its specs carry in ``config`` (unused: every chart sets its size).
_VIEW: Final[Mapping[str, int]] = {"continuousWidth": 300, "continuousHeight": 300}


def dataset_name(values: list[dict[str, Any]]) -> str:
    """The name of an inline data set: ``data-`` and 32 hex digits of the sha256 of its sorted JSON.

    Altair names the data it moves into a spec's ``datasets`` so (``to_dict``); the same names keep
    the specs, and so the charts' SVG, what they were when Altair wrote them.

    Parameters
    ----------
    values
        The rows (column → value).

    Returns
    -------
    str
        ``data-<32 hex digits>``, or ``empty`` for one empty row.

    Examples
    --------
    >>> dataset_name([{"a": 1}])
    'data-2696610e78752a9e7bd0c4b0404b2fb0'
    """
    if values == [{}]:
        return "empty"
    text = json.dumps(values, sort_keys=True, default=str)
    return "data-" + hashlib.sha256(text.encode()).hexdigest()[:32]


def _colour() -> dict[str, Any]:
    """The side's colour; every layer carries the same legend (full-strength filled circles), so the
    legend's swatches match the lines and dots rather than a pale band."""
    legend = {"symbolOpacity": 1, "symbolSize": 90, "symbolStrokeWidth": 2, "symbolType": "circle", "title": "side"}
    scale = {"domain": list(SIDE_COLOURS), "range": list(SIDE_COLOURS.values())}
    return {"field": "side", "legend": legend, "scale": scale, "type": "nominal"}


def _field(name: str, kind: str = "quantitative", **properties: Any) -> dict[str, Any]:
    """An encoding channel on a field; its keys sorted, as Altair writes them."""
    return dict(sorted({"field": name, **properties, "type": kind}.items()))


_QUANTITATIVE: Final = frozenset({"k", "estimate", "ci_low", "ci_high"})


def _tooltip(*names: str) -> list[dict[str, str]]:
    return [{"field": n, "type": "quantitative" if n in _QUANTITATIVE else "nominal"} for n in names]


def _spec(
    layers: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]],
    *,
    height: int,
    title: str | dict[str, Any],
    config: Mapping[str, Any] | None = None,
) -> ChartSpec:
    """A layered spec: ``layers`` is a list of (rows, [layer, ...]) groups, each group's layers drawing its rows.

    As Altair writes a layer chart: one group's data sit at the top (``data`` after ``layer``),
    several groups' in each layer (first key); the rows themselves in ``datasets``, named by
    :func:`dataset_name`, in the order the layers first use them.
    """
    datasets: dict[str, list[dict[str, Any]]] = {}
    names = []
    for values, _ in layers:
        name = dataset_name(values)
        names.append(name)
        datasets.setdefault(name, values)
    hoisted = len(layers) == 1
    drawn = [
        layer if hoisted else {"data": {"name": name}, **layer}
        for name, (_, group) in zip(names, layers, strict=True)
        for layer in group
    ]
    spec: ChartSpec = {"config": {"view": dict(_VIEW), **(config or {})}, "layer": drawn}
    if hoisted:
        spec["data"] = {"name": names[0]}
    spec |= {"height": height, "title": title, "width": _WIDTH, "$schema": VEGA_LITE_SCHEMA, "datasets": datasets}
    return spec


def _with_interval() -> pl.Expr:
    return pl.col("estimate").is_not_null() & pl.col("ci_low").is_not_null() & pl.col("ci_high").is_not_null()


def curve_chart(curves: pl.DataFrame, metric: str, *, confidence_level: float) -> ChartSpec | None:
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
    ChartSpec or None
        The chart's Vega-Lite spec; ``None`` when no row of ``metric`` has an estimate with an interval.
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

    def x() -> dict[str, Any]:
        axis = {"values": ks, "format": "d"}
        return _field("at", axis=axis, scale={"domain": domain, "nice": False}, title="k (trials)")

    def y(name: str, **title: str) -> dict[str, Any]:
        return _field(name, scale={"domain": [0, 1]}, **title)

    def interval() -> dict[str, Any]:
        return {"color": _colour(), "x": x(), "y": y("ci_low"), "y2": {"field": "ci_high"}}

    band = {"mark": {"type": "area", "opacity": 0.12}, "encoding": interval()}
    bars = {"mark": {"type": "rule", "strokeWidth": 2}, "encoding": interval()}
    caps = [
        {
            "mark": {"type": "tick", "orient": "horizontal", "size": 10, "thickness": 2},
            "encoding": {"color": _colour(), "x": x(), "y": y(end)},
        }
        for end in ("ci_low", "ci_high")
    ]
    line = {
        "mark": {"type": "line", "point": {"filled": True, "size": 60}},
        "encoding": {
            "color": _colour(),
            "tooltip": _tooltip("side", "k", "estimate", "ci_low", "ci_high"),
            "x": x(),
            "y": y("estimate", title=f"{label} [{confidence_level:.0%} CI]"),
        },
    }
    return _spec([(rows.rows(named=True), [band, bars, *caps, line])], height=260, title=_TITLES[metric])


def _headroom(rows: pl.DataFrame) -> float:
    """The end of an axis from 0 that leaves a margin right of the largest estimate or interval end
    (a dot on the plot's border reads as cut off)."""
    ends = [v for c in ("estimate", "ci_high") for v in rows.get_column(c).drop_nulls().to_list()]
    largest = max((float(v) for v in ends), default=0.0)
    return largest * 1.15 if largest > 0 else 1.0


def _interval_dots(
    rows: pl.DataFrame,
    *,
    y_title: str,
    x_title: str,
    zero_one: bool,
    title: str,
    height: int,
    config: Mapping[str, Any] | None = None,
) -> ChartSpec | None:
    """Dots with horizontal interval bars per ``label`` row and side; hollow dots have no interval.

    ``rows`` has ``label``, ``side``, ``estimate``, ``ci_low``, ``ci_high`` (nulls allowed); ``None``
    when no row has an estimate (nothing to draw).
    """
    if rows.height == 0 or rows.get_column("estimate").is_null().all():
        return None
    labels = list(dict.fromkeys(rows.get_column("label").to_list()))
    domain = [0, 1] if zero_one else [0, _headroom(rows)]

    def position() -> dict[str, Any]:
        return {
            "y": _field("label", "nominal", scale={"domain": labels}, sort=labels, title=y_title),
            "yOffset": _field("side", "nominal", sort=list(SIDE_COLOURS)),
        }

    def x(name: str) -> dict[str, Any]:
        return _field(name, scale={"domain": domain}, title=x_title)

    tooltip = _tooltip("label", "side", "estimate", "ci_low", "ci_high")
    groups: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
    full = rows.filter(_with_interval())
    hollow = rows.filter(pl.col("estimate").is_not_null() & ~_with_interval())
    if full.height:
        rule = {
            "mark": {"type": "rule", "strokeWidth": 2},
            "encoding": {"color": _colour(), "x": x("ci_low"), "x2": {"field": "ci_high"}, **position()},
        }
        dot = {
            "mark": {"type": "point", "filled": True, "opacity": 1, "size": 70},
            "encoding": {"color": _colour(), "tooltip": tooltip, "x": x("estimate"), **position()},
        }
        groups.append((full.rows(named=True), [rule, dot]))
    if hollow.height:
        ring = {
            "mark": {"type": "point", "filled": False, "opacity": 1, "size": 70, "strokeWidth": 2},
            "encoding": {"color": _colour(), "tooltip": list(tooltip), "x": x("estimate"), **position()},
        }
        groups.append((hollow.rows(named=True), [ring]))
    missing = rows.filter(pl.col("estimate").is_null())
    if missing.height:
        note = {
            "mark": {"type": "text", "align": "left", "dx": 4, "fontSize": 10, "fontStyle": "italic"},
            "encoding": {
                "color": _colour(),
                "text": {"field": "note", "type": "nominal"},
                "x": {"datum": 0},
                **position(),
            },
        }
        noted = missing.with_columns(pl.lit(f"{NO_ESTIMATE}: no estimate").alias("note"))
        groups.append((noted.rows(named=True), [note]))
    subtitle = [HOLLOW_NOTE] if hollow.height else []
    return _spec(groups, height=height, title={"text": title, "subtitle": subtitle}, config=config)


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


def slice_chart(slices: pl.DataFrame, *, confidence_level: float) -> ChartSpec | None:
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
    ChartSpec or None
        The chart's Vega-Lite spec; ``None`` when no slice has an estimate.
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


def cost_chart(cost: pl.DataFrame, *, confidence_level: float) -> ChartSpec | None:
    """Cost per accepted outcome (USD) per side, with its interval when it has one (``None``: no estimate).

    Money on the axis is written in plain decimals (d3 format ``$,.2~r``), never in scientific notation.

    Parameters
    ----------
    cost, confidence_level
        The ``cost`` table (one row per side), and the level of its intervals (as in :func:`curve_chart`).

    Returns
    -------
    ChartSpec or None
        The chart's Vega-Lite spec; ``None`` when neither side has an estimate.
    """
    rows = cost.sort("side").with_columns(
        pl.when(_with_interval())
        .then(pl.col("side"))
        .otherwise(pl.concat_str([pl.col("side"), pl.lit(" (no interval)")]))
        .alias("label")
    )
    return _interval_dots(
        rows.select("label", "side", "estimate", "ci_low", "ci_high"),
        y_title="side",
        x_title=f"USD per accepted outcome [{confidence_level:.0%} CI]",
        zero_one=False,
        title="Cost per accepted outcome",
        height=110,
        config={"axisX": {"format": "$,.2~r"}},
    )


def release_chart_set(tables: Mapping[str, pl.DataFrame], *, confidence_level: float) -> dict[str, ChartSpec]:
    """Every chart of a release report that has something to draw, keyed by :data:`CHART_NAMES` stem.

    Parameters
    ----------
    tables
        The report's tables by name (``curves``, ``slices``, ``cost`` are drawn).
    confidence_level
        As in :func:`curve_chart`.

    Returns
    -------
    dict[str, ChartSpec]
        Chart stem → Vega-Lite spec, only for the charts that have something to draw.
    """
    charts = {
        "pass_hat_k": curve_chart(tables["curves"], "pass_hat_k", confidence_level=confidence_level),
        "pass_at_k": curve_chart(tables["curves"], "pass_at_k", confidence_level=confidence_level),
        "slices": slice_chart(tables["slices"], confidence_level=confidence_level),
        "cost": cost_chart(tables["cost"], confidence_level=confidence_level),
    }
    return {name: chart for name, chart in charts.items() if chart is not None}
