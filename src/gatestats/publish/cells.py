"""The texts of published table cells: one convention for every table gatestats prints.

- an estimate with its interval in one cell: ``0.512 [0.468, 0.556]`` (:func:`estimate_cell`);
- counts beside rates: ``256/500`` (:func:`count_cell`), ``0.512 (256/500)`` (:func:`rate_cell`);
- money (USD) and hours: :func:`money_cell`, :func:`hours_cell` (``≥`` before a sum with unknown parts),
  bounds on money with their interval (:func:`money_bounds_cell`);
- p-values at a stated precision, and below it ``< 0.0001``, never ``0.0000`` (:func:`pvalue_cell`);
- a significance mark (``*``) where the p-value that decides is at most α, and the legend that
  says which p-value, which α and which correction (:func:`mark`, :func:`significance_legend`).

Cells are plain text (ASCII apart from the dash of a missing value, the ``≥`` of a lower bound and
the ``–`` between two bounds); each format escapes them (:mod:`gatestats.publish.formats`).
``None`` is shown as :data:`MISSING`, never as 0.
"""

from __future__ import annotations

import math

__all__ = [
    "MISSING",
    "SIGNIFICANCE_MARK",
    "count_cell",
    "estimate_cell",
    "hours_cell",
    "mark",
    "money_bounds_cell",
    "money_cell",
    "number_cell",
    "pvalue_cell",
    "rate_cell",
    "significance_legend",
]

#: A value that does not exist (no interval, no p-value): shown, never as 0.
MISSING = "—"
#: The mark beside a p-value at most α.
SIGNIFICANCE_MARK = "*"


def number_cell(value: float | None, digits: int = 3, *, signed: bool = False) -> str:
    """``value`` at ``digits`` decimals (``+`` before a positive one when ``signed``); :data:`MISSING` for None/NaN.

    Parameters
    ----------
    value
        The number.
    digits
        Decimals shown.
    signed
        Show the sign of a positive number (differences).

    Returns
    -------
    str
        The cell; ``-0.000`` is shown as ``0.000``.

    Examples
    --------
    >>> number_cell(0.51249), number_cell(-0.00001, signed=True), number_cell(None)
    ('0.512', '0.000', '—')
    """
    if value is None or math.isnan(value):
        return MISSING
    if math.isinf(value):
        return ("+" if signed and value > 0 else "") + ("inf" if value > 0 else "-inf")
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    if float(text) == 0:
        return f"{0:.{digits}f}"
    return text


def estimate_cell(
    estimate: float | None, low: float | None, high: float | None, digits: int = 3, *, signed: bool = False
) -> str:
    """The estimate with its interval in one cell: ``0.512 [0.468, 0.556]``; the estimate alone without one.

    Parameters
    ----------
    estimate, low, high
        The estimate and the interval's ends (``None``: no interval).
    digits
        Decimals shown.
    signed
        Show the sign of a positive estimate (differences).

    Returns
    -------
    str
        The cell.

    Examples
    --------
    >>> estimate_cell(0.0625, -0.01, 0.13, signed=True)
    '+0.062 [-0.010, 0.130]'
    """
    text = number_cell(estimate, digits, signed=signed)
    if low is None or high is None or estimate is None:
        return text
    return f"{text} [{number_cell(low, digits)}, {number_cell(high, digits)}]"


def money_cell(value: float | None, missing: int = 0) -> str:
    """An amount of USD: thousands separated and 2 decimals from 100 up, 4 significant digits below.

    ``≥`` before it when ``missing`` parts of the sum are unknown (the known part: a lower bound),
    as :func:`hours_cell` does.

    Parameters
    ----------
    value
        The amount (None: :data:`MISSING`).
    missing
        How many parts of the sum are missing (0: the sum is complete).

    Returns
    -------
    str
        The cell.

    Examples
    --------
    >>> money_cell(1234.5), money_cell(0.012345), money_cell(0.5031, missing=5), money_cell(None)
    ('1,234.50', '0.01235', '≥0.5031', '—')
    """
    if value is None:
        return MISSING
    return ("≥" if missing else "") + (f"{value:,.2f}" if abs(value) >= 100 else f"{value:.4g}")


