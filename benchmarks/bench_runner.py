"""Per-trial overhead of the sandbox runner and run-set throughput, side by side in one run.

    .venv/bin/python benchmarks/bench_runner.py [--repeat 200] [--trials 400] [--workers 2]

Overhead per trial = (fresh workspace + isolation + bounds + record) for the command ``true``,
minus a bare ``subprocess`` of ``true``; each part is also timed alone. Throughput = trivial
trials per second of a whole run set (``run_run_set``: 1 case x ``--trials`` trials on
``--workers`` workers, records fsync'd). Needs root and bubblewrap for the full numbers; prints
the isolation actually used. Writes a Markdown table to stdout and to
``benchmarks/_data/runner_last_run.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))

from gatestats_runner.case import load_case  # noqa: E402
from gatestats_runner.runset import RunSetOptions, run_run_set  # noqa: E402
from gatestats_runner.sandbox import Capabilities, detect_capabilities, execute  # noqa: E402
from gatestats_runner.store import RecordWriter  # noqa: E402
from gatestats_runner.trial import TrialSpec, run_trial  # noqa: E402
from gatestats_runner.workspace import create_workspace, make_private_scratch, release_private_scratch  # noqa: E402


def _case(root: Path, n_files: int) -> Path:
    case = root / "true-case"
    (case / "snapshot").mkdir(parents=True)
    (case / "verifier").mkdir()
    (case / "verifier" / "README").write_text("no verifier needed for `true`\n")
    (case / "request.md").write_text("run true\n")
    for i in range(n_files):
        sub = case / "snapshot" / f"d{i // 100:03d}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{i:05d}.txt").write_text(f"file {i}\n" * 4)
    (case / "case.json").write_text(
        json.dumps(
            {
                "format": "gatestats-case/1",
                "contract": {
                    "command": ["true"],
                    "limits": {"wall_clock_s": 30, "cpu_s": 30, "memory_mb": 256, "disk_mb": 64, "output_mb": 4},
                },
            }
        )
    )
    return case


def _times(fn: Callable[[], object], repeat: int) -> list[float]:
    fn()  # warm up
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def _ms(values: list[float]) -> str:
    q = statistics.quantiles(values, n=20)
    return f"{statistics.median(values) * 1e3:.1f} | {q[0] * 1e3:.1f} | {q[-1] * 1e3:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--files", type=int, default=2000, help="files in the snapshot (overlay does not copy them)")
    parser.add_argument(
        "--idle-wait", type=float, default=0.0, help="wait up to this many seconds for a 1-minute load average < 0.5"
    )
    args = parser.parse_args()
    deadline = time.monotonic() + args.idle_wait
    while os.getloadavg()[0] >= 0.5 and time.monotonic() < deadline:
        time.sleep(5)
    load_at_start = os.getloadavg()[0]

    caps: Capabilities = detect_capabilities()
    tmp = Path(tempfile.mkdtemp(prefix="gatestats-bench-"))
    case_dir = _case(tmp / "cases", args.files)
    case = load_case(case_dir)
    scratch = tmp / "scratch"
    make_private_scratch(scratch)
    counter = iter(range(10**9))
    writer = RecordWriter(tmp / "records.jsonl")

    def bare() -> None:
        subprocess.run(["true"], check=True)

    def workspace_only() -> None:
        ws = create_workspace(scratch / f"w{next(counter)}", [case.snapshot], disk_bytes=64 << 20, inodes=32768)
        ws.dispose()

    def sandbox_only() -> None:
        n = next(counter)
        ws = create_workspace(scratch / f"s{n}", [case.snapshot], disk_bytes=64 << 20, inodes=32768)
        ev = tmp / "sandbox-ev"
        ev.mkdir(exist_ok=True)
        try:
            execute(
                caps,
                command=("true",),
                env={"PATH": "/usr/bin:/bin"},
                workspace=ws,
                verifier=case.verifier,
                limits=case.contract.limits,
                stdout_path=ev / "stdout",
                stderr_path=ev / "stderr",
                status_path=ev / "status",
                cgroup_name=f"gatestats-bench-{os.getpid()}-{n}",
            )
        finally:
            ws.dispose()

    def full_trial() -> None:
        n = next(counter)
        spec = TrialSpec(
            case=case,
            candidate_layer=None,
            candidate_digest="sha256:bench",
            trial=n,
            attempt=0,
            run_set_id="rs-bench",
            record_base={"system": "bench"},
            evidence_dir=tmp / "trials" / f"t{n}",
            evidence_rel=f"trials/t{n}",
            scratch=scratch,
        )
        writer.append(run_trial(spec, caps).record)

    # Interleave the contenders so that machine noise hits them alike.
    series: dict[str, list[float]] = {"bare": [], "workspace": [], "sandbox": [], "full": []}
    fns = {"bare": bare, "workspace": workspace_only, "sandbox": sandbox_only, "full": full_trial}
    for fn in fns.values():
        fn()
    for _ in range(args.repeat):
        for name, fn in fns.items():
            series[name] += _times(fn, 1)[-1:]
    writer.close()
    release_private_scratch(scratch)

    throughput = {}
    for workers in sorted({1, args.workers}):
        candidate = tmp / "candidate"
        candidate.mkdir(exist_ok=True)
        from gatestats_runner.executors import LocalExecutor

        out = tmp / f"run-set-{workers}"
        start = time.perf_counter()
        summary = run_run_set(
            RunSetOptions(cases=tmp / "cases", candidate=candidate, out=out, trials=args.trials),
            executor=LocalExecutor(workers),
        )
        elapsed = time.perf_counter() - start
        throughput[workers] = (summary.total_trials / elapsed, elapsed, summary.counts)

    overhead = [f - b for f, b in zip(series["full"], series["bare"], strict=True)]
    lines = [
        f"Machine: {platform.platform()}, {os.cpu_count()} cores; Python {platform.python_version()}; "
        f"isolation {caps.isolation} ({caps.bwrap_version}), workspace {caps.workspace_mode}, "
        f"snapshot {args.files} files; {args.repeat} interleaved repeats; 1-minute load average at start "
        f"{load_at_start:.2f}.",
        "",
        "| per trial (`true`) | median ms | p5 ms | p95 ms |",
        "|---|---:|---:|---:|",
        f"| bare `subprocess.run(['true'])` | {_ms(series['bare'])} |",
        f"| workspace only (tmpfs + overlay, mount + dispose) | {_ms(series['workspace'])} |",
        f"| workspace + sandbox (cgroups, rlimits, bwrap, monitor) | {_ms(series['sandbox'])} |",
        f"| full trial (+ checks, digests, evidence, record fsync'd) | {_ms(series['full'])} |",
        f"| **overhead = full − bare** (paired) | **{_ms(overhead)}** |",
        "",
        "| run set of trivial trials | trials | seconds | trials / s |",
        "|---|---:|---:|---:|",
    ]
    for workers, (rate, elapsed, counts) in throughput.items():
        lines.append(f"| {workers} worker(s), {counts} | {args.trials} | {elapsed:.2f} | **{rate:.1f}** |")
    report = "\n".join(lines)
    print(report)
    target = ROOT / "benchmarks" / "_data"
    target.mkdir(parents=True, exist_ok=True)
    (target / "runner_last_run.md").write_text(report + "\n")
    subprocess.run(["rm", "-rf", str(tmp)], check=False)


if __name__ == "__main__":
    main()
