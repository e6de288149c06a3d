"""Charts on frames: paired differences (forest), pass@k / pass^k curves, rank intervals, saved offline.

The chart functions read the frames of docs/publish.md ("Frames the charts read"), never a result
object, so every statistics package can draw through them without an upward import:

- :func:`forest` — ``label``, ``estimate``, ``ci_low``, ``ci_high``, ``interval``, ``significant``:
  one row per pair and interval kind, the zero line, per-comparison and simultaneous intervals told
  apart by colour *and* dash (readable in greyscale), the adjusted decision by the point's shape;
- :func:`pass_curves` — ``label``, ``metric`` (``pass@k`` / ``pass^k``), ``k``, ``estimate``,
  ``ci_low``, ``ci_high``: one panel per metric, one line per system, intervals as bands and bars;
- :func:`rank_intervals` — ``label``, ``rank``, ``rank_low``, ``rank_high``, ``group``: each
  system's rank with its rank interval, tie groups coloured;
- :func:`save_chart` — ``.svg`` and ``.png`` through vl-convert, ``.html`` standalone with the Vega
  scripts inlined (vl-convert's ``bundle=True``: no network), written atomically.

Nothing is dropped silently: an estimate without an interval is drawn as a point only and the
subtitle says so; a row without an estimate keeps its place with the words "no estimate". Labels
come from files anyone writes: control characters and line breaks are shown escaped
(:func:`gatestats.io.text.visible`), long labels are shortened in the middle (the full label stays in
the tooltip) and two labels that would look the same are told apart with ``#2``, ``#3``. Vega draws
labels as text, never as markup, and the HTML file escapes ``</`` inside its script.

Altair and vl-convert are imported when a chart is made, not when this module is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import polars as pl

from gatestats.errors import GatestatsError
from gatestats.io.files import write_atomic
from gatestats.io.text import visible

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "CHART_SUFFIXES",
    "FOREST_SCHEMA",
    "INTERVAL_KINDS",
    "NO_ESTIMATE",
    "PASS_CURVE_SCHEMA",
    "POINT_ONLY_NOTE",
    "RANK_SCHEMA",
    "ChartFrameError",
    "ChartPathError",
    "check_chart_path",
    "forest",
    "pass_curves",
    "rank_intervals",
    "save_chart",
    "shown_labels",
]

#: The file types :func:`save_chart` writes.
CHART_SUFFIXES: Final = (".svg", ".png", ".html")
#: The forest frame (docs/publish.md).
FOREST_SCHEMA: Final[Mapping[str, type[pl.DataType]]] = {
    "label": pl.String,
    "estimate": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "interval": pl.String,
    "significant": pl.Boolean,
}
#: The pass-curve frame.
PASS_CURVE_SCHEMA: Final[Mapping[str, type[pl.DataType]]] = {
    "label": pl.String,
    "metric": pl.String,
    "k": pl.Int64,
    "estimate": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
}
#: The rank frame.
RANK_SCHEMA: Final[Mapping[str, type[pl.DataType]]] = {
    "label": pl.String,
    "rank": pl.Float64,
    "rank_low": pl.Int64,
    "rank_high": pl.Int64,
    "group": pl.Int64,
}
#: The ``interval`` words of the forest frame, in legend order.
INTERVAL_KINDS: Final = ("per-comparison", "simultaneous (bonferroni)", "simultaneous (holm)")
_METRICS: Final = ("pass@k", "pass^k")
_INTERVAL_COLOURS: Final = ("#4c78a8", "#e45756", "#b279a2")
_INTERVAL_DASHES: Final = ([1, 0], [6, 3], [2, 2])
_DECISIONS: Final = ("significant", "not significant", "no decision")
_DECISION_SHAPES: Final = ("diamond", "circle", "square")
_SHOWN_LIMIT: Final = 60  # characters of a label shown on an axis (the tooltip has the whole label)
_ROW_HEIGHT: Final = 22
_WIDTH: Final = 460
POINT_ONLY_NOTE: Final = "a point without a bar: estimate without an interval (insufficient evidence)"
NO_ESTIMATE: Final = "no estimate"
_FOREST_TITLE: Final = "Paired differences with their intervals"
_PLACEHOLDER: Final = {"gatestats": "spec"}
_SCRIPT_ESCAPES: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


class ChartFrameError(GatestatsError, ValueError):
    """A frame given to a chart breaks its contract (missing column, wrong type, NaN, a reversed interval)."""


class ChartPathError(GatestatsError, ValueError):
    """A chart cannot be written to the path given (unknown suffix, missing directory, a directory)."""


def check_chart_path(path: str | Path) -> Path:
    """Check that a chart can be written to ``path`` before anything is computed.

    Parameters
    ----------
    path
        The file to write: ``.svg``, ``.png`` or ``.html``, in an existing directory.

    Returns
    -------
    Path
        The path.

    Raises
    ------
    ChartPathError
        Another suffix, a missing directory, or ``path`` is a directory.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in CHART_SUFFIXES:
        msg = f"{visible(target)}: a chart is written as {', '.join(CHART_SUFFIXES)} (got {suffix or 'no suffix'!r})"
        raise ChartPathError(msg)
    if target.is_dir():
        msg = f"{visible(target)}: is a directory, not a chart file"
        raise ChartPathError(msg)
    if not target.parent.is_dir():
        msg = f"{visible(target)}: the directory {visible(target.parent)} does not exist"
        raise ChartPathError(msg)
    return target


