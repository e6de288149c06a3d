"""The golden set on disk: proposals, approvals, retirements, reclassifications, in one event log.

``SET/golden.json`` holds ``{"format": "gatestats-golden/1", "events": [...]}``, append-only;
``SET/cases/`` the approved cases (what ``gatestats run SET/cases`` runs), ``SET/proposed/`` the
proposals, ``SET/retired/ID@HEX12/`` retired versions. Every change happens under an exclusive
lock on ``SET/.lock``; a case directory is written whole through the runner's ``write_case`` and
the event is appended after it, or the directory is removed again (docs/golden.md).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from gatestats._typing import JSONObject, JSONValue
from gatestats.golden.neardup import DEFAULT_THRESHOLD, Twin, features, find_twins
from gatestats.golden.proposal import (
    Expectation,
    GoldenSetError,
    case_files,
    check_case_id,
    check_label,
    check_name,
    check_text,
    read_set_json,
)
from gatestats.golden.trace import Trace
from gatestats.io.files import write_atomic
from gatestats.io.limits import JSON_DOCUMENT_MAX_BYTES
from gatestats.vocabulary import SEVERITIES, SPLITS
from gatestats_runner.cases import Case, CaseError, load_case, load_case_set, write_case
from gatestats_runner.digests import digest_file, digest_json, tree_digest
from gatestats_runner.fsops import rename_once

__all__ = [
    "MANIFEST",
    "SET_FORMAT",
    "CaseState",
    "GoldenSetError",
    "Promotion",
    "approve",
    "case_file_bytes",
    "case_states",
    "events",
    "failure_class_of",
    "promote",
    "propose_revision",
    "retire",
    "set_version",
    "stale",
    "twins_of",
    "verifier_files",
]

MANIFEST = "golden.json"
SET_FORMAT = "gatestats-golden/1"
PROPOSED, APPROVED, RETIRED = "proposed", "cases", "retired"
REVIEW_PERIOD = timedelta(days=180)
_FAILURE_CLASS_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseState:
    """The current state of one case id, derived from the event log."""

    case_id: str
    status: str  # proposed | approved | retired
    split: str
    failure_class: str
    severity: str
    case_version: str
    verifier_digest: str
    proposed_by: str
    proposed_at: str
    approved_by: str | None = None
    approved_at: str | None = None
    owner: str | None = None
    review_by: str | None = None
    #: the approved verifier's per-file digests (relative path -> digest)
    verifier_files: Mapping[str, str] | None = None
    approved_version: str | None = None
    approved_verifier: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Promotion:
    """What ``promote`` wrote: the proposed case, its version and the twins it found."""

    case_id: str
    path: Path
    case_version: str
    split: str
    twins: tuple[Twin, ...]
    override_twin: str | None


def _now(now: datetime | None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "a+b") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            msg = f"{root}: another gatestats command is changing this golden set"
            raise GoldenSetError(msg) from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def events(root: str | Path) -> list[dict[str, Any]]:
    """The set's events, oldest first (an empty list for a new set).

    Parameters
    ----------
    root
        The golden set's directory (it holds ``golden.json``; a set without one is new).

    Returns
    -------
    list of dict
        The events as logged.

    Raises
    ------
    GoldenSetError
        ``golden.json`` is not a gatestats golden-set manifest.
    """
    path = Path(root) / MANIFEST
    if not path.exists() and not path.is_symlink():
        return []
    raw = read_set_json(path, what="golden-set manifest", limit=JSON_DOCUMENT_MAX_BYTES)
    if not isinstance(raw, dict) or raw.get("format") != SET_FORMAT or not isinstance(raw.get("events"), list):
        msg = f"{path}: field 'format': expected {SET_FORMAT!r} with a list of events"
        raise GoldenSetError(msg)
    return list(raw["events"])


def _append(root: Path, new: Sequence[Mapping[str, JSONValue]]) -> None:
    body = {"format": SET_FORMAT, "events": [*events(root), *new]}
    write_atomic(root / MANIFEST, (json.dumps(body, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))


def verifier_files(case_dir: Path) -> dict[str, str]:
    """Per-file digests of a case's verifier directory (relative path -> ``sha256:``).

    Parameters
    ----------
    case_dir
        A case directory (proposed, approved or retired); only its ``verifier/`` is read.

    Returns
    -------
    dict
        Relative path under ``verifier/`` to digest.
    """
    verifier = case_dir / "verifier"
    return {p.relative_to(verifier).as_posix(): digest_file(p) for p in sorted(verifier.rglob("*")) if p.is_file()}


def case_file_bytes(case_dir: Path) -> dict[str, bytes]:
    """Every regular file of a case directory (relative path -> bytes), refusing links and special files.

    Parameters
    ----------
    case_dir
        As in :func:`verifier_files`, but every file of it is read (``case.json``, snapshot, verifier).

    Returns
    -------
    dict
        Relative path to bytes.

    Raises
    ------
    GoldenSetError
        A symlink, FIFO, socket or device is in the case (its target could change under a digest).
    """
    out: dict[str, bytes] = {}
    for path in sorted(case_dir.rglob("*")):
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            msg = f"{path}: a case holds regular files and directories only (got a link or special file)"
            raise GoldenSetError(msg)
        if path.is_file():
            out[path.relative_to(case_dir).as_posix()] = path.read_bytes()
    return out


def case_states(root: str | Path) -> dict[str, CaseState]:
    """Every case id of the set with its current state, from the event log.

    Parameters
    ----------
    root
        As in :func:`events`: the states are replayed from its log.

    Returns
    -------
    dict
        Case id to :class:`CaseState` (status, split, labels, approval, review date).

    Raises
    ------
    GoldenSetError
        An event lacks a field its kind needs (the manifest was edited by hand).
    """
    try:
        return _states(events(root))
    except (KeyError, TypeError, AttributeError) as exc:
        msg = f"{Path(root) / MANIFEST}: an event lacks a field or has a wrong type ({exc!r}); the log was edited"
        raise GoldenSetError(msg) from None


def _states(log: list[dict[str, Any]]) -> dict[str, CaseState]:
    states: dict[str, dict[str, Any]] = {}
    for event in log:
        kind, cid = event.get("event"), event.get("case_id")
        if not isinstance(cid, str):
            continue
        if kind == "proposed":
            states[cid] = {
                "case_id": cid,
                "status": "proposed",
                "split": event["split"],
                "failure_class": event["failure_class"],
                "severity": event["severity"],
                "case_version": event["case_version"],
                "verifier_digest": event["verifier_digest"],
                "proposed_by": event["by"],
                "proposed_at": event["at"],
                **{k: v for k, v in states.get(cid, {}).items() if k.startswith(("approved", "owner", "review"))},
            }
            if cid in states and states[cid].get("approved_version"):
                states[cid]["status"] = "approved"  # a revision is pending; the approved version stays
        elif kind == "approved" and cid in states:
            states[cid] |= {
                "status": "approved",
                "case_version": event["case_version"],
                "verifier_digest": event["verifier_digest"],
                "approved_by": event["by"],
                "approved_at": event["at"],
                "owner": event["owner"],
                "review_by": event["review_by"],
                "verifier_files": event["verifier_files"],
                "approved_version": event["case_version"],
                "approved_verifier": event["verifier_digest"],
            }
        elif kind == "reclassified" and cid in states:
            states[cid] |= {"split": event["to"], "case_version": event["case_version"]}
            if states[cid].get("approved_version"):
                states[cid]["approved_version"] = event["case_version"]
        elif kind == "retired" and cid in states:
            states[cid]["status"] = "retired"
    return {cid: CaseState(**s) for cid, s in sorted(states.items())}


def twins_of(root: str | Path, case_id: str) -> set[str]:
    """Case ids linked to ``case_id`` as near-duplicates (either direction).

    Parameters
    ----------
    root
        As in :func:`events` (the proposals in its log hold the twin links).
    case_id
        The case.

    Returns
    -------
    set of str
        The ids of its twins, retired ones included.
    """
    out: set[str] = set()
    for event in events(root):
        if event.get("event") != "proposed":
            continue
        linked = {t["case_id"] for t in event.get("twins", [])}
        if event.get("case_id") == case_id:
            out |= linked
        elif case_id in linked:
            out.add(event["case_id"])
    return out


def failure_class_of(root: str | Path) -> dict[str, str]:
    """Case id -> failure class, for every case the set has ever held.

    Parameters
    ----------
    root
        As in :func:`events`; retired cases count too.

    Returns
    -------
    dict
        Case id to failure class.
    """
    return {cid: s.failure_class for cid, s in case_states(root).items()}


def set_version(root: str | Path) -> str:
    """The set's version as last approved: the digest of the approved contents (the ``(case id, case
    version)`` list, the runner's case-set version of ``SET/cases`` when it was approved).

    An edit of ``SET/cases`` made outside ``gatestats cases`` does not change it (and
    ``check_graders`` reports the edit); a new set has the digest of the empty list.

    Parameters
    ----------
    root
        As in :func:`events`: only the log is read, never ``SET/cases`` itself.

    Returns
    -------
    str
        A ``sha256:`` digest.
    """
    recorded = [e["set_version"] for e in events(root) if isinstance(e.get("set_version"), str)]
    return recorded[-1] if recorded else digest_json([])


def _disk_set_version(root: Path) -> str:
    cases = root / APPROVED
    if not cases.is_dir() or not any((d / "case.json").is_file() for d in cases.iterdir() if d.is_dir()):
        return digest_json([])
    return load_case_set(cases).version


def _case_features(case_dir: Path) -> frozenset[str]:
    trace_file = case_dir / "provenance" / "trace.json"
    if trace_file.is_file():
        data = read_set_json(trace_file, what="trace", limit=JSON_DOCUMENT_MAX_BYTES)
        return features(request=data["request"], tool_calls=data["tool_calls"], snapshot=data["snapshot"])
    request = (case_dir / "request.md").read_text(encoding="utf-8") if (case_dir / "request.md").is_file() else ""
    snapshot_dir = case_dir / "snapshot"
    snapshot = case_file_bytes(snapshot_dir) if snapshot_dir.is_dir() else {}
    return features(request=request, tool_calls=[], snapshot=snapshot)


def _live_dirs(root: Path) -> dict[str, tuple[Path, str]]:
    """Case id -> (directory, status) of every proposed or approved case (a pending revision wins)."""
    out: dict[str, tuple[Path, str]] = {}
    for status, sub in (("approved", APPROVED), ("proposed", PROPOSED)):
        base = root / sub
        if base.is_dir():
            for d in sorted(base.iterdir()):
                if d.is_dir() and not d.name.startswith(".") and (d / "case.json").is_file():
                    out[d.name] = (d, status)
    return out


def _check_labels(failure_class: str, severity: str, split: str) -> None:
    if not failure_class or not set(failure_class) <= _FAILURE_CLASS_CHARS or len(failure_class) > 64:
        msg = f"--failure-class: expected lower-case letters, digits and '_' (got {failure_class!r:.200})"
        raise GoldenSetError(msg)
    check_label(severity, SEVERITIES, where="--severity")
    check_label(split, SPLITS, where="--split")


def _twin_conflict(root: Path, case_id: str, split: str, twins: Sequence[Twin], override: str | None) -> None:
    clash = [t for t in twins if t.split == split]
    if clash and override is None:
        t = clash[0]
        msg = (
            f"{root}: case {case_id!r}: near-duplicate of {t.case_id!r} ({t.status}, Jaccard {t.jaccard:.2f}) "
            f"already in split {split!r}; twins must not share a split (put one in holdout), "
            "or pass --override-twin REASON to record why"
        )
        raise GoldenSetError(msg)


def _check_unused(root: Path, case_id: str, known: Mapping[str, CaseState]) -> None:
    """Refuse a case id already used: proposed, approved, retired, or a directory on disk."""
    if case_id in known or case_id in _live_dirs(root) or any((root / RETIRED).glob(f"{case_id}@*")):
        status = known[case_id].status if case_id in known else "on disk"
        msg = f"{root}: case id {case_id!r} is already used ({status}); choose another id"
        raise GoldenSetError(msg)


def _twins_of_trace(root: Path, trace: Trace, known: Mapping[str, CaseState], threshold: float) -> tuple[Twin, ...]:
    """The live cases whose features are near-duplicates of the trace's."""
    new = features(request=trace.request, tool_calls=[c.to_dict() for c in trace.tool_calls], snapshot=trace.snapshot)
    others = {}
    for cid, (d, status) in _live_dirs(root).items():
        split_of = (
            known[cid].split
            if cid in known
            else str(read_set_json(d / "case.json", what="case")["labels"].get("split"))
        )
        others[cid] = (_case_features(d), split_of, status)
    return find_twins(new, others, threshold=threshold)


