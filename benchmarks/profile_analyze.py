"""Where ``load_records`` + ``analyze`` spend time and memory, phase by phase.

Public API only, so it keeps working while the internals change. Each phase prints its wall
time, the peak resident set size reached during the phase and the RSS after it (the peak is
reset between phases through ``/proc/self/clear_refs``, Linux only). With ``--cprofile N`` each
phase also prints its N most expensive functions (own time), which is how the proposals in
``RESULTS.md`` were found.

Usage::

    .venv/bin/python benchmarks/profile_analyze.py
    .venv/bin/python benchmarks/profile_analyze.py --cprofile 15
    .venv/bin/python benchmarks/profile_analyze.py --every-column   # load_records(FILE): all columns
    PYTHONPATH=/path/to/patched/src .venv/bin/python benchmarks/profile_analyze.py  # a variant
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pstats
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

DEFAULT_DATA = Path(__file__).resolve().parent / "_data" / "records_10m.parquet"
T = TypeVar("T")


def _status_gib(key: str) -> float:
    """``VmHWM`` / ``VmRSS`` of this process in GiB (``ru_maxrss`` where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _reset_peak() -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS


def phase(name: str, func: Callable[[], T], *, top: int) -> T:
    """Run ``func``; print its wall time, peak RSS and RSS after; optionally its profile."""
    _reset_peak()
    profiler = cProfile.Profile() if top else None
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    result = func()
    if profiler is not None:
        profiler.disable()
    elapsed = time.perf_counter() - start
    print(
        f"{name:<32} {elapsed:6.2f} s   peak {_status_gib('VmHWM'):5.2f} GiB   after {_status_gib('VmRSS'):5.2f} GiB",
        flush=True,
    )
    if profiler is not None:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(top)
        body = text.getvalue().split("\n\n", 2)[-1].rstrip()
        print("\n".join("    " + line for line in body.splitlines()), "\n", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="record file")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N", help="top N functions")
    parser.add_argument(
        "--every-column",
        action="store_true",
        help="load_records(FILE) with every column (default: columns=ANALYSIS_COLUMNS, where the source has it)",
    )
    args = parser.parse_args(argv)
    top = args.cprofile

    def imports() -> None:
        import gatestats  # noqa: F401

    phase("import gatestats", imports, top=top)
    import polars as pl

    import gatestats
    from gatestats import estimators
    from gatestats.estimators import case_summary

    columns = None if args.every_column else getattr(estimators, "ANALYSIS_COLUMNS", None)
    label = "load_records (read + validate)" if columns is None else "load_records(columns=7 needed)"

    def load() -> pl.DataFrame:
        return (
            gatestats.load_records(args.data) if columns is None else gatestats.load_records(args.data, columns=columns)
        )

    records = phase(label, load, top=top)
    phase("case_summary", lambda: case_summary(records), top=top)
    phase(
        "analyze k=1..10 (incl. summary)",
        lambda: gatestats.analyze(records, ks=range(1, 11), seed=0),
        top=top,
    )
    print(f"{records.height:,} records; {records.estimated_size() / 2**30:.2f} GiB as a frame")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
