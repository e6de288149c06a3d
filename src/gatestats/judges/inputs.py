"""Read a labelled set and judge verdicts (CSV, JSONL or Parquet) through a column mapping.

The result is one validated frame, one row per labelled and judged item, with these columns
(only the mapped optional ones present):

``item`` (String), ``label``, ``verdict`` and optionally ``verdict_swapped``,
``verdict_persuaded`` (each the scheme's spelling of the positive, negative or tie value, or null
for an unparseable verdict), ``slice``, ``reason`` (String) and ``score`` (Float64).

Rules (every violation is a :class:`~gatestats.errors.RecordFileError` naming file, line (or
Parquet row) and field; nothing is returned from a file with a defect):

- the files are read strictly (:func:`gatestats.tables.inputs.read_input_table`: strict CSV, one
  strict JSON object per JSONL line, Parquet); every mapped or filtered column holds strings or
  integers (an integer is its decimal text, ``1`` -> ``"1"``), ``score`` finite numbers: a float,
  a list, an object, NaN or a boolean in an id, label or verdict column is an error, never coerced;
- values are compared after stripping blanks, case-insensitively;
- a label is the positive or the negative value (items with tied labels are not part of a
  calibration set);
- a verdict is the positive, the negative or (pairwise judges) the tie value; an empty verdict, or
  one of the declared ``unparseable`` values, is *unparseable*: counted and reported, never dropped
  silently; any other value is an error;
- ``item`` (one column, or several joined with ``+``) is unique in each file;
- every judged row has a label (in the judgments file or, with ``labels``, in the labels file);
  labelled items without a verdict row are counted (``n_labels_without_verdict``);
- a calibration is for one judge and one rubric: a mapped ``judge`` or ``rubric`` column must hold a
  single value after the ``where`` filters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from gatestats.errors import RecordFileError, RecordProblem
from gatestats.judges._types import JUDGE_KINDS, JudgeKind
from gatestats.tables.inputs import CellKind, ProblemList, read_input_table, typed_cell
from gatestats.tables.mapping import parse_field_mapping
from gatestats.vocabulary import check_choice

__all__ = [
    "COVARIATE_PREFIX",
    "JUDGMENT_FIELDS",
    "VERDICT_COLUMNS",
    "JudgmentSet",
    "parse_judgment_mapping",
    "parse_where",
    "read_judgments",
]

#: Mappable fields: ``item``, ``label`` and ``verdict`` are required.
JUDGMENT_FIELDS: tuple[str, ...] = (
    "item",
    "label",
    "reason",
    "verdict",
    "verdict_swapped",
    "verdict_persuaded",
    "score",
    "slice",
    "judge",
    "rubric",
)
#: Output-frame name of a covariate column read with ``covariates=`` (``covariate:<column>``).
COVARIATE_PREFIX = "covariate:"
#: Columns that hold verdicts.
VERDICT_COLUMNS: tuple[str, ...] = ("verdict", "verdict_swapped", "verdict_persuaded")
_REQUIRED = ("item", "label", "verdict")
_LABEL_FIELDS = ("item", "label", "reason")
_SHOWN = 50
_KEY_SEPARATOR = "\x1f"


def parse_judgment_mapping(text: str) -> dict[str, str]:
    """Parse ``field=COLUMN,...`` (``item`` may join columns with ``+``) into a dict.

    Parameters
    ----------
    text
        The ``--map`` option's value.

    Returns
    -------
    dict
        Field -> column.

    Raises
    ------
    ValueError
        Malformed text, an unknown field, or a required field (item, label, verdict) missing.

    Examples
    --------
    >>> parse_judgment_mapping("item=subset+item_idx,label=label,verdict=winner")
    {'item': 'subset+item_idx', 'label': 'label', 'verdict': 'winner'}
    """
    mapping = parse_field_mapping(text, JUDGMENT_FIELDS)
    missing = [f for f in _REQUIRED if f not in mapping]
    if missing:
        msg = f"--map: {', '.join(f + '=COLUMN' for f in missing)} required (got {text!r})"
        raise ValueError(msg)
    return mapping


def parse_where(items: Sequence[str]) -> dict[str, str]:
    """Parse ``COLUMN=VALUE`` filters (repeatable option) into a dict.

    Parameters
    ----------
    items
        The ``--where`` option's values, one ``COLUMN=VALUE`` filter each.

    Returns
    -------
    dict
        Column -> value (both stripped of blanks).

    Raises
    ------
    ValueError
        An item without ``=`` or a column, or a column filtered twice.

    Examples
    --------
    >>> parse_where(["evaluator=GPT-4", "subset=Processed/MT-Bench"])
    {'evaluator': 'GPT-4', 'subset': 'Processed/MT-Bench'}
    """
    where: dict[str, str] = {}
    for item in items:
        column, sep, value = item.partition("=")
        if not sep or not column.strip():
            msg = f"--where: expected COLUMN=VALUE (got {item!r})"
            raise ValueError(msg)
        if column.strip() in where:
            msg = f"--where: column {column.strip()!r} is filtered twice"
            raise ValueError(msg)
        where[column.strip()] = value.strip()
    return where


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgmentSet:
    """A validated calibration set: one row per labelled, judged item (see the module docstring)."""

    frame: pl.DataFrame
    kind: JudgeKind
    positive: str
    negative: str
    tie: str | None
    judge_model: str | None
    rubric_version: str | None
    #: Files read, judgments first.
    sources: tuple[str, ...]
    #: Filters applied to the judgments file.
    where: tuple[tuple[str, str], ...]
    n_labels_without_verdict: int
    #: Up to 20 ids of labelled items without a verdict row.
    labels_without_verdict: tuple[str, ...]


def _read_table(path: Path, names: Mapping[str, str], score: str | None, free: Sequence[str] = ()) -> pl.DataFrame:
    """The columns ``names`` (column -> field it feeds, for messages) of a table, read strictly.

    Every column is an id (string, or integer as its decimal text) except ``score``, a finite
    number, and the ``free`` columns (covariates), a number or an id kept as its text. The frame
    has one String column per name (Float64 for the score), as text (stripped, empty -> null), and
    ``__row``, the row's index in the file.
    """
    table = read_input_table(path, list(names))
    problems = ProblemList()
    data: dict[str, list[Any]] = {c: [] for c in table.columns}
    # A CSV cell read as an id is its text, empty -> null: typed_cell never refuses one (so the free columns'
    # second reading never runs), and these columns are read whole, without a call a cell (issue 28 item 2:
    # ~8 ms of calibrate's 3,728 rows). Problems come from the other columns only, in the same order.
    quick = [c for c in table.columns if table.text and c != score]
    for column in quick:
        data[column] = [None if (text := str(row[column])) == "" else text for row in table.rows]
    slow = [c for c in table.columns if c not in quick]
    for index, row in enumerate(table.rows):
        for column in slow:
            kind: CellKind = "number" if column == score else "id"
            value, bad = typed_cell(row[column], kind, text=table.text)
            if bad is not None and column in free:
                number, bad = typed_cell(row[column], "number", text=table.text)
                value = None if number is None else repr(number)
            if bad is not None:
                problems.add(table.problem(index, names[column], f"column {column!r}: {bad}"))
            data[column].append(value)
    problems.raise_if_any()
    frame = pl.DataFrame(
        [pl.Series(c, v, dtype=pl.Float64 if c == score else pl.String, strict=True) for c, v in data.items()]
    )
    return frame.with_columns(_text(c, frame.schema[c]).alias(c) for c in frame.columns if c != score).with_row_index(
        "__row"
    )


def _text(column: str, dtype: pl.DataType) -> pl.Expr:
    """A text column stripped of blanks, empty -> null (anything else: as text)."""
    expr = pl.col(column) if dtype == pl.String() else pl.col(column).cast(pl.String)
    text = expr.str.strip_chars()
    return pl.when(text == "").then(None).otherwise(text)


def _relocated(problems: Iterable[RecordProblem]) -> list[RecordProblem]:
    """:func:`gatestats.records.io.relocate_problems` of ``problems``, imported only when there is one.

    A file without a defect has none, and ``records.io`` (the record reader, ~15-20 ms of a start, issue 28
    item 2) is then not imported: its answer to no problem is an empty list.
    """
    found = list(problems)
    if not found:
        return []
    from gatestats.records.io import relocate_problems  # noqa: PLC0415 - only to name a defect's line

    return relocate_problems(found)


def _problems(
    path: Path, frame: pl.DataFrame, mask: pl.Expr, field: str, message: str, *, got: str | None = None
) -> list[RecordProblem]:
    """One problem per offending row (``__row`` = row in the file), relocated to file lines.

    With ``got``, the message ends with ``(got <value of that column>)``.
    """
    bad = frame.filter(mask).head(_SHOWN)
    return _relocated(
        RecordProblem(
            file=str(path),
            row=int(row["__row"]),
            field=field,
            message=message if got is None else f"{message} (got {_show(row[got]) if got == 'item' else row[got]!r})",
        )
        for row in bad.iter_rows(named=True)
    )


def _select(table: pl.DataFrame, fields: Mapping[str, str]) -> pl.DataFrame:
    """The mapped fields as text, ``item`` joined from its columns, plus ``__row``."""
    exprs: list[pl.Expr] = [pl.col("__row")]
    for field, spec in fields.items():
        if field == "item":
            parts = [pl.col(c) for c in spec.split("+")]
            exprs.append(
                pl.concat_str(parts, separator=_KEY_SEPARATOR).alias("item")
                if len(parts) > 1
                else parts[0].alias("item")
            )
        else:
            exprs.append(pl.col(spec).alias(field))
    return table.select(exprs)


def _item_problems(path: Path, frame: pl.DataFrame, spec: str) -> list[RecordProblem]:
    problems = _problems(
        path, frame, pl.col("item").is_null(), "item", f"column(s) {spec!r}: expected an id (got an empty value)"
    )
    dupes = (
        frame.filter(pl.col("item").is_not_null())
        .with_columns(first=pl.col("__row").min().over("item"))
        .filter(pl.col("__row") != pl.col("first"))
    )
    for row in dupes.head(_SHOWN).iter_rows(named=True):
        (where,) = _relocated([RecordProblem(file=str(path), row=row["first"], field="", message="")])
        first = f"line {where.line}" if where.line is not None else f"row {where.row}"
        problems += _relocated(
            [
                RecordProblem(
                    file=str(path),
                    row=row["__row"],
                    field="item",
                    message=f"duplicate item {_show(row['item'])!r} (first at {first})",
                )
            ]
        )
    return problems


def _show(item: str) -> str:
    return item.replace(_KEY_SEPARATOR, " | ")


def _vocabulary(kind: JudgeKind, positive: str, negative: str, tie: str | None) -> dict[str, str]:
    values = {positive.strip().lower(): positive, negative.strip().lower(): negative}
    if tie is not None:
        values[tie.strip().lower()] = tie
    if len(values) != (3 if tie is not None else 2) or "" in values:
        got = f"{positive!r}, {negative!r}, {tie!r}"
        msg = f"positive, negative and tie values must be distinct and non-empty (got {got})"
        raise ValueError(msg)
    if tie is not None and kind != "pairwise":
        msg = f"a tie value applies to pairwise judges only (got tie={tie!r} with kind={kind!r})"
        raise ValueError(msg)
    return values


def _infer_negative(
    labels: pl.DataFrame, verdicts: pl.DataFrame, positive: str, tie: str | None, unparseable: set[str], path: Path
) -> str:
    """The one value besides the positive (and tie): from the labels, else from the verdicts."""
    skip = {positive.strip().lower(), *unparseable} | ({tie.strip().lower()} if tie else set())
    for frame, column in ((labels, "label"), (verdicts, "verdict")):
        spellings: dict[str, str] = {}
        for value in frame[column].drop_nulls().unique().sort().to_list():
            if value.lower() not in skip:
                spellings.setdefault(value.lower(), value)
        others = [spellings[key] for key in sorted(spellings)]
        if len(others) > 1:
            msg = (
                f"cannot infer the negative value: the {column}s hold {len(others)} values besides the positive "
                f"{positive!r} (got {others[:10]}); give it explicitly (--negative)"
            )
            raise RecordFileError.single(path, column, msg)
        if len(others) == 1:
            return str(others[0])
    msg = (
        f"cannot infer the negative value: no label or verdict differs from the positive {positive!r}; "
        "give it explicitly (--negative)"
    )
    raise RecordFileError.single(path, "label", msg)


def _single_value(path: Path, frame: pl.DataFrame, field: str, column: str) -> str | None:
    if field not in frame.columns:
        return None
    values = frame[field].drop_nulls().unique().sort().to_list()
    if len(values) > 1:
        msg = (
            f"column {column!r}: a calibration is for one {field}, the rows hold {len(values)} "
            f"(got {values[:10]}); select one with --where {column}=VALUE"
        )
        raise RecordFileError.single(path, field, msg)
    return str(values[0]) if values else None


def read_judgments(
    judgments: str | Path,
    mapping: Mapping[str, str],
    *,
    positive: str,
    negative: str | None = None,
    tie: str | None = None,
    kind: JudgeKind = "pointwise",
    labels: str | Path | None = None,
    where: Mapping[str, str] | None = None,
    unparseable: Sequence[str] = (),
    covariates: Sequence[str] = (),
) -> JudgmentSet:
    """Read, filter, join and validate a labelled set and its judge verdicts.

    Parameters
    ----------
    judgments
        ``.csv``, ``.jsonl``/``.ndjson`` or ``.parquet``; one row per judged item.
    mapping
        Field -> column (see :data:`JUDGMENT_FIELDS`); ``item``, ``label``, ``verdict`` required.
        ``item`` may join several columns with ``+`` (e.g. ``subset+item_idx``). With ``labels``,
        ``label`` and ``reason`` are read from the labels file and ``item`` from both.
    positive, negative, tie
        The verdict and label values. ``negative`` is inferred when omitted (the one other label
        value, else the one other verdict value). For pairwise judges ``positive`` means "output A,
        the one shown first in the original order, is better".
    kind
        ``pointwise`` or ``pairwise``; order swaps and ties need ``pairwise``.
    labels
        Optional separate labelled-set file.
    where
        ``column -> value`` filters applied to the judgments file before anything else.
    unparseable
        Verdict values that mean "the judge's answer could not be parsed" (besides empty).
    covariates
        Columns of the judgments file kept as ``covariate:<column>`` (text; a number or an id in
        each cell) for :func:`~gatestats.judges.judge_bias_by_covariate`.

    Returns
    -------
    JudgmentSet
        The validated frame (see the module docstring), the resolved values, the judge model and
        rubric version when mapped, and the count of labelled items without a verdict row.

    Raises
    ------
    RecordFileError
        Every defect, with file, line (or row) and field.
    ValueError
        Unusable options (unknown field, tie with a pointwise judge, ...).

    Examples
    --------
    >>> from tests.conftest import DATA
    >>> s = read_judgments(
    ...     DATA / "llmbar_judge_swap" / "judgments.csv",
    ...     {"item": "item_idx", "label": "label", "verdict": "winner_original_order", "judge": "evaluator"},
    ...     positive="1", kind="pairwise",
    ...     where={"subset": "Processed/MT-Bench", "evaluator": "GPT-4", "strategy": "Vanilla_NoRules"},
    ... )
    >>> s.frame.height, s.negative, s.judge_model
    (200, '2', 'GPT-4')
    """
    fields = _checked_options(mapping, kind, positive, negative, tie)
    tokens = {t.strip().lower() for t in unparseable if t.strip()}
    read = _read_sources(Path(judgments), fields, dict(where or {}), labels, tuple(covariates))
    if negative is None:
        negative = _infer_negative(read.label_frame, read.frame, positive, tie, tokens, read.label_path)
    vocabulary = _vocabulary(kind, positive, negative, tie)
    problems = _label_value_problems(read.label_path, read.label_frame, fields["label"], positive, negative)
    if problems := problems + _verdict_problems(read.path, read.frame, fields, vocabulary, tokens):
        raise RecordFileError(problems)
    return _judgment_set(read, fields, vocabulary, kind=kind, positive=positive, negative=negative, tie=tie)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Sources:
    """The files read: the judgments (rows kept by the filters) and the labelled set (they, or a labels file)."""

    path: Path
    frame: pl.DataFrame
    filters: dict[str, str]
    separate: bool
    label_path: Path
    label_frame: pl.DataFrame


def _read_sources(
    path: Path,
    fields: Mapping[str, str],
    filters: dict[str, str],
    labels: str | Path | None,
    covariates: tuple[str, ...] = (),
) -> _Sources:
    """The judgments file and the labelled set, read and checked for their items and labels."""
    frame = _read_verdicts(path, fields, filters, separate_labels=labels is not None, covariates=covariates)
    label_path, label_frame = _read_labelled(path, frame, fields, labels)
    return _Sources(
        path=path,
        frame=frame,
        filters=filters,
        separate=labels is not None,
        label_path=label_path,
        label_frame=label_frame,
    )


def _judgment_set(
    read: _Sources,
    fields: Mapping[str, str],
    vocabulary: Mapping[str, str],
    *,
    kind: JudgeKind,
    positive: str,
    negative: str,
    tie: str | None,
) -> JudgmentSet:
    """The checked verdicts joined to their labels (from a separate file), with the judge and rubric named."""
    path = read.path
    frame, n_without, without_ids = _join_labels(
        path, read.frame, read.label_path, read.label_frame, separate=read.separate
    )
    return JudgmentSet(
        judge_model=_single_value(path, frame, "judge", fields.get("judge", "")),
        rubric_version=_single_value(path, frame, "rubric", fields.get("rubric", "")),
        frame=_normalised(frame, vocabulary),
        kind=kind,
        positive=positive,
        negative=negative,
        tie=tie,
        sources=tuple(str(p) for p in ([path, read.label_path] if read.separate else [path])),
        where=tuple(read.filters.items()),
        n_labels_without_verdict=n_without,
        labels_without_verdict=without_ids,
    )


def _checked_options(
    mapping: Mapping[str, str], kind: JudgeKind, positive: str, negative: str | None, tie: str | None
) -> dict[str, str]:
    """The mapping as a dict, checked (known fields, the required ones, order swaps only when
    pairwise), and the verdict values when all are given."""
    check_choice(kind, JUDGE_KINDS, "kind")
    fields = dict(mapping)
    for field in fields:
        if field not in JUDGMENT_FIELDS:
            msg = f"mapping: unknown field {field!r} (mappable: {', '.join(JUDGMENT_FIELDS)})"
            raise ValueError(msg)
    for needed in _REQUIRED:
        if needed not in fields:
            msg = f"mapping: {needed}=COLUMN is required"
            raise ValueError(msg)
    if "verdict_swapped" in fields and kind != "pairwise":
        msg = "mapping: verdict_swapped (order swaps) applies to pairwise judges: use kind='pairwise'"
        raise ValueError(msg)
    if negative is not None:
        _vocabulary(kind, positive, negative, tie)
    return fields


def _read_verdicts(
    path: Path,
    fields: Mapping[str, str],
    filters: Mapping[str, str],
    *,
    separate_labels: bool,
    covariates: tuple[str, ...] = (),
) -> pl.DataFrame:
    """The judgments file's mapped fields (without ``label`` and ``reason`` when they come from a
    labels file), its rows kept by ``filters``; raises when no row is left."""
    judged = {f: c for f, c in fields.items() if not separate_labels or f not in ("label", "reason")}
    names = {**{c: c for c in filters}, **{c: f"covariate {c}" for c in covariates}, **_names(judged)}
    score = judged.get("score")
    uses = [c for f, spec in judged.items() for c in (spec.split("+") if f == "item" else [spec])]
    numeric = score if score is not None and uses.count(score) == 1 and score not in filters else None
    free = [c for c in covariates if c not in uses and c not in filters]
    table = _read_table(path, names, numeric, free)
    for column, value in filters.items():
        table = table.filter(pl.col(column) == value)
    frame = _select(table, judged).with_columns(
        (table[c] if table.schema[c] == pl.String() else table[c].cast(pl.String)).alias(COVARIATE_PREFIX + c)
        for c in covariates
    )
    if frame.is_empty():
        shown = ", ".join(f"{k}={v}" for k, v in filters.items())
        raise RecordFileError.single(path, "<file>", f"no judgment rows{' match ' + shown if shown else ''}")
    return frame


def _read_labelled(
    path: Path, frame: pl.DataFrame, fields: Mapping[str, str], labels: str | Path | None
) -> tuple[Path, pl.DataFrame]:
    """The labelled set (the judgments themselves, or the ``labels`` file) and its path.

    Raises every missing or duplicate item id (of both files) and every empty label at once.
    """
    problems = _item_problems(path, frame, fields["item"])
    label_path, label_frame = path, frame
    if labels is not None:
        label_path = Path(labels)
        label_fields = {f: fields[f] for f in _LABEL_FIELDS if f in fields}
        label_table = _read_table(label_path, _names(label_fields), None)
        label_frame = _select(label_table, label_fields)
        problems += _item_problems(label_path, label_frame, fields["item"])
    empty_label = f"column {fields['label']!r}: expected a label (got an empty value)"
    problems += _problems(label_path, label_frame, pl.col("label").is_null(), "label", empty_label)
    if problems:
        raise RecordFileError(problems)
    return label_path, label_frame


def _label_value_problems(
    path: Path, frame: pl.DataFrame, column: str, positive: str, negative: str
) -> list[RecordProblem]:
    """One problem per label that is neither the positive nor the negative value."""
    return _problems(
        path,
        frame,
        ~pl.col("label").str.to_lowercase().is_in([positive.strip().lower(), negative.strip().lower()]),
        "label",
        f"column {column!r}: expected {positive!r} or {negative!r}",
        got="label",
    )


def _verdict_problems(
    path: Path, frame: pl.DataFrame, fields: Mapping[str, str], vocabulary: Mapping[str, str], tokens: set[str]
) -> list[RecordProblem]:
    """One problem per verdict outside the vocabulary (and the unparseable tokens), per non-numeric score."""
    problems: list[RecordProblem] = []
    expected = " or ".join(repr(v) for v in vocabulary.values())
    for field in (f for f in VERDICT_COLUMNS if f in frame.columns):
        problems += _problems(
            path,
            frame,
            pl.col(field).is_not_null() & ~pl.col(field).str.to_lowercase().is_in([*vocabulary, *tokens]),
            field,
            f"column {fields[field]!r}: expected {expected}, or empty for an unparseable verdict",
            got=field,
        )
    if "score" in frame.columns:
        problems += _problems(
            path,
            frame,
            pl.col("score").is_not_null() & pl.col("score").cast(pl.Float64, strict=False).is_null(),
            "score",
            f"column {fields['score']!r}: expected a number",
            got="score",
        )
    return problems


def _join_labels(
    path: Path, frame: pl.DataFrame, label_path: Path, label_frame: pl.DataFrame, *, separate: bool
) -> tuple[pl.DataFrame, int, tuple[str, ...]]:
    """Join a separate labels file to the verdicts: the joined frame, the count and first ids of
    labelled items without a verdict row. Raises when a judged item has no label."""
    if not separate:
        return frame, 0, ()
    without = label_frame.join(frame.select("item"), on="item", how="anti")
    n_without = without.height
    without_ids = tuple(_show(v) for v in without.sort("__row")["item"].head(20).to_list())
    frame = frame.join(label_frame.drop("__row"), on="item", how="left")
    unlabelled = frame.filter(pl.col("label").is_null())
    if not unlabelled.is_empty():
        summary = RecordProblem(
            file=str(path),
            field="item",
            message=(
                f"{unlabelled.height} of {frame.height} judged item(s) have no label in {label_path} "
                f"(and {n_without} labelled item(s) there have no verdict row); every judged item needs a label"
            ),
        )
        raise RecordFileError(
            [
                summary,
                *_problems(path, frame, pl.col("label").is_null(), "item", f"no label in {label_path}", got="item"),
            ]
        )
    return frame, n_without, without_ids


def _normalised(frame: pl.DataFrame, vocabulary: Mapping[str, str]) -> pl.DataFrame:
    """The output frame: labels and verdicts in the scheme's spelling, in file order, the output columns."""
    verdict_fields = [f for f in VERDICT_COLUMNS if f in frame.columns]
    out = frame.with_columns(
        pl.col("label").str.to_lowercase().replace_strict(vocabulary, return_dtype=pl.String),
        *(
            pl.col(f).str.to_lowercase().replace_strict(vocabulary, default=None, return_dtype=pl.String)
            for f in verdict_fields
        ),
    )
    if "score" in out.columns:
        out = out.with_columns(pl.col("score").cast(pl.Float64))
    keep = ["item", "label", *verdict_fields, *(c for c in ("slice", "reason", "score") if c in out.columns)]
    keep += [c for c in out.columns if c.startswith(COVARIATE_PREFIX)]
    return out.sort("__row").select(keep).with_columns(pl.col("item").str.replace_all(_KEY_SEPARATOR, " | "))


def _names(fields: Mapping[str, str]) -> dict[str, str]:
    """Column -> the field it feeds (``item`` may join several columns)."""
    names: dict[str, str] = {}
    for field, spec in fields.items():
        for column in spec.split("+") if field == "item" else [spec]:
            names.setdefault(column, field)
    return names
