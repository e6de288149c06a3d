"""Record preparation for the cost estimators: checks, spend per attempt, accepted trials, human time.

:func:`prepare` turns run records into one row per attempt with the derived columns every cost
statistic starts from (names start with ``__``):

- ``__spend``: spend of the attempt in USD — ``cost_usd`` if set, else the sum of the parts
  ``cost_model_usd + cost_tool_usd + cost_execution_usd`` (a null part counts as 0 only when at
  least one part is set), null when the attempt carries no cost at all (never 0);
- ``__execution`` / ``__imputed``: execution spend, including the imputed
  ``machine_seconds / 3600 * machine_rate`` for attempts without execution spend (and without an
  undivided ``cost_usd``), and the imputed amount alone;
- ``__final`` / ``__accepted``: the attempt is its trial's highest, the one that counts
  (:func:`gatestats.vocabulary.is_final_attempt`) / and it passed;
- ``__human_s``: seconds of merged human time attributed to the attempt
  (:func:`gatestats.cost.attribute_overlaps` over *all* records passed in, per reviewer);
  ``__human_unknown``: a review or correction interval with one end missing;
- ``__start_us`` / ``__end_us``: ``started_at`` and the latest of ``ended_at``,
  ``review_ended_at``, ``correction_ended_at`` (microseconds since the epoch, UTC);
- ``__unit``: the resampling unit, the ``case_group`` or else the case (``case_id``, ``case_version``).

The timestamp texts (``started_at``...) are checked and parsed, then dropped: only their parsed
``__`` columns are in the prepared frame.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, TypedDict

import numpy as np
import polars as pl

from gatestats._query import collect_small
from gatestats.cost.human_time import attribute_overlaps
from gatestats.errors import GatestatsError
from gatestats.records.columns import require_columns
from gatestats.vocabulary import (
    PASSED,
    FrameLike,
    check_confidence_level,
    check_n_resamples,
    check_seed,
    is_final_attempt,
)

__all__ = [
    "COST_PARTS",
    "RECORD_COLUMNS",
    "SLICE",
    "CostOptions",
    "ReviewRateRequiredError",
    "check_common",
    "check_rate",
    "explode_groups",
    "prepare",
    "record_ids_text",
]

COST_PARTS: Final = ("cost_model_usd", "cost_tool_usd", "cost_execution_usd")
TIMESTAMPS: Final = (
    "started_at",
    "ended_at",
    "review_started_at",
    "review_ended_at",
    "correction_started_at",
    "correction_ended_at",
)
#: The virtual grouping column built from each record's list ``slices``.
SLICE: Final = "slice"
_REQUIRED: Final = ("record_id", "system", "case_id", "trial", "attempt", "outcome")
_KEY: Final = ("system", "case_id", "case_version", "trial", "attempt")
_OPTIONAL: Final[dict[str, pl.DataType]] = {
    "case_version": pl.String(),
    "case_group": pl.String(),
    "cost_usd": pl.Float64(),
    "cost_model_usd": pl.Float64(),
    "cost_tool_usd": pl.Float64(),
    "cost_execution_usd": pl.Float64(),
    "machine_seconds": pl.Float64(),
    "reviewer": pl.String(),
    **{name: pl.String() for name in TIMESTAMPS},
}
#: Every record column the cost functions read: the required ones, then the optional ones.
RECORD_COLUMNS: Final = (*_REQUIRED, *_OPTIONAL)
_INTERVALS: Final = (
    ("review_started_at", "review_ended_at"),
    ("correction_started_at", "correction_ended_at"),
)
_SHOWN: Final = 5


class ReviewRateRequiredError(GatestatsError, ValueError):
    """Human review or correction time is recorded but no hourly rate was given to price it."""


def record_ids_text(ids: Sequence[Any], total: int) -> str:
    """``'r-1', 'r-2' and 3 more`` for messages.

    Parameters
    ----------
    ids
        Record ids (the first five are shown).
    total
        How many records there are in all.

    Returns
    -------
    str
        The shown ids, and how many more.
    """
    shown = ", ".join(repr(i) for i in ids[:_SHOWN])
    more = total - min(len(ids), _SHOWN)
    return shown + (f" and {more} more" if more > 0 else "")


def check_rate(name: str, value: float | None, *, unit: str = "USD per hour") -> None:
    """A rate (or a price) is ``None`` or a finite number >= 0.

    Parameters
    ----------
    name
        The option's name in the message.
    value
        The rate in ``unit``.
    unit
        The unit in the message.

    Raises
    ------
    ValueError
        Not ``None`` and not a finite number >= 0.
    """
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        msg = f"{name} must be a finite number >= 0 in {unit}, or None (got {value!r})"
        raise ValueError(msg)


class OptionsEcho(TypedDict):
    """The fields of a cost result that repeat its options (the rates under their public names)."""

    confidence_level: float
    n_resamples: int
    seed: int
    review_rate_usd_per_hour: float | None
    machine_rate_usd_per_hour: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class CostOptions:
    """The options of a cost estimate: the hourly rates, and the bootstrap's level, resamples and seed."""

    review_rate: float | None
    machine_rate: float | None
    confidence_level: float
    n_resamples: int
    seed: int

    @property
    def rate(self) -> float:
        """The review rate as a number (0 when none is given: then no human time is recorded)."""
        return 0.0 if self.review_rate is None else float(self.review_rate)

    @classmethod
    def checked(
        cls, review_rate: float | None, machine_rate: float | None, confidence_level: float, n_resamples: int, seed: int
    ) -> CostOptions:
        """The options of a public cost function, the bootstrap's checked first.

        Parameters
        ----------
        review_rate, machine_rate
            The hourly rates in USD, or ``None`` (checked where the records are prepared, :func:`prepare`).
        confidence_level, n_resamples, seed
            The bootstrap's level, resamples and seed, checked here (:func:`check_common`).

        Returns
        -------
        CostOptions
            The options (the bootstrap's checked).

        Raises
        ------
        TypeError, ValueError
            As :func:`check_common`.
        """
        check_common(confidence_level, n_resamples, seed)
        return cls(
            review_rate=review_rate,
            machine_rate=machine_rate,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=seed,
        )

    def echo(self) -> OptionsEcho:
        """The fields of a cost result that repeat the options (the rates under their public names)."""
        return {
            "confidence_level": self.confidence_level,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "review_rate_usd_per_hour": self.review_rate,
            "machine_rate_usd_per_hour": self.machine_rate,
        }


