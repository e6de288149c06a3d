"""Checks of a run against the protected set: changed graders, test cases used outside gate runs.

:func:`check_graders` is the gate hook: a run whose verifier digests differ from the approved
set's is blocked, and each finding names the case, the changed files, their owner and time, and
who approved the version in force.
"""

from __future__ import annotations

import pwd
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gatestats._typing import JSONObject
from gatestats.golden.proposal import read_set_json
from gatestats.golden.store import APPROVED, PROPOSED, case_states, events
from gatestats_runner.digests import digest_file, tree_digest

__all__ = ["Finding", "check_graders", "check_split_use", "judges_without_calibration"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One problem: the case it concerns, what kind, and a message naming who and what."""

    case_id: str
    kind: str
    message: str

    def to_dict(self) -> JSONObject:
        """The finding as JSON.

        Returns
        -------
        dict
            ``case_id``, ``kind`` and ``message``.
        """
        return {"case_id": self.case_id, "kind": self.kind, "message": self.message}

    def __str__(self) -> str:
        return f"case {self.case_id!r}: {self.message}"


def _owner(path: Path) -> str:
    st = path.lstat()
    try:
        name = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        name = f"uid {st.st_uid}"
    when = datetime.fromtimestamp(st.st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{name} at {when}"


def _changed_files(verifier: Path, approved: dict[str, str]) -> list[str]:
    if not verifier.is_dir():
        return ["the verifier directory is gone"]
    now = {p.relative_to(verifier).as_posix(): p for p in sorted(verifier.rglob("*")) if p.is_file()}
    out = []
    for name in sorted(set(now) | set(approved)):
        if name not in now:
            out.append(f"{name} removed")
        elif name not in approved:
            out.append(f"{name} added by {_owner(now[name])}")
        elif digest_file(now[name]) != approved[name]:
            out.append(f"{name} changed by {_owner(now[name])}")
    return out


def _verified_manifest(run_set: Path) -> Mapping[str, Any]:
    """The manifest of ``run_set``, read through the gate's door (checksums, seal, membership, evidence).

    Raises
    ------
    RecordFileError
        The run set fails a check (file, line and field named).
    """
    from gatestats.records import read_run_set  # noqa: PLC0415 - polars, on first use

    return read_run_set(run_set)[1].manifest or {}


def check_graders(golden_set: str | Path, run_set: str | Path) -> tuple[Finding, ...]:
    """Findings that block ``run_set``: a case whose verifier digest is not the approved one.

    Checks every case in the run set's manifest against the set's approvals (a case that is not
    approved is a finding too), and every approved case directory on disk against its approved
    version (an edit in place after approval).

    Parameters
    ----------
    golden_set, run_set
        The golden set whose approvals count, and the run set whose manifest is checked.

    Returns
    -------
    tuple of Finding
        Empty when every grader is the approved one.

    Raises
    ------
    RecordFileError
        The run set fails a check of the gate's reader (:func:`gatestats.records.read_run_set`).
    """
    root, run_set = Path(golden_set), Path(run_set)
    manifest = _verified_manifest(run_set)
    states = case_states(root)
    cases_dir = Path(str(manifest.get("cases_dir") or ""))
    findings: list[Finding] = []
    for entry in manifest.get("cases") or []:
        cid = str(entry.get("case_id"))
        state = states.get(cid)
        if state is None or state.approved_verifier is None:
            findings.append(Finding(case_id=cid, kind="not_approved", message="is not an approved case of the set"))
            continue
        if entry.get("verifier_digest") == state.approved_verifier:
            continue
        changed = _changed_files(cases_dir / cid / "verifier", dict(state.verifier_files or {}))
        pending = [
            e
            for e in events(root)
            if e.get("event") == "proposed"
            and e.get("case_id") == cid
            and e.get("verifier_digest") == entry.get("verifier_digest")
        ]
        who = f"; proposed by {pending[-1]['by']} at {pending[-1]['at']}, not approved" if pending else ""
        findings.append(
            Finding(
                case_id=cid,
                kind="grader_changed",
                message=(
                    f"the run's verifier {entry.get('verifier_digest')} is not the approved {state.approved_verifier} "
                    f"(approved by {state.approved_by} at {state.approved_at}){who}; "
                    f"changes: {', '.join(changed) or 'not on disk'}"
                ),
            )
        )
    for cid, state in states.items():
        current = root / APPROVED / cid
        if state.status != "approved" or not current.is_dir() or state.approved_version is None:
            continue
        if tree_digest(current) != state.approved_version:
            changed = _changed_files(current / "verifier", dict(state.verifier_files or {}))
            findings.append(
                Finding(
                    case_id=cid,
                    kind="edited_after_approval",
                    message=(
                        f"{current} was edited after {state.approved_by} approved it at {state.approved_at}; "
                        f"changes: {', '.join(changed) or 'outside the verifier'} (propose a revision instead)"
                    ),
                )
            )
    return tuple(findings)


def check_split_use(golden_set: str | Path, run_sets: Iterable[str | Path]) -> tuple[Finding, ...]:
    """``test`` cases that appear in a run set without a registered gate policy (not a gate run).

    Parameters
    ----------
    golden_set, run_sets
        The golden set whose ``test`` cases count, and the run sets that may have used them.

    Returns
    -------
    tuple of Finding
        One per misused ``test`` case.
    """
    states = case_states(golden_set)
    findings = []
    for run_set in run_sets:
        manifest = _verified_manifest(Path(run_set))
        if manifest.get("policy_digest"):
            continue
        for entry in manifest.get("cases") or []:
            cid = str(entry.get("case_id"))
            state = states.get(cid)
            if state is not None and state.split == "test":
                findings.append(
                    Finding(
                        case_id=cid,
                        kind="test_used_outside_gate",
                        message=(
                            f"a test-split case ran in {run_set} (run set {manifest.get('run_set_id')!r}), "
                            "which has no registered gate policy; reclassify it (gatestats cases reclassify)"
                        ),
                    )
                )
    return tuple(findings)


def judges_without_calibration(golden_set: str | Path) -> tuple[Finding, ...]:
    """Judge graders of live cases that name no calibration: they cannot vote in a gate.

    Parameters
    ----------
    golden_set
        The golden set (proposed and approved cases are read; retired ones are not).

    Returns
    -------
    tuple of Finding
        One per judge grader without a calibration.
    """
    root = Path(golden_set)
    findings = []
    for cid, state in case_states(root).items():
        if state.status == "retired":
            continue
        for sub in (APPROVED, PROPOSED):
            judges = root / sub / cid / "verifier" / "judges.json"
            if judges.is_file():
                for judge in read_set_json(judges, what="judge list").get("judges", []):
                    if judge.get("calibration") is None:
                        findings.append(
                            Finding(
                                case_id=cid,
                                kind="judge_uncalibrated",
                                message=f"judge {judge.get('name')!r} names no calibration: it cannot vote",
                            )
                        )
                break
    return tuple(findings)
