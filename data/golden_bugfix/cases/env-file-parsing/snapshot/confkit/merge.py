"""Merge configuration layers (defaults < file < environment)."""

from __future__ import annotations

from typing import Any


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``base`` with the settings of ``override`` applied on top."""
    merged = base
    merged.update(override)
    return merged
