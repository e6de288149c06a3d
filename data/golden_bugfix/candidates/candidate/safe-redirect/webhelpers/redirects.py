"""Where to send the browser after login (the ``?next=`` parameter)."""

from __future__ import annotations

from urllib.parse import urlsplit

_ALLOWED_SCHEMES = frozenset({"http", "https"})


def _as_browser_reads_it(target: str) -> str:
    # Browsers strip tabs and newlines and treat "\" like "/" in http(s) URLs.
    return "".join(ch for ch in target if ch not in "\t\r\n").strip().replace("\\", "/")


def is_safe_redirect(target: str, host: str) -> bool:
    """Whether ``target`` stays on our site ``host``: a local path or an http(s) URL to ``host``."""
    url = _as_browser_reads_it(target)
    if not url:
        return False
    if url.startswith("/"):
        return not url.startswith("//")
    parts = urlsplit(url)
    return (
        parts.scheme.lower() in _ALLOWED_SCHEMES
        and "@" not in parts.netloc
        and parts.hostname is not None
        and parts.hostname == host.lower()
    )
