"""What a finished round means and what a reviser may learn from it.

:func:`classify` reads a round's final records and evidence and says which owner the observation
belongs to: the candidate (a revision may run), the environment (``infra_error``: retried by the
runner, never shown to the reviser) or the evaluator (a crashed or nondeterministic verifier:
blocks). :func:`write_feedback` builds the feedback package from the *deployable* channels of the
case contract only; hidden channels decide the outcome but none of their bytes is read into it.
Every selection is a fixed rule, never a model.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatestats_runner.case import Case, Contract
from gatestats_runner.checks import EXCERPT_CHARS, junit_cases
from gatestats_runner.contract import RunRecord
from gatestats_runner.digests import digest_file, digest_json
from gatestats_runner.journal import VerdictKind

__all__ = [
    "FEEDBACK_FORMAT",
    "FEEDBACK_JSON",
    "RoundVerdict",
    "classify",
    "final_records",
    "write_feedback",
]

FEEDBACK_FORMAT = "gatestats-feedback/1"
FEEDBACK_JSON = "feedback.json"
#: At most this many failed test cases, each failure text cut at this many characters.
_MAX_TESTS = 10
_DETAIL_CHARS = 1000
_TRACEBACK = "Traceback (most recent call last):"
_FRAME = re.compile(r'^\s+File "([^"]+)", line \d+')


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundVerdict:
    """A round's verdict: who owns it, why, and (for a candidate failure) its signature and first failing record."""

    kind: VerdictKind
    detail: str
    signature: str | None = None
    record: RunRecord | None = None


def final_records(records: list[RunRecord]) -> list[RunRecord]:
    """The last attempt of every trial (infra retries are earlier attempts), sorted by trial.

    Parameters
    ----------
    records
        One round's records.

    Returns
    -------
    list of dict
        One record per trial.
    """
    last: dict[int, RunRecord] = {}
    for record in records:
        if record["trial"] not in last or record["attempt"] > last[record["trial"]]["attempt"]:
            last[record["trial"]] = record
    return [last[t] for t in sorted(last)]


def _evidence_dir(run_set: Path, record: RunRecord) -> Path:
    return run_set / Path(str(record["stdout_path"])).parent


def _last_traceback(text: str) -> tuple[list[str], str] | None:
    """The frames' files and the exception line of a traceback that *ends* the text (an uncaught exception)."""
    lines = [line for line in text.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if line.startswith(_TRACEBACK)]
    if not starts:
        return None
    block = lines[starts[-1] :]
    ends = [i for i, line in enumerate(block) if i > 0 and not line.startswith((" ", "\t"))]
    if not ends or ends[0] != len(block) - 1:  # output after the exception line: it was caught
        return None
    files = [m.group(1) for line in block if (m := _FRAME.match(line))]
    return (files, block[-1]) if files else None


