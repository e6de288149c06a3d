"""Release reports: a verdict shown to a release manager as one self-contained, offline HTML page.

Two layers (see docs/architecture.md, "Report"):

- :mod:`gatestats.report.quarto` — generic Quarto machinery, no release knowledge:
  :func:`parse_qmd` / :func:`read_qmd` / :func:`to_notebook`, :func:`render_qmd` (Quarto when
  installed, else nbclient + nbconvert), :func:`enable_offline_altair` / :func:`save_chart`,
  :func:`find_network_references`.
- :mod:`gatestats.report.release` — the release report's content: :func:`build_release_report`
  (``gatestats report``) writes ``reports/<release>/<version>/`` from a verdict file (its record
  digests checked first); its sections come from one ordered table, :data:`SECTIONS`.

The names are imported on first use (PEP 562): the report's kernel imports
:mod:`gatestats.report.page` alone, without the renderer, the chart library or the gate.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
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
        StartedKernel,
        chart_svg,
        enable_offline_altair,
        execution_options,
        find_network_references,
        parse_qmd,
        read_qmd,
        render_qmd,
        resolve_renderer,
        save_chart,
        start_kernel,
        strip_option_lines,
        to_notebook,
        validate_params,
    )
    from gatestats.report.release import (
        SECTIONS,
        ReleaseReport,
        ReportInputError,
        Section,
        build_release_report,
    )

#: The names of gatestats.report.release and of gatestats.report.quarto (its __all__; tested), re-exported.
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
    "StartedKernel",
    "build_release_report",
    "chart_svg",
    "enable_offline_altair",
    "execution_options",
    "find_network_references",
    "parse_qmd",
    "read_qmd",
    "render_qmd",
    "resolve_renderer",
    "save_chart",
    "start_kernel",
    "strip_option_lines",
    "to_notebook",
    "validate_params",
]
_RELEASE: Final = frozenset({"ReleaseReport", "ReportInputError", "SECTIONS", "Section", "build_release_report"})


def __getattr__(name: str) -> Any:
    """Import the module of ``name`` on first use (PEP 562)."""
    if name in _RELEASE:
        return getattr(importlib.import_module("gatestats.report.release"), name)
    if name in __all__:
        return getattr(importlib.import_module("gatestats.report.quarto"), name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
