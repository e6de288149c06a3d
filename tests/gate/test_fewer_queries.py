"""The case table and the grouping check in fewer polars queries: the same tables and words as before (issue 28).

Session 46 laid a case table out in two queries (three with case groups; ``paired.pairing._layout``) instead of
~14, and made :func:`~gatestats.gate.grouping.suggested_groups` one polars call and the slices one query. The
functions as they were (main ``1646db0``) are kept here word for word as the oracle and compared with the new ones
on random inputs: per-case summaries of one to three systems with case versions (a null one first), case groups
(also a case in two groups, refused), several metrics and k, and an empty summary (its error); record frames with
case ids of four shapes (stems), groups and slices (empty or null). Arrays are compared with their dtypes, words as strings.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
import pytest

from gatestats.estimators import case_summary, per_case_values
from gatestats.gate import grouping
from gatestats.paired import pairing
from gatestats.paired.pairing import CaseTable, case_table
from tests.simulations import reps


def _old_layout(per_case: pl.DataFrame, systems: tuple[str, ...], *, metric: Any, k: int) -> CaseTable:
    keys = (
        per_case.select("case_id", "case_version")
        .unique()
        .sort("case_id", "case_version", nulls_last=False)
        .with_row_index("__key")
    )
    keys = keys.with_columns(
        pl.when(pl.col("case_version").is_null())  # case_label's rule, as an expression
        .then(pl.col("case_id"))
        .otherwise(pl.col("case_id") + pl.lit("@") + pl.col("case_version"))
        .alias("__label"),
        pl.col("case_id").rank("dense").cast(pl.Int64).alias("__id_code"),
    )
    system_frame = pl.DataFrame({"system": list(systems)}).with_row_index("__system")
    valued = per_case_values(per_case, k=k, metric=metric)
    rows = valued.join(
        keys.select("case_id", "case_version", "__key"), on=["case_id", "case_version"], nulls_equal=True
    )
    rows = rows.join(system_frame, on="system")
    s_idx = rows["__system"].to_numpy().astype(np.intp)
    k_idx = rows["__key"].to_numpy().astype(np.intp)
    shape = (len(systems), keys.height)
    n = np.zeros(shape, dtype=np.int64)
    c = np.zeros(shape, dtype=np.int64)
    infra = np.zeros(shape, dtype=np.int64)
    present = np.zeros(shape, dtype=np.bool_)
    value = np.full(shape, np.nan)
    n[s_idx, k_idx] = rows["n"].to_numpy()
    c[s_idx, k_idx] = rows["c"].to_numpy()
    infra[s_idx, k_idx] = rows["n_infra_errors"].to_numpy()
    present[s_idx, k_idx] = True
    value[s_idx, k_idx] = rows["value"].fill_null(np.nan).to_numpy()
    groups = _old_group_codes(rows, keys)
    return CaseTable(
        systems=systems,
        labels=keys["__label"].to_numpy().astype(object),
        case_keys=tuple(keys.select("case_id", "case_version").iter_rows()),
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


def _old_group_codes(rows: pl.DataFrame, keys: pl.DataFrame) -> npt.NDArray[np.int64] | None:
    if rows["case_group"].null_count() == rows.height:
        return None
    per_key = rows.group_by("__key").agg(pl.col("case_group").drop_nulls().first())
    labelled = keys.select("__key", "__label").join(per_key, on="__key", how="left").sort("__key")
    unit = labelled.select(
        pl.when(pl.col("case_group").is_null())
        .then(pl.lit("\x00case:") + pl.col("__label"))
        .otherwise(pl.lit("group:") + pl.col("case_group"))
    ).to_series()
    codes: npt.NDArray[np.int64] = unit.rank("dense").cast(pl.Int64).to_numpy() - 1
    return codes


def _old_group_sizes(pairs: pl.DataFrame, column: str) -> pl.DataFrame:
    return pairs.group_by(column).agg(pl.col("case_id").n_unique().alias("n")).sort(["n", column], descending=True)


def _old_shown(sizes: pl.DataFrame, column: str) -> str:
    top = [f"{g} ({n} cases)" for g, n in sizes.head(3).select(column, "n").iter_rows()]
    return ", ".join(top) + (f" and {sizes.height - 3} more" if sizes.height > 3 else "")


def _old_suggested_groups(records: pl.DataFrame) -> list[str]:
    found: list[str] = []
    pairs = records.select("case_id", "case_group").unique()
    named = pairs.drop_nulls("case_group")
    sizes = _old_group_sizes(named, "case_group")
    if sizes.height and sizes.filter(pl.col("n") > 1).height:
        found.append(
            f"the records' case_group puts the cases in {sizes.height} groups: {_old_shown(sizes, 'case_group')}"
        )
    ids = pairs.select("case_id").unique().with_columns(pl.col("case_id").str.replace(grouping._STEM, "").alias("stem"))
    stems = _old_group_sizes(ids, "stem")
    if 2 <= stems.height < ids.height:
        found.append(
            f"the case ids share {stems.height} stems (the id without its number): {_old_shown(stems, 'stem')}"
        )
    return found


def _old_slices(records: pl.DataFrame) -> list[str]:
    return sorted(str(s) for s in records.get_column("slices").explode().drop_nulls().unique().to_list())


def _summary(seed: int) -> pl.DataFrame:
    """A per-case summary: 1-3 systems, a case id at several versions (or none), groups (a case in two: refused)."""
    rng = np.random.default_rng(seed)
    systems = ["baseline", "candidate", "third"][: int(rng.integers(1, 4))]
    grouped = rng.random() < 0.5
    rows = []
    for number in np.unique(rng.integers(0, 60, int(rng.integers(1, 30)))):
        cid = f"c{int(number):02d}" if rng.random() < 0.8 else f"é{int(number)}"
        versions = [None if rng.random() < 0.5 else str(rng.choice(["v1", "v2", "a@b"])) for _ in range(2)]
        for system in systems:
            group = ["g1", "g2", "g3", None][sum(map(ord, cid)) % 4] if grouped else None
            group = "other" if grouped and rng.random() < 0.02 else group  # in two groups across systems: refused
            group = None if rng.random() < 0.1 else group  # named by the other systems' records only
            for version in dict.fromkeys(versions[: 1 + (rng.random() < 0.15)]):
                if rng.random() < 0.2:
                    continue
                for trial in range(int(rng.integers(1, 6))):
                    out = str(
                        rng.choice(["passed", "failed", "infra_error", "resource_killed"], p=[0.5, 0.3, 0.1, 0.1])
                    )
                    rows.append((system, cid, version, group, trial, 0, out))
    schema = {"system": pl.String, "case_id": pl.String, "case_version": pl.String, "case_group": pl.String}
    schema |= {"trial": pl.Int64, "attempt": pl.Int64, "outcome": pl.String}
    return case_summary(pl.DataFrame(rows, schema=schema, orient="row"), allow_several_versions=True)


def _table_or_error(summary: pl.DataFrame, metric: Any, k: int) -> CaseTable | str:
    try:
        return case_table(summary, metric=metric, k=k, allow_several_versions=True)
    except Exception as exc:  # the error compared by its type
        return type(exc).__name__


#: Summaries compared (issue 28, item 3, session 47): the first 11 of the 60 in the suite and the inner loop, the fewest
#: at which each planted break of session 46 this test sees still fails it (0.0 instead of NaN where undefined: seed 1;
#: keys sorted with a null version last: seed 4; a key's group without ``drop_nulls``: seed 10; RESULTS.md).
TABLE_DRAWS = reps(suite=11, full=60)


def test_a_case_table_in_fewer_queries_is_the_table_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {"grouped": 0, "versions": 0, "refused": 0}
    summaries = [pl.DataFrame(schema=_summary(0).schema)]  # no row: an error both ways
    summaries += [_summary(seed) for seed in range(TABLE_DRAWS)]
    for summary in summaries:
        for metric, k in (("pass_rate", 1), ("pass_hat_k", 2), ("pass_at_k", 3)):
            new = _table_or_error(summary, metric, k)
            with monkeypatch.context() as m:
                m.setattr(pairing, "_layout", _old_layout)
                old = _table_or_error(summary, metric, k)
            if isinstance(old, str):
                assert new == old
                seen["refused"] += 1
                continue
            assert isinstance(new, CaseTable)
            for name in ("systems", "case_keys", "k", "metric", "known_systems"):
                assert getattr(new, name) == getattr(old, name)
            for name in ("labels", "id_codes", "groups", "n", "c", "n_infra_errors", "present", "value"):
                np.testing.assert_array_equal(getattr(new, name), getattr(old, name), strict=True)
            assert np.array_equal(new.value.view(np.int64), old.value.view(np.int64))  # NaN's bits too
            seen["grouped"] += new.groups is not None
            seen["versions"] += any(v is not None for _, v in new.case_keys)
    assert min(seen.values()) >= TABLE_DRAWS // 10, seen


def _records(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    style = int(rng.integers(0, 4))
    numbers = [int(i) for i in rng.integers(0, 40, n)]
    ids = [[f"c{i}", f"repo{i % 5}__x-{i}", f"a.{i % 3}:{i}", f"t{i % 7}_{i}x"][style] for i in numbers]
    share = float(rng.random())
    groups = [None if rng.random() < share else f"G{int(rng.integers(0, 6))}" for _ in range(n)]
    slices = [[str(s) for s in rng.choice(list("abcde"), int(rng.integers(0, 3)), replace=False)] for _ in range(n)]
    slices = [None if rng.random() < 0.1 else s for s in slices]  # no slices column value: null, not []
    schema = {"case_id": pl.String, "case_group": pl.String, "slices": pl.List(pl.String)}
    return pl.DataFrame({"case_id": ids, "case_group": groups, "slices": slices}, schema=schema)


#: Record frames compared (issue 28, item 3, session 47): the first 5 of the 100 in the suite and the inner loop. Each
#: planted break of session 46 this test sees fails it at seed 0 (stems compared with the group count, two shown
#: instead of three, slices without ``drop_nulls``, a one-case group suggesting groups; RESULTS.md); 5 is the fewest
#: at which the minimum below (per 5 frames) still asks for one frame of each finding.
GROUPING_DRAWS = reps(suite=5, full=100)


def test_the_grouping_check_in_fewer_queries_says_what_it_said() -> None:
    found = {"case_group": 0, "stems": 0, "slices": 0}
    for seed in range(GROUPING_DRAWS):
        records = _records(seed)
        new = grouping.suggested_groups(records)
        assert new == _old_suggested_groups(records), seed
        assert grouping._slices(records) == _old_slices(records), seed
        found["case_group"] += any("case_group" in line for line in new)
        found["stems"] += any("stems" in line for line in new)
        found["slices"] += bool(_old_slices(records))
    assert min(found.values()) >= GROUPING_DRAWS // 5, found
