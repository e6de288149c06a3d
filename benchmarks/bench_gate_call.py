"""The gate's per-call cost on small in-memory record sets (issue 28, item 3).

The gate simulations of the test suite (size studies, A/A, infra bounds, grouping, judge labels)
call :func:`gatestats.gate.evaluate_gate` once per replication on tens to a thousand cases of a few
trials; what one call costs there is a fixed cost (query planning, per-rule passes over small
frames), not a cost that grows with the data. This script times that call on the shapes those
tests build, each a fixed draw, and can write every shape's verdict JSON to compare two versions
byte for byte::

    .venv/bin/python benchmarks/bench_gate_call.py --calls 30
    .venv/bin/python benchmarks/bench_gate_call.py --dump /tmp/verdicts-after
    PYTHONPATH=/path/to/other/src .venv/bin/python benchmarks/bench_gate_call.py --dump /tmp/verdicts-before

``--profile SHAPE`` prints a cProfile of the calls of one shape instead.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

from gatestats.gate import RecordSet, Registration, evaluate_gate, parse_policy
from gatestats.gate.policy import Policy
from gatestats.gate.verdict import Verdict, verdict_file_bytes

HEAD = """
format = "gatestats-policy/1"
name = "bench-gate-call"
version = "1"
k = {k}
min_cases = 10
min_trials = {k}
max_infra_error_rate = 0.2
on_insufficient_evidence = "block"
multiplicity = "holm"
require_checksums = false
seed = 0

[baseline]
system = "baseline"

[candidate]
system = "candidate"
"""

PAIRED = '[[rules]]\nname = "ni"\nmetric = "pass_rate"\ntest = "paired"\nmargin = {margin}\nalpha = 0.05\n'
AA = (
    PAIRED.format(margin=0.0)
    + '[[rules]]\nname = "pass^k"\nmetric = "pass_hat_k"\ntest = "paired"\nmargin = 0.05\n'
    + '[[rules]]\nname = "floor"\nmetric = "pass_rate"\nthreshold = 0.6\n'
)


Shape = tuple[Policy, RecordSet, RecordSet]


def _simple(rules: str, n_cases: int, trials: int, group_size: int, drop: float, seed: int) -> Shape:
    rng = np.random.default_rng(seed)
    policy = parse_policy((HEAD.format(k=trials) + rules).encode())
    groups = np.repeat(np.arange(n_cases // group_size), group_size) if group_size > 1 else None
    p_b = rng.beta(2.0, 1.0, n_cases)
    p_c = np.clip(p_b - drop, 0.0, 1.0)
    sim = _module("gate_rate_simulation")  # the size-gate test's records (its ``records`` builder)
    base = sim.record_set("baseline", sim.records("baseline", p_b, trials, rng, groups))
    return policy, base, sim.record_set("candidate", sim.records("candidate", p_c, trials, rng, groups))


def _module(name: str) -> ModuleType:
    """A sibling benchmark script loaded as a module (``benchmarks/`` is not a package)."""
    path = Path(__file__).with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _infra(name: str, seed: int) -> Shape:
    """A cell of benchmarks/infra_bounds_simulation.py: unresolved attempts, each row decided on both bounds."""
    sim = _module("infra_bounds_simulation")
    (cell,) = [c for c in sim.CELLS if c.name == name]
    text = sim.POLICY.format(limit=cell.limit, retries="bounded") + "\n" + sim.RULES[cell.rule]
    base, cand = sim._draw(cell, np.random.default_rng(seed), power=False)
    return parse_policy(text.encode()), base, cand


SHAPES: dict[str, Callable[[], Shape]] = {
    "aa-80x4": lambda: _simple(AA, 80, 4, 1, 0.0, 1),
    "conc-100x20": lambda: _simple(PAIRED.format(margin=0.05), 100, 20, 1, 0.02, 2),
    "groups-200x4": lambda: _simple(PAIRED.format(margin=0.2), 200, 4, 5, 0.05, 3),
    "infra-ni-200x4": lambda: _infra("ni-200x4-18%", 4),
    "infra-threshold-1000x4": lambda: _infra("threshold-1000x4", 5),
}


def _call(shape: Shape) -> Verdict:
    policy, base, cand = shape
    reg = Registration(
        run_set="x", policy_digest=policy.digest, registered_at="t", first_record_at=None, origin="runner"
    )
    return evaluate_gate(policy, base, cand, registration=reg, now="t")


def main() -> None:
    """Time (or profile, or dump) the gate's call on each shape."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20, help="calls per shape (the median CPU is shown)")
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--dump", type=Path, help="write each shape's verdict JSON into this directory")
    parser.add_argument("--profile", choices=list(SHAPES), help="cProfile the calls of one shape")
    args = parser.parse_args()
    if args.profile:
        shape = SHAPES[args.profile]()
        _call(shape)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.calls):
            _call(shape)
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(60)
        return
    for name in args.shapes:
        shape = SHAPES[name]()
        verdict = _call(shape)  # warm-up (imports, first planning)
        if args.dump:
            args.dump.mkdir(parents=True, exist_ok=True)
            (args.dump / f"{name}.json").write_bytes(verdict_file_bytes(verdict.to_dict()))
            continue
        cpu: list[float] = []
        for _ in range(args.calls):
            t0 = time.process_time()
            _call(shape)
            cpu.append(time.process_time() - t0)
        print(f"{name}: median {statistics.median(cpu) * 1000:.1f} ms CPU per call ({args.calls} calls)")


if __name__ == "__main__":
    main()
