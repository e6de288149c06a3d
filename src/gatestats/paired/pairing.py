"""Pairing the cases of two systems on (case_id, case_version).

Baseline and candidate run the same cases, so their outcomes are paired by construction. A case
is a case id at one version: the pair is made on ``(case_id, case_version)``, never on the id
alone. Cases that only one system ran are *listed* in the result (``unpaired_baseline``,
``unpaired_candidate``), never silently dropped. A case id that the two systems ran at different
versions is an error (:class:`CaseVersionMismatchError`) unless the caller explicitly restricts
the comparison to the shared versions (``shared_versions_only=True``); the excluded versions are
then listed too.

Per-case counts follow :func:`gatestats.estimators.case_summary` exactly (a trial's outcome is
that of its highest ``attempt``; ``n`` counts passed, failed and resource-killed trials, ``c`` the
passed ones; ``infra_error`` is neither). They are computed here once for all systems and laid
out as a (systems x cases) matrix, so that any number of pairs is compared with array operations
and no Python loop over cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, get_args

import polars as pl

from gatestats._query import EAGER
from gatestats._typing import JSONObject
from gatestats.errors import GatestatsError
from gatestats.estimators import CaseSetError, case_summary, case_values
from gatestats.records.columns import system_records
from gatestats.vocabulary import FrameLike, Metric, check_choice

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "CaseTable",
    "CaseVersionMismatchError",
    "NoPairedCasesError",
    "PairedCases",
    "UnknownSystemError",
    "build_case_table",
    "case_label",
    "case_table",
    "checked_per_case",
    "pair_cases",
    "pair_table",
]

_REQUIRED = ("case_id", "case_version", "case_group", "trial", "attempt", "outcome")
_SHOWN = 10


class UnknownSystemError(GatestatsError, ValueError):
    """A system named by the caller has no records."""


class CaseVersionMismatchError(CaseSetError):
    """The two systems ran one case id at different versions (and the caller did not restrict)."""


class NoPairedCasesError(GatestatsError, ValueError):
    """The two systems share no case: there is nothing to pair."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseTable:
    """Per-case counts of every system, as (systems x cases) arrays.

    ``present[s, j]`` says whether system ``s`` ran case ``j``; ``n``/``c`` are its valid trials and
    passes (0 where absent); ``value`` its per-case estimate of ``metric`` at ``k`` (NaN where
    absent or undefined, i.e. ``n < k``). ``labels[j]`` is ``case_id`` or ``case_id@case_version``
    (:func:`case_label`; two cases can share a label, e.g. ``a@v`` unversioned and ``a`` at ``v``);
    ``case_keys[j]`` is the case's ``(case_id, case_version)``, unique, by which to find its column;
    ``id_codes[j]`` codes the case id alone; ``groups[j]`` the case group (``None`` when no case
    carries one; a case without a group is its own group).
    """

    systems: tuple[str, ...]
    labels: npt.NDArray[np.object_]
    case_keys: tuple[tuple[str, str | None], ...]
    id_codes: npt.NDArray[np.int64]
    groups: npt.NDArray[np.int64] | None
    n: npt.NDArray[np.int64]
    c: npt.NDArray[np.int64]
    n_infra_errors: npt.NDArray[np.int64]
    present: npt.NDArray[np.bool_]
    value: npt.NDArray[np.float64]
    metric: Metric
    k: int
    #: Every system of the records (also those filtered out), for messages.
    known_systems: tuple[str, ...] = ()

    def index(self, system: str, *, role: str) -> int:
        """Row of ``system`` in the table.

        Parameters
        ----------
        system
            The system's name.
        role
            What the caller calls it (``baseline``, ``candidate``, ...), for the message.

        Returns
        -------
        int
            The row.

        Raises
        ------
        UnknownSystemError
            ``system`` has no records (the message names ``role`` and the systems present).
        """
        try:
            return self.systems.index(system)
        except ValueError:
            known = self.known_systems or self.systems
            shown = ", ".join(repr(s) for s in known[:_SHOWN])
            more = f" and {len(known) - _SHOWN} more" if len(known) > _SHOWN else ""
            msg = f"{role}: no records for system {system!r} (got systems {shown}{more})"
            raise UnknownSystemError(msg) from None


