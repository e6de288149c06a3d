"""URL slugs of article titles."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["slugify"]

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def slugify(title: str) -> str:
    """The URL slug of ``title``: lower-case ASCII words joined by ``-`` (``"untitled"`` if none).

    Letters are case-folded and decomposed (NFKD); combining marks and characters without an
    ASCII form are dropped.
    """
    decomposed = unicodedata.normalize("NFKD", title.casefold())
    ascii_text = decomposed.encode("ascii", "ignore").decode("ascii")
    return _SEPARATORS.sub("-", ascii_text).strip("-") or "untitled"