def save_chart(chart: alt.TopLevelMixin, path: str | Path, *, png_scale: float = 2.0) -> Path:
    """Write ``chart`` to ``path`` as SVG, PNG or standalone HTML (by its suffix), atomically.

    Parameters
    ----------
    chart
        An Altair top-level chart (e.g. from :func:`forest`).
    path
        ``.svg``, ``.png`` or ``.html`` in an existing directory; replaced whole if it exists.
    png_scale
        Pixel scale of a PNG (2: sharp on high-DPI screens).

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    ChartPathError
        The path is refused (see :func:`check_chart_path`); nothing is written.
    TypeError
        ``chart`` is not an Altair chart.
    """
    target = check_chart_path(path)
    import altair as alt  # noqa: PLC0415 - altair and vl-convert cost ~1 s to import: only when a chart is saved
    import vl_convert as vlc  # noqa: PLC0415

    if not isinstance(chart, alt.TopLevelMixin):
        msg = f"chart must be an Altair top-level chart (got {type(chart).__name__})"
        raise TypeError(msg)
    spec = chart.to_dict()
    version = alt.SCHEMA_VERSION.rsplit(".", 1)[0]  # e.g. v6.4: the Vega-Lite altair writes
    suffix = target.suffix.lower()
    if suffix == ".svg":
        data = vlc.vegalite_to_svg(spec, vl_version=version).encode("utf-8")
    elif suffix == ".png":
        data = bytes(vlc.vegalite_to_png(spec, vl_version=version, scale=png_scale))
    else:
        data = _standalone_html(spec, version).encode("utf-8")
    write_atomic(target, data)
    return target