def case_label(case_id: object, case_version: object) -> str:
    """The label a :class:`CaseTable` gives a case: its id, or ``id@version`` when it has a version.

    :func:`_layout` writes the same labels as a polars expression (``tests/paired`` checks the two agree).

    Parameters
    ----------
    case_id
        The case's id.
    case_version
        Its version (None: none).

    Returns
    -------
    str
        The label.

    Examples
    --------
    >>> case_label("c-1", None), case_label("c-1", "v2")
    ('c-1', 'c-1@v2')
    """
    return str(case_id) if case_version is None else f"{case_id}@{case_version}"


def build_case_table(
    records: FrameLike,
    *,
    metric: Metric = "pass_hat_k",
    k: int = 1,
    systems: Sequence[str] | None = None,
    system_column: str = "system",
    allow_several_versions: bool = False,
) -> CaseTable:
    """Reduce trial records to a :class:`CaseTable` (one pass over the records).

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``) with ``system_column`` and the columns
        ``case_id, case_version, case_group, trial, attempt, outcome``.
    metric, k
        The per-case estimate to tabulate (``pass_hat_k`` at ``k = 1`` is the pass rate c/n).
    systems
        Keep only these systems (all when ``None``); names without records are simply absent
        from the table (:meth:`CaseTable.index` raises :class:`UnknownSystemError` for them).
    system_column
        Column that names the system.
    allow_several_versions
        Allow a system to carry one case id at several versions (only for comparisons restricted
        to shared versions); otherwise that is a :class:`CaseVersionMismatchError`.

    Returns
    -------
    CaseTable
        Per-case counts and estimates of every system.

    Raises
    ------
    TypeError
        ``records`` is not a polars frame.
    ValueError
        ``k`` or ``metric`` outside its domain, a required column missing, a null system.
    CaseSetError
        A case in different case groups, or (without ``allow_several_versions``) at several versions.

    Examples
    --------
    >>> import polars as pl
    >>> records = pl.DataFrame({"system": ["a", "a", "b"], "case_id": ["x", "y", "x"],
    ...     "case_version": None, "case_group": None, "trial": 0, "attempt": 0,
    ...     "outcome": ["passed", "failed", "failed"]})
    >>> table = build_case_table(records)
    >>> table.systems, table.labels.tolist(), table.present.tolist()
    (('a', 'b'), ['x', 'y'], [[True, True], [True, False]])
    """
    per_case = checked_per_case(records, metric=metric, k=k, systems=systems, system_column=system_column)
    table = case_table(per_case, metric=metric, k=k, allow_several_versions=allow_several_versions)
    if systems is not None and set(systems) - set(table.systems):
        everything = records.lazy().select(pl.col(system_column).cast(pl.String)).unique().collect().to_series()
        table = replace(table, known_systems=tuple(sorted(everything.drop_nulls().to_list())))
    return table


def checked_per_case(
    records: FrameLike, *, metric: Metric, k: int, systems: Sequence[str] | None, system_column: str
) -> pl.DataFrame:
    """The options checked and the records of ``systems`` reduced to per-case counts (the first step of
    :func:`build_case_table`, which :mod:`gatestats.paired.small` shares).

    Parameters
    ----------
    records, metric, k, systems, system_column
        As :func:`build_case_table`.

    Returns
    -------
    polars.DataFrame
        ``case_summary(records of systems, allow_several_versions=True)``, ``system`` never null.

    Raises
    ------
    TypeError
        ``records`` is not a polars frame.
    ValueError
        ``k`` or ``metric`` outside its domain, a required column missing, a null system.
    UnknownSystemError
        None of ``systems`` has a record.
    """
    if not isinstance(records, pl.DataFrame | pl.LazyFrame):
        msg = f"records must be a polars DataFrame or LazyFrame (got {type(records).__name__})"
        raise TypeError(msg)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        msg = f"k must be an integer >= 1 (got {k!r})"
        raise ValueError(msg)
    check_choice(metric, get_args(Metric), "metric")
    lazy = system_records(records.lazy(), system_column, _REQUIRED)
    if systems is not None:
        lazy = lazy.filter(pl.col("system").is_in(list(systems)))
        _some_system_present(records, systems, system_column)
    per_case = case_summary(lazy, allow_several_versions=True)
    if per_case["system"].null_count():
        msg = f"column {system_column!r} is null for some records; every record needs a system"
        raise ValueError(msg)
    return per_case


