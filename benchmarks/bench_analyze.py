"""Benchmark ``gatestats`` against a bare polars aggregation and a per-case Python loop.

Every contender runs in its own subprocess, so that each gets its own peak resident set size
(``ru_maxrss`` from ``os.wait4`` of that child alone) and its wall time includes interpreter
start-up and imports, as a user would see it. The file is read warm (the page cache holds it
after the first contender). The machine may be shared: before each run the parent waits (up to
``--idle-wait`` seconds) for other processes to go quiet and records how busy the CPUs were;
the targets are judged on the best wall time of the runs (the least disturbed, as ``timeit``
advises), and the median wall time and CPU time are reported beside it.

Contenders
----------
``gatestats``
    ``gatestats.load_records(FILE)`` (read + full pandera validation) then
    ``gatestats.analyze(records, ks=range(1, 11), seed=0)``: pass^k and pass@k per system with
    intervals. The child also reports its phases (import, load+validate, analyze).
``polars`` (baseline a)
    ``scan_parquet(FILE).group_by("system", "case_id").agg(n, c).collect()``: the least work
    that yields per-case counts, no validation, no attempt resolution, no estimates.
``polars-semantics`` (informative, no target)
    The same with gatestats' semantics: only the latest attempt of each trial counts and
    ``infra_error`` is excluded from ``n``; still no validation and no estimates.
``loop`` (baseline b)
    A straightforward per-case Python loop in the style of the reference implementations:
    rows read with pyarrow into Python dicts, grouped per case in dicts, pass@k per case with
    human-eval's ``estimate_pass_at_k`` (Chen et al. 2021, ``1 - prod(1 - k / arange(...))``
    per case) and pass^k per case with τ-bench's ``comb(c, k) / comb(n, k)`` (Yao et al.
    2024), using each case's own ``n``; the mean over cases and a CLT interval with numpy.
    ``--loop-systems N`` restricts it to the first N systems and extrapolates the time of its
    per-record phases linearly in the number of records; start-up and imports count once
    (stated in the output).
``cli``
    ``gatestats analyze FILE --k 1,...,10 --json`` end to end, when the CLI exists.

The estimates of ``loop`` and ``cli`` are checked against those of ``gatestats``.

Usage::

    .venv/bin/python benchmarks/bench_analyze.py                      # all contenders
    .venv/bin/python benchmarks/bench_analyze.py --only gatestats polars --repeat 5
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / "_data"
DEFAULT_DATA = DATA_DIR / "records_10m.parquet"
KS = tuple(range(1, 11))
Z_95 = 1.959963984540054  # standard normal quantile at 0.975

#: Targets of the issue: gatestats within 5x of bare polars, >= 30x faster than the loop.
TARGET_VS_POLARS = 5.0
TARGET_VS_LOOP = 30.0
TARGET_PEAK_BYTES = 4 * 10**9

CONTENDERS = (
    "gatestats",
    "gatestats-all-columns",
    "gatestats-scan",
    "gatestats-before",
    "polars",
    "polars-semantics",
    "loop",
    "cli",
)

#: The parent kills a child whose resident set passes this (the machine is shared).
RSS_LIMIT_BYTES = 8 * 2**30

#: ``{system: {"k/metric": [estimate, ci_low, ci_high]}}``
Estimates = dict[str, dict[str, list[float | None]]]


# --------------------------------------------------------------------------- children


def _child_gatestats(data: Path, args: argparse.Namespace) -> dict[str, Any]:
    start = time.perf_counter()
    import gatestats

    imported = time.perf_counter()
    import polars as pl

    columns = None if args.all_columns else _analysis_columns()
    if args.scan:  # checked in a streaming pass, then analysed from a scan of the file (bounded memory)
        from gatestats.records import scan_records

        records: Any = scan_records(data)
        columns = ()
    elif columns is None:
        records = gatestats.load_records(data)
    else:
        records = gatestats.load_records(data, columns=columns)
    loaded = time.perf_counter()
    analysis = gatestats.analyze(records, ks=KS, seed=0)
    done = time.perf_counter()
    estimates: Estimates = {
        s.system: {f"{e.k}/{e.metric}": [e.estimate, e.ci_low, e.ci_high] for e in s.estimates}
        for s in analysis.systems
    }
    methods = sorted({e.method or "none" for s in analysis.systems for e in s.estimates})
    clt_keys = sorted(
        f"{s.system}|{e.k}/{e.metric}" for s in analysis.systems for e in s.estimates if e.method == "clt"
    )
    source = Path(gatestats.__file__).resolve().parent
    where = "" if source == BENCH_DIR.parent / "src" / "gatestats" else f"; gatestats from {source}"
    return {
        "phases": {
            "import": imported - start,
            "load_validate": loaded - imported,
            "analyze": done - loaded,
        },
        # A scan is counted after the clock stopped (Parquet: from the footer).
        "n_records": records.height if isinstance(records, pl.DataFrame) else records.select(pl.len()).collect().item(),
        "estimates": estimates,
        "clt_keys": clt_keys,
        "note": f"interval methods used: {', '.join(methods)}{where}; "
        + (
            "every column"
            if columns is None
            else "analyze(scan_records(FILE))"
            if args.scan
            else f"columns={len(columns)} of the contract's"
        ),
    }


def _analysis_columns() -> tuple[str, ...] | None:
    """The columns ``analyze`` needs, where this source has ``load_records(columns=...)`` (None before it)."""
    try:
        from gatestats.estimators import ANALYSIS_COLUMNS  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return None
    return tuple(ANALYSIS_COLUMNS)


def _child_polars(data: Path, _: argparse.Namespace) -> dict[str, Any]:
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
    return {
        "phases": {"import": imported - start, "scan_group_by": done - imported},
        "n_cases": counts.height,
        "note": f"{counts.height:,} (system, case) rows",
    }


def _child_polars_semantics(data: Path, _: argparse.Namespace) -> dict[str, Any]:
    start = time.perf_counter()
    import polars as pl

    imported = time.perf_counter()
    trial_key = ("system", "case_id", "case_version", "trial")
    lazy = pl.scan_parquet(data)
    if "case_version" not in lazy.collect_schema().names():
        lazy = lazy.with_columns(case_version=pl.lit(None, dtype=pl.String))
    lazy = lazy.select(*trial_key, "attempt", "outcome")
    # Only trials with a retry need resolving: find the latest attempt of those (few) trials.
    latest = lazy.filter(pl.col("attempt") > 0).group_by(trial_key).agg(pl.col("attempt").max())
    final = (
        lazy.join(latest, on=trial_key, how="left", suffix="_max", nulls_equal=True)
        .filter(pl.col("attempt_max").is_null() | (pl.col("attempt") == pl.col("attempt_max")))
        .group_by("system", "case_id", "case_version")
        .agg(
            (pl.col("outcome") != "infra_error").sum().alias("n"),
            (pl.col("outcome") == "passed").sum().alias("c"),
        )
        .collect()
    )
    done = time.perf_counter()
    return {
        "phases": {"import": imported - start, "scan_resolve_group_by": done - imported},
        "n_cases": final.height,
        "note": f"{final.height:,} (system, case) rows",
    }


def estimate_pass_at_k(num_samples: Sequence[int], num_correct: Sequence[int], k: int) -> Any:
    """human-eval's estimator (Chen et al. 2021): one numpy product per case."""
    import numpy as np

    def estimator(n: int, c: int, k: int) -> float:
        if n - c < k:
            return 1.0
        return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))

    return np.array([estimator(int(n), int(c), k) for n, c in zip(num_samples, num_correct, strict=True)])


