"""``--map FIELD=COLUMN,...``: the one parser of column mappings (importers, judge inputs)."""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["parse_field_mapping"]


def parse_field_mapping(text: str, allowed: Collection[str], *, noun: str = "field") -> dict[str, str]:
    """Parse ``field=COLUMN,field=COLUMN`` into a dict; reject unknown, repeated or malformed items.

    Parameters
    ----------
    text
        The mapping as the command line gives it (blanks around items and ``=`` ignored).
    allowed
        The fields that may be mapped.
    noun
        What the fields are called in error messages (e.g. ``record field``).

    Returns
    -------
    dict of str to str
        Field -> column, in the order given.

    Raises
    ------
    ValueError
        An item is not ``FIELD=COLUMN``, or a field is unknown or mapped twice.

    Examples
    --------
    >>> parse_field_mapping("case_id=task, outcome=ok", ["case_id", "outcome"])
    {'case_id': 'task', 'outcome': 'ok'}
    """
    mapping: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        field, sep, column = (piece.strip() for piece in item.partition("="))
        if not sep or not field or not column:
            msg = f"--map: expected FIELD=COLUMN (got {item!r})"
            raise ValueError(msg)
        if field not in allowed:
            msg = f"--map: unknown {noun} {field!r} (mappable: {', '.join(allowed)})"
            raise ValueError(msg)
        if field in mapping:
            msg = f"--map: field {field!r} is mapped twice"
            raise ValueError(msg)
        mapping[field] = column
    return mapping
