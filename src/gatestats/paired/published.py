"""Published tables of paired comparisons (``Comparison.table()``, ``MultipleComparison.table()``).

One row per comparison: the two systems (labelled), the paired cases, each side's pass rate with
its counts, the discordant counts b and c, the difference with its interval in one cell, the
p-value headed by the test that produced it (``p (mid-p)``, ``p (exact)``, ``p (permutation)``),
in a family the adjusted p-value headed by its correction and test (``p adjusted (holm, mid-p)``),
and a **decision** at the family's α after adjustment: ``candidate better``, ``baseline better``,
``no significant difference``, or ``insufficient evidence`` (no p-value, or one that cannot
decide: ``status`` ``insufficient_evidence`` / ``cannot_resolve``).

α is the level of the comparisons' tests as :class:`~gatestats.paired.result.ComparisonOptions`
derives it without an explicit ``alpha`` (docs/architecture.md, "One significance convention"):
``1 - confidence_level``, the level at which the test agrees with the interval shown. The direction
of a significant difference is the one the test measured: the discordant counts (c > b: the
candidate better) for the McNemar / sign tests, the mean per-case difference for the permutation
test. Where p-values are adjusted and the intervals are not, a note says so plainly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, get_args

import polars as pl

from gatestats.paired.simultaneous import PairDecision, pvalue_decision
from gatestats.publish.cells import (
    MISSING,
    estimate_cell,
    mark,
    number_cell,
    pvalue_cell,
    rate_cell,
    significance_legend,
)
from gatestats.publish.formats import Column, PublishedTable
from gatestats.publish.labels import Labels

if TYPE_CHECKING:
    from gatestats.paired.multiplicity import MultipleComparison
    from gatestats.paired.rank import Ranking
    from gatestats.paired.result import Comparison

__all__ = [
    "DECISIONS_SHOWN",
    "TEST_NAMES",
    "SimultaneousColumn",
    "comparison_table",
    "decision",
    "family_alpha",
    "multiple_comparison_table",
    "pvalue_header",
    "ranking_table",
]

#: The words of the decision column.
DECISIONS_SHOWN: Final = get_args(PairDecision)
#: How each test is named in a p column's header.
TEST_NAMES: Final = {"midp": "mid-p", "exact": "exact", "permutation": "permutation", "asymptotic": "asymptotic"}


@dataclass(frozen=True, slots=True, kw_only=True)
class SimultaneousColumn:
    """Simultaneous intervals shown beside the per-comparison ones: one per comparison, in the family's order.

    Attributes
    ----------
    method
        How they were made (``bonferroni``, ``holm``), shown in the header and the note.
    ci_low, ci_high
        The interval of each comparison's difference (None: no interval for that comparison).
    confidence_level
        Their joint level.
    open_at_zero
        Per comparison: the end at 0 is open, meaning "beyond 0" (Holm-compatible bounds of a rejected
        side, Strassburger & Bretz 2008), shown with a round bracket; empty: none is.
    """

    method: str
    ci_low: tuple[float | None, ...]
    ci_high: tuple[float | None, ...]
    confidence_level: float
    open_at_zero: tuple[bool, ...] = ()


def family_alpha(comparisons: Sequence[Comparison]) -> float:
    """The level the decisions are taken at: ``1 - confidence_level`` (rounded as ``ComparisonOptions.test_alpha``).

    Parameters
    ----------
    comparisons
        The comparisons (of one family: they share the level).

    Returns
    -------
    float
        α.
    """
    return round(1 - comparisons[0].confidence_level, 12)


def _adjusted(x: Comparison) -> float | None:
    """The p-value that decides: the adjusted one in a family, else the raw one."""
    return x.pvalue_adjusted if x.correction is not None else x.pvalue


def decision(x: Comparison, alpha: float) -> str:
    """The decision shown for ``x`` at level ``alpha`` (after adjustment, in a family).

    Parameters
    ----------
    x
        The comparison.
    alpha
        The level.

    Returns
    -------
    str
        One of :data:`DECISIONS_SHOWN` (:func:`gatestats.paired.simultaneous.pvalue_decision`).
    """
    return pvalue_decision(x, alpha)


def _test_names(comparisons: Sequence[Comparison]) -> str:
    return " / ".join(dict.fromkeys(TEST_NAMES.get(x.test, x.test) for x in comparisons))


def pvalue_header(comparisons: Sequence[Comparison], *, adjusted: bool) -> str:
    """``p (mid-p)``, or ``p adjusted (holm, mid-p)``: the header names the test (and the correction).

    Parameters
    ----------
    comparisons
        The comparisons of the column (several tests are named ``mid-p / exact``).
    adjusted
        The adjusted column.

    Returns
    -------
    str
        The header.
    """
    tests = _test_names(comparisons)
    if not adjusted:
        return f"p ({tests})"
    return f"p adjusted ({comparisons[0].correction}, {tests})"


def _rate(x: Comparison, side: str) -> str:
    rate = x.p_baseline if side == "baseline" else x.p_candidate
    if x.a is None or x.d is None:
        return estimate_cell(rate, None, None)
    passed = x.a + (x.b if side == "baseline" else x.c)
    return rate_cell(passed, x.n_pairs)


def _row(x: Comparison, labels: Labels, alpha: float, *, family: bool) -> tuple[str, ...]:
    ok = x.interval.status == "ok"
    diff = estimate_cell(x.diff, x.diff_ci_low if ok else None, x.diff_ci_high if ok else None, signed=True)
    cells = [labels(x.baseline), labels(x.candidate), str(x.n_pairs), _rate(x, "baseline"), _rate(x, "candidate")]
    cells += [str(x.b), str(x.c), diff, pvalue_cell(x.pvalue)]
    decisive = _adjusted(x)
    if family:
        cells.append(pvalue_cell(x.pvalue_adjusted))
    if decisive is not None and x.status == "ok" and mark(decisive, alpha):
        cells[-1] += " " + mark(decisive, alpha)
    cells.append(decision(x, alpha))
    return tuple(cell if cell else MISSING for cell in cells)


def _columns(comparisons: Sequence[Comparison], *, family: bool) -> tuple[Column, ...]:
    level = f"{comparisons[0].confidence_level:.0%}"
    rate = "pass@k / pass^k" if any(x.design != "one_trial" for x in comparisons) else "pass rate"
    headers = ["baseline", "candidate", "pairs", f"baseline {rate}", f"candidate {rate}", "b", "c"]
    headers += [f"difference [{level} CI]", pvalue_header(comparisons, adjusted=False)]
    if family:
        headers.append(pvalue_header(comparisons, adjusted=True))
    headers.append("decision")
    text = {"baseline", "candidate", "decision"}
    return tuple(Column(header=h, numeric=h not in text) for h in headers)


def _notes(comparisons: Sequence[Comparison], alpha: float, labels: Labels, *, family: bool) -> tuple[str, ...]:
    first = comparisons[0]
    methods = ", ".join(dict.fromkeys(x.interval.method for x in comparisons if x.interval.method)) or "none"
    notes = [
        "b: cases only the baseline passed (did better on); c: cases only the candidate passed (did better on).",
        f"difference: candidate - baseline, {first.alternative}; interval {first.confidence_level:.0%} ({methods}).",
    ]
    if family and first.correction not in (None, "none"):
        notes.append(
            f"The intervals are per-comparison, not adjusted for the {len(comparisons)} comparisons, while the "
            f"decision uses the {first.correction}-adjusted p: an interval may exclude 0 where the decision is "
            "no significant difference."
        )
    notes.append(f"decision: at alpha = {alpha:g} on the {'adjusted ' if family else ''}p-value.")
    notes.extend(f"{labels(x.candidate)} vs {labels(x.baseline)}: {x.reason}" for x in comparisons if x.reason)
    return tuple(notes)


def _frame(comparisons: Sequence[Comparison], frame: pl.DataFrame, labels: Labels, alpha: float) -> pl.DataFrame:
    """The numeric frame with each id's label, α and the decision beside it (what the CSV holds)."""
    return frame.with_columns(
        pl.Series("baseline_label", [labels(x.baseline) for x in comparisons], dtype=pl.String),
        pl.Series("candidate_label", [labels(x.candidate) for x in comparisons], dtype=pl.String),
        pl.Series("alpha", [alpha] * len(comparisons), dtype=pl.Float64),
        pl.Series("decision", [decision(x, alpha) for x in comparisons], dtype=pl.String),
    )