def _child_loop(data: Path, args: argparse.Namespace) -> dict[str, Any]:
    start = time.perf_counter()
    from math import comb, sqrt

    import numpy as np
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    imported = time.perf_counter()
    columns = ["system", "case_id", "trial", "attempt", "outcome"]
    available = set(pq.read_schema(data).names)
    has_version = "case_version" in available
    if has_version:
        columns.append("case_version")
    dataset = ds.dataset(data, format="parquet")
    systems = sorted(dataset.to_table(columns=["system"]).column("system").unique().to_pylist())
    chosen = systems if args.loop_systems is None else systems[: args.loop_systems]
    table = dataset.to_table(columns=columns, filter=ds.field("system").isin(chosen))
    read = time.perf_counter()

    # Group trial outcomes per case, as human-eval groups completions per task_id.
    # cases[system][(case_id, case_version)][trial] = (attempt, outcome); latest attempt wins.
    cases: dict[str, dict[tuple[str, str | None], dict[int, tuple[int, str]]]] = {}
    n_rows = 0
    for batch in table.to_batches(max_chunksize=65_536):
        for row in batch.to_pylist():
            n_rows += 1
            per_case = cases.setdefault(row["system"], {})
            trials = per_case.setdefault((row["case_id"], row.get("case_version")), {})
            seen = trials.get(row["trial"])
            if seen is None or row["attempt"] > seen[0]:
                trials[row["trial"]] = (row["attempt"], row["outcome"])
    grouped = time.perf_counter()

    estimates: Estimates = {}
    for system, per_case in sorted(cases.items()):
        totals: list[int] = []
        corrects: list[int] = []
        for trials in per_case.values():
            outcomes = [outcome for _, outcome in trials.values() if outcome != "infra_error"]
            totals.append(len(outcomes))
            corrects.append(sum(outcome == "passed" for outcome in outcomes))
        out: dict[str, list[float | None]] = {}
        for k in KS:
            if min(totals) < k:  # as human-eval: skip k when some case has fewer samples
                out[f"{k}/pass_hat_k"] = [None, None, None]
                out[f"{k}/pass_at_k"] = [None, None, None]
                continue
            # τ-bench: comb(c, k) / comb(n, k) per task (here with the case's own n).
            hat = np.array([comb(c, k) / comb(n, k) for n, c in zip(totals, corrects, strict=True)])
            at = estimate_pass_at_k(totals, corrects, k)
            for metric, values in (("pass_hat_k", hat), ("pass_at_k", at)):
                mean = float(values.mean())
                half = Z_95 * float(values.std(ddof=1)) / sqrt(values.size)
                out[f"{k}/{metric}"] = [mean, max(0.0, mean - half), min(1.0, mean + half)]
        estimates[system] = out
    done = time.perf_counter()
    return {
        "phases": {
            "import": imported - start,
            "read_table": read - imported,
            "rows_to_dicts_and_group": grouped - read,
            "estimate": done - grouped,
        },
        "n_records": n_rows,
        "estimates": estimates,
        "note": f"{len(chosen)} of {len(systems)} systems",
    }


