"""A gate call's small queries read off columns, merged or asked once: the same answers (issue 28, item 3; session 49).

Session 49 took more of the queries a small gate call runs on a few hundred records:

- :func:`gatestats.estimators.case_summary` of an in-memory frame reads whether a trial was retried and a record
  names a group off two columns (no query), and resolves a small frame with a retried trial in one query
  (``final_attempts`` then the group-by) instead of the hash passes made for large frames (~3 times the CPU);
- :func:`gatestats.estimators.variance_decomposition` reads an in-memory summary's ``n`` and ``c`` as they are;
- ``analyze._summary_analysis`` splits the summary by system with ``partition_by`` (group_by's iteration ran
  two queries for the same frames);
- ``checks._min_valid_trials`` compares two columns (no query) and filters only when a case is short;
- :func:`gatestats.gate.summaries.one_version_each` asks the frame of the two columns for duplicated rows (no
  lazy query);
- :func:`gatestats.gate.bounds.mark_retried` tests ``attempt`` and makes its column of ``False`` without a query;
  ``checks._system_checks`` reads a set of one system label and one digest off a count of distinct values.

The functions as they were (main 266cfc3) are kept below, word for word but their names and docstrings, and compared with the
new ones on random inputs made to reach every branch (retried trials on some cases, groups that differ only on
a superseded attempt, several versions, short cases, nulls), then whole verdicts of random gates by the old
functions and the new, byte for byte.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import numpy as np
import polars as pl
import pytest

from gatestats._query import EAGER
from gatestats.estimators import small
from gatestats.estimators.analyze import METRICS, Analysis, analyze_summary
from gatestats.estimators.variance import VarianceDecomposition
from gatestats.gate import checks, engine, evaluate_gate, summaries
from gatestats.gate.bounds import RETRIED
from gatestats.gate.checks import Side
from gatestats.gate.policy import SystemRequirement
from gatestats.gate.verdict import CheckResult, verdict_file_bytes
from gatestats.vocabulary import (
    INFRA_ERROR,
    TRIAL_KEY,
    FrameLike,
    InfraRetries,
    IntervalMethod,
    final_attempts,
    is_final_attempt,
)
from tests.gate import test_gate_call_batched as batched
from tests.gate.test_gate_call_queries import _error, _records
from tests.simulations import reps

summary_module = importlib.import_module("gatestats.estimators.summary")
analyze_module = importlib.import_module("gatestats.estimators.analyze")  # the package names the function so
variance_module = importlib.import_module("gatestats.estimators.variance")
NOW, REG = batched.NOW, batched.REG
CASE_KEY, _SUMS, _aggregations = summary_module.CASE_KEY, summary_module._SUMS, summary_module._aggregations
_moments, _TRIALS_WORTHWHILE = variance_module._moments, variance_module._TRIALS_WORTHWHILE
_system_analysis = analyze_module._system_analysis
_block, _ok, _ids = checks._block, checks._ok, checks._ids


# ---- the functions as they were (main 266cfc3), word for word but their names ----


def _old_per_case_counts(lazy: pl.LazyFrame, *, small: bool = False) -> pl.DataFrame:

    def collect(query: pl.LazyFrame) -> pl.DataFrame:
        return query.collect(optimizations=EAGER) if small else query.collect(engine="streaming")

    key = ["system", *CASE_KEY]
    trial_hash = pl.struct(TRIAL_KEY).hash(seed=0)
    # Whether any trial was retried and any record names a case group, in one pass (small record
    # sets, e.g. a gate simulation's, pay per query); without any group (the common case) the group
    # columns are constants, not aggregations.
    flags = lazy.select((pl.col("attempt") > 0).any(), pl.col("case_group").is_not_null().any())
    any_retried, grouped = collect(flags).row(0)
    retried = pl.Series("h", [], dtype=pl.UInt64)
    if any_retried:
        hashes = lazy.filter(pl.col("attempt") > 0).select(trial_hash.alias("h")).unique()
        retried = collect(hashes).to_series()
    group_type = lazy.collect_schema()["case_group"]
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


def _old_variance_decomposition(summary: FrameLike) -> VarianceDecomposition:
    frame = summary.lazy().select("n", "c").collect()
    n_cases = frame.height
    if n_cases < 2:
        return VarianceDecomposition(
            status="insufficient_evidence",
            reason=f"needs at least 2 cases (got {n_cases})",
            n_cases=n_cases,
            mean_trials_per_case=None,
            between_case_variance=None,
            within_case_variance=None,
            share_from_trials=None,
            advice=None,
        )
    moments = small.variance_moments if small.without_numpy(n_cases) else _moments
    few, k_bar, within, between = moments(frame["n"], frame["c"])
    if within is None or between is None:
        return VarianceDecomposition(
            status="insufficient_evidence",
            reason=f"{few} case(s) have fewer than 2 valid trials; within-case variance needs repeats",
            n_cases=n_cases,
            mean_trials_per_case=k_bar,
            between_case_variance=None,
            within_case_variance=None,
            share_from_trials=None,
            advice="run at least 2 trials of every case to split case and trial variance",
        )
    total = between + within / k_bar
    share = 0.0 if total == 0 else (within / k_bar) / total
    if total == 0:
        advice = "no variation observed; add cases to learn more"
    elif share >= _TRIALS_WORTHWHILE:
        advice = (
            f"{share:.0%} of the variance comes from trial-to-trial noise: more trials per case "
            "narrow the interval noticeably (more cases always help)"
        )
    else:
        advice = f"only {share:.0%} of the variance comes from trial-to-trial noise: add cases, not trials"
    return VarianceDecomposition(
        status="ok",
        reason=None,
        n_cases=n_cases,
        mean_trials_per_case=k_bar,
        between_case_variance=between,
        within_case_variance=within,
        share_from_trials=share,
        advice=advice,
    )


def _old_summary_analysis(
    summary: pl.DataFrame,
    *,
    ks: tuple[int, ...],
    by: str,
    confidence_level: float,
    method: IntervalMethod,
    n_resamples: int,
    seed: int,
) -> Analysis:
    floats = method in ("auto", "wilson") and small.without_numpy(summary.height * len(ks) * len(METRICS))
    systems = [
        _system_analysis(
            str(name),
            cases,
            ks=ks,
            floats=floats,
            method=method,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=seed,
        )
        for (name,), cases in summary.group_by("system", maintain_order=True)
    ]
    return Analysis(
        systems=tuple(sorted(systems, key=lambda s: s.system)),
        ks=ks,
        by=by,
        confidence_level=confidence_level,
        method=method,
        n_resamples=n_resamples,
        seed=seed,
    )


def _old_min_valid_trials(summary: pl.DataFrame, side: Side, needed_trials: int) -> CheckResult:
    thin = summary.filter((pl.col("side") == side) & (pl.col("n") < needed_trials))
    if not thin.height:
        return _ok("min_valid_trials", side, f"every case has at least {needed_trials} valid trials")
    thin_ids = [f"{r['case_id']} ({r['n']})" for r in thin.sort("case_id").iter_rows(named=True)]
    detail = f"{thin.height} cases have fewer than {needed_trials} valid trials (infra errors do not count): " + _ids(
        thin_ids
    )
    return _block("min_valid_trials", side, detail)


def _old_one_version_each(summary: pl.DataFrame) -> bool:
    return not summary.select(pl.struct("system", "case_id").is_duplicated().any()).item()


def _old_mark_retried(frame: pl.DataFrame, infra_retries: InfraRetries) -> pl.DataFrame:
    if infra_retries == "counted" or frame.height == 0:
        return frame
    if not frame.select((pl.col("attempt") > 0).any()).item():  # no retry (most run sets): nothing to mark
        return frame.with_columns(pl.repeat(False, frame.height, dtype=pl.Boolean, eager=True).alias(RETRIED))
    trial = list(TRIAL_KEY)
    earlier_error = (
        ((pl.col("outcome") == INFRA_ERROR) & (pl.col("attempt") < pl.col("attempt").max().over(trial)))
        .any()
        .over(trial)
    )
    # Only a trial with a retry (an attempt > 0; usually few) can have an earlier error: the nested
    # window runs on those rows alone (over the whole frame it grew faster than the rows: 0.4 s at
    # 100k records, 4.3 s at 300k), and the marked rows are set by their row number. The retried
    # trials are found by a semi join on their keys, not by a window over every record (at 10M
    # records that window's groups held ~1.4 GiB; session 38).
    row = "__row"
    retried = frame.lazy().filter(pl.col("attempt") > 0).select(trial).unique()
    marked = (
        frame.lazy()
        .select(pl.int_range(pl.len(), dtype=pl.UInt32).alias(row), *trial, "attempt", "outcome")
        .join(retried, on=trial, how="semi", nulls_equal=True)
        .filter(earlier_error & is_final_attempt())
        .select(row)
        .collect()
        .to_series()
    )
    flag = pl.repeat(False, frame.height, dtype=pl.Boolean, eager=True).scatter(marked, True)
    return frame.with_columns(flag.alias(RETRIED))


def _old_system_checks(records: pl.DataFrame, side: Side, req: SystemRequirement) -> list[CheckResult]:
    out: list[CheckResult] = []
    systems = sorted(str(s) for s in records.get_column("system").unique().to_list())
    if len(systems) != 1:
        out.append(_block("one_system", side, f"records of several systems in one set: {', '.join(systems)}"))
    elif req.system is not None and systems[0] != req.system:
        out.append(_block("system_label", side, f"the policy expects system {req.system!r} (got {systems[0]!r})"))
    else:
        out.append(_ok("system_label", side, systems[0]))
    digests = records.get_column("system_digest").unique().to_list()
    if len(digests) > 1:
        out.append(_block("one_system_digest", side, f"{len(digests)} different system digests in one set"))
    elif req.system_digest is not None and digests != [req.system_digest]:
        out.append(_block("system_digest", side, f"the policy pins {req.system_digest} (got {digests[0]})"))
    return out


def _old_path(m: pytest.MonkeyPatch) -> None:
    m.setattr(
        summary_module, "_per_case_counts",
        lambda lazy, *, small=False, flags=None: _old_per_case_counts(lazy, small=small),
    )  # fmt: skip
    m.setattr(analyze_module, "variance_decomposition", _old_variance_decomposition)
    m.setattr(analyze_module, "_summary_analysis", _old_summary_analysis)
    m.setattr(checks, "_min_valid_trials", _old_min_valid_trials)
    m.setattr(summaries, "one_version_each", _old_one_version_each)
    m.setattr(engine, "one_version_each", _old_one_version_each)
    m.setattr(engine, "mark_retried", _old_mark_retried)
    m.setattr(checks, "_system_checks", _old_system_checks)


# ---- random inputs ----


def _variant(kind: int, records: pl.DataFrame) -> pl.DataFrame:
    """``records`` as they are, without retries, a case id at two versions, or another group on superseded attempts."""
    if kind == 0:
        return records.filter(pl.col("attempt") == 0)
    if kind == 1:  # a case id at a second version on its second trial (a case of its own)
        return records.with_columns(
            pl.when(pl.col("trial") == 1).then(pl.lit("v9")).otherwise(pl.col("case_version")).alias("case_version")
        )
    if kind == 2:  # a retried trial's first attempt names another group (only its latest attempt counts)
        regroup = (pl.col("attempt") == 0) & (pl.int_range(pl.len()) % 3 == 0)
        return records.with_columns(
            pl.when(regroup).then(pl.lit("z")).otherwise(pl.col("case_group")).alias("case_group")
        )
    return records


def _refused(call: Any, *args: Any, **kwargs: Any) -> Any:
    """:func:`_error` of the call; which system a refusal of several versions names follows a group_by's order."""
    found = _error(call, *args, **kwargs)
    if isinstance(found, tuple) and "several case versions" in found[1]:
        return found[0], re.sub(r"of system '[^']*'", "of system ?", found[1])
    return found