def _table(
    comparisons: Sequence[Comparison], frame: pl.DataFrame, title: str, labels: Labels | None, *, family: bool
) -> PublishedTable:
    chosen = labels or Labels()
    chosen.check_known({name for x in comparisons for name in (x.baseline, x.candidate)})
    alpha = family_alpha(comparisons)
    header = pvalue_header(comparisons, adjusted=family)
    return PublishedTable(
        title=title,
        columns=_columns(comparisons, family=family),
        rows=tuple(_row(x, chosen, alpha, family=family) for x in comparisons),
        data=_frame(comparisons, frame, chosen, alpha),
        notes=_notes(comparisons, alpha, chosen, family=family),
        legend=(significance_legend(alpha, pvalue=header),),
    )


def comparison_table(x: Comparison, labels: Labels | None = None) -> PublishedTable:
    """One comparison as a one-row published table (see the module docstring).

    Parameters
    ----------
    x
        The comparison.
    labels
        Display names of the systems (every labelled name must be one of the two).

    Returns
    -------
    PublishedTable
        The table; its ``data`` is ``x.to_frame()`` with the labels, α and the decision.

    Raises
    ------
    LabelsError
        A labelled name that is neither system.
    """
    chosen = labels or Labels()
    title = f"{chosen(x.candidate)} (candidate) vs {chosen(x.baseline)} (baseline): {x.n_pairs} paired cases"
    return _table((x,), x.to_frame(), title, labels, family=False)


