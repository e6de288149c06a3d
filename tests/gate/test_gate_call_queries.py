"""A gate call's small queries merged or run with polars' eager flags, the same answers (issue 28, item 3; session 48).

Session 48 cut queries a small gate call ran one after the other on the same few hundred records:

- :func:`gatestats.gate.summaries.failure_class_counts`: the candidate's failed cases, their class and
  version in one query (the candidate's records filtered inside it, ``system=``), and the rows of
  :func:`gatestats.golden.trends.failure_class_trends` from those cases
  (:func:`gatestats.golden.trends.failed_case_rows`), not a second pass over the final attempts;
- :func:`gatestats.gate.families.no_cost_fields`: every side's null counts in one query;
- :func:`gatestats.gate.checks.case_keys` and :func:`~gatestats.gate.checks.record_layers` one query each,
  ``_infra_error_rate`` a count of a column (not a filtered copy of the records);
- :func:`gatestats.gate.sides.side_provenance`: the layers read in the query of the other distinct values;
- :func:`gatestats.gate.grouping.n_units`, ``engine._case_slices`` (records that list no slice) and
  :func:`gatestats.gate.summaries.flip_counts` one query each with polars' eager flags;
- ``paired.pairing._check_groups`` and ``cost._frames._check_groups`` one query each; ``cost._frames._human_time``
  reads no interval when no record has review or correction time (null counts, no query).

The functions as they were are kept below (word for word but their names) and compared with the new ones on
random inputs made to reach every branch: retried trials, several versions, classes on some trials only,
cost fields on one side only, layers absent, null or several, flips that name no case or a case twice, case
groups that differ across systems, review times with one end missing. Then whole verdicts of random gates
(``tests/gate/test_gate_call_batched.py``'s draws, failure classes and layers added) by the old functions and
the new, byte for byte.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
import pytest

from gatestats.cost import _frames
from gatestats.cost.per_accepted import cost_per_accepted
from gatestats.estimators import case_summary
from gatestats.gate import RecordSet, checks, engine, evaluate_gate, families, grouping, sides, summaries
from gatestats.gate.bindings import FailureClassCount
from gatestats.gate.checks import Side
from gatestats.gate.policy import Policy, parse_policy
from gatestats.gate.verdict import CheckResult, verdict_file_bytes
from gatestats.golden.trends import failed_case_rows, failure_class_trends
from gatestats.paired import pairing
from gatestats.paired.pairing import case_label
from gatestats.records.contract import POLARS_SCHEMA
from gatestats.vocabulary import FAILING_OUTCOMES, INFRA_ERROR, TRIAL_KEY, UNCLASSIFIED, final_attempts
from tests.gate import test_gate_call_batched as batched
from tests.simulations import reps

NOW, REG = batched.NOW, batched.REG
COST_FIELDS = families.COST_FIELDS
_INTERVALS = _frames._INTERVALS
record_ids_text, ReviewRateRequiredError = _frames.record_ids_text, _frames.ReviewRateRequiredError
attribute_overlaps = _frames.attribute_overlaps
lists_no_slice = summaries.lists_no_slice
CaseSetError = pairing.CaseSetError
_block, _ok = checks._block, checks._ok


# ---- the functions as they were (main 49cc076), word for word but their names ----


def _old_failure_class_counts(candidate: pl.DataFrame, policy: Policy) -> tuple[FailureClassCount, ...]:
    if candidate.height == 0:
        return ()
    # the columns read here: final_attempts' join would otherwise copy every column of the records
    read = (*TRIAL_KEY, "attempt", "outcome", "failure_class")
    final = final_attempts(candidate.select(c for c in read if c in candidate.columns)).collect()
    trends = failure_class_trends((), records=final, confidence_level=policy.confidence_level)
    failed = final.filter(pl.col("outcome").is_in(FAILING_OUTCOMES))
    by_class = failed.group_by("case_id").agg(
        pl.col("failure_class").drop_nulls().first(), pl.col("case_version").drop_nulls().min()
    )
    cases: dict[str, list[str]] = {}
    for cid, fc, version in by_class.sort("case_id").select("case_id", "failure_class", "case_version").iter_rows():
        cases.setdefault(str(fc or UNCLASSIFIED), []).append(case_label(cid, version))
    return tuple(
        FailureClassCount(
            failure_class=row.failure_class,
            count=row.count,
            n=row.n,
            share=row.share,
            ci_low=row.low,
            ci_high=row.high,
            confidence_level=trends.confidence_level,
            cases=tuple(cases.get(row.failure_class, ())),
        )
        for row in trends.rows
        if row.source == "failures"
    )


def _old_no_cost_fields(policy: Policy, records: pl.DataFrame, sides: tuple[str, ...]) -> str | None:
    machine = ["machine_seconds"] if policy.cost.machine_rate_usd_per_hour is not None else []
    fields = [*COST_FIELDS, *machine]
    read = [f for f in fields if f in records.columns]
    for side in sides:
        # only the cost fields' null counts: a filter of the side's every column was a copy of its records
        height, *nulls = (
            records.lazy()
            .filter(pl.col("system") == side)
            .select(pl.len(), *(pl.col(f).null_count() for f in read))
            .collect()
            .row(0)
        )
        present = [f for f, n in zip(read, nulls, strict=True) if n < height]
        if height and not present:
            return f"no {side} record carries a cost field ({', '.join(fields)})"
    return None


def _old_case_keys(records: pl.DataFrame) -> set[tuple[str, str | None]]:
    rows = records.select("case_id", "case_version").unique().iter_rows()
    return {(str(a), None if b is None else str(b)) for a, b in rows}


def _old_record_layers(records: pl.DataFrame) -> tuple[str, ...]:
    if "layer" not in records.columns or records.height == 0:
        return ()
    return tuple(sorted(str(v) for v in records.get_column("layer").drop_nulls().unique().to_list()))


def _old_infra_error_rate(policy: Policy, records: pl.DataFrame, side: Side) -> CheckResult:
    attempts = records.height
    infra = records.filter(pl.col("outcome") == INFRA_ERROR).height
    rate = infra / attempts
    detail = f"{infra}/{attempts} attempts were infra errors ({rate:.1%}; limit {policy.max_infra_error_rate:.1%})"
    if rate > policy.max_infra_error_rate:
        return _block("infra_error_rate", side, detail)
    return _ok("infra_error_rate", side, detail)


def _old_n_units(records: pl.DataFrame, cases: set[str]) -> int:
    unit = pl.coalesce(pl.lit("group:") + pl.col("case_group"), pl.lit("case:") + pl.col("case_id"))
    # The two columns read, each (case, group) pair once, before a unit's text is made: a copy of
    # every column of the cases' records, and a text per record, were a gate's transient per rule.
    pairs = records.lazy().select("case_id", "case_group").filter(pl.col("case_id").is_in(list(cases))).unique()
    return int(pairs.select(unit.n_unique()).collect().item())


def _old_case_slices(records: pl.DataFrame) -> pl.DataFrame:
    ids = records.select("case_id").unique()
    if lists_no_slice(records):
        return ids.with_columns(pl.lit([], dtype=pl.List(pl.String)).alias("slices"))
    found = (
        records.select("case_id", "slices")
        .explode("slices")
        .drop_nulls("slices")
        .group_by("case_id")
        .agg(pl.col("slices").unique().sort())
    )
    return ids.join(found, on="case_id", how="left").with_columns(
        pl.col("slices").fill_null(pl.lit([], dtype=pl.List(pl.String)))
    )


def _old_flip_rows(summary: pl.DataFrame, flips: tuple[tuple[str, ...], tuple[str, ...]]) -> pl.DataFrame:
    """The frame ``flip_counts`` read its counts from, as it made it."""
    label = (
        pl.when(pl.col("case_version").is_null())
        .then(pl.col("case_id"))
        .otherwise(pl.col("case_id") + "@" + pl.col("case_version"))
    )
    # only the flipped cases' counts are read (a label written twice: its last row, as a dict keeps it)
    flipped = pl.Series([*flips[0], *flips[1]], dtype=pl.String).implode()
    rows = (
        summary.select("system", label.alias("case"), "n", "c")
        .filter(pl.col("case").is_in(flipped))
        .unique(subset=["system", "case"], keep="last", maintain_order=True)
    )
    return rows


def _old_pairing_check_groups(per_case: pl.DataFrame) -> None:
    # One group per case within a system is checked by case_summary; here: across systems.
    if per_case.get_column("case_group").null_count() == per_case.height:
        return  # no case names a group (a Series count, no query)
    across = (
        per_case.filter(pl.col("case_group").is_not_null())
        .group_by("case_id", "case_version")
        .agg(pl.col("case_group").unique())
        .filter(pl.col("case_group").list.len() > 1)
    )
    if not across.is_empty():
        row = across.row(0, named=True)
        msg = (
            f"case {row['case_id']!r} carries different case_group values in different systems "
            f"(got {sorted(row['case_group'])}); a case belongs to exactly one group"
        )
        raise CaseSetError(msg)


def _old_cost_check_groups(frame: pl.DataFrame) -> None:
    if frame.get_column("case_group").null_count() == frame.height:
        return  # no case carries a group: none carries two
    groups = (
        frame.group_by("case_id", "case_version")
        .agg(pl.col("case_group").unique().sort(nulls_last=True))
        .filter(pl.col("case_group").list.len() > 1)
    )
    if not groups.is_empty():
        row = groups.sort("case_id", "case_version").row(0, named=True)
        msg = (
            f"records: case {row['case_id']!r} carries several case_group values (got {row['case_group']}); "
            "a case belongs to exactly one group (or to none)"
        )
        raise ValueError(msg)


def _old_human_time(frame: pl.DataFrame, *, review_rate: float | None) -> pl.DataFrame:
    ends = [pl.col(f"__{name}").is_not_null() for pair in _INTERVALS for name in pair]
    recorded = frame.filter(pl.any_horizontal(ends))
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


def _old_path(m: pytest.MonkeyPatch) -> None:
    """Put the old functions back where the new ones are read (the side provenance's layers: the old query's)."""
    m.setattr(
        engine, "failure_class_counts", lambda both, policy, system: _old_failure_class_counts(
            both.filter(pl.col("system") == system), policy
        )
    )  # fmt: skip
    m.setattr(engine, "no_cost_fields", _old_no_cost_fields)
    m.setattr(engine, "n_units", _old_n_units)
    m.setattr(engine, "_case_slices", _old_case_slices)
    m.setattr(checks, "case_keys", _old_case_keys)
    m.setattr(checks, "record_layers", _old_record_layers)
    m.setattr(pairing, "_check_groups", _old_pairing_check_groups)
    m.setattr(_frames, "_check_groups", _old_cost_check_groups)
    m.setattr(_frames, "_human_time", _old_human_time)
    real_provenance = sides.side_provenance

    def provenance(rs: RecordSet) -> Any:
        bound = real_provenance(rs)
        return bound if "layer" not in rs.records.columns else _with_old_layers(bound, rs.records)

    m.setattr(engine, "side_provenance", provenance)


def _with_old_layers(bound: Any, records: pl.DataFrame) -> Any:
    return dataclasses.replace(
        bound, layers=tuple(sides._layer(v, i) for i, v in enumerate(_old_record_layers(records)))
    )


# ---- random inputs ----


def _records(rng: np.random.Generator, systems: tuple[str, ...] = ("baseline", "candidate")) -> pl.DataFrame:
    """Records of ``systems`` with retries, versions, classes on some trials, cost fields, layers, groups, slices."""
    rows: list[dict[str, Any]] = []
    n_cases = int(rng.integers(0, 12))
    versions = [None, "v1", "v2"] if rng.random() < 0.4 else ["v1"]
    classes = [None, None, "tool_misuse", "policy_misread", "timeout"]
    layer_mode = int(rng.integers(0, 4))  # none named, one, several, some null
    grouped = rng.random() < 0.5
    cost_side = {s: str(rng.choice(["none", "usd", "parts", "machine", "some"])) for s in systems}
    for s in systems:
        for i in range(n_cases):
            if rng.random() < 0.1:
                continue  # a case one side lacks
            version = versions[int(rng.integers(0, len(versions)))]
            draw = rng.random()  # a grouped case: another group, or none, on one side now and then
            group = None if not grouped else (f"g{i % 3}" if draw < 0.9 else ("other" if draw < 0.95 else None))
            slices = [str(x) for x in rng.choice(["a", "b", "sev"], int(rng.integers(0, 3)), replace=False)]
            for t in range(int(rng.integers(1, 4))):
                attempts = 2 if rng.random() < 0.2 else 1
                for a in range(attempts):
                    outcome = str(
                        rng.choice(["passed", "failed", "resource_killed", "infra_error"], p=[0.45, 0.35, 0.1, 0.1])
                    )
                    cost: dict[str, Any] = {}
                    mode = cost_side[s]
                    if mode == "usd" or (mode == "some" and rng.random() < 0.3):
                        cost["cost_usd"] = float(rng.gamma(2, 0.01))
                    elif mode == "parts":
                        cost["cost_model_usd"] = float(rng.gamma(2, 0.01))
                    elif mode == "machine":
                        cost["machine_seconds"] = float(rng.gamma(2, 10))
                    layer = [
                        None,
                        "replay",
                        ["replay", "live"][int(rng.integers(0, 2))],
                        [None, "shadow"][int(rng.integers(0, 2))],
                    ][layer_mode]
                    rows.append(
                        {"record_id": f"{s}-{i}-{t}-{a}", "system": s, "case_id": f"c{i}", "case_version": version,
                         "case_group": group, "trial": t, "attempt": a, "outcome": outcome, "slices": slices,
                         "failure_class": classes[int(rng.integers(0, len(classes)))], "layer": layer, **cost}
                    )  # fmt: skip
    schema = {"record_id": pl.String, "system": pl.String, "case_id": pl.String, "case_version": pl.String,
              "case_group": pl.String, "trial": pl.Int64, "attempt": pl.Int64, "outcome": pl.String,
              "slices": pl.List(pl.String), "failure_class": pl.String, "layer": pl.String, "cost_usd": pl.Float64,
              "cost_model_usd": pl.Float64, "machine_seconds": pl.Float64}  # fmt: skip
    frame = pl.DataFrame(rows, schema=schema)
    drop = [c for c in ("failure_class", "layer", "cost_model_usd", "machine_seconds") if rng.random() < 0.15]
    return frame.drop(drop)


def _policy(rng: np.random.Generator) -> Policy:
    machine = "machine_rate_usd_per_hour = 2.0\n" if rng.random() < 0.5 else ""
    text = f"""format = "gatestats-policy/1"
