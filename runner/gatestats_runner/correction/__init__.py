"""The correction loop on external feedback (public): rounds, feedback packages, stop conditions, lineage.

``gatestats correct`` and ``python -m gatestats_runner``-style callers use :func:`run_correction`;
the statistics read what the loop wrote through :func:`gatestats_runner.journal.read_rounds`,
a module that starts nothing. The loop is the sandbox
controller's: it decides whether another run may start and never computes a statistic. See
``docs/correction.md``.
"""

from __future__ import annotations

from gatestats_runner.correction._feedback import FEEDBACK_FORMAT, FEEDBACK_JSON
from gatestats_runner.correction._loop import (
    CaseResult,
    CorrectionOptions,
    CorrectionSummary,
    run_correction,
)
from gatestats_runner.journal import JOURNAL, JOURNAL_FORMAT, STOP_REASONS

__all__ = [
    "FEEDBACK_FORMAT",
    "FEEDBACK_JSON",
    "JOURNAL",
    "JOURNAL_FORMAT",
    "STOP_REASONS",
    "CaseResult",
    "CorrectionOptions",
    "CorrectionSummary",
    "run_correction",
]
