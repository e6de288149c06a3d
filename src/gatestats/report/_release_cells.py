"""The building blocks of a release report's HTML: its one style sheet, tables, lists, badges, estimates.

Every value is escaped (:func:`gatestats.report._release_format.e`); cells passed to :func:`table`
are already-escaped HTML. An estimate the data cannot support reads "insufficient evidence", never
0; numbers are written by :mod:`gatestats.report._release_format` (estimates with three decimals,
p-values with three significant digits). The section builders are in
:mod:`gatestats.report._release_html`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import polars as pl

from gatestats.report._release_format import NONE, number, rate, words
from gatestats.report._release_format import e as _e
from gatestats.report._release_words import Reason

__all__ = [
    "STYLE",
    "badge",
    "bullet_list",
    "ci",
    "code",
    "counts",
    "estimate",
    "p_value",
    "reason_list",
    "rows",
    "table",
]

STYLE: Final = """<style>
.gs-verdict { border-radius: 8px; padding: 16px 24px; margin: 8px 0 16px; color: #fff; }
.gs-verdict-word { font-size: 3em; font-weight: 800; letter-spacing: 0.04em; line-height: 1.1; }
.gs-verdict-line { font-size: 1.1em; margin-top: 6px; }
.gs-verdict.gs-pass { background: #1a7f37; } .gs-verdict.gs-warn { background: #9a6700; }
.gs-verdict.gs-fail { background: #cf222e; } .gs-verdict.gs-insufficient_evidence { background: #8250df; }
table.gs-table { border-collapse: collapse; font-size: 0.92em; margin: 8px 0 12px; max-width: 100%; }
div.gs-table-box { max-width: 100%; overflow-x: auto; }
table.gs-table th, table.gs-table td { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: left !important;
  vertical-align: top; }
table.gs-table td.gs-num { text-align: right !important; font-variant-numeric: tabular-nums; white-space: nowrap; }
span.gs-decision { font-weight: 700; padding: 0 6px; border-radius: 4px; white-space: nowrap; }
span.gs-decision.gs-pass, span.gs-decision.gs-ok { color: #1a7f37; background: #dafbe1; }
span.gs-decision.gs-warn { color: #9a6700; background: #fff8c5; }
span.gs-decision.gs-fail { color: #cf222e; background: #ffebe9; }
span.gs-decision.gs-insufficient_evidence { color: #8250df; background: #fbefff; }
.gs-note { color: #555; font-size: 0.9em; }
.gs-plain { font-weight: 600; }
.gs-detail { color: #555; font-size: 0.92em; }
.gs-test { color: #555; font-size: 0.88em; }
code.gs-digest { word-break: break-all; }
code.gs-case { white-space: nowrap; }
</style>"""


def p_value(value: float | None) -> str:
    """A p-value: three significant digits in plain decimals.

    Parameters
    ----------
    value
        The p-value, or ``None``.

    Returns
    -------
    str
        ``0.407``, ``0.0000153``; ``—`` when missing.
    """
    return number(value, 3)


def ci(low: float | None, high: float | None, fmt: Callable[[float | None], str] = rate) -> str:
    """An interval ``[low, high]`` (``—`` when either end is missing).

    Parameters
    ----------
    low, high
        The ends.
    fmt
        How each end is written (default :func:`~gatestats.report._release_format.rate`).

    Returns
    -------
    str
        The interval as text.
    """
    return NONE if low is None or high is None else f"[{fmt(low)}, {fmt(high)}]"


def estimate(row: Mapping[str, Any], fmt: Callable[[float | None], str] = rate) -> str:
    """An estimate with its interval; without an interval it says so; without an estimate: insufficient evidence.

    Parameters
    ----------
    row
        A row with ``estimate``, ``ci_low``, ``ci_high`` and ``status``.
    fmt
        How the numbers are written.

    Returns
    -------
    str
        ``0.750 [0.323, 0.964]``, ``0.750 (no interval)`` or ``insufficient evidence``.
    """
    if row.get("estimate") is None:
        return "insufficient evidence"
    if row.get("ci_low") is None or row.get("ci_high") is None:
        return f"{fmt(row['estimate'])} (no interval)"
    if row.get("status") != "ok":
        return "insufficient evidence"
    return f"{fmt(row['estimate'])} {ci(row.get('ci_low'), row.get('ci_high'), fmt)}"


def badge(decision: str | None) -> str:
    """A decision as a coloured badge (HTML).

    Parameters
    ----------
    decision
        A decision or status of the verdict (``pass``, ``insufficient_evidence``, ``ok`` …).

    Returns
    -------
    str
        A ``<span>`` with the decision in words.
    """
    return f'<span class="gs-decision gs-{_e(decision)}">{_e(words(decision))}</span>'


def code(value: Any) -> str:
    """A digest, path or id in code font that may break anywhere (HTML; ``—`` when empty).

    Parameters
    ----------
    value
        The value.

    Returns
    -------
    str
        A ``<code>`` element, or ``—``.
    """
    return NONE if value in (None, "", []) else f'<code class="gs-digest">{_e(value)}</code>'


def _cell(value: str, *, numeric: bool = False) -> str:
    return f'<td class="gs-num">{value}</td>' if numeric else f"<td>{value}</td>"


def table(headers: Sequence[str], body_rows: Iterable[Sequence[str]], *, numeric: Sequence[int] = ()) -> str:
    """An HTML table in a box that scrolls rather than cuts when the page is narrower than the table.

    Parameters
    ----------
    headers
        The column headers (plain text, escaped here).
    body_rows
        The rows, each of already-escaped cell HTML.
    numeric
        Indexes of the columns aligned right (numbers).

    Returns
    -------
    str
        The ``<div class="gs-table-box"><table class="gs-table">`` markup.
    """
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(_cell(c, numeric=i in numeric) for i, c in enumerate(row)) + "</tr>" for row in body_rows
    )
    markup = f'<table class="gs-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    return f'<div class="gs-table-box">{markup}</div>'


def bullet_list(items: Iterable[str]) -> str:
    """Plain-text items as an unordered list, tokens as words (HTML).

    Parameters
    ----------
    items
        The items (escaped here).

    Returns
    -------
    str
        The ``<ul>``.
    """
    return "<ul>" + "".join(f"<li>{_e(words(i))}</li>" for i in items) + "</ul>"


def reason_list(items: Iterable[Reason], *, ordered: bool = False) -> str:
    """Reasons as a list: the plain sentence first (bold), then the gate's statistics.

    Parameters
    ----------
    items
        The reasons.
    ordered
        A numbered list.

    Returns
    -------
    str
        The ``<ol>`` or ``<ul>``.
    """
    tag = "ol" if ordered else "ul"
    body = "".join(
        f'<li><span class="gs-plain">{_e(r.plain)}</span><br><span class="gs-detail">{_e(r.detail)}</span></li>'
        for r in items
    )
    return f'<{tag} class="gs-reasons">{body}</{tag}>'


def rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """A table of the report's data as row mappings.

    Parameters
    ----------
    frame
        The table.

    Returns
    -------
    list[dict[str, Any]]
        One mapping per row.
    """
    return frame.to_dicts()


def counts(passed: int | None, valid: int | None) -> str:
    """``passed/valid`` trials (``—`` when either is missing, never 0).

    Parameters
    ----------
    passed, valid
        The counts.

    Returns
    -------
    str
        The counts as text.
    """
    return NONE if passed is None or valid is None else f"{passed}/{valid}"