def multiple_comparison_table(
    many: MultipleComparison, labels: Labels | None = None, *, simultaneous: SimultaneousColumn | None = None
) -> PublishedTable:
    """A family of comparisons, one row each, with raw and adjusted p-values and the decision.

    Parameters
    ----------
    many
        The family.
    labels
        Display names of the systems (every labelled name must be one of them).
    simultaneous
        Simultaneous intervals to show in a column after the per-comparison ones (their numbers go
        to ``data`` as ``simultaneous_ci_low``, ``simultaneous_ci_high``, ``simultaneous_method``),
        and the note then says which is which instead of warning that the intervals are unadjusted.

    Returns
    -------
    PublishedTable
        The table; its ``data`` is ``many.to_frame()`` with the labels, α and the decision.

    Raises
    ------
    LabelsError
        A labelled name that is none of the systems.
    ValueError
        ``simultaneous`` does not hold one interval per comparison.
    """
    kind = many.family.replace("_", " ")
    title = f"{len(many.comparisons)} paired comparisons ({kind}), {many.correction}"
    table = _table(many.comparisons, many.to_frame(), title, labels, family=True)
    return table if simultaneous is None else _with_simultaneous(table, many, simultaneous)


def _interval_cell(low: float | None, high: float | None, *, open_at_zero: bool) -> str:
    """``[low, high]``, with a round bracket on an end at 0 that is open ("beyond 0")."""
    if low is None or high is None:
        return MISSING
    left = "(" if open_at_zero and low == 0.0 else "["
    right = ")" if open_at_zero and high == 0.0 else "]"
    return f"{left}{number_cell(low)}, {number_cell(high)}{right}"


