"""``RunSetOptions.batch_cases``: one batch of a sequential run into a run set that covers every case."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from gatestats_runner.launch import OptionError, RunSetOptions, run_run_set
from gatestats_runner.runsets import read_manifest
from gatestats_runner.store import RECORDS, read_records
from tests.runner.conftest import write_case


def _options(tmp_path: Path, batch: tuple[str, ...] | None, *, resume: bool) -> RunSetOptions:
    cases = tmp_path / "cases"
    if not cases.exists():
        for i in range(4):
            write_case(cases, f"c{i}", command=["true"], limits={"wall_clock_s": 10})
        (tmp_path / "candidate").mkdir()
    return RunSetOptions(
        cases=cases,
        candidate=tmp_path / "candidate",
        out=tmp_path / "run-set",
        trials=2,
        resume=resume,
        isolation="none",
        workspace="dir-copy",
        batch_cases=batch,
    )


def _units(out: Path) -> Counter[str]:
    return Counter(r["case_id"] for r in read_records(out / RECORDS).records)


def test_batches_run_only_their_cases_and_the_last_completes_the_run_set(tmp_path: Path) -> None:
    first = run_run_set(_options(tmp_path, ("c2", "c0"), resume=False))
    out = tmp_path / "run-set"
    manifest = read_manifest(out)
    assert [c["case_id"] for c in manifest["cases"]] == ["c0", "c1", "c2", "c3"]
    assert (first.complete, first.total_trials, first.attempts_run) == (False, 8, 4)
    assert manifest["complete"] is False
    assert _units(out) == Counter({"c0": 2, "c2": 2})
    again = run_run_set(_options(tmp_path, ("c2", "c0"), resume=True))  # a batch already run: nothing new
    assert (again.attempts_run, again.complete) == (0, False)
    last = run_run_set(_options(tmp_path, ("c1", "c3"), resume=True))
    assert (last.complete, last.attempts_run, dict(last.counts)) == (True, 4, {"passed": 8})
    assert _units(out) == Counter({"c0": 2, "c1": 2, "c2": 2, "c3": 2})
    assert read_manifest(out)["run_set_id"] == first.run_set_id


@pytest.mark.parametrize("batch", [(), ("c9",), ("c1", "c1")])
def test_a_batch_of_unknown_repeated_or_no_cases_is_a_usage_error_and_writes_nothing(
    tmp_path: Path, batch: tuple[str, ...]
) -> None:
    with pytest.raises(OptionError, match=r"^batch_cases: expected distinct ids of cases in .*cases \(got "):
        run_run_set(_options(tmp_path, batch, resume=False))
    assert not (tmp_path / "run-set").exists()
