"""Compare semantic version strings such as ``1.4.2`` or ``v2.0.0-rc.1``."""

from __future__ import annotations


def _parts(version: str) -> list[str]:
    text = version.strip().removeprefix("v")
    core = text.split("+", 1)[0].split("-", 1)[0]
    return core.split(".")


def compare(a: str, b: str) -> int:
    """-1 if ``a`` is older than ``b``, 1 if newer, 0 if the same version."""
    left, right = _parts(a), _parts(b)
    return (left > right) - (left < right)


def is_newer(candidate: str, current: str) -> bool:
    """Whether ``candidate`` is a later release than ``current``."""
    return compare(candidate, current) > 0
