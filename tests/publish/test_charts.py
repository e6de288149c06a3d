"""Charts on frames (gatestats.publish.charts): their Vega-Lite specs, hostile labels, files, refusals."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gatestats.publish.charts import (
    INTERVAL_KINDS,
    NO_ESTIMATE,
    POINT_ONLY_NOTE,
    ChartFrameError,
    ChartPathError,
    forest,
    pass_curves,
    rank_intervals,
    save_chart,
    shown_labels,
)

HOSTILE = [
    '<script>alert("x")</script>',
    "a & b 'quoted' \"double\"",
    "line one\nline two",
    "</script><img src=x onerror=alert(1)>",
    "x" * 300,
]


def _forest_frame(**overrides: Any) -> pl.DataFrame:
    rows = {
        "label": ["B − A", "C − A", "B − A", "C − A"],
        "estimate": [0.10, -0.02, 0.10, -0.02],
        "ci_low": [0.02, -0.08, -0.01, -0.11],
        "ci_high": [0.18, 0.04, 0.21, 0.07],
        "interval": [INTERVAL_KINDS[0], INTERVAL_KINDS[0], INTERVAL_KINDS[2], INTERVAL_KINDS[2]],
        "significant": [True, False, True, False],
    }
    rows.update(overrides)
    return pl.DataFrame(rows)


def _curve_frame() -> pl.DataFrame:
    rows = [
        (system, metric, k, est, est - 0.05, est + 0.05)
        for system, base in (("agent-a", 0.6), ("agent-b", 0.5))
        for metric, sign in (("pass@k", 1), ("pass^k", -1))
        for k, est in ((k, base + sign * 0.05 * (k - 1)) for k in (1, 2, 3, 4))
    ]
    return pl.DataFrame(rows, schema=["label", "metric", "k", "estimate", "ci_low", "ci_high"], orient="row")


def _rank_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "label": ["a", "b", "c", "d"],
            "rank": [1.0, 2.0, 3.0, 4.0],
            "rank_low": [1, 1, 3, 3],
            "rank_high": [2, 2, 4, 4],
            "group": [1, 1, 2, 2],
        }
    )


def _layers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return list(spec.get("layer") or spec["spec"]["layer"])


def _mark(layer: dict[str, Any]) -> str:
    mark = layer["mark"]
    return str(mark if isinstance(mark, str) else mark["type"])


def _data(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the chart's main data (the dataset with a ``shown`` column)."""
    for rows in spec.get("datasets", {}).values():
        if rows and "shown" in rows[0]:
            return list(rows)
    raise AssertionError("no dataset with labels")


def _zero(layer: dict[str, Any], spec: dict[str, Any]) -> list[dict[str, Any]]:
    return list(spec["datasets"][layer["data"]["name"]])


def test_forest_has_the_zero_line_bars_points_and_a_legend_that_tells_the_intervals_apart() -> None:
    spec = forest(_forest_frame()).to_dict()
    layers = _layers(spec)
    assert [_mark(x) for x in layers] == ["rule", "rule", "point", "text"]
    zero = layers[0]
    assert _zero(zero, spec) == [{"zero": 0.0}]
    assert zero["encoding"]["x"]["field"] == "zero"
    bars, points = layers[1]["encoding"], layers[2]["encoding"]
    assert (bars["x"]["field"], bars["x2"]["field"]) == ("ci_low", "ci_high")
    assert points["x"]["field"] == "estimate"
    assert bars["color"]["field"] == bars["strokeDash"]["field"] == "interval"
    assert bars["color"]["scale"]["domain"] == ["per-comparison", "simultaneous (holm)"]
    assert bars["strokeDash"]["scale"]["range"][0] != bars["strokeDash"]["scale"]["range"][1]  # greyscale too
    assert points["shape"]["field"] == "decision"
    assert points["shape"]["title"] == "adjusted decision"
    assert layers[1]["encoding"]["yOffset"]["field"] == "interval"  # two bars per row, side by side
    rows = _data(spec)
    assert [r["shown"] for r in rows] == ["B − A", "C − A", "B − A", "C − A"]
    assert [r["decision"] for r in rows] == ["significant", "not significant"] * 2
    assert spec["title"]["subtitle"] == []


def test_forest_of_one_kind_has_no_offset_and_a_single_row_works() -> None:
    frame = _forest_frame().head(1)
    spec = forest(frame).to_dict()
    assert "yOffset" not in _layers(spec)[1]["encoding"]
    assert spec["height"] >= 60


