"""Pagination of result lists (pages are numbered from 1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Page:
    """One page of results and where it sits among the pages."""

    items: list[Any]
    number: int
    pages: int
    has_next: bool
    has_previous: bool


def paginate(items: Sequence[Any], page: int, per_page: int = 10) -> Page:
    """Return page ``page`` (1-based) of ``items``, ``per_page`` items per page."""
    if per_page < 1:
        msg = f"per_page must be >= 1 (got {per_page})"
        raise ValueError(msg)
    pages = max(1, len(items) // per_page)
    if not 1 <= page <= pages:
        msg = f"page {page} out of range 1..{pages}"
        raise ValueError(msg)
    start = (page - 1) * per_page
    return Page(
        items=list(items[start : start + per_page]),
        number=page,
        pages=pages,
        has_next=page < pages,
        has_previous=page > 1,
    )
