"""The gate's work at scale gives the same verdict as before it was made columnar (issue 28, item 5).

Differential tests on a generated pair of run sets large enough to hold every kind of record the
faster paths treat apart (retried trials, final infrastructure errors, resource kills, a severe
slice, flips both ways): each faster path against the code it replaced, kept here as the reference.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from gatestats.gate import Policy, engine, evaluate_gate, load_policy, load_record_set
from gatestats.gate.bounds import RETRIED, mark_retried
from gatestats.gate.cost_rules import cost_rows
from gatestats.gate.engine import _both_sides, _case_slices, _severe_cases
from gatestats.gate.families import COST_FIELDS, no_cost_fields
from gatestats.gate.grouping import n_units
from gatestats.gate.recordset import RecordSet
from gatestats.gate.registration import _earliest, _parse_time
from gatestats.gate.sides import flips
from gatestats.gate.summaries import flip_counts
from gatestats.gate.verdict import verdict_file_bytes
from gatestats.records import load_record_files
from gatestats.vocabulary import INFRA_ERROR, TRIAL_KEY, is_final_attempt
from tests.gate.factory import policy_text, write_run_set

#: The benchmark's rules (benchmarks/bench_gate_scale.py): a threshold, a paired rule, a paired rule on a slice.
HEAD = """severe_slices = ["security"]
rules = [
    { name = "floor", metric = "pass_rate", threshold = 0.5 },
    { name = "not worse", metric = "pass_rate", test = "paired", margin = 0.03 },
    { name = "billing not worse", metric = "pass_rate", slice = "billing", test = "paired", margin = 0.05 },
]"""
CASES, TRIALS, SEED = 1200, 4, 2805
NOW = "2026-12-04T00:00:00Z"


def _outcomes(rng: np.random.Generator, theta: np.ndarray, shift: float) -> dict[str, list[str]]:
    p = 1 / (1 + np.exp(-(np.log(theta / (1 - theta)) + shift)))
    out: dict[str, list[str]] = {}
    for i, pi in enumerate(p):
        draws = rng.random(TRIALS)
        kinds = rng.random(TRIALS)
        out[f"case-{i:05d}"] = [
            "infra_error" if k < 0.01 else "resource_killed" if k < 0.03 else "passed" if d < pi else "failed"
            for d, k in zip(draws, kinds, strict=True)
        ]
    return out


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> tuple[Policy, RecordSet, RecordSet]:
    """A policy and two run sets (1,200 cases x 4 trials a side, retries, infra errors, kills, slices)."""
    root = tmp_path_factory.mktemp("scale")
    (root / "policy.toml").write_text(policy_text(k=4, min_cases=100, min_trials=4, extra=HEAD), encoding="utf-8")
    policy = load_policy(root / "policy.toml")
    rng = np.random.default_rng(SEED)
    theta = rng.beta(2.0, 0.8, size=CASES).clip(1e-6, 1 - 1e-6)
    names = ("billing", "search", "auth", "export")
    slices = {f"case-{i:05d}": ["security"] if i % 100 == 0 else [names[i % 4]] for i in range(CASES)}
    for i in range(0, CASES, 7):  # some cases in two slices
        slices[f"case-{i:05d}"].append("search")
    sets = {}
    for system, shift in (("baseline", 0.0), ("candidate", 0.2)):
        outcomes = _outcomes(rng, theta, shift)
        keys = [(c, t) for c in outcomes for t in range(TRIALS)]
        picked = rng.choice(len(keys), size=60, replace=False)
        retries = {keys[j]: 1 + int(j % 3 == 0) for j in picked}  # one or two attempts before the final one
        write_run_set(
            root / system,
            system=system,
            outcomes=outcomes,
            policy=policy if system == "candidate" else None,
            slices=slices,
            retries=retries,
            retry_outcome="infra_error",
        )
        sets[system] = load_record_set(root / system)
    return policy, sets["baseline"], sets["candidate"]


def _in_pieces(frame: pl.DataFrame, size: int = 97) -> pl.DataFrame:
    """``frame`` as many chunks, as the reader gives a large file."""
    return pl.concat([frame.slice(i, size) for i in range(0, frame.height, size)], rechunk=False)


def test_the_record_set_holds_the_frame_read(sides: tuple[Policy, RecordSet, RecordSet]) -> None:
    _, base, cand = sides
    for rs in (base, cand):
        read, _ = load_record_files([rs.path])
        read = read.drop("checksum")  # verified as read; the gate does not keep it
        assert rs.records.schema == read.schema
        assert rs.records.equals(read)
        assert set(rs.records.n_chunks("all")) == {1}


def test_verdict_is_the_same_on_the_records_as_read(sides: tuple[Policy, RecordSet, RecordSet]) -> None:
    policy, base, cand = sides
    raw = {}
    for name, rs in (("baseline", base), ("candidate", cand)):
        read, _ = load_record_files([rs.path])
        raw[name] = dataclasses.replace(rs, records=_in_pieces(read))
    fast = evaluate_gate(policy, base, cand, now=NOW)
    slow = evaluate_gate(policy, raw["baseline"], raw["candidate"], now=NOW)
    assert verdict_file_bytes(fast.to_dict()) == verdict_file_bytes(slow.to_dict())
    assert any(r.unresolved is not None for r in fast.rules)  # the bounded path ran
    assert fast.flips_pass_to_fail
    assert fast.flips_fail_to_pass


def _mark_retried_reference(frame: pl.DataFrame) -> pl.DataFrame:
    """The nested window over the whole frame, as ``mark_retried`` was written before."""
    trial = list(TRIAL_KEY)
    earlier_error = (
        ((pl.col("outcome") == INFRA_ERROR) & (pl.col("attempt") < pl.col("attempt").max().over(trial)))
        .any()
        .over(trial)
    )
    return frame.with_columns((earlier_error & is_final_attempt()).alias(RETRIED))


def test_mark_retried_is_the_nested_window(sides: tuple[Policy, RecordSet, RecordSet]) -> None:
    policy, base, cand = sides
    both = _both_sides(dataclasses.replace(policy, infra_retries="counted"), base, cand)
    # an error after a non-error attempt, and a trial whose final attempt is the error itself
    extra = both.head(3).with_columns(
        pl.lit("case-x").alias("case_id"),
        pl.lit(0, dtype=pl.Int64).alias("trial"),
        pl.Series("attempt", [0, 1, 2]),
        pl.Series("outcome", ["failed", INFRA_ERROR, "passed"]),
    )
    final_error = both.head(2).with_columns(
        pl.lit("case-y").alias("case_id"),
        pl.lit(0, dtype=pl.Int64).alias("trial"),
        pl.Series("attempt", [0, 1]),
        pl.lit(INFRA_ERROR).alias("outcome"),
    )
    # a retried trial whose key holds a null (the semi join on the retried trials' keys matches nulls)
    null_version = both.head(2).with_columns(
        pl.lit("case-z").alias("case_id"),
        pl.lit(None, dtype=both.schema["case_version"]).alias("case_version"),
        pl.lit(0, dtype=pl.Int64).alias("trial"),
        pl.Series("attempt", [0, 1]),
        pl.Series("outcome", [INFRA_ERROR, "passed"]),
    )
    frame = pl.concat([_in_pieces(both), extra, final_error, null_version], how="vertical_relaxed")
    got = mark_retried(frame, "bounded")
    assert got.filter(pl.col("case_id") == "case-z").get_column(RETRIED).to_list() == [False, True]
    assert got.equals(_mark_retried_reference(frame))
    assert 60 <= int(got.get_column(RETRIED).sum()) < frame.height
    assert mark_retried(frame, "counted").equals(frame)


def _flip_counts_reference(both: pl.DataFrame, flipped: tuple[tuple[str, ...], tuple[str, ...]]) -> list[object]:
    """Every case's counts in a dict, then the flipped ones looked up, as ``flip_counts`` was written before."""
    from gatestats.estimators import case_summary
    from gatestats.gate.bindings import FlipCount

    summary = case_summary(both, allow_several_versions=True)
    counts: dict[tuple[str, str], tuple[int, int]] = {}
    for system, cid, version, n, c in summary.select("system", "case_id", "case_version", "n", "c").iter_rows():
        counts[(str(system), str(cid) if version is None else f"{cid}@{version}")] = (int(c), int(n))
    out: list[object] = []
    for direction, cases in zip(("pass_to_fail", "fail_to_pass"), flipped, strict=True):
        for case in cases:
            b, c = counts.get(("baseline", case)), counts.get(("candidate", case))
            out.append(
                FlipCount(
                    case=case,
                    direction=direction,
                    baseline_passed=None if b is None else b[0],
                    baseline_valid=None if b is None else b[1],
                    candidate_passed=None if c is None else c[0],
                    candidate_valid=None if c is None else c[1],
                )
            )
    return out


