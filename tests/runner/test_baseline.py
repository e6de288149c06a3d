"""Re-running a seeded sample of a stored baseline: the sample, the manifest, refusals, and drift found end to end."""

from __future__ import annotations

import json
import random
import shutil
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.errors import RecordFileError
from gatestats.gate.drift import drift_test
from gatestats_runner.baseline import BaselineSampleOptions, run_baseline_sample, sample_case_ids
from gatestats_runner.launch import CaseError, OptionError, RunSetError, RunSetOptions, run_run_set
from gatestats_runner.runsets import read_manifest, seal_records
from tests.runner.conftest import needs_sandbox, write_case

IDS = [f"c{i}" for i in range(10)]


def test_the_sample_is_seeded_sorted_and_depends_only_on_the_set_of_ids() -> None:
    sample = sample_case_ids(IDS, 4, 7)
    # Reference: random.Random(seed).sample over the sorted ids (Python documents that a seeded
    # Random reproduces its sequence across versions for the same seed).
    assert sample == tuple(sorted(random.Random(7).sample(sorted(IDS), 4)))
    assert sample == sample_case_ids(list(reversed(IDS)), 4, 7)
    assert sample != sample_case_ids(IDS, 4, 8)
    assert len(set(sample)) == 4
    assert list(sample) == sorted(sample)


