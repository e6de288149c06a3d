"""Per-trial overhead of the sandbox runner and run-set throughput on 1 and N workers, with CPU time and load.

    .venv/bin/python benchmarks/bench_runner.py [--repeat 200] [--trials 400] [--workers 2]
        [--before /tmp/runner_before/runner] [--rounds 3] [--profile] [--driver] [--idle-wait 0]

Overhead per trial = (fresh workspace + isolation + bounds + record) for the command ``true``,
minus a bare ``subprocess`` of ``true``; each part is also timed alone. Throughput = trivial
trials per second of a whole run set (``run_run_set``: 1 case x ``--trials`` trials on 1 and
``--workers`` workers, records fsync'd), each run set in a fresh child process, with the CPU time
it took per trial: the runner's own threads, its child processes (wrapper, bubblewrap, the
command), the kernel's threads (namespace and cgroup teardown run there) and the whole machine,
and how much of the machine was idle meanwhile (the cores a second worker could use). With
``--before DIR`` (the ``runner/`` directory of another checkout, e.g. a clean clone of HEAD) the
same run sets are made with that code too, interleaved round by round (before 1, before N, after
1, after N, ...) so that the machine's load hits both alike. ``--profile`` adds one run set of
the current code with cProfile on the recording (main) thread and per-phase timestamps;
``--driver`` the recording thread's own cost per finished attempt, up to 10,000 attempts.

Needs root and bubblewrap for the full numbers; prints the isolation actually used and the load
average (``uptime``) at the start and end. Writes a Markdown report to stdout and to
``benchmarks/_data/runner_last_run.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT / "runner"


def _write_case(root: Path, n_files: int) -> Path:
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


# --- CPU accounting --------------------------------------------------------------------------------


def _machine_ticks() -> tuple[int, int]:
    """(busy, idle) clock ticks of the whole machine since boot (``/proc/stat``; iowait counts as idle)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields[:8]) - idle, idle


