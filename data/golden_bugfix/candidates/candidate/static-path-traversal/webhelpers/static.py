"""Map a request path under ``/static/`` to a file below the static root."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote


class ForbiddenError(Exception):
    """The request path points outside the static root (answered with 403)."""


def _segments(url_path: str) -> list[str]:
    """The path's segments without empty and ``.`` ones; a ``..`` segment is refused outright."""
    segments = [s for s in url_path.replace("\\", "/").split("/") if s not in {"", "."}]
    if ".." in segments:
        raise ForbiddenError(url_path)
    return segments


def resolve_static(root: str | os.PathLike[str], url_path: str) -> Path:
    """The file that serves ``url_path`` (the part after ``/static/``, still percent-encoded).

    The path is not resolved, so that deploys may keep symbolic links to versioned asset
    directories inside the static root; refusing ``..`` segments keeps requests inside it.
    """
    return Path(root).joinpath(*(unquote(segment) for segment in _segments(url_path)))