def case_table(
    per_case: pl.DataFrame, *, metric: Metric = "pass_hat_k", k: int = 1, allow_several_versions: bool = False
) -> CaseTable:
    """A :class:`CaseTable` from records already reduced to per-case counts (what :func:`build_case_table` lays out).

    For a caller that holds :func:`~gatestats.estimators.case_summary` of its records (with
    ``allow_several_versions=True``) and needs the table too: the same table, without reading the
    records again.

    Parameters
    ----------
    per_case
        ``case_summary(records, allow_several_versions=True)``, ``system`` never null.
    metric, k
        The per-case estimate to tabulate (as :func:`build_case_table`).
    allow_several_versions
        As :func:`build_case_table`.

    Returns
    -------
    CaseTable
        The table of every system of ``per_case`` (``known_systems``: those).

    Raises
    ------
    ValueError
        ``k`` or ``metric`` outside its domain.
    CaseSetError
        A case in different case groups, or (without ``allow_several_versions``) at several versions.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        msg = f"k must be an integer >= 1 (got {k!r})"
        raise ValueError(msg)
    check_choice(metric, get_args(Metric), "metric")
    found = tuple(sorted(per_case["system"].unique().to_list()))
    _check_groups(per_case)
    if not allow_several_versions:
        _check_one_version(per_case)
    return replace(_layout(per_case, found, metric=metric, k=k), known_systems=found)


def _some_system_present(records: FrameLike, systems: Sequence[str], system_column: str) -> None:
    """Raise :class:`UnknownSystemError` when none of ``systems`` has a record (an empty table cannot be paired)."""
    column = records.lazy().select(pl.col(system_column).cast(pl.String)).unique().collect().to_series()
    present = sorted(column.drop_nulls().to_list())
    if not set(systems) & set(present):
        shown = ", ".join(repr(s) for s in present[:_SHOWN]) + (" ..." if len(present) > _SHOWN else "")
        named = ", ".join(repr(s) for s in systems)
        msg = f"no records for system(s) {named} in column {system_column!r} (got {shown})"
        raise UnknownSystemError(msg)


def _check_groups(per_case: pl.DataFrame) -> None:
    # One group per case within a system is checked by case_summary; here: across systems.
    if per_case.get_column("case_group").null_count() == per_case.height:
        return  # no case names a group (a Series count, no query)
    across = (
        per_case.lazy()
        .filter(pl.col("case_group").is_not_null())
        .group_by("case_id", "case_version")
        .agg(pl.col("case_group").unique())
        .filter(pl.col("case_group").list.len() > 1)
        .collect(optimizations=EAGER)  # one query, as the three eager operations it was ran
    )
    if not across.is_empty():
        row = across.row(0, named=True)
        msg = (
            f"case {row['case_id']!r} carries different case_group values in different systems "
            f"(got {sorted(row['case_group'])}); a case belongs to exactly one group"
        )
        raise CaseSetError(msg)


def _check_one_version(per_case: pl.DataFrame) -> None:
    if not per_case.select(pl.struct("system", "case_id").is_duplicated().any()).item():
        return
    versions = per_case.group_by("system", "case_id").agg(pl.col("case_version").unique().sort(nulls_last=True))
    row = versions.filter(pl.col("case_version").list.len() > 1).sort("system", "case_id").row(0, named=True)
    msg = (
        f"case {row['case_id']!r} of system {row['system']!r} has records at several case versions "
        f"(got {row['case_version']}); compare one case-set version at a time, or restrict to the "
        "versions both systems ran (shared_versions_only / --shared-versions-only)"
    )
    raise CaseVersionMismatchError(msg)


def _layout(per_case: pl.DataFrame, systems: tuple[str, ...], *, metric: Metric, k: int) -> CaseTable:
    """The (systems x cases) arrays of ``per_case``, in two polars queries (three with case groups).

    The cases (one column per distinct ``(case_id, case_version)``, sorted, a null version first),
    their labels and id codes in one query; every row's column and system in another (the joins
    on the cases and on ``systems``, as before, with each row's place in ``per_case`` kept), so
    that ``n``, ``c``, the infra errors and the per-case values are read from ``per_case``'s own
    columns (:func:`~gatestats.estimators.case_values` on them, as
    :func:`~gatestats.estimators.per_case_values` computes it: NaN where undefined).
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    keys = (
        per_case.lazy()
        .select("case_id", "case_version")
        .unique()
        .sort("case_id", "case_version", nulls_last=False)
        .with_row_index("__key")
        .with_columns(
            pl.when(pl.col("case_version").is_null())  # case_label's rule, as an expression
            .then(pl.col("case_id"))
            .otherwise(pl.col("case_id") + pl.lit("@") + pl.col("case_version"))
            .alias("__label"),
            pl.col("case_id").rank("dense").cast(pl.Int64).alias("__id_code"),
        )
        .collect(optimizations=EAGER)
    )
    system_frame = pl.DataFrame({"system": list(systems)}).with_row_index("__system")
    if not systems:  # no row: the join on an untyped system column refuses, with polars' eager message as before
        per_case.join(system_frame, on="system")
    rows = (
        per_case.lazy()
        .select("system", "case_id", "case_version", "case_group")
        .with_row_index("__row")
        .join(keys.lazy().select("case_id", "case_version", "__key"), on=["case_id", "case_version"], nulls_equal=True)
        .join(system_frame.lazy(), on="system")
        .select("__row", "__key", "__system", "case_group")
        .collect(optimizations=EAGER)
    )
    r_idx = rows["__row"].to_numpy().astype(np.intp)
    s_idx = rows["__system"].to_numpy().astype(np.intp)
    k_idx = rows["__key"].to_numpy().astype(np.intp)
    shape = (len(systems), keys.height)
    n = np.zeros(shape, dtype=np.int64)
    c = np.zeros(shape, dtype=np.int64)
    infra = np.zeros(shape, dtype=np.int64)
    present = np.zeros(shape, dtype=np.bool_)
    value = np.full(shape, np.nan)
    n_all, c_all = per_case["n"].to_numpy(), per_case["c"].to_numpy()
    n[s_idx, k_idx] = n_all[r_idx]
    c[s_idx, k_idx] = c_all[r_idx]
    infra[s_idx, k_idx] = per_case["n_infra_errors"].to_numpy()[r_idx]
    present[s_idx, k_idx] = True
    found = case_values(n_all, c_all, k=k, metric=metric)
    value[s_idx, k_idx] = np.where(found.defined, found.values, np.nan)[r_idx]
    groups = _group_codes(rows, keys)
    return CaseTable(
        systems=systems,
        labels=keys["__label"].to_numpy().astype(object),
        case_keys=tuple(zip(keys["case_id"].to_list(), keys["case_version"].to_list(), strict=True)),
        id_codes=keys["__id_code"].to_numpy().astype(np.int64),
        groups=groups,
        n=n,
        c=c,
        n_infra_errors=infra,
        present=present,
        value=value,
        metric=metric,
        k=k,
    )


