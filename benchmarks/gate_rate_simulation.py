"""False-pass and A/A false-fail rates of the gate at the boundary of each rule's null, with teeth.

Issue 28, item 3 (session 36). The size tests of the gate (``tests/gate/test_size_gate.py``,
``tests/gate/test_aa_simulation.py``) run these drivers at a reduced size; this script runs them at
full size, and with a **planted break** (``--plant``) to show which breaks each cell catches.

Every replication goes through :func:`gatestats.gate.evaluate_gate`. Two drivers:

* :func:`pass_rate` -- one paired non-inferiority row (``metric = "pass_rate"``, margin Δ, α = 0.05),
  the candidate's mean difference exactly ``-Δ`` (the boundary of "the rule is violated"): each
  case (or group of cases) is broken with probability ``broken_share``; the baseline passes a broken
  case always, the candidate with probability ``1 - Δ / broken_share``; other cases are unchanged
  (``p ~ Beta(a, b)``, redrawn every replication). Counted: the row's decision (a ``pass`` is a false
  pass), whether the row was **decidable** (it had a test: an adjusted p-value, not refused for
  lack of cases) and its adjusted p-value, so the rate at any other alpha can be read from the same draws.
* :func:`aa_verdicts` -- the same system against itself under the cell's blocking rows (of: pass
  rate "not worse" at Δ = 0, pass^k non-inferior by 0.05, a pass-rate floor at the population mean),
  cases drawn afresh every replication from ``Beta(a, b)``. A ``fail`` verdict is a false fail.

Why the cells (see RESULTS.md, "Issue 28 item 3, session 36"): the bounded-mean betting test the gate
uses with several trials or case groups is conservative at the margin (Markov's bound on an e-value:
its size is a fraction of α), so tripling α leaves its false-pass rate below α and no size test of
such a cell can see it. Those cells catch liberal p-values (the replaced case-level t test, groups
ignored). A cell with one trial per independent case (the exact unconditional test; its exact size
at this cell's boundary is 0.0478) and the A/A cell with one trial (exact McNemar) are tight: there a
doubled or tripled α shows. Each result carries the adjusted p-value of every replication, so the rate
at ``TEETH_FACTOR × α`` (and of the replaced case t test) is read from the same draws: a test asserts
both that the size holds and that it would see the break.

Planted breaks (:func:`planted`, nothing in ``src/`` is edited; each patches a name the engine calls):

``alpha``       every row decided at ``factor × `` its registered alpha (the decision only);
``case_t``      the paired row's bounded-mean test replaced by the case-level t test it replaced (issue 12);
``evalue``      the betting test's e-value multiplied by ``factor`` (a liberal e-value, e.g. the best
                betting fraction instead of the mixture over 40);
``no_groups``   declared case groups ignored (each case its own unit);
``no_holm``     no multiplicity correction (each blocking row at its own alpha).

Run (seeded; 300 replications of every cell about 3.5 CPU-minutes on a shared 2-core machine)::

    nice -n 10 .venv/bin/python benchmarks/gate_rate_simulation.py --reps 300
    nice -n 10 .venv/bin/python benchmarks/gate_rate_simulation.py --reps 200 --plant alpha --factor 3
"""

from __future__ import annotations

import argparse
import contextlib
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import polars as pl
from scipy import stats

from gatestats.gate import RecordSet, Registration, Verdict, evaluate_gate, parse_policy
from gatestats.gate.policy import Policy
from gatestats.records.contract import POLARS_SCHEMA

ALPHA = 0.05
#: The α factor each cell's teeth are asserted against (the rate at ``TEETH_FACTOR * ALPHA`` in the same draws).
TEETH_FACTOR = 3.0
PLANTS = ("alpha", "case_t", "evalue", "no_groups", "no_holm")

