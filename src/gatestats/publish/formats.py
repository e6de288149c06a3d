"""A published table (:class:`PublishedTable`) and its renderings (:func:`render`).

One table, many formats: ``terminal`` (rich; long names fold onto further lines, never cut),
``markdown`` (a pipe table), ``latex`` and ``html`` (great-tables: ``GT.as_latex()``,
``GT.as_raw_html()``), ``csv`` (the numeric frame with the label columns: a CSV is data, not
decoration). rich and great-tables are imported inside the functions that use them, so a command
that prints no table does not pay for them.

Every text in a table (title, headers, cells, notes, legend) comes from files anyone can write.
Before any format it passes through :func:`gatestats.io.text.visible` (line breaks and control or
invisible characters shown as ``\\n``, ``\\x00``; over-long values shortened); then each format
escapes its own specials: rich markup is never parsed (cells are ``rich.text.Text``), Markdown
backslash-escapes ``\\ ` * _ [ ] | ~ $`` and writes ``& < >`` as entities, great-tables escapes
HTML (``&lt;``) and LaTeX (``\\%``, ``\\_``, ``\\textbackslash{}``; ``|`` and the backtick are
written as ``\\textbar{}`` and ``\\textasciigrave{}`` here). The CSV keeps the values whole (polars quotes them),
except that a text cell beginning with ``= + - @``, a tab or a carriage return gets a leading ``'`` (a
spreadsheet would run it as a formula: OWASP "CSV Injection"); numbers are never changed.
"""

from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, get_args

import polars as pl

from gatestats.io.text import LABEL_LIMIT, TEXT_LIMIT, visible
from gatestats.vocabulary import TableFormat, check_choice

if TYPE_CHECKING:
    from great_tables import GT

__all__ = ["Column", "PublishedTable", "render", "render_summary"]

#: Backslash-escaped in a Markdown cell: emphasis, code, links, the cell separator, strikethrough and math.
#: The narrowest a column is made to fit the terminal.
_NARROWEST = 6
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]|~$])")


@dataclass(frozen=True, slots=True, kw_only=True)
class Column:
    """One column of a published table.

    Attributes
    ----------
    header
        What the column is headed (``p (mid-p)``).
    numeric
        Right-aligned (numbers); text columns are left-aligned.
    """

    header: str
    numeric: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishedTable:
    """A table ready to render: headers, cell texts, notes and the legend, and the numeric frame behind them.

    Attributes
    ----------
    title
        One line above the table.
    columns
        The columns, in order.
    rows
        The cell texts, one tuple per row (as many cells as ``columns``).
    notes
        Lines below the table (what an interval is, what was left out).
    legend
        What the marks mean (``* : p adjusted (holm, mid-p) <= 0.05``).
    data
        The numeric frame (``to_frame()``) with the label columns: what ``csv`` writes.
    """

    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]
    data: pl.DataFrame = field(compare=False)
    notes: tuple[str, ...] = ()
    legend: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for number, row in enumerate(self.rows, 1):
            if len(row) != len(self.columns):
                msg = f"row {number} has {len(row)} cells for {len(self.columns)} columns"
                raise ValueError(msg)

    @property
    def footer(self) -> tuple[str, ...]:
        """The legend, then the notes (the lines every format prints below the table)."""
        return (*self.legend, *self.notes)


def render(table: PublishedTable, fmt: TableFormat, *, width: int = 120) -> str:
    """``table`` in the format ``fmt``, as text ending with a newline.

    Parameters
    ----------
    table
        The table.
    fmt
        ``terminal``, ``markdown``, ``latex``, ``html`` or ``csv``.
    width
        Width of the terminal rendering (columns fold beyond it; other formats ignore it).

    Returns
    -------
    str
        The rendering.

    Raises
    ------
    ValueError
        An unknown format.
    """
    check_choice(fmt, get_args(TableFormat), "format")
    if fmt == "csv":
        return _csv(table)
    if fmt == "markdown":
        return _markdown(table)
    if fmt == "terminal":
        return _terminal(table, width=width, rows=table.rows)
    gt = _great_table(table)
    text = _latex_text(gt.as_latex()) if fmt == "latex" else gt.as_raw_html()
    return text if text.endswith("\n") else text + "\n"


def render_summary(table: PublishedTable, *, max_rows: int = 8, width: int = 200) -> str:
    """A short plain-text view of ``table`` (``summary()``): the first ``max_rows`` rows, the legend and notes.

    Parameters
    ----------
    table
        The table.
    max_rows
        The most rows shown; a last line says how many more there are.
    width
        Width of the text.

    Returns
    -------
    str
        The summary (no colours, no escape sequences).
    """
    text = _terminal(table, width=width, rows=table.rows[:max_rows], boxed=False)
    more = len(table.rows) - max_rows
    if more > 0:
        text += f"... and {more} more row(s): .table() shows them all, .to_frame() has the numbers\n"
    return text


def _shown(text: str, limit: int = LABEL_LIMIT) -> str:
    return visible(text, limit=limit)


def _line(text: str) -> str:
    """A title, note or legend line: longer than a label before it is shortened."""
    return visible(text, limit=TEXT_LIMIT)


#: What starts a formula in a spreadsheet (OWASP, "CSV Injection": = + - @ tab CR): a text cell beginning
#: with one is written with a leading ``'``, so Excel, LibreOffice and Google Sheets show it, not run it.
_FORMULA_START = r"^[=+\-@\t\r]"