def test_forest_null_interval_is_a_point_only_with_a_note_and_null_estimate_keeps_its_row() -> None:
    frame = _forest_frame(
        estimate=[0.1, None, 0.1, None],
        ci_low=[None, None, -0.01, None],
        ci_high=[None, None, 0.21, None],
        significant=[None, None, None, None],
    )
    spec = forest(frame).to_dict()
    layers = _layers(spec)
    assert layers[1]["transform"] == [{"filter": "isValid(datum.ci_low)"}]
    assert layers[2]["transform"] == [{"filter": "isValid(datum.estimate)"}]
    assert layers[3]["transform"] == [{"filter": "!isValid(datum.estimate)"}]
    assert layers[3]["encoding"]["text"] == {"value": NO_ESTIMATE}
    subtitle = " ".join(spec["title"]["subtitle"])
    assert POINT_ONLY_NOTE in subtitle
    assert "(1 row(s))" in subtitle
    assert "2 row(s) without an estimate" in subtitle
    assert {r["decision"] for r in _data(spec)} == {"no decision"}


def test_hostile_labels_are_escaped_shortened_and_kept_apart() -> None:
    labels = [*HOSTILE, "x" * 301]  # two long labels with the same beginning and end
    shown = shown_labels(labels)
    assert len(set(shown)) == len(labels)
    assert shown[2] == "line one\\nline two"  # the line break shown, not broken
    assert all(len(s) <= 64 for s in shown)
    assert shown_labels(["a", "a"]) == ["a", "a"]  # one label is one row
    frame = pl.DataFrame(
        {
            "label": labels,
            "estimate": [0.0] * len(labels),
            "ci_low": [-0.1] * len(labels),
            "ci_high": [0.1] * len(labels),
            "interval": [INTERVAL_KINDS[0]] * len(labels),
            "significant": [False] * len(labels),
        }
    )
    rows = _data(forest(frame).to_dict())
    assert [r["full"] for r in rows][:4] == [HOSTILE[0], HOSTILE[1], "line one\\nline two", HOSTILE[3]]


@pytest.mark.parametrize("suffix", [".svg", ".html"])
def test_hostile_labels_stay_text_in_the_files(tmp_path: Path, suffix: str) -> None:
    frame = _forest_frame(label=[HOSTILE[0], HOSTILE[3], HOSTILE[0], HOSTILE[3]])
    text = save_chart(forest(frame), tmp_path / f"chart{suffix}").read_text(encoding="utf-8")
    assert "<script>alert" not in text
    assert "<img src=x" not in text
    if suffix == ".svg":
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in text
    else:  # the spec sits in a script: '</' is escaped there, and no script is loaded from the network
        assert 'src="http' not in text
        assert "cdn.jsdelivr" not in text
        assert text.count("</script>") == text.count("<script")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"estimate": [float("nan"), 0.0, 0.1, 0.0]}, "row 0, field 'estimate': nan"),
        ({"ci_high": [0.18, 0.04, float("inf"), 0.07]}, "row 2, field 'ci_high': inf"),
        ({"ci_low": [0.3, -0.08, -0.01, -0.11]}, "row 0, field 'ci_low': ci_low > ci_high"),
        ({"ci_low": [None, -0.08, -0.01, -0.11]}, "one end of the interval is missing"),
        ({"interval": ["per-comparison", "adjusted", "x", "y"]}, "field 'interval'"),
        ({"interval": [INTERVAL_KINDS[0]] * 4}, "has two 'per-comparison' rows"),
        ({"estimate": ["a", "b", "c", "d"]}, "wrong type"),
        ({"label": [None, "a", "b", "c"]}, "row 0, field 'label': missing"),
    ],
)
def test_forest_refuses_a_broken_frame(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ChartFrameError, match=message.replace("(", r"\(").replace(")", r"\)")):
        forest(_forest_frame(**change))


@pytest.mark.parametrize("draw", [forest, pass_curves, rank_intervals])
def test_an_empty_frame_is_refused_not_drawn_as_an_empty_chart(draw: Any) -> None:
    frame = {forest: _forest_frame, pass_curves: _curve_frame, rank_intervals: _rank_frame}[draw]().head(0)
    with pytest.raises(ChartFrameError, match="no rows"):
        draw(frame)


def test_forest_refuses_a_missing_column() -> None:
    with pytest.raises(ChartFrameError, match=r"missing column\(s\) \['significant'\]"):
        forest(_forest_frame().drop("significant"))


def test_pass_curves_one_panel_per_metric_one_line_per_system_bands_and_bars() -> None:
    spec = pass_curves(_curve_frame(), level=0.95).to_dict()
    assert spec["facet"]["column"]["field"] == "metric"
    layers = _layers(spec)
    assert [_mark(x) for x in layers] == ["area", "rule", "line"]
    assert (layers[0]["encoding"]["y"]["field"], layers[0]["encoding"]["y2"]["field"]) == ("ci_low", "ci_high")
    assert layers[2]["encoding"]["color"]["field"] == "shown"
    assert layers[2]["encoding"]["y"]["title"] == "estimate [95% interval]"
    assert layers[2]["encoding"]["y"]["scale"]["domain"] == [0, 1]
    rows = _data(spec)
    assert len(rows) == 16
    a1 = next(r for r in rows if r["label"] == "agent-a" and r["k"] == 1)
    b1 = next(r for r in rows if r["label"] == "agent-b" and r["k"] == 1)
    assert a1["at"] < 1 < b1["at"]  # systems drawn apart at the same k


