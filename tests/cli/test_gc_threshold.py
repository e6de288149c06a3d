"""The entry point runs a command with fewer garbage collections, and gives its caller its own back (issue 28 item 2).

A command's start allocates some 50,000-100,000 objects that live to its end; at Python's threshold of 700
the collector traversed them ~135 times during ``gatestats compare`` (one full collection), 20-35 ms of CPU
for no garbage. :func:`gatestats.cli.main` raises the young generation's threshold to
:data:`~gatestats.cli.GC_YOUNG_THRESHOLD` while the command runs, then restores the caller's thresholds
without collecting at once what the command left (it is moved to the oldest generation).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest

from gatestats import cli
from tests.cli.command_batch import run_batch

ROOT = Path(__file__).resolve().parents[2]
SWE = ROOT / "data" / "swe_bench_verified" / "records.jsonl"


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*saved)


@pytest.mark.parametrize("ends", ["returns", "exits", "raises"])
def test_the_command_runs_at_the_raised_threshold_and_the_callers_come_back(
    thresholds: tuple[int, int, int], ends: str
) -> None:
    seen: list[tuple[int, int, int]] = []

    def command() -> None:
        seen.append(gc.get_threshold())
        if ends == "exits":
            raise SystemExit(2)
        if ends == "raises":
            raise RuntimeError(ends)

    with mock.patch.object(cli, "app", command):
        if ends == "returns":
            cli.main()
        else:
            with pytest.raises((SystemExit, RuntimeError)):
                cli.main()
    assert seen == [(cli.GC_YOUNG_THRESHOLD, *thresholds[1:])]
    assert gc.get_threshold() == thresholds
    assert gc.get_freeze_count() == 0  # nothing the command left is kept from the collector


def test_a_higher_threshold_of_the_callers_is_kept(thresholds: tuple[int, int, int]) -> None:
    gc.set_threshold(10 * cli.GC_YOUNG_THRESHOLD, 10, 10)
    seen: list[tuple[int, int, int]] = []

    def command() -> None:
        seen.append(gc.get_threshold())

    with mock.patch.object(cli, "app", command):
        cli.main()
    assert seen == [(10 * cli.GC_YOUNG_THRESHOLD, 10, 10)]
    assert gc.get_threshold() == (10 * cli.GC_YOUNG_THRESHOLD, 10, 10)


def test_what_the_command_left_is_not_collected_at_once_when_the_threshold_drops(
    thresholds: tuple[int, int, int],
) -> None:
    """Objects the command allocated and kept (50,000 lists, fewer than the raised threshold) are old when
    ``main`` returns: neither the restore nor the caller's next allocations collect them (~17 ms for ``compare``)."""
    kept: list[list[int]] = []
    collections: list[int] = []
    ended: list[int] = []

    def command() -> None:
        kept.extend([i] for i in range(50_000))
        ended.append(len(collections))

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        with mock.patch.object(cli, "app", command):
            cli.main()
        more = [[i] for i in range(100)]
    finally:
        gc.callbacks.remove(count)
    assert len(kept) == 50_000
    assert len(more) == 100
    assert ended == [len(collections)]  # none after the command ended


_LLMBAR = ROOT / "data" / "llmbar_judge_swap" / "judgments.csv"
#: The reading commands on the start-up benchmark's bundled inputs (analyze, validate and cost on the
#: SWE-bench file, 12,500 records, where the benchmark reads the 200 of tau-bench).
_READING = {
    "compare": ("compare", SWE, "--baseline", "20240920_solver", "--candidate", "20240924_solver"),
    "rank": ("rank", SWE, "--systems", "20240920_solver,20240924_solver,20241001_nfactorial"),
    "calibrate": (
        "calibrate",
        _LLMBAR,
        *("--where", "subset=Processed/MT-Bench", "--where", "evaluator=GPT-4", "--where", "strategy=Vanilla_NoRules"),
        "--map=item=item_idx,label=label,verdict=winner_original_order,verdict_swapped=winner_swapped_order,"
        "judge=evaluator,rubric=strategy",
        *("--positive", "1", "--kind", "pairwise"),
    ),
    "analyze": ("analyze", SWE, "--k", "1"),
    "cost": ("cost", SWE),
    "validate": ("validate", SWE),
}


def test_the_reading_commands_start_and_end_without_a_full_collection() -> None:
    """Each reading command on the benchmark's inputs (one interpreter, one after another): no collection of
    the oldest generation, and few of the young one (at 700, ``compare`` alone ran ~135 and one full)."""
    results = run_batch(*_READING.values())  # tests/cli/command_batch.py: one interpreter, one after another
    for name, result in zip(_READING, results, strict=True):
        assert result["code"] == 0, name
        young, _middle, old = result["collections"]
        assert old == 0, (name, result)
        assert young <= 3, (name, result)
    assert results[-1]["threshold"][0] < cli.GC_YOUNG_THRESHOLD  # the interpreter's own, restored
