"""The correction loop: round → verdict → (feedback → reviser → new candidate) → round … → a recorded stop.

Each round is its own run set (``OUT/rounds/CASE/rNN/``) of the round's candidate
(``OUT/lineage/CASE/rNN/CASE/``) with the lineage in its manifest and every record. The journal
(``OUT/journal.jsonl``) announces every step; ``resume`` continues from it (see ``docs/correction.md``).
"""

from __future__ import annotations

import math
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatestats_runner._util import fsync_dir, now_rfc3339
from gatestats_runner.case import Case, load_case_set
from gatestats_runner.correction._feedback import classify, final_records, write_feedback
from gatestats_runner.correction._reviser import call_reviser, prepare_workdir
from gatestats_runner.digests import tree_digest
from gatestats_runner.journal import (
    JOURNAL,
    JOURNAL_FORMAT,
    STOP_REASONS,
    CaseState,
    Journal,
    read_journal,
    replay,
)
from gatestats_runner.runset import OptionError, RunSetOptions, _candidate_layout, run_run_set, sweep_killed_runners
from gatestats_runner.sandbox import Isolation
from gatestats_runner.store import LOCK, MANIFEST, RECORDS, RunSetError, RunSetLock, read_records

__all__ = ["STOP_REASONS", "CaseResult", "CorrectionOptions", "CorrectionSummary", "run_correction"]