def test_pass_curves_null_intervals_are_noted_and_bad_frames_refused() -> None:
    frame = _curve_frame().with_columns(
        ci_low=pl.when(pl.col("k") == 4).then(None).otherwise(pl.col("ci_low")),
        ci_high=pl.when(pl.col("k") == 4).then(None).otherwise(pl.col("ci_high")),
    )
    spec = pass_curves(frame).to_dict()
    assert "(4 row(s))" in " ".join(spec["title"]["subtitle"])
    with pytest.raises(ChartFrameError, match="field 'metric'"):
        pass_curves(_curve_frame().with_columns(metric=pl.lit("accuracy")))
    with pytest.raises(ChartFrameError, match="field 'k'"):
        pass_curves(_curve_frame().with_columns(k=pl.col("k") - 1))
    with pytest.raises(ChartFrameError, match="appears twice"):
        pass_curves(pl.concat([_curve_frame(), _curve_frame().head(1)]))


def test_rank_intervals_best_on_top_groups_coloured() -> None:
    frame = _rank_frame().reverse()
    spec = rank_intervals(frame).to_dict()
    layers = _layers(spec)
    assert [_mark(x) for x in layers] == ["rule", "tick", "tick", "point"]
    assert spec["layer"][0]["encoding"]["color"]["field"] == "group"
    assert layers[0]["encoding"]["y"]["sort"] == ["a", "b", "c", "d"]
    assert layers[0]["encoding"]["x"]["scale"]["domain"] == [0.5, 4.5]


@pytest.mark.parametrize(
    "change",
    [{"rank": [3.0, 2.0, 3.0, 4.0]}, {"rank_low": [0, 1, 3, 3]}, {"label": ["a", "a", "c", "d"]}],
)
def test_rank_intervals_refuse_inconsistent_ranks(change: dict[str, Any]) -> None:
    with pytest.raises(ChartFrameError):
        rank_intervals(_rank_frame().with_columns(**{k: pl.Series(v) for k, v in change.items()}))


@pytest.mark.parametrize("suffix", [".svg", ".png", ".html", ".SVG"])
def test_save_chart_writes_each_format(tmp_path: Path, suffix: str) -> None:
    for name, chart in (
        ("forest", forest(_forest_frame())),
        ("curves", pass_curves(_curve_frame())),
        ("ranks", rank_intervals(_rank_frame())),
    ):
        path = save_chart(chart, tmp_path / f"{name}{suffix}")
        data = path.read_bytes()
        if suffix.lower() == ".png":
            assert data[:4] == b"\x89PNG"
        elif suffix.lower() == ".svg":
            assert data.startswith(b"<svg")
            assert b"</svg>" in data
        else:
            text = data.decode()
            assert "<html" in text
            assert "vegaEmbed" in text
            assert "https://cdn" not in text
            assert len(data) > 500_000  # vega, vega-lite and vega-embed inlined: opens offline
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{n}{suffix}" for n in ("curves", "forest", "ranks"))


def test_the_forest_svg_shows_the_labels_and_the_legend(tmp_path: Path) -> None:
    text = save_chart(forest(_forest_frame()), tmp_path / "f.svg").read_text()
    for word in ("B − A", "C − A", "per-comparison", "simultaneous (holm)", "adjusted decision", "significant"):
        assert word in text


@pytest.mark.parametrize(
    ("name", "message"),
    [("chart.pdf", "'.pdf'"), ("chart", "no suffix"), ("missing/chart.svg", "does not exist"), (".", "no suffix")],
)
def test_save_chart_refuses_a_bad_path_and_writes_nothing(tmp_path: Path, name: str, message: str) -> None:
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(ChartPathError, match=message):
        save_chart(forest(_forest_frame()), tmp_path / name)
    assert sorted(os.listdir(tmp_path)) == before


def test_save_chart_refuses_a_directory_named_like_a_chart(tmp_path: Path) -> None:
    (tmp_path / "x.svg").mkdir()
    with pytest.raises(ChartPathError, match="is a directory"):
        save_chart(forest(_forest_frame()), tmp_path / "x.svg")


def test_save_chart_replaces_a_file_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "f.svg"
    path.write_text("old")
    save_chart(forest(_forest_frame()), path)
    assert path.read_text().startswith("<svg")
    assert os.listdir(tmp_path) == ["f.svg"]


def test_save_chart_refuses_what_is_not_a_chart(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="Altair top-level chart"):
        save_chart(json.loads("{}"), tmp_path / "x.svg")  # type: ignore[arg-type]
    assert not list(tmp_path.iterdir())


def test_a_hostile_title_is_shown_on_one_line() -> None:
    spec = forest(_forest_frame(), title="a\nb\u202e").to_dict()
    assert spec["title"]["text"] == "a\\nb\\u202e"
