"""False passes at a rule's boundary when infrastructure errors are informative (issue 30).

Run ``nice .venv/bin/python benchmarks/infra_bounds_simulation.py --reps 200`` to print the markdown
table recorded in docs/gate.md ("Unresolved attempts") and benchmarks/RESULTS.md; ``--reps`` and
``--seed`` change the Monte Carlo size and the seed, ``--cells`` picks cells by name.
``tests/gate/test_infra_bounds_simulation.py`` (slow-marked) runs :func:`rates` at a reduced size.

Every replication goes through :func:`gatestats.gate.evaluate_gate` and counts the rule row's
decision (not the verdict, which also blocks on record-level preconditions that say nothing about
the statistics). Each cell is run twice on the same draws: **today** (the engine as before issue
30: unresolved attempts dropped as missing at random; :func:`_today` swaps the bounded evidence for
the observed one) and **bounded** (the engine: Manski worst-case bounds, docs/gate.md).

The cells (case difficulty ``p ~ Beta(s·m, s·(1-m))``, ``s = 3``, mean ``m``):

* ``threshold``: pass rate ≥ 0.60 with the candidate's mean exactly 0.60 (the null's boundary);
* ``noninferiority``: paired, margin 0.05, the candidate's per-case rate 0.05 below the baseline's
  (mean 0.70 → 0.65: the boundary);
* infra errors strike the candidate's *failing* trials only, at a share of attempts ``rate``
  (4.5% inside a 5% limit, or 18% inside 20%): the informative case (a crash on the hard cases);
* ``retry-*``: one trial per case; a trial hit by an infra error is retried once (attempt 1); a
  trial stays unresolved when both attempts hit. ``latent``: the retry shows the trial's own
  (failing) outcome and the crash repeats with probability 1/2 (informative retries); ``fresh``:
  the retry is a new draw of the case, hit again like any failing attempt. The fresh retry is a
  second chance only failing trials get: counted as the trial's outcome (``infra_retries =
  "counted"``, ``--infra-retries counted``) it is liberal; the policy's default (``bounded``) keeps
  a retried trial unresolved whatever its retry gave (docs/gate.md, "Retries").

The power cost is the ``pass`` rate at a clear improvement (threshold cells: candidate mean 0.68;
non-inferiority: candidate equal to the baseline) under the same informative infra errors.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import polars as pl

from gatestats.gate import RecordSet, Registration, engine, evaluate_gate, parse_policy
from gatestats.records.contract import POLARS_SCHEMA

ALPHA = 0.05
THRESHOLD = 0.60
MARGIN = 0.05
BASE_MEAN = 0.70
SPREAD = 3.0

POLICY = """
format = "gatestats-policy/1"
name = "infra-bounds-simulation"
version = "1"
k = 1
min_cases = 10
min_trials = 1
max_infra_error_rate = {limit}
on_insufficient_evidence = "block"
seed = 0
infra_retries = "{retries}"

[baseline]
system = "baseline"

[candidate]
system = "candidate"
"""

RULES = {
    "threshold": f'[[rules]]\nname = "floor"\nmetric = "pass_rate"\nthreshold = {THRESHOLD}\nalpha = {ALPHA}\n',
    "noninferiority": (
        f'[[rules]]\nname = "ni"\nmetric = "pass_rate"\ntest = "paired"\nmargin = {MARGIN}\nalpha = {ALPHA}\n'
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    """One simulated shape."""

    name: str
    rule: str  # "threshold" | "noninferiority"
    n_cases: int
    trials: int
    rate: float  # share of the candidate's attempts that are infra errors (all on failing trials)
    limit: float  # the policy's max_infra_error_rate
    retry: str | None = None  # "latent": the retry shows the trial's own outcome; "fresh": a new draw


CELLS: tuple[Cell, ...] = (
    Cell(name="threshold-200x4", rule="threshold", n_cases=200, trials=4, rate=0.045, limit=0.05),
    Cell(name="threshold-1000x4", rule="threshold", n_cases=1000, trials=4, rate=0.045, limit=0.05),
    Cell(name="ni-1000x4", rule="noninferiority", n_cases=1000, trials=4, rate=0.045, limit=0.05),
    Cell(name="threshold-200x4-18%", rule="threshold", n_cases=200, trials=4, rate=0.18, limit=0.20),
    Cell(name="ni-200x4-18%", rule="noninferiority", n_cases=200, trials=4, rate=0.18, limit=0.20),
    Cell(name="retry-latent-200x1", rule="threshold", n_cases=200, trials=1, rate=0.045, limit=0.05, retry="latent"),
    Cell(name="retry-fresh-200x1", rule="threshold", n_cases=200, trials=1, rate=0.045, limit=0.05, retry="fresh"),
)


def _frame(system: str, passed: npt.NDArray[np.bool_], infra: npt.NDArray[np.int64],
           retried_passed: npt.NDArray[np.bool_] | None = None) -> pl.DataFrame:  # fmt: skip
    """Records of one side: ``infra[i, t]`` infra-error attempts before trial t's final attempt (2: unresolved)."""
    n_cases, trials = passed.shape
    case = np.repeat(np.arange(n_cases), trials)
    trial = np.tile(np.arange(trials), n_cases)
    hits = infra.ravel()
    outcome = np.where(passed.ravel(), "passed", "failed")
    rows_case: list[npt.NDArray[np.int64]] = []
    rows_trial: list[npt.NDArray[np.int64]] = []
    rows_attempt: list[npt.NDArray[np.int64]] = []
    rows_outcome: list[npt.NDArray[np.str_]] = []
    # attempt 0: infra_error where hit, else the trial's outcome
    rows_case.append(case)
    rows_trial.append(trial)
    rows_attempt.append(np.zeros(case.size, dtype=np.int64))
    rows_outcome.append(np.where(hits > 0, "infra_error", outcome))
    again = hits > 0  # retried trials (retry cells): attempt 1 is infra_error again (2) or the outcome (1)
    retried = again & (hits != 3)
    rows_case.append(case[retried])
    rows_trial.append(trial[retried])
    rows_attempt.append(np.ones(int(retried.sum()), dtype=np.int64))
    second = outcome if retried_passed is None else np.where(retried_passed.ravel(), "passed", "failed")
    rows_outcome.append(np.where(hits[retried] == 2, "infra_error", second[retried]))
    n = int(sum(c.size for c in rows_case))
    frame = pl.DataFrame(
        {
            "schema_version": [1] * n,
            "record_id": [f"{system}-{i}" for i in range(n)],
            "run_set_id": [f"rs-{system}"] * n,
            "system": [system] * n,
            "case_id": [f"c{c:05d}" for c in np.concatenate(rows_case)],
            "case_version": ["v1"] * n,
            "trial": np.concatenate(rows_trial),
            "attempt": np.concatenate(rows_attempt),
            "outcome": np.concatenate(rows_outcome),
            "model_id": ["m"] * n,
            "system_digest": ["sd"] * n,
        }
    )
    return frame.with_columns(
        [pl.lit(None, dtype=dtype).alias(name) for name, dtype in POLARS_SCHEMA.items() if name not in frame.columns]
    ).select(list(POLARS_SCHEMA))


