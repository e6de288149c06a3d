"""Benchmark ``gatestats.paired.compare_many``: all 45 pairs of 10 systems x 100k cases, Holm.

Reuses the foundation benchmark's data, ``benchmarks/_data/records_10m.parquet`` (10 systems x
100,000 cases x 10 trials, about 10.05 million records; written by ``make_synthetic.py``), and
times, each in its own subprocess (interpreter start-up and imports included, as a user sees it):

``foundation``
    The foundation benchmark's full analysis: ``load_records(FILE)`` + ``analyze(records,
    ks=range(1, 11), seed=0)`` (the ``gatestats`` contender of ``bench_analyze.py``).
``polars``
    The foundation benchmark's bare scan: ``scan_parquet(FILE).group_by("system", "case_id")
    .agg(n, c).collect()``.
``compare``
    ``load_records(FILE)`` + ``compare_many(records, family="all_pairs", correction="holm")``:
    45 paired comparisons (several trials per case: per-case pass-rate differences, exact sign
    test, t interval with Miller's SE, resolution check, flips), Holm-adjusted.
``compare-json``
    The same, plus serialising the result as the ``gatestats compare --all-pairs --json`` list
    (every flip of every pair named: about 45 MB).

The target of the issue: ``compare`` within 2x of ``foundation`` (best wall time of the runs,
as ``timeit`` advises on a shared machine; medians are reported beside it). Before each run the
parent waits (up to ``--idle-wait`` seconds) for the machine to go quiet and records how busy it
was. Results go to ``benchmarks/_data/compare_last_run.md`` and ``.json``
(the section in ``benchmarks/RESULTS.md`` is copied from them).

Usage::

    .venv/bin/python benchmarks/bench_compare.py                 # all contenders, 3 runs each
    .venv/bin/python benchmarks/bench_compare.py --only compare --repeat 1
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / "_data"
DEFAULT_DATA = DATA_DIR / "records_10m.parquet"
RESULTS = BENCH_DIR / "_data" / "compare_last_run.md"
CONTENDERS = ("foundation", "polars", "compare", "compare-json")
TARGET_RATIO = 2.0


def _child_foundation(data: Path) -> dict[str, Any]:
    start = time.perf_counter()
    import gatestats

    imported = time.perf_counter()
    records = gatestats.load_records(data)
    loaded = time.perf_counter()
    gatestats.analyze(records, ks=tuple(range(1, 11)), seed=0)
    done = time.perf_counter()
    return {
        "phases": {"import": imported - start, "load_validate": loaded - imported, "analyze": done - loaded},
        "note": f"{records.height:,} records",
    }


def _child_polars(data: Path) -> dict[str, Any]:
    start = time.perf_counter()
    import polars as pl

    imported = time.perf_counter()
    counts = (
        pl.scan_parquet(data)
        .group_by("system", "case_id")
        .agg(pl.len().alias("n"), (pl.col("outcome") == "passed").sum().alias("c"))
        .collect()
    )
    done = time.perf_counter()
    return {"phases": {"import": imported - start, "scan_group_by": done - imported}, "note": f"{counts.height:,} rows"}


def _child_compare(data: Path, *, as_json: bool = False) -> dict[str, Any]:
    start = time.perf_counter()
    import gatestats
    from gatestats.paired import compare_many

    imported = time.perf_counter()
    records = gatestats.load_records(data)
    loaded = time.perf_counter()
    many = compare_many(records, family="all_pairs", correction="holm")
    compared = time.perf_counter()
    phases = {"import": imported - start, "load_validate": loaded - imported, "compare_45_pairs": compared - loaded}
    size = 0
    if as_json:
        size = len(json.dumps(many.to_dict(), allow_nan=False))
        phases["json"] = time.perf_counter() - compared
    first = many.comparisons[0]
    worst = max(many.comparisons, key=lambda x: x.pvalue_adjusted or 0.0)
    note = (
        f"{len(many.comparisons)} pairs, {first.n_pairs:,} paired cases each ({first.design}, test {first.test}, "
        f"interval {first.interval.method}); largest Holm p {worst.pvalue_adjusted:.3g} "
        f"({worst.baseline} vs {worst.candidate})"
    )
    if as_json:
        note += f"; JSON {size / 1e6:.1f} MB"
    return {"phases": phases, "note": note}


CHILDREN = {
    "foundation": _child_foundation,
    "polars": _child_polars,
    "compare": _child_compare,
    "compare-json": lambda data: _child_compare(data, as_json=True),
}


@dataclass
class Run:
    wall_s: float
    cpu_s: float
    peak_rss_bytes: int
    returncode: int
    busy_before: float
    report: dict[str, Any]


def _busy(seconds: float = 1.0) -> float:
    """Share of the CPUs busy over ``seconds`` (from /proc/stat)."""

    def sample() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = fields[3] + fields[4]
        return idle, sum(fields)

    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return 1.0 - (idle1 - idle0) / max(1, total1 - total0)


def _wait_for_idle(limit: float) -> float:
    deadline = time.monotonic() + limit
    busy = _busy()
    while busy > 0.25 and time.monotonic() < deadline:
        busy = _busy(2.0)
    return busy


def _run(name: str, args: argparse.Namespace) -> Run:
    busy = _wait_for_idle(args.idle_wait) if args.idle_wait > 0 else 0.0
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        report_path = Path(handle.name)
    command = [sys.executable, __file__, "--child", name, "--data", str(args.data), "--report", str(report_path)]
    start = time.perf_counter()
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    report = json.loads(report_path.read_text()) if report_path.stat().st_size else {}
    report_path.unlink(missing_ok=True)
    return Run(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_bytes=usage.ru_maxrss * 1024,
        returncode=process.returncode,
        busy_before=busy,
        report=report,
    )


def _machine() -> str:
    import numpy as np
    import polars as pl

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        "",
    )
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        head = "unknown"
    return (
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M UTC}; gatestats source: {head.strip()} + working tree\n"
        f"- machine: {os.cpu_count()} CPUs ({cpu}), {platform.platform()}; python {platform.python_version()}, "
        f"polars {pl.__version__} ({pl.thread_pool_size()} threads), numpy {np.__version__}"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the contenders (parent) or one contender (``--child``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--only", nargs="+", choices=CONTENDERS, default=list(CONTENDERS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--idle-wait", type=float, default=120.0, help="wait up to this long for a quiet machine")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        result = CHILDREN[args.child](args.data)
        if args.report is not None:
            args.report.write_text(json.dumps(result))
        return 0
    if not args.data.is_file():
        print(f"{args.data}: no such file; run benchmarks/make_synthetic.py first", file=sys.stderr)
        return 2
    runs: dict[str, list[Run]] = {}
    for name in args.only:
        runs[name] = []
        for i in range(args.repeat):
            run = _run(name, args)
            runs[name].append(run)
            print(f"[{name} {i + 1}/{args.repeat}] wall {run.wall_s:.2f} s, CPU {run.cpu_s:.1f} s, "
                  f"peak {run.peak_rss_bytes / 2**30:.2f} GiB, busy before {run.busy_before:.0%}, "
                  f"phases {run.report.get('phases')}", file=sys.stderr, flush=True)  # fmt: skip
    lines = [
        "# Benchmark: all 45 paired comparisons of 10 systems (gatestats compare --all-pairs)",
        "",
        "Written by `benchmarks/bench_compare.py` (see its docstring for the contenders); the data is the",
        f"foundation benchmark's `{args.data.name}` ({args.data.stat().st_size / 2**20:.1f} MiB).",
        "",
        _machine(),
        "- command: `" + " ".join(["bench_compare.py", *(argv if argv is not None else sys.argv[1:])]) + "`",
        "",
        "| contender | runs | wall, best | wall, median | CPU, median | peak RSS | phases, best (s) | note |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for name, items in runs.items():
        phases: dict[str, list[float]] = {}
        for run in items:
            for phase, seconds in run.report.get("phases", {}).items():
                phases.setdefault(phase, []).append(seconds)
        phase_text = ", ".join(f"{p} {min(v):.2f}" for p, v in phases.items())
        failed = [r.returncode for r in items if r.returncode]
        note = ("FAILED " if failed else "") + str(items[0].report.get("note", ""))
        busy = max(r.busy_before for r in items)
        lines.append(
            f"| {name} | {len(items)} | {min(r.wall_s for r in items):.2f} s | "
            f"{statistics.median(r.wall_s for r in items):.2f} s | {statistics.median(r.cpu_s for r in items):.1f} s | "
            f"{max(r.peak_rss_bytes for r in items) / 2**30:.2f} GiB | {phase_text} | "
            f"{note}; machine ≤ {busy:.0%} busy before |"
        )
    if "foundation" in runs and "compare" in runs:
        best = min(r.wall_s for r in runs["compare"]) / min(r.wall_s for r in runs["foundation"])
        median = statistics.median(r.wall_s for r in runs["compare"]) / statistics.median(
            r.wall_s for r in runs["foundation"]
        )
        verdict = "yes" if best <= TARGET_RATIO else "**no**"
        lines += [
            "",
            "| target | measured (best wall) | measured (median wall) | met |",
            "|---|---:|---:|:---:|",
            f"| 45 pairs + Holm within {TARGET_RATIO:g}× of the foundation's full analysis | {best:.2f}× | "
            f"{median:.2f}× | {verdict} |",
        ]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.write_text(text)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    raw = {name: [asdict(r) for r in items] for name, items in runs.items()}
    (DATA_DIR / "compare_last_run.json").write_text(json.dumps(raw, indent=2) + "\n")
    return 1 if any(r.returncode for items in runs.values() for r in items) else 0


if __name__ == "__main__":
    raise SystemExit(main())
