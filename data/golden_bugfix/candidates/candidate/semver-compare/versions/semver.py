"""Compare semantic version strings such as ``1.4.2`` or ``v2.0.0-rc.1``.

Precedence follows Semantic Versioning 2.0.0, section 11.
"""

from __future__ import annotations

import re
from typing import Any

_SEMVER = re.compile(
    r"^v?(?P<major>0|[1-9]\d*)\.(?P<minor>0|[1-9]\d*)\.(?P<patch>0|[1-9]\d*)"
    r"(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)


def _parse(version: str) -> tuple[tuple[int, int, int], list[str]]:
    match = _SEMVER.match(version.strip())
    if match is None:
        msg = f"not a semantic version: {version!r}"
        raise ValueError(msg)
    core = (int(match["major"]), int(match["minor"]), int(match["patch"]))
    return core, match["pre"].split(".") if match["pre"] else []


def _cmp(a: Any, b: Any) -> int:
    return int(a > b) - int(a < b)


def _compare_prerelease(left: list[str], right: list[str]) -> int:
    if not left or not right:
        # No pre-release is the release itself, which follows every pre-release.
        return _cmp(not left, not right)
    for a, b in zip(left, right, strict=False):
        if a == b:
            continue
        if a.isdigit() and b.isdigit():
            return _cmp(int(a), int(b))
        if a.isdigit() != b.isdigit():
            return -1 if a.isdigit() else 1
        return _cmp(a, b)
    return _cmp(len(left), len(right))


def compare(a: str, b: str) -> int:
    """-1 if ``a`` is older than ``b``, 1 if newer, 0 if the same version."""
    (core_a, pre_a), (core_b, pre_b) = _parse(a), _parse(b)
    return _cmp(core_a, core_b) or _compare_prerelease(pre_a, pre_b)


def is_newer(candidate: str, current: str) -> bool:
    """Whether ``candidate`` is a later release than ``current``."""
    return compare(candidate, current) > 0