def _provenance(trace: Trace, *, by: str, at: str, why: str | None) -> JSONObject:
    """Where the case came from: the trace's source and who promoted it, when and why."""
    return {
        "source_format": trace.source_format,
        "source": trace.source,
        "source_id": trace.source_id,
        "source_digest": trace.source_digest,
        "model": trace.model,
        "harness_version": trace.harness_version,
        "outcome": trace.outcome,
        "by": by,
        "at": at,
        "why": why,
    }


def _write_proposed(target: Path, files: Mapping[str, bytes]) -> Case:
    """Write the proposed case directory whole (the runner's ``write_case``)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        return write_case(target, files)
    except CaseError as exc:
        raise GoldenSetError(str(exc)) from None


def _log(root: Path, event: Mapping[str, JSONValue], *, by: str, at: datetime | None) -> JSONObject:
    """Log ``event`` stamped with who (``by``), when (``at``, default now) and the set version it makes."""
    logged: JSONObject = {**event, "by": by, "at": _now(at), "set_version": _disk_set_version(root)}
    _append(root, [logged])
    return logged


def _append_or_remove(root: Path, event: Mapping[str, JSONValue], target: Path) -> None:
    """Log ``event``; when that fails, remove the case directory it describes."""
    try:
        _append(root, [event])
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise


def _proposed_event(
    case: Case,
    trace: Trace,
    expectation: Expectation,
    *,
    labels: Mapping[str, str],
    twins: Sequence[Twin],
    override: str | None,
    by: str,
    at: str,
    why: str | None,
) -> JSONObject:
    """The log event of a proposal."""
    return {
        "event": "proposed",
        "case_id": case.case_id,
        "case_version": case.version,
        "verifier_digest": case.verifier_digest,
        **labels,
        "judges_without_calibration": [j.name for j in expectation.judges if not j.can_vote],
        "twins": [t.to_dict() for t in twins],
        "override_twin": override,
        "source_id": trace.source_id,
        "source_digest": trace.source_digest,
        "by": by,
        "at": at,
        "why": why,
    }


def promote(
    root: str | Path,
    trace: Trace,
    *,
    case_id: str,
    failure_class: str,
    severity: str,
    split: str,
    expectation: Expectation,
    by: str,
    why: str | None = None,
    override_twin: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    now: datetime | None = None,
) -> Promotion:
    """Write a *proposed* case from ``trace`` into ``root/proposed/CASE_ID`` and log the proposal.

    All or nothing: every input is checked first; a refused promotion writes nothing.

    Parameters
    ----------
    root
        As in :func:`events`.
    trace
        The trace the case is made from (:func:`gatestats.golden.read_trace`).
    case_id
        The new case's id (the runner's case-id rule).
    failure_class, severity, split
        The labels: lower-case letters, digits and ``_``; one of
        :data:`~gatestats.vocabulary.SEVERITIES`; one of :data:`~gatestats.vocabulary.SPLITS`.
    expectation
        The expected outcome (:func:`gatestats.golden.read_expect`).
    by, why
        Who proposes, and why this trace becomes a case (optional).
    override_twin
        The reason to put a near-duplicate in its twin's split (without it, that is refused).
    threshold, now
        The Jaccard similarity at which two cases are twins; the time recorded (default: now).

    Returns
    -------
    Promotion
        The case id, its directory, case version and split, its twins and the override recorded.

    Raises
    ------
    GoldenSetError
        A bad label, a case id already used (proposed, approved or retired), or a near-duplicate
        in the same split without ``override_twin``.
    """
    root = Path(root)
    check_case_id(case_id)
    _check_labels(failure_class, severity, split)
    by = check_name(by, where="--by")
    reason = check_text(why, where="--why") if why is not None else None
    override = check_text(override_twin, where="--override-twin") if override_twin is not None else None
    with _locked(root):
        known = case_states(root)
        _check_unused(root, case_id, known)
        twins = _twins_of_trace(root, trace, known, threshold)
        _twin_conflict(root, case_id, split, twins, override)
        at = _now(now)
        labels = {"split": split, "failure_class": failure_class, "severity": severity}
        files = case_files(
            trace=trace,
            expectation=expectation,
            **labels,
            provenance=_provenance(trace, by=by, at=at, why=reason),
            twins=[t.to_dict() for t in twins],
        )
        target = root / PROPOSED / case_id
        case = _write_proposed(target, files)
        event = _proposed_event(
            case, trace, expectation, labels=labels, twins=twins, override=override, by=by, at=at, why=reason
        )
        _append_or_remove(root, event, target)
    return Promotion(
        case_id=case_id, path=target, case_version=case.version, split=split, twins=twins, override_twin=override
    )


def propose_revision(
    root: str | Path, case_id: str, changes: Mapping[str, bytes], *, by: str, why: str, now: datetime | None = None
) -> Path:
    """Propose a new version of an approved case: its files with ``changes`` applied (e.g. a grader).

    The approved version stays in force until ``approve``.

    Parameters
    ----------
    root, case_id
        As in :func:`events`; an approved case without a pending revision.
    changes
        Relative path to the new bytes of each changed file.
    by, why
        Who proposes the revision, and why.
    now
        The time recorded (default: now, UTC).

    Returns
    -------
    Path
        The proposal's directory.

    Raises
    ------
    GoldenSetError
        The case is not approved or has a pending revision, a name or reason is bad, or the
        changed case is malformed.
    """
    root = Path(root)
    by, why = check_name(by, where="--by"), check_text(why, where="--why")
    with _locked(root):
        state = case_states(root).get(case_id)
        if state is None or state.status != "approved" or (root / PROPOSED / case_id).exists():
            msg = f"{root}: case {case_id!r}: only an approved case without a pending revision can be revised"
            raise GoldenSetError(msg)
        current = root / APPROVED / case_id
        files = case_file_bytes(current)
        files |= dict(changes)
        target = root / PROPOSED / case_id
        (root / PROPOSED).mkdir(exist_ok=True)
        try:
            case = write_case(target, files)
        except CaseError as exc:
            raise GoldenSetError(str(exc)) from None
        event: JSONObject = {
            "event": "proposed",
            "case_id": case_id,
            "revision_of": state.approved_version,
            "case_version": case.version,
            "verifier_digest": case.verifier_digest,
            "split": state.split,
            "failure_class": state.failure_class,
            "severity": state.severity,
            "twins": [],
            "by": by,
            "at": _now(now),
            "why": why,
        }
        _append_or_remove(root, event, target)
    return target


def _retire_dir(root: Path, case_dir: Path, version: str) -> Path:
    (root / RETIRED).mkdir(exist_ok=True)
    target = root / RETIRED / f"{case_dir.name}@{version.removeprefix('sha256:')[:12]}"
    rename_once(case_dir, target)
    return target


def approve(
    root: str | Path,
    case_id: str,
    *,
    by: str | None,
    owner: str | None = None,
    review_by: date | None = None,
    now: datetime | None = None,
) -> JSONObject:
    """The human decision: move the proposal of ``case_id`` into the set and log who approved it.

    Parameters
    ----------
    root
        As in :func:`events`.
    case_id
        A proposed case (or a proposed revision).
    by, owner
        Who approves (required: a person decides), and who owns the case (default: ``by``).
    review_by
        When the case is due for review (:func:`stale`).
    now
        When it is approved (default: now, UTC); the default ``review_by`` is 180 days later.

    Returns
    -------
    dict
        The ``approved`` event logged.

    Raises
    ------
    GoldenSetError
        No name, no proposal, or the proposal changed on disk since it was proposed.
    """
    root = Path(root)
    by = check_name(by, where="--by")
    owner = check_name(owner, where="--owner") if owner is not None else by
    check_case_id(case_id, where="case id")
    with _locked(root):
        proposal = root / PROPOSED / case_id
        last = next(
            (e for e in reversed(events(root)) if e.get("case_id") == case_id and e.get("event") == "proposed"), None
        )
        if last is None or not proposal.is_dir():
            msg = f"{root}: no proposed case {case_id!r} to approve"
            raise GoldenSetError(msg)
        expected = case_states(root)[case_id]
        pending_version = last["case_version"]
        if expected.status == "proposed":
            pending_version = expected.case_version  # reclassified while proposed
        on_disk = tree_digest(proposal)
        if on_disk != pending_version:
            msg = (
                f"{proposal}: changed since {last['by']} proposed it at {last['at']} "
                f"(version {on_disk}, proposed {pending_version}); propose it again"
            )
            raise GoldenSetError(msg)
        at = now or datetime.now(UTC)
        current = root / APPROVED / case_id
        (root / APPROVED).mkdir(exist_ok=True)
        if current.exists():
            _retire_dir(root, current, tree_digest(current))
        rename_once(proposal, current)
        case = load_case(current)
        review = review_by or (at.date() + REVIEW_PERIOD)
        event: JSONObject = {
            "event": "approved",
            "case_id": case_id,
            "case_version": case.version,
            "verifier_digest": case.verifier_digest,
            "verifier_files": verifier_files(current),
            "owner": owner,
            "review_by": review.isoformat(),
        }
        return _log(root, event, by=by, at=at)


def retire(root: str | Path, case_id: str, *, reason: str, by: str, now: datetime | None = None) -> JSONObject:
    """Retire an approved case (a new set version, never a silent replacement), with the reason.

    Parameters
    ----------
    root
        As in :func:`events`; the retired version moves to ``SET/retired/``.
    case_id
        An approved case.
    reason, by
        Why, and who retires it.
    now
        When it is retired (default: now, UTC).

    Returns
    -------
    dict
        The ``retired`` event logged.

    Raises
    ------
    GoldenSetError
        No approved case ``case_id``, or a bad name or reason.
    """
    root = Path(root)
    by, reason = check_name(by, where="--by"), check_text(reason, where="--reason")
    check_case_id(case_id, where="case id")
    with _locked(root):
        state = case_states(root).get(case_id)
        current = root / APPROVED / case_id
        if state is None or state.status != "approved" or not current.is_dir():
            msg = f"{root}: no approved case {case_id!r} to retire"
            raise GoldenSetError(msg)
        moved = _retire_dir(root, current, tree_digest(current))
        event = {
            "event": "retired",
            "case_id": case_id,
            "case_version": state.case_version,
            "moved_to": moved.name,
            "reason": reason,
        }
        return _log(root, event, by=by, at=now)


def stale(root: str | Path, *, today: date) -> tuple[CaseState, ...]:
    """Approved cases whose review date is before ``today``, oldest review first.

    Parameters
    ----------
    root
        As in :func:`events`; only approved cases have a review date.
    today
        The date to compare the review dates with.

    Returns
    -------
    tuple of CaseState
        The cases due for review.
    """
    late = [
        s
        for s in case_states(root).values()
        if s.status == "approved" and s.review_by and s.review_by < today.isoformat()
    ]
    return tuple(sorted(late, key=lambda s: (s.review_by or "", s.case_id)))
