"""Time `gatestats analyze`, `gatestats gate` and `gatestats report` side by side at 1M and 10M records.

Issue 28, item 5. For each ``--records`` size (total over both sides) the script writes, under a
temporary directory in ``/tmp`` (deleted at the end, even on failure; with ``--data DIR``, under
``DIR/gate-scale-<records>-t<trials>-s<seed>``, kept and reused when it is there):

- two sealed run sets as the runner writes them (``manifest.json`` + checksummed canonical
  ``records.jsonl`` lines from :func:`gatestats_runner.store.encode_record`, ``records_seal`` from
  :func:`gatestats_runner.store.seal_records`), ``baseline/`` and ``candidate/``, with the policy
  registered in the candidate's manifest before its first record;
- ``records / 2 / trials`` cases per side, ``--trials`` trials each (default 4): case difficulty
  ``theta ~ Beta(2, 0.8)`` shared by both sides, the candidate shifted by +0.3 on the logit scale;
  about 1% ``resource_killed`` (bound ``wall_clock`` or ``memory``) and 0.5% ``infra_error``
  retried once (attempt 1); 1% of the cases are the severe slice ``security`` (always passed), the
  others carry one of 6 ordinary slices; machine seconds and start/end timestamps; no cost fields,
  no human review, no judge; ``--candidate-shift`` and ``--unresolved`` change the candidate's shift
  and add final ``infra_error`` attempts to a share of its trials (``--candidate-shift 0 --unresolved
  0.045``: the non-inferiority rows between their bounds, where the gate searches ``to_decide``);
- the policy: k = 4, a ``pass_rate`` threshold rule, a paired ``pass_rate`` non-inferiority rule
  (several trials per case: the betting test), a paired rule on the ``billing`` slice, the severe
  slice ``security``.

Then, per size, in one interleaved run (``--repeat`` rounds, each command a child process with
``cwd`` in a fresh directory), in this order:

1. ``gatestats analyze baseline/records.jsonl candidate/records.jsonl --k 1-4 --json``
2. ``gatestats gate --policy policy.toml --baseline baseline --candidate candidate -o verdict.json``
3. ``gatestats report verdict.json``

For each: exit status, wall time around the child, CPU time (user + system) and peak RSS of the child
from ``os.wait4`` (the CPU includes the descendants the child waited for, such as the report's
Jupyter kernel; the ``RUSAGE_CHILDREN`` delta of this process is printed beside it as a check), and
the 1-minute load average before and after. Seeded (``--seed``), so the data are the same for the
same arguments.

Usage::

    .venv/bin/python benchmarks/bench_gate_scale.py --records 1000000 --repeat 2
    .venv/bin/python benchmarks/bench_gate_scale.py --records 1000000 10000000 --repeat 1
    # the data sets kept (and reused) under /work/bigdata/gate-scale-<records>-t<trials>-s<seed>:
    .venv/bin/python benchmarks/bench_gate_scale.py --records 1000000 10000000 --repeat 1 --data /work/bigdata
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))

from gatestats_runner.store import encode_record, seal_records  # noqa: E402

GATESTATS = Path(sys.executable).with_name("gatestats")
REGISTERED = "2026-11-01T08:00:00Z"
START = np.datetime64("2026-11-01T09:00:00", "ms")
SLICES = ("billing", "search", "auth", "export", "ui", "api")
POLICY = """format = "gatestats-policy/1"
name = "bench-gate-scale"
version = "1"
k = 4
min_cases = 100
min_trials = 4
max_infra_error_rate = 0.05
on_insufficient_evidence = "block"
multiplicity = "holm"
severe_slices = ["security"]

[baseline]
system = "baseline"

[candidate]
system = "candidate"

[[rules]]
name = "pass rate floor"
metric = "pass_rate"
threshold = 0.5

[[rules]]
name = "pass rate non-inferior"
metric = "pass_rate"
test = "paired"
margin = 0.03