name = "queries"
version = "1"
k = 1
min_cases = 1
min_trials = 1
max_infra_error_rate = {rng.choice([0.05, 0.9])}
on_insufficient_evidence = "block"
confidence_level = {rng.choice([0.8, 0.9, 0.95])}

[cost]
{machine}
[baseline]
system = "baseline"

[candidate]
system = "candidate"

[[rules]]
name = "floor"
metric = "pass_rate"
threshold = 0.5
"""
    return parse_policy(text.encode())


QUERY_DRAWS = reps(suite=9, full=400)


def _error(call: Any, *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)``, or the type and message of what it raised."""
    try:
        return call(*args, **kwargs)
    except Exception as exc:
        # a case in two groups: which case (and its groups) is named follows a group_by's order, old and new alike
        return (type(exc), re.sub(r"case '[^']*'(.*)\(got \[[^]]*\]\)", r"case ?\1(got ?)", str(exc)))


def test_each_merged_query_answers_as_the_queries_it_replaced_on_random_records() -> None:
    seen = dict.fromkeys(
        ("classes", "retried_failed", "no_cost", "layers", "several_layers", "infra", "groups_differ"), 0
    )
    for seed in range(QUERY_DRAWS):
        rng = np.random.default_rng([48, seed])
        records, policy = _records(rng), _policy(rng)
        cand = records.filter(pl.col("system") == "candidate")
        # the failed cases by class: on the candidate's records, and on both sides' with the candidate named
        old_counts = _error(_old_failure_class_counts, cand, policy)
        for new_counts in (
            _error(summaries.failure_class_counts, cand, policy),
            _error(summaries.failure_class_counts, records, policy, system="candidate"),
        ):
            if isinstance(old_counts, tuple) and old_counts and isinstance(old_counts[0], type):  # no class column
                assert isinstance(new_counts, tuple), seed
                assert new_counts[0] is old_counts[0], seed
                continue
            assert new_counts == old_counts, seed
        if "failure_class" not in records.columns:
            old_counts = ()
        seen["classes"] += len(old_counts) > 1
        seen["retried_failed"] += (
            bool(cand.height) and cand.filter(pl.col("attempt") > 0).height > 0 and bool(old_counts)
        )
        # the cost fields' check, both sides in one query
        for order in (("baseline", "candidate"), ("candidate", "baseline"), ("candidate",), ()):
            assert families.no_cost_fields(policy, records, order) == _old_no_cost_fields(policy, records, order), seed
        seen["no_cost"] += _old_no_cost_fields(policy, records, ("baseline", "candidate")) is not None
        # the checks' reads, each side
        for side in (records, cand, records.clear()):
            assert checks.case_keys(side) == _old_case_keys(side), seed
            assert checks.record_layers(side) == _old_record_layers(side), seed
            if side.height:
                rates = (
                    checks._infra_error_rate(policy, side, "candidate"),
                    _old_infra_error_rate(policy, side, "candidate"),
                )
                assert rates[0] == rates[1], seed
        layers = _old_record_layers(records)
        seen["layers"] += bool(layers)
        seen["several_layers"] += len(layers) > 1
        seen["infra"] += records.height > 0 and _old_infra_error_rate(policy, records, "baseline").status != "ok"
        if layers and set(layers) <= {"replay", "live", "shadow"}:
            full = records.with_columns(
                pl.lit(None, dtype=t).alias(c) for c, t in POLARS_SCHEMA.items() if c not in records.columns
            )
            rs = RecordSet(path=Path("side"), kind="run_set", manifest={}, records=full, files=(), digest="d")
            assert [str(x) for x in sides.side_provenance(rs).layers] == list(layers), seed
        # the rules' units, the case slices, the flips' counts
        if records.height:
            cases = set(rng.choice(records["case_id"].unique().to_list(), int(rng.integers(0, 5))).tolist())
            assert grouping.n_units(records, cases) == _old_n_units(records, cases), seed
            for frame in (records, records.with_columns(pl.lit(None, dtype=pl.List(pl.String)).alias("slices"))):
                assert engine._case_slices(frame).sort("case_id").equals(_old_case_slices(frame).sort("case_id")), seed
            summary = case_summary(records, allow_several_versions=True)
            labels = [case_label(c, v) for c, v in summary.select("case_id", "case_version").iter_rows()]
            labels += ["nowhere", "c1@v9"]
            flips = (
                tuple(rng.choice(labels, int(rng.integers(0, 4)))),
                tuple(rng.choice(labels, int(rng.integers(0, 4)))),
            )
            new = summaries.flip_counts(records, flips, summary)
            old_rows = _old_flip_rows(summary, flips)
            counts = {(s, c): (int(p), int(n)) for s, c, n, p in old_rows.iter_rows()}
            assert [(f.baseline_passed, f.baseline_valid) for f in new] == [
                counts.get(("baseline", f.case), (None, None)) for f in new
            ], seed
            assert [(f.candidate_passed, f.candidate_valid) for f in new] == [
                counts.get(("candidate", f.case), (None, None)) for f in new
            ], seed
            # the case groups across systems (pairing) and within the records (cost)
            old = _error(_old_pairing_check_groups, summary)
            assert _error(pairing._check_groups, summary) == old, seed
            seen["groups_differ"] += old is not None
            with_row = records.with_columns(pl.col("case_version"))
            assert _error(_frames._check_groups, with_row) == _error(_old_cost_check_groups, with_row), seed
    assert seen["classes"] >= QUERY_DRAWS // 10, seen
    assert min(seen.values()) >= 1, seen


