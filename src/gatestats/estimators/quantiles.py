r"""The normal and Student-t quantiles (and the normal CDF), the very floats scipy returns, mostly without scipy.

An interval at confidence level :math:`1 - \alpha` needs :math:`z_{1-\alpha/2}` (every method)
and, for the Wilson interval's degrees-of-freedom factor, :math:`t_{U-1,\,1-\alpha/2}`. Importing
``scipy.special`` for them costs more start-up than ``import polars`` itself (issue 28, item 2:
scipy's array-API layer imports ``numpy.f2py``, ``numpy.ma`` and ``numpy.testing``), so at the
common levels (:data:`COMMON_LEVELS`) they are read from stored values instead:

- :math:`z`: four constants;
- :math:`t`: a table of ``scipy.special.stdtrit(df, 0.5 + level / 2)`` for every ``df`` from 1 to
  :data:`T_TABLE_MAX_DF` (``t_quantiles.f64`` beside this module: little-endian float64, one row
  of :data:`T_TABLE_MAX_DF` values per level in the order of :data:`COMMON_LEVELS`). That covers
  every Wilson interval ``auto`` computes (below ``CLT_FROM_CASES`` units).

Both are scipy's own floats, compared bit for bit by ``tests/estimators/test_quantiles.py`` (and
written by ``benchmarks/make_t_quantiles.py``), so no interval moves by an ulp. Any other level,
a larger or non-integer ``df``, falls back to ``scipy.special`` itself, imported on first use.
Why a table for :math:`t` and not a formula: scipy's ``stdtrit`` is Boost's
``students_t_distribution`` quantile (an estimate refined by a Halley step through the incomplete
beta function); an independent formula, however accurate, differs from it in the last bits, and
the bounds of ``analyze --json`` and the verdicts are written to the last bit.
"""

from __future__ import annotations

import importlib
import operator
import struct
from functools import cache
from pathlib import Path
from statistics import NormalDist
from types import ModuleType
from typing import Final

__all__ = [
    "COMMON_LEVELS",
    "T_TABLE_MAX_DF",
    "norm_cdf",
    "norm_ppf",
    "norm_sf",
    "t_isf",
    "two_sided_t",
    "two_sided_z",
    "upper_z",
]

#: The confidence levels whose quantiles are stored (no scipy import there).
COMMON_LEVELS: Final[tuple[float, ...]] = (0.8, 0.9, 0.95, 0.99)
#: The largest degrees of freedom in the stored t table.
T_TABLE_MAX_DF: Final = 4999

#: ``scipy.special.ndtri(0.5 + level / 2)`` at the common levels, the very floats it returns.
_Z_AT: Final[dict[float, float]] = {
    0.8: 1.2815515655446004,
    0.9: 1.6448536269514722,
    0.95: 1.959963984540054,
    0.99: 2.5758293035489004,
}
#: ``scipy.stats.norm.isf(tail)`` at the tails of the common levels as the paired intervals compute them,
#: ``(1 - level) / 2`` (two-sided) and ``1 - level`` (one-sided): the very floats it returns (session 40).
_UPPER_Z_AT: Final[dict[float, float]] = {
    (1 - 0.8) / 2: 1.2815515655446004,
    (1 - 0.9) / 2: 1.6448536269514729,
    (1 - 0.95) / 2: 1.959963984540054,
    (1 - 0.99) / 2: 2.5758293035489004,
    1 - 0.8: 0.8416212335729143,
    1 - 0.9: 1.2815515655446004,
    1 - 0.95: 1.6448536269514722,
    1 - 0.99: 2.3263478740408408,
}
_STANDARD_NORMAL: Final = NormalDist()
_T_TABLE: Final = Path(__file__).with_name("t_quantiles.f64")
_FLOAT64: Final = struct.Struct("<d")


def _special() -> ModuleType:
    """``scipy.special``, imported on first use (~0.13-0.3 s of CPU that the common levels never pay)."""
    return importlib.import_module("scipy.special")


def two_sided_z(confidence_level: float) -> float:
    r"""The standard normal quantile :math:`z_{1-\alpha/2}` of a two-sided interval at ``confidence_level``.

    Equal to ``float(scipy.special.ndtri(0.5 + confidence_level / 2))`` to the last bit; scipy is
    imported only for a level outside :data:`COMMON_LEVELS`.

    Parameters
    ----------
    confidence_level
        In (0, 1) (the caller checks it).

    Returns
    -------
    float
        The quantile.

    Examples
    --------
    >>> two_sided_z(0.95)
    1.959963984540054
    """
    known = _Z_AT.get(confidence_level)
    return known if known is not None else float(_special().ndtri(0.5 + confidence_level / 2))


