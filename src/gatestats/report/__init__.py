"""Release reports: a Quarto ``.qmd`` rendered to one self-contained, offline HTML page.

- :func:`parse_qmd` / :func:`read_qmd` — front matter, Markdown and ```` ```{python} ```` cells with
  their ``#|`` options (errors name the file and line); :func:`to_notebook` — the nbformat v4
  notebook with the parameters injected after the cell tagged ``parameters`` (papermill/Quarto).
- :func:`render_qmd` — ``quarto render`` when the Quarto CLI is installed, else nbclient +
  nbconvert honouring Quarto's execution options; atomic, offline HTML; :class:`RenderResult`,
  :class:`RenderError`.
- :func:`enable_offline_altair` / :func:`save_chart` — charts as in-kernel SVG (vl-convert) and
  deterministic SVG/PNG files; each chart on the page is a ``div.gatestats-chart``.
- :func:`find_network_references` — what a page would fetch from the network.
- :func:`build_release_report` — ``gatestats report``: the versioned release report
  ``reports/<release>/<version>/`` of a verdict file (its record digests checked first).
"""

from gatestats.report._html import find_network_references
from gatestats.report.charts import enable_offline_altair, save_chart
from gatestats.report.qmd import (
    EXECUTION_OPTIONS,
    CellKind,
    QmdCell,
    QmdDocument,
    QmdError,
    execution_options,
    parse_qmd,
    read_qmd,
    strip_option_lines,
    to_notebook,
    validate_params,
)
from gatestats.report.release import ReleaseReport, ReportInputError, build_release_report
from gatestats.report.render import (
    Renderer,
    RenderError,
    RenderResult,
    ResolvedRenderer,
    render_qmd,
    resolve_renderer,
)

__all__ = [
    "EXECUTION_OPTIONS",
    "CellKind",
    "QmdCell",
    "QmdDocument",
    "QmdError",
    "ReleaseReport",
    "RenderError",
    "RenderResult",
    "Renderer",
    "ReportInputError",
    "ResolvedRenderer",
    "build_release_report",
    "enable_offline_altair",
    "execution_options",
    "find_network_references",
    "parse_qmd",
    "read_qmd",
    "render_qmd",
    "resolve_renderer",
    "save_chart",
    "strip_option_lines",
    "to_notebook",
    "validate_params",
]
