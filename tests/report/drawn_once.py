"""vl-convert's drawings made once per input, for tests that build the same report twice."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from gatestats.report.quarto import charts as charts_module


@dataclass
class Drawings:
    """What vl-convert returned, by input: the SVG of a spec (its JSON text, key order included, and the
    Vega-Lite version) and the PNG of an SVG (its text and the scale)."""

    svg: dict[tuple[str, str], str] = field(default_factory=dict)
    png: dict[tuple[str, float], bytes] = field(default_factory=dict)


class DrawnOnce:
    """vl-convert's drawings (SVG of a spec, PNG of an SVG) made once per input, counted: a stand-in for the
    ``vl_convert`` module of ``gatestats.report.quarto.charts``.

    A report built twice from one verdict draws the same charts twice (≈ 0.5 CPU-s a build, 4 charts); the
    second build is given what vl-convert returned for the same input (the spec's JSON text, key order
    included, and the Vega-Lite version; the SVG text and the scale). ``misses`` counts the drawings made.
    """

    def __init__(self, drawings: Drawings | None = None) -> None:
        self._real = charts_module.vl_convert
        self.drawings = Drawings() if drawings is None else Drawings(dict(drawings.svg), dict(drawings.png))
        self._svg, self._png = self.drawings.svg, self.drawings.png
        self.misses = 0
        self.module = SimpleNamespace(vegalite_to_svg=self.vegalite_to_svg, svg_to_png=self.svg_to_png)

    def vegalite_to_svg(self, spec: dict[str, Any], *, vl_version: str) -> str:
        key = (json.dumps(spec), vl_version)
        if key not in self._svg:
            self.misses += 1
            self._svg[key] = self._real.vegalite_to_svg(spec, vl_version=vl_version)
        return self._svg[key]

    def svg_to_png(self, svg: str, *, scale: float) -> bytes:
        key = (svg, scale)
        if key not in self._png:
            self.misses += 1
            self._png[key] = self._real.svg_to_png(svg, scale=scale)
        return self._png[key]
