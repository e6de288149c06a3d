"""Per-case sufficient statistics: everything downstream starts from these.

One row per (system, case_id, case_version): valid trials ``n`` (passed + failed +
resource_killed), successes ``c`` (passed), resource kills, infrastructure errors, and the
case's group. A trial's outcome is that of its highest ``attempt`` (its correction lineage);
``infra_error`` is neither a success nor a failure, so it lowers ``n`` and is counted apart.
"""

from __future__ import annotations

import polars as pl

from gatestats.errors import GatestatsError
from gatestats.vocabulary import FrameLike, final_attempts, is_valid_outcome

__all__ = ["CASE_KEY", "CaseSetError", "case_summary"]

#: A case is a case id at one version: different versions are different cases.
CASE_KEY = ("case_id", "case_version")

_REQUIRED = ("system", "case_id", "case_version", "case_group", "trial", "attempt", "outcome")


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
    # A trial's outcome is that of its highest attempt (the vocabulary's "which attempt counts").
    final = final_attempts(lazy.select(_REQUIRED))
    per_case = (
        final.group_by("system", *CASE_KEY)
        .agg(
            pl.col("case_group").n_unique().alias("__n_groups"),
            pl.col("case_group").first(),
            pl.len().cast(pl.Int64).alias("n_trials"),
            is_valid_outcome().sum().cast(pl.Int64).alias("n"),
            (pl.col("outcome") == "passed").sum().cast(pl.Int64).alias("c"),
            (pl.col("outcome") == "resource_killed").sum().cast(pl.Int64).alias("n_resource_killed"),
            (pl.col("outcome") == "infra_error").sum().cast(pl.Int64).alias("n_infra_errors"),
        )
        .sort("system", *CASE_KEY, nulls_last=False)
        .collect()
    )
    _check_consistency(per_case, allow_several_versions=allow_several_versions)
    return per_case.drop("__n_groups").select(
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


def _check_consistency(per_case: pl.DataFrame, *, allow_several_versions: bool) -> None:
    split = per_case.filter(pl.col("__n_groups") > 1)
    if not split.is_empty():
        row = split.row(0, named=True)
        msg = (
            f"case {row['case_id']!r} of system {row['system']!r} carries more than one case_group; "
            "a case belongs to exactly one group"
        )
        raise CaseSetError(msg)
    if allow_several_versions:
        return
    versions = per_case.group_by("system", "case_id").agg(pl.col("case_version").unique(maintain_order=True))
    mixed = versions.filter(pl.col("case_version").list.len() > 1)
    if not mixed.is_empty():
        row = mixed.row(0, named=True)
        msg = (
            f"case {row['case_id']!r} of system {row['system']!r} has records at several case versions "
            f"(got {row['case_version']}); analyse one case-set version at a time"
        )
        raise CaseSetError(msg)
