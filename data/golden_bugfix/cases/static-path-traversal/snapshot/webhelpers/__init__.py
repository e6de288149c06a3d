"""Small helpers of the shop's web front end."""

from webhelpers.redirects import is_safe_redirect
from webhelpers.static import ForbiddenError, resolve_static

__all__ = ["ForbiddenError", "is_safe_redirect", "resolve_static"]