def test_flip_counts_are_the_dict_lookup(sides: tuple[Policy, RecordSet, RecordSet]) -> None:
    policy, base, cand = sides
    both = _both_sides(policy, base, cand)
    flipped = flips(both)
    assert len(flipped[0]) > 10
    assert len(flipped[1]) > 10
    assert list(flip_counts(both, flipped)) == _flip_counts_reference(both, flipped)
    # a flipped label no case has (a side without the case), and a case without a version
    unknown = ((*flipped[0][:3], "case-none@v"), flipped[1][:2])
    assert list(flip_counts(both, unknown)) == _flip_counts_reference(both, unknown)
    unversioned = both.with_columns(pl.lit(None, dtype=pl.String).alias("case_version"))
    plain = flips(unversioned)
    assert list(flip_counts(unversioned, plain)) == _flip_counts_reference(unversioned, plain)


def test_earliest_start_is_pythons_minimum() -> None:
    rng = np.random.default_rng(SEED)
    t0 = datetime(2026, 11, 1, 9, tzinfo=UTC)
    offsets = ("Z", "+00:00", "+05:30", "-08:00", "+14:00", "-12:00")
    for _ in range(40):
        stamps = []
        for _ in range(int(rng.integers(1, 60))):
            at = t0 + timedelta(seconds=int(rng.integers(0, 3 * 86400)), milliseconds=int(rng.integers(0, 1000)))
            off = offsets[int(rng.integers(len(offsets)))]
            sign = 1 if off.startswith("+") else -1
            shift = (
                timedelta() if off in {"Z", "+00:00"} else sign * timedelta(hours=int(off[1:3]), minutes=int(off[4:]))
            )
            local = (at + shift).replace(tzinfo=None)
            text = local.isoformat(timespec=str(rng.choice(["seconds", "milliseconds", "microseconds"])))
            stamps.append(text + off)
        stamps.append(stamps[0].replace("Z", "+00:00") if stamps[0].endswith("Z") else stamps[0])  # an equal instant
        assert _earliest(pl.Series(stamps)) == min(stamps, key=_parse_time)


