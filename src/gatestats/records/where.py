"""Record filters: ``--where`` as a strict boolean SQL predicate over the record fields (polars' SQL).

The expression is parsed once by :func:`polars.sql_expr` (no hand-written parser) after a lexical
check that keeps it a predicate: single-quoted strings, bare field names of the record contract,
comparison and boolean operators, ``IN``, ``BETWEEN``, ``LIKE``, ``IS [NOT] NULL`` and the functions of
:data:`ALLOWED_FUNCTIONS`. Refused: unknown fields (named, with the list of fields), a projection or
anything not Boolean, aggregates, windows and subqueries, quoted identifiers, control characters and
expressions over :data:`WHERE_LIMIT` characters. A filter applies to records (attempts) and must keep
whole trials: every attempt of a trial or none (:func:`apply_where`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from gatestats.records.contract import POLARS_SCHEMA
from gatestats.vocabulary import TRIAL_KEY

__all__ = [
    "ALLOWED_FUNCTIONS",
    "WHERE_LIMIT",
    "WhereError",
    "WhereResult",
    "apply_where",
    "record_filter",
    "where_columns",
]

#: The longest ``--where`` expression accepted, in characters.
WHERE_LIMIT = 4096
#: The SQL functions a filter may call (lower-case); any other name followed by ``(`` is refused.
ALLOWED_FUNCTIONS: frozenset[str] = frozenset(
    {"array_contains", "array_length", "lower", "upper", "length", "starts_with", "ends_with", "coalesce", "abs"}
)
#: Words that may stand before ``(`` without being a function call.
_OPERATORS = frozenset(
    {"in", "any", "all", "not", "and", "or", "between", "is", "like", "ilike", "when", "then", "else"}
)
#: Words refused anywhere outside a string: a subquery, a window or a statement.
_REFUSED_WORDS = frozenset({"select", "from", "over", "union", "with", "partition", "order", "group", "having"})
_TOKEN = re.compile(r"'(?:[^']|'')*'|[A-Za-z_][A-Za-z0-9_]*|\s+|.", re.DOTALL)


class WhereError(ValueError):
    """A ``--where`` expression refused: its text and why (never a polars traceback)."""

    def __init__(self, text: str, reason: str) -> None:
        shown = text if len(text) <= 120 else f"{text[:117]}..."
        super().__init__(f"--where {shown!r}: {reason}")


@dataclass(frozen=True, slots=True, kw_only=True)
class WhereResult:
    """What the filters kept.

    Attributes
    ----------
    records
        The records every filter kept, in input order.
    kept, total
        Their count, and the count before filtering.
    """

    records: pl.DataFrame
    kept: int
    total: int

    @property
    def message(self) -> str:
        """The line said on standard error, e.g. ``--where kept 120 of 480 records``."""
        return f"--where kept {self.kept} of {self.total} records"


def _check_characters(text: str) -> None:
    """Refuse a control character (a newline included) anywhere in ``text``."""
    for position, char in enumerate(text):
        if (ord(char) < 32 and char != "\t") or ord(char) == 127:
            raise WhereError(text, f"control character {char!r} at position {position}: write the filter on one line")


def _lexical_check(text: str) -> list[str]:
    """The field names ``text`` uses outside strings, once its characters and words are allowed."""
    if len(text) > WHERE_LIMIT:
        raise WhereError(text, f"longer than {WHERE_LIMIT} characters ({len(text)})")
    if not text.strip():
        raise WhereError(text, "empty: expected a predicate such as \"system = 'a'\"")
    _check_characters(text)
    tokens = _TOKEN.findall(text)
    names: list[str] = []
    for index, token in enumerate(tokens):
        if token == "'":
            raise WhereError(text, "a string is not closed: quote strings with '...' (a quote inside as '')")
        if token in {"`", '"', ";"}:
            raise WhereError(text, f"{token!r} is not allowed: quote strings with '...'; field names are bare")
        if not (token[0].isalpha() or token[0] == "_"):
            continue
        word = token.lower()
        if word in _REFUSED_WORDS:
            raise WhereError(text, f"{token!r}: a filter is one boolean predicate (no query, subquery or window)")
        following = next((t for t in tokens[index + 1 :] if not t.isspace()), "")
        if following == "(" and word not in _OPERATORS:
            if word not in ALLOWED_FUNCTIONS:
                allowed = ", ".join(sorted(ALLOWED_FUNCTIONS))
                raise WhereError(text, f"function {token!r} is not allowed (allowed: {allowed})")
        else:
            names.append(token)
    return names


def record_filter(text: str) -> pl.Expr:
    """The polars predicate of one ``--where`` expression, checked against the record contract.

    Parameters
    ----------
    text
        A boolean SQL expression over record fields, e.g. ``"system = 'a' AND trial < 3"``,
        ``"case_id IN ('x', 'y')"`` or ``"array_contains(slices, 'security')"``.

    Returns
    -------
    polars.Expr
        The predicate (Boolean; a null result drops the record, as SQL's ``WHERE`` does).

    Raises
    ------
    WhereError
        A syntax error, an unknown field (named, with the record fields), a function off the
        allow-list, a query, aggregate or projection, a quoted identifier, a control character or
        an expression over :data:`WHERE_LIMIT` characters.

    Examples
    --------
    >>> frame = pl.DataFrame({"system": ["a", "b"], "trial": [0, 5]})
    >>> frame.filter(record_filter("system = 'a' AND trial < 3")).height
    1
    """
    _lexical_check(text)
    try:
        expression = pl.sql_expr(text)
        names = expression.meta.root_names()
    except (pl.exceptions.PolarsError, ValueError, TypeError) as exc:
        raise WhereError(text, f"not a valid SQL expression ({str(exc).splitlines()[0]})") from None
    unknown = sorted({name for name in names if name not in POLARS_SCHEMA})
    if unknown:
        raise WhereError(text, f"unknown record field(s) {unknown} (the fields: {', '.join(POLARS_SCHEMA)})")
    try:
        dtype = pl.DataFrame(schema=POLARS_SCHEMA).select(expression.alias("__where")).schema["__where"]
    except pl.exceptions.PolarsError as exc:
        raise WhereError(text, f"cannot be evaluated on the record fields ({str(exc).splitlines()[0]})") from None
    if dtype != pl.Boolean:
        raise WhereError(text, f'not a boolean predicate (it gives {dtype}): compare, e.g. "trial < 3"')
    return expression


def where_columns(columns: Sequence[str] | None, texts: Sequence[str]) -> tuple[str, ...] | None:
    """The columns to read so that ``texts`` can filter records read as ``columns``.

    Parameters
    ----------
    columns
        The columns a command reads (None: every column).
    texts
        The ``--where`` expressions (each checked by :func:`record_filter`).

    Returns
    -------
    tuple of str or None
        ``columns`` with the filters' fields and the trial key added; None when ``columns`` is None.

    Raises
    ------
    WhereError
        An expression refused (checked even when ``columns`` is None).
    """
    named = [name for text in texts for name in record_filter(text).meta.root_names()]
    if columns is None:
        return None
    extra = (*TRIAL_KEY, "attempt", *named) if texts else ()
    return tuple(dict.fromkeys((*columns, *extra)))


def apply_where(
    records: pl.DataFrame | pl.LazyFrame, texts: Sequence[str], *, source: str, columns: Sequence[str] | None = None
) -> WhereResult:
    """The records every ``--where`` expression keeps (all must hold), whole trials only.

    A filter applies to records (attempts). It must keep every attempt of a trial or none: a filter
    that would keep a retried trial's earlier attempt without its final one (``attempt = 0``), or the
    final one without the attempts whose cost it carries, is refused with the first such trial named.

    Parameters
    ----------
    records
        The records.
    texts
        The expressions (none: the records unchanged).
    source
        What the records came from, for the messages (e.g. the file names).
    columns
        The columns to return (None: every column), when more were read for the filters
        (see :func:`where_columns`).

    Returns
    -------
    WhereResult
        The kept records and the counts.

    Raises
    ------
    WhereError
        An expression refused (see :func:`record_filter`), no record kept, or a trial split.
    """
    frame = records.lazy().collect() if isinstance(records, pl.LazyFrame) else records
    if not texts:
        return WhereResult(records=frame, kept=frame.height, total=frame.height)
    predicate = pl.all_horizontal([record_filter(text) for text in texts])
    joined = " AND ".join(f"({text})" for text in texts)
    marked = frame.with_columns(predicate.fill_null(value=False).alias("__kept"))
    kept = marked.filter(pl.col("__kept")).drop("__kept")
    if kept.height == 0:
        raise WhereError(joined, f"kept no record of {frame.height} in {source}: an empty input is not evidence")
    if "attempt" in frame.columns and all(name in frame.columns for name in TRIAL_KEY):
        split = (
            marked.group_by(list(TRIAL_KEY), maintain_order=True)
            .agg(pl.col("__kept").any().alias("any"), pl.col("__kept").all().alias("all"))
            .filter(pl.col("any") & ~pl.col("all"))
        )
        if split.height:
            first = split.row(0, named=True)
            trial = ", ".join(f"{name}={first[name]!r}" for name in TRIAL_KEY)
            reason = (
                f"keeps some attempts of {split.height} trial(s) but not all (first: {trial}) in {source}; "
                "a filter must keep every attempt of a trial or none"
            )
            raise WhereError(joined, reason)
    return WhereResult(records=kept if columns is None else kept.select(columns), kept=kept.height, total=frame.height)
