"""How time and memory grow with the number of records: 1M, 10M, 30M, 100M.

For each size, a synthetic Parquet record file from ``make_synthetic.py`` (10 systems × N/100
cases × 10 trials, plus ~0.5% retries; same seed, so the 10M file is the P1 benchmark's), then
``bench_analyze.py``'s own children, each in its own subprocess (wall time with start-up and
imports, CPU time and the child's own peak RSS from ``os.wait4``):

``gatestats``
    ``load_records(FILE, columns=ANALYSIS_COLUMNS)`` (every column checked in one streaming
    pass, 7 columns kept) then ``analyze(ks=1..10)``.
``gatestats-scan``
    ``analyze(scan_records(FILE))``: every record checked in one streaming pass, then analysed
    from a scan of the file (nothing but the per-case summary held).
``gatestats-all-columns``
    ``load_records(FILE)`` (every column kept) then ``analyze``.
``polars``
    The bare ``scan_parquet`` + ``group_by`` floor.

Every child is killed if its resident set passes ``--rss-limit-gib`` (8 GiB by default; the
machine is shared); a killed run is reported as such. ``gatestats-all-columns`` holds every
column (~270 bytes a record), so it is skipped above ``--all-columns-max`` million records (30
by default: 100M would need ~26 GiB) and the table says so. After the table, peak memory and
CPU time of each contender are fitted as a constant plus a cost per record (least squares over
the sizes measured). A size beyond the largest measured (``--extrapolate-to``) is extrapolated
linearly from the two largest, and labelled as such.

Usage::

    .venv/bin/python benchmarks/bench_growth.py                        # 1M, 10M, 30M
    .venv/bin/python benchmarks/bench_growth.py --millions 1 10 --repeat 2
    .venv/bin/python benchmarks/bench_growth.py --millions 1 10 100 --rss-limit-gib 14 \
        --only gatestats-scan gatestats polars --repeat 2   # the measured 100M row
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_analyze as ba

CONTENDERS = ("gatestats", "gatestats-scan", "gatestats-all-columns", "polars")


def _data_file(millions: int) -> Path:
    """The synthetic file of ``millions`` million first attempts (written once, then reused)."""
    path = ba.DEFAULT_DATA if millions == 10 else ba.DATA_DIR / f"records_{millions}m.parquet"
    if not path.exists():
        script = Path(__file__).resolve().parent / "make_synthetic.py"
        cases = millions * 1_000_000 // 100
        subprocess.run([sys.executable, str(script), "--cases", str(cases), "--out", str(path)], check=True)
    return path


def _row(millions: int, path: Path, name: str, summary: ba.Summary) -> str:
    if not summary.ok:
        return f"| {millions}M | {name} | – | – | – | killed or failed (exit {summary.runs[0].returncode}) |"
    records = summary.ok[0].report.get("n_records") or summary.ok[0].report.get("note", "")
    return (
        f"| {millions}M | {name} | {summary.best_wall_s:.2f} | {summary.median_cpu_s:.1f} | "
        f"{summary.peak_rss_bytes / 2**30:.2f} | {records:,} records, {path.stat().st_size / 2**20:.0f} MiB |"
        if isinstance(records, int)
        else f"| {millions}M | {name} | {summary.best_wall_s:.2f} | {summary.median_cpu_s:.1f} | "
        f"{summary.peak_rss_bytes / 2**30:.2f} | {records} |"
    )


def _skipped_row(millions: int, name: str, reason: str) -> str:
    return f"| {millions}M | {name} | – | – | – | not run: {reason} |"


def _extrapolate(results: dict[tuple[int, str], ba.Summary], target: int) -> list[str]:
    """A linear fit through the two largest sizes measured, to ``target`` million (labelled as such)."""
    sizes = sorted({m for m, _ in results})
    if len(sizes) < 2 or target <= sizes[-1]:
        return []
    lo, hi = sizes[-2], sizes[-1]
    out = []
    for name in CONTENDERS:
        a, b = results.get((lo, name)), results.get((hi, name))
        if a is None or b is None or not a.ok or not b.ok:
            continue
        scale = (target - hi) / (hi - lo)
        wall = b.best_wall_s + scale * (b.best_wall_s - a.best_wall_s)
        cpu = b.median_cpu_s + scale * (b.median_cpu_s - a.median_cpu_s)
        peak = (b.peak_rss_bytes + scale * (b.peak_rss_bytes - a.peak_rss_bytes)) / 2**30
        out.append(
            f"| {target}M (extrapolated from {lo}M and {hi}M, not measured) | {name} | ~{wall:.0f} | "
            f"~{cpu:.0f} | ~{peak:.1f} | linear in records |"
        )
    return out


def _least_squares(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Intercept and slope of the least-squares line through ``(xs, ys)`` (at least two distinct xs)."""
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sum((x - mean_x) ** 2 for x in xs)
    return mean_y - slope * mean_x, slope


