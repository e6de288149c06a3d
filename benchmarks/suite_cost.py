"""Where the test suite's CPU time goes: per test, in its own process and in the processes it starts.

    .venv/bin/python benchmarks/suite_cost.py [--top 30] [--workers 2] [-- PYTEST ARGS...]

Runs ``python -m pytest -n WORKERS`` (the README's suite, or what ``PYTEST ARGS`` select, e.g.
``-- -m "not slow" --hypothesis-profile gatestats-fast`` for the inner loop) with this file loaded as a pytest
plugin. For every test the plugin records, around the whole test (set-up, call, tear-down):

- ``cpu``: the CPU time of the test's worker process (``time.process_time``: every thread, so polars'
  and BLAS' threads too), user + system;
- ``children``: the CPU time of the processes the test started and waited for (``os.times``' children
  fields: a command line under test, a notebook kernel, a sandbox, and what they in turn waited for). A
  process the test started but never waited for is not counted;
- ``wall``, and whether the test is marked ``slow``.

The whole run is measured from outside too (``os.wait4`` on pytest: every worker and child), so what no test
carries (start-up, collection, the workers' coordination) is the difference. The report: the totals, the
share of ``slow`` tests, how the CPU spreads over tests (how many tests carry how much) and the ``--top``
test files and tests. It goes to standard output (Markdown; pytest's own output goes to standard error),
every row to ``benchmarks/_data/suite_cost_last_run.json``. The machine load (``os.getloadavg``) is recorded
before and after: on a shared machine the same suite moves by a few percent from run to run, so compare runs
made one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Generator, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "_data"
#: Where the plugin writes its rows (one JSON Lines file per process); set by :func:`main` for pytest.
ROWS_ENV = "GATESTATS_SUITE_COST_DIR"
#: The tests at or above this many CPU seconds (with their children) are counted apart in the spread.
HEAVY_S = 0.2


@dataclass(frozen=True, slots=True)
class TestCost:
    """One test's cost: its worker's CPU seconds, its children's CPU seconds, its wall seconds."""

    nodeid: str
    cpu: float
    children: float
    wall: float
    slow: bool

    @property
    def total(self) -> float:
        """CPU seconds of the test in its worker and in the processes it waited for."""
        return self.cpu + self.children

    @property
    def file(self) -> str:
        """The test's file (its node id up to the first ``::``)."""
        return self.nodeid.split("::", 1)[0]


# ----------------------------------------------------------------------------------------------- the plugin


def _rows_path() -> Path:
    """This process' rows file (JSON Lines, appended to a row at a time)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return Path(os.environ[ROWS_ENV]) / f"rows-{worker}-{os.getpid()}.jsonl"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """Around every test (set-up, call, tear-down): its worker's CPU, its children's CPU, its wall time."""
    if ROWS_ENV not in os.environ:
        yield
        return
    before, cpu0, wall0 = os.times(), time.process_time(), time.perf_counter()
    yield
    after, cpu1, wall1 = os.times(), time.process_time(), time.perf_counter()
    children = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    row = {
        "nodeid": item.nodeid,
        "cpu": cpu1 - cpu0,
        "children": children,
        "wall": wall1 - wall0,
        "slow": item.get_closest_marker("slow") is not None,
    }
    path = _rows_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as rows:  # opened per row: ~0.05 ms a test, outside the measured span
        rows.write(json.dumps(row) + "\n")


# ----------------------------------------------------------------------------------------------- the report


def read_rows(folder: Path) -> list[TestCost]:
    """Every row the plugin wrote under ``folder``."""
    rows: list[TestCost] = []
    for path in sorted(folder.glob("rows-*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            try:
                raw = json.loads(line)
                rows.append(
                    TestCost(
                        nodeid=str(raw["nodeid"]),
                        cpu=float(raw["cpu"]),
                        children=float(raw["children"]),
                        wall=float(raw["wall"]),
                        slow=bool(raw["slow"]),
                    )
                )
            except (ValueError, KeyError, TypeError) as error:
                msg = f"{path}:{number}: not a row of suite_cost's plugin ({error})"
                raise SystemExit(msg) from error
    return rows


@dataclass(frozen=True, slots=True)
class Spread:
    """How the tests' CPU is spread: the tests at or above :data:`HEAVY_S`, and the largest files' share."""

    tests: int
    heavy_tests: int
    heavy_seconds: float
    files: int
    top_files_share: dict[int, float]


def spread(rows: Sequence[TestCost], tops: Iterable[int] = (1, 10, 30, 100)) -> Spread:
    """The spread of ``rows``' CPU over tests and files (shares of the sum over every test).

    ``top_files_share[n]``: the share of the ``n`` costliest files, for each ``n`` of ``tops`` below the number
    of files (and always ``1``).
    """
    total = sum(r.total for r in rows)
    by_file = sorted((f.total for f in by_files(rows).values()), reverse=True)
    heavy = [r for r in rows if r.total >= HEAVY_S]
    shown = [n for n in tops if n == 1 or n < len(by_file)]
    shares = {n: (sum(by_file[:n]) / total if total else float("nan")) for n in shown}
    return Spread(
        tests=len(rows),
        heavy_tests=len(heavy),
        heavy_seconds=sum(r.total for r in heavy),
        files=len(by_file),
        top_files_share=shares,
    )


@dataclass(frozen=True, slots=True)
class FileCost:
    """One test file's sums: CPU with children, the workers' CPU, the children's CPU, and how many tests."""

    total: float
    cpu: float
    children: float
    tests: int