_HEAD = """
format = "gatestats-policy/1"
name = "gate-rate-simulation"
version = "1"
k = {k}
min_cases = {n_cases}
min_trials = {trials}
max_infra_error_rate = 0.1
on_insufficient_evidence = "block"
multiplicity = "holm"
require_checksums = false

[baseline]
system = "{baseline}"

[candidate]
system = "{candidate}"
"""
#: The paired non-inferiority row of :func:`pass_rate` (``margin``, ``alpha`` to fill in).
NI_RULE = """
[[rules]]
name = "pass rate non-inferior"
metric = "pass_rate"
test = "paired"
margin = {margin}
alpha = {alpha}
"""
_AA_RULES = {
    "not_worse": '[[rules]]\nname = "pass rate not worse"\nmetric = "pass_rate"\ntest = "paired"\nmargin = 0.0\n',
    "pass_k": '[[rules]]\nname = "pass^k non-inferior"\nmetric = "pass_hat_k"\ntest = "paired"\nmargin = 0.05\n',
    "floor": '[[rules]]\nname = "floor at the population mean"\nmetric = "pass_rate"\nthreshold = {threshold}\n',
}
_REG = {"run_set": "x", "registered_at": "t", "first_record_at": None, "origin": "runner"}


def limit(reps: int, alpha: float = ALPHA) -> float:
    """``alpha + 2 SE``: the largest false rate a size test of ``reps`` replications accepts."""
    return alpha + 2 * math.sqrt(alpha * (1 - alpha) / reps)


def records(system: str, p: np.ndarray, trials: int, rng: np.random.Generator, groups: np.ndarray | None
            ) -> pl.DataFrame:  # fmt: skip
    """Run records of ``system``: case ``i`` passes each of ``trials`` trials with probability ``p[i]``.

    ``groups[i]`` is case ``i``'s ``case_group`` (``None``: every case its own unit).
    """
    return frame_of(system, rng.random((p.size, trials)) < p[:, None], groups)


def frame_of(system: str, passed: np.ndarray, groups: np.ndarray | None) -> pl.DataFrame:
    """Run records of ``system`` with the outcomes ``passed[case, trial]`` (see :func:`records`)."""
    n_cases, trials = passed.shape
    n = passed.size
    frame = pl.DataFrame(
        {
            "schema_version": [1] * n,
            "record_id": [f"{system}-{i}" for i in range(n)],
            "run_set_id": [f"rs-{system}"] * n,
            "system": [system] * n,
            "case_id": np.repeat([f"c{i:04d}" for i in range(n_cases)], trials),
            "case_version": ["v1"] * n,
            "case_group": None if groups is None else np.repeat([f"g{g:03d}" for g in groups], trials),
            "trial": np.tile(np.arange(trials), n_cases),
            "attempt": [0] * n,
            "outcome": np.where(passed.ravel(), "passed", "failed"),
            "model_id": ["model-new"] * n,
            "system_digest": ["sd"] * n,
        }
    )
    return frame.with_columns(
        [pl.lit(None, dtype=dtype).alias(name) for name, dtype in POLARS_SCHEMA.items() if name not in frame.columns]
    ).select(list(POLARS_SCHEMA))


def record_set(name: str, frame: pl.DataFrame) -> RecordSet:
    """An in-memory, complete run set of ``frame`` (no checksums: the policies accept unverified records)."""
    manifest = {"complete": True, "cases": [{"case_id": c, "case_version": "v1"} for c in frame["case_id"].unique()]}
    return RecordSet(path=Path(name), kind="run_set", manifest=manifest, records=frame, files=(), digest=name)


def _policy(rules: str, *, k: int, n_cases: int, trials: int, same: bool = False) -> tuple[Policy, Registration]:
    sides = {"baseline": "same", "candidate": "same"} if same else {"baseline": "baseline", "candidate": "candidate"}
    policy = parse_policy((_HEAD.format(k=k, n_cases=n_cases, trials=trials, **sides) + rules).encode())
    return policy, Registration(policy_digest=policy.digest, **_REG)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True, kw_only=True)