def _with_simultaneous(table: PublishedTable, many: MultipleComparison, sim: SimultaneousColumn) -> PublishedTable:
    """``table`` with a simultaneous-interval column after the difference, its note, and its numbers in ``data``."""
    m = len(many.comparisons)
    if len(sim.ci_low) != m or len(sim.ci_high) != m:
        msg = f"one simultaneous interval per comparison is needed (got {len(sim.ci_low)} for {m} comparisons)"
        raise ValueError(msg)
    at = next(i for i, c in enumerate(table.columns) if c.header.startswith("difference [")) + 1
    header = f"simultaneous [{sim.confidence_level:.0%} CI] ({sim.method})"
    opens = sim.open_at_zero or (False,) * m
    cells = [
        _interval_cell(low, high, open_at_zero=open_)
        for low, high, open_ in zip(sim.ci_low, sim.ci_high, opens, strict=True)
    ]
    note = (
        f"difference [CI]: per-comparison intervals; simultaneous ({sim.method}): the {m} intervals hold together "
        f"at {sim.confidence_level:.0%}, compatible with the {many.correction}-adjusted decision."
    )
    if any(opens):
        note += " A round bracket at 0 means the interval lies beyond 0 (0 itself excluded)."
    notes = tuple(note if n.startswith("The intervals are per-comparison") else n for n in table.notes)
    return replace(
        table,
        columns=(*table.columns[:at], Column(header=header, numeric=True), *table.columns[at:]),
        rows=tuple((*row[:at], cell, *row[at:]) for row, cell in zip(table.rows, cells, strict=True)),
        notes=notes,
        data=table.data.with_columns(
            pl.Series("simultaneous_ci_low", sim.ci_low, dtype=pl.Float64),
            pl.Series("simultaneous_ci_high", sim.ci_high, dtype=pl.Float64),
            pl.lit(sim.method, dtype=pl.String).alias("simultaneous_method"),
        ),
    )


def ranking_table(result: Ranking, labels: Labels | None = None) -> PublishedTable:
    """The ranking, best first: tie group, point rank, rank interval, estimate and the pairwise counts.

    Parameters
    ----------
    result
        The ranking.
    labels
        Display names of the systems (every labelled name must be one of them).

    Returns
    -------
    PublishedTable
        The table; its ``data`` is ``result.to_frame()`` with ``label`` set to the display names.

    Raises
    ------
    LabelsError
        A labelled name that is none of the systems.
    """
    chosen = labels or Labels()
    chosen.check_known(x.system for x in result.ranks)
    level = f"{result.confidence_level:.0%}"
    tests = " / ".join(dict.fromkeys(TEST_NAMES.get(x.test, x.test) for x in result.comparisons.comparisons))
    headers = ("group", "rank", f"rank interval ({level} joint)", "system", "estimate", "beats", "beaten by")
    rows = tuple(
        (
            str(x.group),
            MISSING if x.rank is None else f"{x.rank:g}",
            f"[{x.rank_low}, {x.rank_high}]",
            chosen(x.system),
            number_cell(x.estimate, 4),
            str(len(x.better_than)),
            str(len(x.worse_than)),
        )
        for x in result.ranks
    )
    frame = result.to_frame()
    notes = [
        f"Pairwise {tests} tests on the {result.n_cases} cases every system ran, {result.correction}-adjusted at "
        f"alpha = {result.alpha:g}; the rank intervals hold for all systems together with probability >= {level} "
        "when the pairwise decisions do, and systems in different groups differ significantly (docs/paired.md, Ranks)."
    ]
    if result.n_excluded_cases:
        notes.append(f"{result.n_excluded_cases} case(s) not run by every system were left out.")
    return PublishedTable(
        title=f"{len(result.ranks)} systems ranked ({result.metric} at k={result.k})",
        columns=tuple(Column(header=h, numeric=h != "system") for h in headers),
        rows=rows,
        data=frame.with_columns(pl.Series("label", [chosen(s) for s in frame["system"]], dtype=pl.String)),
        notes=tuple(notes),
    )
