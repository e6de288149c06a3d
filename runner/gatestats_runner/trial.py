"""One trial: fresh workspace → sandboxed contract command → checks → one record and its evidence.

Outcomes (the order in which they are decided):

``infra_error``
    The environment failed and the candidate was never judged: the case's snapshot is missing,
    its verifier is absent (or the command's program is not there), the workspace could not be
    made or was lost, the cgroups or the sandbox could not start. Never a pass, never a failure.
``resource_killed``
    A bound fired: the runner's own kill (wall clock, whole-tree CPU, output size, full disk,
    refused forks, an OOM kill) or a kernel signal confirmed by the accounting (SIGXCPU,
    SIGXFSZ). ``bound`` names it; ``evidence.json`` holds the counters.
``failed``
    The command ran to its end but its exit status differs from the expected one, or a required
    artifact is missing, empty or fails its structural check.
``passed``
    The expected exit status and every artifact rule.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from gatestats_runner import __version__
from gatestats_runner._util import JSONObject, now_rfc3339, short_id
from gatestats_runner.case import SANDBOX_PATH, Case
from gatestats_runner.checks import check_artifact, excerpt
from gatestats_runner.contract import RunRecord
from gatestats_runner.digests import digest_file
from gatestats_runner.sandbox import Capabilities, Execution, execute
from gatestats_runner.teardown import Defer, now
from gatestats_runner.workspace import (
    Workspace,
    WorkspaceError,
    create_workspace,
    open_in_workspace,
    remove_in_workspace,
)

__all__ = ["InfraError", "TrialResult", "TrialSpec", "infra_result", "run_trial"]

_HOST_PATH_DIRS = tuple(SANDBOX_PATH.split(":"))


class InfraError(Exception):
    """The environment, not the candidate, failed: the trial is recorded as ``infra_error``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialSpec:
    """Everything one trial needs; picklable, so an executor may run it on another process or node."""

    case: Case
    candidate_layer: Path | None
    candidate_digest: str
    trial: int
    attempt: int
    run_set_id: str
    record_base: RunRecord
    evidence_dir: Path
    evidence_rel: str
    scratch: Path

    @property
    def key(self) -> tuple[str, int, int]:
        return self.case.case_id, self.trial, self.attempt


@dataclass(slots=True, kw_only=True)
class TrialResult:
    """The record (not yet checksummed) and, for remote executors, the evidence files' bytes."""

    record: RunRecord
    files: dict[str, bytes] | None = None
    evidence: JSONObject = field(default_factory=dict)


def _program_problem(case: Case) -> str | None:
    """Why the contract's command cannot run (checked on the host before the sandbox starts).

    The program must exist (on the sandbox PATH, under /usr, or in the verifier), and so must every
    ``/verifier/...`` file the command names: a missing one is an absent verifier, not the candidate's.
    """
    for arg in case.contract.command:
        if arg.startswith("/verifier/") and not (case.verifier / arg.removeprefix("/verifier/")).is_file():
            return f"verifier absent: {arg} is not in {case.verifier}"
    program = case.contract.command[0]
    if program.startswith("/verifier/"):
        return None
    if "/" in program:
        return None if os.path.exists(program) else f"verifier absent: {program} does not exist on this machine"
    if not any(os.access(os.path.join(d, program), os.X_OK) for d in _HOST_PATH_DIRS):
        return f"verifier absent: {program!r} is not on the sandbox PATH ({SANDBOX_PATH})"
    return None


def _sandbox_env(spec: TrialSpec) -> dict[str, str]:
    env = {
        "PATH": SANDBOX_PATH,
        "HOME": "/workspace",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "GATESTATS_WORKSPACE": "/workspace",
        "GATESTATS_VERIFIER": "/verifier",
        "GATESTATS_CASE_ID": spec.case.case_id,
        "GATESTATS_TRIAL": str(spec.trial),
    }
    env.update(dict(spec.case.contract.env))
    return env


#: Share of RLIMIT_CPU the main process's own CPU time must reach to confirm a SIGXCPU where no cgroup
#: counts the tree (see :func:`_signal_bound`).
OWN_CPU_CONFIRMS = 0.5


def _cpu_seconds(execution: Execution) -> float | None:
    """The command tree's CPU seconds: the cgroup's, else the main process's own.

    Without a cgroup the main process's: its rusage (the wrapper execs it), or under bubblewrap,
    whose rusage is bubblewrap's own, its time sampled from ``/proc`` (the larger of the two).
    """
    if execution.cpu_seconds is not None:
        return execution.cpu_seconds
    found = [
        float(v)
        for v in (execution.evidence.get("rusage_cpu_seconds"), execution.evidence.get("sampled_cpu_seconds"))
        if isinstance(v, int | float)
    ]
    return max(found) if found else None


