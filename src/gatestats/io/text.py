"""Data shown to people: one line, invisible characters made visible, bounded length.

Case ids, system labels, policy, rule and slice names come from files that anyone can write. Before
they reach a terminal, a Markdown summary or a JUnit file they pass through :func:`visible`: line
breaks (``\\n``, ``\\r``, U+2028, U+2029), control characters (C0, DEL, C1), format characters
(zero-width, bidirectional overrides), lone surrogates, private-use characters and U+FFFE/U+FFFF are
shown as ``\\n``, ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``, and long values are shortened with a count of
what was left out. The machine-readable files (records, the verdict JSON) keep the values whole.
"""

from __future__ import annotations

import unicodedata

__all__ = ["LABEL_LIMIT", "TEXT_LIMIT", "shorten", "visible"]

LABEL_LIMIT = 200
"""Longest id, label or name shown whole; longer ones are shortened."""
TEXT_LIMIT = 2000
"""Longest reason or detail shown whole."""
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shorten(text: object, limit: int = LABEL_LIMIT) -> str:
    """``str(text)`` cut to ``limit`` characters, saying how many were left out.

    Parameters
    ----------
    text
        The value shown.
    limit
        The most characters kept.

    Returns
    -------
    str
        The text, or its first ``limit`` characters and how many were left out.

    Examples
    --------
    >>> shorten("abcdef", 3)
    'abc… (+3 characters)'
    """
    value = str(text)
    if len(value) <= limit:
        return value
    return f"{value[:limit]}… (+{len(value) - limit} characters)"


def visible(text: object, *, keep: str = "", limit: int = LABEL_LIMIT) -> str:
    """``text`` shortened to ``limit`` characters, with line breaks and invisible characters escaped.

    Characters in ``keep`` (e.g. ``"\\n\\t"`` for a multi-line message) are left as they are.

    Parameters
    ----------
    text
        The value shown.
    keep
        Characters left as they are.
    limit
        The most characters kept (see :func:`shorten`).

    Returns
    -------
    str
        One line a terminal, Markdown or XML shows as it is.

    Examples
    --------
    >>> print(visible("a\\nb\\x00c\\u2028d\\u202ee"))
    a\\nb\\x00c\\u2028d\\u202ee
    """
    out: list[str] = []
    for ch in shorten(text, limit):
        code = ord(ch)
        if ch in keep:
            out.append(ch)
        elif ch in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[ch])
        elif unicodedata.category(ch) in _HIDDEN_CATEGORIES or code in (0xFFFE, 0xFFFF):
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)
