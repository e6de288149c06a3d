"""Tables going out: labels, cell texts, and one table rendered in every format (docs/publish.md).

This package knows frames and headers, not comparisons: the statistics build a
:class:`PublishedTable` from their results (``result.table(labels)``) and the commands render it
(:func:`render`). It imports no statistics package (layer 2, beside ``tables``).
"""

from __future__ import annotations

from gatestats.publish.formats import Column, PublishedTable, render, render_summary
from gatestats.publish.labels import Labels, LabelsError
from gatestats.publish.notebook import Presentable

__all__ = ["Column", "Labels", "LabelsError", "Presentable", "PublishedTable", "render", "render_summary"]
