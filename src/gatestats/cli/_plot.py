"""``--plot FILE`` of ``analyze`` and ``compare``: the option, its check and the chart file written.

The option's callback checks the path when the command line is parsed (a usage error, exit 2,
before any record is read): the suffix (``.svg``, ``.png``, ``.html``), an existing directory, not
a directory. A record file never has a chart's suffix; :func:`write_plot` still refuses a chart path
that is one of the record files under another name (a link), then writes the chart atomically.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gatestats.cli._common import usage_error
from gatestats.io.text import visible

if TYPE_CHECKING:
    import altair as alt

__all__ = ["PlotOption", "checked_plot", "write_plot"]


def checked_plot(path: Path | None, records: Sequence[str | os.PathLike[str]] = ()) -> Path | None:
    """Check ``--plot``: a usage error (exit 2) for a path a chart cannot go to.

    Parameters
    ----------
    path
        The option's value (None: no chart).
    records
        The input record files (a chart never replaces one of them).

    Returns
    -------
    Path or None
        The path.

    Raises
    ------
    typer.Exit
        An unknown suffix, a missing directory, a directory, or one of the record files (exit 2).
    """
    if path is None:
        return None
    from gatestats.publish.charts import ChartPathError, check_chart_path

    try:
        target = check_chart_path(path)
    except ChartPathError as exc:
        raise usage_error(f"--plot: {exc}") from None
    if target.exists() and any(Path(r).exists() and target.samefile(r) for r in records):
        raise usage_error(f"--plot: {visible(target)} is one of the record files read")
    return target


def _callback(path: Path | None) -> Path | None:
    return checked_plot(path)


#: ``--plot`` of ``analyze`` and ``compare`` (and ``rank``), checked when the command line is parsed.
PlotOption = Annotated[
    Path | None,
    typer.Option(
        "--plot",
        metavar="FILE",
        help="Also write a chart: FILE.svg, FILE.png or FILE.html (standalone, works offline).",
        callback=_callback,
    ),
]


def write_plot(
    path: Path | None, chart: Callable[[], alt.TopLevelMixin], records: Sequence[str | os.PathLike[str]]
) -> None:
    """Write the chart ``chart()`` makes to ``path`` (atomically; nothing when ``path`` is None).

    Parameters
    ----------
    path
        The ``--plot`` path.
    chart
        Makes the chart (called only when a path is given).
    records
        The input record files (refused as the chart's path).
    """
    target = checked_plot(path, records)
    if target is None:
        return
    from gatestats.publish.charts import save_chart

    save_chart(chart(), target)
    print(f"chart written: {visible(target)}", file=sys.stderr)