def _signal_bound(execution: Execution, spec: TrialSpec, *, disk_capped: bool) -> tuple[str | None, JSONObject]:
    """A bound the kernel enforced by a signal to the main process, confirmed by the accounting.

    A candidate can kill itself with SIGXCPU or SIGXFSZ (or exit 152/153) to pass a failure off as
    a bound: SIGXCPU counts only when the CPU accounting reached the rlimit, and SIGXFSZ only when
    no size-limited tmpfs caps the disk (otherwise the tmpfs fills, or the output watch fires,
    long before a file reaches RLIMIT_FSIZE).

    The cgroup's count must reach 90% of the rlimit. Without a cgroup the account is the main
    process's own CPU time (its rusage, or under bubblewrap its time sampled from ``/proc``),
    which must reach :data:`OWN_CPU_CONFIRMS` of it: the kernel checks RLIMIT_CPU against its
    tick-sampled time, which under load runs ahead of the precise time those accounts give, and
    the last sample is up to a tick older than the end (0.87-1.02 s sampled at a 1 s rlimit, on 2
    cores at load 10; the cgroup's count was as low as 0.71 s in session 36). A self-sent SIGXCPU
    with less own CPU is an ordinary failure; either way the trial is valid and not passed.
    """
    code = execution.exit_code
    if code is None or code <= 128:
        return None, {}
    try:
        sig = signal.Signals(code - 128)
    except ValueError:
        return None, {}
    limits = spec.case.contract.limits
    cpu = _cpu_seconds(execution)
    share = 0.9 if execution.cpu_seconds is not None else OWN_CPU_CONFIRMS
    if sig == signal.SIGXCPU and (cpu is None or cpu >= share * max(1.0, int(limits.cpu_s + 0.999))):
        return "cpu", {"signal": sig.name, "cpu_seconds": cpu}
    if sig == signal.SIGXFSZ and not disk_capped:
        return "disk", {"signal": sig.name}
    return None, {}


