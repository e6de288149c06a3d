"""Generic Quarto machinery: a ``.qmd`` rendered to one self-contained, offline HTML page.

Nothing here knows about verdicts or release reports (that content lives in
:mod:`gatestats.report.release`); any parameterised ``.qmd`` can be rendered with it.

- :func:`parse_qmd` / :func:`read_qmd` — front matter, Markdown and ```` ```{python} ```` cells with
  their ``#|`` options (errors name the file and line); :func:`to_notebook` — the nbformat v4
  notebook with the parameters injected after the cell tagged ``parameters`` (papermill/Quarto).
- :func:`render_qmd` — ``quarto render`` when the Quarto CLI is installed, else nbclient +
  nbconvert honouring Quarto's execution options; atomic, offline HTML; :class:`RenderResult`,
  :class:`RenderError`.
- :func:`enable_offline_altair` / :func:`save_chart` / :func:`chart_svg` — charts as in-kernel SVG
  (vl-convert) and deterministic SVG/PNG files; each chart on the page is a ``div.gatestats-chart``.
- :func:`find_network_references` — what a page would fetch from the network.
"""

from gatestats.report.quarto import qmd, render
from gatestats.report.quarto._html import find_network_references
from gatestats.report.quarto.charts import chart_svg, enable_offline_altair, save_chart
from gatestats.report.quarto.qmd import *  # noqa: F403 (its __all__, re-exported as is)
from gatestats.report.quarto.render import *  # noqa: F403 (its __all__, re-exported as is)

__all__ = ["chart_svg", "enable_offline_altair", "find_network_references", "save_chart"]
__all__ += qmd.__all__
__all__ += render.__all__
