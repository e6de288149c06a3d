"""Where to send the browser after login (the ``?next=`` parameter)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# Browsers drop these anywhere in a URL, so "/\t/evil.example" is "//evil.example" to them.
_STRIPPED_BY_BROWSERS = re.compile(r"[\t\n\r]")


def is_safe_redirect(target: str, host: str) -> bool:
    """Whether ``target`` stays on our site ``host``: a local path or an http(s) URL to ``host``."""
    cleaned = _STRIPPED_BY_BROWSERS.sub("", target).strip().replace("\\", "/")
    if not cleaned:
        return False
    parts = urlsplit(cleaned)
    if not parts.scheme:
        # A local path: anything with a network location ("//host") leaves the site.
        return not parts.netloc and cleaned.startswith("/") and not cleaned.startswith("//")
    if parts.scheme.lower() not in {"http", "https"}:
        return False
    if parts.username is not None or parts.password is not None:
        return False
    return (parts.hostname or "") == host.lower()
