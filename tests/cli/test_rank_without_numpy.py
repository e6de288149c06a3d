"""``gatestats rank`` on the bundled data imports no numpy and prints numpy's path's output, byte for byte.

Issue 28 item 2: with one trial per case and a family-wise correction (Holm, Bonferroni), ``rank`` and ``compare`` of
a family compute in Python numbers while numpy is not loaded (paired/small_family.py). The same command lines run
twice, each time one after another in a fresh interpreter (tests/cli/command_batch.py): first alone, where none
may import numpy, then after a command line that loads numpy (``rank`` with Hochberg's correction, numpy's path),
where each takes numpy's path. Their outputs must be equal byte for byte: terminal, published tables and ``--json``
alike. tests/paired/test_small_family.py compares the two paths on random inputs (and the frame ``--plot`` draws).
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.command_batch import assert_numpy_free_and_numpys_output

ROOT = Path(__file__).resolve().parents[2]
#: 25 systems x 500 cases, one trial each (benchmarks/bench_startup.py ranks the first three submissions).
_SWE = ROOT / "data" / "swe_bench_verified" / "records.jsonl"
_THREE = ("--systems", "20240920_solver,20240924_solver,20241001_nfactorial")
_FIVE = ("--systems", "20240920_solver,20240924_solver,20241001_nfactorial,20241002_lingma-agent_lingma-swe-gpt-72b,"
         "20241016_composio_swekit")  # fmt: skip
#: A command line that loads numpy: Hochberg's correction takes numpy's path.
LOADER = ("rank", _SWE, *_THREE, "--correction", "hochberg", "--json")

COMMAND_LINES: tuple[tuple[str | Path, ...], ...] = (
    ("rank", _SWE, *_THREE),
    ("rank", _SWE, *_THREE, "--json"),
    ("rank", _SWE, *_THREE, "--format", "markdown"),
    ("rank", _SWE, *_THREE, "--format", "csv"),
    ("rank", _SWE, *_FIVE, "--correction", "bonferroni", "--json"),
    ("rank", _SWE, *_FIVE, "--confidence-level", "0.9", "--label", "20241001_nfactorial=nf"),
    ("compare", _SWE, "--all-pairs", *_THREE, "--json"),
    ("compare", _SWE, "--vs-baseline", "20240920_solver", *_FIVE, "--correction", "bonferroni"),
)


def test_rank_on_the_bundled_data_imports_no_numpy_and_prints_numpys_output() -> None:
    assert_numpy_free_and_numpys_output(COMMAND_LINES, LOADER)