CHILDREN: dict[str, Callable[[Path, argparse.Namespace], dict[str, Any]]] = {
    "gatestats": _child_gatestats,
    "gatestats-all-columns": _child_gatestats,
    "gatestats-scan": _child_gatestats,
    "gatestats-before": _child_gatestats,
    "polars": _child_polars,
    "polars-semantics": _child_polars_semantics,
    "loop": _child_loop,
}


# --------------------------------------------------------------------------- parent


@dataclass(slots=True)
class Run:
    """One subprocess run of one contender."""

    contender: str
    wall_s: float
    cpu_s: float
    peak_rss_bytes: int
    returncode: int
    busy_before: float  # share of the machine's CPU busy (other processes) just before the run
    report: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Summary:
    """All runs of one contender, summarised."""

    contender: str
    runs: list[Run]
    skipped: str | None = None
    extrapolation: float = 1.0  # records in the file / records processed (loop on a subset)

    def _scaled(self, run: Run, seconds: float) -> float:
        """``seconds`` with the per-record phases (all but ``import``) scaled to the full file."""
        work = sum(t for phase, t in run.report.get("phases", {}).items() if phase != "import")
        return seconds + (self.extrapolation - 1.0) * work

    @property
    def ok(self) -> list[Run]:
        """The runs that succeeded (exit 0); only these are summarised."""
        return [r for r in self.runs if r.returncode == 0]

    @property
    def best_wall_s(self) -> float:
        """Shortest wall time over runs (the least disturbed), extrapolated for a subset loop."""
        return min(self._scaled(r, r.wall_s) for r in self.ok)

    @property
    def median_wall_s(self) -> float:
        """Median wall time over runs, extrapolated for a subset loop."""
        return statistics.median(self._scaled(r, r.wall_s) for r in self.ok)

    @property
    def median_cpu_s(self) -> float:
        """Median user + system CPU time over runs, extrapolated for a subset loop."""
        return statistics.median(self._scaled(r, r.cpu_s) for r in self.ok)

    @property
    def peak_rss_bytes(self) -> int:
        """Largest peak resident set size over runs (measured, never extrapolated)."""
        return max(r.peak_rss_bytes for r in self.ok)


