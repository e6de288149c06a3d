"""``gatestats analyze`` on the bundled data imports no numpy and prints numpy's path's output, byte for byte.

Issue 28 item 2: numpy's import is about a third of ``import polars``; a small Wilson analysis computes in
floats while numpy is not loaded (estimators/small.py). The same command lines run twice, each time one after
another in a fresh interpreter (tests/cli/command_batch.py): first alone, where none may import numpy, then
after a command line that loads numpy (``--method clt``, numpy's path), where each takes numpy's path. Their
outputs must be equal byte for byte, terminal, published tables and ``--json`` alike.
tests/estimators/test_small_path.py compares the two paths on random inputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from tests.cli.command_batch import assert_numpy_free_and_numpys_output

ROOT = Path(__file__).resolve().parents[2]
_TAU = ROOT / "data" / "tau_bench" / "raw" / "gpt-4o-airline.json"
_TAU2 = ROOT / "data" / "tau_bench" / "raw" / "tau2-gpt-4.1-telecom-no-user-4trials-5tasks.json"
#: 25 systems x 500 cases, one trial each: 25,000 per-case values at k = 1, under ``small.SMALL_VALUES``.
_SWE = ROOT / "data" / "swe_bench_verified" / "records.jsonl"


def _imported(raw: Path, out: Path, system: str) -> Path:
    done = CliRunner().invoke(app, ["import", "tau-bench", str(raw), "--system", system, "-o", str(out)])
    assert done.exit_code == 0, done.output
    return out


@pytest.fixture
def command_lines(tmp_path: Path) -> list[tuple[str | Path, ...]]:
    tau = _imported(_TAU, tmp_path / "tau.jsonl", "tau-bench/gpt-4o-airline")  # as benchmarks/bench_startup.py
    tau2 = _imported(_TAU2, tmp_path / "tau2.jsonl", "tau2/gpt-4.1-telecom")
    return [
        ("analyze", tau, "--k", "1,2,3,4", "--seed", "0"),
        ("analyze", tau, "--k", "1-4", "--json"),
        ("analyze", tau, "--k", "1-4", "--confidence-level", "0.9", "--json"),
        ("analyze", tau, "--k", "1,3", "--method", "wilson", "--confidence-level", "0.99"),
        ("analyze", tau, "--k", "1-4", "--format", "markdown"),
        ("analyze", tau2, "--k", "1-5", "--json"),  # k = 5: more than the 4 trials, undefined
        ("analyze", tau2, "--k", "1-4", "--format", "csv"),
        ("analyze", _SWE, "--json"),
    ]


def test_analyze_on_the_bundled_data_imports_no_numpy_and_prints_numpys_output(
    command_lines: list[tuple[str | Path, ...]],
) -> None:
    loader = ("analyze", command_lines[0][1], "--method", "clt", "--json")  # numpy's path (clt), refused at 50 cases
    assert_numpy_free_and_numpys_output(command_lines, loader)