def _script_json(value: object) -> str:
    """JSON safe inside an HTML ``<script>``: ``<``, ``>``, ``&`` and the JS line separators as escapes."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for char, escape in _SCRIPT_ESCAPES.items():
        text = text.replace(char, escape)
    return text


def _standalone_html(spec: Mapping[str, Any], version: str) -> str:
    """vl-convert's page with vega, vega-lite and vega-embed inlined, the spec escaped for its script.

    vl-convert writes the spec into the page's script as it is, so a label holding ``</script>`` would
    end the script there; the page is made around a placeholder and the spec put in escaped.
    """
    import vl_convert as vlc  # noqa: PLC0415 - only when a chart is saved

    page = vlc.vegalite_to_html(_PLACEHOLDER, vl_version=version, bundle=True)
    marker = f"const spec = {json.dumps(_PLACEHOLDER, separators=(',', ':'))};"
    if page.count(marker) != 1:  # pragma: no cover - a vl-convert that lays its page out differently
        msg = f"vl-convert {getattr(vlc, '__version__', '?')}: the chart's page does not hold the spec where expected"
        raise RuntimeError(msg)
    return page.replace(marker, f"const spec = {_script_json(spec)};")


def _checked(frame: pl.DataFrame, schema: Mapping[str, type[pl.DataType]], chart: str) -> pl.DataFrame:
    """The frame's contract columns cast to ``schema`` (other columns dropped); refused when it breaks it."""
    if not isinstance(frame, pl.DataFrame):
        msg = f"{chart}: expected a polars DataFrame (got {type(frame).__name__})"
        raise ChartFrameError(msg)
    missing = [name for name in schema if name not in frame.columns]
    if missing:
        msg = f"{chart} frame: missing column(s) {missing} (expected {list(schema)})"
        raise ChartFrameError(msg)
    try:
        out = frame.select(pl.col(name).cast(dtype, strict=True) for name, dtype in schema.items())
    except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
        msg = f"{chart} frame: a column has the wrong type (expected {dict(schema)}): {exc}"
        raise ChartFrameError(msg) from None
    if out.get_column("label").null_count():
        row = out.get_column("label").is_null().arg_true()[0]
        msg = f"{chart} frame row {row}, field 'label': missing"
        raise ChartFrameError(msg)
    for name, dtype in schema.items():
        if dtype is pl.Float64:
            bad = (~out.get_column(name).is_finite()).fill_null(False).arg_true()
            if bad.len():
                value = out.get_column(name)[bad[0]]
                msg = f"{chart} frame row {bad[0]}, field {name!r}: {value} (a missing value is null, never NaN or inf)"
                raise ChartFrameError(msg)
    if out.height == 0:
        msg = f"{chart} frame: no rows (nothing to draw)"
        raise ChartFrameError(msg)
    return out


def _check_interval(frame: pl.DataFrame, low: str, high: str, chart: str) -> None:
    """Both ends or neither, and low ≤ high."""
    one_end = frame.get_column(low).is_null() != frame.get_column(high).is_null()
    reversed_ = (frame.get_column(low) > frame.get_column(high)).fill_null(False)
    for mask, what in ((one_end, "one end of the interval is missing"), (reversed_, f"{low} > {high}")):
        rows = mask.arg_true()
        if rows.len():
            msg = f"{chart} frame row {rows[0]}, field {low!r}: {what}"
            raise ChartFrameError(msg)


def shown_labels(labels: Sequence[str]) -> list[str]:
    """The axis text of each label: escaped, shortened in the middle, distinct (``#2`` on a repeat).

    Parameters
    ----------
    labels
        The labels, in order (the same label may repeat: it is one row on the axis).

    Returns
    -------
    list of str
        One text per label; equal labels give equal texts, different labels different texts.
    """
    texts: dict[str, str] = {}
    used: set[str] = set()
    for label in labels:
        if label in texts:
            continue
        text = visible(label, limit=10 * _SHOWN_LIMIT)
        if len(text) > _SHOWN_LIMIT:
            half = (_SHOWN_LIMIT - 1) // 2
            text = f"{text[:half]}…{text[-half:]}"
        base, n = text, 1
        while text in used:
            n += 1
            text = f"{base} #{n}"
        used.add(text)
        texts[label] = text
    return [texts[label] for label in labels]


def _with_shown(frame: pl.DataFrame) -> pl.DataFrame:
    labels = frame.get_column("label").to_list()
    full = [visible(x, limit=10 * _SHOWN_LIMIT) for x in labels]
    return frame.with_columns(shown=pl.Series(shown_labels(labels), dtype=pl.String), full=pl.Series(full))


def _subtitle(frame: pl.DataFrame, low: str, extra: Sequence[str] = ()) -> list[str]:
    """The notes under a chart's title: point-only rows and rows without an estimate."""
    notes = list(extra)
    point_only = frame.filter(pl.col("estimate").is_not_null() & pl.col(low).is_null()).height
    if point_only:
        notes.append(f"{POINT_ONLY_NOTE} ({point_only} row(s))")
    empty = frame.filter(pl.col("estimate").is_null()).height
    if empty:
        notes.append(f"'{NO_ESTIMATE}': {empty} row(s) without an estimate")
    return notes


