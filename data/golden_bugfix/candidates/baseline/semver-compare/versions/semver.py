"""Compare semantic version strings such as ``1.4.2`` or ``v2.0.0-rc.1`` (SemVer 2.0.0 precedence)."""

from __future__ import annotations


def _identifier_key(identifier: str) -> tuple[int, int, str]:
    # Numeric identifiers compare as numbers and sort before alphanumeric ones (SemVer 11.4.1-3).
    if identifier.isdigit():
        return (0, int(identifier), "")
    return (1, 0, identifier)


def _key(version: str) -> tuple[tuple[int, ...], int, tuple[tuple[int, int, str], ...]]:
    text = version.strip().removeprefix("v").split("+", 1)[0]
    core, _, prerelease = text.partition("-")
    numbers = tuple(int(part) for part in core.split("."))
    if not prerelease:
        return (numbers, 1, ())  # a release sorts after all of its pre-releases
    return (numbers, 0, tuple(_identifier_key(p) for p in prerelease.split(".")))


def compare(a: str, b: str) -> int:
    """-1 if ``a`` is older than ``b``, 1 if newer, 0 if the same version."""
    left, right = _key(a), _key(b)
    return (left > right) - (left < right)


def is_newer(candidate: str, current: str) -> bool:
    """Whether ``candidate`` is a later release than ``current``."""
    return compare(candidate, current) > 0
