"""The bundled golden set ``data/golden_bugfix``: cases, labels, candidates and the README's outcome table.

The verifiers run directly with the system ``python3`` on a copy of each snapshot with each
candidate's patches laid over it (no sandbox, ~0.05 s a run); one test also runs every case once
per candidate in the real sandbox, where root and bubblewrap are available.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Literal

import pytest

from gatestats.errors import RecordFileError
from gatestats.records import read_run_set
from gatestats_runner.case import SANDBOX_PATH, CaseSet, load_case_set
from gatestats_runner.runset import RunSetOptions, run_run_set
from gatestats_runner.store import RECORDS, read_records
from tests.conftest import DATA
from tests.runner.conftest import needs_sandbox

GOLDEN = DATA / "golden_bugfix"
CASES = GOLDEN / "cases"
CANDIDATES = ("baseline", "candidate")
Expected = Literal["pass", "fail", "flaky"]

# The outcome table of data/golden_bugfix/README.md (test_readme_table_matches checks that they agree).
EXPECTED: dict[str, dict[str, Expected]] = {
    "paginate-last-page": {"baseline": "pass", "candidate": "pass"},
    "money-rounding": {"baseline": "pass", "candidate": "pass"},
    "semver-compare": {"baseline": "pass", "candidate": "pass"},
    "static-path-traversal": {"baseline": "pass", "candidate": "fail"},
    "log-secret-redaction": {"baseline": "pass", "candidate": "pass"},
    "safe-redirect": {"baseline": "pass", "candidate": "pass"},
    "parse-iso-timestamp-tz": {"baseline": "fail", "candidate": "pass"},
    "csv-export-quoting": {"baseline": "fail", "candidate": "pass"},
    "retry-backoff": {"baseline": "fail", "candidate": "pass"},
    "unicode-slug": {"baseline": "fail", "candidate": "pass"},
    "config-deep-merge": {"baseline": "fail", "candidate": "flaky"},
    "env-file-parsing": {"baseline": "fail", "candidate": "fail"},
}
FLAKY_CASE = "config-deep-merge"
FLAKY_TEST = "test_merge.DeepMerge.test_key_order_base_first_then_new_keys"
SECURITY = {"static-path-traversal", "log-secret-redaction", "safe-redirect"}
SYSTEM_PYTHON = shutil.which("python3", path=SANDBOX_PATH)

needs_system_python = pytest.mark.skipif(SYSTEM_PYTHON is None, reason=f"no python3 on {SANDBOX_PATH}")


@pytest.fixture(scope="module")
def case_set() -> CaseSet:
    return load_case_set(CASES)


def _patched(candidate: str) -> set[str]:
    return {p.name for p in (GOLDEN / "candidates" / candidate).iterdir() if not p.name.startswith(".")}


def _run_verifier(
    tmp_path: Path, case_id: str, variant: str, *, hash_seed: str | None = None
) -> tuple[int, dict[str, object]]:
    """Run the case's verifier on a copy of its snapshot with ``variant``'s patches (or none: 'snapshot')."""
    workspace = tmp_path / f"{variant}-{case_id}" / "workspace"
    shutil.copytree(CASES / case_id / "snapshot", workspace)
    patch = GOLDEN / "candidates" / variant / case_id
    if variant != "snapshot" and patch.is_dir():
        shutil.copytree(patch, workspace, dirs_exist_ok=True)
    verifier = shutil.copytree(CASES / case_id / "verifier", workspace.parent / "verifier")
    # The sandbox's environment, as the runner builds it: in particular, no PYTHONHASHSEED.
    env = {"PATH": SANDBOX_PATH, "HOME": str(workspace), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    env |= {"GATESTATS_WORKSPACE": str(workspace), "GATESTATS_CASE_ID": case_id}
    if hash_seed is not None:
        env["PYTHONHASHSEED"] = hash_seed
    assert SYSTEM_PYTHON is not None
    proc = subprocess.run(
        [SYSTEM_PYTHON, str(verifier / "verify.py")],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert (workspace / "reports" / "junit.xml").stat().st_size > 0, proc.stderr
    summary = json.loads((workspace / "reports" / "summary.json").read_text(encoding="utf-8"))
    return proc.returncode, summary


def test_the_case_set_has_twelve_cases_with_sound_contracts(case_set: CaseSet) -> None:
    assert [c.case_id for c in case_set.cases] == sorted(EXPECTED)
    for case in case_set.cases:
        assert case.problems == (), case.case_id
        assert case.request is not None
        assert case.request.strip(), case.case_id
        assert case.contract.command == ("python3", "/verifier/verify.py")
        junit, summary = case.contract.artifacts
        assert (junit.path, junit.check, junit.max_failures) == ("reports/junit.xml", "junit", 0)
        assert (summary.path, summary.check) == ("reports/summary.json", "json")
        tests = sum(
            len(re.findall(r"^    def test_", p.read_text(encoding="utf-8"), re.MULTILINE))
            for p in (case.verifier / "tests").glob("test_*.py")
        )
        assert junit.min_tests == tests, case.case_id
        limits = case.contract.limits
        assert (limits.wall_clock_s, limits.cpu_s, limits.memory_mb) == (30, 20, 256), case.case_id
        # The flaky case must vary with the hash seed of each trial's fresh process.
        assert dict(case.contract.env) == {"PYTHONDONTWRITEBYTECODE": "1"}, case.case_id


def test_every_case_ships_the_same_verifier_harness() -> None:
    harnesses = {(CASES / c / "verifier" / "verify.py").read_bytes() for c in EXPECTED}
    assert len(harnesses) == 1


def test_labels_and_the_security_slice(case_set: CaseSet) -> None:
    slices = Counter(s for c in case_set.cases for s in c.slices or ())
    assert slices == Counter(security=3, parsing=4, numeric=3, config=2, dates=1, text=1)
    for case in case_set.cases:
        assert case.split == "development"
        expected_severity = {"critical"} if case.case_id in SECURITY else {"high", "medium"}
        assert case.severity in expected_severity, case.case_id
    assert {c.case_id for c in case_set.cases if "security" in (c.slices or ())} == SECURITY


def test_case_groups_pair_cases_on_one_identical_snapshot(case_set: CaseSet) -> None:
    groups: dict[str, list[str]] = {}
    for case in case_set.cases:
        if case.case_group is not None:
            groups.setdefault(case.case_group, []).append(case.case_id)
    assert groups == {
        "confkit": ["config-deep-merge", "env-file-parsing"],
        "webhelpers": ["safe-redirect", "static-path-traversal"],
    }
    for first, second in groups.values():
        files = sorted(p.relative_to(CASES / first / "snapshot") for p in (CASES / first / "snapshot").rglob("*"))
        assert files == sorted(
            p.relative_to(CASES / second / "snapshot") for p in (CASES / second / "snapshot").rglob("*")
        )
        for rel in files:
            path = CASES / first / "snapshot" / rel
            if path.is_file():
                assert path.read_bytes() == (CASES / second / "snapshot" / rel).read_bytes(), rel


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_candidate_directories_name_existing_cases_and_only_patch_snapshot_files(candidate: str) -> None:
    root = GOLDEN / "candidates" / candidate
    assert [p.name for p in root.iterdir() if p.is_file()] == []
    for case_id in _patched(candidate):
        assert case_id in EXPECTED, f"{candidate}/{case_id} names no case"
        files = [p for p in (root / case_id).rglob("*") if p.is_file()]
        assert files, f"{candidate}/{case_id} is empty"
        for path in files:
            # A patch replaces a file of the buggy package; it adds no tests or reports of its own.
            assert (CASES / case_id / "snapshot" / path.relative_to(root / case_id)).is_file(), path


def test_expected_outcomes_follow_the_brief() -> None:
    base_pass = {c for c, e in EXPECTED.items() if e["baseline"] == "pass"}
    cand_pass = {c for c, e in EXPECTED.items() if e["candidate"] == "pass"}
    cand_flaky = {c for c, e in EXPECTED.items() if e["candidate"] == "flaky"}
    assert len(base_pass) == 6
    assert base_pass >= SECURITY
    assert cand_flaky == {FLAKY_CASE}
    assert len(cand_pass | cand_flaky) == 10
    assert base_pass - cand_pass == {"static-path-traversal"}
    assert len((cand_pass | cand_flaky) - base_pass) == 5
    assert {c for c, e in EXPECTED.items() if e == {"baseline": "fail", "candidate": "fail"}} == {"env-file-parsing"}
    # A case that a candidate must pass has a patch; the baseline has none for some of its failures.
    assert base_pass <= _patched("baseline")
    assert cand_pass | cand_flaky <= _patched("candidate")
    assert {c for c in EXPECTED if c not in _patched("baseline")} == {
        "parse-iso-timestamp-tz",
        "retry-backoff",
        "unicode-slug",
        "config-deep-merge",
    }


def test_readme_table_matches() -> None:
    table: dict[str, dict[str, str]] = {}
    for line in (GOLDEN / "README.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| `([a-z0-9-]+)` \|(?:[^|]*\|){3} (\w+)[^|]*\| (\w+)[^|]*\|", line)
        if match:
            table[match[1]] = {"baseline": match[2], "candidate": match[3]}
    assert table == EXPECTED


@needs_system_python
@pytest.mark.parametrize("variant", ["snapshot", *CANDIDATES])
@pytest.mark.parametrize("case_id", sorted(EXPECTED))
def test_verifier_outcome_matches_the_table(tmp_path: Path, case_id: str, variant: str) -> None:
    code, summary = _run_verifier(tmp_path, case_id, variant)
    assert summary["case_id"] == case_id
    assert summary["hash_randomization"] is True
    tests = summary["tests"]
    assert isinstance(tests, int)
    assert tests >= 5
    failed = summary["failed"]
    assert isinstance(failed, list)
    assert code == (0 if not failed else 1)
    expected = "fail" if variant == "snapshot" else EXPECTED[case_id][variant]
    if expected == "flaky":
        # Ran to its end; only the key-order test depends on the process's hash seed.
        assert set(failed) <= {FLAKY_TEST}, failed
    elif expected == "pass":
        assert failed == [], failed
    else:
        assert failed, f"{variant} should fail {case_id}"


@needs_system_python
def test_the_flaky_case_is_decided_by_the_hash_seed(tmp_path: Path) -> None:
    outcomes = {
        seed: _run_verifier(tmp_path / f"s{seed}", FLAKY_CASE, "candidate", hash_seed=str(seed)) for seed in range(12)
    }
    passed = {seed for seed, (code, _) in outcomes.items() if code == 0}
    # Each seed fixes the outcome; across 12 seeds both occur (the chance that they do not is ~2 * 0.5**12).
    assert 0 < len(passed) < len(outcomes), passed
    again = next(iter(passed))
    assert _run_verifier(tmp_path / "again", FLAKY_CASE, "candidate", hash_seed=str(again))[0] == 0
    for code, summary in outcomes.values():
        assert summary["failed"] == ([] if code == 0 else [FLAKY_TEST])


@needs_sandbox
def test_one_sandboxed_trial_per_case_matches_the_table(tmp_path: Path) -> None:
    for candidate in CANDIDATES:
        out = tmp_path / candidate
        summary = run_run_set(
            RunSetOptions(cases=CASES, candidate=GOLDEN / "candidates" / candidate, out=out, trials=1, system=candidate)
        )
        assert summary.complete
        records = read_records(out / RECORDS).records
        outcomes = {r["case_id"]: r["outcome"] for r in records}
        assert sorted(outcomes) == sorted(EXPECTED)
        for case_id, outcome in outcomes.items():
            expected = EXPECTED[case_id][candidate]
            allowed = {"pass": {"passed"}, "fail": {"failed"}, "flaky": {"passed", "failed"}}[expected]
            assert outcome in allowed, (candidate, case_id, outcome)
        assert all(r["attempt"] == 0 for r in records), "no infra_error retries"
        assert os.path.isdir(out / "trials")
        _check_integrity_of_a_real_run_set(out, tmp_path / f"{candidate}-tampered")


def _check_integrity_of_a_real_run_set(out: Path, work: Path) -> None:
    """The runner's own run set reads as verified; its edited evidence and records are refused."""
    frame, info = read_run_set(out)
    assert (frame.height, info.checksums) == (len(EXPECTED), "verified")
    assert info.manifest is not None
    assert info.manifest["records_seal"]["lines"] == len(EXPECTED)
    shutil.copytree(out, work)
    first = json.loads((work / RECORDS).read_text(encoding="utf-8").splitlines()[0])
    evidence = work / first["stdout_path"]
    evidence.write_bytes(evidence.read_bytes() + b"forged\n")
    with pytest.raises(RecordFileError, match=r"records\.jsonl:1: field 'stdout_digest': evidence file .* was changed"):
        read_run_set(work)
    shutil.rmtree(work)
    shutil.copytree(out, work)
    lines = (work / RECORDS).read_bytes().splitlines(keepends=True)
    (work / RECORDS).write_bytes(b"".join(lines[1:]))  # one whole record removed
    with pytest.raises(
        RecordFileError, match=r"field 'records_seal': records\.jsonl is not the file the run set sealed"
    ):
        read_run_set(work)
