"""Read labels from one or several rater columns, a judge's verdicts, and production verdicts.

The multi-class and multi-rater reader of ``gatestats calibrate`` (``--classes``, or
``label=COL1+COL2+COL3``). Files are read strictly (:func:`gatestats.tables.inputs.read_input_table`);
values are compared after stripping blanks, case-insensitively; ``aliases`` read a value as a class
(e.g. ``Tie`` -> ``0``). Every defect is a :class:`~gatestats.errors.RecordFileError` naming the
file, line (Parquet: row) and field, all defects at once:

- a rater cell that is not a class (a label outside the set, a score outside the scale); an empty
  rater cell is a missing rating, an item with no rating at all is an error;
- a verdict that is neither a class nor unparseable (empty, or one of ``unparseable``);
- an empty or duplicate item id.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gatestats.errors import RecordFileError, RecordProblem
from gatestats.tables.inputs import InputTable, read_input_table, typed_cell

__all__ = ["ProductionVerdicts", "RatedJudgments", "read_production_verdicts", "read_rated_judgments"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RatedJudgments:
    """Items with one or several ratings (classes, ``None`` = not rated) and the judge's verdict."""

    items: tuple[str, ...]
    raters: tuple[str, ...]
    ratings: tuple[tuple[str | None, ...], ...]
    verdicts: tuple[str | None, ...]
    classes: tuple[str, ...]
    judge_model: str | None
    source: str
    #: The separate labels file (``--labels``), when the ratings came from one.
    label_source: str | None = None
    #: Labelled items (of ``label_source``) that no judgment row judged.
    n_labels_without_verdict: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ProductionVerdicts:
    """Production verdicts as classes (``None``: unparseable), with the case of each (or ``None``)."""

    verdicts: tuple[str | None, ...]
    cases: tuple[str, ...] | None
    source: str


def _vocabulary(classes: Sequence[str], aliases: Mapping[str, str]) -> dict[str, str]:
    vocabulary = {c.strip().lower(): c for c in classes}
    if len(vocabulary) != len(classes) or "" in vocabulary or len(classes) < 2:
        msg = f"classes must be at least 2 distinct non-empty values (got {list(classes)!r})"
        raise ValueError(msg)
    for value, target in aliases.items():
        if target.strip().lower() not in vocabulary:
            msg = f"alias {value}={target}: {target!r} is not a class {list(classes)!r}"
            raise ValueError(msg)
        vocabulary[value.strip().lower()] = vocabulary[target.strip().lower()]
    return vocabulary


def _row(
    table: InputTable, index: int, raw: Mapping[str, object], problems: list[RecordProblem]
) -> dict[str, str | None]:
    """One row's cells as stripped text (empty -> None); cells that are not ids add problems."""
    row: dict[str, str | None] = {}
    for column in table.columns:
        value, bad = typed_cell(raw[column], "id", text=table.text)
        if bad is not None:
            problems.append(table.problem(index, column, f"column {column!r}: {bad}"))
        row[column] = (str(value).strip() or None) if value is not None else None
    return row


def _selected_rows(
    table: InputTable, filters: Mapping[str, str], problems: list[RecordProblem]
) -> Iterator[tuple[int, dict[str, str | None]]]:
    """The rows (index, cells as by :func:`_row`) that pass the ``where`` filters."""
    for index, raw in enumerate(table.rows):
        row = _row(table, index, raw, problems)
        if all(row.get(c) == v for c, v in filters.items()):
            yield index, row


def _ratings(
    table: InputTable,
    index: int,
    row: dict[str, str | None],
    raters: Sequence[str],
    vocabulary: Mapping[str, str],
    expected: str,
    problems: list[RecordProblem],
) -> tuple[str | None, ...]:
    """One item's ratings as classes (``None``: not rated); values outside the classes add problems."""
    rated: list[str | None] = []
    for column in raters:
        value = row[column]
        if value is not None and value.lower() not in vocabulary:
            problems.append(table.problem(index, column, f"column {column!r}: {expected} (got {value!r})"))
        rated.append(None if value is None else vocabulary.get(value.lower()))
    if all(row[c] is None for c in raters):
        problems.append(table.problem(index, raters[0], f"columns {list(raters)!r}: the item has no rating"))
    return tuple(rated)


def _verdict(
    table: InputTable,
    index: int,
    said: str | None,
    column: str,
    vocabulary: Mapping[str, str],
    tokens: set[str],
    expected: str,
    problems: list[RecordProblem],
) -> str | None:
    """A verdict cell as a class (``None``: unparseable); a value neither a class nor unparseable adds a problem."""
    if said is not None and said.lower() not in vocabulary and said.lower() not in tokens:
        problems.append(
            table.problem(
                index,
                column,
                (
                    f"column {column!r}: expected one of {expected}, or empty or a declared --unparseable value"
                    f" (got {said!r})"
                ),
            )
        )
    return None if said is None else vocabulary.get(said.lower())