def _set(name: str, records: pl.DataFrame) -> RecordSet:
    cases = [{"case_id": c, "case_version": "v1"} for c in records["case_id"].unique()]
    return RecordSet(path=Path(name), kind="run_set", manifest={"complete": True, "cases": cases}, records=records,
                     files=(), digest=name)  # fmt: skip


def _infra(
    passed: npt.NDArray[np.bool_], p: npt.NDArray[np.float64], cell: Cell, rng: np.random.Generator
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_] | None]:
    """Informative infra errors: only failing trials are hit, at ``cell.rate`` of all attempts on average.

    Without retries: 3 = one infra_error attempt, final (unresolved). With a retry: 1 = hit once and
    resolved by the retry (attempt 1 carries an outcome), 2 = hit on both attempts (unresolved). A
    ``latent`` retry shows the trial's own outcome (a failure) and is hit again with probability
    1/2 (informative: the crash repeats); a ``fresh`` retry is a new draw of the case (pass with
    the case's p), hit again like any failing attempt. Also returns the retries' outcomes.
    """
    fail_share = max(1.0 - float(passed.mean()), 1e-9)
    q = min(1.0, cell.rate / fail_share)
    hit = (~passed) & (rng.random(passed.shape) < q)
    if cell.retry is None:
        return np.where(hit, 3, 0).astype(np.int64), None
    if cell.retry == "latent":
        again = hit & (rng.random(passed.shape) < 0.5)
        return np.where(again, 2, np.where(hit, 1, 0)).astype(np.int64), passed
    fresh = rng.random(passed.shape) < p[:, None]
    again = hit & ~fresh & (rng.random(passed.shape) < q)
    return np.where(again, 2, np.where(hit, 1, 0)).astype(np.int64), fresh


def _draw(cell: Cell, rng: np.random.Generator, *, power: bool) -> tuple[RecordSet, RecordSet]:
    n, t = cell.n_cases, cell.trials
    if cell.rule == "threshold":
        mean = THRESHOLD + (0.08 if power else 0.0)
        p_c = rng.beta(SPREAD * mean, SPREAD * (1 - mean), n)
        p_b = p_c
    else:
        p_b = rng.beta(SPREAD * BASE_MEAN, SPREAD * (1 - BASE_MEAN), n)
        # scaled, never clipped: the population mean difference is exactly -MARGIN (0 for power)
        p_c = p_b if power else p_b * (BASE_MEAN - MARGIN) / BASE_MEAN
    passed_c = rng.random((n, t)) < p_c[:, None]
    passed_b = rng.random((n, t)) < p_b[:, None]
    codes, retried = _infra(passed_c, p_c, cell, rng)
    cand = _frame("candidate", passed_c, codes, retried)
    base = _frame("baseline", passed_b, np.zeros((n, t), dtype=np.int64))
    return _set("baseline", base), _set("candidate", cand)


