"""The one ordered table of a release report's sections; it generates the ``.qmd`` body.

:data:`SECTIONS` is the only place that says which sections a release report has and in what
order: the body of ``report.qmd`` (:func:`qmd_body`: one ``##`` heading per section, its chart
cells, then its HTML cell), the docs and the tests all read it. Adding a section is one row here
plus its HTML builder in :data:`gatestats.report._release_html.BUILDERS` (and, when it draws, its
chart in :mod:`gatestats.report._release_charts`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from gatestats.report._release_charts import CHART_NAMES
from gatestats.report._release_data import ReleaseData
from gatestats.report._release_html import BUILDERS, provenance_html
from gatestats.vocabulary import ESTIMANDS

__all__ = ["SECTIONS", "Section", "qmd_body", "section_html", "section_names"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Section:
    """One section of a release report.

    ``name`` is the key :func:`section_html` takes (and, with ``_`` as ``-``, the label of its
    cell); ``title`` the heading as the reader sees it; ``charts`` the chart stems drawn above the
    section's table (in order; see :data:`~gatestats.report._release_charts.CHART_NAMES`).
    """

    name: str
    title: str
    charts: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The label of the section's cell (``severe_slices`` → ``severe-slices``)."""
        return self.name.replace("_", "-")


#: The sections of a release report, in the order the report shows them.
SECTIONS: Final[tuple[Section, ...]] = (
    Section(name="verdict", title="Verdict"),
    Section(name="rules", title="Rules"),
    Section(name="severe_slices", title="Severe slices"),
    Section(name="flips", title="Flips per case"),
    Section(name="sequential", title="Sequential run"),
    Section(name="after_gate", title="After the gate"),
    Section(name="curves", title="pass^k and pass@k over k", charts=ESTIMANDS),
    Section(name="slices", title="Per-slice pass rates", charts=("slices",)),
    Section(name="case_sets", title="Case set"),
    Section(name="failure_classes", title="Failure classes"),
    Section(name="cost", title="Cost per accepted outcome", charts=("cost",)),
    Section(name="judges", title="Judge calibration"),
    Section(name="infra", title="Infra errors and resource bounds"),
    Section(name="provenance", title="Provenance"),
)
_MARKDOWN_SPECIAL: Final = re.compile(r"([\\`*_\[\]{}<>#^@~|!])")


def section_names() -> tuple[str, ...]:
    """The section names in report order.

    Returns
    -------
    tuple[str, ...]
        The ``name`` of each section of :data:`SECTIONS`.
    """
    return tuple(s.name for s in SECTIONS)


def section_html(
    data: ReleaseData, section: str, *, renderer: str | None = None, renderer_version: str | None = None
) -> str:
    """The HTML of one report section (``renderer``/``renderer_version`` are shown in ``provenance``).

    Parameters
    ----------
    data
        The report's data (:func:`load_release_data`).
    section
        The section's name.
    renderer, renderer_version
        The renderer and its version, shown in the ``provenance`` section.

    Returns
    -------
    str
        The section's HTML (data escaped).

    Raises
    ------
    ValueError
        ``section`` is not the name of a section of :data:`SECTIONS`.
    """
    names = section_names()
    if section not in names:
        msg = f"section must be one of {', '.join(names)} (got {section!r})"
        raise ValueError(msg)
    if section == "provenance":
        return provenance_html(data, renderer=renderer, renderer_version=renderer_version)
    return BUILDERS[section](data)


def _heading(title: str) -> str:
    """``title`` as Markdown text (``^`` and ``@`` escaped so Quarto and nbconvert show them as is)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", title)


def _cell(label: str, code: str) -> str:
    return f"```{{python}}\n#| label: {label}\n#| echo: false\n{code}\n```\n"


def qmd_body() -> str:
    """The body of ``report.qmd``: per section of :data:`SECTIONS`, its heading, chart cells and HTML cell.

    Returns
    -------
    str
        The Markdown and code cells of the body.

    Examples
    --------
    >>> qmd_body().splitlines()[:7]
    ['## Verdict', '', '```{python}', '#| label: verdict', '#| echo: false', 'section("verdict")', '```']
    """
    parts = []
    for section in SECTIONS:
        cells = [_cell(f"chart-{stem.replace('_', '-')}", f'chart("{stem}")') for stem in section.charts]
        cells.append(_cell(section.label, f'section("{section.name}")'))
        parts.append(f"## {_heading(section.title)}\n\n" + "\n".join(cells))
    return "\n".join(parts)


def _check_table() -> None:
    """The table, the HTML builders and the charts agree (checked once, at import)."""
    names = section_names()
    charts = [stem for s in SECTIONS for stem in s.charts]
    if len(set(names)) != len(names) or set(names) != set(BUILDERS) or tuple(charts) != CHART_NAMES:
        msg = (
            f"release report sections {names} must be unique, match the HTML builders {tuple(BUILDERS)} and "
            f"draw the charts {CHART_NAMES} in order (got {tuple(charts)})"
        )
        raise RuntimeError(msg)


_check_table()