def _csv(table: PublishedTable) -> str:
    """The numeric frame as CSV; text cells that a spreadsheet would run as a formula are defused."""
    text = [name for name, dtype in table.data.schema.items() if dtype == pl.String]
    frame = table.data.with_columns(
        pl.when(pl.col(name).str.contains(_FORMULA_START))
        .then(pl.lit("'") + pl.col(name))
        .otherwise(pl.col(name))
        .alias(name)
        for name in text
    )
    buffer = io.StringIO()
    frame.write_csv(buffer)
    return buffer.getvalue()


def _markdown_cell(text: str) -> str:
    """One Markdown table cell: specials backslash-escaped, HTML's ``< > &`` as entities (no inline HTML)."""
    escaped = _MARKDOWN_SPECIALS.sub(r"\\\1", _shown(text))
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") if escaped else " "


def _markdown_line(text: str) -> str:
    escaped = _MARKDOWN_SPECIALS.sub(r"\\\1", _line(text))
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _markdown(table: PublishedTable) -> str:
    lines = [f"**{_markdown_line(table.title)}**", ""]
    lines.append("| " + " | ".join(_markdown_cell(c.header) for c in table.columns) + " |")
    lines.append("|" + "|".join("---:" if c.numeric else ":---" for c in table.columns) + "|")
    lines.extend("| " + " | ".join(_markdown_cell(cell) for cell in row) + " |" for row in table.rows)
    if table.footer:
        lines.append("")
        lines.extend(_markdown_line(line) + "  " for line in table.footer)
    return "\n".join(lines).rstrip() + "\n"


def _terminal(table: PublishedTable, *, width: int, rows: tuple[tuple[str, ...], ...], boxed: bool = True) -> str:
    from rich import box  # noqa: PLC0415 - rich on first use: a command that prints no table skips it
    from rich.console import Console  # noqa: PLC0415 - as above
    from rich.table import Table  # noqa: PLC0415 - as above
    from rich.text import Text  # noqa: PLC0415 - as above

    shown = Table(title=Text(_line(table.title)), title_justify="left", box=box.SQUARE if boxed else box.SIMPLE)
    for column, fixed in zip(table.columns, _column_widths(table, rows, width), strict=True):
        shown.add_column(
            Text(_shown(column.header)), justify="right" if column.numeric else "left", overflow="fold", width=fixed
        )
    for row in rows:
        shown.add_row(*(Text(_shown(cell)) for cell in row))
    console = Console(
        emoji=False, file=io.StringIO(), width=width, color_system=None, force_terminal=False, highlight=False
    )
    console.print(shown)
    for line in table.footer:
        console.print(Text(_line(line)))
    out = str(console.file.getvalue())  # type: ignore[attr-defined]
    return "".join(line.rstrip() + "\n" for line in out.splitlines())


def _latex_text(latex: str) -> str:
    """great-tables' LaTeX with ``|`` and a backtick written as symbols (in text mode they set a dash and a quote).

    great-tables writes neither character itself (its column specification has no rules), so every
    one in its output comes from a cell.
    """
    return latex.replace("|", "\\textbar{}").replace("`", "\\textasciigrave{}")


def _column_widths(table: PublishedTable, rows: tuple[tuple[str, ...], ...], width: int) -> list[int | None]:
    """Each column's width: rich's own choice (None) when the table fits ``width``; else the widest
    column narrowed one character at a time, first down to its longest word, then (if the table
    still does not fit) below it.

    A narrowed cell wraps at spaces and folds a longer word onto more lines: a long system id is
    shown whole, never cut with an ellipsis.
    """
    texts = [[_shown(text) for text in (c.header, *(row[i] for row in rows))] for i, c in enumerate(table.columns)]
    natural = [max(len(text) for text in column) for column in texts]
    budget = width - 3 * len(natural) - 1  # a space either side of each cell and the rules between
    if sum(natural) <= budget:
        return [None] * len(natural)
    widths = list(natural)
    for floors in ([max(_NARROWEST, *(len(w) for t in column for w in t.split())) for column in texts], None):
        while sum(widths) > budget:
            slack = [w - (_NARROWEST if floors is None else f) for w, f in zip(widths, floors or widths, strict=True)]
            if max(slack) <= 0:
                break
            widths[slack.index(max(slack))] -= 1
    return list(widths)


def _great_table(table: PublishedTable) -> GT:
    from great_tables import GT  # noqa: PLC0415 - great-tables costs ~0.3 s to import: only for latex and html

    keys = [f"c{i}" for i in range(len(table.columns))]
    frame = pl.DataFrame(
        [[_shown(cell) for cell in row] for row in table.rows], schema=dict.fromkeys(keys, pl.String), orient="row"
    )
    digest = hashlib.sha256(repr((table.title, table.columns, table.rows)).encode()).hexdigest()[:12]
    gt = GT(frame, id=f"gatestats-{digest}").tab_header(title=_line(table.title))
    headers: dict[str, Any] = {k: _shown(c.header) for k, c in zip(keys, table.columns, strict=True)}
    gt = gt.cols_label(cases=headers)
    right = [k for k, c in zip(keys, table.columns, strict=True) if c.numeric]
    if right:
        gt = gt.cols_align(align="right", columns=right)
    for line in table.footer:
        gt = gt.tab_source_note(_line(line))
    return gt
