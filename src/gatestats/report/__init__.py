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

from gatestats.report import quarto
from gatestats.report.quarto import *  # noqa: F403 (the generic machinery, re-exported as is)
from gatestats.report.release import SECTIONS, ReleaseReport, ReportInputError, Section, build_release_report

__all__ = ["SECTIONS", "ReleaseReport", "ReportInputError", "Section", "build_release_report"]
__all__ += quarto.__all__