def test_earliest_start_falls_back_when_polars_cannot_read_one() -> None:
    stamps = ["2026-11-01T09:00:00Z", "2026-11-01T08:00:00+00:00", "2026-11-01 07:00:00Z"]
    assert _earliest(pl.Series(stamps)) == min(stamps, key=_parse_time)


def test_scale_fixture_is_sealed_runner_output(sides: tuple[Policy, RecordSet, RecordSet]) -> None:
    _, base, cand = sides
    assert base.checksums == cand.checksums == "verified"
    assert Path(cand.path).name == "candidate"


def test_cost_rows_without_the_summary_are_the_same_rows(sides: tuple[Policy, RecordSet, RecordSet]) -> None:
    """At the ends of the bounds the gate asks for the rows only: the same rows, and no summary computed."""
    policy, base, cand = sides
    priced = dataclasses.replace(policy, max_cost_increase=0.2)
    both = _both_sides(priced, base, cand)
    slices = _case_slices(both)
    severe = _severe_cases(slices, priced.severe_slices)
    rows, summary = cost_rows(priced, both, slices, severe, "baseline", "candidate")
    bare, none = cost_rows(priced, both, slices, severe, "baseline", "candidate", summary=False)
    assert none is None
    assert summary is not None
    assert rows == bare
    assert len(rows) == 1


