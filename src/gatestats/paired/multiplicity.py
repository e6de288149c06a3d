r"""Many configurations: every pair, or each against a baseline, with adjusted p-values.

With :math:`m` comparisons and raw p-values :math:`p_{(1)} \le \dots \le p_{(m)}`:

``holm`` (default; Holm 1979)
    :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (m - j + 1)\,p_{(j)})`: controls the
    family-wise error rate under any dependence, uniformly more powerful than Bonferroni.
``bonferroni``
    :math:`\tilde p_i = \min(1, m\,p_i)`.
``hochberg`` (Hochberg 1988)
    :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, (m - j + 1)\,p_{(j)})`: FWER under independence or
    positive dependence (Sarkar 1998).
``bh`` (Benjamini & Hochberg 1995)
    :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, m\,p_{(j)}/j)`: controls the false discovery
    rate under independence or positive dependence.

These are R's ``p.adjust`` methods ``holm``, ``bonferroni``, ``hochberg`` and ``BH``, computed here
with sorted cumulative maxima / minima (the tests check them against statsmodels' ``multipletests``,
whose Holm step is slow for many calls). Comparisons of many systems on the same cases share data (pairs
that have a system in common are dependent); Holm and Bonferroni need no assumption about that
dependence, which is why Holm is the default.

A comparison whose p-value is undefined (``insufficient_evidence``, ``cannot_resolve``) still
counts in :math:`m` (with :math:`p = 1`): dropping it would silently weaken the correction of the
others. Its ``pvalue_adjusted`` is ``None``. The gate does the same with its rows that turn out
undecidable in the data (``gatestats.gate.families``; rows known undecidable from the policy and N
alone are in no family): one answer to one question. Counting them is always valid -- Holm on
:math:`m` hypotheses of which some have :math:`p = 1` is still Holm -- whereas dropping them makes
the family size depend on the data (whether a row is decidable depends on the observed discordance
or spread), and a data-chosen family is not covered by Holm's proof. The price is a little power for
the decidable rows.

**Unequal levels** (gate rules with different ``alpha``): :func:`adjust_pvalues_weighted` is the
weighted Holm procedure (Holm 1979, sec. 5; Benjamini & Hochberg 1997) at the family level
:math:`\alpha_F = \max_i \alpha_i` with weights :math:`\alpha_i`, each threshold capped at
:math:`\alpha_i`: among the remaining hypotheses :math:`R`, in order of :math:`p_i/\alpha_i`,
:math:`H_i` is rejected when :math:`p_i \le \alpha_i \min(1, \alpha_F / \sum_{j \in R}
\alpha_j)`. The thresholds of any intersection sum to at most :math:`\alpha_F`, so (closed testing
with weighted Bonferroni local tests) the probability of any false rejection is at most
:math:`\alpha_F`, and the cap keeps each hypothesis's own false-rejection probability at most its
:math:`\alpha_i`. With equal levels it is Holm exactly. ``bonferroni`` uses the first step only.

The per-case summary is computed once for all systems and every pair is compared with array
operations on it (:mod:`gatestats.paired.pairing`), so 45 pairs of 10 systems cost little more
than one scan of the records.

Examples
--------
:func:`compare_many`, each of two systems against a baseline:

>>> import polars as pl
>>> outcomes = {"A": [1, 1, 0, 1] * 5, "B": [1, 0, 0, 1] * 5, "C": [1, 1, 1, 1] * 5}
>>> records = pl.DataFrame([(s, f"c{i}", "passed" if o else "failed")
...     for s, column in outcomes.items() for i, o in enumerate(column)],
...     schema=["system", "case_id", "outcome"], orient="row").with_columns(
...     case_version=None, case_group=None, trial=0, attempt=0)
>>> result = compare_many(records, family="vs_baseline", baseline="A")
>>> [(x.candidate, x.b, x.c, round(x.pvalue, 6), round(x.pvalue_adjusted, 6)) for x in result.comparisons]
[('B', 5, 0, 0.03125, 0.0625), ('C', 0, 5, 0.03125, 0.0625)]

References
----------
Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate. JRSS B 57(1), 289-300.
Benjamini, Y. & Hochberg, Y. (1997). Multiple hypotheses testing with weights. Scandinavian Journal
    of Statistics 24(3), 407-418.
Hochberg, Y. (1988). A sharper Bonferroni procedure for multiple tests of significance. Biometrika
    75(4), 800-802.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
    Statistics 6(2), 65-70.
Sarkar, S. K. (1998). Some probability inequalities for ordered MTP2 random variables: a proof of
    the Simes conjecture. Annals of Statistics 26(2), 494-504.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import TYPE_CHECKING, Literal, TypedDict, get_args

import polars as pl

from gatestats._lazy import numpy_loaded
from gatestats._typing import JSONObject
from gatestats.paired.compare import compare_pair
from gatestats.paired.pairing import CaseTable, build_case_table, pair_table
from gatestats.paired.result import Comparison, ComparisonOptions, comparisons_frame
from gatestats.paired.simultaneous import PairDecision, SimultaneousInterval, pvalue_decision, simultaneous_intervals
from gatestats.publish.notebook import Presentable
from gatestats.vocabulary import (
    CORRECTIONS,
    WEIGHTED_CORRECTIONS,
    Alternative,
    ComparisonFamily,
    Correction,
    FrameLike,
    Metric,
    PairedIntervalMethod,
    PairedTest,
    SimultaneousMethod,
    WeightedCorrection,
    check_choice,
)

if TYPE_CHECKING:
    import altair as alt
    import numpy as np
    import numpy.typing as npt

    from gatestats.publish import Labels, PublishedTable

__all__ = ["CORRECTIONS", "MultipleComparison", "adjust_pvalues", "adjust_pvalues_weighted", "compare_many"]

#: Which simultaneous intervals a family gets: ``auto`` (``holm`` with Holm, ``bonferroni`` with
#: Bonferroni, none with the other corrections, for which no compatible construction is offered).
SimultaneousChoice = Literal["auto", "bonferroni", "holm", "none"]


def adjust_pvalues(pvalues: npt.ArrayLike, *, method: Correction = "holm") -> npt.NDArray[np.float64]:
    """Adjusted p-values (R's ``p.adjust``) for ``holm``, ``bonferroni``, ``hochberg``, ``bh`` or ``none``.

    Parameters
    ----------
    pvalues
        The raw p-values, each in [0, 1].
    method
        One of :data:`gatestats.vocabulary.CORRECTIONS`; ``none`` returns the p-values unchanged.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the order given, each at most 1.

    Raises
    ------
    ValueError
        An unknown method, or a p-value outside [0, 1] or NaN.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.02, 0.03, 0.04, 0.05]).round(4).tolist()
    [0.05, 0.08, 0.09, 0.09, 0.09]
    >>> adjust_pvalues([0.01, 0.02, 0.03, 0.04, 0.05], method="bh").round(4).tolist()
    [0.05, 0.05, 0.05, 0.05, 0.05]
    """
    import numpy as np  # noqa: PLC0415 - on first use: rank's one-trial path runs without numpy (paired/small_family.py)

    check_choice(method, CORRECTIONS, "correction")
    p = np.asarray(pvalues, dtype=np.float64).ravel()
    if p.size == 0:
        return p
    if np.isnan(p).any() or p.min() < 0 or p.max() > 1:
        msg = "p-values must lie in [0, 1] without NaN"
        raise ValueError(msg)
    if method == "none":
        return p.copy()
    m = p.size
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    steps = np.arange(m)
    if method == "bonferroni":
        adjusted_sorted = m * ranked
    elif method == "holm":
        adjusted_sorted = np.maximum.accumulate((m - steps) * ranked)
    elif method == "hochberg":
        adjusted_sorted = np.minimum.accumulate(((m - steps) * ranked)[::-1])[::-1]
    else:
        adjusted_sorted = np.minimum.accumulate((m / (steps + 1) * ranked)[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, adjusted_sorted)
    return adjusted


def adjust_pvalues_weighted(
    pvalues: npt.ArrayLike, alphas: npt.ArrayLike, *, method: WeightedCorrection = "holm"
) -> npt.NDArray[np.float64]:
    r"""Weighted Holm (or Bonferroni) adjusted p-values on each hypothesis's own scale.

    Hypothesis :math:`i` is rejected exactly when its adjusted p-value is at most ``alphas[i]``
    (see the module docstring for the procedure and what it controls). Step :math:`j` (in order
    of :math:`p/\alpha`) has the ratio :math:`r_j = p_j \max(1, S_j/\alpha_F)/\alpha_j` with
    :math:`S_j` the sum of the levels still in the family; the adjusted value is
    :math:`\min(1, \alpha_j \max_{l \le j} r_l)`.

    Parameters
    ----------
    pvalues
        The raw p-values, each in [0, 1].
    alphas
        Each hypothesis's own level, in (0, 1); one per p-value.
    method
        ``holm`` (weighted Holm) or ``bonferroni``.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the order given, each at most 1: reject where at most ``alphas``.

    Raises
    ------
    ValueError
        An unknown method, lengths that differ, a p-value outside [0, 1] or a level outside (0, 1).

    Examples
    --------
    >>> adjust_pvalues_weighted([0.01, 0.02, 0.03], [0.05, 0.05, 0.05]).round(4).tolist()  # Holm
    [0.03, 0.04, 0.04]
    >>> adjust_pvalues_weighted([0.03, 0.004], [0.05, 0.01]).round(4).tolist()
    [0.03, 0.0048]
    """
    import numpy as np  # noqa: PLC0415 - on first use: rank's one-trial path runs without numpy (paired/small_family.py)

    if method not in WEIGHTED_CORRECTIONS:
        msg = f"weighted correction must be 'holm' or 'bonferroni' (got {method!r})"
        raise ValueError(msg)
    p = np.asarray(pvalues, dtype=np.float64).ravel()
    a = np.asarray(alphas, dtype=np.float64).ravel()
    if p.shape != a.shape:
        msg = f"one alpha per p-value is needed (got {p.size} p-values and {a.size} alphas)"
        raise ValueError(msg)
    if p.size == 0:
        return p
    if np.isnan(p).any() or p.min() < 0 or p.max() > 1:
        msg = "p-values must lie in [0, 1] without NaN"
        raise ValueError(msg)
    if np.isnan(a).any() or a.min() <= 0 or a.max() >= 1:
        msg = f"alphas must lie strictly between 0 and 1 (got {a.tolist()})"
        raise ValueError(msg)
    top = float(a.max())
    order = np.lexsort((np.arange(p.size), p / a))
    ranked_p, ranked_a = p[order], a[order]
    if method == "bonferroni":
        remaining = np.full(p.size, float(a.sum()))
        ratio = ranked_p * np.maximum(1.0, remaining / top) / ranked_a
    else:
        remaining = np.cumsum(ranked_a[::-1])[::-1]
        ratio = np.maximum.accumulate(ranked_p * np.maximum(1.0, remaining / top) / ranked_a)
    adjusted = np.empty(p.size)
    adjusted[order] = np.minimum(1.0, ranked_a * ratio)
    return adjusted


@dataclass(frozen=True, slots=True, kw_only=True)
class MultipleComparison(Presentable):
    """Many paired comparisons with multiplicity-adjusted p-values (``pvalue_adjusted`` of each).

    ``alpha`` is the family's level (``1 - confidence_level``); ``decisions[i]`` is comparison
    ``i``'s adjusted decision at it (:func:`~gatestats.paired.simultaneous.pvalue_decision`);
    ``simultaneous[i]`` its interval compatible with the correction
    (:mod:`gatestats.paired.simultaneous`; empty when the correction has none).
    """

    family: ComparisonFamily
    correction: Correction
    baseline: str | None
    systems: tuple[str, ...]
    comparisons: tuple[Comparison, ...]
    alpha: float | None = None
    decisions: tuple[PairDecision, ...] = ()
    simultaneous: tuple[SimultaneousInterval, ...] = ()

    def get(self, baseline: str, candidate: str) -> Comparison:
        """The comparison of ``candidate`` against ``baseline``.

        Parameters
        ----------
        baseline, candidate
            The two systems.

        Returns
        -------
        Comparison
            The family's comparison of that pair.

        Raises
        ------
        KeyError
            The family holds no such comparison (the message lists those it holds).
        """
        for item in self.comparisons:
            if item.baseline == baseline and item.candidate == candidate:
                return item
        pairs = [f"{x.baseline}->{x.candidate}" for x in self.comparisons]
        msg = f"no comparison of {candidate!r} against {baseline!r} (got {pairs})"
        raise KeyError(msg)

    def to_dict(self) -> list[JSONObject]:
        """The documented ``--json`` list: one object per comparison, with ``family`` added."""
        out = []
        for i, item in enumerate(self.comparisons):
            entry = item.to_dict()
            entry["family"] = self.family
            entry["n_comparisons"] = len(self.comparisons)
            entry["alpha"] = self.alpha
            entry["decision"] = self.decisions[i] if self.decisions else None
            entry.update(_simultaneous_fields(self.simultaneous[i] if self.simultaneous else None))
            out.append(entry)
        return out

    def to_frame(self) -> pl.DataFrame:
        """One row per comparison (fixed columns)."""
        return comparisons_frame(self.comparisons)

    def table(self, labels: Labels | None = None) -> PublishedTable:
        """The family as a published table (:func:`gatestats.paired.published.multiple_comparison_table`).

        Parameters
        ----------
        labels
            Display names of the systems (None: their ids).

        Returns
        -------
        PublishedTable
            The table (render it with :func:`gatestats.publish.render`).
        """
        from gatestats.paired.published import (  # noqa: PLC0415 - on first use
            SimultaneousColumn,
            multiple_comparison_table,
        )

        sim = self.simultaneous
        column = (
            SimultaneousColumn(
                method=sim[0].method,
                ci_low=tuple(x.ci_low for x in sim),
                ci_high=tuple(x.ci_high for x in sim),
                confidence_level=sim[0].confidence_level,
                open_at_zero=tuple(x.open_at_zero for x in sim),
            )
            if sim
            else None
        )
        return multiple_comparison_table(self, labels, simultaneous=column)

    def plot(self, labels: Labels | None = None) -> alt.LayerChart:
        """A forest plot of the family's differences with their intervals, decided on the adjusted p-values.

        Parameters
        ----------
        labels
            Display names of the systems (None: their ids).

        Returns
        -------
        altair.LayerChart
            The chart (:func:`gatestats.publish.charts.forest`).
        """
        from gatestats.paired.charts_frame import forest_frame  # noqa: PLC0415 - the charts on first use (issue 28 item 2)
        from gatestats.publish.charts import forest  # noqa: PLC0415

        title = f"Paired differences, {len(self.comparisons)} comparison(s), {self.correction} adjustment"
        merged: dict[str, dict[tuple[str, str], tuple[float | None, float | None]]] = {}
        for c, x in zip(self.comparisons, self.simultaneous, strict=False):
            merged.setdefault(f"simultaneous ({x.method})", {})[c.baseline, c.candidate] = (x.ci_low, x.ci_high)
        frame = forest_frame(self.comparisons, adjusted=True, simultaneous=merged or None, labels=labels or None)
        return forest(frame, title=title)


def _simultaneous_fields(x: SimultaneousInterval | None) -> JSONObject:
    """The ``simultaneous_*`` keys of one comparison's ``--json`` object (``None`` without such an interval)."""
    return {
        "simultaneous_method": None if x is None else x.method,
        "simultaneous_confidence_level": None if x is None else x.confidence_level,
        "simultaneous_ci_low": None if x is None else x.ci_low,
        "simultaneous_ci_high": None if x is None else x.ci_high,
        "simultaneous_open_at_zero": None if x is None else x.open_at_zero,
        "simultaneous_decision": None if x is None else x.decision,
    }


