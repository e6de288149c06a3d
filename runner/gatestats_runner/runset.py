"""Running a run set: create or resume one and run its trials (the runner's engine; disk format in ``store``).

Not to be confused with :mod:`gatestats_runner.store` (the run set's files and how a line is read and
written) or :mod:`gatestats_runner.runsets` (the public API other owners use to read run sets and
register policies in them). This module decides *which trials run*: cases × k trials on N workers,
immutable and resumable.

A run set is created once (``manifest.json`` with ``complete: false``, the candidate copied in,
the case-set version and system digest fixed) and then only grows: each finished trial attempt
appends one fsync'd record. After a crash or ``kill -9``, :func:`run_run_set` with
``resume=True`` checks that the cases, the candidate, the number of trials and the system are the
ones in the manifest, sets a torn last line aside, and runs exactly the trials that have no final
record (an ``infra_error`` attempt is retried up to ``infra_retries`` times as attempt + 1).
When every planned trial has its final record the manifest says ``complete: true``.

One runner at a time holds a run set (an ``flock`` taken while the run set is still being built
and kept through the rename into place). What a killed runner leaves is removed by the next one,
only when a free lock proves that runner gone: a half-built ``.NAME.creating-PID-HEX/``
(:func:`sweep_stale_builds`), a manifest's temporary file, and the mounted workspaces and cgroups
of its trials.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import platform
import re
import secrets
import shutil
import stat
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

from gatestats_runner import __version__
from gatestats_runner._util import JSONObject, fsync_dir, now_rfc3339, short_id
from gatestats_runner.case import Case, CaseError, CaseSet, load_case_set
from gatestats_runner.cgroups import sweep_cgroups
from gatestats_runner.contract import RunRecord
from gatestats_runner.digests import digest_bytes, digest_json, tree_digest
from gatestats_runner.dispatch import AttemptFeed, feed_window
from gatestats_runner.executors import Executor, LocalExecutor
from gatestats_runner.fsops import abandoned
from gatestats_runner.sandbox import ABORT, Capabilities, Isolation, detect_capabilities
from gatestats_runner.store import (
    LOCK,
    MANIFEST,
    RECORDS,
    TRIALS,
    RecordFile,
    RecordWriter,
    RunSetError,
    RunSetLock,
    read_manifest,
    read_records,
    seal_records,
    write_manifest,
)
from gatestats_runner.trial import TrialResult, TrialSpec, infra_result
from gatestats_runner.workspace import WorkspaceMode, make_private_scratch, release_private_scratch, sweep_mounts

__all__ = [
    "ENFORCEABLE",
    "SYSTEM_PARTS",
    "OptionError",
    "Progress",
    "RunSetOptions",
    "RunSetSummary",
    "StaleBuildWarning",
    "run_run_set",
    "scratch_root",
    "sweep_killed_runners",
    "sweep_stale_builds",
]

#: System parts the caller supplies; the runner fills sandbox_image, verifier_version and retry_policy.
SYSTEM_PARTS = ("model_id", "prompt_version", "tools_digest", "orchestration_version")
#: What ``require_enforced`` may name: the bounds and protections the run-set manifest reports.
ENFORCEABLE = (
    "wall_clock",
    "cpu",
    "memory",
    "processes",
    "disk",
    "output",
    "open_files",
    "network",
    "filesystem",
    "environment",
)
CANDIDATE = "candidate"
_ISOLATIONS = ("auto", "bwrap", "none")
_WORKSPACES = ("overlay", "tmpfs-copy", "dir-copy")
#: A manifest's temporary file left by a writer killed between write and rename (see ``write_manifest``).
_MANIFEST_TMP = re.compile(rf"\.{re.escape(MANIFEST)}\.[0-9]+\.tmp")


class OptionError(ValueError):
    """An option has a value no run can have (``trials`` < 1, an unknown bound): a usage error (exit 2)."""


class StaleBuildWarning(UserWarning):
    """A half-built run set directory was found whose creator cannot be shown to be gone; it is left alone."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSetOptions:
    """What to run and where; see ``gatestats run --help`` for each option."""

    cases: Path
    candidate: Path
    out: Path
    trials: int
    resume: bool = False
    system: str = "candidate"
    system_parts: Mapping[str, str | None] = field(default_factory=dict)
    infra_retries: int = 2
    isolation: Isolation = "auto"
    workspace: WorkspaceMode = "overlay"
    require_enforced: tuple[str, ...] = ()
    policy_digest: str | None = None
    prepare_only: bool = False
    #: Correction lineage copied into the manifest and every record (``parent_candidate_digest``,
    #: ``correction_round``, ``feedback_digest``); None outside a correction loop.
    lineage: Mapping[str, Any] | None = None
    #: Run only these cases of ``cases`` (a sample of a stored run set; None: every case). The manifest,
    #: the case-set version and the plan cover only them.
    case_ids: tuple[str, ...] | None = None
    #: What a baseline re-run sampled (:mod:`gatestats_runner.baseline`): written into the manifest
    #: as ``baseline_sample`` (JSON values only) and checked on resume; None otherwise.
    baseline_sample: Mapping[str, Any] | None = None
    #: Run only the trials of these cases now (one batch of a sequential run): the manifest still covers
    #: every case of the run set, which the first batch creates and later batches resume (``resume``).
    #: None: every case.
    batch_cases: tuple[str, ...] | None = None
    #: With ``resume``: also run one new attempt (attempt + 1) of every trial whose final attempt is an
    #: ``infra_error`` whose retries are spent (an *unresolved* attempt); records are never rewritten.
    rerun_unresolved: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """Sent once before the first trial (``record`` None) and after every appended record."""

    done: int
    total: int
    record: RunRecord | None
    counts: Mapping[str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSetSummary:
    """The state of the run set when :func:`run_run_set` returns."""

    run_set_id: str
    out: Path
    complete: bool
    total_trials: int
    attempts_run: int
    counts: Mapping[str, int]
    isolation: Mapping[str, Any]
    torn_line_set_aside: Path | None = None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_options(options: RunSetOptions) -> None:
    """Reject option values no run can have, before anything is read or written (:class:`OptionError`)."""
    if not _is_int(options.trials) or options.trials < 1:
        msg = f"trials: expected an integer >= 1 (got {options.trials!r})"
        raise OptionError(msg)
    if not _is_int(options.infra_retries) or options.infra_retries < 0:
        msg = f"infra_retries: expected an integer >= 0 (got {options.infra_retries!r})"
        raise OptionError(msg)
    unknown = set(options.system_parts) - set(SYSTEM_PARTS)
    if unknown:
        msg = f"system_parts: unknown part(s) {', '.join(sorted(unknown))} (expected {', '.join(SYSTEM_PARTS)})"
        raise OptionError(msg)
    if options.isolation not in _ISOLATIONS:
        msg = f"isolation: expected one of {', '.join(_ISOLATIONS)} (got {options.isolation!r})"
        raise OptionError(msg)
    if options.workspace not in _WORKSPACES:
        msg = f"workspace: expected one of {', '.join(_WORKSPACES)} (got {options.workspace!r})"
        raise OptionError(msg)
    bad = [name for name in options.require_enforced if name not in ENFORCEABLE]
    if bad:
        msg = f"require_enforced: unknown bound(s) {', '.join(bad)} (expected some of {', '.join(ENFORCEABLE)})"
        raise OptionError(msg)
    if options.rerun_unresolved and not options.resume:
        msg = "rerun_unresolved: re-runs the unresolved attempts of an existing run set: use it with resume (--resume)"
        raise OptionError(msg)
    _lineage(options)


def _candidate_layout(candidate: Path, case_set: CaseSet) -> None:
    if not candidate.is_dir():
        msg = f"{candidate}: candidate directory does not exist"
        raise RunSetError(msg)
    for dirpath, dirnames, filenames in os.walk(candidate, followlinks=False):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                # A FIFO would hang the copy into the run set and a device could fill its disk.
                msg = f"{path}: not a regular file, directory or symlink (a candidate holds files only)"
                raise RunSetError(msg)
    ids = {c.case_id for c in case_set.cases}
    stray = sorted(
        p.name
        for p in candidate.iterdir()
        if not p.name.startswith(".") and not (p.is_dir() and not p.is_symlink() and p.name in ids)
    )
    if stray:
        msg = (
            f"{candidate}: expected one directory (not a symlink) per case id ({', '.join(sorted(ids))}); "
            f"unexpected entries: {', '.join(stray)}"
        )
        raise RunSetError(msg)


def _sandbox_image(caps: Capabilities) -> str:
    try:
        os_release = Path("/etc/os-release").read_text(encoding="utf-8")
    except OSError:
        os_release = ""
    return digest_json(
        {
            "runner": __version__,
            "isolation": caps.isolation,
            "bwrap_version": caps.bwrap_version,
            "workspace_mode": caps.workspace_mode,
            "enforcement": caps.enforcement(),
            "os_release": os_release,
            "kernel": platform.release(),
        }
    )


def _system(options: RunSetOptions, case_set: CaseSet, caps: Capabilities) -> tuple[str, dict[str, str | None]]:
    parts: dict[str, str | None] = {name: options.system_parts.get(name) for name in SYSTEM_PARTS}
    parts["sandbox_image"] = _sandbox_image(caps)
    parts["verifier_version"] = digest_json([[c.case_id, c.verifier_digest] for c in case_set.cases])
    parts["retry_policy"] = f"infra_error retried up to {options.infra_retries} times; other outcomes final"
    return digest_json(parts), parts


class _Session(TypedDict):
    """One runner session as the manifest's ``sessions`` lists it (``finished_at`` set when it ends)."""

    started_at: str
    finished_at: str | None
    pid: int
    host: str
    executor: str
    workers: int
    isolation: JSONObject


def _last_attempts(records: list[RunRecord]) -> dict[tuple[str, int], RunRecord]:
    """Each trial's record of its highest attempt (the one that counts)."""
    last: dict[tuple[str, int], RunRecord] = {}
    for record in records:
        key = (record["case_id"], record["trial"])
        if key not in last or record["attempt"] > last[key]["attempt"]:
            last[key] = record
    return last


def _plan(
    case_set: CaseSet, trials: int, records: list[RunRecord], retries: int, *, rerun_unresolved: bool = False
) -> list[tuple[str, int, int]]:
    """(case_id, trial, attempt) for every trial without a final record (and, to re-run, every unresolved one)."""
    last = _last_attempts(records)
    pending: list[tuple[str, int, int]] = []
    for case in case_set.cases:
        for trial in range(trials):
            previous = last.get((case.case_id, trial))
            if previous is None:
                pending.append((case.case_id, trial, 0))
            elif not _final(previous, retries) or (rerun_unresolved and previous["outcome"] == "infra_error"):
                pending.append((case.case_id, trial, previous["attempt"] + 1))
    return pending


def _final_counts(records: list[RunRecord], retries: int, pending: list[tuple[str, int, int]]) -> Counter[str]:
    """Outcomes of the trials whose final record is written and that are not about to run again."""
    again = {(case_id, trial) for case_id, trial, _ in pending}
    return Counter(
        r["outcome"] for key, r in _last_attempts(records).items() if key not in again and _final(r, retries)
    )


def _final(record: RunRecord, retries: int) -> bool:
    return bool(record["outcome"] != "infra_error" or record["attempt"] >= retries)


def _evidence_rel(case_id: str, trial: int, attempt: int) -> str:
    return f"{TRIALS}/{case_id}/t{trial:04d}-a{attempt}"


def _remove_uncommitted(out: Path, records: list[RunRecord]) -> None:
    """Evidence directories without a record (a crash before the append) are garbage."""
    kept = {_evidence_rel(r["case_id"], r["trial"], r["attempt"]) for r in records}
    trials = out / TRIALS
    if not trials.is_dir():
        return
    for case_dir in trials.iterdir():
        for attempt_dir in case_dir.iterdir() if case_dir.is_dir() else ():
            if f"{TRIALS}/{case_dir.name}/{attempt_dir.name}" not in kept:
                shutil.rmtree(attempt_dir, ignore_errors=True)


def _verify_resume(
    manifest: Mapping[str, object], options: RunSetOptions, case_set: CaseSet, system_digest: str
) -> None:
    out = options.out
    checks = [
        ("case_set_version", case_set.version, f"the cases in {options.cases} changed"),
        ("trials", options.trials, "a different number of trials was asked"),
        ("system", options.system, "a different system label was given"),
        ("system_digest", system_digest, "a system part changed (model, prompt, tools, sandbox, verifier or retries)"),
        ("candidate_digest", tree_digest(options.candidate), f"the candidate's bytes in {options.candidate} changed"),
        ("lineage", _lineage(options), "a different correction lineage was given"),
        ("baseline_sample", _baseline_sample(options), "a different baseline sample was given"),
    ]
    for name, value, why in checks:
        if manifest.get(name) != value:
            msg = (
                f"{out / 'manifest.json'}: field '{name}': cannot resume: {why} "
                f"(manifest {manifest.get(name)!r}, now {value!r}); start a new run set"
            )
            raise RunSetError(msg)
    if tree_digest(out / CANDIDATE) != manifest.get("candidate_digest"):
        msg = f"{out / CANDIDATE}: the run set's copy of the candidate was modified; the run set is damaged"
        raise RunSetError(msg)


_LINEAGE_FIELDS = ("parent_candidate_digest", "correction_round", "feedback_digest")


def _lineage(options: RunSetOptions) -> dict[str, Any] | None:
    """The lineage fields of a correction round, all three present; None outside a correction loop."""
    if options.lineage is None:
        return None
    unknown = set(options.lineage) - set(_LINEAGE_FIELDS)
    if unknown:
        msg = f"lineage: unknown field(s) {', '.join(sorted(unknown))} (expected {', '.join(_LINEAGE_FIELDS)})"
        raise OptionError(msg)
    return {name: options.lineage.get(name) for name in _LINEAGE_FIELDS}


def _selected(case_set: CaseSet, case_ids: tuple[str, ...] | None) -> CaseSet:
    """The cases of ``case_ids`` only (a sample), with the version of that subset; every case for None."""
    if case_ids is None:
        return case_set
    known = {c.case_id for c in case_set.cases}
    unknown = sorted(set(case_ids) - known)
    if unknown or not case_ids:
        msg = f"{case_set.root}: case_ids: expected ids of cases in this directory (got {sorted(set(case_ids))!r})"
        raise CaseError(msg)
    cases = tuple(c for c in case_set.cases if c.case_id in set(case_ids))
    return CaseSet(root=case_set.root, cases=cases, version=digest_json([[c.case_id, c.version] for c in cases]))


def _case_set(options: RunSetOptions) -> CaseSet:
    """The cases to run: loaded, the candidate's layout checked against them, selected, the batch checked."""
    case_set = load_case_set(options.cases)
    _candidate_layout(options.candidate, case_set)
    case_set = _selected(case_set, options.case_ids)
    _check_batch(case_set, options.batch_cases)
    return case_set


def _check_batch(case_set: CaseSet, batch_cases: tuple[str, ...] | None) -> None:
    """Refuse a batch that is empty or names a case twice or one not in ``case_set`` (:class:`OptionError`)."""
    if batch_cases is None:
        return
    known = {c.case_id for c in case_set.cases}
    unknown = sorted(set(batch_cases) - known)
    if not batch_cases or unknown or len(set(batch_cases)) != len(batch_cases):
        msg = f"batch_cases: expected distinct ids of cases in {case_set.root} (got {list(batch_cases)!r})"
        raise OptionError(msg)


def _baseline_sample(options: RunSetOptions) -> dict[str, Any] | None:
    """``baseline_sample`` as the manifest stores it (a JSON round trip), None when not given."""
    if options.baseline_sample is None:
        return None
    loaded: dict[str, Any] = json.loads(json.dumps(dict(options.baseline_sample), sort_keys=True))
    return loaded


def _case_entry(case: Case) -> dict[str, Any]:
    """What the manifest records of a case: versions, the request's digest, tools, turn limit, contract."""
    contract = case.contract
    return {
        "case_id": case.case_id,
        "case_version": case.version,
        "verifier_digest": case.verifier_digest,
        "request_digest": None if case.request is None else digest_bytes(case.request.encode("utf-8")),
        "tools": list(case.tools),
        "turn_limit": case.turn_limit,
        "command": list(contract.command),
        "expected_exit": contract.expected_exit,
        "artifacts": [dataclasses.asdict(a) for a in contract.artifacts],
        "limits": dataclasses.asdict(contract.limits),
        "network": contract.network,
        "problems": list(case.problems),
    }


def scratch_root() -> Path:
    """Where this user's trial workspaces are made: mount points as root, else copies on /dev/shm (a tmpfs).

    Returns
    -------
    Path
        ``gatestats-runner-UID`` (mode 0700, created) on /dev/shm, or in the temporary directory as
        root or where /dev/shm is not writable.
    """
    uid = os.geteuid()
    shm = Path("/dev/shm")
    base = shm if uid != 0 and shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())
    root = base / f"gatestats-runner-{uid}"
    root.mkdir(mode=0o700, exist_ok=True)
    return root


