"""The ends of the bounds from per-case counts are the ends evaluated from imputed records (issue 28, item 3).

Each threshold or paired rule of a gate with unresolved attempts is computed at two ends
(:mod:`gatestats.gate.bounds`). Each end imputed the records (:func:`~gatestats.gate.bounds.bound_frame`)
and evaluated the whole rule again (``case_summary`` or ``pair_cases`` of the imputed frame). The
ends now come from one reduction of the rule's records at the pessimistic end
(``engine._EndCounts``): the optimistic end raises each case's ``c`` by its candidate's unresolved
attempts (and lowers the baseline's by its own), and the search of ``to_decide`` starts from the
same counts. :func:`_old_bounded_evidence` below is ``engine._bounded_evidence`` as it was (each end
evaluated from its imputed frame), kept as the oracle: the rows and severe slices, and the whole
verdict of ``evaluate_gate`` (``to_decide`` included), must be equal field for field (floats bit
for bit) on 24 seeded random gates (16 in the suite, :data:`GATE_DRAWS`) and 10 hypothesis draws: threshold and paired rules, pass^k and
pass@k, slices, severe slices, every multiplicity correction, both ``infra_retries``, groups, ties,
every candidate attempt unresolved.

The flips and their counts now read both sides' per-case counts the gate reduced once
(``case_summary``, which the preconditions read too) instead of reducing the records again
(:func:`gatestats.paired.compare`); the oracle computes them as before, and
:func:`gatestats.paired.pairing.case_table` on those counts must be the table
:func:`gatestats.paired.build_case_table` builds from the records.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatestats.estimators import CaseSetError, case_summary
from gatestats.gate import engine, evaluate_gate
from gatestats.gate.bounds import bounded_decided_row, bounded_row, bounded_severe, unresolved_counts
from gatestats.gate.policy import Policy
from gatestats.gate.recordset import RecordSet
from gatestats.gate.registration import Registration
from gatestats.gate.sequential_rules import SequentialStop
from gatestats.gate.sides import flips
from gatestats.gate.summaries import flip_counts
from gatestats.paired import build_case_table, pairing
from gatestats.paired.pairing import case_table
from gatestats.records.columns import system_records
from gatestats.vocabulary import GATE_CORRECTIONS
from tests.gate.test_to_decide_counts import _draw
from tests.hypothesis_counts import examples
from tests.simulations import reps

CANDIDATE = engine.CANDIDATE
NOW = "2026-12-05T00:00:00Z"
REG = Registration(run_set="rs", policy_digest="d", registered_at=NOW, first_record_at=None, origin="register")


def _old_bounded_evidence(
    policy: Policy, both: pl.DataFrame, stop: SequentialStop | None, labels: Any = None, summary: Any = None
) -> engine._Evidence:
    """``engine._bounded_evidence`` before the counts (session 39): every end evaluated from its imputed records.

    ``summary`` is not read: the flips and their counts are computed from the records, as they were.
    """
    slices = engine._case_slices(both)
    frames = engine.CaseFrames(both)
    found = engine._evidence(policy, both, stop, labels=labels, slices=slices, frames=frames)
    if unresolved_counts(frames.records, candidate=CANDIDATE) == (0, 0) and all(r.grader is None for r in policy.rules):
        return replace(found, slices=slices, frames=frames)
    pess = engine._evidence(policy, both, stop, "pessimistic", labels, slices, frames)
    opt = engine._evidence(policy, both, stop, "optimistic", labels, slices, frames)
    combine = bounded_row if stop is None else bounded_decided_row
    counts = engine._row_counts(policy, frames, found.rows, slices)
    rows = tuple(combine(o, p, q, n) for o, p, q, n in zip(found.rows, pess.rows, opt.rows, counts, strict=True))
    severe = tuple(
        bounded_severe(o, p, q, engine._severe_unresolved(frames.records, slices, o.slice), policy.infra_retries)
        for o, p, q in zip(found.severe, pess.severe, opt.severe, strict=True)
    )
    return replace(found, rows=rows, severe=severe, slices=slices, frames=frames)


def _ends(policy: Policy, both: pl.DataFrame, counted: dict[int, Any] | None) -> list[Any]:
    """The rows and severe slices at both ends (``counted``: from the counts; ``None``: from imputed records)."""
    slices, frames = engine._case_slices(both), engine.CaseFrames(both)
    out = []
    for end in ("pessimistic", "optimistic"):
        found = engine._evidence(policy, both, None, end, None, slices, frames, counted)
        out.append((found.rows, found.severe))
    return out


def _compared(seed: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Old and new ends and verdicts of draw ``seed``; what the draw covered."""
    policy, base, cand = _draw(seed)
    both = engine._both_sides(policy, base, cand)
    assert _ends(policy, both, {}) == _ends(policy, both, None), seed
    new = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
    with monkeypatch.context() as m:
        m.setattr(engine, "_bounded_evidence", _old_bounded_evidence)
        old = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
    assert new.to_dict() == old.to_dict(), seed
    assert new.rules == old.rules, seed  # the floats as floats, not as written
    bounded = [r for r in new.rules if r.unresolved is not None and r.unresolved.candidate]
    return {
        "multiplicity": policy.multiplicity,
        "infra_retries": policy.infra_retries,
        "bounded": len(bounded),
        "between": sum(r.decision == "insufficient_evidence" for r in bounded),
        "to_decide": sum(r.unresolved.to_decide is not None for r in bounded if r.unresolved is not None),
        "paired": sum(r.kind == "paired" for r in bounded),
        "severe": len(new.severe_slices),
        "flips": len(new.flips_pass_to_fail) + len(new.flips_fail_to_pass),
    }