def compare_many(
    records: FrameLike,
    *,
    family: ComparisonFamily = "all_pairs",
    baseline: str | None = None,
    systems: Sequence[str] | None = None,
    correction: Correction = "holm",
    margin: float | None = None,
    alternative: Alternative = "two-sided",
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
    simultaneous: SimultaneousChoice = "auto",
) -> MultipleComparison:
    """Compare many configurations pairwise on their shared cases, with adjusted p-values.

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``).
    family
        ``all_pairs``: every pair of systems (the alphabetically first of a pair is its
        baseline); ``vs_baseline``: each other system against ``baseline``.
    baseline
        Required with ``vs_baseline`` (and only then).
    systems
        Restrict to these systems (default: every system in the records).
    correction
        ``holm`` (default), ``bonferroni``, ``hochberg``, ``bh`` or ``none``, applied to each
        comparison's ``pvalue`` (the one chosen by ``test``).
    margin, alternative, confidence_level, test, interval, metric, k
        As for :func:`gatestats.paired.compare`, for every comparison.
    shared_versions_only, n_resamples, n_permutations, seed, system_column
        As for :func:`gatestats.paired.compare`, for every comparison.
    simultaneous
        Joint intervals (:mod:`~gatestats.paired.simultaneous`); ``auto``: the correction's (holm, bonferroni).

    Returns
    -------
    MultipleComparison
        One comparison per pair, each with its adjusted p-value, decision and simultaneous interval.

    Raises
    ------
    ValueError
        An option outside its domain, a baseline missing (or given with ``all_pairs``), fewer
        than two systems; and the errors of :func:`gatestats.paired.compare`.

    Examples
    --------
    In the module docstring (each of two systems against a baseline).
    """
    _check_family(family, correction, baseline, simultaneous)
    options = ComparisonOptions(
        margin=margin,
        alternative=alternative,
        confidence_level=confidence_level,
        test=test,
        interval=interval,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        seed=seed,
    )
    where = _Where(metric=metric, k=k, system_column=system_column, shared_versions_only=shared_versions_only)
    result = _in_python(records, systems, baseline, options, (family, correction), where)
    if result is None:
        table, names = _family_table(records, systems, baseline, **where)
        sharing = where["shared_versions_only"]
        result = _compare_family(table, names, options, family, correction, baseline, shared_versions_only=sharing)
    return _with_simultaneous(result, _simultaneous_method(simultaneous, correction))


