"""What a release report's kernel shows: each section's HTML and each chart's SVG, made once.

``gatestats report`` makes the page's parts in its own process, from the data it has just written
(the sections from :func:`gatestats.report.release.release_page_parts`, the charts from the SVG
files of ``charts/``), and passes them to the kernel as the ``.qmd``'s ``page`` parameter. The
kernel then only displays them: it imports this module (no gate, no record reader, no chart
library), and nothing is read, computed or drawn twice. ``quarto render report.qmd`` on its own
leaves ``page`` at ``None``; the ``.qmd`` then makes the same parts in the kernel from ``data/``
(every file checked against ``data/digests.json``; :func:`gatestats.report.release.release_page`).
Both ways give the same page (tested).

The parts are a JSON value, ``{"sections": {name: html}, "charts": {stem: svg}}``; a chart with
nothing to draw is absent from ``charts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ChartSvg", "ReleasePage"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChartSvg:
    """A chart as the kernel displays it: its SVG as an ``image/svg+xml`` output.

    The same output as Altair's ``svg`` renderer gives for the chart the SVG was made from
    (:func:`gatestats.report.quarto.enable_offline_altair`): the SVG text, unchanged.
    """

    svg: str = field(repr=False)
    name: str = ""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"image/svg+xml": self.svg}


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleasePage:
    """The parts of a release report's page: section name → HTML, chart stem → SVG."""

    sections: Mapping[str, str]
    charts: Mapping[str, str]

    @classmethod
    def from_dict(cls, value: Any) -> ReleasePage:
        """The parts from their JSON value (the ``.qmd``'s ``page`` parameter), their types checked.

        Parameters
        ----------
        value
            ``{"sections": {name: html}, "charts": {stem: svg}}``.

        Returns
        -------
        ReleasePage

        Raises
        ------
        ValueError
            ``value`` is not of that shape (the field is named).

        Examples
        --------
        >>> ReleasePage.from_dict({"sections": {"verdict": "<p>pass</p>"}, "charts": {}}).sections["verdict"]
        '<p>pass</p>'
        """
        if not isinstance(value, Mapping) or set(value) != {"sections", "charts"}:
            msg = f"page: expected a mapping with the keys 'sections' and 'charts' (got {value!r:.200})"
            raise ValueError(msg)
        for key in ("sections", "charts"):
            parts = value[key]
            if not isinstance(parts, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in parts.items()
            ):
                msg = f"page: field {key!r}: expected a mapping of names to text (got {parts!r:.200})"
                raise ValueError(msg)
        return cls(sections=dict(value["sections"]), charts=dict(value["charts"]))

    def to_dict(self) -> dict[str, dict[str, str]]:
        """The JSON value :meth:`from_dict` reads.

        Returns
        -------
        dict
            ``{"sections": {...}, "charts": {...}}``.
        """
        return {"sections": dict(self.sections), "charts": dict(self.charts)}

    def section(self, name: str) -> Any:
        """One section's HTML, for display in the kernel.

        Parameters
        ----------
        name
            The section's name (:data:`gatestats.report.release.SECTIONS`).

        Returns
        -------
        IPython.display.HTML

        Raises
        ------
        KeyError
            The page has no such section.
        """
        from IPython.display import HTML  # noqa: PLC0415 - loaded in the kernel; the parent never needs it

        if name not in self.sections:
            msg = f"the page has no section {name!r} (it has {', '.join(self.sections)})"
            raise KeyError(msg)
        return HTML(self.sections[name])  # type: ignore[no-untyped-call]

    def chart(self, name: str) -> Any:
        """One chart for display, or a note when there is no estimate to draw.

        Parameters
        ----------
        name
            The chart's stem (``pass_hat_k``, ``pass_at_k``, ``slices``, ``cost``).

        Returns
        -------
        ChartSvg or IPython.display.HTML
        """
        if name in self.charts:
            return ChartSvg(svg=self.charts[name], name=name)
        from IPython.display import HTML  # noqa: PLC0415 - as in section()

        return HTML(f"<p>No {name} estimate to draw (see the table).</p>")  # type: ignore[no-untyped-call]
