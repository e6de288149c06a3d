"""URL slugs of article titles."""

from __future__ import annotations

import re

__all__ = ["slugify"]

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def slugify(title: str) -> str:
    """The URL slug of ``title``: lower-case ASCII words joined by ``-``."""
    return _SEPARATORS.sub("-", title.lower()).strip("-")