def upper_z(tail: float) -> float:
    r"""The standard normal quantile :math:`z_{1-\text{tail}}` (``scipy.stats.norm.isf(tail)``).

    At the tails of the common levels as the paired intervals write them (``(1 - level) / 2`` and
    ``1 - level``) it is scipy's own float, stored (``norm.isf((1 - 0.9) / 2)``, 1.6448536269514729,
    is not ``ndtri(0.5 + 0.9 / 2)``, 1.6448536269514722). Any other tail (a Holm-compatible
    interval at :math:`1 - \alpha/k`, an uncommon level) is ``-statistics.NormalDist().inv_cdf(tail)``
    (Wichura's AS241, no scipy): within 8.3e-16 relative of scipy's ``ndtri`` on 40,000 tails from
    1e-300 to 0.5, equal to it in 32 % of them (session 40; ``tests/paired/test_roots.py`` asserts 2e-15).

    Parameters
    ----------
    tail
        The upper-tail probability, in (0, 1).

    Returns
    -------
    float
        The quantile.

    Examples
    --------
    >>> upper_z((1 - 0.95) / 2)
    1.959963984540054
    """
    known = _UPPER_Z_AT.get(tail)
    return known if known is not None else -_STANDARD_NORMAL.inv_cdf(tail)


@cache
def _t_table() -> bytes:
    """The stored t table's bytes (160 KB), read once per process on first use (a file opened a call cost ~30 µs)."""
    return _T_TABLE.read_bytes()


def two_sided_t(df: int, confidence_level: float) -> float:
    r"""Student's t quantile :math:`t_{df,\,1-\alpha/2}` of a two-sided interval at ``confidence_level``.

    Equal to ``float(scipy.special.stdtrit(df, 0.5 + confidence_level / 2))`` to the last bit;
    scipy is imported only outside the stored table (a level outside :data:`COMMON_LEVELS`, or
    ``df`` above :data:`T_TABLE_MAX_DF`).

    Parameters
    ----------
    df
        Degrees of freedom, a positive integer.
    confidence_level
        The two-sided level, in (0, 1) (checked by the caller).

    Returns
    -------
    float
        :math:`t_{df,\,1-\alpha/2}`, positive.

    Raises
    ------
    ValueError
        ``df`` is not a positive integer.

    Examples
    --------
    >>> round(two_sided_t(49, 0.95), 6)
    2.009575
    """
    try:
        whole = operator.index(df)
    except TypeError:
        whole = None
    if whole is None or whole < 1:
        msg = f"df must be a positive integer (got {df!r})"
        raise ValueError(msg)
    if confidence_level in _Z_AT and whole <= T_TABLE_MAX_DF:
        row = COMMON_LEVELS.index(confidence_level)
        value: float = _FLOAT64.unpack_from(_t_table(), (row * T_TABLE_MAX_DF + whole - 1) * _FLOAT64.size)[0]
        return value
    return float(_special().stdtrit(whole, 0.5 + confidence_level / 2))


# scipy.stats' norm.ppf, norm.cdf, norm.sf and t.isf are scipy.special's ndtri, ndtr, ndtr(-x) and -stdtrit behind
# rv_continuous's argument checks and ``* scale + loc`` (30-60 us a call: a third of a paired bootstrap interval,
# four fifths of the Tango test's exact size table). The four below compute the same floats without them: ``* 1.0``
# is exact, ``+ 0.0`` turns -0.0 into 0.0 as scipy's ``+ loc`` does, ``(x - 0) / 1`` leaves ``x`` as it is
# (tests/paired/test_trials_quantiles.py compares them with scipy.stats bit for bit).
def norm_ppf(q: float) -> float:
    """``scipy.stats.norm.ppf(q)``, the same float, without its argument checks.

    Parameters
    ----------
    q
        The lower-tail probability, in [0, 1].

    Returns
    -------
    float
        The standard normal quantile.

    Examples
    --------
    >>> norm_ppf(0.975)
    1.959963984540054
    """
    return float(_special().ndtri(q)) + 0.0


def norm_cdf(x: float) -> float:
    """``scipy.stats.norm.cdf(x)``, the same float, without its argument checks.

    Parameters
    ----------
    x
        The point.

    Returns
    -------
    float
        :math:`\\Phi(x)`.

    Examples
    --------
    >>> norm_cdf(0.0)
    0.5
    """
    return float(_special().ndtr(x))


def norm_sf(x: float) -> float:
    """``scipy.stats.norm.sf(x)``, the same float (scipy's ``_norm_sf``: the CDF at ``-x``).

    Parameters
    ----------
    x
        The point.

    Returns
    -------
    float
        :math:`1 - \\Phi(x)`, computed as :math:`\\Phi(-x)`.

    Examples
    --------
    >>> norm_sf(0.0)
    0.5
    """
    return float(_special().ndtr(-x))


def t_isf(q: float, df: int) -> float:
    """``scipy.stats.t.isf(q, df)``, the same float, without its argument checks.

    Parameters
    ----------
    q
        The upper-tail probability, in (0, 1).
    df
        Degrees of freedom, at least 1.

    Returns
    -------
    float
        Student's t quantile with upper tail ``q``.

    Examples
    --------
    >>> round(t_isf(0.025, 49), 6)
    2.009575
    """
    return -float(_special().stdtrit(df, q)) + 0.0