def _fits(results: dict[tuple[int, str], ba.Summary], records: dict[int, int]) -> list[str]:
    """Peak RSS and CPU time of each contender as a constant plus a cost per record."""
    out = []
    for name in CONTENDERS:
        points = [(records[m], s) for (m, n), s in sorted(results.items()) if n == name and s.ok]
        if len({x for x, _ in points}) < 2:
            continue
        xs = [float(x) for x, _ in points]
        rss0, rss_per = _least_squares(xs, [float(s.peak_rss_bytes) for _, s in points])
        cpu0, cpu_per = _least_squares(xs, [s.median_cpu_s for _, s in points])
        sizes = ", ".join(f"{x / 1e6:.0f}M" for x in xs)
        out.append(
            f"- {name}: peak RSS ≈ {rss0 / 2**30:.2f} GiB + {rss_per:.0f} B/record; "
            f"CPU ≈ {cpu0:.1f} s + {cpu_per * 1e6:.2f} s per million records (least squares over {sizes})"
        )
    return out


def _measure(millions: int, path: Path, name: str, args: argparse.Namespace) -> ba.Summary:
    """Run contender ``name`` on ``path`` ``args.repeat`` times (stopping at the first failure)."""
    child_args = argparse.Namespace(data=path, loop_systems=None, before_src=None, idle_wait=args.idle_wait)
    runs = []
    for _ in range(args.repeat):
        run = ba._run_python_contender(name, child_args)
        runs.append(run)
        print(
            f"[{millions}M {name}] wall {run.wall_s:.2f} s, CPU {run.cpu_s:.1f} s, "
            f"peak {run.peak_rss_bytes / 2**30:.2f} GiB, exit {run.returncode}, load {os.getloadavg()[0]:.1f}",
            file=sys.stderr,
            flush=True,
        )
        if run.returncode != 0:
            break  # killed at the memory limit: a second try would be killed too
    return ba.Summary(name, runs)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--millions", type=int, nargs="+", default=[1, 10, 30], help="sizes, in million records")
    parser.add_argument("--only", nargs="+", choices=CONTENDERS, default=list(CONTENDERS))
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--idle-wait", type=float, default=30.0, help="as bench_analyze.py")
    parser.add_argument("--rss-limit-gib", type=float, default=8.0, help="kill a child whose RSS passes this")
    parser.add_argument(
        "--all-columns-max", type=int, default=30, help="skip gatestats-all-columns above this many million records"
    )
    parser.add_argument("--extrapolate-to", type=int, default=100, help="million records (0: no extrapolation)")
    args = parser.parse_args(argv)
    ba.RSS_LIMIT_BYTES = int(args.rss_limit_gib * 2**30)
    results: dict[tuple[int, str], ba.Summary] = {}
    records: dict[int, int] = {}
    rows = []
    for millions in args.millions:
        path = _data_file(millions)
        records[millions] = pq.read_metadata(path).num_rows
        for name in args.only:
            if name == "gatestats-all-columns" and millions > args.all_columns_max:
                reason = f"every column held, ~270 B/record (above --all-columns-max {args.all_columns_max}M)"
                rows.append(_skipped_row(millions, name, reason))
                continue
            results[millions, name] = summary = _measure(millions, path, name, args)
            rows.append(_row(millions, path, name, summary))
    print(f"RSS limit per child: {args.rss_limit_gib:g} GiB")
    print("| records | contender | wall, best (s) | CPU, median (s) | peak RSS (GiB) | data |")
    print("|---|---|---:|---:|---:|---|")
    print("\n".join(rows + (_extrapolate(results, args.extrapolate_to) if args.extrapolate_to else [])))
    print("\n".join(["", *_fits(results, records)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