def _forest_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """The checked forest frame with the shown labels, the decision words and the zero column."""
    rows = _checked(frame, FOREST_SCHEMA, "forest")
    _check_interval(rows, "ci_low", "ci_high", "forest")
    unknown = sorted(set(rows.get_column("interval").drop_nulls()) - set(INTERVAL_KINDS))
    if unknown or rows.get_column("interval").null_count():
        msg = f"forest frame, field 'interval': expected one of {list(INTERVAL_KINDS)} (got {unknown or [None]})"
        raise ChartFrameError(msg)
    twice = rows.filter(pl.struct("label", "interval").is_duplicated())
    if twice.height:
        msg = f"forest frame, field 'label': {visible(twice['label'][0])!r} has two {twice['interval'][0]!r} rows"
        raise ChartFrameError(msg)
    return _with_shown(rows).with_columns(
        decision=pl.when(pl.col("significant").is_null())
        .then(pl.lit(_DECISIONS[2]))
        .when(pl.col("significant"))
        .then(pl.lit(_DECISIONS[0]))
        .otherwise(pl.lit(_DECISIONS[1])),
        zero=pl.lit(0.0),
    )


def _forest_legends(kinds: Sequence[str], decision: str) -> tuple[alt.Color, alt.StrokeDash, alt.Shape]:
    """Colour and dash of the interval kinds (one legend: readable in greyscale), shape of the decision."""
    import altair as alt  # noqa: PLC0415 - only when a chart is made

    index = [INTERVAL_KINDS.index(k) for k in kinds]
    colour = alt.Color(
        "interval:N",
        title="interval",
        scale=alt.Scale(domain=list(kinds), range=[_INTERVAL_COLOURS[i] for i in index]),
        legend=alt.Legend(labelLimit=0, symbolType="stroke", symbolStrokeWidth=2),
    )
    dashes = alt.Scale(domain=list(kinds), range=[_INTERVAL_DASHES[i] for i in index])
    dash = alt.StrokeDash("interval:N", title="interval", scale=dashes)
    decisions = alt.Scale(domain=list(_DECISIONS), range=list(_DECISION_SHAPES))
    shape = alt.Shape("decision:N", title=visible(decision), scale=decisions)
    return colour, dash, shape


def forest(
    frame: pl.DataFrame,
    *,
    title: str | None = None,
    x_title: str | None = None,
    decision: str = "adjusted decision",
) -> alt.LayerChart:
    """A forest plot of paired differences: one row per pair, each interval kind its own bar, the zero line.

    Parameters
    ----------
    frame
        ``label``, ``estimate``, ``ci_low``, ``ci_high`` (null: no interval), ``interval`` (one of
        :data:`INTERVAL_KINDS`), ``significant`` (bool or null). A label may have one row per
        interval kind. Rows are drawn in frame order, top to bottom.
    title, x_title
        The chart's title and the x axis title (defaults name the difference).
    decision
        The title of the legend of ``significant`` (a single comparison's is not adjusted).

    Returns
    -------
    altair.LayerChart
        The chart (layers: zero line, interval bars, points, the "no estimate" texts).

    Raises
    ------
    ChartFrameError
        The frame breaks its contract (also: an unknown interval word, one label twice with one kind).
    """
    import altair as alt  # noqa: PLC0415 - only when a chart is made

    rows = _forest_rows(frame)
    order = list(dict.fromkeys(rows.get_column("shown").to_list()))
    kinds = [k for k in INTERVAL_KINDS if k in set(rows.get_column("interval"))]
    y = alt.Y("shown:N", sort=order, title=None, axis=alt.Axis(labelLimit=0))
    colour, dash, shape = _forest_legends(kinds, decision)
    tooltip: list[str | alt.Tooltip] = [alt.Tooltip("full:N", title="label"), "interval:N", "estimate:Q", "ci_low:Q"]
    tooltip += ["ci_high:Q", "decision:N"]
    base = alt.Chart(rows).encode(y=y)
    if len(kinds) > 1:  # one bar per interval kind, side by side within the pair's row
        base = base.encode(yOffset=alt.YOffset("interval:N", sort=kinds))
    zero = alt.Chart(pl.DataFrame({"zero": [0.0]})).mark_rule(color="#555555", strokeDash=[4, 4]).encode(x="zero:Q")
    bars = (
        base.transform_filter("isValid(datum.ci_low)")
        .mark_rule(strokeWidth=2)
        .encode(
            x=alt.X(
                "ci_low:Q",
                title=x_title or "difference (candidate − baseline) with interval",
                scale=alt.Scale(padding=12),  # a point at the domain's end is not drawn on the border
            ),
            x2="ci_high:Q",
            color=colour,
            strokeDash=dash,
            tooltip=tooltip,
        )
    )
    points = (
        base.transform_filter("isValid(datum.estimate)")
        .mark_point(filled=True, size=90, opacity=1)
        .encode(x="estimate:Q", color=colour, shape=shape, tooltip=tooltip)
    )
    empty = (
        base.transform_filter("!isValid(datum.estimate)")
        .mark_text(align="left", dx=4, color="#555555")
        .encode(x="zero:Q", text=alt.value(NO_ESTIMATE))
    )
    chart = alt.layer(zero, bars, points, empty).properties(
        width=_WIDTH,
        height=max(60, _ROW_HEIGHT * len(order) * max(1, len(kinds))),
        title=alt.Title(visible(title or _FOREST_TITLE), subtitle=_subtitle(rows, "ci_low")),
    )
    return cast("alt.LayerChart", chart)