_SCRATCH_NAME = re.compile(r"rs-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}")


def _claim_stale(scratch: Path) -> int | None:
    """The locked descriptor of ``scratch``'s lock when no runner holds it; None when one does.

    The lock must still be the file at ``scratch/.lock`` once locked: a run set resumed meanwhile
    recreates its scratch (after taking the old lock, see :func:`_fresh_scratch`) with a new lock
    file, and the old one, locked by nobody, no longer stands for the directory.
    """
    try:
        fd = os.open(scratch / LOCK, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held, current = os.fstat(fd), os.stat(scratch / LOCK, follow_symlinks=False)
    except OSError:
        os.close(fd)  # a live runner's scratch, or its lock is gone
        return None
    if (held.st_dev, held.st_ino) != (current.st_dev, current.st_ino):
        os.close(fd)  # recreated since we opened it: a live runner's new scratch
        return None
    return fd


def _sweep_stale_scratch(root: Path, *, keep: str) -> list[Path]:
    """Unmount and remove the scratch of other run sets whose runner was killed (their lock is free).

    A runner killed mid-trial leaves its workspaces mounted (a tmpfs holds memory until it is
    unmounted); without this, only a ``--resume`` of that same run set would remove them. A
    scratch without a lock file (a runner older than this rule) is left alone.
    """
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(root) if _SCRATCH_NAME.fullmatch(e.name) and e.name != keep]
    except OSError:
        return removed
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        fd = _claim_stale(Path(entry.path))
        if fd is None:
            continue
        try:
            release_private_scratch(Path(entry.path))
            removed.append(Path(entry.path))
        finally:
            os.close(fd)
    return removed


