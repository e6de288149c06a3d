"""A gate call's remaining per-call costs cut, with the same verdicts (issue 28, item 3; session 44).

Session 44 made three reads of a gate call cheaper:

- ``engine._case_slices``: when no record lists a slice (every ``slices`` null or empty,
  :func:`gatestats.gate.summaries.lists_no_slice`; the simulations' records), every case's list is
  empty: the frame is the case ids with an empty list each, without the explode, group and join;
- :func:`gatestats.gate.summaries.slice_rates`: then the one slice is ``(no slice)`` and holds every
  case, so its rates are the analysis of every case the gate already made (as they were whenever a
  slice held every case), without laying out the slices;
- :func:`gatestats.gate.checks.silence_checks`: each side's :func:`~gatestats.gate.checks.case_keys`
  is read once (the case set's check and the same cases' check each read it);
- :func:`gatestats.gate.rules.threshold_resolution` is kept by its arguments (value, type and the
  text of the floats): a gate asks for the same one at each end of its bounds, at each step of its
  search of ``to_decide`` and for its families, and a simulation at every replication;
- :func:`gatestats.estimators.intervals.case_mean_interval_at` (the threshold rows' p-value bisection,
  ~37 levels a row): a sample whose interval is Wilson's keeps its effective size before the level's
  factor (``intervals._capped_kish``, split out of ``_wilson_batch``) and computes each level's bounds
  in floats, the same operations as the one-row arrays (``intervals._OneWilson``);
- ``gate.judge_labels._bound`` (a PPI row's interval, 40 bisection steps a side) computes the test of
  its side only at each step (``_pvalue``; the other side's e-value was computed and never read);
- :func:`gatestats.paired.noninferiority.bounded_mean_evalues` ends with ``_logsumexp_rows``, scipy's
  ``logsumexp`` operations in numpy (its array-API dispatch cost more than the betting sum).

The functions as they were are kept below (word for word but their names): :func:`_old_case_slices`,
:func:`_old_slice_rates`, :func:`_old_silence_checks` with :func:`_old_side_checks` and
:func:`_old_cases_present`, :func:`_old_wilson_batch`, :func:`_old_bounded_mean_evalues`, :func:`_old_pvalues`, :func:`_old_bound`,
:func:`_old_threshold_resolution` (its two callees named through their
module, so that the older oracle's ``_threshold_pvalues`` is the one it calls). :func:`_old_path` patches them in on top of the older oracles'
(``tests/gate/test_gate_call_batched.py``). Compared: whole verdicts of random gates whose records
list no slice (empty lists, null lists), list only null slices, or list slices; each function on
its own on record sets with cases missing on one side, cases a manifest lists without a record,
an empty side and a case at two versions.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from functools import partial
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import polars as pl
import pytest
from scipy import special as scipy_special

from gatestats.estimators import ANALYSIS_COLUMNS, Analysis, analyze, case_summary, intervals
from gatestats.estimators.intervals import case_mean_interval, case_mean_interval_at
from gatestats.gate import RecordSet, checks, engine, evaluate_gate, families, judge_labels, rules, summaries
from gatestats.gate.bindings import SliceRate
from gatestats.gate.checks import Side
from gatestats.gate.grouping import grouping_check
from gatestats.gate.lineage import ancestor_check
from gatestats.gate.policy import Policy, SystemRequirement
from gatestats.gate.verdict import CheckResult
from gatestats.paired import noninferiority
from gatestats.paired.noninferiority import BETTING_GRID
from gatestats.vocabulary import NO_SLICE
from tests.gate import test_gate_call_batched as batched
from tests.gate.small_gates import record_set
from tests.simulations import reps

#: An array of float64 values (the old code below annotated with paired._common's, now an annotation-only name there).
FloatArray = npt.NDArray[np.float64]

NOW, REG = batched.NOW, batched.REG
SIDES = summaries.SIDES
_side_rate, _no_rate = summaries._side_rate, summaries._no_rate
case_keys, _expected_cases, _ids, _block, _ok = (
    checks.case_keys,
    checks._expected_cases,
    checks._ids,
    checks._block,
    checks._ok,
)
_integrity, _run_complete, _system_checks = checks._integrity, checks._run_complete, checks._system_checks
_pin_check, _infra_error_rate, _same_cases = checks._pin_check, checks._infra_error_rate, checks._same_cases
_case_set_version, _layers, _min_cases = checks._case_set_version, checks._layers, checks._min_cases
_min_valid_trials = checks._min_valid_trials


def _old_case_slices(records: pl.DataFrame) -> pl.DataFrame:
    """case_id → list of slices (union over the case's records; empty for a case without slices)."""
    ids = records.select("case_id").unique()
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


def _old_slice_rates(both: pl.DataFrame, policy: Policy, whole: Analysis | None = None) -> tuple[SliceRate, ...]:
    """The pass rate (pass^1) of each side in each slice, with its case-level interval.

    Parameters
    ----------
    both
        Both sides' records, ``system`` relabelled ``baseline`` / ``candidate``.
    policy
        The registered policy (confidence level, seed, severe slices).
    whole
        An analysis of all of ``both`` with k = 1 among its ks (:func:`curve_analysis`): a slice
        of every case reads its rates from it (the same records, level and seed: the same numbers).

    Returns
    -------
    tuple of SliceRate
        Sorted by slice and side; a side without records in a slice is ``insufficient_evidence``
        with the reason (never dropped).
    """
    if both.height == 0:
        return ()
    unsliced = pl.col("slices").list.len().fill_null(0) == 0
    listed = pl.when(unsliced).then(pl.lit([NO_SLICE], dtype=pl.List(pl.String))).otherwise(pl.col("slices"))
    per_case = both.select("case_id", listed.alias("slices")).explode("slices").unique()
    rows: list[SliceRate] = []
    n_all = per_case.get_column("case_id").n_unique()
    # what analyze reads: the copy of a slice's records holds no other column
    read = both.select(c for c in ANALYSIS_COLUMNS if c in both.columns)
    for name in sorted(per_case.get_column("slices").unique().to_list()):
        cases = per_case.filter(pl.col("slices") == name).get_column("case_id").unique()
        if whole is not None and cases.len() == n_all:
            result = whole  # every case: the records analysed are all of both
        else:
            frame = read.filter(pl.col("case_id").is_in(cases.implode()))
            result = analyze(frame, ks=[1], confidence_level=policy.confidence_level, seed=policy.seed)
        found = {s.system: s for s in result.systems}
        for side in SIDES:
            fields = (
                _side_rate(side, found[side])
                if side in found
                else _no_rate(side, 0, f"the {side} has no record in slice {name!r}", policy)
            )
            rows.append(SliceRate(slice=name, severe=name in policy.severe_slices, **fields))
    return tuple(rows)


def _old_cases_present(rs: RecordSet, side: Side) -> list[CheckResult]:
    """The cases of the manifest's case set (where it lists them) that have no record."""
    expected = _expected_cases(rs)
    if expected is None:
        return []
    missing = sorted(c for c, _ in expected - case_keys(rs.records))
    if not missing:
        return []
    return [_block("cases_present", side, f"{len(missing)} cases of the case set have no record: {_ids(missing)}")]


def _old_side_checks(policy: Policy, rs: RecordSet, side: Side, req: SystemRequirement) -> list[CheckResult]:
    """The checks of one side's record set, in a fixed order."""
    records = rs.records
    if records.height == 0:
        return [_block("records_present", side, f"{rs.path}: the record set is empty: nothing was run")]
    out = [_ok("records_present", side, f"{records.height} records"), _integrity(policy, rs, side)]
    out += _run_complete(rs, side)
    out += _system_checks(records, side, req)
    out += [_pin_check(records, side, part, wanted) for part, wanted in req.pins.items()]
    out += _old_cases_present(rs, side)
    out.append(_infra_error_rate(policy, records, side))
    return out


def _old_silence_checks(
    policy: Policy, baseline: RecordSet, candidate: RecordSet, summary: pl.DataFrame, needed_trials: int
) -> list[CheckResult]:
    """Every precondition of the gate, in a fixed order (see the module docstring).

    Parameters
    ----------
    policy
        The gate policy (limits, pins and the system each side must be).
    baseline
        The baseline's record set.
    candidate
        The candidate's record set.
    summary
        The per-case summary of both sides (column ``side``; ``n`` the valid trials of a case).
    needed_trials
        The valid trials every case needs on each side (``max(min_trials, k of every rule)``).

    Returns
    -------
    list[CheckResult]
        One result per check; any with status ``insufficient_evidence`` blocks the gate.
    """
    checks = _old_side_checks(policy, baseline, "baseline", policy.baseline)
    checks += _old_side_checks(policy, candidate, "candidate", policy.candidate)
    lineage = ancestor_check(candidate.records)  # only when the records carry correction lineage
    if lineage is not None:
        checks.append(lineage)
    if baseline.records.height == 0 or candidate.records.height == 0:
        return checks
    cand_cases = case_keys(candidate.records)
    checks += _same_cases(case_keys(baseline.records), cand_cases)
    checks += _case_set_version(policy, {"baseline": baseline, "candidate": candidate})
    checks += _layers({"baseline": baseline, "candidate": candidate})
    checks.append(_min_cases(policy, len(cand_cases)))
    checks += [_min_valid_trials(summary, side, needed_trials) for side in ("baseline", "candidate")]
    checks.append(grouping_check(policy, pl.concat([baseline.records, candidate.records], how="vertical_relaxed")))
    return checks


def _old_threshold_resolution(
    n: int, threshold: float, alpha: float, seed: int
) -> tuple[Literal["ok", "cannot_resolve"], str | None, int | None]:
    """Whether ``n`` cases could show a value above ``threshold`` at ``alpha``; if not, why and how many could.

    Parameters
    ----------
    n
        The cases (or groups) the row has.
    threshold
        The rule's threshold.
    alpha
        The rule's alpha.
    seed
        The policy's seed (for the betting test's resampling).

    Returns
    -------
    tuple[Literal["ok", "cannot_resolve"], str | None, int | None]
        ``ok`` (no reason, no count), or ``cannot_resolve`` with the reason in words and the
        cases that could resolve it (``None``: none could).
    """
    best = rules._threshold_pvalues(np.ones(n), None, threshold, seed)[0]
    if best <= alpha:
        return "ok", None, None
    needed = rules._cases_needed_for_threshold(n, threshold, alpha, seed)
    grid = 1 / n
    finer = f"; the threshold {threshold:g} is finer than one case's weight 1/{n}" if 1 - threshold < grid else ""
    reason = (
        f"even if all {n} cases passed every trial, the data could not show a value above {threshold:g} "
        f"at alpha {alpha:g}{finer}"
        + (f": about {needed} cases are needed" if needed is not None else ": no sample size can")
    )
    return "cannot_resolve", reason, needed


def _old_wilson_batch(
    p: npt.NDArray[np.float64],
    s: npt.NDArray[np.float64],
    constant: npt.NDArray[np.bool_],
    inverse: npt.NDArray[np.intp] | None,
    *,
    n_cases: int,
    n_units: int,
    confidence_level: float,
    max_effective_n: float | npt.NDArray[np.float64] | None,
    design_effect_from_units: int | None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Effective sample size and Wilson bounds of samples with means ``p`` and standard errors ``s``.

    ``max_effective_n``: one cap for every sample, or one per sample (an array as long as ``p``).
    """
    z = intervals.two_sided_z(confidence_level)
    # Only a sample with an estimated variance takes the degrees-of-freedom factor.
    factor = 1.0 if constant.all() else (z / intervals.two_sided_t(n_units - 1, confidence_level)) ** 2
    sizes = np.ones(n_cases) if inverse is None else np.bincount(inverse, minlength=n_units).astype(np.float64)
    # Bhatia-Davis: a unit mean in [0, 1] has variance at most mu (1 - mu), so the (size-weighted)
    # mean of the units is at least as precise as a proportion over this many units.
    units_bound = float(sizes.sum() ** 2 / (sizes @ sizes))
    with np.errstate(divide="ignore", invalid="ignore"):
        kish = np.where(constant, units_bound, n_cases * p * (1 - p) / ((n_cases - 1) * s * s))
    trusted = intervals.DESIGN_EFFECT_FROM_UNITS if design_effect_from_units is None else design_effect_from_units
    if n_units < trusted:
        kish = np.minimum(kish, units_bound)
    cap: float | npt.NDArray[np.float64]
    if max_effective_n is None:
        cap = float(n_cases)
    elif isinstance(max_effective_n, np.ndarray):
        cap = max_effective_n  # one per sample: the same minimum, element by element
    else:
        cap = float(max_effective_n)
    # The degrees-of-freedom factor accounts for an estimated variance; a constant sample
    # estimates none (it uses the Bhatia-Davis bound), so it keeps n* = min(U, cap).
    eff_n = np.minimum(kish, cap) * np.where(constant, 1.0, factor)
    low, high = intervals._wilson_bounds(p, eff_n, z, continuity_correction=True)
    return eff_n, low, high


def _old_bounded_mean_evalues(y: npt.ArrayLike, *, lower: float, n_grid: int = BETTING_GRID) -> FloatArray:
    r"""Betting e-values for :math:`H_0: E[Y] \le 0` from units :math:`Y \ge -\text{lower}` (last axis).

    The mean over :math:`\lambda_j = 0.95\,j/(J\,\text{lower})`, :math:`j = 1..J`, of
    :math:`\prod_i (1 + \lambda_j Y_i)`; vectorised over leading axes (replications).

    Parameters
    ----------
    y
        The units (last axis), each at least ``-lower``.
    lower
        The bound below the units, positive.
    n_grid
        Bets :math:`J` in the grid.

    Returns
    -------
    numpy.ndarray
        The e-values (one per leading index; a scalar array for one sample).

    Raises
    ------
    ValueError
        A unit below ``-lower``, or ``lower <= 0``.

    Examples
    --------
    (the example of the function as it is)
    """
    values = np.asarray(y, dtype=np.float64)
    if not lower > 0 or (values.size and values.min() < -lower * (1 + 1e-12)):
        msg = f"units must be at least -lower with lower > 0 (got lower={lower}, min={values.min(initial=0.0)})"
        raise ValueError(msg)
    lam = noninferiority._BET_CAP * np.arange(1, n_grid + 1) / (n_grid * lower)
    units = values.shape[-1] if values.ndim else 1
    flat = values.reshape(-1, units)
    logs = np.zeros((flat.shape[0], n_grid))
    step = max(1, noninferiority._CHUNK // max(1, flat.shape[0] * n_grid))
    for start in range(0, units, step):
        logs += np.log1p(flat[:, start : start + step, None] * lam).sum(axis=1)
    with np.errstate(over="ignore"):
        out: FloatArray = np.exp(scipy_special.logsumexp(logs, axis=-1) - math.log(n_grid)).reshape(values.shape[:-1])
    return out


def _old_pvalues(units: npt.NDArray[np.float64], value: float) -> tuple[float, float]:
    """(p of mean > value, p of mean < value): the bounded-mean betting test on units in [-1, 2]."""
    above = float(_old_bounded_mean_evalues(units - value, lower=1 + value))
    below = float(_old_bounded_mean_evalues(value - units, lower=2 - value))
    return min(1.0, 1 / above), min(1.0, 1 / below)


def _old_bound(units: npt.NDArray[np.float64], alpha: float, side: int) -> float:
    """The one-sided 1 - alpha bound (side 0: lower, 1: upper) of the units' mean, by bisection on the test."""
    lo, hi = -1.0, 2.0
    for _ in range(40):
        mid = (lo + hi) / 2
        excluded = _old_pvalues(units, mid)[side] <= alpha
        if excluded == (side == 0):
            lo = mid
        else:
            hi = mid
    return lo if side == 0 else hi


def _old_path(m: pytest.MonkeyPatch) -> None:
    """The gate call as it was before session 44 (and, under it, before sessions 41-43: their oracle's old path)."""
    batched._old_path(m)
    m.setattr(engine, "_case_slices", _old_case_slices)
    m.setattr(engine, "slice_rates", _old_slice_rates)
    m.setattr(engine, "silence_checks", _old_silence_checks)
    m.setattr(rules, "threshold_resolution", _old_threshold_resolution)  # kept by its arguments now
    m.setattr(families, "threshold_resolution", _old_threshold_resolution)
    m.setattr(intervals, "_wilson_batch", _old_wilson_batch)
    m.setattr(intervals._OneWilson, "of", staticmethod(lambda *_: None))  # every level through the batch again
    m.setattr(judge_labels, "_pvalues", _old_pvalues)
    m.setattr(judge_labels, "_bound", _old_bound)
    m.setattr(noninferiority, "bounded_mean_evalues", _old_bounded_mean_evalues)


#: How a draw's records list their slices: as drawn, none (empty lists), none (null), only null slices.
_SLICINGS = ("listed", "empty", "null", "null elements")


def _sliced(rs: RecordSet, how: str) -> RecordSet:
    """``rs`` with its records' slices as ``how`` says (severe slices too: none is listed but as drawn)."""
    if how == "listed":
        return rs
    value: Any = {"empty": [], "null": None, "null elements": [None]}[how]
    column = pl.Series("slices", [value] * rs.records.height, dtype=pl.List(pl.String))
    return dataclasses.replace(rs, records=rs.records.with_columns(column))


def _gate(seed: int) -> tuple[Policy, RecordSet, RecordSet, str]:
    policy, base, cand, _ = batched._draw(seed)
    how = _SLICINGS[seed % len(_SLICINGS)]
    return policy, _sliced(base, how), _sliced(cand, how), how


_NULL_SLICE = "ignore:Comparisons with None"  # the old and new layout of a slice list [None] (as before)

#: Random gates compared whole (seeds 100, 101, ...; issue 28, item 3, session 47): 4 of the 12 in the suite, one per
#: way of listing slices, the fewest at which each planted break of session 44 this test sees still fails it (every
#: record read as listing no slice fails at seed 100, a list [None] read as no slice at seed 103; RESULTS.md).
GATE_DRAWS = reps(suite=4, full=12)


@pytest.mark.filterwarnings(_NULL_SLICE)
def test_a_gate_call_gives_the_verdict_of_the_old_path_with_and_without_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, int] = {}
    for seed in range(100, 100 + GATE_DRAWS):
        policy, base, cand, how = _gate(seed)
        new = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
        with monkeypatch.context() as m:
            _old_path(m)
            old = evaluate_gate(policy, base, cand, registration=REG, now=NOW)
        assert new.to_dict() == old.to_dict(), (seed, how)
        assert (new.rules, new.curves, new.slice_rates, new.cost, new.checks) == (
            old.rules,
            old.curves,
            old.slice_rates,
            old.cost,
            old.checks,
        ), (seed, how)
        seen[how] = seen.get(how, 0) + len(new.slice_rates)
    assert set(seen) == set(_SLICINGS)
    assert all(n >= 2 for n in seen.values())  # slice rates shown in every way of listing slices


def _record_sets(seed: int) -> list[tuple[Policy, RecordSet, RecordSet]]:
    """Draw ``seed``'s sides listed each way, and with cases missing: on one side, or with no record a manifest lists."""
    policy, base, cand, _ = batched._draw(seed)
    out = []
    for how in _SLICINGS:
        b, c = _sliced(base, how), _sliced(cand, how)
        out.append((policy, b, c))
    first = str(cand.records.get_column("case_id").min())
    fewer = cand.records.filter(pl.col("case_id") != first)
    out.append((policy, base, record_set("candidate", fewer)))  # the same cases' check
    out.append((policy, dataclasses.replace(base, records=base.records.filter(pl.col("case_id") != first)), cand))
    out.append((policy, base, dataclasses.replace(cand, records=cand.records.clear())))  # an empty side
    two = cand.records.with_columns(
        pl.when(pl.col("case_id") == first).then(pl.lit("v2")).otherwise(pl.col("case_version")).alias("case_version")
    )
    out.append(
        (policy, base, record_set("candidate", pl.concat([cand.records, two.filter(pl.col("case_id") == first)])))
    )
    return out


#: Draws whose record sets (8 each) are compared read by read (issue 28, item 3, session 47): the first of the three
#: (seeds 3, 7, 11) in the suite. Each planted break of session 44 fails it at seed 3 alone: always unsliced, [None]
#: read as no slice, the baseline's check on the candidate's keys, one side's keys for both (RESULTS.md).
READ_SEEDS = reps(suite=1, full=3)


@pytest.mark.filterwarnings(_NULL_SLICE)
def test_each_cheaper_read_is_the_read_it_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    compared = {"slices": 0, "rates": 0, "checks": 0, "blocked": 0}
    for seed in (3, 7, 11)[:READ_SEEDS]:
        for policy, base, cand in _record_sets(seed):
            needed = max([policy.min_trials, policy.k, *(r.k for r in policy.rules)])
            both = engine._both_sides(policy, base, cand)
            summary = (
                case_summary(both, allow_several_versions=True).rename({"system": "side"}) if both.height else None
            )
            empty = pl.DataFrame(schema={"side": pl.String, "n": pl.Int64})
            found = checks.silence_checks(policy, base, cand, empty if summary is None else summary, needed)
            assert found == _old_silence_checks(policy, base, cand, empty if summary is None else summary, needed)
            compared["checks"] += 1
            compared["blocked"] += sum(c.status != "ok" for c in found)
            if both.height == 0:
                continue
            new_slices, old_slices = engine._case_slices(both), _old_case_slices(both)
            assert new_slices.schema == old_slices.schema
            assert new_slices.sort("case_id").equals(old_slices.sort("case_id"))
            compared["slices"] += 1
            whole = batched._caught(partial(summaries.curve_analysis, both, policy))  # refused at two versions
            for given in (whole, None) if isinstance(whole, Analysis) else (None,):
                new_rates = batched._caught(partial(summaries.slice_rates, both, policy, given))
                assert new_rates == batched._caught(partial(_old_slice_rates, both, policy, given))
                compared["rates"] += 1
    # missing cases, an empty side, two versions: checks that block (20 in the three draws, scaled)
    assert compared["blocked"] >= math.ceil(20 * READ_SEEDS / 3)
    # the curves refuse the case at two versions (one record set a draw): its slice rates compared without them
    assert compared == {
        **compared,
        "slices": 8 * READ_SEEDS,
        "checks": 8 * READ_SEEDS,
        "rates": (2 * 8 - 1) * READ_SEEDS,
    }


def test_a_threshold_resolution_kept_is_the_resolution_computed() -> None:
    rng = np.random.default_rng(44)
    thresholds = (0.3, 0.5, 0.9, 0.95, 0.99, 1, 1.0, 0.0, -0.0)
    asked = list(itertools.product(thresholds, (0.05, 0.2, 0.01), (0, 7)))
    sizes = [int(n) for n in rng.integers(1, 60, len(asked))]
    found = {"ok": 0, "cannot_resolve": 0}
    for _ in range(2):  # the second time from what was kept
        for (threshold, alpha, seed), n in zip(asked, sizes, strict=True):
            new = rules.threshold_resolution(n, threshold, alpha, seed)
            assert new == _old_threshold_resolution(n, threshold, alpha, seed), (n, threshold, alpha, seed)
            found[new[0]] += 1
            for other in (n + 1, max(1, n - 1)):  # the same threshold, another size: its own answer
                assert rules.threshold_resolution(other, threshold, alpha, seed) == _old_threshold_resolution(
                    other, threshold, alpha, seed
                )
    assert min(found.values()) >= 20


def _sample(rng: np.random.Generator) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64] | None]:
    """Per-case values (binary, fractions of k, constant 0, 1 or between) and groups (none, few, one)."""
    n = int(rng.choice([int(rng.integers(1, 12)), int(rng.integers(12, 80)), int(rng.integers(80, 400))]))
    kind = str(rng.choice(["binary", "fractions", "constant", "near one", "near zero"]))
    if kind == "constant":
        values = np.full(n, float(rng.choice([0.0, 1.0, 0.5, 0.25])))
    elif kind == "binary":
        values = (rng.random(n) < rng.random()).astype(np.float64)
    else:
        k = int(rng.integers(1, 9))
        p = {"fractions": rng.random(), "near one": 0.97, "near zero": 0.03}[kind]
        values = rng.binomial(k, p, n) / k
    groups = None if rng.random() < 0.5 else rng.integers(0, max(1, int(n // rng.choice([1, 3, 10]))), n)
    return values, groups


#: Samples whose intervals are compared at six levels (issue 28, item 3, session 47): the first 14 of the 300 in the
#: suite, the fewest at which each planted break of session 44 still fails it (no degrees-of-freedom factor and no
#: continuity shift: sample 1; the cap ignored: 2; a constant sample given the factor: 9; the lower bound not 0
#: below 0: 13; RESULTS.md). The minimums are per 300 samples.
LEVEL_DRAWS = reps(suite=14, full=300)


def test_an_interval_at_each_level_is_the_old_interval_at_that_level(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4404)
    seen = {"wilson": 0, "refused": 0, "constant": 0, "at zero": 0, "at one": 0, "clustered": 0}
    for _ in range(LEVEL_DRAWS):
        values, groups = _sample(rng)
        method = str(rng.choice(["wilson", "wilson", "auto", "clt"]))
        cap = rng.choice([None, 5.0, 40.0])
        options: dict[str, Any] = {"groups": groups, "method": method, "seed": 3, "max_effective_n": cap}
        at = case_mean_interval_at(values, **options)
        alphas = [0.4999, 1e-12, *np.exp(rng.uniform(np.log(1e-9), np.log(0.49), 4))]
        for alpha in alphas:
            level = 1 - 2 * float(alpha)
            new, new_batch = at(level), case_mean_interval(values, confidence_level=level, **options)
            with monkeypatch.context() as m:
                m.setattr(intervals, "_wilson_batch", _old_wilson_batch)
                old = case_mean_interval(values, confidence_level=level, **options)
            assert new == old == new_batch, (values, groups, options, level)
            assert new.status != "ok" or new.method == "wilson"  # the clt is not offered at these sizes
            seen["wilson" if new.status == "ok" else "refused"] += 1
            seen["constant"] += new.status == "ok" and bool(np.all(values == values[0]))
            seen["at zero"] += new.ci_low == 0.0
            seen["at one"] += new.ci_high == 1.0
            seen["clustered"] += new.status == "ok" and new.clustered
    print(seen)
    assert seen["wilson"] >= math.ceil(800 * LEVEL_DRAWS / 300)
    assert min(seen.values()) >= math.ceil(50 * LEVEL_DRAWS / 300)


#: Threshold p-value bisections compared (issue 28, item 3, session 47): the first 2 of the 120 in the suite, the fewest
#: at which each planted break of session 44 that this test sees still fails it (no degrees-of-freedom factor, no
#: continuity shift: sample 1; a constant sample given the factor: sample 0; RESULTS.md). The minimum is per 120.
PVALUE_DRAWS = reps(suite=2, full=120)


def test_a_threshold_pvalue_is_the_old_bisection(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4405)
    decided = 0
    for _ in range(PVALUE_DRAWS):
        values, groups = _sample(rng)
        threshold = float(rng.choice([0.3, 0.5, 0.8, 0.95]))
        new = rules._threshold_pvalues(values, groups, threshold, 0)
        with monkeypatch.context() as m:
            m.setattr(intervals, "_wilson_batch", _old_wilson_batch)
            old = batched._old_threshold_pvalues(values, groups, threshold, 0)  # an interval per level, as before
        assert new == old, (values, groups, threshold)
        decided += min(new) < 0.05
    assert decided >= math.ceil(30 * PVALUE_DRAWS / 120)


def _edge_rows(rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """A 2-D array for ``logsumexp``: normal or huge values, infinities, NaN, ties, equal rows, no row."""
    rows, cols = int(rng.integers(0, 4)), int(rng.integers(1, 50))
    a = rng.normal(size=(rows, cols)) * float(rng.choice([1.0, 50.0, 1e3, 1e300]))
    kind = int(rng.integers(0, 5))
    if kind == 1:
        a[:, :] = rng.choice([-np.inf, np.inf, np.nan, 0.0, 5.0, -1e308, 709.0, 710.0], size=a.shape)
    elif kind == 2 and cols > 1:
        a[:, 1] = a[:, 0]  # two maxima
    elif kind == 3:
        a[:] = a[:, :1]
    elif kind == 4:
        a = np.round(a)
    return a


def test_logsumexp_of_rows_is_scipys_to_the_last_bit() -> None:
    rng = np.random.default_rng(4406)
    inf, nan = np.inf, np.nan
    fixed = [[-inf, -inf], [-inf], [inf, inf], [inf, -inf], [nan, 1.0], [1e308, 1e308], [-1e308, -inf], [0.0, -0.0]]
    special_values = 0
    for a in [np.array([row]) for row in fixed] + [_edge_rows(rng) for _ in range(1500)]:
        with np.errstate(all="ignore"):
            old = np.asarray(scipy_special.logsumexp(a, axis=-1))
        new = noninferiority._logsumexp_rows(a)
        assert (old.shape, old.dtype) == (new.shape, new.dtype)
        assert np.array_equal(old, new, equal_nan=True), a
        assert np.array_equal(np.signbit(old), np.signbit(new)), a
        special_values += int((~np.isfinite(new)).sum())
    assert special_values >= 200  # infinities and NaN in the results too


def test_betting_evalues_and_ppi_bounds_are_the_old_ones() -> None:
    rng = np.random.default_rng(4407)
    for _ in range(60):
        lower = float(rng.choice([0.05, 0.5, 1.0, 1.7, 2.9]))
        shape = (
            (int(rng.integers(0, 3)), int(rng.integers(1, 200))) if rng.random() < 0.3 else (int(rng.integers(1, 300)),)
        )
        y = rng.uniform(-lower, float(rng.choice([0.1, 1.0, 3.0])), shape)
        grid = int(rng.choice([1, 5, 40]))
        new = noninferiority.bounded_mean_evalues(y, lower=lower, n_grid=grid)
        assert np.array_equal(new, _old_bounded_mean_evalues(y, lower=lower, n_grid=grid), equal_nan=True)
    for _ in range(25):
        n = int(rng.integers(3, 120))
        units = np.clip(rng.random(n) + rng.choice([-1.0, 0.0, 0.0, 1.0], n) * rng.random(n), -1.0, 2.0)
        value = float(rng.uniform(-0.9, 1.9))
        assert judge_labels._pvalues(units, value) == _old_pvalues(units, value)
        for side in (0, 1):
            tail = float(rng.choice([0.025, 0.05, 0.2]))
            assert judge_labels._bound(units, tail, side) == _old_bound(units, tail, side), (units, tail, side)
