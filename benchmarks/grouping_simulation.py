"""Grouped cases through the gate: false passes when groups are not declared, declared, or stated independent.

Issue 30, item 4. Cases come in groups (SWE-bench-like ids ``repoGG__repoGG-I``: the stem is the
group) that share their difficulty; the records carry no ``case_group``, so the only trace of the
groups is in the case ids. Each cell runs :func:`gatestats.gate.evaluate_gate` ``--reps`` times:

* at the **null boundary** — threshold rows: the population mean pass rate is exactly the threshold
  ``T = 0.6`` (group ``theta ~ Beta(1.2, 0.8)``, every case of a group has the group's ``theta``);
  non-inferiority rows (margin 0.1): group baseline ``theta_b ~ U(0.5, 0.6)``, group difference
  ``d = -0.1 + U(-0.4, 0.4)`` (mean exactly minus the margin), cases share their group's values;
* at an **improvement** (power) — threshold: mean ``T + 0.1``; non-inferiority: ``d = U(-0.4, 0.4)``
  (the candidate equal to the baseline on average).

Three policies per cell:

* ``independent`` — ``case_grouping = "independent"``: the cases treated as independent. This is
  what the gate did before issue 30 when the policy said nothing (its false-pass rate is the
  issue's 0.145 / 0.169 / 0.082 / 0.064);
* ``undeclared`` — no ``case_grouping``: the gate now blocks (check ``case_grouping``);
* ``id_prefix`` — ``case_grouping = "id_prefix:-"``: groups as the unit (cluster-robust interval,
  bounded-mean test on group sums).

A cell is within the level when its pass rate is at most ``alpha + 2 SE`` with
``SE = sqrt(alpha (1 - alpha) / reps)``.

The improvement is run for the declared policy only (the undeclared one is blocked, the independent
one is not valid); the undeclared policy runs a fifth of the replications (it is blocked before any
rule decides).

Run (seeded; the recorded tables in docs/gate.md, "Grouped cases", took about 10 minutes for the
threshold cells at 150 replications and 10 for the non-inferiority cells at 100, one process per
number of trials, on a shared 2-core machine)::

    nice -n 10 .venv/bin/python benchmarks/grouping_simulation.py --reps 150 --kinds threshold
    nice -n 10 .venv/bin/python benchmarks/grouping_simulation.py --reps 100 --kinds noninferiority --trials 1
    nice -n 10 .venv/bin/python benchmarks/grouping_simulation.py --reps 100 --kinds noninferiority --trials 4
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from gatestats.gate import RecordSet, Registration, evaluate_gate, parse_policy
from gatestats.records.contract import POLARS_SCHEMA

SEED = 20261203
ALPHA = 0.05
THRESHOLD = 0.6
MARGIN = 0.1
#: (rule kind, groups, cases per group) of the issue.
SHAPES: tuple[tuple[str, int, int], ...] = (
    ("threshold", 20, 10),
    ("threshold", 8, 10),
    ("noninferiority", 50, 4),
    ("noninferiority", 40, 5),
)
GROUPINGS = ("independent", "undeclared", "id_prefix:-")

_HEAD = """
format = "gatestats-policy/1"
name = "grouping-simulation"
version = "1"
k = 1
min_cases = 10
min_trials = {trials}
max_infra_error_rate = 0.1
on_insufficient_evidence = "block"
require_checksums = false
{grouping}

[baseline]
system = "baseline"

[candidate]
system = "candidate"
"""
_RULES = {
    "threshold": f'[[rules]]\nname = "floor"\nmetric = "pass_rate"\nthreshold = {THRESHOLD}\nalpha = {ALPHA}\n',
    "noninferiority": (
        f'[[rules]]\nname = "not worse"\nmetric = "pass_rate"\ntest = "paired"\nmargin = {MARGIN}\nalpha = {ALPHA}\n'
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupingCell:
    """One cell: a shape, a number of trials, a policy's grouping; pass rates at the boundary and at an improvement."""

    kind: str
    groups: int
    size: int
    trials: int
    grouping: str
    reps: int
    false_pass: float
    blocked: float
    power: float

    @property
    def limit(self) -> float:
        """``alpha + 2 SE`` at this cell's replications."""
        return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / self.reps)


def policy_for(kind: str, trials: int, grouping: str):  # type: ignore[no-untyped-def]
    """The simulation's policy: one rule of ``kind``, ``case_grouping`` as given (``undeclared``: none)."""
    line = "" if grouping == "undeclared" else f'case_grouping = "{grouping}"'
    return parse_policy((_HEAD.format(trials=trials, grouping=line) + "\n" + _RULES[kind]).encode())


def records_frame(system: str, theta: np.ndarray, ids: Sequence[str], trials: int, rng: np.random.Generator
                  ) -> pl.DataFrame:  # fmt: skip
    """Run records of ``system``: case ``ids[i]`` passes each of ``trials`` trials with probability ``theta[i]``."""
    passed = rng.random((theta.size, trials)) < theta[:, None]
    n = theta.size * trials
    frame = pl.DataFrame(
        {
            "schema_version": [1] * n,
            "record_id": [f"{system}-{i}" for i in range(n)],
            "run_set_id": [f"rs-{system}"] * n,
            "system": [system] * n,
            "case_id": np.repeat(list(ids), trials),
            "case_version": ["v1"] * n,
            "trial": np.tile(np.arange(trials), theta.size),
            "attempt": [0] * n,
            "outcome": np.where(passed.ravel(), "passed", "failed"),
            "system_digest": [f"sd-{system}"] * n,
        }
    )
    return frame.with_columns(
        [pl.lit(None, dtype=dtype).alias(name) for name, dtype in POLARS_SCHEMA.items() if name not in frame.columns]
    ).select(list(POLARS_SCHEMA))