_COST_FIELDS = ("cost_usd", "cost_model_usd", "cost_tool_usd", "cost_execution_usd")
_SAME_WHEN_RESUMED = (
    "case_set_version",
    "candidate_digest",
    "reviser",
    "max_rounds",
    "trials",
    "budget_usd",
    "budget_seconds",
    "reviser_timeout",
    "infra_retries",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CorrectionOptions:
    """What ``gatestats correct`` runs; see docs/correction.md for each option."""

    cases: Path
    candidate: Path
    reviser: tuple[str, ...]
    out: Path
    max_rounds: int = 3
    budget_usd: float | None = None
    budget_seconds: float | None = None
    trials: int = 1
    reviser_timeout: float = 600.0
    infra_retries: int = 2
    resume: bool = False
    isolation: Isolation = "auto"


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    """One case's loop: why it stopped, after how many rounds, its lineage and its spend."""

    case_id: str
    stop: str
    detail: str
    rounds: int
    first_verdict: str | None
    final_digest: str
    lineage: tuple[dict[str, Any], ...]
    usd: float
    seconds: float

    @property
    def recovered(self) -> bool:
        """Failed round 0 as a candidate failure and passed in a later round."""
        return self.first_verdict == "candidate_failure" and self.stop == "passed"


@dataclass(frozen=True, slots=True, kw_only=True)
class CorrectionSummary:
    """Every case's result, in case order."""

    out: Path
    cases: tuple[CaseResult, ...]
    torn_line_set_aside: Path | None = None


def _positive(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _check(options: CorrectionOptions) -> None:
    def bad(name: str, expected: str, value: object) -> OptionError:
        return OptionError(f"{name}: expected {expected} (got {value!r})")

    if not isinstance(options.max_rounds, int) or isinstance(options.max_rounds, bool) or options.max_rounds < 0:
        raise bad("--max-rounds", "an integer >= 0", options.max_rounds)
    if not isinstance(options.trials, int) or isinstance(options.trials, bool) or options.trials < 1:
        raise bad("--trials", "an integer >= 1", options.trials)
    for name, value in (("--budget-usd", options.budget_usd), ("--budget-seconds", options.budget_seconds)):
        if value is not None and not _positive(value):
            raise bad(name, "a finite number > 0", value)
    if not _positive(options.reviser_timeout):
        raise bad("--reviser-timeout", "a finite number > 0", options.reviser_timeout)
    if not options.reviser or not all(isinstance(a, str) and a for a in options.reviser):
        raise bad("--reviser", "a command", options.reviser)
    if not isinstance(options.infra_retries, int) or options.infra_retries < 0:
        raise bad("--infra-retries", "an integer >= 0", options.infra_retries)


def _start_event(options: CorrectionOptions, case_set_version: str) -> dict[str, Any]:
    return {
        "event": "start",
        "format": JOURNAL_FORMAT,
        "at": now_rfc3339(),
        "cases_dir": str(options.cases.resolve()),
        "case_set_version": case_set_version,
        "candidate_source": str(options.candidate.resolve()),
        "candidate_digest": tree_digest(options.candidate),
        "reviser": list(options.reviser),
        "max_rounds": options.max_rounds,
        "trials": options.trials,
        "budget_usd": options.budget_usd,
        "budget_seconds": options.budget_seconds,
        "reviser_timeout": options.reviser_timeout,
        "infra_retries": options.infra_retries,
    }


def run_correction(
    options: CorrectionOptions, *, progress: Callable[[dict[str, Any]], None] | None = None
) -> CorrectionSummary:
    """Run (or resume) the correction loop on every case; ``progress`` receives every journaled event.

    Parameters
    ----------
    options
        The loop: cases, first candidate, reviser, output directory, stops, trials, isolation, resume.
    progress
        Called with each event as it is written to the journal.

    Returns
    -------
    CorrectionSummary
        Every case's stop reason, rounds, lineage and spend.

    Raises
    ------
    OptionError
        An option no loop can have (usage error).
    CaseError
        A case is malformed.
    RunSetError
        The output exists (without ``resume``), is not a correction output or does not match it
        (with ``resume``), is in use by another loop, or its journal or stored candidates are damaged.
    SandboxError
        Required isolation is not available.
    """
    _check(options)
    case_set = load_case_set(options.cases)
    _candidate_layout(options.candidate, case_set)
    out = options.out.resolve()
    start = _start_event(options, case_set.version)
    torn: Path | None = None
    if options.resume:
        if not (out / JOURNAL).is_file() and not _not_started(out):
            msg = f"{out / JOURNAL}: no correction journal (not a correction output directory; drop --resume)"
            raise RunSetError(msg)
        lock = RunSetLock(out)
        try:
            events, torn = read_journal(out / JOURNAL, repair=True) if (out / JOURNAL).exists() else ([], None)
            if events:  # no complete line yet: the loop never started, and starts now
                _verify_resume(out, events, start)
            sweep_killed_runners(options.isolation)  # a killed round's mounts, even when no round is left to run
        except BaseException:
            lock.release()
            raise
    else:
        lock = _fresh_out(out)
        events = []
    journal = Journal(out / JOURNAL)
    try:
        if not events:
            events.append(journal.append(start))
        states = replay(events)
        loop = _Loop(options=options, out=out, journal=journal, progress=progress)
        results = tuple(
            loop.run_case(case, states.get(case.case_id) or CaseState(case_id=case.case_id)) for case in case_set.cases
        )
    finally:
        journal.close()
        lock.release()
    return CorrectionSummary(out=out, cases=results, torn_line_set_aside=torn)


def _not_started(out: Path) -> bool:
    """Whether ``out`` is a directory a loop left before its first durable step (reused, never a dead end).

    That is: nothing, the lock file, an empty journal or both (a loop killed between creating
    ``--out`` and journaling its start). A fresh run reuses it; ``--resume`` starts the loop in it.
    """
    try:
        names = {e.name for e in os.scandir(out)}
        empty = JOURNAL not in names or (out / JOURNAL).stat().st_size == 0
        return names <= {LOCK, JOURNAL} and empty
    except OSError:
        return False


def _fresh_out(out: Path) -> RunSetLock:
    """Create (or reuse, :func:`_not_started`) the output directory of a new loop and lock it."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not _not_started(out):
        msg = f"{out}: exists and is not empty (use --resume to continue a correction loop)"
        raise RunSetError(msg)
    out.mkdir(parents=True, exist_ok=True)
    lock = RunSetLock(out)
    if not _not_started(out):  # another loop journaled its start between the check and the lock
        lock.release()
        msg = f"{out}: exists and is not empty (use --resume to continue a correction loop)"
        raise RunSetError(msg)
    return lock


def _verify_resume(out: Path, events: list[dict[str, Any]], start: dict[str, Any]) -> None:
    if not events or events[0].get("event") != "start" or events[0].get("format") != JOURNAL_FORMAT:
        msg = f"{out / JOURNAL}: line 1: not the start of a {JOURNAL_FORMAT} journal"
        raise RunSetError(msg)
    first = events[0]
    for name in _SAME_WHEN_RESUMED:
        if first.get(name) != start[name]:
            msg = (
                f"{out / JOURNAL}: field '{name}': cannot resume: the journal has {first.get(name)!r}, "
                f"now {start[name]!r}; start a new --out"
            )
            raise RunSetError(msg)


def _store_tree(source: Path | None, dest: Path) -> str:
    """Copy a candidate into the lineage store (through a temporary name, fsync'd); return its digest."""
    if dest.exists():
        shutil.rmtree(dest)
    tmp = dest.with_name(f".{dest.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    if source is not None and source.is_dir():
        shutil.copytree(source, tmp, symlinks=True)
    else:
        tmp.mkdir()
    for dirpath, _, filenames in os.walk(tmp):
        for name in filenames:
            fd = os.open(Path(dirpath) / name, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    os.rename(tmp, dest)
    fsync_dir(dest.parent)
    return tree_digest(dest)


@dataclass(slots=True, kw_only=True)
class _Loop:
    options: CorrectionOptions
    out: Path
    journal: Journal
    progress: Callable[[dict[str, Any]], None] | None
    _events: list[dict[str, Any]] = field(default_factory=list)

    def emit(self, state: CaseState, event: dict[str, Any]) -> dict[str, Any]:
        line = self.journal.append({"at": now_rfc3339(), "case_id": state.case_id, **event})
        replayed = replay([line])[state.case_id]
        state.candidates.update(replayed.candidates)
        state.finished.update(replayed.finished)
        state.revisions.update(replayed.revisions)
        for rnd, calls in replayed.revision_calls.items():
            state.revision_calls[rnd] = state.revision_calls.get(rnd, 0) + calls
        state.stopped = replayed.stopped or state.stopped
        if self.progress is not None:
            self.progress(line)
        return line

    def lineage_dir(self, case_id: str, rnd: int) -> Path:
        return self.out / "lineage" / case_id / f"r{rnd:02d}"

    def run_case(self, case: Case, state: CaseState) -> CaseResult:
        cid = case.case_id
        if state.stopped is None and 0 not in state.candidates:
            digest = _store_tree(self.options.candidate / cid, self.lineage_dir(cid, 0) / cid)
            self.emit(state, _round_started(cid, 0, digest, None, None))
        rnd = 0
        while state.stopped is None:
            if rnd not in state.candidates:  # a revision finished but its round was not announced
                rev = state.revisions[rnd]
                self.emit(
                    state,
                    _round_started(cid, rnd, rev["candidate_digest"], rev["parent_digest"], rev["feedback_digest"]),
                )
            if rnd not in state.finished:
                self.run_round(case, state, rnd)
            if rnd + 1 in state.revisions:  # decided and revised in an earlier session: never decided again
                rnd += 1
                continue
            stop = self.decide(state, rnd)
            if stop is not None:
                self.emit(state, {"event": "stopped", "round": rnd, "reason": stop[0], "detail": stop[1]})
                break
            if not self.revise(case, state, rnd):
                break
            rnd += 1
        return _case_result(cid, state)

    def run_round(self, case: Case, state: CaseState, rnd: int) -> None:
        cid = case.case_id
        started = state.candidates[rnd]
        layer = self.lineage_dir(cid, rnd)
        if tree_digest(layer / cid) != started["candidate_digest"]:
            msg = f"{layer / cid}: the stored round {rnd} candidate does not match its journaled digest; damaged"
            raise RunSetError(msg)
        run_set = self.out / started["run_set"]
        began = time.monotonic()
        run_run_set(
            RunSetOptions(
                cases=case.root,
                candidate=layer,
                out=run_set,
                trials=self.options.trials,
                resume=(run_set / MANIFEST).is_file(),
                infra_retries=self.options.infra_retries,
                isolation=self.options.isolation,
                lineage={
                    "parent_candidate_digest": started["parent_digest"],
                    "correction_round": rnd,
                    "feedback_digest": started["feedback_digest"],
                },
            )
        )
        wall = time.monotonic() - began
        finals = final_records(read_records(run_set / RECORDS).records)
        verdict = classify(case, run_set, finals)
        usd = sum(
            float(v or 0.0)
            for r in finals
            for v in (r.get("cost_usd"), r.get("cost_model_usd"), r.get("cost_tool_usd"), r.get("cost_execution_usd"))
        )
        machine = sum(float(r.get("machine_seconds") or 0.0) for r in finals)
        self.emit(
            state,
            {
                "event": "round_finished",
                "round": rnd,
                "verdict": verdict.kind,
                "detail": verdict.detail,
                "signature": verdict.signature,
                "failing_record": None if verdict.record is None else verdict.record["record_id"],
                "trials": len(finals),
                "spend": {"usd": usd, "seconds": round(wall, 6), "machine_seconds": round(machine, 6)},
            },
        )

    def spent(self, state: CaseState) -> tuple[float, float]:
        rows = [f["spend"] for f in state.finished.values()] + [r["spend"] for r in state.revisions.values()]
        return sum(float(s.get("usd") or 0.0) for s in rows), sum(float(s.get("seconds") or 0.0) for s in rows)

    def decide(self, state: CaseState, rnd: int) -> tuple[str, str] | None:
        fin = state.finished[rnd]
        if fin["verdict"] != "candidate_failure":
            return fin["verdict"], fin["detail"]
        for earlier in range(rnd):
            if state.finished[earlier].get("signature") == fin["signature"]:
                return (
                    "repeated_failure",
                    f"round {rnd} failed exactly as round {earlier} did (the revision learned nothing)",
                )
        if rnd >= self.options.max_rounds:
            return "round_limit", f"still failing after {rnd} revision(s) (--max-rounds {self.options.max_rounds})"
        usd, seconds = self.spent(state)
        if self.options.budget_usd is not None and usd >= self.options.budget_usd:
            return "budget_usd", f"${usd:.4f} spent of the ${self.options.budget_usd:g} budget"
        if self.options.budget_seconds is not None and seconds >= self.options.budget_seconds:
            return "budget_seconds", f"{seconds:.1f} s spent of the {self.options.budget_seconds:g} s budget"
        return None

    def revise(self, case: Case, state: CaseState, rnd: int) -> bool:
        """Feedback on round ``rnd`` → the reviser → round ``rnd + 1``'s candidate. False when the loop stopped."""
        cid, nxt = case.case_id, rnd + 1
        started, fin = state.candidates[rnd], state.finished[rnd]
        run_set = self.out / started["run_set"]
        record = next(r for r in read_records(run_set / RECORDS).records if r["record_id"] == fin["failing_record"])
        self.emit(state, {"event": "revision_started", "round": nxt})
        feedback_dir = self.out / "feedback" / cid / f"r{rnd:02d}"
        if feedback_dir.exists():
            shutil.rmtree(feedback_dir)
        feedback_digest = write_feedback(
            case,
            run_set,
            record,
            feedback_dir,
            round_=rnd,
            candidate_digest=started["candidate_digest"],
            parent_digest=started["parent_digest"],
        )
        # One directory per call: a reviser left running by a killed loop writes only into its own.
        call = state.revision_calls[nxt]
        workdir = self.out / "revisions" / cid / (f"r{nxt:02d}" if call == 1 else f"r{nxt:02d}-call{call}")
        paths = prepare_workdir(
            workdir, request=case.request, candidate=self.lineage_dir(cid, rnd) / cid, feedback=feedback_dir
        )
        env = dict(os.environ)
        env.update({f"GATESTATS_{k.upper()}": str(v) for k, v in paths.items()})
        env.update({"GATESTATS_CASE_ID": cid, "GATESTATS_ROUND": str(nxt)})
        timeout, limited = self.options.reviser_timeout, False
        if self.options.budget_seconds is not None:
            left = self.options.budget_seconds - self.spent(state)[1]
            if left < timeout:
                timeout, limited = max(left, 0.001), True
        ancestors = {state.candidates[r]["candidate_digest"]: r for r in sorted(state.candidates, reverse=True)}
        result = call_reviser(
            self.options.reviser, workdir, paths, env=env, timeout=timeout, budget_limited=limited, ancestors=ancestors
        )
        spend = {"usd": result.usd, "seconds": result.wall_seconds, "machine_seconds": result.machine_seconds}
        if result.stop is not None:
            self.emit(
                state,
                {
                    "event": "stopped",
                    "round": rnd,
                    "reason": result.stop,
                    "detail": result.detail,
                    "reviser_spend": spend,
                },
            )
            return False
        stored = self.lineage_dir(cid, nxt) / cid
        digest = _store_tree(paths["output"], stored)
        if digest != result.output_digest:  # a process the reviser left behind (outside its group) still writes
            shutil.rmtree(stored.parent)
            why = "output/ changed after the reviser exited (a process it left behind is still writing)"
            stopped = {"event": "stopped", "round": rnd, "reason": "reviser_wrote_outside", "detail": why}
            self.emit(state, stopped | {"reviser_spend": spend})
            return False
        self.emit(
            state,
            {
                "event": "revision_finished",
                "round": nxt,
                "candidate_digest": digest,
                "parent_digest": started["candidate_digest"],
                "feedback_digest": feedback_digest,
                "spend": spend,
            },
        )
        self.emit(state, _round_started(cid, nxt, digest, started["candidate_digest"], feedback_digest))
        return True


def _round_started(case_id: str, rnd: int, digest: str, parent: str | None, feedback: str | None) -> dict[str, Any]:
    return {
        "event": "round_started",
        "round": rnd,
        "candidate_digest": digest,
        "parent_digest": parent,
        "feedback_digest": feedback,
        "run_set": f"rounds/{case_id}/r{rnd:02d}",
    }


def _case_result(case_id: str, state: CaseState) -> CaseResult:
    stopped = state.stopped or {"reason": "incomplete", "detail": "the loop did not finish", "round": 0}
    lineage = []
    usd = seconds = 0.0
    for rnd in sorted(state.candidates):
        started, fin = state.candidates[rnd], state.finished.get(rnd)
        lineage.append(
            {
                "round": rnd,
                "candidate_digest": started["candidate_digest"],
                "parent_digest": started["parent_digest"],
                "feedback_digest": started["feedback_digest"],
                "run_set": started["run_set"],
                "verdict": None if fin is None else fin["verdict"],
            }
        )
    for spend in [f["spend"] for f in state.finished.values()] + [r["spend"] for r in state.revisions.values()]:
        usd += float(spend.get("usd") or 0.0)
        seconds += float(spend.get("seconds") or 0.0)
    extra = stopped.get("reviser_spend")
    if extra:
        usd += float(extra.get("usd") or 0.0)
        seconds += float(extra.get("seconds") or 0.0)
    first = state.finished.get(0)
    return CaseResult(
        case_id=case_id,
        stop=stopped["reason"],
        detail=stopped["detail"],
        rounds=len(state.finished),
        first_verdict=None if first is None else first["verdict"],
        final_digest=lineage[-1]["candidate_digest"] if lineage else "",
        lineage=tuple(lineage),
        usd=round(usd, 6),
        seconds=round(seconds, 6),
    )
