"""Where the line pass on every core pays: one process against N workers, by file size (issue 28, item 1).

    .venv/bin/python benchmarks/make_jsonl.py --cases 10000 --out /work/bigdata/h37/jsonl_runner_1m.jsonl
    .venv/bin/python benchmarks/bench_parallel.py /work/bigdata/h37/jsonl_runner_1m.jsonl --mib 8 16 32 64 128

Writes the first lines of FILE (about ``--mib`` MiB each) beside it, then checks each with
``check_jsonl(path, keep=analyze's columns, key=RECORD_KEY, workers=W)`` in a child process, for
W = 1 (one process) and each ``--workers`` (the threshold lifted, so that the workers start whatever
the size), interleaved, ``--repeat`` times. CPU is the child's user + system time with its workers
(``os.wait4``); a worker's start (interpreter, msgspec, the block checker, its decoder) is measured
alone too. Prints a Markdown table of medians and the load average.
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
CHECK = (
    "import sys\n"
    "from gatestats.records import lines\n"
    "from gatestats.estimators import ANALYSIS_COLUMNS\n"
    "from gatestats.records.contract import RECORD_KEY\n"
    "lines.PARALLEL_FROM_BYTES = 0\n"
    "lines.check_jsonl(sys.argv[1], keep=ANALYSIS_COLUMNS, key=RECORD_KEY, workers=int(sys.argv[2]))\n"
)
WORKER_START = (
    "from gatestats.records.block_worker import serve\nfrom gatestats.records.canonical_block import _codec\n_codec()\n"
)


def child(args: list[str]) -> tuple[float, float]:
    """CPU (user + system, with the child's own children) and wall seconds of ``python args``."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT / 'runner'}"}
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, *args], env=env)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{args} failed")
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - start


def prefix(source: Path, mib: int) -> Path:
    """The first whole lines of ``source``, about ``mib`` MiB, written beside it (once)."""
    out = source.with_name(f"{source.stem}.{mib}mib.jsonl")
    if not out.exists():
        with source.open("rb") as handle:
            data = handle.read(mib << 20)
        out.write_bytes(data[: data.rfind(b"\n") + 1])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--mib", type=int, nargs="+", default=[8, 16, 32, 64, 128])
    parser.add_argument("--workers", type=int, nargs="+", default=[2])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    loads = [os.getloadavg()]
    starts = [child(["-P", "-c", WORKER_START]) for _ in range(5)]
    print(
        f"a worker's start alone (median of 5): {statistics.median(c for c, _ in starts):.3f} s CPU, "
        f"{statistics.median(w for _, w in starts):.3f} s wall\n"
    )
    counts = [1, *options.workers]
    rows: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for _ in range(options.repeat):
        for mib in options.mib:
            path = prefix(options.file, mib)
            for workers in counts:
                rows.setdefault((mib, workers), []).append(child(["-c", CHECK, str(path), str(workers)]))
                loads.append(os.getloadavg())
    print("| MiB | workers | CPU s | CPU ÷ one process | wall s | wall ÷ one process |")
    print("|---:|---:|---:|---:|---:|---:|")
    for mib in options.mib:
        one_cpu = statistics.median(c for c, _ in rows[(mib, 1)])
        one_wall = statistics.median(w for _, w in rows[(mib, 1)])
        for workers in counts:
            cpu = statistics.median(c for c, _ in rows[(mib, workers)])
            wall = statistics.median(w for _, w in rows[(mib, workers)])
            print(f"| {mib} | {workers} | {cpu:.2f} | {cpu / one_cpu:.2f}× | {wall:.2f} | {wall / one_wall:.2f}× |")
    low, high = min(x[0] for x in loads), max(x[0] for x in loads)
    print(f"\nload average before: {loads[0]}; after: {loads[-1]}; 1-minute range {low:.1f}-{high:.1f}")


if __name__ == "__main__":
    main()
