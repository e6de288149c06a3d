"""One trial: passed, failed with the failed check and an excerpt, infra_error kept apart from both."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gatestats_runner import contract
from gatestats_runner.sandbox import Capabilities
from tests.runner.conftest import Trial, needs_sandbox

pytestmark = needs_sandbox


def _valid(trial: Trial) -> None:
    assert contract.validate_record(trial.record) == []


def test_expected_exit_and_artifacts_pass_and_are_kept_with_digests(run_case: Callable[..., Trial]) -> None:
    trial = run_case(
        """
        import json, os
        os.makedirs("reports", exist_ok=True)
        json.dump({"ok": True}, open("reports/r.json", "w"))
        print("done")
        """,
        artifacts=[{"path": "reports/r.json", "check": "json"}],
    )
    _valid(trial)
    record = trial.record
    assert (record["outcome"], record["bound"], record["exit_code"], record["failed_check"]) == (
        "passed",
        None,
        0,
        None,
    )
    assert record["missing_artifacts"] == []
    [artifact] = record["artifacts"]
    assert artifact["path"].endswith("/artifacts/reports/r.json")
    assert artifact["bytes"] == len('{"ok": true}')
    assert artifact["digest"].startswith("sha256:")
    assert trial.stdout() == "done\n"
    assert record["stdout_digest"] == "sha256:" + __import__("hashlib").sha256(b"done\n").hexdigest()
    assert record["started_at"].endswith("+00:00")
    assert record["machine_seconds"] is not None


def test_wrong_exit_status_fails_with_the_tail_of_stderr(run_case: Callable[..., Trial]) -> None:
    trial = run_case(
        """
        import sys
        print("noise", file=sys.stderr)
        print("AssertionError: expected 3, got 4", file=sys.stderr)
        sys.exit(1)
        """
    )
    _valid(trial)
    assert (trial.record["outcome"], trial.record["failed_check"], trial.record["exit_code"]) == (
        "failed",
        "exit_status",
        1,
    )
    assert trial.evidence["excerpt"].startswith("exit_status: expected 0 (got 1)\nstderr (last lines):\n")
    assert "AssertionError: expected 3, got 4" in trial.evidence["excerpt"]


def test_a_missing_and_an_empty_artifact_are_both_listed(run_case: Callable[..., Trial]) -> None:
    trial = run_case(
        "open('empty.txt', 'w').close()\n",
        artifacts=["missing.txt", "empty.txt"],
    )
    _valid(trial)
    assert trial.record["outcome"] == "failed"
    assert trial.record["failed_check"] == "artifact_missing"
    assert trial.record["missing_artifacts"] == ["missing.txt", "empty.txt"]


def test_an_exit_zero_wrapper_with_an_empty_junit_report_fails_the_structural_check(
    run_case: Callable[..., Trial],
) -> None:
    trial = run_case(
        """
        open("junit.xml", "w").write('<testsuite tests="0"></testsuite>')
        """,
        artifacts=[{"path": "junit.xml", "check": "junit", "min_tests": 1}],
    )
    assert (trial.record["outcome"], trial.record["failed_check"]) == ("failed", "artifact_junit")
    assert "expected >= 1 executed tests (0 executed, 0 failed or errored, 0 skipped)" in trial.evidence["excerpt"]


def test_junit_failures_become_the_excerpt(run_case: Callable[..., Trial]) -> None:
    trial = run_case(
        """
        import sys
        open("junit.xml", "w").write(
            '<testsuites><testsuite><testcase classname="t" name="ok"/>'
            '<testcase classname="t" name="bad"><failure message="assert 1 == 2"/></testcase>'
            '</testsuite></testsuites>')
        sys.exit(1)
        """,
        artifacts=[{"path": "junit.xml", "check": "junit"}],
    )
    assert trial.record["failed_check"] == "exit_status"
    assert trial.evidence["excerpt"] == "exit_status: expected 0 (got 1)\nfailed tests:\nt.bad: assert 1 == 2"


def test_json_and_tar_checks(run_case: Callable[..., Trial]) -> None:
    bad_json = run_case("open('r.json', 'w').write('{not json')\n", artifacts=[{"path": "r.json", "check": "json"}])
    assert bad_json.record["failed_check"] == "artifact_json"
    tar = run_case(
        """
        import io, tarfile
        with tarfile.open("pkg.tar.gz", "w:gz") as archive:
            data = b"1.0"
            info = tarfile.TarInfo("pkg/VERSION"); info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        """,
        artifacts=[{"path": "pkg.tar.gz", "check": "tar", "members": ["pkg/VERSION", "pkg/__init__.py"]}],
    )
    assert tar.record["failed_check"] == "artifact_tar"
    assert "archive lacks pkg/__init__.py" in tar.evidence["excerpt"]


def test_a_stale_artifact_shipped_by_the_candidate_does_not_count(run_case: Callable[..., Trial]) -> None:
    trial = run_case(
        "print('skipped the work')\n",
        artifacts=[{"path": "reports/r.json", "check": "json"}],
        candidate={"reports/r.json": '{"passed": true}'},
    )
    assert trial.record["outcome"] == "failed"
    assert trial.record["missing_artifacts"] == ["reports/r.json"]


def test_an_artifact_symlink_out_of_the_workspace_is_never_read(run_case: Callable[..., Trial]) -> None:
    trial = run_case(
        """
        import os
        os.makedirs("out", exist_ok=True)
        os.symlink("/etc/passwd", "out/r.txt")
        os.symlink("/etc", "linked")
        """,
        artifacts=["out/r.txt", "linked/passwd"],
    )
    assert trial.record["outcome"] == "failed"
    assert trial.record["missing_artifacts"] == ["out/r.txt", "linked/passwd"]
    assert not (trial.dir / "artifacts").exists()


def test_the_candidate_layer_overrides_the_snapshot(run_case: Callable[..., Trial]) -> None:
    trial = run_case(
        "import sys; sys.exit(0 if open('app.txt').read() == 'fixed' else 1)\n",
        snapshot={"app.txt": "buggy"},
        candidate={"app.txt": "fixed"},
    )
    assert trial.record["outcome"] == "passed"


def test_a_missing_snapshot_is_an_infra_error(run_case: Callable[..., Trial], tmp_path: Path) -> None:
    trial = run_case("print('never runs')\n", extra={"snapshot": "no-such-snapshot"})
    _valid(trial)
    assert (trial.record["outcome"], trial.record["failed_check"], trial.record["exit_code"]) == (
        "infra_error",
        None,
        None,
    )
    assert trial.evidence["infra_error"].startswith("snapshot missing: ")
    assert trial.stdout() == ""


def test_an_absent_verifier_is_an_infra_error(run_case: Callable[..., Trial]) -> None:
    trial = run_case(command=["sh", "/verifier/absent.sh"])
    assert trial.record["outcome"] == "infra_error"
    assert trial.evidence["infra_error"].startswith("verifier absent: /verifier/absent.sh is not in ")
    assert trial.evidence["infra_error"].endswith("/verifier")
    missing_program = run_case(command=["no-such-program-xyz", "arg"])
    assert missing_program.record["outcome"] == "infra_error"
    assert missing_program.evidence["infra_error"].startswith("verifier absent: 'no-such-program-xyz'")


def test_a_sandbox_that_cannot_start_is_an_infra_error(run_case: Callable[..., Trial], caps: Capabilities) -> None:
    broken = dataclasses.replace(caps, system_links=(*caps.system_links, ("/no-such-system-dir", None)))
    trial = run_case("print('never runs')\n", capabilities=broken)
    assert trial.record["outcome"] == "infra_error"
    assert trial.evidence["infra_error"] == "sandbox failed to start: the command was never executed"
    assert "bwrap:" in trial.stderr()


def test_every_record_field_is_in_the_contract(run_case: Callable[..., Trial]) -> None:
    trial = run_case("print(1)\n")
    assert set(trial.record) <= set(contract.FIELDS)
    json.dumps(trial.record, allow_nan=False)


@pytest.mark.parametrize("mode", ["tmpfs-copy", "dir-copy"])
def test_copy_workspaces_give_the_same_outcome(run_case: Callable[..., Trial], caps: Capabilities, mode: str) -> None:
    copy_caps = dataclasses.replace(caps, workspace_mode=mode)  # type: ignore[arg-type]
    trial = run_case(
        "import sys; sys.exit(0 if open('app.txt').read() == 'fixed' else 1)\n",
        snapshot={"app.txt": "buggy"},
        candidate={"app.txt": "fixed"},
        capabilities=copy_caps,
    )
    assert trial.record["outcome"] == "passed"
    assert trial.evidence["workspace_mode"] == mode