def _kernel_thread_seconds() -> float:
    """CPU seconds used so far by the kernel's threads (children of kthreadd: kworkers, RCU, ksoftirqd)."""
    ticks = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        if fields[1] == "2" or entry.name == "2":
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _own_seconds() -> tuple[float, float]:
    """(this process's CPU seconds, its reaped children's CPU seconds)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


# --- one run set in a child process ----------------------------------------------------------------


def child_run(runner: Path, cases: Path, trials: int, workers: int) -> dict[str, Any]:
    """Make one run set with the runner code in ``runner``; its rate and CPU per trial (in this process)."""
    sys.path.insert(0, str(runner))
    from gatestats_runner.executors import LocalExecutor
    from gatestats_runner.runset import RunSetOptions, run_run_set

    tmp = Path(tempfile.mkdtemp(prefix="gatestats-bench-rs-"))
    candidate = tmp / "candidate"
    candidate.mkdir()
    try:
        self0, kids0 = _own_seconds()
        kthreads0 = _kernel_thread_seconds()
        busy0, idle0 = _machine_ticks()
        start = time.perf_counter()
        summary = run_run_set(
            RunSetOptions(cases=cases, candidate=candidate, out=tmp / "rs", trials=trials),
            executor=LocalExecutor(workers),
        )
        wall = time.perf_counter() - start
        busy1, idle1 = _machine_ticks()
        kthreads1 = _kernel_thread_seconds()
        self1, kids1 = _own_seconds()
        records = [json.loads(line) for line in (tmp / "rs" / "records.jsonl").read_text().splitlines()]
        tick = os.sysconf("SC_CLK_TCK")
        sandbox_cpu = [r["machine_seconds"] for r in records if r.get("machine_seconds") is not None]
        return {
            "trials": summary.total_trials,
            "counts": dict(summary.counts),
            "wall_s": wall,
            "rate": summary.total_trials / wall,
            "runner_cpu_ms": (self1 - self0) / trials * 1e3,
            "children_cpu_ms": (kids1 - kids0) / trials * 1e3,
            "kernel_threads_cpu_ms": (kthreads1 - kthreads0) / trials * 1e3,
            "machine_cpu_ms": (busy1 - busy0) / tick / trials * 1e3,
            "idle_cores": (idle1 - idle0) / tick / wall,
            "sandbox_tree_cpu_ms": statistics.mean(sandbox_cpu) * 1e3 if sandbox_cpu else None,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _spawn_run(runner: Path, cases: Path, trials: int, workers: int) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--child-run", str(runner), "--cases", str(cases)]
    argv += ["--trials", str(trials), "--workers", str(workers)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        msg = f"child run set ({runner}, {workers} workers) failed:\n{done.stderr[-4000:]}"
        raise RuntimeError(msg)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --- per-trial overhead (this process, current code) ---------------------------------------------


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


def overhead(tmp: Path, repeat: int) -> tuple[dict[str, list[float]], Any]:
    """The interleaved per-trial series (bare, workspace, sandbox, full) and the capabilities used."""
    from gatestats_runner.case import load_case
    from gatestats_runner.sandbox import detect_capabilities, execute
    from gatestats_runner.store import RecordWriter
    from gatestats_runner.trial import TrialSpec, run_trial
    from gatestats_runner.workspace import create_workspace, make_private_scratch, release_private_scratch

    caps = detect_capabilities()
    case = load_case(tmp / "cases" / "true-case")
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
    for _ in range(repeat):
        for name, fn in fns.items():
            series[name] += _times(fn, 1)[-1:]
    writer.close()
    release_private_scratch(scratch)
    return series, caps


# --- profile of one run set (current code) ---------------------------------------------------------

_PHASES = (
    ("trial", "run_trial"),
    ("trial", "_fresh_evidence_dir"),
    ("trial", "create_workspace"),
    ("sandbox", "TrialCgroup"),
    ("sandbox", "_monitor"),
    ("sandbox", "cap_output"),
    ("sandbox", "_collect"),
    ("cgroups", "TrialCgroup.settle"),
    ("cgroups", "TrialCgroup.wait_empty"),
    ("cgroups", "TrialCgroup.remove"),
    ("workspace", "Workspace.dispose"),
    ("trial", "_finish"),
    ("store", "RecordWriter.append"),
    ("store", "encode_record"),
)


def profile(cases: Path, trials: int, workers: int) -> list[str]:
    """cProfile of the recording thread and wall/CPU per phase (each thread's own CPU) of one run set."""
    import cProfile
    import importlib
    import io
    import pstats
    import threading

    log: list[tuple[str, str, float, float]] = []

    def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                name = threading.current_thread().name
                thread = "main" if name == "MainThread" else name.split("_")[0].removeprefix("gatestats-")
                log.append((thread, label, time.perf_counter() - t0, time.thread_time() - c0))

        return wrapper

    for module_name, attr in _PHASES:
        module = importlib.import_module(f"gatestats_runner.{module_name}")
        owner_name, _, name = attr.rpartition(".")
        owner = getattr(module, owner_name) if owner_name else module
        setattr(owner, name, timed(attr, getattr(owner, name)))
    executors = importlib.import_module("gatestats_runner.executors")
    executors.run_trial = importlib.import_module("gatestats_runner.trial").run_trial  # type: ignore[attr-defined]
    from gatestats_runner.executors import LocalExecutor
    from gatestats_runner.runset import RunSetOptions, run_run_set

    tmp = Path(tempfile.mkdtemp(prefix="gatestats-bench-prof-"))
    (tmp / "candidate").mkdir()
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    run_run_set(
        RunSetOptions(cases=cases, candidate=tmp / "candidate", out=tmp / "rs", trials=trials),
        executor=LocalExecutor(workers),
    )
    profiler.disable()
    wall = time.perf_counter() - start
    shutil.rmtree(tmp, ignore_errors=True)
    lines = [
        f"Profile: {trials} trials on {workers} workers, {trials / wall:.1f} trials/s, "
        f"1-minute load {os.getloadavg()[0]:.2f} at the end.",
        "",
        "| thread | phase | calls | wall median ms | wall mean ms | CPU median ms | wall total s |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    groups: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for thread, label, w, c in log:
        groups.setdefault((thread, label), []).append((w, c))
    for (thread, label), values in sorted(groups.items(), key=lambda kv: -sum(v[0] for v in kv[1])):
        walls = [v[0] for v in values]
        cpus = [v[1] for v in values]
        lines.append(
            f"| {thread} | `{label}` | {len(values)} | {statistics.median(walls) * 1e3:.2f} | "
            f"{statistics.mean(walls) * 1e3:.2f} | {statistics.median(cpus) * 1e3:.2f} | {sum(walls):.2f} |"
        )
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(12)
    lines += ["", "cProfile of the recording (main) thread, by own time:", "", "```", buffer.getvalue().strip(), "```"]
    return lines


# --- the recording thread's cost per finished attempt --------------------------------------------


def driver(sizes: tuple[int, ...] = (400, 2000, 10000)) -> list[str]:
    """Main-thread CPU and wall per finished attempt: ``wait`` over every pending future vs the feed.

    The attempts are no-ops (0.2 ms on 2 threads), so only the driver's own cost shows. The
    ``wait`` loop is the pattern of the code before the feed (every attempt submitted up front,
    ``concurrent.futures.wait(..., FIRST_COMPLETED)`` over all pending futures after each one).
    """
    from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

    from gatestats_runner.dispatch import AttemptFeed

    def work(x: int) -> int:
        time.sleep(0.0002)
        return x

    class Pool:
        name = "local"
        workers = 2

        def __init__(self) -> None:
            self.pool = ThreadPoolExecutor(2)

        def submit(self, spec: Any) -> Future[Any]:
            return self.pool.submit(work, spec)

    lines = [
        "| attempts | `wait` loop: main-thread CPU ms/attempt | feed: CPU ms/attempt "
        "| `wait` loop: wall ms/attempt | feed: wall ms/attempt |",
        "|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        pool = Pool()
        c0, t0 = time.thread_time(), time.perf_counter()
        inflight = {pool.pool.submit(work, i): i for i in range(n)}
        while inflight:
            done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            for future in done:
                inflight.pop(future)
        old = ((time.thread_time() - c0) / n * 1e3, (time.perf_counter() - t0) / n * 1e3)
        pool.pool.shutdown()
        pool = Pool()
        c0, t0 = time.thread_time(), time.perf_counter()
        for _ in AttemptFeed(pool, range(n), window=4):  # type: ignore[arg-type]
            pass
        new = ((time.thread_time() - c0) / n * 1e3, (time.perf_counter() - t0) / n * 1e3)
        pool.pool.shutdown()
        lines.append(f"| {n:,} | {old[0]:.3f} | {new[0]:.3f} | {old[1]:.3f} | {new[1]:.3f} |")
    return lines


# --- report ----------------------------------------------------------------------------------------


def _uptime() -> str:
    done = subprocess.run(["uptime"], capture_output=True, text=True, check=False)
    return done.stdout.strip()


def _throughput_rows(results: dict[tuple[str, int], list[dict[str, Any]]], workers: int) -> list[str]:
    lines = [
        "| code | workers | trials/s (median) | per round | runner CPU ms/trial | sandbox CPU ms/trial "
        "| kernel threads CPU ms/trial | **CPU ms/trial** | wall ms/trial per worker | machine CPU ms/trial "
        "| idle cores |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def med(rows: list[dict[str, Any]], key: str) -> float:
        values = [r[key] for r in rows if r[key] is not None]
        return statistics.median(values) if values else float("nan")

    for (label, n), rows in results.items():
        per_round = ", ".join(f"{r['rate']:.0f}" for r in rows)
        runner, sandbox = med(rows, "runner_cpu_ms"), med(rows, "sandbox_tree_cpu_ms")
        kernel = med(rows, "kernel_threads_cpu_ms")
        lines.append(
            f"| {label} | {n} | **{med(rows, 'rate'):.1f}** | {per_round} | {runner:.1f} | {sandbox:.1f} | "
            f"{kernel:.1f} | **{runner + sandbox + kernel:.1f}** | {n * 1e3 / med(rows, 'rate'):.1f} | "
            f"{med(rows, 'machine_cpu_ms'):.1f} | {med(rows, 'idle_cores'):.2f} |"
        )
    lines.append("")
    for label in dict.fromkeys(label for label, _ in results):
        one, many = results[(label, 1)], results.get((label, workers))
        if many is None or many is one:
            continue
        ratios = [m["rate"] / o["rate"] for o, m in zip(one, many, strict=True)]
        lines.append(
            f"- {label}: {workers} workers / 1 worker = **{statistics.median(ratios):.2f}×** "
            f"(per round: {', '.join(f'{r:.2f}' for r in ratios)})"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=200, help="interleaved repeats of the per-trial overhead")
    parser.add_argument("--trials", type=int, default=400, help="trials per run set")
    parser.add_argument("--workers", type=int, default=2, help="the N of 1 vs N workers")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the run sets")
    parser.add_argument("--before", type=Path, help="the runner/ directory of the code to compare against")
    parser.add_argument("--profile", action="store_true", help="add a profiled run set of the current code")
    parser.add_argument("--driver", action="store_true", help="add the recording thread's cost per attempt")
    parser.add_argument("--files", type=int, default=2000, help="files in the snapshot (overlay does not copy them)")
    parser.add_argument(
        "--idle-wait", type=float, default=0.0, help="wait up to this many seconds for a 1-minute load average < 0.5"
    )
    parser.add_argument("--child-run", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cases", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_run is not None:
        print(json.dumps(child_run(args.child_run, args.cases, args.trials, args.workers)))
        return
    sys.path.insert(0, str(RUNNER))
    deadline = time.monotonic() + args.idle_wait
    while os.getloadavg()[0] >= 0.5 and time.monotonic() < deadline:
        time.sleep(5)
    uptime_start = _uptime()
    tmp = Path(tempfile.mkdtemp(prefix="gatestats-bench-"))
    try:
        _write_case(tmp / "cases", args.files)
        series, caps = overhead(tmp, args.repeat) if args.repeat > 0 else ({}, None)
        codes = [("before", args.before.resolve())] if args.before else []
        codes.append(("after" if args.before else "current", RUNNER))
        results: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for _ in range(args.rounds):
            for label, runner in codes:
                for n in sorted({1, args.workers}):
                    results.setdefault((label, n), []).append(_spawn_run(runner, tmp / "cases", args.trials, n))
        profile_lines = profile(tmp / "cases", args.trials, args.workers) if args.profile else []
        driver_lines = driver() if args.driver else []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    uptime_end = _uptime()

    lines = [
        f"Machine: {platform.platform()}, {os.cpu_count()} cores; Python {platform.python_version()}"
        + (
            f"; isolation {caps.isolation} ({caps.bwrap_version}), workspace {caps.workspace_mode}"
            if caps is not None
            else ""
        )
        + f"; snapshot {args.files} files.",
        f"`uptime` at the start: `{uptime_start}`",
        f"`uptime` at the end: `{uptime_end}`",
        "",
    ]
    if series:
        overhead_ms = [f - b for f, b in zip(series["full"], series["bare"], strict=True)]
        lines += [
            f"Per trial, {args.repeat} interleaved repeats (current code):",
            "",
            "| per trial (`true`) | median ms | p5 ms | p95 ms |",
            "|---|---:|---:|---:|",
            f"| bare `subprocess.run(['true'])` | {_ms(series['bare'])} |",
            f"| workspace only (tmpfs + overlay, mount + dispose) | {_ms(series['workspace'])} |",
            f"| workspace + sandbox (cgroups, rlimits, bwrap, monitor) | {_ms(series['sandbox'])} |",
            f"| full trial (+ checks, digests, evidence, record fsync'd) | {_ms(series['full'])} |",
            f"| **overhead = full − bare** (paired) | **{_ms(overhead_ms)}** |",
            "",
        ]
    lines += [
        f"Run sets of 1 case × {args.trials} trivial trials, records fsync'd, {args.rounds} interleaved rounds "
        "(each run set in a fresh process). CPU per trial, used while the run set ran / trials: the runner "
        "process (its threads and the syscalls they make), the sandbox (the trial cgroup's CPU: wrapper, "
        "bubblewrap, its namespaces, the command; the records' `machine_seconds`, mean), the kernel's "
        "threads; machine = every process on the machine (other users included); idle cores = what was left.",
        "",
        *_throughput_rows(results, args.workers),
    ]
    if driver_lines:
        lines += ["", "The recording thread's own cost per finished attempt (no-op attempts):", "", *driver_lines]
    if profile_lines:
        lines += ["", *profile_lines]
    report = "\n".join(lines)
    print(report)
    target = ROOT / "benchmarks" / "_data"
    target.mkdir(parents=True, exist_ok=True)
    (target / "runner_last_run.md").write_text(report + "\n")


if __name__ == "__main__":
    main()