HUMAN_DRAWS = reps(suite=2, full=100)


def _timed_records(rng: np.random.Generator) -> pl.DataFrame:
    """Records with review or correction times on some (one end missing on a few), or on none."""
    rows = []
    timed = rng.random() < 0.6
    for i in range(int(rng.integers(1, 15))):
        for s in ("baseline", "candidate"):
            row: dict[str, Any] = {"record_id": f"{s}-{i}", "system": s, "case_id": f"c{i}", "trial": 0, "attempt": 0,
                                   "outcome": str(rng.choice(["passed", "failed"])), "cost_usd": float(rng.gamma(2, .01)),
                                   "reviewer": str(rng.choice(["r1", "r2"]))}  # fmt: skip
            for start, end in _INTERVALS:
                if timed and rng.random() < 0.5:
                    m = int(rng.integers(0, 50))
                    row[start] = f"2026-01-01T01:{m:02d}:00Z"
                    row[end] = None if rng.random() < 0.1 else f"2026-01-01T01:{m + int(rng.integers(0, 9)):02d}:30Z"
            rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)


def test_human_time_is_the_old_columns_bit_for_bit_with_and_without_recorded_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for seed in range(HUMAN_DRAWS):
        rng = np.random.default_rng([480, seed])
        records = _timed_records(rng)
        for rate in (None, 0.0, 60.0):
            new = _error(_frames.prepare, records, by=("system",), review_rate=rate, machine_rate=None)
            with monkeypatch.context() as m:
                m.setattr(_frames, "_human_time", _old_human_time)
                old = _error(_frames.prepare, records, by=("system",), review_rate=rate, machine_rate=None)
            refused = isinstance(old[0], type)  # (type, message) of the error, or (frame, columns)
            assert isinstance(new[0], type) == refused, seed
            if refused:
                assert new == old, seed
                continue
            assert new[1] == old[1], seed
            assert new[0].equals(old[0]), seed
            for column in ("__human_s", "__human_unknown"):
                a: npt.NDArray[Any] = new[0][column].to_numpy()
                assert a.tobytes() == old[0][column].to_numpy().tobytes(), seed
            analysis = cost_per_accepted(records, review_rate_usd_per_hour=rate)
            assert analysis.human_hours_total >= 0.0


