r"""Rank many systems on shared cases, with rank intervals and tie groups: :func:`rank_systems`.

Every pair of the :math:`m` systems is compared on the cases **all** of them ran
(:func:`~gatestats.paired.compare_many`, ``all_pairs``) and the p-values are adjusted for the
:math:`m(m-1)/2` comparisons (Holm by default). With :math:`B_i` the systems significantly better
than system :math:`i` and :math:`W_i` those significantly worse (the adjusted decision of each pair,
:attr:`MultipleComparison.decisions`), system :math:`i`'s **rank interval** is

.. math::

    \bigl[\,1 + |B_i|,\; m - |W_i|\,\bigr].

This is the rank confidence set implied by simultaneous pairwise tests (Holm 1979; Klein, Wright &
Wieczorek 2020; Mogstad, Romano, Shaikh & Wilhelm 2024): when no pairwise decision is wrong, the
:math:`|B_i|` systems declared better than :math:`i` are truly better, so :math:`i`'s true rank
is at least :math:`1 + |B_i|`, and likewise at most :math:`m - |W_i|`.
**Guarantee:** all :math:`m` rank intervals hold *together* with probability at least
:math:`1 - P(\text{some pairwise decision is wrong})`. A wrong decision is a difference declared
where there is none (a type I error, which Holm and Bonferroni keep below :math:`\alpha` jointly
under any dependence between the pairs) or declared in the wrong direction (a directional error,
controlled jointly with it by Bonferroni; by Holm under independence, Shaffer 1980, and in the
dependent settings Finner 1999 studies; the family-wise coverage measured in benchmarks/RESULTS.md
covers the dependence of systems run on the same cases). The tests are the comparison's own
(two-sided mid-p McNemar by default with one trial per case; exact otherwise), whose size was
checked in docs/paired.md. ``hochberg`` needs positive dependence (Sarkar 1998); ``bh`` and
``none`` control no family-wise error and are refused.

**Tie groups** are the connected components of the graph whose edges join the systems *not*
significantly different: two systems in different groups always differ significantly (there is no
edge between them), while two in one group may be linked only through others. Groups are numbered
from 1 in the order of their best point rank.

The **point rank** is the rank of the system's estimate (its pass rate, or per-case ``metric`` at
``k``, over the shared cases), ties sharing the average rank; it lies in the rank interval whenever
the decisions follow the sign of the estimated differences (always with one trial per case).

Examples
--------
>>> import polars as pl
>>> outcomes = {"A": [1, 1, 1, 0] * 25, "B": [1, 0, 0, 0] * 25, "C": [1, 1, 0, 0] * 25}
>>> records = pl.DataFrame([(s, f"c{i}", "passed" if o else "failed")
...     for s, column in outcomes.items() for i, o in enumerate(column)],
...     schema=["system", "case_id", "outcome"], orient="row").with_columns(
...     case_version=None, case_group=None, trial=0, attempt=0)
>>> [(x.system, x.rank, x.rank_low, x.rank_high, x.group) for x in rank_systems(records).ranks]
[('A', 1.0, 1, 1, 1), ('C', 2.0, 2, 2, 2), ('B', 3.0, 3, 3, 3)]

References
----------
Finner, H. (1999). Stepwise multiple test procedures and control of directional errors. Annals of
    Statistics 27(1), 274-289.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
    Statistics 6(2), 65-70.
Klein, M., Wright, T. & Wieczorek, J. (2020). A joint confidence region for an overall ranking of
    populations. Journal of the Royal Statistical Society C 69(3), 589-606.
Mogstad, M., Romano, J. P., Shaikh, A. M. & Wilhelm, D. (2024). Inference for ranks with
    applications to mobility across neighbourhoods and academic achievement across countries.
    Review of Economic Studies 91(1), 476-518.
Shaffer, J. P. (1980). Control of directional errors with stagewise multiple test procedures.
    Annals of Statistics 8(6), 1342-1347.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from gatestats._typing import JSONObject
from gatestats.paired.multiplicity import MultipleComparison, compare_many
from gatestats.paired.pairing import NoPairedCasesError, UnknownSystemError
from gatestats.publish.notebook import Presentable

if TYPE_CHECKING:
    import altair as alt

    from gatestats.publish import Labels, PublishedTable

from gatestats.vocabulary import (
    RANK_CORRECTIONS,
    Correction,
    FrameLike,
    Metric,
    PairedIntervalMethod,
    PairedTest,
)

__all__ = ["RANK_CORRECTIONS", "RANK_FRAME_SCHEMA", "Ranking", "SystemRank", "rank_systems"]

RANK_FRAME_SCHEMA = {
    "system": pl.String,
    "label": pl.String,
    "estimate": pl.Float64,
    "rank": pl.Float64,
    "rank_low": pl.Int64,
    "rank_high": pl.Int64,
    "group": pl.Int64,
    "n_beaten": pl.Int64,
    "n_beaten_by": pl.Int64,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemRank:
    """One system's place: its estimate, point rank, rank interval, tie group and who beats whom.

    ``rank`` is ``None`` when the system has no estimate (its comparisons have insufficient
    evidence); ``better_than`` / ``worse_than`` name the systems it is significantly better / worse than.
    """

    system: str
    estimate: float | None
    rank: float | None
    rank_low: int
    rank_high: int
    group: int
    better_than: tuple[str, ...]
    worse_than: tuple[str, ...]

    def to_dict(self) -> JSONObject:
        """The JSON object of one system."""
        return {
            "system": self.system,
            "estimate": self.estimate,
            "rank": self.rank,
            "rank_low": self.rank_low,
            "rank_high": self.rank_high,
            "group": self.group,
            "better_than": list(self.better_than),
            "worse_than": list(self.worse_than),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Ranking(Presentable):
    """Systems ranked on shared cases (:func:`rank_systems`), best first.

    Attributes
    ----------
    ranks
        One per system, in the order of group, point rank and name.
    correction, confidence_level, alpha
        The correction of the pairwise p-values, and the family-wise level (``alpha = 1 - confidence_level``).
    metric, k
        The per-case estimate compared.
    n_cases, n_excluded_cases
        The cases every system ran (the ranking's cases), and those some system did not run (left out).
    comparisons
        The pairwise comparisons the ranking was derived from.
    """

    ranks: tuple[SystemRank, ...]
    correction: Correction
    confidence_level: float
    alpha: float
    metric: Metric
    k: int
    n_cases: int
    n_excluded_cases: int
    comparisons: MultipleComparison = field(repr=False)

    def get(self, system: str) -> SystemRank:
        """The rank of one system.

        Parameters
        ----------
        system
            The system's name.

        Returns
        -------
        SystemRank
            Its estimate, point rank, rank interval and group.

        Raises
        ------
        KeyError
            It is not ranked (the message names those that are).
        """
        for item in self.ranks:
            if item.system == system:
                return item
        msg = f"{system!r} is not ranked (got {[x.system for x in self.ranks]})"
        raise KeyError(msg)

    def to_frame(self) -> pl.DataFrame:
        """One row per system (:data:`RANK_FRAME_SCHEMA`; ``label`` is the system until a renderer relabels it)."""
        rows = [
            {
                "system": x.system,
                "label": x.system,
                "estimate": x.estimate,
                "rank": x.rank,
                "rank_low": x.rank_low,
                "rank_high": x.rank_high,
                "group": x.group,
                "n_beaten": len(x.better_than),
                "n_beaten_by": len(x.worse_than),
            }
            for x in self.ranks
        ]
        return pl.DataFrame(rows, schema=RANK_FRAME_SCHEMA, orient="row")

    def table(self, labels: Labels | None = None) -> PublishedTable:
        """The ranking as a published table (:func:`gatestats.paired.published.ranking_table`).

        Parameters
        ----------
        labels
            Display names of the systems (None: their ids).

        Returns
        -------
        PublishedTable
            The table (render it with :func:`gatestats.publish.formats.render`).
        """
        from gatestats.paired.published import ranking_table  # noqa: PLC0415 - on first use

        return ranking_table(self, labels)

    def plot(self, labels: Labels | None = None) -> alt.LayerChart:
        """Each system's rank with its rank interval, tie groups coloured (altair).

        Parameters
        ----------
        labels
            Display names of the systems (None: their ids).

        Returns
        -------
        altair.LayerChart
            The chart (:func:`gatestats.publish.charts.rank_intervals`).
        """
        from gatestats.publish.charts import rank_intervals  # noqa: PLC0415 - the charts on first use (issue 28 item 2)

        frame = self.to_frame().select("label", "rank", "rank_low", "rank_high", "group")
        if labels:
            frame = frame.with_columns(pl.Series("label", [labels(s) for s in frame["label"]], dtype=pl.String))
        return rank_intervals(frame, title=f"{len(self.ranks)} systems ranked, {self.correction}-adjusted pairs")

    def to_dict(self) -> JSONObject:
        """The documented ``gatestats rank --json`` object."""
        return {
            "correction": self.correction,
            "confidence_level": self.confidence_level,
            "alpha": self.alpha,
            "metric": self.metric,
            "k": self.k,
            "n_systems": len(self.ranks),
            "n_cases": self.n_cases,
            "n_excluded_cases": self.n_excluded_cases,
            "n_groups": len({x.group for x in self.ranks}),
            "ranks": [x.to_dict() for x in self.ranks],
            "comparisons": self.comparisons.to_dict(),
        }


def rank_systems(
    records: FrameLike,
    *,
    systems: Sequence[str] | None = None,
    correction: Correction = "holm",
    confidence_level: float = 0.95,
    test: PairedTest = "auto",
    interval: PairedIntervalMethod = "auto",
    metric: Metric = "pass_hat_k",
    k: int = 1,
    shared_versions_only: bool = False,
    n_resamples: int = 2000,
    n_permutations: int = 9999,
    seed: int = 0,
    system_column: str = "system",
) -> Ranking:
    """Rank systems on the cases all of them ran, with rank intervals and tie groups (module docstring).

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``).
    systems
        Rank these systems (default: every system in the records); at least two.
    correction
        ``holm`` (default), ``bonferroni`` or ``hochberg`` (:data:`RANK_CORRECTIONS`).
    confidence_level
        The family-wise level of the rank intervals; the pairwise tests run at ``1 - confidence_level``.
    test, interval, metric, k, shared_versions_only, n_resamples, n_permutations, seed, system_column
        As for :func:`gatestats.paired.compare_many`.

    Returns
    -------
    Ranking
        The systems, best first, with their rank intervals and groups.

    Raises
    ------
    ValueError
        Fewer than two systems, a correction without family-wise control, an option outside its domain.
    UnknownSystemError
        A system named in ``systems`` has no records.
    NoPairedCasesError
        No case was run by every system.

    Examples
    --------
    In the module docstring (three systems, three groups).
    """
    if correction not in RANK_CORRECTIONS:
        allowed = list(RANK_CORRECTIONS)
        msg = f"rank intervals need family-wise error control: correction must be one of {allowed} (got {correction!r})"
        raise ValueError(msg)
    frame, names, n_excluded = _shared_cases(records, systems, system_column)
    family = compare_many(
        frame,
        systems=names,
        correction=correction,
        confidence_level=confidence_level,
        test=test,
        interval=interval,
        metric=metric,
        k=k,
        shared_versions_only=shared_versions_only,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        seed=seed,
        system_column=system_column,
    )
    return Ranking(
        ranks=_ranks(family, names),
        correction=correction,
        confidence_level=confidence_level,
        alpha=float(family.alpha or round(1 - confidence_level, 12)),
        metric=metric,
        k=k,
        n_cases=int(frame.select(pl.col("case_id").n_unique()).item()),
        n_excluded_cases=n_excluded,
        comparisons=family,
    )


def _shared_cases(
    records: FrameLike, systems: Sequence[str] | None, system_column: str
) -> tuple[pl.DataFrame, tuple[str, ...], int]:
    """The records of the ranked systems on the cases all of them ran, the systems, and the cases left out."""
    lazy = records.lazy() if isinstance(records, pl.DataFrame) else records
    present = sorted(str(x) for x in lazy.select(pl.col(system_column).unique()).collect().to_series().drop_nulls())
    names = tuple(dict.fromkeys(systems)) if systems is not None else tuple(present)
    missing = [x for x in names if x not in present]
    if missing:
        msg = f"no records for system(s) {missing} in column {system_column!r} (systems present: {present})"
        raise UnknownSystemError(msg)
    if len(names) < 2:
        msg = f"at least two systems are needed to rank (got {list(names)})"
        raise ValueError(msg)
    chosen = lazy.filter(pl.col(system_column).is_in(list(names))).collect()
    per_case = chosen.group_by("case_id").agg(pl.col(system_column).n_unique().alias("n"))
    shared = per_case.filter(pl.col("n") == len(names))["case_id"]
    if shared.len() == 0:
        msg = f"no case was run by all {len(names)} systems {list(names)}: there is nothing to rank them on"
        raise NoPairedCasesError(msg)
    return chosen.filter(pl.col("case_id").is_in(shared.implode())), names, per_case.height - shared.len()


def _ranks(family: MultipleComparison, names: tuple[str, ...]) -> tuple[SystemRank, ...]:
    """Each system's estimate, point rank, rank interval and group from the family's adjusted decisions."""
    better: dict[str, set[str]] = {x: set() for x in names}  # better[i]: the systems significantly better than i
    estimate: dict[str, float | None] = dict.fromkeys(names)
    for x, decision in zip(family.comparisons, family.decisions, strict=True):
        if x.p_baseline is not None and x.p_candidate is not None:
            estimate[x.baseline], estimate[x.candidate] = x.p_baseline, x.p_candidate
        if decision == "candidate better":
            better[x.baseline].add(x.candidate)
        elif decision == "baseline better":
            better[x.candidate].add(x.baseline)
    worse = {i: {j for j in names if i in better[j]} for i in names}
    points = _point_ranks(estimate)
    groups = _groups(names, better, worse, points)
    m = len(names)
    ranks = [
        SystemRank(
            system=i,
            estimate=estimate[i],
            rank=points[i],
            rank_low=1 + len(better[i]),
            rank_high=m - len(worse[i]),
            group=groups[i],
            better_than=tuple(sorted(worse[i])),
            worse_than=tuple(sorted(better[i])),
        )
        for i in names
    ]
    return tuple(sorted(ranks, key=lambda x: (x.group, math.inf if x.rank is None else x.rank, x.system)))


def _point_ranks(estimate: dict[str, float | None]) -> dict[str, float | None]:
    """Rank 1 for the highest estimate, ties sharing their average rank; ``None`` without an estimate."""
    known = [s for s, v in estimate.items() if v is not None]
    ranked = _average_ranks([-float(estimate[s] or 0.0) for s in known])
    out: dict[str, float | None] = dict.fromkeys(estimate)
    out.update({s: float(r) for s, r in zip(known, ranked, strict=True)})
    return out


def _average_ranks(values: list[float]) -> list[float]:
    """Ranks 1..n of ``values`` from the smallest, ties sharing their average rank (as scipy's ``rankdata``).

    Each rank is an integer or a half-integer, exact in floats: the same floats as scipy's.

    Parameters
    ----------
    values
        The values (no NaN).

    Returns
    -------
    list of float
        The rank of each value, in the order given.

    Examples
    --------
    >>> _average_ranks([3.0, 1.0, 3.0, 2.0])
    [3.5, 1.0, 3.5, 2.0]
    """
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end + 2) / 2
        start = end + 1
    return ranks


def _groups(
    names: tuple[str, ...],
    better: dict[str, set[str]],
    worse: dict[str, set[str]],
    points: dict[str, float | None],
) -> dict[str, int]:
    """Connected components of "not significantly different", numbered by their best point rank."""
    parent = {x: x for x in names}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i in names:
        for j in names:
            if i < j and j not in better[i] and j not in worse[i]:
                parent[root(i)] = root(j)
    members: dict[str, list[str]] = {}
    for x in names:
        members.setdefault(root(x), []).append(x)

    def best(group: list[str]) -> tuple[float, str]:
        return min((math.inf if points[x] is None else float(points[x] or 0.0), x) for x in group)

    ordered = sorted(members.values(), key=best)
    return {x: number for number, group in enumerate(ordered, start=1) for x in group}
