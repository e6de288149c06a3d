"""Merge configuration layers (defaults < file < environment)."""

from __future__ import annotations

import copy
from typing import Any


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """A new dict: ``base`` with ``override`` applied on top, nested dicts merged recursively.

    Neither input is modified; the result shares no mutable value with them.
    """
    merged: dict[str, Any] = {}
    for key in set(base) | set(override):
        if isinstance(base.get(key), dict) and isinstance(override.get(key), dict):
            merged[key] = deep_merge(base[key], override[key])
        elif key in override:
            merged[key] = copy.deepcopy(override[key])
        else:
            merged[key] = copy.deepcopy(base[key])
    return merged
