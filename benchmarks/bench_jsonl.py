"""JSONL at the polars floor: `gatestats validate` and `analyze` beside a bare polars read, in one run.

    .venv/bin/python benchmarks/make_jsonl.py --cases 10000 --out /tmp/h28/records_1m.jsonl --damaged
    .venv/bin/python benchmarks/bench_jsonl.py /tmp/h28/records_1m.jsonl --before-src /tmp/h28/before --repeat 3

Contenders, each a child process (CPU = user + system of the child from ``os.wait4``), interleaved
(floor, before, after, floor, ...) so that the load of a shared machine hits all alike:

* ``floor``: ``polars.read_ndjson(FILE)`` + ``group_by(system, case_id)`` computing n and c (the
  issue's bare reader);
* ``validate`` and ``analyze --k 1-10 --json``, with this checkout's source and, with
  ``--before-src``, with another copy of ``src/`` and ``runner/`` (same virtual environment);
* with ``--one-process``, the same two commands of this checkout with the line pass in one process
  (``gatestats.records.lines.PARALLEL_FROM_BYTES`` lifted): what the workers change, in the same run;
* with ``--two-workers``, the same two commands with the line pass shared by two processes (the
  parent and one worker) whatever the file's size and whatever else runs (the default shares it from
  ``PARALLEL_FROM_BYTES`` on, among the CPUs no other task takes at the start:
  ``gatestats.records.parallel.default_workers``); with ``--analyze-two-workers``, ``analyze`` so
  with the ``--before-src`` copy too (on a busy machine the default runs it in one process).

CPU includes the line pass's worker processes (``os.wait4`` counts the children a child waited for).

Every run starts from the same page cache: the file is read through once just before each run of every
contender (not measured; ``--no-warm`` to skip), so that no contender pays for bytes another left on disk
(session 39's 10M floor moved from 12.8 to 22.2 s CPU between runs when it did not). Each run's user and
system CPU, its minor and major page faults, the 1-minute load and the memory available at its start
are kept; ``--runs`` prints them all. The table gives medians and the CPU's range over the runs.

With ``--damaged`` the damaged copies written by ``make_jsonl.py --damaged`` (torn last line, edited
line) are validated once each with this checkout, and the first line of each error is printed; a
resealed malformed copy (``FILE.malformed.jsonl``, ``make_malformed.py``), if there, is validated and
analyzed once.
Prints Markdown tables: medians, ratios to the floor's median, and the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOOR = (
    "import sys, polars as pl; pl.read_ndjson(sys.argv[1]).group_by('system', 'case_id')"
    ".agg(n=pl.len(), c=(pl.col('outcome') == 'passed').sum())"
)
CLI = "from gatestats.cli import main; main()"
#: The command line with the line pass in one process whatever the file's size (the workers' threshold lifted).
CLI_ONE_PROCESS = "from gatestats.records import lines; lines.PARALLEL_FROM_BYTES = 1 << 62\n" + CLI
#: The command line with the line pass shared by two processes (the parent and one worker) whatever the file's
#: size and the machine's other work (the default counts the CPUs free now, from ``PARALLEL_FROM_BYTES`` on).
CLI_TWO_WORKERS = (
    "from gatestats.records import lines, parallel\n"
    "parallel.default_workers = lambda: 2\nlines.PARALLEL_FROM_BYTES = 0\n" + CLI
)


def warm(file: Path) -> float:
    """Read ``file`` through once (into the page cache), in seconds of wall time: every run starts alike."""
    start = time.perf_counter()
    buffer = bytearray(16 << 20)
    with file.open("rb", buffering=0) as handle:
        while handle.readinto(buffer):
            pass
    return time.perf_counter() - start


def available_mib() -> float:
    """MemAvailable of /proc/meminfo in MiB (NaN off Linux)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def child(code: str, args: list[str], pythonpath: str) -> dict[str, float | int | str]:
    """Run ``python -c code args`` and measure it (exit, wall, CPU, peak RSS, faults, first stderr line)."""
    env = {**os.environ, "PYTHONPATH": pythonpath}
    load, available = os.getloadavg()[0], available_mib()
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", code, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    stderr = process.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(process.pid, 0)
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "wall": time.perf_counter() - start,
        "cpu": usage.ru_utime + usage.ru_stime,
        "user": usage.ru_utime,
        "sys": usage.ru_stime,
        "minflt": usage.ru_minflt,
        "majflt": usage.ru_majflt,
        "load": load,
        "available_mib": available,
        "peak_mib": usage.ru_maxrss / 1024,
        "stderr": stderr.strip().splitlines()[0] if stderr.strip() else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--before-src", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--damaged", action="store_true")
    parser.add_argument("--no-warm", action="store_true", help="do not read the file through before each run")
    parser.add_argument("--runs", action="store_true", help="also print every run (CPU user/sys, faults, load)")
    parser.add_argument("--skip", nargs="*", default=[], help="contenders to leave out (e.g. 'before analyze')")
    parser.add_argument(
        "--one-process",
        action="store_true",
        help="also run validate and analyze with the line pass in one process (no workers), this checkout",
    )
    parser.add_argument(
        "--two-workers",
        action="store_true",
        help="also run validate and analyze with the line pass in two processes whatever the size and other work",
    )
    parser.add_argument(
        "--analyze-two-workers",
        action="store_true",
        help="also run analyze with the line pass in two processes, with every source (before and after)",
    )
    parser.add_argument(
        "--run-sets", type=Path, default=None, help="validate DIR/sealed and DIR/broken-seal (make_jsonl.py --run-sets)"
    )
    options = parser.parse_args()
    after = f"{ROOT / 'src'}:{ROOT / 'runner'}"
    contenders: list[tuple[str, str, list[str], str]] = [("floor", FLOOR, [str(options.file)], after)]
    sources = [("after", after)]
    if options.before_src is not None:
        sources.insert(0, ("before", f"{options.before_src / 'src'}:{options.before_src / 'runner'}"))
    for label, path in sources:
        contenders.append((f"{label} validate", CLI, ["validate", str(options.file)], path))
        contenders.append((f"{label} analyze", CLI, ["analyze", str(options.file), "--k", "1-10", "--json"], path))
    if options.one_process:
        contenders.append(("after validate, one process", CLI_ONE_PROCESS, ["validate", str(options.file)], after))
        analyze = ["analyze", str(options.file), "--k", "1-10", "--json"]
        contenders.append(("after analyze, one process", CLI_ONE_PROCESS, analyze, after))
    if options.two_workers:
        contenders.append(("after validate, 2 processes", CLI_TWO_WORKERS, ["validate", str(options.file)], after))
    if options.two_workers or options.analyze_two_workers:
        analyze = ["analyze", str(options.file), "--k", "1-10", "--json"]
        for label, path in sources if options.analyze_two_workers else [("after", after)]:
            contenders.append((f"{label} analyze, 2 processes", CLI_TWO_WORKERS, analyze, path))
    contenders = [c for c in contenders if c[0] not in options.skip]
    runs: dict[str, list[dict[str, float | int | str]]] = {}
    loads = [os.getloadavg()]
    warms: list[float] = []
    for _ in range(options.repeat):
        for name, code, args, path in contenders:
            if not options.no_warm:
                warms.append(warm(options.file))
            runs.setdefault(name, []).append(child(code, args, path))
            loads.append(os.getloadavg())
    floor_cpu = statistics.median(float(r["cpu"]) for r in runs["floor"])
    floor_wall = statistics.median(float(r["wall"]) for r in runs["floor"])
    size = options.file.stat().st_size / 1e6
    print(f"file: {options.file} ({size:.0f} MB); {options.repeat} interleaved runs; medians")
    low, high = min(x[0] for x in loads), max(x[0] for x in loads)
    print(f"load average (1, 5, 15 min) before: {loads[0]}; after: {loads[-1]}; 1-min range {low:.1f}-{high:.1f}")
    if warms:
        print(f"page cache warmed before every run: file read through in {min(warms):.2f}-{max(warms):.2f} s wall")
    print()
    print(
        "| contender | exit | CPU s (median) | CPU range | user / sys s (median) | CPU ÷ floor | wall s (median) "
        "| wall ÷ floor | peak RSS MiB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, results in runs.items():
        cpus = [float(r["cpu"]) for r in results]
        cpu = statistics.median(cpus)
        user = statistics.median(float(r["user"]) for r in results)
        system = statistics.median(float(r["sys"]) for r in results)
        wall = statistics.median(float(r["wall"]) for r in results)
        peak = max(float(r["peak_mib"]) for r in results)
        print(
            f"| {name} | {results[0]['exit']} | {cpu:.2f} | {min(cpus):.2f}-{max(cpus):.2f} | "
            f"{user:.2f} / {system:.2f} | {cpu / floor_cpu:.2f}× | {wall:.2f} | {wall / floor_wall:.2f}× | {peak:.0f} |"
        )
    if options.runs:
        print("\n| run | contender | CPU s | user s | sys s | wall s | minor / major faults | load at start ", end="")
        print("| MiB available |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        for turn in range(options.repeat):
            for name, results in runs.items():
                r = results[turn]
                print(
                    f"| {turn + 1} | {name} | {r['cpu']:.2f} | {r['user']:.2f} | {r['sys']:.2f} | {r['wall']:.2f} | "
                    f"{r['minflt']} / {r['majflt']} | {r['load']:.1f} | {r['available_mib']:.0f} |"
                )
    if options.damaged:
        print("\n| damaged copy | exit | CPU s | wall s | first line of the error |\n|---|---:|---:|---:|---|")
        checks = [(".torn.jsonl", "validate"), (".edited.jsonl", "validate")]
        if options.file.with_suffix(".malformed.jsonl").exists():  # make_malformed.py: resealed, malformed
            checks += [(".malformed.jsonl", "validate"), (".malformed.jsonl", "analyze")]
        for suffix, command in checks:
            damaged = options.file.with_suffix(suffix)
            extra = ["--k", "1-10", "--json"] if command == "analyze" else []
            result = child(CLI, [command, str(damaged), *extra], after)
            cells = f"{result['exit']} | {result['cpu']:.2f} | {result['wall']:.2f} | `{result['stderr']}`"
            print(f"| {damaged.name} ({command}) | {cells} |")
    if options.run_sets is not None:
        print("\n| run set | exit | CPU s | wall s | peak RSS MiB | first line of the output |")
        print("|---|---:|---:|---:|---:|---|")
        for name in ("sealed", "broken-seal"):
            result = child(CLI, ["validate", str(options.run_sets / name)], after)
            cells = f"{result['exit']} | {result['cpu']:.2f} | {result['wall']:.2f} | {result['peak_mib']:.0f}"
            print(f"| {name} | {cells} | `{result['stderr'] or 'ok'}` |")
    print(f"\nload average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