def _group_codes(rows: pl.DataFrame, keys: pl.DataFrame) -> npt.NDArray[np.int64] | None:
    """Each case's unit code (its group's, or its own without one), from 0, in one query; ``None`` without groups."""
    if rows["case_group"].null_count() == rows.height:
        return None
    per_key = rows.lazy().group_by("__key").agg(pl.col("case_group").drop_nulls().first())
    unit = (
        keys.lazy()
        .select("__key", "__label")
        .join(per_key, on="__key", how="left")
        .sort("__key")
        .select(
            pl.when(pl.col("case_group").is_null())
            .then(pl.lit("\x00case:") + pl.col("__label"))
            .otherwise(pl.lit("group:") + pl.col("case_group"))
            .rank("dense")
            .cast(pl.Int64)
        )
        .collect(optimizations=EAGER)
        .to_series()
    )
    codes: npt.NDArray[np.int64] = unit.to_numpy() - 1
    return codes


@dataclass(frozen=True, slots=True, kw_only=True)
class PairedCases:
    """The cases of ``baseline`` and ``candidate`` paired on (case_id, case_version).

    ``indices`` are the paired columns of ``table``; the ``unpaired_*`` tuples list the cases only
    one side ran; ``excluded_versions`` the cases left out because the two systems ran their id at
    different versions (only with ``shared_versions_only``).
    """

    baseline: str
    candidate: str
    shared_versions_only: bool
    indices: npt.NDArray[np.intp] = field(repr=False)
    unpaired_baseline: tuple[str, ...]
    unpaired_candidate: tuple[str, ...]
    excluded_versions: tuple[str, ...]
    table: CaseTable = field(repr=False, compare=False)

    @property
    def n_pairs(self) -> int:
        """Number of paired cases."""
        return int(self.indices.size)

    def to_frame(self) -> pl.DataFrame:
        """One row per paired case: its label and both systems' valid trials, passes and values."""
        t, i, j = self.table, self._rows()[0], self._rows()[1]
        idx = self.indices
        return pl.DataFrame(
            {
                "case": t.labels[idx].tolist(),
                "n_baseline": t.n[i, idx],
                "c_baseline": t.c[i, idx],
                "n_candidate": t.n[j, idx],
                "c_candidate": t.c[j, idx],
                "value_baseline": t.value[i, idx],
                "value_candidate": t.value[j, idx],
            },
            schema={
                "case": pl.String,
                "n_baseline": pl.Int64,
                "c_baseline": pl.Int64,
                "n_candidate": pl.Int64,
                "c_candidate": pl.Int64,
                "value_baseline": pl.Float64,
                "value_candidate": pl.Float64,
            },
        ).with_columns(pl.col("value_baseline", "value_candidate").fill_nan(None))

    def _rows(self) -> tuple[int, int]:
        return self.table.systems.index(self.baseline), self.table.systems.index(self.candidate)

    def to_dict(self) -> JSONObject:
        """JSON-ready summary (without the per-case rows)."""
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "n_pairs": self.n_pairs,
            "unpaired_baseline": list(self.unpaired_baseline),
            "unpaired_candidate": list(self.unpaired_candidate),
            "excluded_versions": list(self.excluded_versions),
            "shared_versions_only": self.shared_versions_only,
        }