def _cpu_busy_share(interval: float = 1.0) -> float:
    """Share of all CPUs busy over ``interval`` seconds, from ``/proc/stat``."""

    def sample() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + fields[4]  # idle + iowait
        return sum(fields), idle

    total0, idle0 = sample()
    time.sleep(interval)
    total1, idle1 = sample()
    total = max(total1 - total0, 1)
    return 1.0 - (idle1 - idle0) / total


def _wait_until_idle(*, max_wait: float, threshold: float = 0.15) -> float:
    """Wait (at most ``max_wait`` s) until other processes use under ``threshold`` of the CPUs."""
    deadline = time.monotonic() + max_wait
    busy = _cpu_busy_share()
    while busy > threshold and time.monotonic() < deadline:
        print(f"  machine {busy:.0%} busy; waiting for it to settle", file=sys.stderr, flush=True)
        time.sleep(5)
        busy = _cpu_busy_share()
    return busy


def _rss_bytes(pid: int) -> int:
    """Resident set size of ``pid`` now (0 when it cannot be read)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _wait_within_memory(pid: int) -> tuple[int, Any]:
    """Reap ``pid`` (status, rusage); kill it if its resident set passes :data:`RSS_LIMIT_BYTES`."""
    while True:
        reaped, status, usage = os.wait4(pid, os.WNOHANG)
        if reaped == pid:
            return status, usage
        if _rss_bytes(pid) > RSS_LIMIT_BYTES:
            print(f"  child {pid} passed {RSS_LIMIT_BYTES / 2**30:.0f} GiB resident: killed", file=sys.stderr)
            os.kill(pid, 9)
        time.sleep(0.05)


def _run_child(
    contender: str,
    command: list[str],
    *,
    args: argparse.Namespace,
    stdout: Path | None = None,
    env: dict[str, str] | None = None,
) -> Run:
    """Run ``command`` as a child; measure its wall time, CPU time and its own peak RSS."""
    busy = _wait_until_idle(max_wait=args.idle_wait) if args.idle_wait > 0 else float("nan")
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(stdout.open("wb")) if stdout is not None else subprocess.DEVNULL
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, env=env)
        # wait4 reaps this child alone and returns its own rusage (ru_maxrss in KiB on Linux).
        status, usage = _wait_within_memory(process.pid)
        wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return Run(
        contender=contender,
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_bytes=usage.ru_maxrss * 1024,
        returncode=process.returncode,
        busy_before=busy,
    )


def _scratch_dir() -> tempfile.TemporaryDirectory[str]:
    """A temporary directory under ``_data/`` (``/tmp`` may be cleaned by others mid-run)."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(prefix=".run-", dir=DATA_DIR)


def _run_python_contender(name: str, args: argparse.Namespace) -> Run:
    with _scratch_dir() as tmp:
        report_path = Path(tmp) / "report.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--child", name]
        command += ["--data", str(args.data), "--report", str(report_path)]
        if args.loop_systems is not None:
            command += ["--loop-systems", str(args.loop_systems)]
        if name == "gatestats-all-columns":
            command.append("--all-columns")
        if name == "gatestats-scan":
            command.append("--scan")
        env = None
        if name == "gatestats-before":
            source = args.before_src.resolve()
            env = {**os.environ, "PYTHONPATH": f"{source / 'src'}{os.pathsep}{source / 'runner'}"}
        run = _run_child(name, command, args=args, env=env)
        if report_path.exists():
            run.report = json.loads(report_path.read_text())
    return run


