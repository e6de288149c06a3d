"""Charts that display without a network: SVG in the notebook and the page, SVG + PNG files.

Altair's default ``html`` renderer loads vega, vega-lite and vega-embed from a CDN; a report opened
offline shows nothing. :func:`enable_offline_altair` switches Altair to its ``svg`` renderer
(altair 5/6 renderer names: ``default``, ``html``, ``svg``, ``png``, ``jupyter``, ``mimetype``, …),
which converts the chart in the kernel with vl-convert (no browser, no network) and emits an
``image/svg+xml`` output. The Jupyter renderer inlines every such output as ``<svg>`` in
``<div class="gatestats-chart" data-chart-id="<cell id>-<n>">`` (cell id = the cell's ``label``).

:func:`save_chart` writes the chart's SVG and PNG with vl-convert for the report directory
(:func:`chart_svg`: the SVG alone, as the ``svg`` renderer shows it). A chart is an Altair chart
or its Vega-Lite spec as a dict (what the release report draws: :mod:`gatestats.report._release_charts`;
this module imports Altair only for an Altair chart, or to validate a spec).
Both are byte-for-byte deterministic for the same spec and the same vl-convert version (checked
in the tests: two conversions, also in two processes, give identical bytes).

References
----------
- Altair, "Displaying Altair Charts" (renderers),
  https://altair-viz.github.io/user_guide/display_frontends.html
- vl-convert, https://github.com/vega/vl-convert
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import vl_convert

from gatestats.io.files import write_atomic

if TYPE_CHECKING:
    import altair as alt

__all__ = ["VEGA_LITE_VERSION", "Chart", "chart_svg", "enable_offline_altair", "save_chart"]

#: An Altair top-level chart, or a Vega-Lite spec (a JSON object).
Chart: TypeAlias = "alt.TopLevelMixin | Mapping[str, Any]"
#: vl-convert's name of the Vega-Lite version the specs are drawn with: that of the pinned Altair's
#: schema (``v6.4.1`` → ``v6_4``, as Altair's ``svg`` renderer asks vl-convert; tested).
VEGA_LITE_VERSION: Final = "v6_4"
_STEM = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def enable_offline_altair() -> str:
    """Make Altair display charts as static SVG made in-process by vl-convert (no CDN, no network).

    Call it at the top of a report (it changes Altair's global renderer of the running kernel).

    Returns
    -------
    str
        The renderer now active (``"svg"``).

    Examples
    --------
    >>> import altair as alt
    >>> previous = alt.renderers.active
    >>> enable_offline_altair()
    'svg'
    >>> _ = alt.renderers.enable(previous)
    """
    import altair as alt  # noqa: PLC0415 - only a kernel showing Altair charts needs it

    alt.renderers.enable("svg")
    return str(alt.renderers.active)


def save_chart(
    chart: Chart,
    directory: str | os.PathLike[str],
    stem: str,
    *,
    png_scale: float = 2.0,
    validate: bool = True,
) -> tuple[Path, Path]:
    """Write ``<stem>.svg`` and ``<stem>.png`` of a chart with vl-convert, atomically.

    Parameters
    ----------
    chart : altair chart or dict
        Any top-level Altair chart (``Chart``, ``LayerChart``, ``HConcatChart``, …), or a Vega-Lite
        spec (a mapping, as Altair's ``to_dict`` gives).
    directory : str or PathLike
        An existing directory.
    stem : str
        File name without suffix (letters, digits, ``.``, ``_``, ``-``).
    png_scale : float
        Pixel scale of the PNG (2 = twice the chart's CSS size, sharp on high-DPI screens).
    validate : bool
        Check the chart's spec against the Vega-Lite schema first, as for :func:`chart_svg`.

    Returns
    -------
    tuple of Path
        ``(svg_path, png_path)``.

    Raises
    ------
    TypeError
        ``chart`` is neither an Altair top-level chart nor a mapping.
    ValueError
        ``directory`` does not exist, ``stem`` is not a plain file name, or ``png_scale`` is not in (0, 10].

    Examples
    --------
    >>> import tempfile, polars as pl, altair as alt
    >>> chart = alt.Chart(pl.DataFrame({"k": [1, 2], "v": [0.5, 0.4]})).mark_line().encode(x="k:O", y="v:Q")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     svg, png = save_chart(chart, tmp, "pass_hat_k")
    ...     (svg.name, png.name, png.read_bytes()[:4])
    ('pass_hat_k.svg', 'pass_hat_k.png', b'\\x89PNG')
    """
    spec = _spec(chart, validate=validate)
    folder = Path(directory)
    if not folder.is_dir():
        msg = f"directory: expected an existing directory (got {str(folder)!r})"
        raise ValueError(msg)
    if not isinstance(stem, str) or not _STEM.match(stem):
        msg = f"stem: expected a file name of letters, digits, '.', '_' and '-' (got {stem!r})"
        raise ValueError(msg)
    if isinstance(png_scale, bool) or not isinstance(png_scale, int | float) or not 0 < png_scale <= 10:
        msg = f"png_scale must be a number in (0, 10] (got {png_scale!r})"
        raise ValueError(msg)
    # The spec is built and validated once, and drawn once: the PNG is the SVG rasterised by
    # vl-convert (``svg_to_png``), the same bytes as ``chart.save(..., format="png")`` (which draws
    # the chart again, then rasterises its SVG; tested) in less than half the time.
    svg = _draw(spec)
    png = vl_convert.svg_to_png(svg, scale=png_scale)
    svg_path = folder / f"{stem}.svg"
    png_path = folder / f"{stem}.png"
    write_atomic(svg_path, svg.encode("utf-8"))
    write_atomic(png_path, png)
    return svg_path, png_path


def chart_svg(chart: Chart, *, validate: bool = True) -> str:
    """The SVG of a chart, made with vl-convert: the text :func:`save_chart` writes to ``<stem>.svg``.

    It is also what Altair's ``svg`` renderer (:func:`enable_offline_altair`) shows for the chart.

    Parameters
    ----------
    chart : altair chart or dict
        Any top-level Altair chart, or a Vega-Lite spec (a mapping).
    validate : bool
        Check the spec against the Vega-Lite schema first (Altair's ``to_dict``, or for a spec
        Altair's schema validation of it; default). The release report's charts skip it: their
        specs come from fixed code whatever the data, the tests validate them
        (``tests/report/test_chart_specs.py``), and the check costs CPU the report need not pay.

    Returns
    -------
    str
        The SVG document (the same whether validated or not, and the same for an Altair chart
        and its ``to_dict()``).

    Raises
    ------
    TypeError
        ``chart`` is neither an Altair top-level chart nor a mapping.
    altair.SchemaValidationError, jsonschema.ValidationError
        ``validate`` and the chart (or the spec) is not valid Vega-Lite.
    """
    return _draw(_spec(chart, validate=validate))


def _spec(chart: Chart, *, validate: bool) -> Mapping[str, Any]:
    """The Vega-Lite spec of ``chart`` (Altair's ``to_dict``, or the mapping itself), validated if asked."""
    if isinstance(chart, Mapping):
        if validate:
            import altair as alt  # noqa: PLC0415 - only to validate; the report's charts are validated in tests

            alt.Root.validate(dict(chart))  # jsonschema's ValidationError names the first fault
        return chart
    import altair as alt  # noqa: PLC0415 - an Altair chart: Altair is already loaded

    if not isinstance(chart, alt.TopLevelMixin):
        msg = f"chart must be an Altair top-level chart or a Vega-Lite spec (got {type(chart).__name__})"
        raise TypeError(msg)
    spec: dict[str, Any] = chart.to_dict(validate=validate, context={"pre_transform": False})
    return spec


def _draw(spec: Mapping[str, Any]) -> str:
    """The SVG vl-convert draws of a Vega-Lite spec: what Altair's ``svg`` renderer asks of it."""
    svg: str = vl_convert.vegalite_to_svg(dict(spec), vl_version=VEGA_LITE_VERSION)
    return svg