def check_common(confidence_level: float, n_resamples: int, seed: int) -> None:
    """Checks shared by :func:`cost_per_accepted` and :func:`cost_ratio` (the vocabulary's rules).

    Parameters
    ----------
    confidence_level
        Two-sided level of the interval.
    n_resamples
        Bootstrap resamples.
    seed
        Seed of the bootstrap.

    Raises
    ------
    TypeError
        ``confidence_level`` is not a number.
    ValueError
        ``confidence_level`` outside (0, 1), fewer than 100 resamples, or a seed that is not an
        integer >= 0.
    """
    check_confidence_level(confidence_level)
    check_n_resamples(n_resamples)
    check_seed(seed)


def _check_by(by: Sequence[str], schema: pl.Schema) -> tuple[str, ...]:
    if isinstance(by, str) or not all(isinstance(c, str) for c in by) or not by:
        msg = f"by must be a non-empty tuple of column names, e.g. ('system',) (got {by!r})"
        raise ValueError(msg)
    columns = tuple(by)
    if len(set(columns)) != len(columns):
        msg = f"by names a column twice (got {columns!r})"
        raise ValueError(msg)
    for name in columns:
        if name == SLICE:
            continue
        if name == "slices":
            msg = "by: group by 'slice' (each case counts in every slice of its list 'slices'), not 'slices'"
            raise ValueError(msg)
        if name not in schema:
            msg = f"by: no column {name!r} in the records (got {sorted(schema)}, or the special 'slice')"
            raise ValueError(msg)
        if isinstance(schema[name], pl.List | pl.Struct | pl.Array):
            msg = f"by: column {name!r} must hold one value per record (got {schema[name]})"
            raise ValueError(msg)
    return columns


def _timestamp(name: str, dtype: pl.DataType) -> pl.Expr:
    col = pl.col(name)
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is None:
            msg = f"records: field {name!r} must carry a time zone (got {dtype}); give RFC 3339 text with offset"
            raise ValueError(msg)
        return col.dt.convert_time_zone("UTC").dt.epoch("us")
    if dtype == pl.Null():
        return pl.lit(None, dtype=pl.Int64)
    if dtype != pl.String():
        msg = f"records: field {name!r} must hold RFC 3339 timestamps as text (got {dtype})"
        raise ValueError(msg)
    return col.str.to_datetime(time_zone="UTC", strict=False).dt.epoch("us")


def _check_type(name: str, got: pl.DataType, expected: pl.DataType) -> None:
    """A numeric field must hold numbers (or only nulls): ``"0.5"`` as text is refused, never parsed."""
    if expected == pl.Float64() and not (got.is_numeric() or got == pl.Null()):
        msg = f"records: field {name!r}: expected a number (got a column of {got})"
        raise ValueError(msg)


def _first_bad(frame: pl.DataFrame, mask: pl.Expr, field: str, expected: str, *, show: str | None = None) -> None:
    bad = frame.filter(mask)
    if bad.is_empty():
        return
    row = bad.row(0, named=True)
    got = row[show or field]
    msg = (
        f"records: record {row['record_id']!r}: field {field!r}: expected {expected} (got {got!r})"
        f"{f'; {bad.height} record(s) in all' if bad.height > 1 else ''}"
    )
    raise ValueError(msg)


def prepare(
    records: FrameLike,
    *,
    by: Sequence[str],
    review_rate: float | None,
    machine_rate: float | None,
) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """Check ``records`` and derive the per-attempt columns (see the module docstring).

    Parameters
    ----------
    records
        Run records.
    by
        Grouping columns (``slice`` for the records' slices).
    review_rate
        Price of an hour of human time; required when human time is recorded.
    machine_rate
        Price of a machine hour, to impute missing execution spend, or ``None``.

    Returns
    -------
    tuple of polars.DataFrame and tuple of str
        The prepared attempts and the checked ``by`` columns.

    Raises
    ------
    TypeError
        ``records`` is not a polars frame.
    ReviewRateRequiredError
        Human time is recorded and ``review_rate`` is ``None``.
    ValueError
        Missing columns, a bad ``by`` or rate, or records that break the contract.
    """
    if not isinstance(records, pl.DataFrame | pl.LazyFrame):
        msg = f"records must be a polars DataFrame or LazyFrame (got {type(records).__name__})"
        raise TypeError(msg)
    check_rate("review_rate_usd_per_hour", review_rate)
    check_rate("machine_rate_usd_per_hour", machine_rate)
    lazy = records.lazy()
    schema = require_columns(lazy, _REQUIRED)
    columns = _check_by(by, schema)
    extra = [c for c in columns if c != SLICE and c not in _REQUIRED and c not in _OPTIONAL]
    wanted: list[pl.Expr] = [pl.col(name) for name in (*_REQUIRED, *extra)]
    names = [*_REQUIRED, *extra]  # the prepared columns' order
    optional, after, optional_names = _optional_columns(schema, _null_columns(records, schema))
    wanted += optional
    names += optional_names
    if SLICE in columns:
        slices = pl.col("slices") if "slices" in schema else pl.lit(None, dtype=pl.List(pl.String))
        wanted.append(slices.cast(pl.List(pl.String)).alias("slices"))
        names.append("slices")
    # A canonical row order (keys are unique, checked below) makes every sum independent of the
    # order of the input rows, to the last bit.
    frame = lazy.select(wanted).sort(_KEY, nulls_last=False).collect()
    if after:
        frame = frame.with_columns(after).select(names)
    frame = frame.with_row_index("__row")
    if frame.is_empty():
        msg = "records: no records (got an empty frame); cost per accepted outcome needs at least one attempt"
        raise ValueError(msg)
    for name in TIMESTAMPS:
        if f"__{name}" not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=pl.Int64).alias(f"__{name}"))
    _check_values(frame)
    # Past the checks only the parsed times are read (``__started_at``...): the texts (two of ~40 bytes
    # a record for a runner's records) are not held through the analysis.
    frame = frame.drop(TIMESTAMPS)
    frame = _derive(frame, machine_rate=machine_rate)
    frame = _human_time(frame, review_rate=review_rate)
    return frame, columns


