"""The correction loop's journal: append-only, checksummed, fsync'd JSON lines in ``OUT/journal.jsonl``.

Every step of the loop is announced by one line written (and fsync'd) before the step counts as
done; :func:`replay` folds the lines into each case's state, from which ``--resume`` continues.
A torn last line (a kill in the middle of a write) is set aside as ``journal.jsonl.torn-N``; a
damaged line anywhere else is an error (the journal was edited).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatestats_runner._util import fsync_dir, set_aside_tail, write_all
from gatestats_runner.digests import canonical_json, digest_json
from gatestats_runner.store import RunSetError

__all__ = ["JOURNAL", "JOURNAL_FORMAT", "CaseState", "Journal", "read_journal", "replay"]

JOURNAL = "journal.jsonl"
JOURNAL_FORMAT = "gatestats-correction-journal/1"


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
        A line other than the last does not parse or fails its checksum, or (without ``repair``)
        the last line is torn.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        msg = f"{path}: no correction journal (not a correction output directory)"
        raise RunSetError(msg) from None
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    events: list[dict[str, Any]] = []
    good = 0
    for number, raw in enumerate(lines, start=1):
        event = _parse(raw)
        if event is None:
            if number == len(lines) and not tail:
                tail = raw + b"\n"
                break
            msg = f"{path}: line {number}: damaged (does not parse or fails its checksum); the journal was edited"
            raise RunSetError(msg)
        events.append(event)
        good += len(raw) + 1
    if not tail or ignore_torn:
        return events, None
    if not repair:
        msg = f"{path}: the last line is torn (use --resume to set it aside)"
        raise RunSetError(msg)
    return events, set_aside_tail(path, good, tail)


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        event = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(event, dict) or event.get("checksum") != _checksum(event):
        return None
    return event


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
