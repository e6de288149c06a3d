"""Integer searches shared by the sample-size answers ("about N cases are needed")."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["fewest"]


def fewest(ok: Callable[[int], bool], start: int, *, limit: int) -> int | None:
    """Fewest ``m >= start`` with ``ok(m)``, for ``ok`` false below some size and true from it on.

    Doubles from ``max(start, 2)`` until ``ok`` holds, then bisects down to ``max(start, 1)``.

    Parameters
    ----------
    ok
        Whether ``m`` units suffice (monotone: once true, true for every larger ``m``).
    start
        The smallest size considered (the units already at hand).
    limit
        Give up (``None``) once the doubling passes this size.

    Returns
    -------
    int or None
        The fewest sufficient size, ``None`` when none up to ``limit`` suffices.

    Examples
    --------
    >>> fewest(lambda m: m * m >= 50, 1, limit=1000)
    8
    >>> fewest(lambda m: False, 1, limit=1000) is None
    True
    """
    hi = max(start, 2)
    while not ok(hi):
        hi *= 2
        if hi > limit:
            return None
    lo = max(start, 1)
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi
