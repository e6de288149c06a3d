"""Per-case sufficient statistics: everything downstream starts from these.

One row per (system, case_id, case_version): valid trials ``n`` (passed + failed +
resource_killed), successes ``c`` (passed), resource kills, infrastructure errors, and the
case's group. A trial's outcome is that of its highest ``attempt`` (its correction lineage);
``infra_error`` is neither a success nor a failure, so it lowers ``n`` and is counted apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from gatestats._query import EAGER
from gatestats.errors import GatestatsError
from gatestats.vocabulary import (
    INFRA_ERROR,
    PASSED,
    RESOURCE_KILLED,
    TRIAL_KEY,
    FrameLike,
    final_attempts,
    is_valid_outcome,
)

__all__ = ["ANALYSIS_COLUMNS", "CASE_KEY", "CaseSetError", "case_summary"]

#: A case is a case id at one version: different versions are different cases.
CASE_KEY = ("case_id", "case_version")

#: The record columns :func:`case_summary`, and so :func:`gatestats.estimators.analyze`, read:
#: ``load_records(path, columns=ANALYSIS_COLUMNS)`` checks every column and keeps only these.
ANALYSIS_COLUMNS: tuple[str, ...] = ("system", "case_id", "case_version", "case_group", "trial", "attempt", "outcome")
_REQUIRED = ANALYSIS_COLUMNS
_SUMS = ("n_trials", "n", "c", "n_resource_killed", "n_infra_errors")
#: An in-memory frame of at most this many records is reduced as polars runs its eager operations
#: (:data:`gatestats._query.EAGER`): on a gate's few hundred records the streaming engine's start costs
#: about as much again as the counting. Larger frames and every scan stay on the streaming engine.
_SMALL = 65_536


class CaseSetError(GatestatsError, ValueError):
    """The records do not describe one consistent case set (e.g. mixed case versions)."""


def case_summary(records: FrameLike, *, allow_several_versions: bool = False) -> pl.DataFrame:
    """Reduce trial records to per-case counts.

    Parameters
    ----------
    records
        Validated run records (``DataFrame`` or ``LazyFrame``) with at least the columns
        ``system, case_id, case_version, case_group, trial, attempt, outcome``.
    allow_several_versions
        Accept a case id at several versions for one system (each version is its own case);
        for callers that restrict to shared versions themselves. Otherwise that is an error.

    Returns
    -------
    polars.DataFrame
        Columns ``system, case_id, case_version, case_group, n_trials, n, c,
        n_resource_killed, n_infra_errors``, sorted by system and case, where ``n_trials`` is the
        number of distinct trials, ``n`` the valid ones and ``c`` the passes.

    Raises
    ------
    CaseSetError
        A case id appears with two versions for one system, or a case has two groups.

    Examples
    --------
    >>> import polars as pl
    >>> records = pl.DataFrame({"system": ["a"] * 3, "case_id": ["x"] * 3,
    ...     "case_version": [None] * 3, "case_group": [None] * 3, "trial": [0, 1, 1],
    ...     "attempt": [0, 0, 1], "outcome": ["passed", "infra_error", "failed"]})
    >>> case_summary(records).select("n_trials", "n", "c", "n_infra_errors").row(0)
    (2, 2, 1, 0)
    """
    if not isinstance(records, pl.DataFrame | pl.LazyFrame):
        msg = f"records must be a polars DataFrame or LazyFrame (got {type(records).__name__})"
        raise TypeError(msg)
    lazy = records.lazy()
    missing = [name for name in _REQUIRED if name not in lazy.collect_schema()]
    if missing:
        msg = f"records lack required column(s) {missing}"
        raise ValueError(msg)
    small = isinstance(records, pl.DataFrame) and records.height <= _SMALL
    flags = _column_flags(records) if isinstance(records, pl.DataFrame) and small else None
    per_case = _per_case_counts(lazy.select(_REQUIRED), small=small, flags=flags)
    _check_consistency(per_case, allow_several_versions=allow_several_versions)
    return per_case.select(
        "system",
        "case_id",
        "case_version",
        "case_group",
        "n_trials",
        "n",
        "c",
        "n_resource_killed",
        "n_infra_errors",
    )


def _aggregations(*, grouped: bool = True, group_type: pl.DataType | None = None) -> list[pl.Expr]:
    """Per-case columns over the rows that count (one row per trial: its highest attempt).

    ``grouped=False``: no record names a case group, so every case has one group, null (of
    ``group_type``, the column's type).
    """
    outcome = pl.col("outcome")
    group = pl.col("case_group")
    return [
        group.n_unique().cast(pl.UInt32).alias("__n_groups") if grouped else pl.lit(1, pl.UInt32).alias("__n_groups"),
        group.first() if grouped else pl.lit(None, group_type).alias("case_group"),
        pl.len().cast(pl.Int64).alias("n_trials"),
        is_valid_outcome().sum().cast(pl.Int64).alias("n"),
        (outcome == PASSED).sum().cast(pl.Int64).alias("c"),
        (outcome == RESOURCE_KILLED).sum().cast(pl.Int64).alias("n_resource_killed"),
        (outcome == INFRA_ERROR).sum().cast(pl.Int64).alias("n_infra_errors"),
    ]


def _column_flags(records: pl.DataFrame) -> tuple[bool, bool]:
    """Whether any trial of ``records`` was retried and any record names a case group, read off two columns.

    What the first query of :func:`_per_case_counts` asks, without a query (an in-memory frame's columns).
    """
    retried = (records.get_column("attempt") > 0).any()
    return bool(retried), bool(records.get_column("case_group").is_not_null().any())


def _per_case_counts(
    lazy: pl.LazyFrame, *, small: bool = False, flags: tuple[bool, bool] | None = None
) -> pl.DataFrame:
    """Per-case counts over each trial's highest attempt, sorted by system and case.

    Exactly ``final_attempts(lazy).group_by(case).agg(...)``, computed without joining every
    record: every record is counted once (one hash pass), then the few trials that were retried
    (``attempt > 0``) are resolved exactly and their superseded attempts taken back out. The
    retried trials' records are found by a hash of their trial key; a hash collision only adds
    a trial that was not retried to the exact resolution, where it resolves to itself. The
    passes over the records run on polars' streaming engine, so a scan of a file larger than
    memory is reduced with memory for the per-case counts (and the retried trials) only;
    ``small`` (an in-memory frame of few records) runs them with polars' eager flags instead. The counts
    are sums of integers, sorted at the end: the same frame either way. A ``small`` frame with a retried trial
    is resolved whole in one query (``final_attempts`` then the group-by, the definition): on a few hundred
    records the passes that resolve only the retried trials cost about three times as much. ``flags``:
    :func:`_column_flags` of the records when the caller has read them, else one query asks.
    """

    def collect(query: pl.LazyFrame) -> pl.DataFrame:
        return query.collect(optimizations=EAGER) if small else query.collect(engine="streaming")

    key = ["system", *CASE_KEY]
    trial_hash = pl.struct(TRIAL_KEY).hash(seed=0)
    # Whether any trial was retried and any record names a case group, in one pass (small record
    # sets, e.g. a gate simulation's, pay per query); without any group (the common case) the group
    # columns are constants, not aggregations.
    if flags is None:
        flags = collect(lazy.select((pl.col("attempt") > 0).any(), pl.col("case_group").is_not_null().any())).row(0)
    any_retried, grouped = flags
    group_type = lazy.collect_schema()["case_group"]
    if any_retried and small:
        resolved = final_attempts(lazy).group_by(key).agg(_aggregations(grouped=grouped, group_type=group_type))
        return collect(resolved).sort(key, nulls_last=False)
    retried = pl.Series("h", [], dtype=pl.UInt64)
    if any_retried:
        hashes = lazy.filter(pl.col("attempt") > 0).select(trial_hash.alias("h")).unique()
        retried = collect(hashes).to_series()
    counts = collect(lazy.group_by(key).agg(_aggregations(grouped=grouped, group_type=group_type)))
    if retried.is_empty():
        pass  # no trial was retried: every record is its trial's counting attempt
    elif counts.get_column("__n_groups").max() != 1:
        # Some case has two groups; whether only in superseded attempts needs the exact count.
        counts = final_attempts(lazy).group_by(key).agg(_aggregations()).collect()
    else:
        touched = collect(lazy.filter(trial_hash.is_in(retried.implode()))).lazy()
        every = touched.group_by(key).agg(_aggregations()[2:])
        final = final_attempts(touched).group_by(key).agg(_aggregations()[2:])
        delta = every.join(final, on=key, nulls_equal=True, suffix="__final").select(
            *key, *((pl.col(f"{s}__final") - pl.col(s)).alias(f"{s}__delta") for s in _SUMS)
        )
        counts = (
            counts.lazy()
            .join(delta, on=key, how="left", nulls_equal=True)
            .with_columns((pl.col(s) + pl.col(f"{s}__delta").fill_null(0)).alias(s) for s in _SUMS)
            .drop(f"{s}__delta" for s in _SUMS)
            .collect()
        )
    return counts.sort(key, nulls_last=False)


def _refuse_first(bad: pl.DataFrame, message: Callable[[Mapping[str, object]], str]) -> None:
    """Raise :class:`CaseSetError` with the ``message`` of the first row of ``bad``; nothing when it is empty."""
    if not bad.is_empty():
        raise CaseSetError(message(bad.row(0, named=True)))


def _check_consistency(per_case: pl.DataFrame, *, allow_several_versions: bool) -> None:
    if (per_case.get_column("__n_groups") > 1).any():  # a Series test, no query, when every case has one group
        _refuse_first(
            per_case.filter(pl.col("__n_groups") > 1),
            lambda row: (
                f"case {row['case_id']!r} of system {row['system']!r} carries more than one case_group; "
                "a case belongs to exactly one group"
            ),
        )
    # Sorted by system, case id and version: a case id at two versions has two rows in a row.
    repeated = (
        (pl.int_range(pl.len()) > 0)
        & pl.col("system").eq_missing(pl.col("system").shift())
        & pl.col("case_id").eq_missing(pl.col("case_id").shift())
    )
    if allow_several_versions or not per_case.select(repeated.any()).item():
        return
    versions = per_case.group_by("system", "case_id", maintain_order=True).agg(
        pl.col("case_version").unique(maintain_order=True)
    )
    _refuse_first(
        versions.filter(pl.col("case_version").list.len() > 1),
        lambda row: (
            f"case {row['case_id']!r} of system {row['system']!r} has records at several case versions "
            f"(got {row['case_version']}); analyse one case-set version at a time"
        ),
    )
