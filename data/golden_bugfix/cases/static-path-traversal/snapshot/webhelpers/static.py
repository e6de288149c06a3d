"""Map a request path under ``/static/`` to a file below the static root."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote


class ForbiddenError(Exception):
    """The request path points outside the static root (answered with 403)."""


def resolve_static(root: str | os.PathLike[str], url_path: str) -> Path:
    """The file that serves ``url_path`` (the part after ``/static/``, still percent-encoded)."""
    relative = unquote(url_path).lstrip("/")
    return Path(os.path.join(root, relative))