@contextmanager
def _today() -> Iterator[None]:
    """The engine as before issue 30: the observed evidence only (unresolved attempts dropped)."""
    bounded = engine._bounded_evidence
    engine._bounded_evidence = engine._evidence  # type: ignore[assignment]
    try:
        yield
    finally:
        engine._bounded_evidence = bounded  # type: ignore[assignment]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rates:
    """Pass rates of one cell: at the boundary (false passes) and at a clear improvement (power)."""

    cell: Cell
    reps: int
    today: float
    bounded: float
    power_reps: int
    power_today: float
    power_bounded: float
    seconds: float
    #: The boundary rates whose counting stopped early (``curtail=True``): each read its passes so far / ``reps``.
    curtailed: tuple[str, ...] = ()

    @property
    def limit(self) -> float:
        """alpha + 2 binomial SE at ``reps``."""
        return limit(self.reps)


def limit(reps: int) -> float:
    """alpha + 2 binomial SE at ``reps`` replications: a false-pass rate above it fails a cell."""
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / reps)


def rates(
    cell: Cell,
    *,
    reps: int,
    power_reps: int,
    seed: int,
    infra_retries: str = "bounded",
    today: bool = True,
    curtail: bool = False,
) -> Rates:
    """The cell's ``pass`` rates today and bounded, at the boundary and at a clear improvement (same draws).

    ``infra_retries`` is the policy's key (``bounded``: the default; ``counted``: retries count).
    ``today=False`` skips the gate as it was before the bound (half the work; its rates read NaN).
    ``curtail=True`` stops calling the gate for a boundary rate once its passes exceed ``limit(reps) * reps``:
    whether that rate is above :func:`limit` is then decided whatever the remaining replications give, so the
    verdict ``rate > limit`` is the full run's exactly (same draws: every replication is still drawn); the rate
    reads the passes so far / ``reps`` (at most the full run's) and is named in :attr:`Rates.curtailed`.
    """
    start = time.perf_counter()
    policy = parse_policy((POLICY.format(limit=cell.limit, retries=infra_retries) + RULES[cell.rule]).encode())
    reg = Registration(run_set="x", policy_digest=policy.digest, registered_at="t", first_record_at=None,
                       origin="runner")  # fmt: skip
    out: dict[str, float] = {}
    decided = limit(reps) * reps if curtail else math.inf
    stopped: tuple[str, ...] = ()
    for label, n, power in (("", reps, False), ("power_", power_reps, True)):
        rng = np.random.default_rng([seed, CELLS.index(cell), int(power)])
        passes = {"today": 0, "bounded": 0}
        # the power rates are never curtailed (no verdict is read from them)
        enough = math.inf if power else decided
        for _ in range(n):
            base, cand = _draw(cell, rng, power=power)
            if passes["bounded"] <= enough:
                passes["bounded"] += (
                    evaluate_gate(policy, base, cand, registration=reg, now="t").rules[0].decision == "pass"
                )
            if not today or passes["today"] > enough:
                continue
            with _today():
                passes["today"] += (
                    evaluate_gate(policy, base, cand, registration=reg, now="t").rules[0].decision == "pass"
                )
        out[f"{label}today"] = passes["today"] / max(n, 1) if today else float("nan")
        out[f"{label}bounded"] = passes["bounded"] / max(n, 1)
        if not power:
            stopped = tuple(name for name in ("today", "bounded") if passes[name] > enough)
    return Rates(cell=cell, reps=reps, power_reps=power_reps, seconds=time.perf_counter() - start,
                 curtailed=stopped, **out)  # fmt: skip


def table(results: Sequence[Rates]) -> str:
    """The markdown table of docs/gate.md and benchmarks/RESULTS.md."""
    lines = [
        "| cell | rule | cases × trials | infra rate (limit) | reps | false pass today | false pass bounded "
        "| α + 2 SE | power today | power bounded (reps) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        c = r.cell
        lines.append(
            f"| {c.name} | {c.rule} | {c.n_cases} × {c.trials}{f' (+1 {c.retry} retry)' if c.retry else ''} "
            f"| {c.rate:.3f} ({c.limit:.2f}) | {r.reps} | {r.today:.3f} | {r.bounded:.3f} | {r.limit:.3f} "
            f"| {r.power_today:.3f} | {r.power_bounded:.3f} ({r.power_reps}) |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--power-reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--cells", nargs="*", default=[c.name for c in CELLS])
    parser.add_argument("--infra-retries", choices=("bounded", "counted"), default="bounded",
                        help="the policy's infra_retries (default: bounded, the gate's default)")  # fmt: skip
    args = parser.parse_args(argv)
    results = []
    for cell in CELLS:
        if cell.name in args.cells:
            r = rates(
                cell, reps=args.reps, power_reps=args.power_reps, seed=args.seed, infra_retries=args.infra_retries
            )
            print(f"{cell.name}: today {r.today:.3f} bounded {r.bounded:.3f} ({r.seconds:.0f}s)", flush=True)
            results.append(r)
    what = f"; infra_retries = {args.infra_retries!r}"
    print(f"\nseed {args.seed}, {args.reps} replications per cell at the boundary, {args.power_reps} for power{what}\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