class SizeCell:
    """A paired non-inferiority row at its margin: the shape of the release and of its regression."""

    name: str
    n_cases: int
    trials: int
    margin: float
    broken_share: float
    group_size: int = 1
    beta: tuple[float, float] = (2.0, 1.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rates:
    """What a cell's replications decided: counts, and per replication the adjusted p-value of the event.

    ``pvalues[i]`` is the adjusted p-value whose ``<= alpha`` makes replication ``i`` a false decision
    (a pass for :func:`pass_rate`, a fail for :func:`aa_verdicts`); ``None`` when no test was offered.
    """

    cell: str
    reps: int
    seed: int
    counts: dict[str, int]
    false_rate: float
    pvalues: tuple[float | None, ...]
    #: The replaced case-level t test's p-value of the same draws (paired cells; empty for A/A).
    replaced: tuple[float | None, ...] = ()

    @property
    def decidable(self) -> float:
        """The share of replications in which the row(s) had a test (not refused for lack of cases)."""
        return sum(p is not None for p in self.pvalues) / self.reps

    def rate_at(self, alpha: float, *, replaced: bool = False) -> float:
        """The false rate the same draws give when decided at ``alpha`` (adjusted p-value ``<= alpha``).

        ``replaced=True``: the rate of the replaced case-level t test in the same draws.
        """
        return sum(p is not None and p <= alpha for p in (self.replaced if replaced else self.pvalues)) / self.reps


SIZE_CELLS: dict[str, SizeCell] = {
    # Probabilities near 0 and 1 (unchanged cases ~ Beta(0.1, 0.05): most always or never pass), the
    # regression in about 5 of 100 cases x 20 trials (the size study's conc-5 shape): the betting
    # test decides every replication; the replaced case-level t test passes about 0.12 here.
    "concentrated": SizeCell(name="concentrated", n_cases=100, trials=20, margin=0.05, broken_share=0.05,
                             beta=(0.1, 0.05)),
    # Clustered cases: 20 groups of 10, one trial, a quarter of the groups broken (betting test on
    # group sums); with the groups ignored the gate passes about a quarter of the replications.
    "groups": SizeCell(name="groups", n_cases=200, trials=1, margin=0.25, broken_share=0.25, group_size=10),
    # One trial per independent case (the exact unconditional test, tight at the margin), cases near 1.
    "one_trial": SizeCell(name="one_trial", n_cases=300, trials=1, margin=0.1, broken_share=0.25, beta=(8.0, 1.0)),
    # Few cases: 40 cases x 4 trials cannot show non-inferiority by 0.05 (91 needed): insufficient evidence.
    "few_cases": SizeCell(name="few_cases", n_cases=40, trials=4, margin=0.05, broken_share=0.05),
}  # fmt: skip


def pass_rate(cell: SizeCell, *, reps: int, seed: int, at_margin: bool = True) -> Rates:
    """The paired row's decisions over ``reps`` replications of ``cell`` (see the module docstring).

    With ``at_margin=False`` nothing is broken for the candidate (difference 0: the power).
    """
    rng = np.random.default_rng(seed)
    drop = cell.margin / cell.broken_share if at_margin else 0.0
    policy, reg = _policy(
        NI_RULE.format(margin=cell.margin, alpha=ALPHA), k=1, n_cases=cell.n_cases, trials=cell.trials
    )
    n_units = cell.n_cases // cell.group_size
    groups = np.repeat(np.arange(n_units), cell.group_size) if cell.group_size > 1 else None
    decisions: list[str] = []
    pvalues: list[float | None] = []
    replaced: list[float | None] = []
    for _ in range(reps):
        broken = np.repeat(rng.random(n_units) < cell.broken_share, cell.group_size)
        p_b = np.where(broken, 1.0, rng.beta(*cell.beta, cell.n_cases))
        p_c = np.where(broken, 1.0 - drop, p_b)
        passed_b = rng.random((cell.n_cases, cell.trials)) < p_b[:, None]
        passed_c = rng.random((cell.n_cases, cell.trials)) < p_c[:, None]
        base = record_set("baseline", frame_of("baseline", passed_b, groups))
        cand = record_set("candidate", frame_of("candidate", passed_c, groups))
        row = evaluate_gate(policy, base, cand, registration=reg, now="t").rules[0]
        decisions.append(row.decision)
        pvalues.append(row.pvalue_pass_adjusted)
        d = passed_c.mean(axis=1) - passed_b.mean(axis=1)
        unit = np.arange(cell.n_cases) // cell.group_size
        replaced.append(_case_t(np.bincount(unit, d), np.bincount(unit), margin=cell.margin, alpha=ALPHA).pvalue)
    counts = {v: decisions.count(v) for v in sorted(set(decisions))}
    return Rates(cell=cell.name, reps=reps, seed=seed, counts=counts, false_rate=counts.get("pass", 0) / reps,
                 pvalues=tuple(pvalues), replaced=tuple(replaced))  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class AaCell:
    """The same system against itself: cases drawn from ``Beta(*beta)`` every replication."""

    name: str
    n_cases: int
    trials: int
    rules: tuple[str, ...] = ("not_worse", "pass_k", "floor")
    beta: tuple[float, float] = (2.0, 1.0)


AA_CELLS: dict[str, AaCell] = {
    # One trial per case, the "not worse" row alone (exact McNemar, both tails at their boundary):
    # tight, so a doubled or tripled alpha shows.
    "one_trial": AaCell(name="one_trial", n_cases=400, trials=1, rules=("not_worse",)),
    # The three-row release policy, four trials, 160 cases (every row decidable; pass^4 needs 91):
    # conservative rows in a Holm family of three, so it measures the level but cannot see a
    # tripled alpha (full size only, not in the suite).
    "policy": AaCell(name="policy", n_cases=160, trials=4),
}


def _first_fail(verdict: Verdict) -> float | None:
    """The smallest adjusted ``pvalue_fail`` among rows with a test (``None``: none had one)."""
    found = [r.pvalue_fail_adjusted for r in verdict.rules if r.pvalue_fail_adjusted is not None]
    return min(found) if found else None


def aa_verdicts(cell: AaCell, *, reps: int, seed: int) -> Rates:
    """Verdicts of the same system against itself over ``reps`` replications (see the module docstring)."""
    rng = np.random.default_rng(seed)
    a, b = cell.beta
    rules = "\n".join(_AA_RULES[name] for name in cell.rules).format(threshold=round(a / (a + b), 6))
    policy, reg = _policy(rules, k=cell.trials, n_cases=cell.n_cases, trials=cell.trials, same=True)
    verdicts: list[str] = []
    pvalues: list[float | None] = []
    for _ in range(reps):
        p = rng.beta(a, b, cell.n_cases)
        base = record_set("baseline", records("same", p, cell.trials, rng, None))
        cand = record_set("candidate", records("same", p, cell.trials, rng, None))
        verdict = evaluate_gate(policy, base, cand, registration=reg, now="t")
        verdicts.append(verdict.verdict)
        pvalues.append(_first_fail(verdict))
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    return Rates(cell=cell.name, reps=reps, seed=seed, counts=counts, false_rate=counts.get("fail", 0) / reps,
                 pvalues=tuple(pvalues))  # fmt: skip


def _alpha_times(factor: float) -> Callable[..., Any]:
    from gatestats.gate import engine

    original = engine.decide_families

    def decide(rows: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
        out = original([replace(r, alpha=r.alpha * factor) for r in rows], *args, **kwargs)
        return [replace(r, alpha=r.alpha / factor) for r in out]

    return decide


def _case_t(sums: Any, sizes: Any = None, *, margin: float, alpha: float = 0.025) -> Any:
    from gatestats.paired.noninferiority import noninferiority_case_level

    s = np.asarray(sums, dtype=float)
    n_g = np.ones_like(s) if sizes is None else np.asarray(sizes, dtype=float)
    d = s / n_g
    se = float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 else None
    return noninferiority_case_level(float(d.mean()), se, int(d.size), margin=margin, alpha=alpha)


def _evalue_times(factor: float) -> Callable[..., Any]:
    from gatestats.paired import noninferiority

    original = noninferiority.bounded_mean_evalues

    def inflated(y: Any, *, lower: float, n_grid: int = noninferiority.BETTING_GRID) -> Any:
        return original(y, lower=lower, n_grid=n_grid) * factor

    return inflated


def _no_holm(rows: list[Any], members: list[int], multiplicity: Any) -> dict[int, tuple[float, float]]:
    return {
        i: (float(rows[i].pvalue_pass), float(rows[i].pvalue_fail))
        for i in members
        if rows[i].decision != "insufficient_evidence" and rows[i].pvalue_pass is not None
    }


@contextlib.contextmanager
def planted(name: str | None, factor: float = TEETH_FACTOR) -> Iterator[None]:
    """Run the block with the planted break ``name`` (one of :data:`PLANTS`; ``None``: none).

    Nothing in ``src/`` is edited: each break patches one name the engine looks up at call time.
    """
    if name is None:
        yield
        return
    targets: dict[str, tuple[str, Any]] = {
        "alpha": ("gatestats.gate.engine.decide_families", lambda: _alpha_times(factor)),
        "case_t": ("gatestats.paired.compare.noninferiority_bounded_mean", lambda: _case_t),
        "evalue": ("gatestats.paired.noninferiority.bounded_mean_evalues", lambda: _evalue_times(factor)),
        "no_groups": ("gatestats.gate.engine.apply_grouping", lambda: lambda frame, grouping: frame.with_columns(
            pl.lit(None, dtype=pl.String).alias("case_group"))),
        "no_holm": ("gatestats.gate.families.adjusted_family", lambda: _no_holm),
    }  # fmt: skip
    if name not in targets:
        msg = f"unknown planted break {name!r}: one of {', '.join(PLANTS)}"
        raise ValueError(msg)
    target, make = targets[name]
    with mock.patch(target, make()):
        yield


def binomial_limit(reps: int, alpha: float = ALPHA, level: float = 0.01) -> int:
    """The largest count of false decisions that a true rate ``alpha`` exceeds with probability below ``level``.

    ``min c`` with ``P(X > c) < level`` for ``X ~ Binomial(reps, alpha)`` (scipy's survival function).
    """
    return int(stats.binom.isf(level, reps, alpha))


def _line(r: Rates, elapsed: float) -> str:
    replaced = f"{r.rate_at(ALPHA, replaced=True):.3f}" if r.replaced else "—"
    return (
        f"| {r.cell} | {r.reps} | {r.seed} | {r.counts} | {r.false_rate:.3f} | {limit(r.reps):.3f} | "
        f"{r.decidable:.2f} | {r.rate_at(2 * ALPHA):.3f} | {r.rate_at(TEETH_FACTOR * ALPHA):.3f} | {replaced} | "
        f"{elapsed:.0f} |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table of every cell at ``--reps`` replications, optionally with a planted break."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--plant", choices=PLANTS, default=None)
    parser.add_argument("--factor", type=float, default=TEETH_FACTOR)
    parser.add_argument("--cells", default="", help="comma-separated names (size:<name> or aa:<name>); default all")
    args = parser.parse_args(argv)
    wanted = {c for c in args.cells.split(",") if c}
    print(f"plant={args.plant} factor={args.factor} reps={args.reps} seed={args.seed}")
    print(
        "| cell | reps | seed | decisions | false rate | α + 2 SE | decidable | at 2α (same draws) | at 3α | "
        "case t at α | CPU s |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    with planted(args.plant, args.factor):
        for i, (kind, cell) in enumerate(
            [("size", c) for c in SIZE_CELLS.values()] + [("aa", c) for c in AA_CELLS.values()]
        ):
            if wanted and f"{kind}:{cell.name}" not in wanted:
                continue
            start = time.process_time()
            seed = args.seed + i
            r = (
                pass_rate(cell, reps=args.reps, seed=seed)
                if isinstance(cell, SizeCell)
                else aa_verdicts(cell, reps=args.reps, seed=seed)
            )
            print(_line(replace(r, cell=f"{kind}:{r.cell}"), time.process_time() - start), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
