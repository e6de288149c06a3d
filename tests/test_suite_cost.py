"""benchmarks/suite_cost.py: a test's CPU in its worker and in the processes it waits for, and the report's sums."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.simulations import BENCHMARKS


@pytest.fixture(scope="module")
def suite_cost() -> ModuleType:
    """The script as a module, imported from benchmarks/ as pytest's ``-p suite_cost`` imports it."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))  # as tests.simulations.load_simulation does for its scripts
    return importlib.import_module("suite_cost")


def _write_rows(folder: Path, rows: list[dict[str, object]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rows-gw0-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_sums_by_file_and_the_spread(suite_cost: ModuleType, tmp_path: Path) -> None:
    _write_rows(
        tmp_path,
        [
            {"nodeid": "tests/a.py::t1", "cpu": 0.5, "children": 0.25, "wall": 1.0, "slow": True},
            {"nodeid": "tests/a.py::t2[x::y]", "cpu": 0.01, "children": 0.0, "wall": 0.02, "slow": False},
            {"nodeid": "tests/b.py::t3[a|b]", "cpu": 0.1, "children": 0.14, "wall": 0.3, "slow": False},
        ],
    )
    rows = suite_cost.read_rows(tmp_path)
    files = suite_cost.by_files(rows)
    a, b = files["tests/a.py"], files["tests/b.py"]
    assert (a.total, a.cpu, a.children, a.tests) == pytest.approx((0.76, 0.51, 0.25, 2))
    assert (b.total, b.cpu, b.children, b.tests) == pytest.approx((0.24, 0.1, 0.14, 1))
    spread = suite_cost.spread(rows)
    assert (spread.tests, spread.heavy_tests, spread.files) == (3, 2, 2)  # 0.75 and 0.24 are >= 0.2
    assert spread.heavy_seconds == pytest.approx(0.99)
    assert spread.top_files_share == pytest.approx({1: 0.76})  # only the shares below the number of files
    outside = suite_cost.Outside(user=2.0, sys=0.5, wall=3.0, exit_code=0, load_before=1.0, load_after=1.5)
    text = suite_cost.report(rows, outside=outside, top=1)
    assert "**2.5 CPU-s**" in text
    assert "carried by no test (start-up, collection, coordination) 1.5" in text  # 2.5 - 0.61 - 0.39
    assert "`slow` tests: 1, 0.8 CPU-s" in text
    assert "| 0.76 | 0.51 | 0.25 | 2 | tests/a.py |" in text
    assert "tests/b.py |" not in text  # --top 1
    # A parameter's "|" is escaped, so the test's row keeps its three cells.
    (row,) = [line for line in suite_cost.report(rows, outside=outside, top=3).splitlines() if "::t3" in line]
    assert row == "| 0.24 | 0.30 | tests/b.py::t3[a\\|b] |"


def test_a_malformed_row_is_named_by_file_and_line(suite_cost: ModuleType, tmp_path: Path) -> None:
    good = {"nodeid": "tests/a.py::t", "cpu": 0.1, "children": 0.0, "wall": 0.1, "slow": False}
    (tmp_path / "rows-main-7.jsonl").write_text(json.dumps(good) + '\n{"nodeid": "x", "cpu": 1}\n', encoding="utf-8")
    with pytest.raises(SystemExit, match=r"rows-main-7\.jsonl:2: not a row of suite_cost's plugin"):
        suite_cost.read_rows(tmp_path)


def test_the_plugin_counts_a_child_s_cpu_apart_from_the_test_s_own(tmp_path: Path) -> None:
    """A test that waits for a child busy for ~0.3 CPU-s: the child's CPU is in ``children``, not in ``cpu``."""
    tests = tmp_path / "case"
    tests.mkdir()
    busy = "import time\\nend = time.process_time() + 0.3\\nwhile time.process_time() < end: pass"
    (tests / "test_child.py").write_text(
        "import subprocess, sys\n"
        "def test_waits_for_a_busy_child():\n"
        f"    subprocess.run([sys.executable, '-c', '{busy}'], check=True)\n"
        "def test_idle():\n"
        "    pass\n",
        encoding="utf-8",
    )
    rows_dir = tmp_path / "rows"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}  # the child is no worker
    env |= {"GATESTATS_SUITE_COST_DIR": str(rows_dir), "PYTHONPATH": str(BENCHMARKS)}
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "suite_cost", "-p", "no:cacheprovider", "-o", "addopts=", "."],
        cwd=tests,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    (rows_file,) = rows_dir.glob("rows-main-*.jsonl")
    rows = {r["nodeid"]: r for r in map(json.loads, rows_file.read_text(encoding="utf-8").splitlines())}
    busy_row, idle_row = rows["test_child.py::test_waits_for_a_busy_child"], rows["test_child.py::test_idle"]
    assert busy_row["children"] >= 0.25
    assert busy_row["cpu"] < 0.25  # the child's loop is not the worker's
    assert idle_row["children"] == 0.0
    assert busy_row["slow"] is False