def _item_key(
    table: InputTable,
    index: int,
    row: dict[str, str | None],
    item: str,
    first_seen: dict[str, int],
    problems: list[RecordProblem],
) -> str | None:
    """The row's item id (``None`` after adding a problem: an empty part, or an id seen before)."""
    key_parts = [row[p] for p in item.split("+")]
    if any(p is None for p in key_parts):
        problems.append(table.problem(index, item, f"column(s) {item!r}: expected an id (got an empty value)"))
        return None
    key = " | ".join(p for p in key_parts if p is not None)
    if key in first_seen:
        problems.append(table.problem(index, item, f"duplicate item {key!r} (first at {table.where(first_seen[key])})"))
        return None
    first_seen[key] = index
    return key


def _check_read(
    file: Path,
    problems: list[RecordProblem],
    *,
    n_items: int,
    filters: Mapping[str, str],
    judge: str | None,
    judges: set[str],
) -> None:
    """Raise the collected problems, or the error of an empty selection or of several judges."""
    if problems:
        raise RecordFileError(problems[:50], total=len(problems))
    if not n_items:
        shown = ", ".join(f"{k}={v}" for k, v in filters.items())
        raise RecordFileError.single(file, "<file>", f"no judgment rows{' match ' + shown if shown else ''}")
    if len(judges) > 1:
        msg = (
            f"column {judge!r}: a calibration is for one judge, the rows hold {len(judges)} (got {sorted(judges)[:10]})"
        )
        raise RecordFileError.single(file, "judge", msg)


def _separate_labels(
    labels: Path, *, item: str, raters: Sequence[str], vocabulary: Mapping[str, str], expected: str
) -> dict[str, tuple[str | None, ...]]:
    """The ratings of each item of a separate labels file (``--labels``); every defect raised at once."""
    table = read_input_table(labels, [*item.split("+"), *raters])
    problems: list[RecordProblem] = []
    first_seen: dict[str, int] = {}
    rated: dict[str, tuple[str | None, ...]] = {}
    for index, raw in enumerate(table.rows):
        row = _row(table, index, raw, problems)
        key = _item_key(table, index, row, item, first_seen, problems)
        if key is not None:
            rated[key] = _ratings(table, index, row, raters, vocabulary, expected, problems)
    if problems:
        raise RecordFileError(problems[:50], total=len(problems))
    if not rated:
        raise RecordFileError.single(labels, "<file>", "no labelled items")
    return rated


@dataclass(frozen=True, slots=True, kw_only=True)
class _Rows:
    """The rows of a judgments table, each item's ratings from its rater columns or a separate labels file."""

    table: InputTable
    item: str
    raters: Sequence[str]
    vocabulary: Mapping[str, str]
    labelled: Mapping[str, tuple[str | None, ...]] | None
    labels: str | Path | None

    def read(
        self,
        filters: Mapping[str, str],
        verdict: str,
        judge: str | None,
        tokens: set[str],
        expected: str,
        wanted: str,
        problems: list[RecordProblem],
    ) -> tuple[list[str], list[tuple[str | None, ...]], list[str | None], set[str]]:
        """Items, ratings, verdicts and the judges named, in file order; defects go to ``problems``."""
        table = self.table
        items: list[str] = []
        ratings: list[tuple[str | None, ...]] = []
        verdicts: list[str | None] = []
        judges: set[str] = set()
        first_seen: dict[str, int] = {}
        for index, row in _selected_rows(table, filters, problems):
            key = _item_key(table, index, row, self.item, first_seen, problems)
            if key is None:
                continue
            if self.labelled is None:
                ratings.append(_ratings(table, index, row, self.raters, self.vocabulary, wanted, problems))
            elif key in self.labelled:
                ratings.append(self.labelled[key])
            else:
                problems.append(table.problem(index, self.item, f"item {key!r} has no label in {self.labels}"))
                continue
            verdicts.append(_verdict(table, index, row[verdict], verdict, self.vocabulary, tokens, expected, problems))
            items.append(key)
            if judge and row[judge] is not None:
                judges.add(str(row[judge]))
        return items, ratings, verdicts, judges