[[rules]]
name = "billing non-inferior"
metric = "pass_rate"
slice = "billing"
test = "paired"
margin = 0.05
"""


def _timestamps(
    seconds: np.ndarray[Any, np.dtype[np.float64]], clock: np.ndarray[Any, Any]
) -> tuple[list[str], list[str]]:
    """ISO start and end times (``Z``, milliseconds) of attempts starting ``clock`` s after START."""
    start = START + (clock * 1000).astype("timedelta64[ms]")
    end = start + (seconds * 1000).astype("timedelta64[ms]")
    return [s + "Z" for s in np.datetime_as_string(start, unit="ms")], [
        s + "Z" for s in np.datetime_as_string(end, unit="ms")
    ]


def write_side(
    path: Path, system: str, shift: float, cases: int, trials: int, seed: int, digest: str, unresolved: float = 0.0
) -> int:
    """Write one sealed run set (``system``) under ``path``; return its number of records.

    ``unresolved``: the share of the candidate's trials (outside the severe slice) whose final attempt
    is ``infra_error`` (drawn after every other draw: 0 leaves the data as without it).
    """
    rng_cases = np.random.default_rng([seed, 0])  # shared by both sides: the same cases
    theta = rng_cases.beta(2.0, 0.8, size=cases).clip(1e-6, 1 - 1e-6)
    rng = np.random.default_rng([seed, 1 if system == "baseline" else 2])
    p = 1.0 / (1.0 + np.exp(-(np.log(theta / (1.0 - theta)) + shift)))
    security = np.arange(cases) % 100 == 0
    case_idx = np.repeat(np.arange(cases), trials)
    trial = np.tile(np.arange(trials), cases)
    retried = (rng.random(case_idx.size) < 0.005) & ~security[case_idx]
    # each retried trial: an infra_error (attempt 0) then its final attempt (attempt 1)
    case_idx = np.concatenate([case_idx[retried], case_idx])
    attempt = np.concatenate([np.zeros(int(retried.sum()), dtype=np.int64), retried.astype(np.int64)])
    trial = np.concatenate([trial[retried], trial])
    infra = np.arange(case_idx.size) < int(retried.sum())
    order = np.lexsort((attempt, trial, case_idx))
    case_idx, attempt, trial, infra = case_idx[order], attempt[order], trial[order], infra[order]
    n = case_idx.size
    sec = security[case_idx]
    killed = (rng.random(n) < 0.01) & ~infra & ~sec
    passed = (rng.random(n) < p[case_idx]) | sec
    outcome = np.where(infra, "infra_error", np.where(killed, "resource_killed", np.where(passed, "passed", "failed")))
    if unresolved > 0 and system == "candidate":
        final = np.r_[case_idx[1:] != case_idx[:-1], True] | np.r_[trial[1:] != trial[:-1], True]
        outcome = np.where(final & ~sec & (rng.random(n) < unresolved), "infra_error", outcome)
        killed &= outcome != "infra_error"
    bound = np.where(rng.random(n) < 0.5, "wall_clock", "memory")
    seconds = np.round(rng.gamma(4.0, 15.0, size=n), 3)
    started, ended = _timestamps(seconds, np.cumsum(seconds / 2) - seconds / 2)
    slice_of = [["security"] if s else [SLICES[i % len(SLICES)]] for i, s in enumerate(security)]
    path.mkdir(parents=True)
    with (path / "records.jsonl").open("wb") as handle:
        for lo in range(0, n, 200_000):
            lines = []
            for i in range(lo, min(n, lo + 200_000)):
                c, t, a = int(case_idx[i]), int(trial[i]), int(attempt[i])
                record: dict[str, Any] = {
                    "schema_version": 1,
                    "record_id": f"{system}-{c}-{t}-{a}",
                    "run_set_id": f"rs-{system}",
                    "system": system,
                    "case_id": f"case-{c:07d}",
                    "case_version": "v1",
                    "trial": t,
                    "attempt": a,
                    "outcome": str(outcome[i]),
                    "bound": str(bound[i]) if killed[i] else None,
                    "system_digest": f"sd-{system}",
                    "task_set_version": "cs-scale-1",
                    "slices": slice_of[c],
                    "machine_seconds": float(seconds[i]),
                    "started_at": started[i],
                    "ended_at": ended[i],
                }
                lines.append(encode_record(record))
            handle.write(b"".join(lines))
    manifest = {
        "format": "gatestats-run-set/1",
        "run_set_id": f"rs-{system}",
        "complete": True,
        "case_set_version": "cs-scale-1",
        "cases": [{"case_id": f"case-{c:07d}", "case_version": "v1"} for c in range(cases)],
        "trials": trials,
        "system": system,
        "policy_digest": digest if system == "candidate" else None,
        "policy_registered_at": REGISTERED if system == "candidate" else None,
        "records_seal": seal_records(path),
    }
    (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return n


def make_data(
    root: Path, *, records: int, trials: int, seed: int, candidate_shift: float = 0.3, unresolved: float = 0.0
) -> int:
    """The policy and both run sets under ``root`` (the two sides written in parallel); total records."""
    root.mkdir(parents=True)
    policy = root / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    digest = "sha256:" + hashlib.sha256(policy.read_bytes()).hexdigest()
    cases = max(1, records // 2 // trials)
    with ProcessPoolExecutor(max_workers=2) as pool:
        sides = [
            pool.submit(write_side, root / name, name, shift, cases, trials, seed, digest, unresolved)
            for name, shift in (("baseline", 0.0), ("candidate", candidate_shift))
        ]
        return sum(s.result() for s in sides)


def timed(command: list[str], cwd: Path) -> dict[str, Any]:
    """Run ``command`` as a child; its exit, wall, CPU (own and with descendants), peak RSS, load."""
    load0 = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with (cwd / "stdout.txt").open("ab") as out, (cwd / "stderr.txt").open("ab") as err:
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "cpu_tree_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "load_before": load0,
        "load_after": os.getloadavg()[0],
    }


def one_round(data: Path, work: Path, only: tuple[str, ...] = ("analyze", "gate", "report")) -> list[dict[str, Any]]:
    """analyze, gate, report once each (those in ``only``), in that order, in ``work``; the measurements."""
    base, cand = data / "baseline", data / "candidate"
    commands = {
        "analyze": [
            str(GATESTATS),
            "analyze",
            *(str(side / "records.jsonl") for side in (base, cand)),
            "--k",
            "1-4",
            "--json",
        ],
        "gate": [
            str(GATESTATS),
            "gate",
            "--policy",
            str(data / "policy.toml"),
            "--baseline",
            str(base),
            "--candidate",
            str(cand),
            "-o",
            "verdict.json",
        ],
        "report": [str(GATESTATS), "report", "verdict.json"],
    }
    results = []
    for name, command in commands.items():
        if name not in only:
            continue
        row = {"command": name, **timed(command, work)}
        print(json.dumps(row), flush=True)
        results.append(row)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[1_000_000], help="total records, both sides")
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--repeat", type=int, default=2, help="interleaved rounds per size")
    parser.add_argument(
        "--candidate-shift", type=float, default=0.3, help="the candidate's shift on the logit scale (default 0.3)"
    )
    parser.add_argument(
        "--unresolved",
        type=float,
        default=0.0,
        help="share of the candidate's trials whose final attempt is infra_error (default 0; 0.045 puts the "
        "non-inferiority rows between their bounds, so the gate searches to_decide)",
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the results as JSON here")
    parser.add_argument(
        "--commands", nargs="+", default=["analyze", "gate", "report"], choices=["analyze", "gate", "report"]
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="keep the data sets under this directory (DATA/<records>, made once and reused; never deleted)",
    )
    args = parser.parse_args()
    print(f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M:%S} UTC; {os.cpu_count()} CPUs; {platform.platform()}")
    print(f"load average before: {os.getloadavg()}")
    results: list[dict[str, Any]] = []
    for size in args.records:
        tmp = Path(tempfile.mkdtemp(prefix="gate-scale-", dir="/tmp"))
        tag = f"gate-scale-{size}-t{args.trials}-s{args.seed}"
        if (args.candidate_shift, args.unresolved) != (0.3, 0.0):
            tag += f"-shift{args.candidate_shift:g}-unresolved{args.unresolved:g}"
        data = tmp / "data" if args.data is None else args.data / tag
        try:
            t0 = time.perf_counter()
            if not (data / "candidate" / "manifest.json").exists():
                make_data(
                    data,
                    records=size,
                    trials=args.trials,
                    seed=args.seed,
                    candidate_shift=args.candidate_shift,
                    unresolved=args.unresolved,
                )
            n = sum(1 for side in ("baseline", "candidate") for _ in (data / side / "records.jsonl").open("rb"))
            mb = sum(f.stat().st_size for f in data.rglob("records.jsonl")) / 1e6
            print(f"data: {n:,} records, {mb:,.0f} MB of JSONL, {data}, ready in {time.perf_counter() - t0:.0f} s")
            for r in range(args.repeat):
                work = tmp / f"round-{r}"
                work.mkdir()
                rows = one_round(data, work, tuple(args.commands))
                verdict = json.loads((work / "verdict.json").read_text()) if (work / "verdict.json").exists() else {}
                for row in rows:
                    results.append({"records": n, "round": r + 1, "verdict": verdict.get("verdict"), **row})
                for name in ("stderr.txt",):
                    text = (work / name).read_text(errors="replace").strip()
                    if text:
                        print(f"--- {name} (round {r + 1}):\n{text[-2000:]}")
                print((work / "stdout.txt").read_text(errors="replace")[-1500:])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average after: {os.getloadavg()}")
    header = "| records | round | command | exit | CPU s | CPU s (children) | wall s | peak RSS MiB | load 1-min |"
    print("\n" + header)
    print("|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for r in results:
        print(
            f"| {r['records']:,} | {r['round']} | `{r['command']}` | {r['exit']} | {r['cpu_s']:.2f} | "
            f"{r['cpu_tree_s']:.2f} | {r['wall_s']:.2f} | {r['peak_rss_mib']:,.0f} | "
            f"{r['load_before']:.2f} → {r['load_after']:.2f} |"
        )
    if args.out:
        args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
