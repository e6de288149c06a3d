"""Split a result list into numbered pages."""

from listing.pagination import Page, paginate

__all__ = ["Page", "paginate"]