def pair_table(table: CaseTable, *, baseline: str, candidate: str, shared_versions_only: bool = False) -> PairedCases:
    """Pair two systems of a :class:`CaseTable` (array operations only).

    Parameters
    ----------
    table
        The per-case counts of every system (:func:`build_case_table` or :func:`case_table`).
    baseline, candidate
        The two systems (in ``table.systems``).
    shared_versions_only
        As :func:`pair_cases`.

    Returns
    -------
    PairedCases
        As :func:`pair_cases`.

    Raises
    ------
    UnknownSystemError
        ``baseline`` or ``candidate`` is not in the table.
    CaseVersionMismatchError
        A case id at different versions (without ``shared_versions_only``).
    NoPairedCasesError
        The two systems share no case.
    """
    import numpy as np  # noqa: PLC0415 - on first use: compare's one-trial path runs without numpy (paired/small.py)

    if baseline == candidate:
        msg = f"baseline and candidate must be different systems (got {baseline!r} twice)"
        raise ValueError(msg)
    i = table.index(baseline, role="baseline")
    j = table.index(candidate, role="candidate")
    pi, pj = table.present[i], table.present[j]
    both = pi & pj
    only_b = pi & ~pj
    only_c = pj & ~pi
    # A case the other system ran at another version: its id is in both systems, this key in one.
    clash_b = only_b & np.isin(table.id_codes, table.id_codes[pj])
    clash_c = only_c & np.isin(table.id_codes, table.id_codes[pi])
    excluded: tuple[str, ...] = ()
    if clash_b.any() or clash_c.any():
        clash_ids = np.unique(table.id_codes[clash_b | clash_c])
        if not shared_versions_only:
            first = int(clash_ids[0])
            got_b = table.labels[pi & (table.id_codes == first)].tolist()
            got_c = table.labels[pj & (table.id_codes == first)].tolist()
            msg = (
                f"{clash_ids.size} case id(s) were run at different versions by baseline {baseline!r} and "
                f"candidate {candidate!r} (first: baseline has {got_b}, candidate has {got_c}); a case is "
                "compared only at one version: re-run at the same version, or restrict the comparison to the "
                "shared versions (shared_versions_only / --shared-versions-only)"
            )
            raise CaseVersionMismatchError(msg)
        excluded = tuple(table.labels[clash_b | clash_c].tolist())
        only_b &= ~clash_b
        only_c &= ~clash_c
    indices = np.flatnonzero(both)
    if indices.size == 0:
        msg = (
            f"baseline {baseline!r} ({int(pi.sum())} cases) and candidate {candidate!r} ({int(pj.sum())} cases) "
            "share no case (case_id, case_version): there is nothing to pair"
        )
        raise NoPairedCasesError(msg)
    return PairedCases(
        baseline=baseline,
        candidate=candidate,
        shared_versions_only=shared_versions_only,
        indices=indices,
        unpaired_baseline=tuple(table.labels[only_b].tolist()),
        unpaired_candidate=tuple(table.labels[only_c].tolist()),
        excluded_versions=excluded,
        table=table,
    )