def read_rated_judgments(
    path: str | Path,
    *,
    item: str,
    raters: Sequence[str],
    verdict: str,
    classes: Sequence[str],
    judge: str | None = None,
    aliases: Mapping[str, str] | None = None,
    unparseable: Sequence[str] = (),
    where: Mapping[str, str] | None = None,
    hint: str = "",
    labels: str | Path | None = None,
) -> RatedJudgments:
    """Read items, ratings (one column per rater) and the judge's verdicts (module docstring).

    Parameters
    ----------
    path
        ``.csv``, ``.jsonl``/``.ndjson`` or ``.parquet``.
    item
        The item id column (several joined with ``+``).
    raters
        The rating columns (one per rater).
    verdict
        The judge's verdict column.
    classes
        The classes (scale order for an ordinal scale).
    judge
        Optional judge model column (one value after ``where``).
    aliases
        Value -> class it is read as.
    unparseable
        Verdict values meaning "could not be parsed" (besides empty).
    where
        ``column -> value`` row filters.
    hint
        Appended to the message of a rating that is not a class (e.g. how to declare a tie class).
    labels
        A separate labels file (``item`` and ``raters`` columns): every judged item needs a label.

    Returns
    -------
    RatedJudgments
        The validated items in file order.

    Raises
    ------
    RecordFileError
        Every defect, naming file, line (or row) and field.
    ValueError
        Unusable classes or aliases.
    """
    file, filters = Path(path), dict(where or {})
    vocabulary = _vocabulary(classes, aliases or {})
    tokens = {t.strip().lower() for t in unparseable if t.strip()}
    expected = ", ".join(repr(c) for c in classes)
    wanted = f"expected one of {expected}{hint}"
    labelled = (
        None
        if labels is None
        else _separate_labels(Path(labels), item=item, raters=raters, vocabulary=vocabulary, expected=wanted)
    )
    rating_columns = list(raters) if labelled is None else []
    table = read_input_table(file, [*item.split("+"), *rating_columns, verdict, *([judge] if judge else []), *filters])
    problems: list[RecordProblem] = []
    rows = _Rows(table=table, item=item, raters=raters, vocabulary=vocabulary, labelled=labelled, labels=labels)
    items, ratings, verdicts, judges = rows.read(filters, verdict, judge, tokens, expected, wanted, problems)
    _check_read(file, problems, n_items=len(items), filters=filters, judge=judge, judges=judges)
    return RatedJudgments(
        items=tuple(items),
        raters=tuple(raters),
        ratings=tuple(ratings),
        verdicts=tuple(verdicts),
        classes=tuple(classes),
        judge_model=next(iter(judges)) if judges else None,
        source=str(file),
        label_source=None if labels is None else str(labels),
        n_labels_without_verdict=0 if labelled is None else len(set(labelled) - set(items)),
    )


def read_production_verdicts(
    path: str | Path,
    *,
    verdict: str,
    classes: Sequence[str],
    case: str | None = None,
    aliases: Mapping[str, str] | None = None,
    unparseable: Sequence[str] = (),
) -> ProductionVerdicts:
    """Read a production sample's judge verdicts (and the case of each, for clustering).

    Parameters
    ----------
    path
        ``.csv``, ``.jsonl``/``.ndjson`` or ``.parquet``, one row per judged production output.
    verdict
        The verdict column.
    classes
        The verdict values (classes); anything else that is not empty or ``unparseable`` is an error.
    case
        Optional case id column: verdicts of one case are one cluster.
    aliases, unparseable
        As for :func:`read_rated_judgments`.

    Returns
    -------
    ProductionVerdicts
        Verdicts in file order (``None``: unparseable).

    Raises
    ------
    RecordFileError
        A verdict outside the classes, an empty case id, or an empty file (file, line, field).
    """
    file = Path(path)
    vocabulary = _vocabulary(classes, aliases or {})
    tokens = {t.strip().lower() for t in unparseable if t.strip()}
    table = read_input_table(file, [verdict, *([case] if case else [])])
    problems: list[RecordProblem] = []
    verdicts: list[str | None] = []
    cases: list[str] = []
    expected = ", ".join(repr(c) for c in classes)
    for index, raw in enumerate(table.rows):
        cells = _row(table, index, raw, problems)
        verdicts.append(_verdict(table, index, cells[verdict], verdict, vocabulary, tokens, expected, problems))
        if case:
            if cells[case] is None:
                problems.append(table.problem(index, case, f"column {case!r}: expected a case id (got an empty value)"))
            cases.append(cells[case] or "")
    if problems:
        raise RecordFileError(problems[:50], total=len(problems))
    if not verdicts:
        raise RecordFileError.single(file, "<file>", "no production verdicts")
    return ProductionVerdicts(verdicts=tuple(verdicts), cases=tuple(cases) if case else None, source=str(file))