def _collect_artifacts(
    spec: TrialSpec, root: Path
) -> tuple[list[dict[str, str | int | None]], list[str], str | None, list[str], list[Path]]:
    """Copy declared artifacts out of the workspace.

    Returns (record entries, missing or empty paths, first failed check, messages, JUnit copies).
    """
    entries: list[dict[str, str | int | None]] = []
    missing: list[str] = []
    failed: str | None = None
    messages: list[str] = []  # "ok   ..." or "FAIL ..."
    junit: list[Path] = []
    for rule in spec.case.contract.artifacts:
        fd = open_in_workspace(root, rule.path)
        if fd is None:
            missing.append(rule.path)
            messages.append(f"FAIL {rule.path}: missing (or not a regular file)")
            failed = failed or "artifact_missing"
            continue
        dest = spec.evidence_dir / "artifacts" / rule.path
        dest.parent.mkdir(parents=True, exist_ok=True)
        with os.fdopen(fd, "rb") as src, open(dest, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        size = dest.stat().st_size
        entries.append(
            {"path": f"{spec.evidence_rel}/artifacts/{rule.path}", "digest": digest_file(dest), "bytes": size}
        )
        if size == 0:
            missing.append(rule.path)
            messages.append(f"FAIL {rule.path}: empty")
            failed = failed or "artifact_empty"
            continue
        if rule.check == "junit":
            junit.append(dest)
        result = check_artifact(dest, rule)
        messages.append(("ok   " if result.ok else "FAIL ") + result.message)
        if not result.ok:
            failed = failed or f"artifact_{rule.check}"
    return entries, missing, failed, messages, junit


@dataclass(slots=True)
class _Decision:
    """What a trial attempt's record says, filled in as the attempt goes."""

    outcome: str = "infra_error"
    bound: str | None = None
    failed_check: str | None = None
    exit_code: int | None = None
    missing: list[str] | None = None
    artifacts: list[dict[str, str | int | None]] | None = None
    machine_seconds: float | None = None
    junit: list[Path] = field(default_factory=list)
    headline: str = ""

    def infra_error(self, reason: str) -> None:
        """The environment failed: nothing about the candidate is recorded."""
        self.outcome, self.bound, self.failed_check, self.artifacts, self.missing = (
            "infra_error",
            None,
            None,
            None,
            None,
        )
        self.headline = f"infra_error: {reason}"


def _fresh_evidence_dir(spec: TrialSpec) -> None:
    """Empty the attempt's evidence directory (a retried attempt starts clean)."""
    if spec.evidence_dir.exists():
        shutil.rmtree(spec.evidence_dir)
    spec.evidence_dir.mkdir(parents=True)


def _run_in_sandbox(spec: TrialSpec, caps: Capabilities, workspace: Workspace, status: Path, defer: Defer) -> Execution:
    """Run the contract's command in ``workspace`` after removing every artifact it must produce."""
    contract = spec.case.contract
    for rule in contract.artifacts:  # every artifact must be produced by this trial
        remove_in_workspace(workspace.root, rule.path)
    return execute(
        caps,
        command=contract.command,
        env=_sandbox_env(spec),
        workspace=workspace,
        verifier=spec.case.verifier,
        limits=contract.limits,
        stdout_path=spec.evidence_dir / "stdout",
        stderr_path=spec.evidence_dir / "stderr",
        status_path=status,
        cgroup_name=f"gatestats-{short_id(spec.run_set_id)}-{os.getpid()}-{time.monotonic_ns()}",
        defer=defer,
    )


def _check_ran(execution: Execution, workspace: Workspace, bound: str | None) -> None:
    """Raise :class:`InfraError` when the environment, not the candidate, decided how the command ended."""
    if execution.start_error is not None:
        raise InfraError(execution.start_error)
    if execution.aborted:
        raise InfraError("aborted: the run set was interrupted (this attempt is discarded, not recorded)")
    if not workspace.intact():
        raise InfraError("workspace lost: the trial's workspace disappeared while the command ran")
    if bound is not None and not execution.started:
        raise InfraError(f"sandbox failed to start: the {bound} bound fired before the command was executed")
    if not execution.started:
        raise InfraError("sandbox failed to start: the command was never executed")


def _judge(
    spec: TrialSpec, execution: Execution, workspace: Workspace, decision: _Decision, evidence: JSONObject
) -> None:
    """Decide ``resource_killed``, ``failed`` or ``passed`` from an execution; :class:`InfraError` otherwise."""
    contract = spec.case.contract
    evidence["execution"] = ran = execution.evidence | {
        "wall_seconds": round(execution.wall_seconds, 6),
        "started": execution.started,
        "leftover_processes": execution.leftover_processes,
    }
    decision.machine_seconds = _cpu_seconds(execution)
    decision.exit_code = execution.exit_code
    decision.bound = execution.killed_by
    if decision.bound is None:
        decision.bound, extra = _signal_bound(execution, spec, disk_capped=workspace.disk_capped)
        ran.update(extra)
    _check_ran(execution, workspace, decision.bound)
    if decision.bound is not None:
        decision.outcome = "resource_killed"
        decision.headline = f"resource_killed: the {decision.bound} bound fired"
        return
    decision.artifacts, decision.missing, failed_check, messages, decision.junit = _collect_artifacts(
        spec, workspace.root
    )
    evidence["checks"] = messages
    if decision.exit_code != contract.expected_exit:
        failed_check = "exit_status"
        decision.headline = f"exit_status: expected {contract.expected_exit} (got {decision.exit_code})"
    elif failed_check is not None:
        decision.headline = f"{failed_check}: " + "; ".join(m[5:] for m in messages if m.startswith("FAIL "))
    decision.failed_check = failed_check
    decision.outcome = "failed" if failed_check else "passed"


def run_trial(spec: TrialSpec, caps: Capabilities, *, defer: Defer = now) -> TrialResult:
    """Run one trial attempt and return its record; the environment's failures become ``infra_error``.

    Parameters
    ----------
    spec
        The attempt: case, candidate layer, trial and attempt numbers, where its evidence goes.
    caps
        The isolation this machine offers (:func:`gatestats_runner.sandbox.detect_capabilities`).
    defer
        Where removing the trial's cgroups and workspace goes once its outcome is known: done
        before returning by default, or handed to a :class:`~gatestats_runner.teardown.Teardown`.

    Returns
    -------
    TrialResult
        The record (not yet checksummed) and the evidence written to ``spec.evidence_dir``.
    """
    started_at = now_rfc3339()
    _fresh_evidence_dir(spec)
    status = spec.evidence_dir / ".status"
    case = spec.case
    evidence: JSONObject = {"command": list(case.contract.command), "checks": []}
    decision = _Decision()
    problem = case.problems[0] if case.problems else _program_problem(case)
    workspace = None
    try:
        if problem is not None:
            raise InfraError(problem)
        name = f"{short_id(spec.run_set_id)}-{case.case_id[:40]}-t{spec.trial}-a{spec.attempt}"
        workspace = create_workspace(
            spec.scratch / name,
            [p for p in (spec.candidate_layer, case.snapshot) if p is not None],
            disk_bytes=case.contract.limits.disk_bytes,
            inodes=max(16384, case.contract.limits.disk_bytes // 2048),
            prefer=caps.workspace_mode,
        )
        evidence["workspace_mode"] = workspace.mode
        execution = _run_in_sandbox(spec, caps, workspace, status, defer)
        _judge(spec, execution, workspace, decision, evidence)
    except (InfraError, WorkspaceError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        decision.infra_error(reason)
        evidence["infra_error"] = reason
    finally:
        if workspace is not None:
            defer(workspace.dispose)
        with contextlib.suppress(OSError):
            status.unlink()
    return _finish(
        spec,
        source=f"gatestats-runner {__version__} ({caps.isolation}, {caps.workspace_mode})",
        started_at=started_at,
        outcome=decision.outcome,
        bound=decision.bound,
        exit_code=None if decision.outcome == "infra_error" else decision.exit_code,
        failed_check=decision.failed_check,
        missing=decision.missing,
        artifacts=decision.artifacts,
        machine_seconds=decision.machine_seconds,
        evidence=evidence,
        headline=decision.headline,
        junit=decision.junit,
    )


def infra_result(spec: TrialSpec, reason: str, *, source: str, started_at: str | None = None) -> TrialResult:
    """An ``infra_error`` record for an attempt the executor lost (a Ray worker or node died).

    Parameters
    ----------
    spec
        The lost attempt.
    reason
        Why it was lost (recorded in the evidence and the excerpt).
    source
        The record's ``source`` (runner version and executor).
    started_at
        When the attempt started (default: now).

    Returns
    -------
    TrialResult
        An ``infra_error`` record, its evidence written to ``spec.evidence_dir``.
    """
    _fresh_evidence_dir(spec)
    return _finish(
        spec,
        source=source,
        started_at=started_at or now_rfc3339(),
        outcome="infra_error",
        bound=None,
        exit_code=None,
        failed_check=None,
        missing=None,
        artifacts=None,
        machine_seconds=None,
        evidence={"command": list(spec.case.contract.command), "checks": [], "infra_error": reason},
        headline=f"infra_error: {reason}",
        junit=[],
    )


def _finish(
    spec: TrialSpec,
    *,
    source: str,
    started_at: str,
    outcome: str,
    bound: str | None,
    exit_code: int | None,
    failed_check: str | None,
    missing: list[str] | None,
    artifacts: list[dict[str, str | int | None]] | None,
    machine_seconds: float | None,
    evidence: JSONObject,
    headline: str,
    junit: list[Path],
) -> TrialResult:
    """Write the evidence (empty stdout/stderr if none, evidence.json) and build the record."""
    case = spec.case
    stdout, stderr = spec.evidence_dir / "stdout", spec.evidence_dir / "stderr"
    for path in (stdout, stderr):
        if not path.exists():
            path.touch()
    if outcome != "passed":
        evidence["excerpt"] = excerpt(headline=headline, stderr=stderr, stdout=stdout, junit=junit)
    record: RunRecord = {
        "schema_version": 1,
        "record_id": f"{spec.run_set_id}/{case.case_id}/{spec.trial}/{spec.attempt}",
        "run_set_id": spec.run_set_id,
        **spec.record_base,
        "case_id": case.case_id,
        "case_version": case.version,
        "case_group": case.case_group,
        "trial": spec.trial,
        "attempt": spec.attempt,
        "candidate_digest": spec.candidate_digest,
        "outcome": outcome,
        "bound": bound,
        "exit_code": exit_code,
        "failed_check": failed_check,
        "missing_artifacts": missing,
        "slices": list(case.slices) if case.slices is not None else None,
        "severity": case.severity,
        "split": case.split,
        "machine_seconds": None if machine_seconds is None else round(float(machine_seconds), 6),
        "started_at": started_at,
        "ended_at": now_rfc3339(),
        "stdout_path": f"{spec.evidence_rel}/stdout",
        "stdout_digest": digest_file(stdout),
        "stderr_path": f"{spec.evidence_rel}/stderr",
        "stderr_digest": digest_file(stderr),
        "artifacts": artifacts,
        "source": source,
    }
    evidence = {"record_id": record["record_id"], "outcome": outcome, "bound": bound, **evidence}
    (spec.evidence_dir / "evidence.json").write_text(
        json.dumps(evidence, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    return TrialResult(record=record, evidence=evidence)
