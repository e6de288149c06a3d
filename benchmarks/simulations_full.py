"""Run the simulation tests at their full size (or the suite's), measured; optionally record the run.

Each simulation test (and each oracle identity test re-run smaller in the suite) states its sizes as
``NAME = reps(suite=n, full=m)`` (``tests/simulations.py``). The whole suite runs ``n``; this script
runs the same tests at ``m`` by setting ``GATESTATS_SIMULATION_SIZE=full`` for pytest, and prints one
Markdown row: the mode, the files, pytest's outcome, CPU (user + sys of the children), wall time and the
1-minute load average before and after. ``--record`` appends the row to ``benchmarks/RESULTS.md``.

Examples::

    .venv/bin/python benchmarks/simulations_full.py                      # every sized file, full size
    .venv/bin/python benchmarks/simulations_full.py tests/gate/test_size_gate.py --mode suite
    .venv/bin/python benchmarks/simulations_full.py --record -- -n 2     # extra pytest arguments after --

A full-size run of every file takes tens of CPU-minutes: on a shared machine run it under the big-run lock.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.simulations import SIZE_ENV, SIZES, sized_files  # noqa: E402

RESULTS = ROOT / "benchmarks" / "RESULTS.md"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sized test files at the chosen size; print (and optionally record) the measurement."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="test files (default: every file that registers a size)")
    parser.add_argument("--mode", choices=SIZES, default="full")
    parser.add_argument("--record", action="store_true", help="append the row to benchmarks/RESULTS.md")
    given = list(sys.argv[1:] if argv is None else argv)
    cut = given.index("--") if "--" in given else len(given)
    args = parser.parse_args(given[:cut])
    files = [Path(f).resolve() for f in args.files] or sized_files()
    extra = given[cut + 1 :]
    if not any(a.startswith("-n") for a in extra):
        extra = ["-n", "0", *extra]
    env = {**os.environ, SIZE_ENV: args.mode, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, *map(str, files)]
    load_before = os.getloadavg()[0]
    start, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(command, cwd=ROOT, env=env, check=False)
    wall, used = time.perf_counter() - start, _cpu() - cpu
    load_after = os.getloadavg()[0]
    names = ", ".join(str(f.relative_to(ROOT)) for f in files) if len(files) <= 3 else f"{len(files)} sized files"
    row = (
        f"| {datetime.now(UTC):%Y-%m-%d %H:%M} UTC | {args.mode} | {names} | exit {done.returncode} | "
        f"{used:.1f} CPU-s | {wall:.1f} s wall | load {load_before:.2f} -> {load_after:.2f} |"
    )
    print(row)
    if args.record:
        with RESULTS.open("a", encoding="utf-8") as handle:
            handle.write(row + "\n")
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