def _first_traceback(text: str) -> str | None:
    """The first Python traceback of a text, through its exception line (at most ``_DETAIL_CHARS``)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(_TRACEBACK):
            out = [line]
            for following in lines[i + 1 :]:
                out.append(following)
                if following.strip() and not following.startswith((" ", "\t")):
                    break
            return "\n".join(out)[:_DETAIL_CHARS]
    return None


def _read_text(path: Path, limit: int = 1 << 20) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _evaluator_crash(case: Case, run_set: Path, record: RunRecord) -> str | None:
    code = record.get("exit_code")
    if code is not None and code in case.contract.evaluator_exit:
        return f"the verifier reported its own failure: exit status {code} is in contract.feedback.evaluator_exit"
    if record["outcome"] != "failed":
        return None
    ended = _last_traceback(_read_text(run_set / str(record["stderr_path"])))
    if ended is None:
        return None
    files, exception = ended
    if files[-1].startswith("/verifier/") and not exception.startswith("AssertionError"):
        return f"the verifier crashed: uncaught {exception.split(':')[0]} in {files[-1]}"
    return None


def _signature(case: Case, run_set: Path, record: RunRecord) -> str:
    """Outcome, bound, failed check, exit status, missing artifacts and failed test names of every JUnit artifact."""
    evidence = _evidence_dir(run_set, record)
    tests = {
        rule.path: sorted(name for name, _, _ in junit_cases(evidence / "artifacts" / rule.path))
        for rule in case.contract.artifacts
        if rule.check == "junit"
    }
    return digest_json(
        {
            "outcome": record["outcome"],
            "bound": record.get("bound"),
            "failed_check": record.get("failed_check"),
            "exit_code": record.get("exit_code"),
            "missing_artifacts": sorted(record.get("missing_artifacts") or []),
            "failed_tests": tests,
        }
    )


def classify(case: Case, run_set: Path, finals: list[RunRecord]) -> RoundVerdict:
    """Who owns the round's observation: environment, evaluator, candidate — or it passed.

    Parameters
    ----------
    case
        The case.
    run_set
        The round's run set.
    finals
        Its final records (:func:`final_records`).

    Returns
    -------
    RoundVerdict
        The owner (``kind``), why, and for a candidate failure its signature and first record.
    """
    if not finals:
        return RoundVerdict(kind="infrastructure", detail="the round produced no record")
    infra = [r for r in finals if r["outcome"] == "infra_error"]
    if infra:
        reason = _read_json(_evidence_dir(run_set, infra[0]) / "evidence.json").get("infra_error", "infra_error")
        return RoundVerdict(
            kind="infrastructure",
            detail=f"{len(infra)} of {len(finals)} trials ended in infra_error after the runner's retries: {reason}",
        )
    for record in finals:
        crash = _evaluator_crash(case, run_set, record)
        if crash is not None:
            return RoundVerdict(kind="evaluator_crash", detail=f"trial {record['trial']}: {crash}")
    passed = [r for r in finals if r["outcome"] == "passed"]
    if passed and len(passed) < len(finals):
        return RoundVerdict(
            kind="evaluator_nondeterministic",
            detail=f"identical bytes, different verdicts: {len(passed)} of {len(finals)} trials passed",
        )
    if passed:
        return RoundVerdict(kind="passed", detail=f"{len(finals)} of {len(finals)} trials passed")
    first = finals[0]
    return RoundVerdict(
        kind="candidate_failure",
        detail=f"{len(finals)} of {len(finals)} trials failed (trial 0: {first['outcome']}, "
        f"{first.get('failed_check') or first.get('bound')})",
        signature=_signature(case, run_set, first),
        record=first,
    )


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # a candidate's file: anything unreadable is no evidence
        return {}
    return value if isinstance(value, dict) else {}


def _copy(source: Path, dest: Path, files: list[dict[str, str | int]], rel: str) -> bool:
    if not source.is_file() or source.is_symlink():
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)
    files.append({"path": rel, "digest": digest_file(dest), "bytes": dest.stat().st_size})
    return True


def _failed_checks(contract: Contract, evidence: Mapping[str, object], deployable: set[str]) -> list[dict[str, str]]:
    """The runner's ``FAIL`` messages about deployable artifacts (none from evidence that holds no list of them)."""
    checks = evidence.get("checks")
    return [
        {"channel": rule.path, "message": message[5:]}
        for message in (checks if isinstance(checks, list) else [])
        if isinstance(message, str)
        for rule in contract.artifacts
        if rule.path in deployable and message.startswith(f"FAIL {rule.path}:")
    ]


def _copy_artifacts(
    contract: Contract, evidence_dir: Path, dest: Path, deployable: set[str], files: list[dict[str, str | int]]
) -> list[dict[str, str]]:
    """Copy the deployable artifacts into the package; return the failed tests of their JUnit reports."""
    failed_tests: list[dict[str, str]] = []
    for rule in contract.artifacts:
        if rule.path not in deployable:
            continue
        source = evidence_dir / "artifacts" / rule.path
        _copy(source, dest / "evidence" / "artifacts" / rule.path, files, f"evidence/artifacts/{rule.path}")
        if rule.check == "junit":
            for name, message, text in junit_cases(source):
                if len(failed_tests) < _MAX_TESTS:
                    failed_tests.append(
                        {"channel": rule.path, "name": name, "message": message, "detail": text[:_DETAIL_CHARS]}
                    )
    return failed_tests