def record_set(system: str, frame: pl.DataFrame) -> RecordSet:
    """An in-memory, complete run set of ``frame`` (no checksums: the policies accept unverified records)."""
    cases = [{"case_id": c, "case_version": "v1"} for c in frame["case_id"].unique().sort()]
    return RecordSet(path=Path(system), kind="run_set", manifest={"complete": True, "cases": cases},
                     records=frame, files=(), digest=system)  # fmt: skip


def _frame(system: str, theta: np.ndarray, groups: int, size: int, trials: int, rng: np.random.Generator
           ) -> pl.DataFrame:  # fmt: skip
    ids = [f"repo{g:02d}__repo{g:02d}-{1000 + i}" for g in range(groups) for i in range(size)]
    return records_frame(system, theta, ids, trials, rng)


_set = record_set


def draw(kind: str, groups: int, size: int, *, null: bool, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per-case pass probabilities (baseline, candidate), shared within each group (see the module docstring)."""
    if kind == "threshold":
        mean = THRESHOLD if null else THRESHOLD + 0.1
        theta = rng.beta(2 * mean, 2 * (1 - mean), size=groups)
        cand = np.repeat(theta, size)
        return np.full(cand.size, 0.5), cand
    base = rng.uniform(0.5, 0.6, size=groups)
    diff = (-MARGIN if null else 0.0) + rng.uniform(-0.4, 0.4, size=groups)
    return np.repeat(base, size), np.repeat(base + diff, size)


def run_cell(kind: str, groups: int, size: int, trials: int, grouping: str, reps: int, seed: int, *,
             power: bool = True) -> GroupingCell:  # fmt: skip
    """Pass rates of one cell at the boundary and (``power``) at the improvement; the same seed for every grouping.

    ``blocked`` is the share of boundary replications the ``case_grouping`` check blocked.
    """
    policy = policy_for(kind, trials, grouping)
    reg = Registration(run_set="x", policy_digest=policy.digest, registered_at="t", first_record_at=None,
                       origin="runner")  # fmt: skip
    passes = {True: 0, False: 0}
    blocked = 0
    for null in (True, False) if power else (True,):
        rng = np.random.default_rng([seed, groups, size, trials, int(null)])
        for _ in range(reps):
            p_b, p_c = draw(kind, groups, size, null=null, rng=rng)
            base = _set("baseline", _frame("baseline", p_b, groups, size, trials, rng))
            cand = _set("candidate", _frame("candidate", p_c, groups, size, trials, rng))
            v = evaluate_gate(policy, base, cand, registration=reg, now="t")
            passes[null] += v.verdict == "pass"
            blocked += null and any(c.name == "case_grouping" and c.status != "ok" for c in v.checks)
    return GroupingCell(kind=kind, groups=groups, size=size, trials=trials, grouping=grouping, reps=reps,
                        false_pass=passes[True] / reps, blocked=blocked / reps,
                        power=passes[False] / reps if power else math.nan)  # fmt: skip


def markdown(cells: Sequence[GroupingCell], seed: int) -> str:
    """The table of every cell."""
    reps = max((c.reps for c in cells), default=0)
    lines = [
        f"Seed {seed}, up to {reps} replications per cell and side, alpha {ALPHA}; limit alpha + 2 SE = "
        f"{cells[0].limit:.3f} at {reps}. `blocked`: the share the case_grouping check blocked."
        if cells
        else "",
        "",
        "| rule | groups × cases | trials | policy's case_grouping | pass at the boundary | blocked | "
        "within α + 2 SE | pass at the improvement |",
        "|---|---|---:|---|---:|---:|:---:|---:|",
    ]
    for c in cells:
        ok = "yes" if c.false_pass <= c.limit else "**no**"
        power = "—" if math.isnan(c.power) else f"{c.power:.3f}"
        lines.append(f"| {c.kind} | {c.groups} × {c.size} | {c.trials} | {c.grouping} ({c.reps} reps) | "
                     f"{c.false_pass:.3f} | {c.blocked:.3f} | {ok} | {power} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--trials", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--kinds", nargs="+", default=["threshold", "noninferiority"])
    parser.add_argument("--out", type=Path, default=None, help="also write the table here")
    args = parser.parse_args(argv)
    start = time.time()
    cells: list[GroupingCell] = []
    for kind, groups, size in (shape for shape in SHAPES if shape[0] in args.kinds):
        for trials in args.trials:
            for grouping in GROUPINGS:
                declared = grouping.startswith("id_prefix")
                reps = args.reps if grouping != "undeclared" else max(10, args.reps // 5)
                cells.append(run_cell(kind, groups, size, trials, grouping, reps, args.seed, power=declared))
                c = cells[-1]
                print(f"{kind} {groups}x{size} trials {trials} {grouping}: pass {c.false_pass:.3f} "
                      f"blocked {c.blocked:.3f} power {c.power:.3f} ({time.time() - start:.0f} s)",
                      file=sys.stderr, flush=True)  # fmt: skip
    table = markdown(cells, args.seed)
    print(table)
    if args.out is not None:
        args.out.write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
