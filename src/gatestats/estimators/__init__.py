"""Estimators: per-case sufficient statistics, pass@k / pass^k, intervals over cases, variance split."""

from gatestats.estimators.analyze import METRICS, Analysis, MetricEstimate, SystemAnalysis, analyze
from gatestats.estimators.intervals import (
    CLT_FROM_CASES,
    MIN_CASES_BOOTSTRAP,
    MIN_CASES_CLT,
    CaseMeanInterval,
    case_mean_interval,
    clustered_standard_error,
    wilson_interval,
)
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