def _curve_offsets(rows: pl.DataFrame) -> pl.DataFrame:
    """Each system's x a little apart from the others' at the same k (their bars do not overlap)."""
    labels = list(dict.fromkeys(rows.get_column("shown").to_list()))
    step = 0.3 / max(1, len(labels))
    offsets = {label: (i - (len(labels) - 1) / 2) * step for i, label in enumerate(labels)}
    return rows.with_columns(at=pl.col("k") + pl.col("shown").replace_strict(offsets, return_dtype=pl.Float64))


def pass_curves(frame: pl.DataFrame, *, title: str | None = None, level: float | None = None) -> alt.FacetChart:
    """pass@k and pass^k against k, one line per system, intervals as bands and bars, one panel per metric.

    Parameters
    ----------
    frame
        ``label``, ``metric`` (``pass@k`` or ``pass^k``), ``k``, ``estimate``, ``ci_low``, ``ci_high``.
    title
        The chart's title.
    level
        The intervals' confidence level, named on the y axis when given.

    Returns
    -------
    altair.FacetChart
        One panel per metric present (pass@k first).

    Raises
    ------
    ChartFrameError
        The frame breaks its contract (an unknown metric, a k below 1, one row twice).
    """
    import altair as alt  # noqa: PLC0415 - only when a chart is made

    rows = _checked(frame, PASS_CURVE_SCHEMA, "pass curves")
    _check_interval(rows, "ci_low", "ci_high", "pass curves")
    metrics = set(rows.get_column("metric").to_list())
    if not metrics <= set(_METRICS):
        msg = f"pass curves frame, field 'metric': expected {list(_METRICS)} (got {sorted(map(str, metrics))})"
        raise ChartFrameError(msg)
    if rows.filter((pl.col("k") < 1) | pl.col("k").is_null()).height:
        msg = "pass curves frame, field 'k': every k is an integer ≥ 1"
        raise ChartFrameError(msg)
    if rows.select(pl.struct("label", "metric", "k").is_duplicated().any()).item():
        msg = "pass curves frame: a (label, metric, k) appears twice"
        raise ChartFrameError(msg)
    rows = _curve_offsets(_with_shown(rows))
    ks = sorted(set(rows.get_column("k").to_list()))
    systems = list(dict.fromkeys(rows.get_column("shown").to_list()))
    scale = alt.Scale(domain=[min(ks) - 0.5, max(ks) + 0.5], nice=False)
    x = alt.X("at:Q", title="k (trials)", scale=scale, axis=alt.Axis(values=ks, format="d"))
    y_title = "estimate" if level is None else f"estimate [{level:.0%} interval]"
    y = alt.Y("estimate:Q", title=y_title, scale=alt.Scale(domain=[0, 1]))
    legend = alt.Legend(labelLimit=0, symbolOpacity=1, symbolType="circle", symbolStrokeWidth=2, symbolSize=90)
    colour = alt.Color("shown:N", title="system", sort=systems, legend=legend)  # full strength, as the lines
    tooltip: list[str | alt.Tooltip] = [alt.Tooltip("full:N", title="system"), "metric:N", "k:Q", "estimate:Q"]
    tooltip += ["ci_low:Q", "ci_high:Q"]
    base = alt.Chart().encode(x=x, color=colour)
    with_ci = "isValid(datum.ci_low)"
    band = (
        base.transform_filter(with_ci)
        .mark_area(opacity=0.12)
        .encode(y=alt.Y("ci_low:Q", title=y_title), y2="ci_high:Q")
    )
    bars = base.transform_filter(with_ci).mark_rule(strokeWidth=2).encode(y="ci_low:Q", y2="ci_high:Q")
    line = base.transform_filter("isValid(datum.estimate)").mark_line(point=alt.OverlayMarkDef(filled=True, size=50))
    line = line.encode(y=y, tooltip=tooltip)
    layered = alt.layer(band, bars, line, data=rows).properties(width=340, height=260)
    facet = layered.facet(column=alt.Column("metric:N", title=None, sort=list(_METRICS)))
    title_text = title or "pass@k (capability) and pass^k (reliability) against k"
    return facet.properties(title=alt.Title(visible(title_text), subtitle=_subtitle(rows, "ci_low")))


