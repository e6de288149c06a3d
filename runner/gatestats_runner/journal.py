"""The correction loop's journal (public; starts nothing): checksummed, fsync'd JSON lines in ``OUT/journal.jsonl``.

Every step of the loop is announced by one line written (and fsync'd) before the step counts as
done; :func:`replay` folds the lines into each case's state, from which ``--resume`` continues.
A torn last line (a kill in the middle of a write) is set aside as ``journal.jsonl.torn-N``; a
damaged line anywhere else is an error (the journal was edited).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from gatestats_runner._util import fsync_dir, set_aside_tail, write_all
from gatestats_runner.case import _ID
from gatestats_runner.contract import decode_line
from gatestats_runner.digests import canonical_json, digest_json
from gatestats_runner.store import RunSetError

__all__ = [
    "JOURNAL",
    "JOURNAL_FORMAT",
    "ROUND_FIELDS",
    "STOP_REASONS",
    "CaseState",
    "Journal",
    "VerdictKind",
    "check_events",
    "read_journal",
    "read_rounds",
    "replay",
]

#: A round's verdict, as the journal stores it.
VerdictKind = Literal["passed", "candidate_failure", "infrastructure", "evaluator_crash", "evaluator_nondeterministic"]

JOURNAL = "journal.jsonl"
JOURNAL_FORMAT = "gatestats-correction-journal/1"

#: Every reason a case's loop stops, each with its own path (docs/correction.md).
STOP_REASONS = (
    "passed",
    "round_limit",
    "repeated_failure",
    "infrastructure",
    "evaluator_crash",
    "evaluator_nondeterministic",
    "budget_usd",
    "budget_seconds",
    "reviser_crashed",
    "reviser_timeout",
    "reviser_wrote_nothing",
    "reviser_wrote_outside",
    "reviser_same_bytes",
)


def _checksum(event: dict[str, Any]) -> str:
    return digest_json({k: v for k, v in event.items() if k != "checksum"})


class Journal:
    """Appends events to the journal; each line is fsync'd before :meth:`append` returns."""

    def __init__(self, path: Path) -> None:
        new = not path.exists()
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        if new:
            fsync_dir(path.parent)

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        """Add ``checksum`` to ``event``, then write the line and fsync it before returning.

        Parameters
        ----------
        event
            A journal event: ``event`` (its kind), ``case_id`` and the fields of its kind.

        Returns
        -------
        dict
            A copy of ``event`` with its ``checksum``: the line as the journal holds it.
        """
        line = dict(event)
        line["checksum"] = _checksum(line)
        write_all(self._fd, (canonical_json(line) + "\n").encode("utf-8"))
        os.fsync(self._fd)
        return line

    def close(self) -> None:
        os.close(self._fd)


