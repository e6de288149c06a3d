"""``result.group(...)``, ``result.system(...)``, ``result.effect(...)``: one lookup by key."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["find_by_key"]

T = TypeVar("T")


def find_by_key(items: Sequence[T], key: Callable[[T], object], wanted: object, label: str) -> T:
    """The first of ``items`` whose ``key`` equals ``wanted``.

    Parameters
    ----------
    items
        The results to search.
    key
        What identifies a result (its term, system or group values).
    wanted
        The key asked for.
    label
        What was asked for in the message, e.g. ``system 'a'``.

    Returns
    -------
    T
        The first match.

    Raises
    ------
    KeyError
        No item matches; the message lists the keys there are.
    """
    for item in items:
        if key(item) == wanted:
            return item
    msg = f"no {label} (got {[key(item) for item in items]})"
    raise KeyError(msg)