def rank_intervals(frame: pl.DataFrame, *, title: str | None = None) -> alt.LayerChart:
    """Each system's rank with its rank interval, best at the top, tie groups coloured.

    Parameters
    ----------
    frame
        ``label``, ``rank`` (the point rank), ``rank_low``, ``rank_high`` (1 = best), ``group`` (the tie group).
    title
        The chart's title.

    Returns
    -------
    altair.LayerChart
        The chart (layers: interval bars, points).

    Raises
    ------
    ChartFrameError
        The frame breaks its contract (a label twice, a rank outside its interval or below 1).
    """
    import altair as alt  # noqa: PLC0415 - only when a chart is made

    rows = _checked(frame, RANK_SCHEMA, "rank")
    if any(rows.get_column(name).null_count() for name in RANK_SCHEMA if name != "label"):
        msg = "rank frame: rank, rank_low, rank_high and group are never null"
        raise ChartFrameError(msg)
    _check_interval(rows, "rank_low", "rank_high", "rank")
    outside = rows.filter((pl.col("rank") < pl.col("rank_low")) | (pl.col("rank") > pl.col("rank_high")))
    if outside.height or rows.filter(pl.col("rank_low") < 1).height or rows.get_column("label").is_duplicated().any():
        msg = "rank frame: each label once, 1 ≤ rank_low ≤ rank ≤ rank_high"
        raise ChartFrameError(msg)
    rows = _with_shown(rows).sort("rank", "shown")
    order = rows.get_column("shown").to_list()
    m = max(1, int(rows.get_column("rank_high").max() or 1))  # type: ignore[arg-type]
    x_scale = alt.Scale(domain=[0.5, m + 0.5], nice=False)
    x_axis = alt.Axis(values=list(range(1, m + 1)), format="d")
    colour = alt.Color("group:N", title="tie group", legend=alt.Legend(orient="right"))
    tooltip: list[str | alt.Tooltip] = [alt.Tooltip("full:N", title="system"), "rank:Q", "rank_low:Q", "rank_high:Q"]
    tooltip += ["group:N"]
    base = alt.Chart(rows).encode(
        y=alt.Y("shown:N", sort=order, title=None, axis=alt.Axis(labelLimit=0)), color=colour, tooltip=tooltip
    )
    bars = base.mark_rule(strokeWidth=3).encode(
        x=alt.X("rank_low:Q", title="rank (1 = best) with its rank interval", scale=x_scale, axis=x_axis),
        x2="rank_high:Q",
    )
    ends = [base.mark_tick(thickness=2, size=12).encode(x=f"{end}:Q") for end in ("rank_low", "rank_high")]
    points = base.mark_point(filled=True, size=70, opacity=1).encode(x="rank:Q")
    chart = alt.layer(bars, *ends, points).properties(
        width=_WIDTH,
        height=max(60, _ROW_HEIGHT * len(order)),
        title=alt.Title(visible(title or "Ranks with their intervals (systems in one tie group are not separated)")),
    )
    return cast("alt.LayerChart", chart)