def read_journal(
    path: Path, *, repair: bool = False, ignore_torn: bool = False
) -> tuple[list[dict[str, Any]], Path | None]:
    """The journal's events, and where a torn last line was set aside (``repair``) or None.

    ``ignore_torn`` (a reader's mode) returns the complete lines and leaves the file as it is.
    A torn line is a last line without its newline (a kill in the middle of a write); every
    complete line must parse strictly, match its checksum and be an event of the journal's format
    in an order the loop writes (:func:`check_events`).

    Parameters
    ----------
    path
        The journal file.
    repair
        Set a torn last line aside (the loop, resuming).
    ignore_torn
        Read past a torn last line without touching the file.

    Returns
    -------
    tuple
        The events in order, and the ``.torn-N`` file (or None).

    Raises
    ------
    RunSetError
        A complete line does not parse, fails its checksum or is not an event the loop writes
        (``FILE:LINE: field 'NAME': why``), or (without ``repair``) the last line is torn.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        msg = f"{path}: no correction journal (not a correction output directory)"
        raise RunSetError(msg) from None
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    events = [_parse(path, number, raw) for number, raw in enumerate(lines, start=1)]
    check_events(path, events)
    if not tail or ignore_torn:
        return events, None
    if not repair:
        msg = f"{path}: the last line is torn (use --resume to set it aside)"
        raise RunSetError(msg)
    return events, set_aside_tail(path, len(data) - len(tail), tail)


def _parse(path: Path, number: int, raw: bytes) -> dict[str, Any]:
    event, bad = decode_line(raw)
    if bad is not None or event is None:
        msg = f"{path}:{number}: {bad if bad is not None else 'not an event'}"
        raise RunSetError(msg)
    try:
        expected = _checksum(event)
    except ValueError as exc:  # a value canonical JSON cannot hold
        msg = f"{path}:{number}: field '<line>': {exc}"
        raise RunSetError(msg) from None
    if event.get("checksum") != expected:
        msg = f"{path}:{number}: field 'checksum': does not match the line (the journal was edited)"
        raise RunSetError(msg)
    return event


_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_VERDICTS: tuple[str, ...] = get_args(VerdictKind)
_MAX_ROUND = 10_000


def _number(value: Any, *, optional: bool) -> bool:
    if value is None:
        return optional
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return ok and math.isfinite(value) and value >= 0


def _spend(value: Any, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, dict):
        return f"expected an object of usd, seconds and machine_seconds (got {value!r:.80})"
    for key, may_be_null in (("usd", True), ("seconds", False), ("machine_seconds", True)):
        if not _number(value.get(key), optional=may_be_null):
            return f"'{key}': expected a number >= 0 (got {value.get(key)!r:.80})"
    return None


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) else f"expected text (got {value!r:.80})"


def _digest(value: Any, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    ok = isinstance(value, str) and _DIGEST.match(value) is not None
    return None if ok else f"expected a sha256:HEX digest (got {value!r:.80})"


def _one_of(choices: tuple[str, ...]) -> Any:
    return lambda value: None if value in choices else f"expected one of {', '.join(choices)} (got {value!r:.80})"


#: Each event kind's fields (beside ``event``, ``at``, ``checksum``, ``case_id`` and ``round``) and their checks.
_FIELDS: dict[str, dict[str, Any]] = {
    "round_started": {
        "candidate_digest": _digest,
        "parent_digest": lambda v: _digest(v, optional=True),
        "feedback_digest": lambda v: _digest(v, optional=True),
        "run_set": _text,
    },
    "round_finished": {
        "verdict": _one_of(_VERDICTS),
        "detail": _text,
        "signature": lambda v: _digest(v, optional=True),
        "failing_record": lambda v: None if v is None else _text(v),
        "trials": lambda v: (
            None if isinstance(v, int) and _number(v, optional=False) else f"expected a count (got {v!r:.80})"
        ),
        "spend": _spend,
    },
    "revision_started": {},
    "revision_finished": {
        "candidate_digest": _digest,
        "parent_digest": _digest,
        "feedback_digest": _digest,
        "spend": _spend,
    },
    "stopped": {"reason": _one_of(STOP_REASONS), "detail": _text, "reviser_spend": lambda v: _spend(v, optional=True)},
}
_OPTIONAL = {"reviser_spend"}


def _count(value: Any, *, least: int = 0) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= least
    return None if ok else f"expected an integer >= {least} (got {value!r:.80})"


def _positive(value: Any, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    return None if _number(value, optional=False) and value > 0 else f"expected a number > 0 (got {value!r:.80})"


#: The start event's fields (line 1: the loop's options, compared on ``--resume``).
_START: dict[str, Any] = {
    "at": _text,
    "cases_dir": _text,
    "case_set_version": _digest,
    "candidate_source": _text,
    "candidate_digest": _digest,
    "reviser": lambda v: (
        None
        if isinstance(v, list) and v and all(isinstance(a, str) for a in v)
        else f"expected a command: a list of text (got {v!r:.80})"
    ),
    "max_rounds": _count,
    "trials": lambda v: _count(v, least=1),
    "budget_usd": lambda v: _positive(v, optional=True),
    "budget_seconds": lambda v: _positive(v, optional=True),
    "reviser_timeout": _positive,
    "infra_retries": _count,
}


def _start_problem(event: dict[str, Any]) -> tuple[str, str] | None:
    fmt = event.get("format")
    if fmt != JOURNAL_FORMAT:
        return "format", f"expected {JOURNAL_FORMAT!r} (got {fmt!r:.80})"
    return _fields_problem(event, _START)


def _fields_problem(event: dict[str, Any], checks: dict[str, Any]) -> tuple[str, str] | None:
    for name, check in checks.items():
        if name not in event:
            if name in _OPTIONAL:
                continue
            return name, "required field is missing"
        problem = check(event[name])
        if problem is not None:
            return name, problem
    return None


def _event_problem(event: dict[str, Any]) -> tuple[str, str] | None:
    """The first field of ``event`` that is not what the loop writes, and why (None: none)."""
    kind = event.get("event")
    if kind == "start":
        return _start_problem(event)
    if not isinstance(kind, str) or kind not in _FIELDS:
        return "event", f"expected one of start, {', '.join(_FIELDS)} (got {kind!r:.80})"
    checks: dict[str, Any] = {
        "at": _text,
        "case_id": lambda v: None if isinstance(v, str) and _ID.match(v) else f"expected a case id (got {v!r:.80})",
        "round": lambda v: (
            None
            if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= _MAX_ROUND
            else f"expected a round number 0..{_MAX_ROUND} (got {v!r:.80})"
        ),
        **_FIELDS[kind],
    }
    problem = _fields_problem(event, checks)
    if problem is not None:
        return problem
    if kind == "round_started" and event["run_set"] != f"rounds/{event['case_id']}/r{event['round']:02d}":
        return "run_set", f"expected 'rounds/{event['case_id']}/r{event['round']:02d}' (got {event['run_set']!r:.80})"
    return None


#: What must come before each event of a case (kind -> (earlier kind, its round relative to this one)).
_AFTER: dict[str, tuple[str, int] | None] = {
    "round_started": ("revision_finished", 0),
    "round_finished": ("round_started", 0),
    "revision_started": ("round_finished", -1),
    "revision_finished": ("revision_started", 0),
    "stopped": ("round_finished", 0),
}


def check_events(path: Path, events: list[dict[str, Any]]) -> None:
    """Refuse events the loop never writes: a field of the wrong type, an unknown kind, an impossible order.

    Line 1 is the start event and only line 1; a case's round 0 starts its story, every other event
    follows the one it needs (a round finishes after it started, a revision after it was
    requested, ...), nothing follows a case's stop, and no round starts or finishes twice.

    Parameters
    ----------
    path
        The journal (named in the error).
    events
        Its events in order, line 1 first.

    Raises
    ------
    RunSetError
        ``FILE:LINE: field 'NAME': why`` for the first event that breaks a rule.
    """
    seen: dict[str, set[tuple[str, int]]] = {}
    for number, event in enumerate(events, start=1):
        problem = _event_problem(event)
        if problem is None and (event["event"] == "start") != (number == 1):
            problem = ("event", "the start event is line 1 and only line 1")
        if problem is None and event["event"] != "start":
            problem = _order_problem(seen.setdefault(event["case_id"], set()), event)
        if problem is not None:
            msg = f"{path}:{number}: field '{problem[0]}': {problem[1]}"
            raise RunSetError(msg)


def _order_problem(seen: set[tuple[str, int]], event: dict[str, Any]) -> tuple[str, str] | None:
    kind, rnd = event["event"], event["round"]
    if any(k == "stopped" for k, _ in seen):
        return "event", f"{kind} after the case stopped"
    needed = _AFTER[kind] if not (kind == "round_started" and rnd == 0) else None
    if needed is not None and (needed[0], rnd + needed[1]) not in seen:
        return "round", f"{kind} of round {rnd} without {needed[0]} of round {rnd + needed[1]} before it"
    if (kind, rnd) in seen and kind in ("round_started", "round_finished", "revision_finished"):
        return "round", f"a second {kind} of round {rnd}"
    seen.add((kind, rnd))
    return None


@dataclass(slots=True, kw_only=True)
class CaseState:
    """One case's loop, as the journal tells it."""

    case_id: str
    #: round -> the journaled candidate of that round (digest, parent, feedback digest).
    candidates: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: round -> the ``round_finished`` event.
    finished: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: round -> the ``revision_finished`` event that made that round's candidate.
    revisions: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: round -> how many reviser calls for it were announced (a killed loop's call is made again).
    revision_calls: dict[int, int] = field(default_factory=dict)
    stopped: dict[str, Any] | None = None


def replay(events: list[dict[str, Any]]) -> dict[str, CaseState]:
    """Fold the journal's events into each case's state (a case appears with its first event).

    Parameters
    ----------
    events
        The journal's events in order.

    Returns
    -------
    dict
        Case id to its state: candidates, finished rounds, revisions, stop.
    """
    states: dict[str, CaseState] = {}
    for event in events:
        case_id = event.get("case_id")
        if not isinstance(case_id, str):
            continue
        state = states.setdefault(case_id, CaseState(case_id=case_id))
        kind, rnd = event["event"], int(event.get("round") or 0)
        if kind == "round_started":
            state.candidates[rnd] = event
        elif kind == "round_finished":
            state.finished[rnd] = event
        elif kind == "revision_started":
            state.revision_calls[rnd] = state.revision_calls.get(rnd, 0) + 1
        elif kind == "revision_finished":
            state.revisions[rnd] = event
        elif kind == "stopped":
            state.stopped = event
    return states


#: The fields of every row :func:`read_rounds` returns, in order.
ROUND_FIELDS = (
    "case_id",
    "round",
    "candidate_digest",
    "parent_candidate_digest",
    "feedback_digest",
    "verdict",
    "trials_usd",
    "trials_seconds",
    "reviser_usd",
    "reviser_seconds",
    "stop_reason",
)


def read_rounds(out: str | Path) -> list[dict[str, Any]]:
    """One row per (case, round) of a correction output, from its journal (read-only; a torn last line is ignored).

    ``verdict`` is ``passed``, ``candidate_failure``, ``infrastructure``, ``evaluator_crash``,
    ``evaluator_nondeterministic`` or None (the round did not finish). ``reviser_*`` is the spend of
    the reviser call made on this round's failure (None when there was none; its USD is None when the
    reviser reported none). ``stop_reason`` is set on the case's last round once the case stopped.

    Parameters
    ----------
    out
        The correction output directory (it holds the journal).

    Returns
    -------
    list of dict
        In journal order: ``case_id``, ``round``, ``verdict``, ``trials_usd``, ``trials_seconds``,
        ``reviser_usd``, ``reviser_seconds``, ``stop_reason`` and the candidate digests.

    Raises
    ------
    gatestats_runner.launch.RunSetError
        No journal, or a line other than the last is damaged.
    """
    events, _ = read_journal(Path(out) / JOURNAL, ignore_torn=True)
    rows: list[dict[str, Any]] = []
    for case_id, state in replay(events).items():
        reviser: dict[int, dict[str, Any]] = {r - 1: ev["spend"] for r, ev in state.revisions.items()}
        if state.stopped is not None and state.stopped.get("reviser_spend"):
            reviser[state.stopped["round"]] = state.stopped["reviser_spend"]
        last = max(state.candidates, default=None)
        for rnd in sorted(state.candidates):
            started, fin = state.candidates[rnd], state.finished.get(rnd)
            spend = None if fin is None else fin["spend"]
            rev = reviser.get(rnd)
            rows.append(
                {
                    "case_id": case_id,
                    "round": rnd,
                    "candidate_digest": started["candidate_digest"],
                    "parent_candidate_digest": started["parent_digest"],
                    "feedback_digest": started["feedback_digest"],
                    "verdict": None if fin is None else fin["verdict"],
                    "trials_usd": None if spend is None else spend.get("usd"),
                    "trials_seconds": None if spend is None else spend.get("seconds"),
                    "reviser_usd": None if rev is None else rev.get("usd"),
                    "reviser_seconds": None if rev is None else rev.get("seconds"),
                    "stop_reason": state.stopped["reason"] if state.stopped is not None and rnd == last else None,
                }
            )
    return rows