#: Seeded random gates compared (issue 28, item 3, session 41): the suite runs the first 16 of the 24, which still
#: cover every correction and both ``infra_retries`` and reach each minimum below (stated per 24 draws, scaled to
#: the draws run); each planted break of the module docstring that this test saw at 24 fails it at 16 (RESULTS.md).
#: Session 47 re-planted them: each fails by seed 4, but the first draws with a severe slice are seeds 10, 12 and 15,
#: so 16 is the fewest that reaches the severe-slice minimum (4 per 24, scaled to 16: 3); it stays.
GATE_DRAWS = reps(suite=16, full=24)
#: What the draws must reach, per 24 draws: rows with unresolved candidate attempts computed at both ends, paired
#: ones, between the bounds, given a ``to_decide``, severe slices, flipped cases (compared too).
REACHED_PER_24 = {"bounded": 60, "paired": 20, "between": 40, "to_decide": 10, "severe": 4, "flips": 20}


# Out of the fast loop (issue 28, item 3, session 47: 6.5 CPU-s, the largest test there); the whole suite runs its
# GATE_DRAWS seeds. The fast loop keeps the identity on fresh draws: the property test below failed in 10 of 10 runs
# at the inner loop's 10 examples under "flips swapped" and under "retried trials left out" (the other three breaks of
# the module docstring fail 18-21 of the 24 seeded gates; RESULTS.md, session 47, h47-gate-oracles).
@pytest.mark.slow
def test_the_ends_from_counts_are_the_ends_from_imputed_records_on_many_random_gates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = [_compared(seed, monkeypatch) for seed in range(GATE_DRAWS)]
    total = {key: sum(s[key] for s in seen) for key in REACHED_PER_24}
    print(f"{GATE_DRAWS} draws: {total}")
    assert {s["infra_retries"] for s in seen} == {"bounded", "counted"}
    assert {s["multiplicity"] for s in seen} == set(GATE_CORRECTIONS)
    for key, per_24 in REACHED_PER_24.items():
        assert total[key] >= math.ceil(per_24 * GATE_DRAWS / 24), (key, total)


@settings(
    max_examples=examples(10),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(min_value=1000, max_value=2**32 - 1))
