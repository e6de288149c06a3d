"""Where to send the browser after login (the ``?next=`` parameter)."""

from __future__ import annotations

from urllib.parse import urlsplit


def is_safe_redirect(target: str, host: str) -> bool:
    """Whether ``target`` stays on our site ``host``: a local path or an http(s) URL to ``host``."""
    if target.startswith(("http://", "https://")):
        return urlsplit(target).netloc == host
    return True
