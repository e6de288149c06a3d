"""Release reports: a verdict shown to a release manager as one self-contained, offline HTML page.

Two layers (see docs/architecture.md, "Report"):

- :mod:`gatestats.report.quarto` — generic Quarto machinery, no release knowledge:
  :func:`parse_qmd` / :func:`read_qmd` / :func:`to_notebook`, :func:`render_qmd` (Quarto when
  installed, else nbclient + nbconvert), :func:`enable_offline_altair` / :func:`save_chart`,
  :func:`find_network_references`.
- :mod:`gatestats.report.release` — the release report's content: :func:`build_release_report`
  (``gatestats report``) writes ``reports/<release>/<version>/`` from a verdict file (its record
  digests checked first); its sections come from one ordered table, :data:`SECTIONS`.
"""

from gatestats.report.quarto import (
    EXECUTION_OPTIONS,
    CellKind,
    QmdCell,
    QmdDocument,
    QmdError,
    Renderer,
    RenderError,
    RenderResult,
    ResolvedRenderer,
    enable_offline_altair,
    execution_options,
    find_network_references,
    parse_qmd,
    read_qmd,
    render_qmd,
    resolve_renderer,
    save_chart,
    strip_option_lines,
    to_notebook,
    validate_params,
)
from gatestats.report.release import SECTIONS, ReleaseReport, ReportInputError, Section, build_release_report

__all__ = [
    "EXECUTION_OPTIONS",
    "SECTIONS",
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
    "Section",
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