class _Where(TypedDict):
    """The options of :func:`compare_many` that choose and pair the cases (besides the systems)."""

    metric: Metric
    k: int
    system_column: str
    shared_versions_only: bool


def _wanted(systems: Sequence[str] | None, baseline: str | None) -> list[str] | None:
    """The systems asked for, the baseline among them, each once (``None``: every system of the records)."""
    return None if systems is None else list(dict.fromkeys([*systems, *([baseline] if baseline else [])]))


def _in_python(
    records: FrameLike,
    systems: Sequence[str] | None,
    baseline: str | None,
    options: ComparisonOptions,
    kind: tuple[ComparisonFamily, Correction],
    where: _Where,
) -> MultipleComparison | None:
    """The family in Python numbers (paired/small_family.py) while numpy is not loaded; ``None``: numpy's path."""
    if numpy_loaded():
        return None
    from gatestats.paired.small_family import small_family  # noqa: PLC0415 - its module only on this path

    return small_family(records, _wanted(systems, baseline), baseline, options, kind, **where)


def _with_simultaneous(result: MultipleComparison, method: SimultaneousMethod | None) -> MultipleComparison:
    """The family with its simultaneous intervals (``method``; unchanged with ``None``)."""
    if method is None:
        return result
    return replace(result, simultaneous=simultaneous_intervals(result.comparisons, method=method))