@pytest.mark.parametrize(
    ("n", "seed", "message"),
    [
        (0, 1, r"--baseline-sample: expected an integer in 1\.\.10 .* \(got 0\)"),
        (11, 1, r"--baseline-sample: expected an integer in 1\.\.10 .* \(got 11\)"),
        (3, -1, r"--seed: expected an integer >= 0 \(got -1\)"),
    ],
)
def test_a_sample_size_or_seed_out_of_range_is_a_usage_error(n: int, seed: int, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        sample_case_ids(IDS, n, seed)


def _verifier(marker: Path) -> str:
    # Fails when the host file `marker` exists: /etc is the host's, read-only, inside the sandbox,
    # so creating it is a change of the environment under unchanged case bytes.
    return f"import os, sys\nsys.exit(1 if os.path.exists({str(marker)!r}) else 0)\n"


def _stored(tmp_path: Path, marker: Path, cases: int = 8) -> Path:
    for i in range(cases):
        write_case(tmp_path / "cases", f"c{i}", script=_verifier(marker), limits={"wall_clock_s": 10})
    (tmp_path / "candidate").mkdir()
    summary = run_run_set(
        RunSetOptions(
            cases=tmp_path / "cases", candidate=tmp_path / "candidate", out=tmp_path / "stored", trials=2, system="base"
        )
    )
    assert summary.complete
    return tmp_path / "stored"


@needs_sandbox
def test_the_rerun_manifest_records_the_sample_the_seed_and_the_stored_digest(tmp_path: Path) -> None:
    marker = Path("/etc") / f"gatestats-drift-{uuid.uuid4().hex}"
    stored = _stored(tmp_path, marker)
    options = BaselineSampleOptions(cases=tmp_path / "cases", stored=stored, out=tmp_path / "rerun", n=6, seed=3)
    summary = run_baseline_sample(options)
    assert summary.complete
    assert summary.total_trials == 12  # 6 sampled cases x the stored 2 trials
    manifest = read_manifest(tmp_path / "rerun")
    stored_manifest = read_manifest(stored)
    sample = manifest["baseline_sample"]
    assert sample["format"] == "gatestats-baseline-sample/1"
    assert (sample["seed"], sample["n"]) == (3, 6)
    assert sample["case_ids"] == list(sample_case_ids(IDS[:8], 6, 3))
    assert sample["population"] == IDS[:8]
    assert sample["stored"]["run_set_id"] == stored_manifest["run_set_id"]
    assert sample["stored"]["records_digest"] == seal_records(stored)["digest"]
    assert [c["case_id"] for c in manifest["cases"]] == sample["case_ids"]
    assert manifest["candidate_digest"] == stored_manifest["candidate_digest"]
    # Resuming runs nothing more; resuming with another seed is another sample: refused.
    again = run_baseline_sample(BaselineSampleOptions(**{**_fields(options), "resume": True}))
    assert (again.complete, again.attempts_run) == (True, 0)
    with pytest.raises(RunSetError, match=r"cannot resume: the cases in .* changed"):
        run_baseline_sample(BaselineSampleOptions(**{**_fields(options), "seed": 4, "resume": True}))
    result = drift_test(stored, tmp_path / "rerun")
    assert (result.status, result.n_compared, result.fell, result.rose) == ("stable", 6, (), ())
    assert result.pvalue == 1.0


def _fields(options: BaselineSampleOptions) -> dict[str, object]:
    return {name: getattr(options, name) for name in options.__slots__}


@needs_sandbox
def test_environment_drift_blocks_through_the_drift_command(tmp_path: Path) -> None:
    marker = Path("/etc") / f"gatestats-drift-{uuid.uuid4().hex}"
    stored = _stored(tmp_path, marker)
    try:
        marker.write_text("the environment changed\n")
        ran = CliRunner().invoke(
            app,
            ["run", str(tmp_path / "cases"), "--baseline-sample", "7", "--against", str(stored),
             "--out", str(tmp_path / "rerun"), "--seed", "1"],
        )  # fmt: skip
    finally:
        marker.unlink(missing_ok=True)
    assert ran.exit_code == 0, ran.output
    assert "complete — 14 trials (failed 14)" in ran.stdout
    assert read_manifest(tmp_path / "rerun")["baseline_sample"]["case_ids"] == list(sample_case_ids(IDS[:8], 7, 1))
    result = CliRunner().invoke(app, ["drift", str(stored), str(tmp_path / "rerun"), "--json"])
    assert result.exit_code == 12, result.output
    payload = json.loads(result.stdout)
    assert (payload["status"], payload["b"], payload["c"], payload["n_compared"]) == ("moved", 7, 0, 7)
    assert payload["pvalue"] == pytest.approx(2 / 2**7)  # two-sided exact: 2 * 0.5**7
    assert "environment or evaluator drift" in payload["reason"]
    check = drift_test(stored, tmp_path / "rerun").check()
    assert (check.name, check.side, check.status) == ("baseline_drift", "baseline", "insufficient_evidence")
    # The stored side given as the re-run is not a baseline re-run: invalid input, exit 1.
    wrong = CliRunner().invoke(app, ["drift", str(tmp_path / "rerun"), str(stored)])
    assert wrong.exit_code == 1
    assert "field 'baseline_sample': not a baseline re-run" in wrong.stderr


@needs_sandbox
def test_a_changed_case_an_incomplete_or_tampered_store_or_other_bytes_are_refused(tmp_path: Path) -> None:
    marker = Path("/etc") / f"gatestats-drift-{uuid.uuid4().hex}"
    stored = _stored(tmp_path, marker, cases=3)

    def rerun(**kw: object) -> None:
        base: dict[str, object] = {"cases": tmp_path / "cases", "stored": stored, "out": tmp_path / "r", "n": 3}
        run_baseline_sample(BaselineSampleOptions(**(base | kw)))  # type: ignore[arg-type]

    rerun(out=tmp_path / "all", seed=0)  # every case: any seed draws the same cases, but the seed is recorded
    with pytest.raises(RunSetError, match="field 'baseline_sample': cannot resume: a different baseline sample"):
        rerun(out=tmp_path / "all", seed=5, resume=True)
    shutil.copytree(tmp_path / "all", tmp_path / "cut")  # a re-run killed before it completed
    manifest = json.loads((tmp_path / "cut" / "manifest.json").read_text())
    (tmp_path / "cut" / "manifest.json").write_text(json.dumps({**manifest, "complete": False}))
    cut = drift_test(stored, tmp_path / "cut")
    assert (cut.status, cut.pvalue) == ("insufficient_evidence", None)
    assert "is incomplete: resume it before the drift test" in cut.reason
    run_run_set(
        RunSetOptions(cases=tmp_path / "cases", candidate=tmp_path / "candidate", out=tmp_path / "s2", trials=1)
    )
    with pytest.raises(
        RecordFileError, match=r"baseline_sample\.stored\.run_set_id': the re-run sampled another run set"
    ):
        drift_test(tmp_path / "s2", tmp_path / "all")
    shutil.rmtree(tmp_path / "s2" / "candidate")
    with pytest.raises(RunSetError, match="no candidate copy to re-run"):
        rerun(stored=tmp_path / "s2")
    other = tmp_path / "other"
    (other / "c0").mkdir(parents=True)
    (other / "c0" / "x").write_text("x")
    with pytest.raises(RunSetError, match="--candidate: not the stored baseline's bytes"):
        rerun(candidate=other)
    (tmp_path / "cases" / "c1" / "verifier" / "run.py").write_text("print('changed')\n")
    with pytest.raises(CaseError, match=r"c1: case_version: changed since the stored run"):
        rerun()
    shutil.copytree(stored, tmp_path / "tampered")
    with (tmp_path / "tampered" / "records.jsonl").open("a") as handle:
        handle.write("\n")
    with pytest.raises(RunSetError, match=r"records\.jsonl no longer matches the manifest's seal"):
        rerun(stored=tmp_path / "tampered")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--baseline-sample", "3"], "--baseline-sample N and --against STORED_RUN_SET go together"),
        (["--baseline-sample", "3", "--against", "x", "--trials", "2"], "--baseline-sample: --trials: taken from"),
        (["--baseline-sample", "3", "--against", "x", "--system", "b"], "--baseline-sample: --system: taken from"),
        ([], "--candidate: required"),
    ],
)
def test_baseline_sample_usage_errors_exit_2_before_anything_is_read(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    result = CliRunner().invoke(app, ["run", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o"), *extra])
    assert result.exit_code == 2
    assert message in result.stderr
    assert not (tmp_path / "o").exists()