def test_the_ends_from_counts_are_the_ends_from_imputed_records_property(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _compared(seed, monkeypatch)


def _versioned(seed: int) -> pl.DataFrame:
    """Records of two systems: cases sometimes at two versions (or another version on one side), groups, infra errors."""
    rng = np.random.default_rng(seed)
    n_cases = int(rng.integers(1, 12))
    groups = [None if rng.random() < 0.5 else f"g{i % 3}" for i in range(n_cases)]
    grouped = rng.random() < 0.5
    rows = []
    for system in ("baseline", "candidate"):
        for i in range(n_cases):
            u = rng.random()
            versions = ["v1", "v2"] if u < 0.05 else ["v2"] if u < 0.1 else [None] if u < 0.3 else ["v1"]
            for version in versions:
                for t in range(int(rng.integers(1, 4))):
                    out = str(rng.choice(["passed", "failed", "passed", "infra_error", "resource_killed"]))
                    rows.append((system, f"c{i}", version, groups[i] if grouped else None, t, 0, out))
    return pl.DataFrame(
        rows,
        schema=["system", "case_id", "case_version", "case_group", "trial", "attempt", "outcome"],
        orient="row",
    )


def _old_build_case_table(records: pl.DataFrame, metric: Any, k: int, several: bool) -> pairing.CaseTable:
    """``build_case_table(records)`` as it was before :func:`~gatestats.paired.pairing.case_table` (session 39)."""
    lazy = system_records(records.lazy(), "system", pairing._REQUIRED)
    per_case = case_summary(lazy, allow_several_versions=True)
    found = tuple(sorted(per_case["system"].unique().to_list()))
    pairing._check_groups(per_case)
    if not several:
        pairing._check_one_version(per_case)
    return replace(pairing._layout(per_case, found, metric=metric, k=k), known_systems=found)


#: Seeded record sets whose case table is compared (issue 28, item 3, session 47): the first 6 of the 40 in the suite
#: and the inner loop, the fewest at which the planted break recorded for this test still fails it (``case_table``
#: without its version check: first at seed 5; RESULTS.md, session 47).
TABLE_DRAWS = reps(suite=6, full=40)


@pytest.mark.parametrize("seed", range(TABLE_DRAWS))
def test_a_case_table_from_the_summary_is_the_table_from_the_records(seed: int) -> None:
    records = _versioned(seed)
    summary = case_summary(records, allow_several_versions=True)
    for metric, k in (("pass_hat_k", 1), ("pass_hat_k", 2), ("pass_at_k", 2)):
        for several in (False, True):
            try:
                old = _old_build_case_table(records, metric, k, several)
            except CaseSetError as exc:
                with pytest.raises(type(exc), match=re.escape(str(exc))):
                    case_table(summary, metric=metric, k=k, allow_several_versions=several)  # type: ignore[arg-type]
                continue
            new = case_table(summary, metric=metric, k=k, allow_several_versions=several)  # type: ignore[arg-type]
            for name in ("systems", "k", "metric", "known_systems"):
                assert getattr(new, name) == getattr(old, name)
            for name in ("labels", "id_codes", "groups", "n", "c", "n_infra_errors", "present", "value"):
                np.testing.assert_array_equal(getattr(new, name), getattr(old, name), strict=True)
            assert build_case_table(records, metric=metric, k=k, allow_several_versions=several).systems == new.systems  # type: ignore[arg-type]
    found = flips(records)
    assert flips(records, summary) == found
    assert flip_counts(records, found, summary) == flip_counts(records, found)


def _colliding(record_set: RecordSet) -> RecordSet:
    """The run set with every odd case ``cNNN`` renamed ``c<NNN-1>@v1`` without a version: a hostile id whose
    label (``id@version``) is the label of the even case before it (``c<NNN-1>`` at ``v1``)."""
    records = record_set.records
    number = pl.col("case_id").str.extract(r"c(\d+)$").cast(pl.Int64)
    odd = number % 2 == 1
    renamed = records.with_columns(
        pl.when(odd)
        .then(
            pl.col("case_id").str.replace(r"c\d+$", "") + pl.format("c{}@v1", (number - 1).cast(pl.String).str.zfill(3))
        )
        .otherwise(pl.col("case_id"))
        .alias("case_id"),
        pl.when(odd).then(None).otherwise(pl.col("case_version")).alias("case_version"),
    )
    keys = renamed.select("case_id", "case_version").unique().sort("case_id", "case_version")
    cases = [{"case_id": c, "case_version": v} for c, v in keys.iter_rows()]
    return replace(record_set, records=renamed, manifest={**record_set.manifest, "cases": cases})


#: Draws with colliding labels (issue 28, item 3, session 47): the first 2 of the 12 in the suite and the inner loop,
#: the fewest at which each planted break still fails it: the paired ends' counts keyed by label (colliding cases
#: merged) fail at seed 0, the threshold ends' at seed 0, the ``to_decide`` search's at seed 1 (RESULTS.md, session
#: 47). The 2 draws hold 2 colliding run sets and 5 bounded paired rows (minimums per 12 draws, scaled: 2 and 1).
HOSTILE_DRAWS = reps(suite=2, full=12)


def test_a_hostile_id_sharing_another_case_label_is_bounded_as_its_own_case(monkeypatch: pytest.MonkeyPatch) -> None:
    # A paired table labels a case id or id@version, so case "c000@v1" (no version) and case "c000" at "v1" share a
    # label. The ends and to_decide must map each unresolved attempt to its own case (by (case_id, case_version)),
    # as the old imputed records did: whole verdicts equal to the old code's on draws with such pairs.
    collided = between = 0
    for seed in range(HOSTILE_DRAWS):
        policy, base, cand = _draw(seed)
        base, cand = _colliding(base), _colliding(cand)
        both = engine._both_sides(policy, base, cand)
        labels = both.select(pl.col("case_id") + pl.lit("@") + pl.col("case_version").fill_null("")).to_series()
        collided += both.select("case_id", "case_version").unique().height > labels.str.strip_suffix("@").n_unique()
        new = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
        with monkeypatch.context() as m:
            m.setattr(engine, "_bounded_evidence", _old_bounded_evidence)
            old = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
        assert new.to_dict() == old.to_dict(), seed
        between += sum(r.unresolved is not None and r.kind == "paired" for r in new.rules)
    assert collided >= math.ceil(8 * HOSTILE_DRAWS / 12)  # the draws hold colliding labels (8 of the 12)
    assert between >= math.ceil(5 * HOSTILE_DRAWS / 12)  # and paired rows bounded over them (5 per 12 draws)