def money_bounds_cell(low: float | None, high: float | None, ci_low: float | None, ci_high: float | None) -> str:
    """Bounds on an amount of USD with the interval of the bounds: ``0.00599–0.006348 [0.004539, 0.00868]``.

    Parameters
    ----------
    low, high
        The bounds (either None: :data:`MISSING`, there are none).
    ci_low, ci_high
        The interval of the bounds (either None: ``[no interval]``).

    Returns
    -------
    str
        The cell.

    Examples
    --------
    >>> money_bounds_cell(0.00599, 0.0063478, 0.0045391, 0.0086813)
    '0.00599–0.006348 [0.004539, 0.008681]'
    >>> money_bounds_cell(1.0, 2.5, None, 3.0), money_bounds_cell(None, 2.5, 1.0, 3.0)
    ('1–2.5 [no interval]', '—')
    """
    if low is None or high is None:
        return MISSING
    bounds = f"{money_cell(low)}–{money_cell(high)}"
    if ci_low is None or ci_high is None:
        return f"{bounds} [no interval]"
    return f"{bounds} [{money_cell(ci_low)}, {money_cell(ci_high)}]"


def hours_cell(value: float | None, missing: int = 0) -> str:
    """Hours at 2 decimals, ``≥`` before them when ``missing`` parts were left out (a lower bound).

    Parameters
    ----------
    value
        The hours (None: :data:`MISSING`).
    missing
        How many parts of the sum are missing (0: the sum is complete).

    Returns
    -------
    str
        The cell.

    Examples
    --------
    >>> hours_cell(1.5), hours_cell(1.5, missing=2), hours_cell(None)
    ('1.50', '≥1.50', '—')
    """
    return MISSING if value is None else ("≥" if missing else "") + f"{value:.2f}"


def count_cell(count: int | None, total: int | None) -> str:
    """``count/total`` (``256/500``); :data:`MISSING` when either is unknown.

    Parameters
    ----------
    count, total
        The count and what it is out of.

    Returns
    -------
    str
        The cell.

    Examples
    --------
    >>> count_cell(256, 500)
    '256/500'
    """
    if count is None or total is None:
        return MISSING
    return f"{count}/{total}"


def rate_cell(count: int | None, total: int | None, digits: int = 3) -> str:
    """A rate with its counts beside it: ``0.512 (256/500)``.

    Parameters
    ----------
    count, total
        The count and what it is out of (a rate of 0/0 is shown as :data:`MISSING`).
    digits
        Decimals of the rate.

    Returns
    -------
    str
        The cell.

    Examples
    --------
    >>> rate_cell(256, 500), rate_cell(0, 0)
    ('0.512 (256/500)', '— (0/0)')
    """
    if count is None or total is None:
        return MISSING
    rate = count / total if total > 0 else None
    return f"{number_cell(rate, digits)} ({count}/{total})"


def pvalue_cell(value: float | None, digits: int = 4) -> str:
    """A p-value at ``digits`` decimals; below the shown precision ``< 0.0001`` (never ``0.0000``).

    Parameters
    ----------
    value
        The p-value in [0, 1], or None (no p-value: :data:`MISSING`).
    digits
        Decimals shown (at least 1).

    Returns
    -------
    str
        The cell.

    Examples
    --------
    >>> pvalue_cell(0.0187), pvalue_cell(0.00004), pvalue_cell(0.00005), pvalue_cell(1.0)
    ('0.0187', '< 0.0001', '< 0.0001', '1.0000')
    """
    if value is None or math.isnan(value):
        return MISSING
    floor = 10.0**-digits
    if value < floor:
        return f"< {floor:.{digits}f}"
    text = f"{value:.{digits}f}"
    if float(text) == 0:  # pragma: no cover - value >= floor rounds to at least floor
        return f"< {floor:.{digits}f}"
    return text


def mark(pvalue: float | None, alpha: float) -> str:
    """:data:`SIGNIFICANCE_MARK` when ``pvalue`` is at most ``alpha``, else empty (also without a p-value).

    Parameters
    ----------
    pvalue
        The p-value that decides (adjusted, in a family).
    alpha
        The level.

    Returns
    -------
    str
        The mark or ``""``.

    Examples
    --------
    >>> mark(0.01, 0.05), mark(0.05, 0.05), mark(0.2, 0.05), mark(None, 0.05)
    ('*', '*', '', '')
    """
    return SIGNIFICANCE_MARK if pvalue is not None and pvalue <= alpha else ""


def significance_legend(alpha: float, *, pvalue: str) -> str:
    """The legend of the mark: what it marks, at which α, by which p-value.

    Parameters
    ----------
    alpha
        The level.
    pvalue
        The p-value that decides, as its column is headed (``p adjusted (holm, mid-p)``).

    Returns
    -------
    str
        e.g. ``* : p adjusted (holm, mid-p) <= 0.05``.

    Examples
    --------
    >>> significance_legend(0.05, pvalue="p (exact)")
    '* : p (exact) <= 0.05'
    """
    return f"{SIGNIFICANCE_MARK} : {pvalue} <= {alpha:g}"
