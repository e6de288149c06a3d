r"""Independence stated, not assumed: how a policy's cases are grouped, and the check when it says nothing.

Cases that come in groups (several cases from one repository, one customer, one template) are not
independent: their outcomes share the group's difficulty, and an interval or test that treats them as
independent is too narrow. In the size study of issue 30 a threshold rule passed a candidate exactly
at its threshold in 0.145 and 0.169 of replications (20 groups x 10 cases, 8 x 10; one trial) and a
non-inferiority rule in 0.082 and 0.064 (50 x 4, 40 x 5) at a nominal 0.05, when the groups were
not declared; declared, every cell was within alpha (the engine then uses groups as the unit:
cluster-robust intervals and tests, ``docs/gate.md``).

A policy therefore states its grouping with ``case_grouping``:

``"independent"``
    Every case is its own unit (the records' ``case_group`` is not used). A statement the policy's
    author makes and the registered policy keeps.
``"case_group"``
    The records' ``case_group`` field (a case without one is its own group).
``"id_prefix:<sep>"``
    The part of the case id before its last ``<sep>`` (``django__django-1234`` with ``"-"``:
    ``django__django``); an id without ``<sep>`` is its own group.
``"slice"``
    The case's slices (the sorted list; a case without a slice is its own group).

When the policy says nothing and the records carry structure that suggests groups — a
``case_group`` that puts several cases in one group, or case ids whose stems (the id without a
trailing number, as SWE-bench's ``owner__repo-1234``) are shared by several cases in at least two
stems — the gate **blocks** (check ``case_grouping``, ``insufficient_evidence``) and names what it
found and the keys to write. It does not guess a design effect: with few groups an estimated
intra-class correlation is itself too noisy to correct a test (Donner & Klar 2000, ch. 5; Cameron &
Miller 2015, sec. VI), and the simulation (``benchmarks/grouping_simulation.py``) shows the silent
alternative is liberal. Slices alone do not block: a slice is a category the policy names (a
stratum of the case set), each slice's rule is computed on its own cases, and strata with fixed
membership do not make a mean over the case set liberal; where slices are sampling clusters the
policy says so with ``case_grouping = "slice"``. The check's detail names the slices either way.

References
----------
Donner, A. & Klar, N. (2000). Design and Analysis of Cluster Randomization Trials in Health
    Research. Arnold.
Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference. Journal
    of Human Resources 50(2), 317-372.
"""

from __future__ import annotations

import re

import polars as pl

from gatestats._query import EAGER, collect_small
from gatestats.gate.policy import Policy
from gatestats.gate.verdict import CheckResult

__all__ = ["apply_grouping", "grouping_check", "n_units", "suggested_groups"]

_PREFIX = "id_prefix:"
_SHOWN = 3
#: A case id's stem: the id without a trailing number and the separator before it.
_STEM = r"[-_./:#]?[0-9]+$"


def apply_grouping(records: pl.DataFrame, grouping: str | None) -> pl.DataFrame:
    """``records`` with ``case_group`` set as the policy's ``case_grouping`` says.

    Parameters
    ----------
    records
        Run records (columns ``case_id``, ``case_group``, ``slices``).
    grouping
        The policy's ``case_grouping`` (``None``: undeclared, the records' ``case_group`` as it is;
        the ``case_grouping`` check blocks where structure suggests groups).

    Returns
    -------
    pl.DataFrame
        The records, ``case_group`` replaced (null: the case is its own unit).
    """
    if grouping is None or grouping == "case_group" or records.height == 0:
        return records
    if grouping == "independent":
        group = pl.lit(None, dtype=pl.String)
    elif grouping == "slice":
        joined = pl.col("slices").fill_null([]).list.sort().list.join("|")
        group = pl.when(joined.str.len_chars() > 0).then(pl.lit("slice:") + joined).otherwise(None)
    else:
        sep = re.escape(grouping[len(_PREFIX) :])
        group = pl.col("case_id").str.extract(rf"(?s)^(.*){sep}", 1)
    return records.with_columns(group.alias("case_group"))


def n_units(records: pl.DataFrame, cases: set[str]) -> int:
    """How many units ``cases`` make after :func:`apply_grouping`: a case's ``case_group``, or the case itself.

    The unit the paired tests count (``paired.compare`` tests groups when cases carry ``case_group``).

    Parameters
    ----------
    records
        Run records after :func:`apply_grouping` (columns ``case_id``, ``case_group``).
    cases
        The case ids counted.

    Returns
    -------
    int
        The distinct groups and ungrouped cases among ``cases``.
    """
    unit = pl.coalesce(pl.lit("group:") + pl.col("case_group"), pl.lit("case:") + pl.col("case_id"))
    # The two columns read, each (case, group) pair once, before a unit's text is made: a copy of
    # every column of the cases' records, and a text per record, were a gate's transient per rule.
    pairs = records.lazy().select("case_id", "case_group").filter(pl.col("case_id").is_in(list(cases))).unique()
    return int(collect_small(pairs.select(unit.n_unique()), records.height).item())


