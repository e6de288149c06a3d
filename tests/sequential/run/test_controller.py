"""The sequential controller: batches in the seeded order, the stop, the path file, resume after kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from gatestats.gate.sequential_rules import batch_first_side, case_order
from gatestats.sequential.run import PATH_FILE, run_until_decided
from gatestats_runner.runsets import read_manifest
from gatestats_runner.store import RECORDS, read_records
from tests.conftest import ROOT, copy_sequential_example
from tests.sequential.run.conftest import EXAMPLE, example_options, run_example

IDS = [f"product-{i:02d}" for i in range(1, 49)]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory, sequential_example_outcome: tuple[Path, str, int]) -> Path:
    """The example run until decided (tests/conftest.py, once per test run), copied: these tests resume it."""
    run, state, batches_run = sequential_example_outcome
    assert (state, batches_run) == ("decided", 4)
    return copy_sequential_example(run, tmp_path_factory.mktemp("sequential") / "out")


def test_the_example_stops_after_four_batches_of_eight_with_both_rules_passed(example: Path) -> None:
    path = json.loads((example / PATH_FILE).read_text())
    assert path["format"] == "gatestats-sequential-path/1"
    assert path["stop"] == {
        "state": "decided",
        "n_cases": 32,
        "decided": True,
        "verdict": "pass",
        "trials_used": 128,  # 32 cases x 2 trials x 2 systems
        "trials_fixed": 192,  # 48 x 2 x 2
        "trials_saved": 64,
    }
    assert [b["n_cases"] for b in path["batches"]] == [8, 16, 24, 32]
    solves = [b["rules"][0] for b in path["batches"]]
    assert [r["status"] for r in solves] == ["undecided", "pass", "pass", "pass"]
    assert solves[2] == {"row": "solves: pass rate ≥ 0.6", "status": "pass", "decided_at": 16}
    worse = [b["rules"][1]["status"] for b in path["batches"]]
    assert worse == ["undecided", "undecided", "undecided", "pass"]


def test_batches_are_the_seeded_order_on_both_sides_and_nothing_else_ran(example: Path) -> None:
    order = case_order(IDS, 2026)
    path = json.loads((example / PATH_FILE).read_text())
    assert path["order"] == list(order)
    assert [b["cases"] for b in path["batches"]] == [list(order[i : i + 8]) for i in range(0, 32, 8)]
    assert [b["first"] for b in path["batches"]] == [batch_first_side(2026, j) for j in range(4)]
    for side, system in (("baseline", "released"), ("candidate", "new")):
        records = read_records(example / side / RECORDS).records
        assert Counter(r["case_id"] for r in records) == Counter(dict.fromkeys(order[:32], 2))
        manifest = read_manifest(example / side)
        assert manifest["system"] == system
        assert manifest["complete"] is False  # 16 cases never ran
        assert len(manifest["cases"]) == 48
        assert manifest["policy_digest"].startswith("sha256:")


def test_the_same_command_again_runs_nothing_and_rewrites_the_same_path(example: Path) -> None:
    before = (example / PATH_FILE).read_bytes()
    (example / PATH_FILE).unlink()
    result = run_until_decided(example_options(example))
    assert (result.state, result.batches_run) == ("decided", 0)
    assert (example / PATH_FILE).read_bytes() == before


def test_a_run_set_under_another_design_is_refused_and_nothing_runs(example: Path, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text((EXAMPLE / "policy.toml").read_text().replace("threshold = 0.6", "threshold = 0.5"))
    records = (example / "candidate" / RECORDS).read_bytes()
    with pytest.raises(ValueError, match=r"holds records under another design \(registered policy sha256:") as info:
        run_until_decided(example_options(example, policy=policy))
    assert f"--until-decided with {policy}" in str(info.value)
    assert str(info.value).endswith("is a new design: nothing was run (use a new --out)")
    assert (example / "candidate" / RECORDS).read_bytes() == records


def test_too_few_cases_for_max_cases_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text((EXAMPLE / "policy.toml").read_text().replace("max_cases = 48 ", "max_cases = 60 "))
    with pytest.raises(ValueError, match=r"cases: 48 cases; the policy's \[sequential\] max_cases is 60$"):
        run_until_decided(example_options(tmp_path / "out", policy=policy))
    assert not (tmp_path / "out").exists()


def test_cases_sharing_a_case_group_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    import json
    import shutil

    cases = tmp_path / "cases"
    shutil.copytree(EXAMPLE / "cases", cases)
    for name in ("product-03", "product-11"):
        meta = cases / name / "case.json"
        data = json.loads(meta.read_text())
        data["labels"]["case_group"] = "repo\n<x>"
        meta.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"share a case_group \('repo\\n<x>'\): anytime-valid sequences need"):
        run_until_decided(example_options(tmp_path / "out", cases=cases))
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_kill_9_mid_run_then_the_same_command_finishes_with_the_same_path(example: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
        "from tests.sequential.run.conftest import run_example; run_example(Path(sys.argv[2]))"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(ROOT), str(out)], cwd=ROOT)
    records = out / "candidate" / RECORDS
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:  # kill in the middle of the second batch
        if records.exists() and len(records.read_bytes().splitlines()) > 20:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    result = run_example(out)
    assert result.state == "decided"
    assert json.loads((out / PATH_FILE).read_text()) | {"policy_digest": None} == json.loads(
        (example / PATH_FILE).read_text()
    ) | {"policy_digest": None}


def test_the_budget_spent_undecided_stops_at_max_cases_with_the_cases_still_needed(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text((EXAMPLE / "policy.toml").read_text().replace("max_cases = 48 ", "max_cases = 8 "))
    result = run_until_decided(example_options(tmp_path / "out", policy=policy))
    assert (result.state, result.batches_run, result.verdict.verdict) == ("max_cases", 1, "insufficient_evidence")
    stop = json.loads((tmp_path / "out" / PATH_FILE).read_text())["stop"]
    assert (stop["n_cases"], stop["trials_used"], stop["trials_saved"]) == (8, 32, 0)
    reasons = [r.reason or "" for r in result.verdict.rules]
    assert all(r.startswith("undecided after 8 cases: neither e-value reached its level") for r in reasons)
    assert all("more cases would be needed" in r for r in reasons)


def test_resuming_with_the_two_candidate_directories_swapped_is_refused(example: Path) -> None:
    swapped = example_options(example, baseline=EXAMPLE / "candidates" / "candidate")
    with pytest.raises(ValueError, match=r"baseline: ran another candidate directory than .*candidates/candidate"):
        run_until_decided(swapped)