def sweep_killed_runners(isolation: Isolation = "auto") -> list[Path]:
    """Unmount and remove what killed runners left (their scratch and cgroups), as every runner does when it starts.

    For a caller that may start no runner: a correction loop resumed after a kill with no round left to run
    would otherwise leave the killed runner's mounts until the next runner on the machine starts.

    Parameters
    ----------
    isolation
        The isolation asked for (which cgroups are looked at).

    Returns
    -------
    list of Path
        The scratch directories removed.
    """
    return _sweep_killed(scratch_root(), keep="", caps=detect_capabilities(isolation))


def _sweep_killed(root: Path, *, keep: str, caps: Capabilities) -> list[Path]:
    """:func:`_sweep_stale_scratch`, then each swept run set's leftover cgroups."""
    stale = _sweep_stale_scratch(root, keep=keep)
    for scratch in stale:
        sweep_cgroups(caps.cgroups, f"gatestats-{short_id(scratch.name)}-")
    return stale


def _new_run_set_id() -> str:
    return f"rs-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(4)}"


def run_run_set(
    options: RunSetOptions,
    *,
    executor: Executor | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> RunSetSummary:
    """Create (or resume) a run set and run every trial that has no final record.

    Parameters
    ----------
    options
        The run set: cases, candidate, output directory, trials, system, isolation, resume.
    executor
        Where the trials run (default: a :class:`~gatestats_runner.executors.LocalExecutor`).
    progress
        Called before the first attempt and after each attempt's record is written.

    Returns
    -------
    RunSetSummary
        Whether the run set is complete, the outcome counts, the attempts run now, the isolation.

    Raises
    ------
    CaseError
        A case is malformed.
    RunSetError
        The output directory exists (without ``resume``), is not a run set (with ``resume``),
        does not match the cases, candidate, trials or system in its manifest, is locked by
        another runner, or its records are damaged.
    SandboxError
        Required isolation is not available.
    """
    _check_options(options)
    case_set = _case_set(options)
    out = options.out.resolve()
    caps = detect_capabilities(options.isolation, workspace=options.workspace)
    enforcement = caps.enforcement()
    missing = [name for name in options.require_enforced if name not in enforcement["enforced"]]
    if missing:
        reasons = "; ".join(f"{m}: {enforcement['not_enforced'].get(m, 'unknown bound')}" for m in missing)
        msg = f"required bounds cannot be enforced on this machine: {reasons}"
        raise RunSetError(msg)
    system_digest, parts = _system(options, case_set, caps)
    executor = executor or LocalExecutor()
    session: _Session = {
        "started_at": now_rfc3339(),
        "finished_at": None,
        "pid": os.getpid(),
        "host": platform.node(),
        "executor": executor.name,
        "workers": executor.workers,
        "isolation": caps.describe(),
    }
    sweep_stale_builds(out)
    lock: RunSetLock | _DirLock
    if options.resume:
        _refuse_imported(read_manifest(out), out, options)  # a run set, before a lock file is made in it
        lock = RunSetLock(out)
        try:
            # Read again under the lock: a policy registration or a runner that just finished is kept.
            manifest = read_manifest(out)
            _verify_resume(manifest, options, case_set, system_digest)
        except BaseException:
            lock.release()
            raise
        manifest["sessions"] = [*manifest.get("sessions", []), session]
    else:
        # The lock taken while building is the run set's lock once renamed into place: no other
        # runner can slip in between creation and the first trial.
        manifest, lock = _create(options, out, case_set, system_digest, parts, session)
        if options.prepare_only:
            lock.release()
            return _prepared(manifest, out, len(case_set.cases) * options.trials, caps)
    try:
        return _run_locked(options, out, case_set, manifest, caps, session, executor, progress)
    finally:
        lock.release()


def _refuse_imported(manifest: Mapping[str, object], out: Path, options: RunSetOptions) -> None:
    """An imported run set has no cases or candidate to run again: its unresolved attempts stay bounded."""
    if manifest.get("origin") == "import":
        what = "re-run its unresolved attempts" if options.rerun_unresolved else "resume it"
        msg = (
            f"{out / MANIFEST}: field 'origin': the run set was imported from {manifest.get('source')!r}, not run "
            f"by the runner: cannot {what}; the gate keeps its unresolved attempts as bounds (docs/gate.md)"
        )
        raise RunSetError(msg)


class _DirLock:
    """An exclusive ``flock`` on ``DIR/.lock``, locked from the moment that file exists.

    The file is created under a temporary name, locked, then renamed into place, so a sweeper that
    finds ``.lock`` and can lock it knows its holder is gone (the kernel drops the lock with the
    process). Used for a run set being built (the file is then the run set's own lock, the one
    :class:`~gatestats_runner.store.RunSetLock` takes, and stays held after the rename into place)
    and for a runner's scratch directory (its trial workspaces).
    """

    def __init__(self, directory: Path) -> None:
        tmp = directory / f"{LOCK}.new"
        self._fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: nobody else holds it
            os.rename(tmp, directory / LOCK)
        except BaseException:
            os.close(self._fd)
            raise

    def release(self) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)


