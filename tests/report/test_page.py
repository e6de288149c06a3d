"""What the report's kernel shows (``gatestats.report.page``), and what it must not import to show it.

``gatestats report`` passes the page it made while building (each section's HTML, each chart's SVG)
to the kernel; the kernel imports :mod:`gatestats.report.page` alone (issue 28, item 4: the kernel's
``from gatestats.report.release import ...`` cost ≈ 2.1 CPU-s, and the charts were drawn twice).
That the page made while building is the page the ``.qmd`` makes from ``data/`` on its own is
tested in ``test_release.py`` (byte-identical HTML).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import altair as alt
import polars as pl
import pytest
from altair.utils.mimebundle import spec_to_mimebundle

import gatestats.report
from gatestats.report import quarto
from gatestats.report.page import ChartSvg, ReleasePage
from gatestats.report.quarto import chart_svg, save_chart

#: Modules the kernel's set-up cell must not import when it is given the page.
HEAVY = ("gatestats.gate", "gatestats.report.release", "altair", "nbclient", "nbconvert", "polars", "scipy", "numpy")


def _chart() -> alt.Chart:
    frame = pl.DataFrame({"k": [1, 2, 3, 4], "v": [0.42, 0.273, 0.22, 0.2]})
    return alt.Chart(frame).mark_line(point=True).encode(x="k:O", y="v:Q")


def test_the_kernels_setup_imports_no_gate_no_chart_library_no_renderer() -> None:
    code = (
        "import json, sys\n"
        "from gatestats.report.page import ReleasePage\n"
        "page = ReleasePage.from_dict({'sections': {'verdict': '<p>x</p>'}, 'charts': {'cost': '<svg/>'}})\n"
        "page.section('verdict'), page.chart('cost'), page.chart('slices')\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(done.stdout) == []


def test_importing_the_report_package_imports_neither_layer() -> None:
    code = "import sys, gatestats.report\nprint([m for m in sys.modules if m.startswith('gatestats.report.')])\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"


def test_the_package_re_exports_the_release_names_and_the_quarto_machinery() -> None:
    release = {"SECTIONS", "ReleaseReport", "ReportInputError", "Section", "build_release_report"}
    assert set(gatestats.report.__all__) == release | set(quarto.__all__)
    for name in gatestats.report.__all__:
        assert getattr(gatestats.report, name) is not None, name
    assert gatestats.report.render_qmd is quarto.render_qmd
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        _ = gatestats.report.nothing  # type: ignore[attr-defined]


def test_sections_are_html_and_charts_their_svg() -> None:
    page = ReleasePage.from_dict({"sections": {"rules": "<table></table>"}, "charts": {"cost": "<svg>c</svg>"}})
    assert page.section("rules").data == "<table></table>"
    chart = page.chart("cost")
    assert isinstance(chart, ChartSvg)
    assert chart._repr_mimebundle_() == {"image/svg+xml": "<svg>c</svg>"}
    assert page.chart("slices").data == "<p>No slices estimate to draw (see the table).</p>"
    with pytest.raises(KeyError, match="the page has no section 'flips'"):
        page.section("flips")
    assert ReleasePage.from_dict(page.to_dict()) == page


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "page: expected a mapping with the keys 'sections' and 'charts'"),
        ({"sections": {}}, "page: expected a mapping with the keys 'sections' and 'charts'"),
        ({"sections": {}, "charts": {}, "extra": 1}, "page: expected a mapping with the keys"),
        ({"sections": [], "charts": {}}, "page: field 'sections': expected a mapping of names to text"),
        ({"sections": {"a": 1}, "charts": {}}, "page: field 'sections': expected a mapping of names to text"),
        ({"sections": {}, "charts": {"a": None}}, "page: field 'charts': expected a mapping of names to text"),
        ({"sections": {}, "charts": {1: "<svg/>"}}, "page: field 'charts': expected a mapping of names to text"),
    ],
)
def test_a_page_of_the_wrong_shape_is_refused(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}"):
        ReleasePage.from_dict(value)


def test_chart_svg_is_the_svg_file_and_the_png_is_what_altair_would_write(tmp_path: Path) -> None:
    chart = _chart()
    svg_path, png_path = save_chart(chart, tmp_path, "curve")
    assert chart_svg(chart) == svg_path.read_text(encoding="utf-8")
    versions = {
        "mode": "vega-lite",
        "vega_version": alt.VEGA_VERSION,
        "vegaembed_version": alt.VEGAEMBED_VERSION,
        "vegalite_version": alt.VEGALITE_VERSION,
    }
    spec = chart.to_dict(context={"pre_transform": False})
    # chart_svg calls vl-convert itself (no Altair for a spec): the SVG of Altair's svg renderer
    assert chart_svg(spec) == spec_to_mimebundle(spec, format="svg", **versions)["image/svg+xml"]
    drawn_again = spec_to_mimebundle(spec, format="png", scale_factor=2.0, **versions)[0]["image/png"]
    assert png_path.read_bytes() == drawn_again  # the SVG rasterised = the chart drawn again to PNG
    with pytest.raises(TypeError, match="chart must be an Altair top-level chart"):
        chart_svg("not a chart")  # type: ignore[arg-type]
