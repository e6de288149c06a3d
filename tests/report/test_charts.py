"""Offline Altair charts: the ``svg`` renderer (vl-convert in the kernel) and deterministic files.

Altair's renderer names (altair 6.3, ``alt.renderers.names()``): browser, colab, default, html,
json, jupyter, jupyterlab, kaggle, mimetype, nteract, olli, png, svg, zeppelin; ``svg`` converts
with vl-convert and emits ``image/svg+xml`` (https://altair-viz.github.io/user_guide/display_frontends.html).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import altair as alt
import pytest

from gatestats.report import enable_offline_altair, find_network_references, save_chart

CHART_CODE = """
import altair as alt, polars as pl
frame = pl.DataFrame({"k": [1, 2, 3, 4], "v": [0.42, 0.273, 0.22, 0.2]})
chart = alt.Chart(frame).mark_line(point=True).encode(x="k:O", y="v:Q")
"""


def _chart() -> alt.Chart:
    namespace: dict[str, object] = {}
    exec(CHART_CODE, namespace)
    chart = namespace["chart"]
    assert isinstance(chart, alt.Chart)
    return chart


@pytest.fixture
def offline_altair() -> Iterator[None]:
    previous = alt.renderers.active
    yield
    alt.renderers.enable(previous)


@pytest.mark.usefixtures("offline_altair")
def test_offline_renderer_emits_only_svg_made_in_process() -> None:
    assert enable_offline_altair() == "svg"
    bundle = _chart()._repr_mimebundle_()
    assert isinstance(bundle, dict)
    assert set(bundle) == {"image/svg+xml"}
    svg = bundle["image/svg+xml"]
    assert svg.startswith("<svg")
    assert "role-mark" in svg  # vega's scenegraph classes: the browser test counts marks by them
    assert find_network_references(svg) == []


@pytest.mark.usefixtures("offline_altair")
def test_default_html_renderer_would_need_the_network() -> None:
    """The reason for enable_offline_altair: the html renderer loads vega from a CDN."""
    alt.renderers.enable("html")
    bundle = _chart()._repr_mimebundle_()
    page = bundle["text/html"] if isinstance(bundle, dict) else bundle[0]["text/html"]
    assert any("cdn.jsdelivr.net" in ref for ref in find_network_references(page))


def test_save_chart_writes_svg_and_png(tmp_path: Path) -> None:
    svg, png = save_chart(_chart(), tmp_path, "pass_hat_k")
    assert (svg, png) == (tmp_path / "pass_hat_k.svg", tmp_path / "pass_hat_k.png")
    assert svg.read_text(encoding="utf-8").startswith("<svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png.read_bytes()[16:20], "big"), int.from_bytes(png.read_bytes()[20:24], "big")
    match = re.search(r'width="(\d+)" height="(\d+)"', svg.read_text(encoding="utf-8"))
    assert match is not None
    assert (width, height) == (2 * int(match[1]), 2 * int(match[2]))  # png_scale=2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pass_hat_k.png", "pass_hat_k.svg"]


def test_save_chart_bytes_are_deterministic_within_and_across_processes(tmp_path: Path) -> None:
    first = [p.read_bytes() for p in save_chart(_chart(), tmp_path, "a")]
    second = [p.read_bytes() for p in save_chart(_chart(), tmp_path, "b")]
    assert first == second
    code = CHART_CODE + f"from gatestats.report import save_chart\nsave_chart(chart, {str(tmp_path)!r}, 'c')\n"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    third = [(tmp_path / name).read_bytes() for name in ("c.svg", "c.png")]
    assert third == first


@pytest.mark.parametrize(
    ("args", "error", "expected"),
    [
        (("not a chart", "."), TypeError, "chart must be an Altair top-level chart or a Vega-Lite spec (got str)"),
        ((None, "missing-dir"), ValueError, "directory: expected an existing directory (got 'missing-dir')"),
        (
            (None, ".", "../x"),
            ValueError,
            "stem: expected a file name of letters, digits, '.', '_' and '-' (got '../x')",
        ),
    ],
)
def test_save_chart_validates_its_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[object, ...], error: type[Exception], expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    chart = args[0] if args[0] is not None else _chart()
    stem = args[2] if len(args) > 2 else "x"
    with pytest.raises(error, match=f"^{re.escape(expected)}$"):
        save_chart(chart, args[1], stem)  # type: ignore[arg-type]