def test_the_rules_hold_their_columns_and_each_slice_once(
    sides: tuple[Policy, RecordSet, RecordSet], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every rule, end, count and search reads one frame per slice, cut to the columns the rules read.

    The three ends of the bounds, the unresolved counts and the rows filtered the records of a
    rule's cases from every record column each time (12 record-level copies for the benchmark's
    three rules); now once per slice (two here: every case, and ``billing``), of ``RULE_COLUMNS``.
    """
    policy, base, cand = sides
    both = _both_sides(policy, base, cand)
    filtered: list[int] = []
    of_cases = engine._of_cases

    def counted(frame: pl.DataFrame, cases: set[str]) -> pl.DataFrame:
        filtered.append(len(frame.columns))
        return of_cases(frame, cases)

    monkeypatch.setattr(engine, "_of_cases", counted)
    summary_made_after: list[int] = []
    cost_rows_ = engine.cost_rows

    def cost(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("summary"):
            summary_made_after.append(len(filtered))
        return cost_rows_(*args, **kwargs)

    monkeypatch.setattr(engine, "cost_rows", cost)
    found = engine._bounded_evidence(policy, both, None)
    assert summary_made_after == [0]  # the cost summary's frame is not held beside a rule's frame
    assert found.frames is not None
    held = found.frames.held()
    assert set(held) == {("all", False), ("billing", False)}
    assert len(filtered) == 2
    assert set(found.frames.records.columns) <= set(engine.RULE_COLUMNS)
    assert len(found.frames.records.columns) < len(both.columns) / 4
    slices = _case_slices(both)
    severe = _severe_cases(slices, policy.severe_slices)
    for (name, _), frame in held.items():
        cases = engine._cases_of(slices, name, severe)
        assert frame.equals(both.filter(pl.col("case_id").is_in(list(cases))).select(frame.columns))
    rows = engine._decided_rows(policy, both, found, None)
    assert any(r.unresolved is not None for r in rows)
    assert len(filtered) == 2  # the search of to_decide read the same frames


def _n_units_reference(records: pl.DataFrame, cases: set[str]) -> int:
    """``grouping.n_units`` as it was: a unit's text per record of every column filtered."""
    unit = pl.coalesce(pl.lit("group:") + pl.col("case_group"), pl.lit("case:") + pl.col("case_id"))
    return int(records.filter(pl.col("case_id").is_in(list(cases))).select(unit.n_unique()).item())


def _no_cost_reference(policy: Policy, records: pl.DataFrame, sides: tuple[str, ...]) -> str | None:
    """``families.no_cost_fields`` as it was: each side's records filtered whole."""
    machine = ["machine_seconds"] if policy.cost.machine_rate_usd_per_hour is not None else []
    read = [*COST_FIELDS, *machine]
    for side in sides:
        rows = records.filter(pl.col("system") == side)
        present = [f for f in read if f in rows.columns and rows.get_column(f).null_count() < rows.height]
        if rows.height and not present:
            return f"no {side} record carries a cost field ({', '.join(read)})"
    return None


@pytest.mark.parametrize("seed", range(12))
def test_units_and_cost_fields_read_only_their_columns(seed: int, sides: tuple[Policy, RecordSet, RecordSet]) -> None:
    policy = sides[0]
    rng = np.random.default_rng([2837, seed])
    n = int(rng.integers(0, 60))
    groups = [None, "g1", "g2", "case-1"]
    frame = pl.DataFrame(
        {
            "system": rng.choice(["baseline", "candidate"] if seed % 3 else ["candidate"], size=n).tolist(),
            "case_id": [f"case-{i}" for i in rng.integers(0, 9, size=n)],
            "case_group": [groups[i] for i in rng.integers(0, 4, size=n)],
            "cost_usd": [None if u < 0.9 - seed / 12 else float(u) for u in rng.random(n)],
            "machine_seconds": rng.random(n).tolist(),
            "outcome": ["passed"] * n,
        },
        schema_overrides={"case_group": pl.String, "cost_usd": pl.Float64, "machine_seconds": pl.Float64},
    )
    for k in range(0, 10, 3):
        cases = {f"case-{i}" for i in rng.choice(9, size=k, replace=False)}
        assert n_units(frame, cases) == _n_units_reference(frame, cases)
    for rate in (None, 1.0):
        priced = dataclasses.replace(policy, cost=dataclasses.replace(policy.cost, machine_rate_usd_per_hour=rate))
        for columns in (frame.columns, [c for c in frame.columns if c != "cost_usd"]):
            sub = frame.select(columns)
            sides_ = ("baseline", "candidate")
            assert no_cost_fields(priced, sub, sides_) == _no_cost_reference(priced, sub, sides_)
