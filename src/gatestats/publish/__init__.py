"""Tables going out: labels, cell texts, and one table rendered in every format (docs/publish.md).

This package knows frames and headers, not comparisons: the statistics build a
:class:`PublishedTable` from their results (``result.table(labels)``) and the commands render it
(:func:`render`). It imports no statistics package (layer 2, beside ``tables``).

The names are imported on first use (:func:`gatestats._lazy.lazy_names`): a statistic that only
needs :class:`Presentable` does not load the renderer (issue 28 item 2: ``gatestats analyze`` in
the terminal draws its own rich tables and does not import :mod:`~gatestats.publish.formats`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gatestats._lazy import lazy_names

if TYPE_CHECKING:
    from gatestats.publish.formats import Column, PublishedTable, render, render_summary
    from gatestats.publish.labels import Labels, LabelsError
    from gatestats.publish.notebook import Presentable

__all__ = ["Column", "Labels", "LabelsError", "Presentable", "PublishedTable", "render", "render_summary"]

#: The module (under this package) of each name in ``__all__``, imported on first use.
_HOMES: Final = {
    "Column": "formats",
    "PublishedTable": "formats",
    "render": "formats",
    "render_summary": "formats",
    "Labels": "labels",
    "LabelsError": "labels",
    "Presentable": "notebook",
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