def pair_cases(
    records: FrameLike,
    *,
    baseline: str,
    candidate: str,
    shared_versions_only: bool = False,
    metric: Metric = "pass_hat_k",
    k: int = 1,
    system_column: str = "system",
) -> PairedCases:
    """Pair the cases of two systems on (case_id, case_version).

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``).
    baseline, candidate
        The two systems (values of ``system_column``).
    shared_versions_only
        Compare only the case versions both systems ran, listing the others in
        ``excluded_versions``; otherwise a case id run at different versions is an error.
    metric, k
        The per-case estimate carried in :meth:`PairedCases.to_frame` (default: pass rate).
    system_column
        Column that names the system.

    Returns
    -------
    PairedCases

    Raises
    ------
    UnknownSystemError
        ``baseline`` or ``candidate`` has no records.
    CaseVersionMismatchError
        A case id at different versions (without ``shared_versions_only``).
    NoPairedCasesError
        The two systems share no case.

    Examples
    --------
    >>> import polars as pl
    >>> records = pl.DataFrame({"system": ["a", "a", "b", "b"], "case_id": ["x", "y", "x", "z"],
    ...     "case_version": None, "case_group": None, "trial": 0, "attempt": 0,
    ...     "outcome": ["passed", "failed", "failed", "passed"]})
    >>> p = pair_cases(records, baseline="a", candidate="b")
    >>> p.n_pairs, p.unpaired_baseline, p.unpaired_candidate
    (1, ('y',), ('z',))
    """
    table = build_case_table(
        records,
        metric=metric,
        k=k,
        systems=[baseline, candidate],
        system_column=system_column,
        allow_several_versions=shared_versions_only,
    )
    return pair_table(table, baseline=baseline, candidate=candidate, shared_versions_only=shared_versions_only)