def _building_name(out_name: str) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(out_name)}\.creating-[0-9]+-[0-9a-f]{{8}}")


def sweep_stale_builds(out: Path) -> list[Path]:
    """Remove half-built run sets of ``out`` left by runners killed while creating it; return them.

    A candidate is a directory beside ``out`` named exactly ``.NAME.creating-PID-HEX`` (what
    :func:`run_run_set` makes) whose lock file can be locked now: its creator held that lock
    from the moment the file existed until the rename into place, so a free lock proves the
    creator is gone (a PID alone proves nothing: PIDs are reused, and the disk may be shared
    between machines). A live creator's directory is never touched. A directory without the lock
    file (a runner killed in the instant between ``mkdir`` and the lock, or one older than this
    rule) cannot be judged: it is left alone with a :class:`StaleBuildWarning`.

    Parameters
    ----------
    out
        The run set directory about to be created or resumed.

    Returns
    -------
    list of Path
        The half-built directories removed.
    """
    pattern = _building_name(out.name)
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(out.parent) if pattern.fullmatch(e.name)]
    except OSError:
        return removed
    for entry in entries:
        path = Path(entry.path)
        if not entry.is_dir(follow_symlinks=False):
            continue
        if not os.path.lexists(path / LOCK):
            warnings.warn(
                f"{path}: a half-built run set without its lock file; it is left alone "
                "(remove it by hand if no runner is creating it)",
                StaleBuildWarning,
                stacklevel=2,
            )
            continue
        fd = abandoned(path / LOCK)  # None: its creator is alive (or the lock cannot be taken here)
        if fd is None:
            continue
        try:
            shutil.rmtree(path)
            removed.append(path)
        except OSError:
            pass  # renamed into place meanwhile, or removed by another sweeper
        finally:
            os.close(fd)
    return removed


