"""Recovery statistics over a correction loop's rounds (``gatestats correct``).

Recovery rate (fail → pass within r rounds) with a Wilson interval over cases, rounds per accepted
outcome, and cost per accepted outcome including every round and every reviser call, with and
without correction. The rounds come from the runner's journal (:func:`load_rounds`).
"""

from gatestats.recovery.summary import (
    ROUND_COLUMNS,
    RecoverySummary,
    check_round_run_sets,
    load_rounds,
    recovery_summary,
)

__all__ = ["ROUND_COLUMNS", "RecoverySummary", "check_round_run_sets", "load_rounds", "recovery_summary"]
