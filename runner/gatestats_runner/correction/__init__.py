"""The correction loop on external feedback (public): rounds, feedback packages, stop conditions, lineage.

``gatestats correct`` and ``python -m gatestats_runner``-style callers use :func:`run_correction`;
the statistics read what the loop wrote through :func:`read_rounds`. The loop is the sandbox
controller's: it decides whether another run may start and never computes a statistic. See
``docs/correction.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gatestats_runner.correction._feedback import FEEDBACK_FORMAT, FEEDBACK_JSON
from gatestats_runner.correction._journal import JOURNAL, JOURNAL_FORMAT, STOP_REASONS, read_journal, replay
from gatestats_runner.correction._loop import (
    CaseResult,
    CorrectionOptions,
    CorrectionSummary,
    run_correction,
)

__all__ = [
    "FEEDBACK_FORMAT",
    "FEEDBACK_JSON",
    "JOURNAL",
    "JOURNAL_FORMAT",
    "ROUND_FIELDS",
    "STOP_REASONS",
    "CaseResult",
    "CorrectionOptions",
    "CorrectionSummary",
    "read_rounds",
    "run_correction",
]

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
