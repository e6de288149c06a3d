"""The golden set's life: promotion from traces, split hygiene, a protected set, versions, trends.

Public API (docs/golden.md). Cases are written through the runner's public case API
(``gatestats_runner.cases.write_case``), in the one format the runner reads.

The names are imported on first use (PEP 562): a module that needs one name does not load the
store, the checks or the importers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gatestats._lazy import lazy_names

if TYPE_CHECKING:
    from gatestats.golden.checks import Finding, check_graders, check_split_use, judges_without_calibration
    from gatestats.golden.diff import CaseChange, SetDiff, diff_sets
    from gatestats.golden.neardup import exact_jaccard, features, find_twins, minhash, minhash_jaccard
    from gatestats.golden.proposal import (
        SEVERITIES,
        SPLITS,
        CodeProperty,
        Expectation,
        ExpectError,
        JudgeGrader,
        read_expect,
    )
    from gatestats.golden.splits import reclassify
    from gatestats.golden.store import (
        CaseState,
        GoldenSetError,
        Promotion,
        approve,
        case_states,
        events,
        failure_class_of,
        promote,
        propose_revision,
        retire,
        set_version,
        stale,
        twins_of,
    )
    from gatestats.golden.trace import Trace, TraceError, read_run_record_trace, read_trace
    from gatestats.golden.trends import TrendRow, Trends, failure_class_trends

__all__ = [
    "SEVERITIES",
    "SPLITS",
    "CaseChange",
    "CaseState",
    "CodeProperty",
    "ExpectError",
    "Expectation",
    "Finding",
    "GoldenSetError",
    "JudgeGrader",
    "Promotion",
    "SetDiff",
    "Trace",
    "TraceError",
    "TrendRow",
    "Trends",
    "approve",
    "case_states",
    "check_graders",
    "check_split_use",
    "diff_sets",
    "events",
    "exact_jaccard",
    "failure_class_of",
    "failure_class_trends",
    "features",
    "find_twins",
    "judges_without_calibration",
    "minhash",
    "minhash_jaccard",
    "promote",
    "propose_revision",
    "read_expect",
    "read_run_record_trace",
    "read_trace",
    "reclassify",
    "retire",
    "set_version",
    "stale",
    "twins_of",
]
#: The module (under this package) of each name in ``__all__``, imported on first use.
_HOMES: Final = {
    **dict.fromkeys(("Finding", "check_graders", "check_split_use", "judges_without_calibration"), "checks"),
    **dict.fromkeys(("CaseChange", "SetDiff", "diff_sets"), "diff"),
    **dict.fromkeys(("exact_jaccard", "features", "find_twins", "minhash", "minhash_jaccard"), "neardup"),
    **dict.fromkeys(
        ("SEVERITIES", "SPLITS", "CodeProperty", "Expectation", "ExpectError", "JudgeGrader", "read_expect"), "proposal"
    ),
    "reclassify": "splits",
    **dict.fromkeys(
        (
            "CaseState",
            "GoldenSetError",
            "Promotion",
            "approve",
            "case_states",
            "events",
            "failure_class_of",
            "promote",
            "propose_revision",
            "retire",
            "set_version",
            "stale",
            "twins_of",
        ),
        "store",
    ),
    **dict.fromkeys(("Trace", "TraceError", "read_run_record_trace", "read_trace"), "trace"),
    **dict.fromkeys(("TrendRow", "Trends", "failure_class_trends"), "trends"),
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
