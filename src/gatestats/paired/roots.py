r"""Brent's root finder in plain double arithmetic, step for step the one ``scipy.optimize.brentq`` runs.

The score intervals (:mod:`gatestats.paired.intervals`) find where a score statistic crosses
:math:`\pm z` with Brent's method (Brent 1973, ch. 4). scipy's ``brentq`` is that method in C
(Charles Harris' version: inverse quadratic extrapolation from the last two iterates and the
bracket end, linear interpolation after the bracket flips, bisection when a step is not short
enough), in IEEE double arithmetic only. :func:`brent_root` makes the same arithmetic operations in
the same order, in Python floats (also IEEE doubles), so for the same function it visits the same
points and returns the same float, to the last bit: ``tests/paired/test_roots.py`` compares the two
on the score intervals of many tables and on other functions. Importing ``scipy.optimize`` only for
this cost ``compare``, ``rank`` and ``calibrate`` ~0.5 s of start-up (issue 28 item 2).

At each step, with the root bracketed by the current iterate :math:`x` and the end :math:`x_b`
(:math:`|f(x)| \le |f(x_b)|`), the tolerance is :math:`\delta = (\text{xtol} + \text{rtol}\,|x|)/2`;
the search stops when :math:`f(x) = 0` or :math:`|x_b - x|/2 < \delta`. A step shorter than
:math:`\delta` is replaced by :math:`\pm\delta` toward :math:`x_b`.

References
----------
Brent, R. P. (1973). Algorithms for Minimization without Derivatives. Prentice-Hall, ch. 4.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Final

__all__ = ["DEFAULT_RTOL", "brent_root"]

#: scipy's smallest (and default) relative tolerance: four times the machine epsilon.
DEFAULT_RTOL: Final = 4 * sys.float_info.epsilon
_MAX_ITERATIONS: Final = 100


def brent_root(
    f: Callable[[float], float],
    low: float,
    high: float,
    *,
    xtol: float = 2e-12,
    rtol: float = DEFAULT_RTOL,
    max_iterations: int = _MAX_ITERATIONS,
) -> float:
    """The root of ``f`` in [low, high], where ``f`` changes sign, by Brent's method.

    Parameters
    ----------
    f
        The function (float to float).
    low, high
        The bracket's ends: ``f(low)`` and ``f(high)`` of opposite signs (or one of them 0).
    xtol, rtol
        The absolute and relative tolerance (scipy's defaults).
    max_iterations
        The most steps (scipy's default, 100).

    Returns
    -------
    float
        The root, as ``scipy.optimize.brentq(f, low, high, xtol=xtol, rtol=rtol)`` returns it.

    Raises
    ------
    ValueError
        ``f`` has the same sign at both ends.
    RuntimeError
        No convergence within ``max_iterations`` steps.

    Examples
    --------
    The default ``xtol`` (2e-12) stops short of the last bits, as scipy's does:

    >>> brent_root(lambda x: x * x - 2.0, 0.0, 2.0)
    1.4142135623731364
    """
    x_prev, x_cur = float(low), float(high)
    f_prev, f_cur = float(f(x_prev)), float(f(x_cur))
    if f_prev * f_cur > 0:
        msg = (
            f"f must have different signs at the bracket's ends (f({x_prev!r}) = {f_prev!r}, f({x_cur!r}) = {f_cur!r})"
        )
        raise ValueError(msg)
    if f_prev == 0:
        return x_prev
    if f_cur == 0:
        return x_cur
    x_end = f_end = step_prev = step = 0.0
    for _ in range(max_iterations):
        if f_prev * f_cur < 0:  # the bracket's far end is the previous iterate
            x_end, f_end = x_prev, f_prev
            step_prev = step = x_cur - x_prev
        if abs(f_end) < abs(f_cur):  # keep the smaller |f| as the current iterate
            x_prev, x_cur, x_end = x_cur, x_end, x_cur
            f_prev, f_cur, f_end = f_cur, f_end, f_cur
        tolerance = (xtol + rtol * abs(x_cur)) / 2
        half = (x_end - x_cur) / 2
        if f_cur == 0 or abs(half) < tolerance:
            return x_cur
        step_prev, step = _next_step(x_prev, x_cur, x_end, f_prev, f_cur, f_end, step_prev, step, half, tolerance)
        x_prev, f_prev = x_cur, f_cur
        x_cur += step if abs(step) > tolerance else (tolerance if half > 0 else -tolerance)
        f_cur = float(f(x_cur))
    msg = f"Brent's method did not converge in {max_iterations} steps (last iterate {x_cur!r})"
    raise RuntimeError(msg)


def _next_step(
    x_prev: float,
    x_cur: float,
    x_end: float,
    f_prev: float,
    f_cur: float,
    f_end: float,
    step_prev: float,
    step: float,
    half: float,
    tolerance: float,
) -> tuple[float, float]:
    """(the step before, the step) of Brent's method: an interpolation if it is short enough, else bisection."""
    if abs(step_prev) > tolerance and abs(f_cur) < abs(f_prev):
        if x_prev == x_end:  # secant (linear interpolation)
            trial = -f_cur * (x_cur - x_prev) / (f_cur - f_prev)
        else:  # inverse quadratic extrapolation
            slope_prev = (f_prev - f_cur) / (x_prev - x_cur)
            slope_end = (f_end - f_cur) / (x_end - x_cur)
            trial = -f_cur * (f_end * slope_end - f_prev * slope_prev) / (slope_end * slope_prev * (f_end - f_prev))
        if 2 * abs(trial) < min(abs(step_prev), 3 * abs(half) - tolerance):
            return step, trial
    return half, half