def _create(
    options: RunSetOptions,
    out: Path,
    case_set: CaseSet,
    system_digest: str,
    parts: dict[str, str | None],
    session: _Session,
) -> tuple[dict[str, Any], _DirLock]:
    """Make the run set in a hidden, locked directory and rename it into place: it exists whole or not at all.

    Returns the manifest and the lock, still held (it is the run set's lock after the rename).
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        msg = f"{out}: exists and is not empty (use --resume to continue a run set)"
        raise RunSetError(msg)
    out.parent.mkdir(parents=True, exist_ok=True)
    building = out.parent / f".{out.name}.creating-{os.getpid()}-{secrets.token_hex(4)}"
    building.mkdir()
    lock: _DirLock | None = None
    try:
        lock = _DirLock(building)
        try:
            shutil.copytree(options.candidate, building / CANDIDATE, symlinks=True)
        except OSError as exc:
            msg = f"{options.candidate}: the candidate could not be copied into the run set ({exc})"
            raise RunSetError(msg) from None
        manifest: dict[str, Any] = {
            "run_set_id": _new_run_set_id(),
            "runner_version": __version__,
            "complete": False,
            "started_at": session["started_at"],
            "finished_at": None,
            "cases_dir": str(case_set.root),
            "case_set_version": case_set.version,
            "cases": [_case_entry(c) for c in case_set.cases],
            "trials": options.trials,
            "infra_retries": options.infra_retries,
            "system": options.system,
            "system_digest": system_digest,
            "system_parts": parts,
            "policy_digest": options.policy_digest,
            "policy_registered_at": session["started_at"] if options.policy_digest else None,
            "candidate_source": str(options.candidate.resolve()),
            "candidate_digest": tree_digest(building / CANDIDATE),
            "candidate_case_digests": {
                c.case_id: tree_digest(building / CANDIDATE / c.case_id) for c in case_set.cases
            },
            "sessions": [session],
            "counts": {},
        }
        lineage = _lineage(options)
        if lineage is not None:
            manifest["lineage"] = lineage
        if options.baseline_sample is not None:
            manifest["baseline_sample"] = _baseline_sample(options)
        write_manifest(building, manifest)
        try:
            os.rename(building, out)  # replaces an empty directory atomically, never a non-empty one
        except OSError:
            # Another runner created the run set since the check above.
            msg = f"{out}: exists and is not empty (use --resume to continue a run set)"
            raise RunSetError(msg) from None
        fsync_dir(out.parent)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        if lock is not None:
            lock.release()
        raise
    return manifest, lock


def _prepared(manifest: dict[str, Any], out: Path, total: int, caps: Capabilities) -> RunSetSummary:
    """A run set created without trials (``prepare_only``): a policy can be registered before any record."""
    return RunSetSummary(
        run_set_id=manifest["run_set_id"],
        out=out,
        complete=False,
        total_trials=total,
        attempts_run=0,
        counts={},
        isolation=caps.describe(),
    )


def _resume_records(out: Path, case_set: CaseSet, manifest: Mapping[str, object]) -> RecordFile:
    """Clear a killed manifest write, rewrite the manifest, and read back the records this run set already holds."""
    for entry in os.scandir(out):  # a manifest write killed before its rename (we hold the lock: nobody writes)
        if _MANIFEST_TMP.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
    write_manifest(out, manifest)
    existing = read_records(out / RECORDS)
    for record in existing.records:
        if (
            record["run_set_id"] != manifest["run_set_id"]
            or record["case_version"] != case_set.get(record["case_id"]).version
        ):
            msg = f"{out / RECORDS}: record {record['record_id']!r} belongs to another run set or case version"
            raise RunSetError(msg)
    _remove_uncommitted(out, existing.records)
    return existing


def _wait_for_lock(lock: Path, *, timeout: float = 60.0) -> int | None:
    """``lock`` opened and locked, waiting up to ``timeout`` s for its holder; None when there is no such file.

    Raises
    ------
    RunSetError
        Still held after ``timeout`` seconds (another process uses this run set's scratch).
    """
    try:
        fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                msg = f"{lock.parent}: the run set's scratch is held by another process for over {timeout:.0f} s"
                raise RunSetError(msg) from None
            time.sleep(0.05)
        except OSError:
            os.close(fd)
            return None


def _fresh_scratch(run_set_id: str, caps: Capabilities) -> tuple[Path, _DirLock]:
    """This run set's private scratch, emptied of what a killed runner left, and locked; stale ones swept."""
    scratch = scratch_root() / run_set_id
    previous = _wait_for_lock(scratch / LOCK)  # a sweeper removing it finishes first; none starts now
    try:
        sweep_mounts(scratch, include_root=True)
        sweep_cgroups(caps.cgroups, f"gatestats-{short_id(run_set_id)}-")
        shutil.rmtree(scratch, ignore_errors=True)
        make_private_scratch(scratch)
        scratch_lock = _DirLock(scratch)
    finally:
        if previous is not None:
            os.close(previous)
    _sweep_killed(scratch.parent, keep=scratch.name, caps=caps)
    return scratch, scratch_lock


@dataclass(kw_only=True)
class _Trials:
    """Builds the spec of each attempt, and tallies the final records as they are written."""

    out: Path
    manifest: dict[str, Any]
    cases: dict[str, Case]
    record_base: RunRecord
    scratch: Path
    retries: int
    total: int
    counts: Counter[str]
    done: int = 0
    attempts_run: int = 0

    def spec(self, case_id: str, trial: int, attempt: int) -> TrialSpec:
        """The spec of one attempt of one trial."""
        rel = _evidence_rel(case_id, trial, attempt)
        layer = self.out / CANDIDATE / case_id
        return TrialSpec(
            case=self.cases[case_id],
            candidate_layer=layer if layer.is_dir() else None,
            candidate_digest=self.manifest["candidate_case_digests"][case_id],
            trial=trial,
            attempt=attempt,
            run_set_id=self.manifest["run_set_id"],
            record_base=self.record_base,
            evidence_dir=self.out / rel,
            evidence_rel=rel,
            scratch=self.scratch,
        )

    def progress(self, record: RunRecord | None) -> Progress:
        """Where the run set stands after ``record`` (``None``: before the first attempt)."""
        return Progress(done=self.done, total=self.total, record=record, counts=dict(self.counts))


def _record_base(options: RunSetOptions, case_set: CaseSet, manifest: dict[str, Any]) -> RunRecord:
    """The fields every record of this run set shares: system, its digest and parts, case-set version, lineage."""
    base = RunRecord(system=options.system, system_digest=manifest["system_digest"])
    base.update(manifest["system_parts"])
    base["task_set_version"] = case_set.version
    if manifest.get("lineage") is not None:
        base.update(manifest["lineage"])
    return base


def _result(future: Future[TrialResult], spec: TrialSpec, executor: Executor) -> TrialResult:
    """The attempt's result; a remote executor's lost attempt becomes an ``infra_error`` result."""
    try:
        return future.result()
    except Exception as exc:
        if executor.name == "local":
            raise  # a runner bug on this machine: stop loudly
        # A remote worker or node was lost: the environment failed, not the candidate.
        reason = f"executor {executor.name} lost the attempt: {type(exc).__name__}: {exc}"
        return infra_result(spec, reason[:2000], source=f"gatestats-runner {__version__} ({executor.name})")


def _drain(
    trials: _Trials,
    pending: list[tuple[str, int, int]],
    executor: Executor,
    writer: RecordWriter,
    progress: Callable[[Progress], None] | None,
) -> None:
    """Run the pending attempts, append each record, and resubmit an ``infra_error`` until its retries are spent.

    Attempts are fed to the executor a window at a time and taken back as each finishes
    (:class:`~gatestats_runner.dispatch.AttemptFeed`); a retry's back-off does not hold up the
    records of the attempts that finish meanwhile.
    """
    if progress is not None:
        progress(trials.progress(None))
    feed = AttemptFeed(executor, (trials.spec(*key) for key in pending), window=feed_window(executor))
    for s, future in feed:
        result = _result(future, s, executor)
        if result.files is not None:
            _write_files(s.evidence_dir, result.files)
        written = writer.append(result.record)
        trials.attempts_run += 1
        if _final(written, trials.retries):
            trials.counts[written["outcome"]] += 1
            trials.done += 1
        else:
            feed.retry(trials.spec(s.case.case_id, s.trial, s.attempt + 1), delay=0.05 * (s.attempt + 1))
        if progress is not None:
            progress(trials.progress(written))


def _run_locked(
    options: RunSetOptions,
    out: Path,
    case_set: CaseSet,
    manifest: dict[str, Any],
    caps: Capabilities,
    session: _Session,
    executor: Executor,
    progress: Callable[[Progress], None] | None,
) -> RunSetSummary:
    """Run the trials that have no final record yet, then seal the records and close the manifest."""
    existing = _resume_records(out, case_set, manifest)
    pending = _plan(
        case_set, options.trials, existing.records, options.infra_retries, rerun_unresolved=options.rerun_unresolved
    )
    if options.batch_cases is not None:
        batch = set(options.batch_cases)
        pending = [unit for unit in pending if unit[0] in batch]
    scratch, scratch_lock = _fresh_scratch(manifest["run_set_id"], caps)
    counts = _final_counts(existing.records, options.infra_retries, pending)
    trials = _Trials(
        out=out,
        manifest=manifest,
        cases={c.case_id: c for c in case_set.cases},
        record_base=_record_base(options, case_set, manifest),
        scratch=scratch,
        retries=options.infra_retries,
        total=len(case_set.cases) * options.trials,
        counts=counts,
        done=sum(counts.values()),
    )
    writer = RecordWriter(out / RECORDS)
    try:
        executor.start(caps)
        _drain(trials, pending, executor, writer, progress)
        executor.shutdown()  # before the scratch is released: a local executor still removes workspaces
    except BaseException:
        ABORT.set()  # kill the running trials now; their results are never appended
        try:
            executor.shutdown(cancel=True)
        finally:
            ABORT.clear()
        raise
    finally:
        writer.close()
        release_private_scratch(scratch)
        scratch_lock.release()
    _close_manifest(options, case_set, manifest, session, out, trials)
    return RunSetSummary(
        run_set_id=manifest["run_set_id"],
        out=out,
        complete=manifest["complete"],
        total_trials=trials.total,
        attempts_run=trials.attempts_run,
        counts=dict(trials.counts),
        isolation=caps.describe(),
        torn_line_set_aside=existing.torn_path,
    )


def _close_manifest(
    options: RunSetOptions,
    case_set: CaseSet,
    manifest: dict[str, Any],
    session: _Session,
    out: Path,
    trials: _Trials,
) -> None:
    """Seal the records and write the final manifest; raise when the cases changed while the run set ran."""
    now = load_case_set(options.cases)
    try:
        changed = _selected(now, options.case_ids).version != case_set.version
    except CaseError:  # a sampled case was removed while the run set ran
        changed = True
    session["finished_at"] = now_rfc3339()
    manifest["complete"] = trials.done == trials.total and not changed
    manifest["finished_at"] = session["finished_at"] if manifest["complete"] else None
    manifest["counts"] = dict(trials.counts)
    manifest["records_seal"] = seal_records(out)
    if changed:
        manifest["error"] = f"the cases in {options.cases} changed while the run set ran; its trials are not comparable"
    write_manifest(out, manifest)
    if changed:
        raise RunSetError(manifest["error"])


def _write_files(root: Path, files: Mapping[str, bytes]) -> None:
    if root.exists():
        shutil.rmtree(root)
    for rel, data in files.items():
        path = (root / rel).resolve()
        if not path.is_relative_to(root.resolve()):
            msg = f"evidence file {rel!r} escapes {root}"
            raise RunSetError(msg)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