def _simultaneous_method(choice: SimultaneousChoice, correction: Correction) -> SimultaneousMethod | None:
    """The simultaneous intervals asked for (``auto``: the ones compatible with ``correction``, if any)."""
    if choice == "none":
        return None
    if choice != "auto":
        return choice
    if correction == "holm":
        return "holm"
    return "bonferroni" if correction == "bonferroni" else None


def _family_table(
    records: FrameLike,
    systems: Sequence[str] | None,
    baseline: str | None,
    *,
    metric: Metric,
    k: int,
    system_column: str,
    shared_versions_only: bool,
) -> tuple[CaseTable, tuple[str, ...]]:
    """The case table of the family's systems, and their names (every one checked to have records)."""
    wanted = _wanted(systems, baseline)
    table = build_case_table(
        records,
        metric=metric,
        k=k,
        systems=wanted,
        system_column=system_column,
        allow_several_versions=shared_versions_only,
    )
    names = tuple(wanted) if wanted is not None else table.systems
    for name in names:
        table.index(name, role="baseline" if name == baseline else "systems")
    return table, names


def _check_family(
    family: ComparisonFamily, correction: Correction, baseline: str | None, simultaneous: SimultaneousChoice = "auto"
) -> None:
    check_choice(family, get_args(ComparisonFamily), "family")
    check_choice(simultaneous, get_args(SimultaneousChoice), "simultaneous")
    check_choice(correction, CORRECTIONS, "correction")
    if family == "vs_baseline" and baseline is None:
        msg = "family 'vs_baseline' needs a baseline (got none)"
        raise ValueError(msg)
    if family == "all_pairs" and baseline is not None:
        msg = f"family 'all_pairs' takes no baseline (got {baseline!r}); use family='vs_baseline'"
        raise ValueError(msg)


