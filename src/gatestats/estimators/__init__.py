"""Estimators: per-case sufficient statistics, pass@k / pass^k, intervals over cases, variance split.

The names are imported on first use (PEP 562, :func:`gatestats._lazy.lazy_names`): ``analyze`` on a small input
computes without numpy (issue 28, item 2; :mod:`.small`), and ``calibrate``, which needs only the Wilson interval,
loads neither :mod:`.analyze` nor polars. :func:`analyze` shares its module's name: the package keeps the function
(``gatestats._lazy``'s docstring says how).
"""

from typing import TYPE_CHECKING, Final

from gatestats._lazy import lazy_names

if TYPE_CHECKING:
    from gatestats.estimators.analyze import METRICS, Analysis, MetricEstimate, SystemAnalysis, analyze
    from gatestats.estimators.interval_rules import CLT_FROM_CASES, MIN_CASES_BOOTSTRAP, MIN_CASES_CLT, CaseMeanInterval
    from gatestats.estimators.intervals import case_mean_interval, clustered_standard_error, wilson_interval
    from gatestats.estimators.passk import (
        CasePairs,
        CaseValues,
        case_pairs,
        case_values,
        exact_case_sum,
        pair_values,
        pass_at_k,
        pass_at_k_exact,
        pass_hat_k,
        pass_hat_k_exact,
        per_case_values,
    )
    from gatestats.estimators.summary import ANALYSIS_COLUMNS, CASE_KEY, CaseSetError, case_summary
    from gatestats.estimators.variance import VarianceDecomposition, variance_decomposition

__all__ = [
    "ANALYSIS_COLUMNS",
    "CASE_KEY",
    "CLT_FROM_CASES",
    "METRICS",
    "MIN_CASES_BOOTSTRAP",
    "MIN_CASES_CLT",
    "Analysis",
    "CaseMeanInterval",
    "CasePairs",
    "CaseSetError",
    "CaseValues",
    "MetricEstimate",
    "SystemAnalysis",
    "VarianceDecomposition",
    "analyze",
    "case_mean_interval",
    "case_pairs",
    "case_summary",
    "case_values",
    "clustered_standard_error",
    "exact_case_sum",
    "pair_values",
    "pass_at_k",
    "pass_at_k_exact",
    "pass_hat_k",
    "pass_hat_k_exact",
    "per_case_values",
    "variance_decomposition",
    "wilson_interval",
]

#: Each name of ``__all__`` with its module under this package, imported on first use.
_HOMES: Final = {
    **dict.fromkeys(("METRICS", "Analysis", "MetricEstimate", "SystemAnalysis", "analyze"), "analyze"),
    **dict.fromkeys(("CLT_FROM_CASES", "MIN_CASES_BOOTSTRAP", "MIN_CASES_CLT", "CaseMeanInterval"), "interval_rules"),
    **dict.fromkeys(("case_mean_interval", "clustered_standard_error", "wilson_interval"), "intervals"),
    **dict.fromkeys(
        (
            "CasePairs",
            "CaseValues",
            "case_pairs",
            "case_values",
            "exact_case_sum",
            "pair_values",
            "pass_at_k",
            "pass_at_k_exact",
            "pass_hat_k",
            "pass_hat_k_exact",
            "per_case_values",
        ),
        "passk",
    ),
    **dict.fromkeys(("ANALYSIS_COLUMNS", "CASE_KEY", "CaseSetError", "case_summary"), "summary"),
    **dict.fromkeys(("VarianceDecomposition", "variance_decomposition"), "variance"),
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