def _cli_command(args: argparse.Namespace) -> list[str] | str:
    """The CLI command line, or the reason it cannot run."""
    exe = Path(sys.executable).with_name("gatestats")
    if not exe.exists():
        found = shutil.which("gatestats")
        if found is None:
            return "no gatestats executable next to the interpreter or on PATH"
        exe = Path(found)
    probe = subprocess.run([str(exe), "analyze", "--help"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        lines = (probe.stderr or probe.stdout).strip().splitlines()
        return f"`gatestats analyze --help` failed: {lines[-1] if lines else probe.returncode}"
    ks = ",".join(map(str, KS))
    return [str(exe), "analyze", str(args.data), "--k", ks, "--json"]


def _run_cli(args: argparse.Namespace, command: list[str]) -> Run:
    with _scratch_dir() as tmp:
        out = Path(tmp) / "analysis.json"
        run = _run_child("cli", command, args=args, stdout=out)
        try:
            document = json.loads(out.read_text())
            run.report["estimates"] = {
                s["system"]: {
                    f"{k}/{m}": [v[m]["estimate"], v[m]["ci_low"], v[m]["ci_high"]]
                    for k, v in s["k"].items()
                    for m in ("pass_hat_k", "pass_at_k")
                }
                for s in document["systems"]
            }
        except (OSError, ValueError, KeyError, TypeError) as exc:
            run.report["note"] = f"could not read the --json output for checking ({exc!r})"
    return run


def _compare(
    reference: Estimates,
    other: Estimates,
    *,
    tolerance: float,
    bounds_for: set[str] | None = None,
) -> tuple[int, float, list[str]]:
    """Number of compared values, the largest absolute difference and any mismatches.

    Estimates are always compared; interval bounds only for the ``system|k/metric`` keys in
    ``bounds_for`` (all when ``None``).
    """
    compared, worst, problems = 0, 0.0, []
    for system, values in other.items():
        expected = reference.get(system)
        if expected is None:
            problems.append(f"system {system!r} missing from gatestats")
            continue
        for key, triple in values.items():
            width = 3 if bounds_for is None or f"{system}|{key}" in bounds_for else 1
            pairs = zip(triple[:width], expected.get(key, [None] * 3)[:width], strict=True)
            for got, want in pairs:
                if got is None or want is None:
                    if got is not want:
                        problems.append(f"{system} {key}: {got!r} vs {want!r}")
                    continue
                compared += 1
                worst = max(worst, abs(got - want))
                if abs(got - want) > tolerance:
                    problems.append(f"{system} {key}: {got!r} vs gatestats {want!r}")
    return compared, worst, problems


def _git(*command: str) -> str:
    """Output of a read-only git command (empty when git is unavailable)."""
    try:
        done = subprocess.run(["git", *command], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return done.stdout.strip()


def _machine() -> dict[str, str]:
    import numpy as np
    import polars as pl
    import pyarrow as pa

    meminfo = Path("/proc/meminfo").read_text().splitlines()
    mem_kib = next((int(line.split()[1]) for line in meminfo if line.startswith("MemTotal:")), 0)
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line), "")
    head = _git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--", "src", "runner")
    return {
        "revision": head + (" + uncommitted changes in src/ or runner/" if dirty else ""),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "memory": f"{mem_kib / 2**20:.1f} GiB",
        "os": platform.platform(),
        "python": platform.python_version(),
        "polars": pl.__version__,
        "pyarrow": pa.__version__,
        "numpy": np.__version__,
        "polars_threads": str(pl.thread_pool_size()),
    }


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB"


def _contender_row(name: str, s: Summary) -> str:
    if s.skipped:
        return f"| {name} | 0 | – | – | – | – | – | skipped: {s.skipped} |"
    if not s.ok:
        codes = ", ".join(str(r.returncode) for r in s.runs)
        return f"| {name} | 0 | – | – | – | – | – | every run FAILED (exit {codes}) |"
    phases: dict[str, list[float]] = {}
    for run in s.ok:
        for phase, seconds in run.report.get("phases", {}).items():
            phases.setdefault(phase, []).append(seconds)
    phase_text = ", ".join(f"{p} {min(v):.2f}" for p, v in phases.items())
    note = s.ok[0].report.get("note", "")
    best = f"{s.best_wall_s:.2f} s"
    if s.extrapolation != 1.0:
        measured = min(r.wall_s for r in s.ok)
        best += f" (extrapolated from {measured:.2f} s on 1/{s.extrapolation:.2f} of the records)"
    busy = max(r.busy_before for r in s.ok)
    failed = [r.returncode for r in s.runs if r.returncode != 0]
    if failed:
        note = f"{len(failed)} run(s) FAILED (exit {failed[0]}), not counted; {note}"
    busy_text = "" if math.isnan(busy) else f"machine ≤ {busy:.0%} busy before"
    note = "; ".join(part for part in (note, busy_text) if part)
    return (
        f"| {name} | {len(s.ok)} | {best} | {s.median_wall_s:.2f} s | {s.median_cpu_s:.1f} s | "
        f"{_gib(s.peak_rss_bytes)} | {phase_text} | {note} |"
    )


def _command_line() -> str:
    """How this benchmark was invoked, including a ``PYTHONPATH`` that swaps the source."""
    words = [".venv/bin/python", "benchmarks/bench_analyze.py", *sys.argv[1:]]
    if os.environ.get("PYTHONPATH"):
        words.insert(0, f"PYTHONPATH={os.environ['PYTHONPATH']}")
    return " ".join(words)


def _markdown(
    summaries: dict[str, Summary],
    machine: dict[str, str],
    args: argparse.Namespace,
    n_records: int | None,
    checks: list[str],
) -> str:
    data: Path = args.data
    lines = [
        f"- date: {machine['date']}; gatestats source: {machine['revision']}",
        f"- machine: {machine['nproc']} CPUs ({machine['cpu']}), {machine['memory']} RAM, {machine['os']}",
        f"- python {machine['python']}, polars {machine['polars']} "
        f"({machine['polars_threads']} threads), pyarrow {machine['pyarrow']}, "
        f"numpy {machine['numpy']}",
        f"- data: `{data.name}`, {data.stat().st_size / 2**20:.1f} MiB"
        + (f", {n_records:,} records" if n_records else ""),
        f"- command: `{_command_line()}`",
        "",
        "| contender | runs | wall, best | wall, median | CPU, median | peak RSS | phases, best (s) | note |",
        "|---|---:|---:|---:|---:|---:|---|---|",
        *(_contender_row(name, s) for name, s in summaries.items()),
        "",
        *targets_text(summaries),
        "",
        *checks,
    ]
    return "\n".join(lines)


def targets_text(summaries: dict[str, Summary]) -> list[str]:
    """The three targets of the issue, each with its measured ratio and verdict, for each gatestats contender."""
    out: list[str] = []
    for name in ("gatestats", "gatestats-all-columns", "gatestats-scan", "gatestats-before"):
        gs = summaries.get(name)
        if gs is not None and not gs.skipped and gs.ok:
            out += [f"{name}:", "", *_targets_of(gs, summaries), ""]
    return out or ["(gatestats did not run: no targets evaluated)"]


def _targets_of(gs: Summary, summaries: dict[str, Summary]) -> list[str]:
    out = [
        "| target | measured (best wall) | measured (median wall) | met |",
        "|---|---:|---:|:---:|",
    ]
    base = summaries.get("polars")
    if base is not None and not base.skipped and base.ok:
        best = gs.best_wall_s / base.best_wall_s
        median = gs.median_wall_s / base.median_wall_s
        verdict = "yes" if best <= TARGET_VS_POLARS else "**no**"
        label = f"within {TARGET_VS_POLARS:g}× of bare polars"
        out.append(f"| {label} | {best:.1f}× slower | {median:.1f}× slower | {verdict} |")
    loop = summaries.get("loop")
    if loop is not None and not loop.skipped and loop.ok:
        best = loop.best_wall_s / gs.best_wall_s
        median = loop.median_wall_s / gs.median_wall_s
        verdict = "yes" if best >= TARGET_VS_LOOP else "**no**"
        label = f"≥ {TARGET_VS_LOOP:g}× faster than the loop"
        out.append(f"| {label} | {best:.1f}× faster | {median:.1f}× faster | {verdict} |")
    peak = gs.peak_rss_bytes
    verdict = "yes" if peak <= TARGET_PEAK_BYTES else "**no**"
    shown = f"{peak / 1e9:.2f} GB ({_gib(peak)}), largest of {len(gs.ok)} runs"
    out.append(f"| peak memory ≤ 4 GB | {shown} | | {verdict} |")
    return out


def run_benchmark(args: argparse.Namespace) -> int:
    """Run the chosen contenders; print and save a markdown report."""
    if not args.data.is_file():
        print(f"{args.data}: no such file; run benchmarks/make_synthetic.py first", file=sys.stderr)
        return 2
    summaries: dict[str, Summary] = {}
    for name in args.only:
        repeat = args.loop_repeat if name == "loop" else args.repeat
        if name == "gatestats-before" and args.before_src is None:
            summaries[name] = Summary(name, [], skipped="no --before-src")
            continue
        cli: list[str] | None = None
        if name == "cli":
            command = _cli_command(args)
            if isinstance(command, str):
                summaries[name] = Summary(name, [], skipped=command)
                print(f"[cli] skipped: {command}", file=sys.stderr)
                continue
            cli = command
        runs = []
        for i in range(repeat):
            run = _run_cli(args, cli) if cli is not None else _run_python_contender(name, args)
            runs.append(run)
            print(
                f"[{name} {i + 1}/{repeat}] wall {run.wall_s:.2f} s, CPU {run.cpu_s:.1f} s, "
                f"peak RSS {_gib(run.peak_rss_bytes)}, exit {run.returncode}, "
                f"busy before {run.busy_before:.0%}, phases {run.report.get('phases', {})}",
                file=sys.stderr,
                flush=True,
            )
        summaries[name] = Summary(name, runs)

    gs = summaries.get("gatestats")
    n_records: int | None = gs.ok[0].report.get("n_records") if gs and gs.ok else None
    loop = summaries.get("loop")
    if loop is not None and loop.ok and n_records:
        done = loop.ok[0].report.get("n_records") or n_records
        loop.extrapolation = n_records / done

    checks: list[str] = []
    reference: Estimates | None = gs.ok[0].report.get("estimates") if gs and gs.ok else None
    for name in ("loop", "cli", "gatestats-all-columns", "gatestats-scan", "gatestats-before"):
        s = summaries.get(name)
        other = s.ok[0].report.get("estimates") if s and s.ok else None
        if reference is None or other is None:
            continue
        # The loop computes CLT intervals: its bounds are comparable where gatestats chose CLT.
        bounds_for = set(gs.ok[0].report.get("clt_keys", [])) if name == "loop" and gs else None
        # Another gatestats source must give the very same numbers (tolerance 0).
        tolerance = 0.0 if name.startswith("gatestats") else args.tolerance
        compared, worst, problems = _compare(reference, other, tolerance=tolerance, bounds_for=bounds_for)
        verdict = "agree" if not problems else f"DISAGREE in {len(problems)} values"
        what = "estimates and interval bounds"
        if bounds_for is not None:
            what = f"estimates, and interval bounds of the {len(bounds_for)} CLT intervals,"
        checks.append(
            f"- {name} vs gatestats: {compared} {what} compared, largest "
            f"|difference| {worst:.1e} (tolerance {tolerance:g}): {verdict}"
        )
        checks += [f"  - {p}" for p in problems[:10]]

    report = _markdown(summaries, _machine(), args, n_records, checks)
    print(report)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    (DATA_DIR / "last_run.md").write_text(report + "\n")
    raw = {name: asdict(s) for name, s in summaries.items()}
    for item in raw.values():
        for run in item["runs"]:
            run["report"].pop("estimates", None)
    (DATA_DIR / "last_run.json").write_text(json.dumps(raw, indent=2) + "\n")
    failed = any(r.returncode != 0 for s in summaries.values() for r in s.runs)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (parent, or one contender with ``--child``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="Parquet record file")
    parser.add_argument("--only", nargs="+", choices=CONTENDERS, default=list(CONTENDERS), help="contenders to run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per contender (not loop)")
    parser.add_argument("--loop-repeat", type=int, default=1, help="runs of the loop")
    parser.add_argument(
        "--loop-systems",
        type=int,
        default=None,
        help="run the loop on the first N systems only and extrapolate its time linearly",
    )
    parser.add_argument(
        "--idle-wait",
        type=float,
        default=120.0,
        help="before each run, wait up to this many seconds for other processes to go quiet (0: do not wait or sample)",
    )
    parser.add_argument("--tolerance", type=float, default=1e-9, help="largest accepted |difference| of estimates")
    parser.add_argument(
        "--before-src",
        type=Path,
        default=None,
        help="a copy of the repository (with src/ and runner/) to run as the gatestats-before contender, "
        "e.g. from `git archive REV src runner | tar -x -C DIR`",
    )
    parser.add_argument("--all-columns", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--scan", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.repeat, args.loop_repeat) < 1:
        got = f"got {args.repeat}, {args.loop_repeat}"
        parser.error(f"--repeat and --loop-repeat must be >= 1 ({got})")
    if args.child is None:
        return run_benchmark(args)
    result = CHILDREN[args.child](args.data, args)
    if args.report is not None:
        args.report.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