VERDICT_DRAWS = reps(suite=1, full=60)


def test_a_gate_call_gives_the_old_verdict_bytes_with_classes_and_layers(monkeypatch: pytest.MonkeyPatch) -> None:
    classes = 0
    for seed in range(VERDICT_DRAWS):
        policy, base, cand, _ = batched._draw(3_000 + seed)
        rng = np.random.default_rng(seed)
        if rng.random() < 0.7:  # failure classes on some failed records, layers named
            fc = pl.when(pl.col("outcome") != "passed").then(pl.lit(str(rng.choice(["a", "b"])))).otherwise(None)
            cand = RecordSet(
                path=cand.path, kind=cand.kind, manifest=cand.manifest, files=cand.files, digest=cand.digest,
                records=cand.records.with_columns(
                    pl.when(pl.int_range(pl.len()) % 3 == 0).then(fc).otherwise(None).alias("failure_class"),
                    pl.lit("replay").alias("layer"),
                ),
            )  # fmt: skip
        new = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
        with monkeypatch.context() as m:
            _old_path(m)
            old = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
        assert verdict_file_bytes(new.to_dict()) == verdict_file_bytes(old.to_dict()), seed
        assert new.cost == old.cost, seed
        classes += len(new.to_dict()["failure_classes"]) > 1
    assert classes >= 1


def test_the_failed_cases_rows_read_a_records_class_before_the_golden_sets() -> None:
    """``failed_case_rows`` (moved out of ``failure_class_trends``): the record's class first, then ``classes``."""
    per_case = pl.DataFrame({"case_id": ["a", "b", "c", "d"], "failure_class": ["x", None, None, "y"]})
    rows = failed_case_rows(per_case, classes={"a": "z", "b": "z", "d": "y"}, confidence_level=0.9)
    assert [(r.failure_class, r.count, r.n) for r in rows] == [
        (UNCLASSIFIED, 1, 4),
        ("x", 1, 4),
        ("y", 1, 4),
        ("z", 1, 4),
    ]
    records = per_case.with_columns(pl.lit("failed").alias("outcome"))
    trends = failure_class_trends((), records=records, classes={"a": "z", "b": "z", "d": "y"}, confidence_level=0.9)
    assert list(trends.rows) == rows
    assert failed_case_rows(per_case.clear()) == []
