"""Map a request path under ``/static/`` to a file below the static root."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote


class ForbiddenError(Exception):
    """The request path points outside the static root (answered with 403)."""


def resolve_static(root: str | os.PathLike[str], url_path: str) -> Path:
    """The file that serves ``url_path`` (the part after ``/static/``, still percent-encoded).

    The path is decoded first, then resolved (``..`` and symbolic links included); anything that
    does not end up inside ``root`` raises :class:`ForbiddenError`.
    """
    base = Path(root).resolve()
    relative = unquote(url_path).replace("\\", "/").lstrip("/")
    target = (base / relative).resolve()
    if not target.is_relative_to(base):
        raise ForbiddenError(url_path)
    return target
