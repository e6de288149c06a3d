"""``gatestats compare`` on the bundled data imports no numpy and prints numpy's path's output, byte for byte.

Issue 28 item 2: with one trial per case, ``compare`` of one pair computes in Python numbers while numpy is
not loaded (paired/small.py). The same command lines run twice, each time one after another in a fresh
interpreter (tests/cli/command_batch.py): first alone, where none may import numpy, then after a command line
that loads numpy (``rank`` with Hochberg's correction), where each takes numpy's path. Their outputs must be equal byte for
byte: terminal, published tables and ``--json`` alike. tests/paired/test_small_compare.py compares the two paths
on random inputs.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.command_batch import assert_numpy_free_and_numpys_output

ROOT = Path(__file__).resolve().parents[2]
#: 25 systems x 500 cases, one trial each (benchmarks/bench_startup.py compares the first two submissions).
_SWE = ROOT / "data" / "swe_bench_verified" / "records.jsonl"
_PAIR = ("--baseline", "20240920_solver", "--candidate", "20240924_solver")
_OTHER = ("--baseline", "20241001_nfactorial", "--candidate", "20240920_solver")

COMMAND_LINES: tuple[tuple[str | Path, ...], ...] = (
    ("compare", _SWE, *_PAIR),
    ("compare", _SWE, *_PAIR, "--json"),
    ("compare", _SWE, *_PAIR, "--format", "markdown"),
    ("compare", _SWE, *_PAIR, "--format", "csv"),
    ("compare", _SWE, *_OTHER, "--confidence-level", "0.9", "--json"),
    ("compare", _SWE, *_OTHER, "--test", "exact", "--interval", "newcombe", "--alternative", "greater"),
    ("compare", _SWE, *_OTHER, "--interval", "scas", "--show", "3", "--label", "20241001_nfactorial=nf"),
)


def test_compare_on_the_bundled_data_imports_no_numpy_and_prints_numpys_output() -> None:
    # numpy's arrays: Hochberg's correction (rank's Holm and Bonferroni compute without numpy since session 49)
    loader = ("rank", _SWE, "--systems", "20240920_solver,20240924_solver", "--correction", "hochberg", "--json")
    assert_numpy_free_and_numpys_output(COMMAND_LINES, loader)