def _same_frame(new: Any, old: Any) -> bool:
    if isinstance(new, pl.DataFrame) and isinstance(old, pl.DataFrame):
        return new.schema == old.schema and new.equals(old) and new.rows() == old.rows()
    if isinstance(new, list) and isinstance(old, list):
        return len(new) == len(old) and all(_same_frame(a, b) for a, b in zip(new, old, strict=True))
    return bool(new == old)


#: A set's digests: one, two, one with nulls, none at all; and what a policy can require of them.
_DIGESTS = (
    pl.lit("d1").alias("system_digest"),
    pl.when(pl.col("trial") == 0).then(pl.lit("d1")).otherwise(pl.lit("d2")).alias("system_digest"),
    pl.when(pl.col("trial") == 0).then(pl.lit("d1")).otherwise(None).alias("system_digest"),
    pl.lit(None, pl.String).alias("system_digest"),
)
_REQUIREMENTS = (
    SystemRequirement(system=None),
    SystemRequirement(system="candidate", system_digest="d1"),
    SystemRequirement(system="baseline", system_digest="d2"),
)


def _analysis_text(found: Analysis) -> list[Any]:
    return [(s.system, s.n_cases, s.n_trials, s.n_valid_trials, s.n_passed, s.n_resource_killed, s.n_infra_errors,
             s.clustered, repr(s.estimates), repr(s.variance), s.cases.schema, s.cases.rows())
            for s in found.systems]  # fmt: skip