def _optional_columns(schema: pl.Schema, empty: frozenset[str]) -> tuple[list[pl.Expr], list[pl.Expr], list[str]]:
    """The optional columns read before the sort, those added after it (``empty``: null on every record), their names.

    Each present column's type is checked (a timestamp's too, when every value is null).
    """
    wanted: list[pl.Expr] = []
    after: list[pl.Expr] = []
    names: list[str] = []
    for name, dtype in _OPTIONAL.items():
        if name not in schema:
            wanted.append(pl.lit(None, dtype=dtype).alias(name))
            names.append(name)
        elif name in TIMESTAMPS:
            parsed = _timestamp(name, schema[name]).alias(f"__{name}")
            if name in empty:
                after += [pl.lit(None, dtype=schema[name]).alias(name), pl.lit(None, dtype=pl.Int64).alias(f"__{name}")]
            else:
                wanted += [pl.col(name), parsed]
            names += [name, f"__{name}"]
        else:
            _check_type(name, schema[name], dtype)
            if name in empty:
                after.append(pl.lit(None, dtype=dtype).alias(name))
            else:
                wanted.append(pl.col(name).cast(dtype))
            names.append(name)
    return wanted, after, names


def _null_columns(records: FrameLike, schema: pl.Schema) -> frozenset[str]:
    """The optional columns, but the key's, null on every record of a DataFrame (a LazyFrame is not read twice: none).

    The sort of the records copies every column it carries; such a column is the same column
    added after it as one null (a polars scalar column), not copied.
    """
    names = [n for n in _OPTIONAL if n in schema and n not in _KEY]
    if not isinstance(records, pl.DataFrame) or records.height == 0 or not names:
        return frozenset()
    counts = records.select(pl.col(n).null_count() for n in names).row(0)
    return frozenset(n for n, c in zip(names, counts, strict=True) if c == records.height)