def _pairs(names: tuple[str, ...], family: ComparisonFamily, baseline: str | None) -> list[tuple[str, str]]:
    """The (baseline, candidate) pairs of the family, in sorted order of the system ``names``."""
    if family == "all_pairs":
        pairs = list(combinations(sorted(names), 2))
    else:
        pairs = [(str(baseline), other) for other in sorted(names) if other != baseline]
    if not pairs:
        msg = f"at least two systems are needed for a comparison (got {list(names)})"
        raise ValueError(msg)
    return pairs


def _compare_family(
    table: CaseTable,
    names: tuple[str, ...],
    options: ComparisonOptions,
    family: ComparisonFamily,
    correction: Correction,
    baseline: str | None,
    *,
    shared_versions_only: bool,
) -> MultipleComparison:
    """Every pair's comparison with its ``pvalue_adjusted`` (none where a comparison has no p-value)."""
    pairs = _pairs(names, family, baseline)
    level = _resolution_level(options, correction, len(pairs))
    items = [
        compare_pair(
            pair_table(table, baseline=b, candidate=c, shared_versions_only=shared_versions_only),
            options,
            resolution_alpha=level,
        )
        for b, c in pairs
    ]
    adjusted = adjust_pvalues(raw_pvalues(items), method=correction).tolist()
    return finished_family(items, adjusted, names, options, (family, correction), baseline)