#: Random record sets (tests/gate/test_gate_call_queries.py's, some without retries, some with a second group
#: on superseded attempts): the suite size is the first at which every branch below is met and each planted
#: break fails (benchmarks/RESULTS.md, session 49); the full size on demand.
READ_DRAWS = reps(suite=6, full=400)


def test_each_read_answers_as_the_queries_it_replaced_on_random_records(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = dict.fromkeys(("retried", "not_retried", "regrouped", "several_versions", "short", "analysed", "marked"), 0)
    for seed in range(READ_DRAWS):
        rng = np.random.default_rng([49, seed])
        records = _variant(seed % 4, _records(rng))
        retried = bool((records.get_column("attempt") > 0).any())
        seen["retried" if retried else "not_retried"] += 1
        seen["regrouped"] += retried and bool((records.get_column("case_group") == "z").any())
        new: dict[str, Any] = {}
        old: dict[str, Any] = {}
        for out, path in ((new, None), (old, _old_path)):
            with monkeypatch.context() as m:
                if path is not None:
                    path(m)
                for several in (False, True):
                    out[f"summary{several}"] = _refused(
                        summary_module.case_summary, records, allow_several_versions=several
                    )
                out["marked"] = [engine.mark_retried(records, rule) for rule in ("bounded", "counted")]
                out["systems"] = [  # an empty set is refused with a reason now (the old code raised IndexError)
                    _error(checks._system_checks, side.with_columns(digest), "candidate", req)
                    for s in ("baseline", "candidate")
                    if not (side := records.filter(pl.col("system") == s)).is_empty()
                    for digest in _DIGESTS
                    for req in _REQUIREMENTS
                ]
                whole = out["summaryTrue"]
                if isinstance(whole, pl.DataFrame):
                    out["one"] = summaries.one_version_each(whole)
                    out["one_nulls"] = summaries.one_version_each(
                        whole.with_columns(
                            pl.when(pl.col("n") == 0).then(None).otherwise(pl.col("case_id")).alias("case_id")
                        )
                    )
                    out["variance"] = repr(_error(analyze_module.variance_decomposition, whole))
                    out["variance_lazy"] = repr(_error(analyze_module.variance_decomposition, whole.lazy()))
                    sided = whole.rename({"system": "side"})
                    out["thin"] = [
                        checks._min_valid_trials(sided, side, needed)
                        for side in ("baseline", "candidate")
                        for needed in (1, 2, 3)
                    ]
                    if out["one"]:
                        out["analysis"] = _analysis_text(analyze_summary(whole, ks=(1, 2, 3), seed=seed))
        assert new.keys() == old.keys(), seed
        for name, value in new.items():
            assert _same_frame(value, old[name]), (seed, name)
        marked = new["marked"][0]
        seen["marked"] += RETRIED in marked.columns and bool(marked.get_column(RETRIED).any())
        whole = new["summaryTrue"]
        if isinstance(whole, pl.DataFrame):
            seen["several_versions"] += not new["one"]
            seen["short"] += bool((whole.get_column("n") < 3).any())
            seen["analysed"] += "analysis" in new
    assert all(seen.values()), seen


#: Whole verdicts of tests/gate/test_gate_call_batched.py's random gates (retries, groups, infra errors, costs).
VERDICT_DRAWS = reps(suite=3, full=100)


def test_a_gate_call_gives_the_old_verdict_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    for seed in range(VERDICT_DRAWS):
        policy, base, cand, _ = batched._draw(4_900 + seed)
        new = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
        with monkeypatch.context() as m:
            _old_path(m)
            old = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
        assert verdict_file_bytes(new.to_dict()) == verdict_file_bytes(old.to_dict()), seed
        assert repr((new.rules, new.curves, new.slice_rates, new.cost)) == repr(
            (old.rules, old.curves, old.slice_rates, old.cost)
        ), seed


def test_a_small_frame_without_its_column_flags_asks_them_in_a_query() -> None:
    """``_per_case_counts`` given no flags (a LazyFrame's caller) asks them: the same counts as given them."""
    records = _records(np.random.default_rng([49, 3])).select(summary_module.ANALYSIS_COLUMNS)
    lazy = records.lazy()
    given = summary_module._per_case_counts(lazy, small=True, flags=summary_module._column_flags(records))
    assert given.equals(summary_module._per_case_counts(lazy, small=True))
    assert given.equals(summary_module._per_case_counts(lazy, small=False))


def test_an_empty_set_is_refused_with_its_reason_where_a_digest_is_pinned() -> None:
    # The old _system_checks read digests[0] of no digest: an IndexError instead of a check that blocks.
    empty = pl.DataFrame(schema={"system": pl.String, "system_digest": pl.String})
    for req in _REQUIREMENTS:
        found = checks._system_checks(empty, "candidate", req)
        assert (found[0].name, found[0].status) == ("one_system", "insufficient_evidence")
        assert found[0].detail == "no record in the set names a system (the set is empty)"
        pinned = [("system_digest", "insufficient_evidence", f"the policy pins {req.system_digest} (got no record)")]
        assert [(c.name, c.status, c.detail) for c in found[1:]] == (pinned if req.system_digest else [])