def _group_sizes(pairs: pl.LazyFrame, column: str) -> pl.LazyFrame:
    return pairs.group_by(column).agg(pl.col("case_id").n_unique().alias("n")).sort(["n", column], descending=True)


def _shown(sizes: pl.DataFrame, column: str) -> str:
    names, counts = sizes.get_column(column).to_list(), sizes.get_column("n").to_list()
    top = [f"{g} ({n} cases)" for g, n in zip(names[:_SHOWN], counts[:_SHOWN], strict=True)]
    return ", ".join(top) + (f" and {sizes.height - _SHOWN} more" if sizes.height > _SHOWN else "")


def suggested_groups(records: pl.DataFrame) -> list[str]:
    """The structure in ``records`` that suggests the cases come in groups, each in words.

    Parameters
    ----------
    records
        Both sides' run records.

    Returns
    -------
    list[str]
        One sentence per finding (empty: nothing suggests groups): a ``case_group`` holding several
        cases; case-id stems shared by several cases (at least two stems, fewer stems than cases).
    """
    found: list[str] = []
    # The (case_id, case_group) pairs once, then the group sizes, the stem sizes and the number of case
    # ids from them in one call, run as polars runs eager operations (a gate call pays per query).
    pairs = records.select("case_id", "case_group").unique().lazy()
    ids = pairs.select("case_id").unique().with_columns(pl.col("case_id").str.replace(_STEM, "").alias("stem"))
    sizes, stems, n_ids = pl.collect_all(
        [_group_sizes(pairs.drop_nulls("case_group"), "case_group"), _group_sizes(ids, "stem"), ids.select(pl.len())],
        optimizations=EAGER,
    )
    if (sizes.get_column("n") > 1).any():  # a Series test, no query
        found.append(f"the records' case_group puts the cases in {sizes.height} groups: {_shown(sizes, 'case_group')}")
    if 2 <= stems.height < n_ids.item():
        found.append(f"the case ids share {stems.height} stems (the id without its number): {_shown(stems, 'stem')}")
    return found


def _slices(records: pl.DataFrame) -> list[str]:
    found = records.lazy().select(pl.col("slices").explode().drop_nulls().unique()).collect(optimizations=EAGER)
    return sorted(str(s) for s in found.to_series().to_list())


def grouping_check(policy: Policy, records: pl.DataFrame) -> CheckResult:
    """The ``case_grouping`` check: the policy states how its cases are grouped, or nothing suggests groups.

    Parameters
    ----------
    policy
        The gate policy (its ``case_grouping``).
    records
        Both sides' run records (as read: the grouping not yet applied).

    Returns
    -------
    CheckResult
        ``ok`` with what the gate treats as a unit; ``insufficient_evidence`` when the policy says
        nothing while the records suggest groups, or declares ``case_group`` while no record names one.
    """
    found = suggested_groups(records)
    slices = _slices(records)
    sliced = (
        f"; slices ({', '.join(slices[:_SHOWN])}{' …' if len(slices) > _SHOWN else ''}) are strata, "
        'not groups, unless the policy says case_grouping = "slice"'
        if slices
        else ""
    )
    seen = "; ".join(found) if found else "nothing in the records suggests groups"
    grouping = policy.case_grouping
    if grouping is None:
        if found:
            detail = (
                f"the policy does not say how its cases are grouped, and {seen}: cases that share a group are not "
                'independent, and treating them as independent passes too often (docs/gate.md, "Grouped cases"); '
                'state it in the policy: case_grouping = "case_group", "id_prefix:<sep>", "slice" or "independent"'
            )
            return CheckResult(name="case_grouping", side="both", status="insufficient_evidence", detail=detail)
        return CheckResult(
            name="case_grouping",
            side="both",
            status="ok",
            detail=f"not declared; {seen}: each case is its own unit{sliced}",
        )
    if grouping == "case_group" and records.get_column("case_group").null_count() == records.height:
        detail = 'the policy groups cases by case_group (case_grouping = "case_group"), but no record names one'
        return CheckResult(name="case_grouping", side="both", status="insufficient_evidence", detail=detail)
    unit = {"independent": "each case is its own unit (stated by the policy)"}.get(
        grouping, f"cases grouped by {grouping} (stated by the policy)"
    )
    return CheckResult(name="case_grouping", side="both", status="ok", detail=f"{unit}; the records: {seen}{sliced}")