def _duplicate_keys(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows whose key another row has (none when every key's hash is distinct: equal keys hash alike)."""
    if frame.select(pl.struct(_KEY).hash(seed=0).n_unique()).item() == frame.height:
        return frame.clear()
    return frame.filter(pl.struct(_KEY).is_duplicated())


def _per_record_rules() -> list[tuple[str, pl.Expr, str]]:
    """The per-record refusals after the required fields' nulls, in their order: (field, bad mask, expected).

    The one list both :func:`_check_values`' single query and :func:`_check_per_record`'s messages read, so
    a refusal added here is looked for and named alike.
    """
    rules = [(name, pl.col(name) < 0, "an integer >= 0") for name in ("attempt", "trial")]
    rules += [
        (name, pl.col(name).is_nan() | pl.col(name).is_infinite() | (pl.col(name) < 0), "a number >= 0")
        for name in ("cost_usd", *COST_PARTS, "machine_seconds")
    ]
    parts_set = pl.any_horizontal(pl.col(p).is_not_null() for p in COST_PARTS)
    rules.append(
        (
            "cost_usd",
            pl.col("cost_usd").is_not_null() & parts_set,
            "null when a cost part is set (spend would be counted twice)",
        )
    )
    rules += [
        (name, pl.col(name).is_not_null() & pl.col(f"__{name}").is_null(), "an RFC 3339 timestamp with offset")
        for name in TIMESTAMPS
    ]
    rules += [
        (end, pl.col(f"__{end}") < pl.col(f"__{start}"), f"a time at or after {start}")
        for start, end in (("started_at", "ended_at"), *_INTERVALS)
    ]
    return rules


def _bad_masks() -> list[pl.Expr]:
    """Every per-record refusal of :func:`_check_values` but the duplicate keys and the groups, as masks."""
    return [pl.col(name).is_null() for name in _REQUIRED] + [mask for _, mask, _ in _per_record_rules()]


def _check_values(frame: pl.DataFrame) -> None:
    """Refuse records that break the contract: the first refusal in the order below, with its record.

    Every per-record refusal is first looked for in one query (a filter per field was most of a
    small gate's cost summary); only when one is found are the fields checked one by one, in their
    order, for the message, as they always were (required fields, duplicate keys, values, groups).
    """
    found = any(frame.select(mask.any().alias(f"m{i}") for i, mask in enumerate(_bad_masks())).row(0))
    if found:
        _check_required(frame)
    _check_duplicates(frame)
    if found:
        _check_per_record(frame)
    _check_groups(frame)


def _check_required(frame: pl.DataFrame) -> None:
    for name in _REQUIRED:
        nulls = frame.filter(pl.col(name).is_null())
        if not nulls.is_empty():
            where = "a record" if name == "record_id" else f"record {nulls['record_id'][0]!r}"
            msg = f"records: {where}: field {name!r}: expected a value (got null); {nulls.height} record(s) in all"
            raise ValueError(msg)


def _check_duplicates(frame: pl.DataFrame) -> None:
    dupes = _duplicate_keys(frame)
    if not dupes.is_empty():
        first = dupes.sort("__row").row(0, named=True)
        same = dupes.filter(pl.all_horizontal(pl.col(k).eq_missing(first[k]) for k in _KEY))
        msg = (
            f"records: duplicate key (system, case_id, case_version, trial, attempt) = "
            f"{tuple(first[k] for k in _KEY)!r} in records {record_ids_text(same['record_id'].to_list(), same.height)}"
        )
        raise ValueError(msg)


def _check_per_record(frame: pl.DataFrame) -> None:
    """The per-record refusals after the required fields' nulls, one field at a time, in their order."""
    for name, bad, expected in _per_record_rules():
        _first_bad(frame, bad, name, expected)


def _check_groups(frame: pl.DataFrame) -> None:
    if frame.get_column("case_group").null_count() == frame.height:
        return  # no case carries a group: none carries two
    groups = collect_small(  # one query, as the two eager operations it was ran
        frame.lazy()
        .group_by("case_id", "case_version")
        .agg(pl.col("case_group").unique().sort(nulls_last=True))
        .filter(pl.col("case_group").list.len() > 1),
        frame.height,
    )
    if not groups.is_empty():
        row = groups.sort("case_id", "case_version").row(0, named=True)
        msg = (
            f"records: case {row['case_id']!r} carries several case_group values (got {row['case_group']}); "
            "a case belongs to exactly one group (or to none)"
        )
        raise ValueError(msg)


def _derive(frame: pl.DataFrame, *, machine_rate: float | None) -> pl.DataFrame:
    undivided = pl.col("cost_usd")
    if machine_rate is None:
        imputed = pl.lit(None, dtype=pl.Float64)
    else:
        imputed = (
            pl.when(undivided.is_null() & pl.col("cost_execution_usd").is_null())
            .then(pl.col("machine_seconds") / 3600 * machine_rate)
            .otherwise(None)
        )
    execution = pl.coalesce(pl.col("cost_execution_usd"), pl.col("__imputed"))
    any_part = pl.any_horizontal(
        pl.col("cost_model_usd").is_not_null(), pl.col("cost_tool_usd").is_not_null(), execution.is_not_null()
    )
    parts_sum = pl.sum_horizontal(
        pl.col("cost_model_usd").fill_null(0.0), pl.col("cost_tool_usd").fill_null(0.0), execution.fill_null(0.0)
    )
    unit = (
        pl.when(pl.col("case_group").is_not_null())
        .then(pl.lit("group\x1f") + pl.col("case_group"))
        .otherwise(pl.lit("case\x1f") + pl.col("case_id") + pl.lit("\x1f") + pl.col("case_version").fill_null("\x00"))
    )
    return (
        frame.with_columns(imputed.alias("__imputed"))
        .with_columns(
            execution.alias("__execution"),
            pl.when(undivided.is_not_null())
            .then(undivided)
            .when(any_part)
            .then(parts_sum)
            .otherwise(None)
            .alias("__spend"),
            is_final_attempt().alias("__final"),
            unit.alias("__unit"),
            pl.col("__started_at").alias("__start_us"),
            pl.max_horizontal("__ended_at", "__review_ended_at", "__correction_ended_at").alias("__end_us"),
            (pl.col("__started_at").is_null() | pl.col("__ended_at").is_null()).alias("__no_timestamps"),
        )
        .with_columns((pl.col("__final") & (pl.col("outcome") == PASSED)).alias("__accepted"))
    )


def _human_time(frame: pl.DataFrame, *, review_rate: float | None) -> pl.DataFrame:
    ends = [pl.col(f"__{name}").is_not_null() for pair in _INTERVALS for name in pair]
    # no review or correction time on any record (a null count, no query): nothing recorded, no interval
    timed = any(frame.get_column(f"__{name}").null_count() < frame.height for pair in _INTERVALS for name in pair)
    recorded = frame.filter(pl.any_horizontal(ends)) if timed else frame.clear()
    if not recorded.is_empty() and review_rate is None:
        ids = record_ids_text(recorded["record_id"].to_list(), recorded.height)
        msg = (
            f"review_rate_usd_per_hour is required (CLI: --review-rate USD_PER_HOUR): human review or correction "
            f"time is recorded on {recorded.height} record(s), e.g. {ids}, "
            "and cannot be priced without an hourly rate; pass 0 explicitly to leave it unpriced"
        )
        raise ReviewRateRequiredError(msg)
    half_open = pl.lit(False)
    for start, end in _INTERVALS:
        half_open = half_open | (pl.col(f"__{start}").is_null() != pl.col(f"__{end}").is_null())
    if not timed:  # the two columns a frame without recorded time gets below, in one query
        return frame.with_columns(half_open.alias("__human_unknown"), pl.lit(0.0).alias("__human_s"))
    frame = frame.with_columns(half_open.alias("__human_unknown"))
    rows: list[np.ndarray] = []
    starts: list[np.ndarray] = []
    stops: list[np.ndarray] = []
    owners: list[Any] = []
    for start, end in _INTERVALS:
        complete = frame.filter(pl.col(f"__{start}").is_not_null() & pl.col(f"__{end}").is_not_null())
        rows.append(complete["__row"].to_numpy())
        starts.append(complete[f"__{start}"].to_numpy())
        stops.append(complete[f"__{end}"].to_numpy())
        owners.extend(complete["reviewer"].to_list())
    row = np.concatenate(rows)
    if row.size == 0:
        return frame.with_columns(pl.lit(0.0).alias("__human_s"))
    origin = min(int(s.min()) for s in starts if s.size)
    begin = (np.concatenate(starts) - origin) / 1e6
    finish = (np.concatenate(stops) - origin) / 1e6
    shares = attribute_overlaps(begin, finish, owners=owners)
    per_row = np.bincount(row.astype(np.int64), weights=shares, minlength=frame.height)
    return frame.with_columns(pl.Series("__human_s", per_row, dtype=pl.Float64))


def explode_groups(frame: pl.DataFrame, by: tuple[str, ...]) -> pl.DataFrame:
    """One row per (attempt, group): with ``slice`` in ``by``, an attempt counts in each of its slices
    (duplicates in a list once) and attempts without a slice go to the group ``None``.

    Parameters
    ----------
    frame
        Prepared attempts.
    by
        The checked grouping columns.

    Returns
    -------
    polars.DataFrame
        ``frame`` itself without ``slice`` in ``by``, else one row per attempt and slice.
    """
    if SLICE not in by:
        return frame
    listed = pl.col("slices").list.drop_nulls().list.unique().list.sort()
    return frame.with_columns(
        pl.when(listed.list.len() > 0).then(listed).otherwise(pl.lit([None], dtype=pl.List(pl.String))).alias(SLICE)
    ).explode(SLICE)