def by_files(rows: Iterable[TestCost]) -> dict[str, FileCost]:
    """Per test file, its tests' sums."""
    grouped: dict[str, list[TestCost]] = defaultdict(list)
    for r in rows:
        grouped[r.file].append(r)
    return {
        f: FileCost(
            total=sum(r.total for r in rs),
            cpu=sum(r.cpu for r in rs),
            children=sum(r.children for r in rs),
            tests=len(rs),
        )
        for f, rs in grouped.items()
    }


@dataclass(frozen=True, slots=True)
class Outside:
    """pytest's whole run measured from outside (``os.wait4``): every worker and child, and the load around it."""

    user: float
    sys: float
    wall: float
    exit_code: int
    load_before: float
    load_after: float


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell: a ``|`` in a test id (a parameter) would split the row."""
    return text.replace("|", "\\|")


def report(rows: Sequence[TestCost], *, outside: Outside, top: int) -> str:
    """The Markdown report of one run: totals, slow share, spread, the ``top`` files and tests."""
    cpu, children = sum(r.cpu for r in rows), sum(r.children for r in rows)
    slow = [r for r in rows if r.slow]
    whole = outside.user + outside.sys
    s = spread(rows)
    lines = [
        f"pytest from outside: {outside.user:.1f} user + {outside.sys:.1f} sys = **{whole:.1f} CPU-s**, "
        f"{outside.wall:.1f} s wall (load {outside.load_before:.2f} → {outside.load_after:.2f})",
        f"tests: {len(rows):,}; in their workers {cpu:.1f} CPU-s, in the processes they waited for "
        f"{children:.1f} CPU-s; carried by no test (start-up, collection, coordination) {whole - cpu - children:.1f}",
        f"`slow` tests: {len(slow):,}, {sum(r.total for r in slow):.1f} CPU-s",
        f"spread: {s.heavy_tests:,} tests of ≥ {HEAVY_S} CPU-s carry {s.heavy_seconds:.1f}; of {s.files} files the "
        + ", ".join(f"largest {n} carry {share:.0%}" for n, share in s.top_files_share.items()),
        "",
        "| CPU-s (with children) | in the worker | children | tests | file |",
        "|---:|---:|---:|---:|---|",
    ]
    files = sorted(by_files(rows).items(), key=lambda kv: -kv[1].total)[:top]
    lines += [f"| {c.total:.2f} | {c.cpu:.2f} | {c.children:.2f} | {c.tests} | {_cell(f)} |" for f, c in files]
    lines += ["", "| CPU-s (with children) | wall s | test |", "|---:|---:|---|"]
    costliest = sorted(rows, key=lambda r: -r.total)[:top]
    lines += [f"| {r.total:.2f} | {r.wall:.2f} | {_cell(r.nodeid)} |" for r in costliest]
    return "\n".join(lines)


def run(pytest_args: Sequence[str], *, workers: int, folder: Path) -> Outside:
    """Run pytest with the plugin, rows to ``folder``; its CPU and wall time from outside."""
    env = dict(os.environ)
    env[ROWS_ENV] = str(folder)
    here = str(Path(__file__).resolve().parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH", "")) if p)
    argv = [sys.executable, "-m", "pytest", "-q", "-n", str(workers), "-p", "suite_cost", *pytest_args]
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=sys.stderr)  # the report alone on stdout
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    return Outside(
        user=usage.ru_utime,
        sys=usage.ru_stime,
        wall=wall,
        exit_code=os.waitstatus_to_exitcode(status),
        load_before=load_before,
        load_after=os.getloadavg()[0],
    )


def main(argv: Sequence[str] | None = None) -> int:
    # Here, not at the top: the plugin the test workers load imports nothing of gatestats.
    from gatestats.io.files import write_atomic

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--top", type=int, default=30, help="files and tests listed (default 30)")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (default 2, as dev.py)")
    parser.add_argument("--json", type=Path, default=DATA / "suite_cost_last_run.json", help="where every row goes")
    parser.add_argument("pytest_args", nargs="*", help="after --: what pytest runs (default: the whole suite)")
    args = parser.parse_args(argv)
    if args.json.exists() and not args.json.is_file():  # said before the suite's minutes, not after
        parser.error(f"--json {args.json}: not a file")
    with tempfile.TemporaryDirectory(prefix="suite-cost-") as folder:
        outside = run(args.pytest_args, workers=args.workers, folder=Path(folder))
        rows = read_rows(Path(folder))
    if not rows:
        print("no test ran: nothing to report", file=sys.stderr)
        return 1
    print(report(rows, outside=outside, top=args.top))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    payload = {"outside": asdict(outside), "pytest_args": args.pytest_args, "rows": [asdict(r) for r in rows]}
    write_atomic(args.json, json.dumps(payload, indent=1).encode())
    print(f"\nrows: {args.json}")
    return outside.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