def _resolution_level(options: ComparisonOptions, correction: Correction, n_pairs: int) -> float | None:
    """The level of each comparison's resolution check: Bonferroni's per-pair level, else the test level (``None``)."""
    return options.test_alpha / n_pairs if correction == "bonferroni" else None


def raw_pvalues(items: Sequence[Comparison]) -> list[float]:
    """Each comparison's p-value, 1 where it has none (it still counts in the family: module docstring).

    Parameters
    ----------
    items
        The family's comparisons.

    Returns
    -------
    list of float
        The p-values the correction adjusts, in order.
    """
    return [1.0 if x.pvalue is None else x.pvalue for x in items]


def finished_family(
    items: Sequence[Comparison],
    adjusted: Sequence[float],
    names: Sequence[str],
    options: ComparisonOptions,
    kind: tuple[ComparisonFamily, Correction],
    baseline: str | None,
) -> MultipleComparison:
    """The family from its comparisons and their adjusted p-values: each one's ``pvalue_adjusted`` and decision.

    Both paths end here: numpy's (:func:`compare_many`) and the one in Python numbers
    (:mod:`gatestats.paired.small_family`).

    Parameters
    ----------
    items
        The comparisons, in the family's order.
    adjusted
        Their adjusted p-values (:func:`adjust_pvalues` of :func:`raw_pvalues`), in that order.
    names
        The family's systems.
    options
        The validated options of every comparison.
    kind
        ``(family, correction)``.
    baseline
        The baseline of a ``vs_baseline`` family (else ``None``).

    Returns
    -------
    MultipleComparison
        Without simultaneous intervals (:func:`compare_many` adds them).
    """
    family, correction = kind
    comparisons = tuple(
        replace(x, correction=correction, pvalue_adjusted=None if x.pvalue is None else float(p))
        for x, p in zip(items, adjusted, strict=True)
    )
    alpha = options.test_alpha
    return MultipleComparison(
        family=family,
        correction=correction,
        baseline=baseline,
        systems=tuple(sorted(names)),
        comparisons=comparisons,
        alpha=alpha,
        decisions=tuple(pvalue_decision(x, alpha) for x in comparisons),
    )
