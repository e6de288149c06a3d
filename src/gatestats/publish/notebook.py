"""The notebook face of a result: ``summary()`` and ``_repr_html_()`` from its ``table()``.

A result class mixes in :class:`Presentable` and defines ``table(labels=None)``; Jupyter then shows
the great-tables HTML of that table, and ``print(result.summary())`` a few plain-text lines (as
statsmodels' ``summary()``). ``to_frame()`` and ``plot()`` stay with each result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gatestats.publish.formats import PublishedTable
    from gatestats.publish.labels import Labels

__all__ = ["Presentable"]


class Presentable:
    """Mixin: :meth:`summary` and :meth:`_repr_html_` from the subclass's :meth:`table`."""

    __slots__ = ()

    def table(self, labels: Labels | None = None) -> PublishedTable:
        """The result as a published table (each result class defines it).

        Parameters
        ----------
        labels
            Display names for the ids shown (None: the ids themselves).

        Returns
        -------
        PublishedTable
            The table.
        """
        raise NotImplementedError

    def summary(self, max_rows: int = 8) -> str:
        """A short plain-text summary: the table's first ``max_rows`` rows, its legend and notes.

        Parameters
        ----------
        max_rows
            The most rows shown (a last line counts the others).

        Returns
        -------
        str
            The summary, for ``print``.
        """
        from gatestats.publish.formats import render_summary  # noqa: PLC0415 - formats imports polars

        return render_summary(self.table(), max_rows=max_rows)

    def _repr_html_(self) -> str:
        """The table as HTML (great-tables), for Jupyter."""
        from gatestats.publish.formats import render  # noqa: PLC0415 - formats imports polars

        return render(self.table(), "html")
