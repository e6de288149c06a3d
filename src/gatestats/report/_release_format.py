"""How a release report writes numbers, money, durations, case ids and the gate's words for a person.

The rules (also in docs/architecture.md, "Report"):

- **Numbers**, one format on the whole page: estimates, rates, differences and interval ends with
  three decimals (``0.778 [0.218, 0.994]``, ``−0.063``); p-values and e-values with three
  significant digits in plain decimals (``0.407``, ``0.0000153``, ``166``), never an exponent;
  thresholds and margins as the policy wrote them (``0.5``, ``−0.05``).
- **Money** in plain decimals, never scientific notation: at least cents (``$2.50``,
  ``$1,234.56``), and below one dollar three significant digits (``$0.0283``, ``$0.0000145``).
- **Durations** in the unit that keeps them readable: seconds below a minute (``42.0 s``), minutes
  below an hour (``4.5 min``), hours above (``2.35 h``); zero is ``0 s``.
- **Case ids** without their ``@version`` (the full id goes in the ``title``, shown on hover).
- **Ids, slice names and system labels** (anyone can write them) are shown by the terminal's rule,
  :func:`gatestats.io.text.visible`: line breaks (U+2028 too), control, zero-width and bidirectional
  characters as ``\\u2028``-style escapes, over-long values shortened with a count (:func:`shown`).
- **Words**: ``insufficient_evidence`` and other tokens of the verdict file become words
  ("insufficient evidence"); a side named by its own label (``baseline 'baseline'``, the gate's
  internal labels) is named once.
- **Thresholds** say what they compare: a paired row's threshold is a difference from the
  baseline (``−0.05 vs baseline``), a cost-increase row's a ratio (``≤ 1.15 × baseline``).

A missing number is ``—``, never 0.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping
from typing import Any, Final

from gatestats.io.text import LABEL_LIMIT, TEXT_LIMIT, visible

__all__ = [
    "NONE",
    "case_html",
    "duration",
    "e",
    "natural_key",
    "number",
    "plural",
    "rate",
    "short_case_id",
    "shown",
    "side_system",
    "threshold_text",
    "usd",
    "words",
]

NONE: Final = "—"
_MINUS: Final = "\N{MINUS SIGN}"
_TOKENS: Final[Mapping[str, str]] = {
    "insufficient_evidence": "insufficient evidence",
    "pass_to_fail": "pass → fail",
    "fail_to_pass": "fail → pass",
}
_TOKEN_RE: Final = re.compile(r"\b(" + "|".join(_TOKENS) + r")\b")
_DIGITS: Final = re.compile(r"(\d+)")
#: A side followed by its internal label (the gate relabels both sides ``baseline`` / ``candidate``).
_SIDE_LABEL: Final = re.compile(r"\b(baseline|candidate) '\1'")
_RATIO_LABELS: Final = "'candidate'/'baseline'"
_EXPONENT: Final = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?e[-+]?\d+\b")


def e(value: Any) -> str:
    """``value`` as escaped HTML text (``None`` is empty).

    Parameters
    ----------
    value
        Any value (shown with ``str``).

    Returns
    -------
    str
        HTML-escaped text.
    """
    return html.escape("" if value is None else str(value))


def shown(value: Any, *, limit: int = LABEL_LIMIT) -> str:
    """An id, slice name or label from the data as escaped HTML text, shown as the terminal shows it.

    The rule is :func:`gatestats.io.text.visible` (the gate's terminal and Markdown output): line
    breaks, control, format (zero-width, bidirectional) and private-use characters are written as
    ``\\n``, ``\\u2028``, ``\\u202e`` ..., and a value longer than ``limit`` is shortened with a count.

    Parameters
    ----------
    value
        The value (``None`` is empty).
    limit
        The most characters shown (see :func:`gatestats.io.text.shorten`).

    Returns
    -------
    str
        HTML-escaped text with no invisible character.

    Examples
    --------
    >>> print(shown("case\\u2028<b>\\u200b"))
    case\\u2028&lt;b&gt;\\u200b
    """
    return e(visible("" if value is None else value, limit=limit))


def words(text: Any) -> str:
    """The verdict's tokens in a sentence as words.

    Parameters
    ----------
    text
        A reason or label from the verdict; ``None`` reads as empty, anything else as its ``str``.

    Returns
    -------
    str
        The text with tokens such as ``insufficient_evidence`` written as words, and its invisible
        characters shown as the terminal shows a reason (:func:`gatestats.io.text.visible`, up to
        ``TEXT_LIMIT`` characters; ids inside a reason are data).

    Examples
    --------
    >>> words("warn-only rule (insufficient_evidence): 9 cases")
    'warn-only rule (insufficient evidence): 9 cases'
    >>> words("cost ratio 'candidate'/'baseline': baseline 'baseline': e 1.53e-05")
    'cost ratio candidate/baseline: baseline: e 0.0000153'
    """
    out = _TOKEN_RE.sub(lambda m: _TOKENS[m[1]], "" if text is None else str(text))
    out = _SIDE_LABEL.sub(r"\1", out.replace(_RATIO_LABELS, "candidate/baseline"))
    return visible(_EXPONENT.sub(lambda m: number(float(m[0]), 3), out), limit=TEXT_LIMIT)  # the terminal's rule


def number(value: float | None, digits: int = 4) -> str:
    """A number with ``digits`` significant digits in plain decimals (``—`` when missing).

    Parameters
    ----------
    value
        The number, or ``None``.
    digits
        Significant digits.

    Returns
    -------
    str
        The number as text (a true minus sign for negatives).

    Examples
    --------
    >>> number(0.805555), number(-0.05), number(1.0), number(0.0000123), number(None)
    ('0.8056', '−0.05', '1', '0.0000123', '—')
    """
    if value is None or not math.isfinite(value):
        return NONE
    text = _plain(value, digits)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text.replace("-", _MINUS)


def rate(value: float | None) -> str:
    """An estimate, rate, difference or interval end with three decimals (``—`` when missing).

    Parameters
    ----------
    value
        The number, or ``None``.

    Returns
    -------
    str
        The number as text (a true minus sign for negatives).

    Examples
    --------
    >>> rate(0.7777), rate(-0.06268), rate(1.0), rate(None)
    ('0.778', '−0.063', '1.000', '—')
    """
    if value is None or not math.isfinite(value):
        return NONE
    return f"{value:.3f}".replace("-", _MINUS)


def side_system(side: str, system: object) -> str:
    """A side and its system label, the label left out when it is the side's own name (plain text).

    Parameters
    ----------
    side
        ``baseline`` or ``candidate``.
    system
        The side's system label in its records.

    Returns
    -------
    str
        ``candidate gpt-4o-2024-11`` or, for a system labelled ``candidate``, ``candidate``.

    Examples
    --------
    >>> side_system("candidate", "candidate"), side_system("baseline", "released")
    ('candidate', 'baseline released')
    """
    return side if system in (None, "", side) else f"{side} {system}"


def _plain(value: float, digits: int) -> str:
    """``value`` rounded to ``digits`` significant digits, written without an exponent."""
    if value == 0:
        return "0"
    rounded = float(f"{value:.{digits}g}")
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:.{decimals}f}"


def usd(value: float | None) -> str:
    """US dollars in plain decimals: cents from one dollar, three significant digits below.

    Parameters
    ----------
    value
        An amount in US dollars, or ``None``.

    Returns
    -------
    str
        The amount as text.

    Examples
    --------
    >>> usd(1.453e-05), usd(0.0002836), usd(0.025), usd(2.5), usd(1234.5), usd(0.0), usd(None)
    ('$0.0000145', '$0.000284', '$0.0250', '$2.50', '$1,234.50', '$0', '—')
    """
    if value is None or not math.isfinite(value):
        return NONE
    sign = _MINUS if value < 0 else ""
    size = abs(value)
    if size == 0:
        return "$0"
    if size >= 0.995:
        return f"{sign}${size:,.2f}"
    return f"{sign}${_plain(size, 3)}"


def duration(hours: float | None) -> str:
    """A duration given in hours, in seconds, minutes or hours (whichever keeps it readable).

    Parameters
    ----------
    hours
        A duration in hours, or ``None``.

    Returns
    -------
    str
        The duration with its unit.

    Examples
    --------
    >>> duration(0.0000139), duration(0.0125), duration(0.075), duration(2.345), duration(0.0), duration(None)
    ('0.05 s', '45.0 s', '4.5 min', '2.35 h', '0 s', '—')
    """
    if hours is None or not math.isfinite(hours):
        return NONE
    seconds = hours * 3600
    if seconds == 0:
        return "0 s"
    if seconds < 1:
        return f"{number(seconds, 2)} s"
    if seconds < 59.95:
        return f"{seconds:.1f} s"
    if seconds < 3597:
        return f"{seconds / 60:.1f} min"
    return f"{hours:,.2f} h"


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the digits in ``text`` as numbers (``case-2`` before ``case-11``).

    Parameters
    ----------
    text
        A case id or label.

    Returns
    -------
    tuple
        Runs of digits as ``(0, number)``, other runs as ``(1, text)``.

    Examples
    --------
    >>> sorted(["case-29", "case-11", "case-5", "case-1"], key=natural_key)
    ['case-1', 'case-5', 'case-11', 'case-29']
    """
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(text) if part)


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` (thousands separated) and the noun in the number it takes (``1 case``, ``28,010 cases``).

    Parameters
    ----------
    count
        How many.
    noun
        The singular.
    many
        The plural when it is not ``noun + "s"``.

    Returns
    -------
    str
        The count and the noun.

    Examples
    --------
    >>> plural(1, "case"), plural(4, "case"), plural(0, "severe slice"), plural(2, "class", "classes")
    ('1 case', '4 cases', '0 severe slices', '2 classes')
    >>> plural(28010, "case")
    '28,010 cases'
    """
    return f"{count:,} {noun if count == 1 else (many or noun + 's')}"


def short_case_id(case: str) -> str:
    """A case label without its ``@version`` (``case-01@sha256:…`` → ``case-01``).

    Parameters
    ----------
    case
        A case label (``case_id@version`` or ``case_id``).

    Returns
    -------
    str
        The case id.

    Examples
    --------
    >>> short_case_id("static-path-traversal@sha256:7263842c"), short_case_id("case-01")
    ('static-path-traversal', 'case-01')
    """
    return case.split("@", 1)[0]


def case_html(case: str, *, ambiguous: bool = False) -> str:
    """A case id as short ``<code>`` with the full id (and version) in its ``title``.

    ``ambiguous``: the short id names more than one version on the page, so the first 12
    characters of the version are kept after ``@``.

    Parameters
    ----------
    case
        A case label (``case_id@version`` or ``case_id``).
    ambiguous
        Whether the short id names more than one version on the page.

    Returns
    -------
    str
        The ``<code>`` element.
    """
    short = short_case_id(case)
    if ambiguous and "@" in case:
        short = f"{short}@{case.split('@', 1)[1][:12]}…"
    return f'<code class="gs-case" title="{shown(case, limit=TEXT_LIMIT)}">{shown(short)}</code>'


def threshold_text(row: Mapping[str, Any]) -> str:
    """A rule row's threshold saying what it compares.

    Parameters
    ----------
    row
        A rule row of the verdict (``kind``, ``threshold``).

    Returns
    -------
    str
        The threshold, with what it is compared to for paired and cost-increase rows.

    Examples
    --------
    >>> threshold_text({"kind": "paired", "threshold": -0.05})
    '−0.05 vs baseline (difference)'
    >>> threshold_text({"kind": "cost_increase", "threshold": 1.15})
    '≤ 1.15 × baseline (ratio)'
    >>> threshold_text({"kind": "threshold", "threshold": 0.5})
    '0.5'
    """
    value = row.get("threshold")
    if value is None:
        return NONE
    kind = row.get("kind")
    if kind == "paired":
        sign = "+" if value > 0 else ""
        return f"{sign}{number(value)} vs baseline (difference)"
    if kind == "cost_increase":
        return f"≤ {number(value)} × baseline (ratio)"
    if kind == "cost_threshold":
        return f"≤ {usd(value)}"
    return number(value)