def _copy_streams(
    run_set: Path, record: RunRecord, dest: Path, deployable: set[str], files: list[dict[str, str | int]]
) -> str | None:
    """Copy the deployable output streams into the package; return the first traceback they show."""
    traceback: str | None = None
    for stream in ("stderr", "stdout"):
        if stream in deployable:
            source = run_set / str(record["stderr_path"] if stream == "stderr" else record["stdout_path"])
            _copy(source, dest / "evidence" / stream, files, f"evidence/{stream}")
            traceback = traceback or _first_traceback(_read_text(source))
    return traceback


def _headline(record: RunRecord, exit_status: dict[str, int | None] | None, failed_checks: list[dict[str, str]]) -> str:
    """The excerpt's first line: the bound, the exit status, the first failed check, or a hidden check."""
    if record["outcome"] == "resource_killed":
        return f"resource_killed: the {record['bound']} bound fired"
    if exit_status is not None and exit_status["got"] != exit_status["expected"]:
        return f"exit_status: expected {exit_status['expected']} (got {exit_status['got']})"
    if failed_checks:
        return f"failed: {failed_checks[0]['message']}"
    return "failed: a hidden check failed (its output is withheld)"


def _excerpt(headline: str, failed_tests: list[dict[str, str]], traceback: str | None) -> str:
    """Headline, failed tests with their details, and the traceback, cut at ``EXCERPT_CHARS``."""
    parts = [headline]
    if failed_tests:
        parts.append("failed tests:\n" + "\n".join(f"{t['name']}: {t['message']}" for t in failed_tests))
        parts.extend(t["detail"] for t in failed_tests if t["detail"])
    if traceback:
        parts.append(traceback)
    return "\n".join(parts)[:EXCERPT_CHARS]


def write_feedback(
    case: Case,
    run_set: Path,
    record: RunRecord,
    dest: Path,
    *,
    round_: int,
    candidate_digest: str,
    parent_digest: str | None,
) -> str:
    """Write ``dest/feedback.json`` and ``dest/evidence/`` from the deployable channels; return the package's digest.

    Only the files of deployable channels are opened: the hidden ones are never read, so none of
    their bytes can reach the package.

    Parameters
    ----------
    case
        The case whose contract names the deployable channels.
    run_set
        The round's run set.
    record
        The final record the feedback describes (its evidence lies beside ``stdout_path``).
    dest
        The package directory (created).
    round_
        The round number.
    candidate_digest, parent_digest
        The digest of the candidate that ran, and of the candidate it was revised from (``None``
        for the first round).

    Returns
    -------
    str
        The ``sha256:`` digest of ``feedback.json``.
    """
    contract = case.contract
    deployable = set(contract.deployable)
    evidence_dir = _evidence_dir(run_set, record)
    files: list[dict[str, str | int]] = []
    failed_checks = _failed_checks(contract, _read_json(evidence_dir / "evidence.json"), deployable)
    failed_tests = _copy_artifacts(contract, evidence_dir, dest, deployable, files)
    traceback = _copy_streams(run_set, record, dest, deployable, files)
    exit_status = None
    if "exit_status" in deployable and record.get("exit_code") is not None:
        exit_status = {"expected": contract.expected_exit, "got": record["exit_code"]}
    channels = {"exit_status", "stdout", "stderr"} | {a.path for a in contract.artifacts}
    package = {
        "format": FEEDBACK_FORMAT,
        "case_id": case.case_id,
        "case_version": case.version,
        "round": round_,
        "candidate_digest": candidate_digest,
        "parent_digest": parent_digest,
        "command": list(contract.command),
        "outcome": record["outcome"],
        "bound": record.get("bound"),
        "exit_status": exit_status,
        "failed_checks": failed_checks,
        "failed_tests": failed_tests,
        "traceback": traceback,
        "excerpt": _excerpt(_headline(record, exit_status, failed_checks), failed_tests, traceback),
        "deployable_channels": sorted(deployable),
        "hidden_channels": len(channels - deployable),
        "files": files,
        "record": {"record_id": record["record_id"], "checksum": record.get("checksum")},
    }
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / FEEDBACK_JSON
    path.write_text(json.dumps(package, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return digest_file(path)
